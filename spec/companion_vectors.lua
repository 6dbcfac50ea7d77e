--- Byte vectors of the companion formats, built with string.pack from the layouts and
-- minimal examples of docs/companion-formats.md (§2.12 .bai, §3.6 .cpvs, §4.6 .inst,
-- §5.1 .pathset, §7.3 PKG3, §9 .tex). Used by spec/companion_spec.lua.
local V = {}
local pack, rep = string.pack, string.rep

local function vec(x, y, z) return pack("<fff", x, y, z) end
V.vec = vec

--- One BAI side (§2.3): counts, lengths matrix, per-row floats, params, rows.
function V.bai_side(s)
  local out = { pack("<HHHHH", #s.lanes, #(s.trams or {}), #(s.trains or {}), s.sidewalks or 1, s.flags or 0) }
  for _, row in ipairs(s.lengths) do for _, f in ipairs(row) do out[#out + 1] = pack("<f", f) end end
  for _, f in ipairs(s.lateral) do out[#out + 1] = pack("<f", f) end
  for i = 1, 10 do out[#out + 1] = pack("<f", s.params[i]) end
  local function rows(list) for _, pl in ipairs(list) do for _, p in ipairs(pl) do out[#out + 1] = vec(p[1], p[2], p[3]) end end end
  rows(s.lanes)
  rows({ s.sidewalk })
  rows(s.trams or {})
  rows(s.trains or {})
  rows({ s.curb })
  rows({ s.edge })
  return table.concat(out)
end

function V.bai_end(intersection0, rule, road_index0, light_index)
  return pack("<I4HHHI4", intersection0, light_index or 0xCDCD, rule, 0, road_index0) .. rep("\0", 24)
end

--- The §2.12 example as tables (0-based file values), so tests can mutate it.
function V.bai_example_sides()
  local params = { 0, 5, 5, 10, 0, 0, 0, 0, 0, 0 }
  local a = {
    lanes = { { { 2.5, 0, 40 }, { 2.5, 0, 0 } } }, lengths = { { 0, 40 }, { 0, 40 } }, lateral = { 2.5, 7.5 },
    params = params, sidewalk = { { 7.5, 0.075, 0 }, { 7.5, 0.075, 40 } },
    curb = { { 5, 0, 0 }, { 5, 0, 40 } }, edge = { { 10, 0.15, 0 }, { 10, 0.15, 40 } },
  }
  local b = {
    lanes = { { { -2.5, 0, 0 }, { -2.5, 0, 40 } } }, lengths = { { 0, 40 }, { 0, 40 } }, lateral = { 2.5, 7.5 },
    params = params, sidewalk = { { -7.5, 0.075, 0 }, { -7.5, 0.075, 40 } },
    curb = { { -5, 0, 0 }, { -5, 0, 40 } }, edge = { { -10, 0.15, 0 }, { -10, 0.15, 40 } },
  }
  return a, b
end

--- §2.12: a 40 m road (room 2) between junction rooms 1 and 3, R = 4; 646 bytes.
function V.bai_example()
  local a, b = V.bai_example_sides()
  local road = table.concat {
    pack("<HHHH", 0, 2, 0, 1), pack("<H", 2), pack("<ff", 5.0, 15.0),
    V.bai_side(a), V.bai_side(b),
    pack("<ff", 0, 40), vec(0, 0, 0), vec(0, 0, 40),
    vec(1, 0, 0), vec(1, 0, 0), vec(0, 1, 0), vec(0, 1, 0), vec(0, 0, -1), vec(0, 0, -1), vec(0, 0, 1), vec(0, 0, 1),
    V.bai_end(1, 3, 0), V.bai_end(0, 3, 0),
  }
  local lists = pack("<H", 0) .. rep(pack("<HH", 1, 0), 3)
  return table.concat {
    "CAI1", pack("<HH", 2, 1), road,
    pack("<HH", 0, 1), vec(0, 0, -10), pack("<HI4", 1, 0),
    pack("<HH", 1, 3), vec(0, 0, 50), pack("<HI4", 1, 0),
    pack("<I4", 4), lists, lists,
  }
end

--- §3.6: R = 4, every room sees every room.
V.cpvs_example = "PVS0" .. pack("<I4", 5) .. pack("<I4I4I4I4", 0, 2, 4, 6) .. "\x80\xfc\x80\xfc\x80\xfc"

--- §4.6: one compact stop sign in room 3.
V.inst_example = pack("<HHB", 3, 0, 0x80 | 10) .. "sp_stop_f\0" .. pack("<ff", 0.6, 0.8) .. vec(-6, 0.15, 38)

--- A full-matrix record (§4.2).
V.inst_full = pack("<HHB", 5, 0x100, 5) .. "bldg\0" .. vec(2, 0, 0) .. vec(0, 1, 0) .. vec(0, 0, 2) .. vec(10, 0, 20)

--- §5.2 parked-car example: one 2-point kerb strip, spacing 24 (6 m); 88 bytes.
V.pathset_example = "PTH1" .. pack("<I4I4", 1, 0) .. "PATH00" .. rep("\0", 26) .. pack("<I4I4", 2, 0)
  .. pack("<I4", 0) .. vec(9, 0.15, 5) .. pack("<I4", 0) .. vec(9, 0.15, 35) .. pack("<BBH", 2, 24, 0)

--- §7.3: the minimal hud map quad, 251 bytes.
function V.pkg_example()
  local verts = {
    { -20, 0, -20, 0, 0 }, { 20, 0, -20, 1, 0 }, { 20, 0, 60, 1, 1 }, { -20, 0, 60, 0, 1 },
  }
  local body = { pack("<I4I4I4I4I4", 1, 4, 6, 1, 0x112), pack("<I4I4", 1, 0), pack("<I4I4", 3, 4) }
  for _, v in ipairs(verts) do body[#body + 1] = vec(v[1], v[2], v[3]) .. vec(0, 1, 0) .. pack("<ff", v[4], v[5]) end
  body[#body + 1] = pack("<I4", 6) .. pack("<HHHHHH", 0, 2, 1, 0, 3, 2)
  local geo = table.concat(body)
  local sh = pack("<I4I4", 0x81, 1) .. pack("<B", 14) .. "hudmap_mycity\0" .. rep("\xff", 8) .. "\0\0\0\xff"
    .. pack("<f", 0)
  return "PKG3" .. "FILE" .. pack("<B", 2) .. "H\0" .. pack("<I4", #geo) .. geo
    .. "FILE" .. pack("<B", 8) .. "shaders\0" .. pack("<I4", #sh) .. sh
end

--- §9: a 4 x 4 RGB888 tile with 3 levels, clamped; 77 bytes.
function V.tex_example()
  local l1, l2, l3 = {}, {}, {}
  for i = 1, 16 do l1[i] = string.char(i, 2 * i, 3 * i) end
  for i = 1, 4 do l2[i] = string.char(100 + i, 50, 25) end
  return pack("<HHHHHI4", 4, 4, 17, 3, 1, 0x10001) .. table.concat(l1) .. table.concat(l2) .. "\7\8\9"
end

return V
