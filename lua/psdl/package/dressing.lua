--- Street dressing of an add-on city (companion-formats.md §4, §5.3, "CF"):
--
-- * `city/<map>/propdefs.csv` + `proprules.csv`: a row pair `nNNleft`/`nNNright` for every
--   non-zero prop-rule byte on the first room of a road record with flag 0x40 (the rooms the
--   game's prop walk reads, CF §5.3), each listing the one prop definition written here
--   (`lamp`: the retail SF lamp `sp_lightstreet_rt_f` every 29 m, CF §5.3's example). A
--   missing row makes MM2 quit, so `psdl package` writes these whenever such a byte exists,
--   with or without `--dressing`.
-- * `city/<map>_ai.inst` (with `--dressing`): a stop sign (`sp_stop_f`, a retail model) on
--   the sidewalk beside every approach whose BAI rule is 0 (CF §4.5), in compact form, in the
--   road room that holds it; the rooms that hold signs get room flag 0x80 (CF §4.4).
-- @module psdl.package.dressing

local string, table, math = string, table, math
local ipairs, pairs, error = ipairs, pairs, error
local sqrt, abs = math.sqrt, math.abs
local string_format, concat = string.format, table.concat

local M = {}

M.SIGN = "sp_stop_f"
M.LAMP = { name = "lamp", start = 9, distance = 29, max_use = 9999, min_lerp = 0.1, max_lerp = 0.1,
           files = { "sp_lightstreet_rt_f" } }

--- The prop-rule numbers the game's prop walk will look up (CF §5.3).
-- @tparam table doc PSDL document
-- @treturn table sorted rule numbers
-- @treturn table where `{[rule] = first road record using it}`
function M.used_rules(doc)
  local seen, list = {}, {}
  for k, rec in ipairs(doc.roads or {}) do
    local first = rec.rooms[1]
    if first and rec.flags & 0x40 ~= 0 then
      local room = doc.rooms[first < 0 and -first or first]
      local rule = room and room.prop_rule or 0
      if rule ~= 0 and not seen[rule] then
        seen[rule] = k
        list[#list + 1] = rule
      end
    end
  end
  table.sort(list)
  return list, seen
end

--- `propdefs.csv` and `proprules.csv` texts for the rules (CRLF, CF §1).
-- @tparam table rules sorted rule numbers 1..99
-- @treturn string propdefs
-- @treturn string proprules
function M.prop_csvs(rules)
  local l = M.LAMP
  local defs = { "name,start,distance,maxUse,minLerp,maxLerp,file1,file2,file3,file4",
                 string_format("%s,%d,%d,%d,%.1f,%.1f,%s", l.name, l.start, l.distance, l.max_use, l.min_lerp,
                   l.max_lerp, concat(l.files, ",")) }
  local rows = { "rulename,prop1,prop2,prop3,prop4,prop5,prop6,prop7,prop8" }
  for _, n in ipairs(rules) do
    if n > 99 then
      error(string_format("prop rule %d: rows are named with two digits (n01..n99, CF §5.3)", n), 0)
    end
    rows[#rows + 1] = string_format("n%02dleft,%s", n, l.name)
    rows[#rows + 1] = string_format("n%02dright,%s", n, l.name)
  end
  return concat(defs, "\r\n") .. "\r\n", concat(rows, "\r\n") .. "\r\n"
end

local function room_holding(doc, rooms, x, z, inside)
  for _, r in ipairs(rooms) do
    local poly = {}
    for _, p in ipairs(doc.rooms[r].perimeter) do poly[#poly + 1] = doc.vertices[p.vertex] end
    if inside(poly, x, z) then return r end
  end
  return nil
end

--- Stop signs for the `_ai.inst` file.
-- @tparam table doc PSDL document (rooms holding signs get flag 0x80)
-- @tparam table bai generated BAI table
-- @treturn table inst records (the shape `psdl.inst.encode` takes)
-- @treturn table rooms `{[room] = true}` that hold a sign
function M.stop_signs(doc, bai)
  local inside = require("psdl.package.bai_gen").inside
  local out, holders = {}, {}
  for _, road in ipairs(bai.roads) do
    for _, which in ipairs({ "end_first", "end_last" }) do
      local e = road[which]
      if e and e.rule == 0 then
        local s = which == "end_last" and #road.origin or 1
        local side = which == "end_last" and road.side_b or road.side_a
        local c, o = side.curb[s], side.edge[s]
        local dx, dz = o[1] - c[1], o[3] - c[3]
        local l = sqrt(dx * dx + dz * dz)
        if l > 0.6 then
          dx, dz = dx / l, dz / l
          -- 0.6 m onto the sidewalk, 3 m back from the junction along the road
          local w = road.w_axis[s]
          local back = which == "end_last" and -3 or 3
          local px, pz = c[1] + dx * 0.6 + w[1] * back, c[3] + dz * 0.6 + w[3] * back
          local near = { road.rooms[which == "end_last" and #road.rooms or 1] }
          for _, r in ipairs(road.rooms) do near[#near + 1] = r end
          local room = room_holding(doc, near, px, pz, inside)
          if room then
            -- never a pure axis with a zero component (CF §4.5: WILK's crash note)
            if abs(dx) < 1e-6 then dx = 1e-6 end
            if abs(dz) < 1e-6 then dz = 1e-6 end
            out[#out + 1] = { room = room, flags = 0, name = M.SIGN, compact = true, x_axis = { dx, 0, dz },
                              position = { px, o[2], pz } }
            holders[room] = true
          end
        end
      end
    end
  end
  return out, holders
end

return M
