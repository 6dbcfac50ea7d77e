-- Specs for the companion codecs (docs/companion.md): psdl.bai, psdl.cpvs, psdl.inst,
-- psdl.pathset, psdl.pkg, psdl.tex. Byte vectors come from spec/companion_vectors.lua
-- (string.pack from the layouts of docs/companion-formats.md, including its minimal examples).

local psdl = require "psdl"
local V = require "companion_vectors"
local H = require "helper"
local pack, rep = string.pack, string.rep

local copy = H.deep_copy

-- rule names of the problems (errors and warnings) of a validation
local function rules(ok, problems)
  local set = {}
  for _, p in ipairs(problems) do set[p.rule .. ":" .. p.severity] = p end
  return set, ok
end

-- A stand-in PSDL document for the cross-checks: R = n + 1 rooms, squares 10 m wide along x.
local function fake_psdl(n, flags)
  local doc = { vertices = {}, rooms = {} }
  for r = 1, n do
    local x = (r - 1) * 10
    local base = #doc.vertices
    doc.vertices[base + 1] = { x, 0, 0 }
    doc.vertices[base + 2] = { x + 10, 0, 0 }
    doc.vertices[base + 3] = { x + 10, 0, 10 }
    doc.vertices[base + 4] = { x, 0, 10 }
    doc.rooms[r] = {
      flags = flags or 0x04, prop_rule = 0, attributes = { { type = "fan" } },
      perimeter = { { vertex = base + 1 }, { vertex = base + 2 }, { vertex = base + 3 }, { vertex = base + 4 } },
    }
  end
  return doc
end

local EXAMPLES = {
  bai = V.bai_example(), cpvs = V.cpvs_example, inst = V.inst_example .. V.inst_full,
  pathset = V.pathset_example, pkg = V.pkg_example(), tex = V.tex_example(),
}

describe("companion codecs", function()
  describe("minimal examples of the format document", function()
    for _, f in ipairs { "bai", "cpvs", "inst", "pathset", "pkg", "tex" } do
      it(f .. " decodes and re-encodes byte for byte", function()
        local bytes = EXAMPLES[f]
        local t = assert(psdl[f].decode(bytes))
        assert.are.equal(bytes, psdl[f].encode(t))
        -- and every prefix fails cleanly or (record lists) decodes losslessly
        for n = 0, #bytes - 1 do
          local p = bytes:sub(1, n)
          local t2, msg, code = psdl[f].decode(p)
          if t2 then
            assert.are.equal(p, psdl[f].encode(t2))
          else
            assert.is_string(code)
            assert.truthy(msg:find("^" .. f .. ": " .. code .. ": "), msg)
          end
        end
      end)
    end

    it("sizes match the document: bai 646, pkg 251, inst 35, pathset 88, tex 77", function()
      assert.are.equal(646, #V.bai_example())
      assert.are.equal(251, #V.pkg_example())
      assert.are.equal(35, #V.inst_example)
      assert.are.equal(88, #V.pathset_example)
      assert.are.equal(77, #V.tex_example())
    end)
  end)

  describe("psdl.bai", function()
    it("decodes §2.12 with 1-based references and room ids as stored", function()
      local t = assert(psdl.bai.decode(V.bai_example()))
      assert.are.equal(1, #t.roads)
      assert.are.equal(2, #t.intersections)
      local r = t.roads[1]
      assert.are.equal(0, r.id)
      assert.are.same({ 2 }, r.rooms)
      assert.are.equal(5, r.half_width)
      assert.are.equal(15, r.speed_limit)
      assert.are.same({ { { 2.5, 0, 40 }, { 2.5, 0, 0 } } }, r.side_a.lanes)
      assert.are.same({ { 0, 40 }, { 0, 40 } }, r.side_a.lengths)
      assert.are.same({ 2.5, 7.5 }, r.side_a.lateral)
      assert.are.same({ 0, 5, 5, 10, 0, 0, 0, 0, 0, 0 }, r.side_a.params)
      assert.are.equal(1, r.side_a.sidewalks)
      assert.are.same({}, r.side_a.trams)
      assert.are.same({ -5, 0, 40 }, r.side_b.curb[2])
      assert.are.same({ 0, 0, -1 }, r.z_axis[1])
      assert.are.equal(2, r.end_last.intersection)   -- file 1
      assert.are.equal(1, r.end_first.intersection)  -- file 0
      assert.are.equal(1, r.end_last.road_index)
      assert.are.equal(0xCDCD, r.end_last.light_index)
      assert.are.equal(3, r.end_last.rule)
      assert.are.same({ 1 }, t.intersections[2].roads)
      assert.are.equal(3, t.intersections[2].room)
      assert.are.equal(4, t.cull_rooms)
      assert.are.same({}, t.near[0])
      assert.are.same({ 1 }, t.near[3])
      assert.are.same({ 1 }, t["in"][1])
      assert.is_nil(t.trailing)
    end)

    it("encodes a table built from scratch (ids, light indices and speed defaulted)", function()
      local a, b = V.bai_example_sides()
      local function e(x) return { intersection = x, rule = 3, road_index = 1 } end
      local t = {
        roads = { {
          rooms = { 2 }, half_width = 5, side_a = a, side_b = b, centre_length = { 0, 40 },
          origin = { { 0, 0, 0 }, { 0, 0, 40 } }, x_axis = { { 1, 0, 0 }, { 1, 0, 0 } },
          y_axis = { { 0, 1, 0 }, { 0, 1, 0 } }, z_axis = { { 0, 0, -1 }, { 0, 0, -1 } },
          w_axis = { { 0, 0, 1 }, { 0, 0, 1 } }, end_last = e(2), end_first = e(1),
        } },
        intersections = { { room = 1, center = { 0, 0, -10 }, roads = { 1 } }, { room = 3, center = { 0, 0, 50 }, roads = { 1 } } },
        cull_rooms = 4, near = { [0] = {}, { 1 }, { 1 }, { 1 } }, ["in"] = { [0] = {}, { 1 }, { 1 }, { 1 } },
      }
      assert.are.equal(V.bai_example(), psdl.bai.encode(t))
      local ok, problems = psdl.bai.validate(t, fake_psdl(3))
      assert.is_true(ok, problems[1] and problems[1].message)
    end)

    it("keeps trams, trains, side flags, sidewalk counts and trailing bytes", function()
      local a, b = V.bai_example_sides()
      a.trams = { { { 1, 0, 40 }, { 1, 0, 0 } } }
      b.trains = { { { -1, -8, 0 }, { -1, -8, 40 } }, { { -2, -8, 0 }, { -2, -8, 40 } } }
      a.flags, b.flags, b.sidewalks = 1, 2, 0
      local road = table.concat {
        pack("<HHHH", 7, 2, 9, 2), pack("<HH", 2, 5), pack("<ff", 5.0, 15.0), V.bai_side(a), V.bai_side(b),
        pack("<ff", 0, 40), V.vec(0, 0, 0), V.vec(0, 0, 40),
        rep(V.vec(1, 0, 0), 2), rep(V.vec(0, 1, 0), 2), rep(V.vec(0, 0, -1), 2), rep(V.vec(0, 0, 1), 2),
        V.bai_end(0xFFFFFFFF, 2, 0xFFFFFFFF, 0x1234), V.bai_end(0, 1, 0),
      }
      local bytes = "CAI1" .. pack("<HH", 0, 1) .. road .. pack("<I4", 1) .. pack("<H", 0) .. pack("<H", 0) .. "tail"
      local t = assert(psdl.bai.decode(bytes))
      local r = t.roads[1]
      assert.are.equal(7, r.id)
      assert.are.equal(9, r.flags)
      assert.are.same({ 2, 5 }, r.rooms)
      assert.are.equal(1, #r.side_a.trams)
      assert.are.equal(2, #r.side_b.trains)
      assert.are.same({ -2, -8, 40 }, r.side_b.trains[2][2])
      assert.are.equal(0, r.side_b.sidewalks)
      assert.are.equal(2, r.side_b.flags)
      assert.are.equal(0x100000000, r.end_last.intersection)
      assert.are.equal(0x1234, r.end_last.light_index)
      assert.are.equal("tail", t.trailing)
      assert.are.equal(bytes, psdl.bai.encode(t))
      local set = rules(psdl.bai.validate(t))
      assert.truthy(set["intersection_count:error"])
      assert.truthy(set["end_intersection:error"])
      assert.truthy(set["rule:warning"])
      assert.truthy(set["trams:warning"])
      assert.truthy(set["sidewalks:warning"])
      assert.truthy(set["road_id:warning"])
      assert.truthy(set["trailing:warning"])
    end)

    it("fails on bad data with nil, message, code and an offset", function()
      local t, msg, code = psdl.bai.decode("CAI2")
      assert.is_nil(t)
      assert.are.equal("bad_magic", code)
      t, msg, code = psdl.bai.decode(V.bai_example():sub(1, 0x268))
      assert.are.equal("truncated", code)
      assert.are.equal("bai: truncated: need 4 bytes for culling room count, 2 left at offset 0x266", msg)
      local b = V.bai_example()
      b = b:sub(1, 6) .. pack("<H", 0xFFFF) .. b:sub(9)
      t, msg, code = psdl.bai.decode(b)
      assert.are.equal("bad_count", code)
      assert.truthy(msg:find("roads"), msg)
    end)

    it("encode raises with the path of the bad value", function()
      local t = assert(psdl.bai.decode(V.bai_example()))
      local bad = copy(t)
      bad.roads[1].side_a.curb[2] = { 1, 2 }
      local ok, err = pcall(psdl.bai.encode, bad)
      assert.is_false(ok)
      assert.truthy(err:find("roads%[1%]%.side_a%.curb%[2%]: {x, y, z} expected", 1), err)
      bad = copy(t)
      bad.roads[1].side_b.lengths[2] = { 0 }
      ok, err = pcall(psdl.bai.encode, bad)
      assert.truthy(err:find("roads%[1%]%.side_b%.lengths%[2%]: 1 numbers, 2 expected"), err)
      bad = copy(t)
      bad.near[3] = nil
      ok, err = pcall(psdl.bai.encode, bad)
      assert.truthy(err:find("near"), err)
      bad = copy(t)
      bad.intersections[1].roads[1] = 0
      ok, err = pcall(psdl.bai.encode, bad)
      assert.truthy(err:find("intersections%[1%]%.roads%[1%]: 0 is out of range"), err)
    end)

    it("validates every invariant of §2.9 it can see", function()
      local base = assert(psdl.bai.decode(V.bai_example()))
      local doc = fake_psdl(3)
      assert.is_true((psdl.bai.validate(base, doc)))
      local function check(mutate, rule, d)
        local t = copy(base)
        mutate(t)
        local set = rules(psdl.bai.validate(t, d or doc))
        assert.truthy(set[rule], rule)
      end
      check(function(t) t.intersections[2] = nil end, "intersection_count:error")
      check(function(t) t.roads[1].flags = 4 end, "cruise_start:error")
      check(function(t) t.roads[1].x_axis[1] = { 2, 0, 0 } end, "unit_axis:error")
      check(function(t) t.roads[1].w_axis[2] = { 0, 0, 0.5 } end, "unit_axis:error")
      check(function(t) t.roads[1].end_last.intersection = 5 end, "end_intersection:error")
      check(function(t) t.roads[1].end_last.road_index = 2 end, "end_road_index:error")
      check(function(t) t.intersections[1].roads = { 1, 1 } end, "intersection_road:error")
      check(function(t) t.intersections[1].roads = { 4 } end, "intersection_road:error")
      check(function(t) t.roads[1].end_first.rule = 7 end, "rule:error")
      check(function(t) t.roads[1].end_first.rule = 2 end, "rule:warning")
      check(function(t) t.roads[1].rooms = { 9 } end, "room_range:error")
      check(function(t) t.intersections[1].room = 0 end, "room_range:error")
      check(function(t) t.cull_rooms = 3 end, "cull_count:error")
      check(function(t) t.near[2] = { 2 } end, "cull_road:error")
      check(function(t) t.roads[1].side_a.lengths[1] = { 0, 41 } end, "lengths:error")
      check(function(t) t.roads[1].side_b.lengths[2] = { 1, 41 } end, "lengths:error")
      check(function(t) t.roads[1].centre_length = { 0, 30 } end, "lengths:error")
      check(function(t)
        local s = t.roads[1].side_a
        for i = 2, 5 do s.lanes[i] = s.lanes[1]; s.lengths[i] = { 0, 40 }; s.lateral[i] = 1 end
      end, "lane_count:warning")
      check(function(t)
        local s = t.roads[1].side_a
        s.lanes[2] = s.lanes[1]; s.lengths[3] = { 0, 40 }; s.lateral[3] = 1
      end, "two_way_lanes:warning")
      check(function(t) t.near[0] = { 1 } end, "cull_room0:warning")
      check(function(t) t.near[2] = {} end, "near_superset:warning")
      check(function(t) t.intersections[2].id = 5 end, "intersection_id:warning")
      check(function() end, "dead_end:warning")
      check(function(t)
        local r = t.roads[1]
        r.origin[2] = nil
        for _, k in ipairs { "centre_length", "x_axis", "y_axis", "z_axis", "w_axis" } do r[k][2] = nil end
      end, "sections:error")
    end)

    it("writes atomically after validation; read reports io errors", function()
      local t = assert(psdl.bai.decode(V.bai_example()))
      local path = H.tmpname(".bai")
      finally(function() os.remove(path) end)
      assert.is_true(psdl.bai.write(t, path))
      assert.are.equal(V.bai_example(), H.read_bytes(path))
      local back = assert(psdl.bai.read(path))
      assert.are.same(t, back)
      local bad = copy(t)
      bad.intersections[2] = nil
      bad.roads[1].end_last.intersection = 1
      bad.roads[1].end_last.road_index = 1
      local ok, msg, code = psdl.bai.write(bad, path)
      assert.is_nil(ok)
      assert.are.equal("invalid", code)
      assert.truthy(msg:find("intersections"), msg)
      assert.are.equal(V.bai_example(), H.read_bytes(path)) -- untouched
      assert.is_true(psdl.bai.write(bad, path, { force = true }))
      local _, rmsg, rcode = psdl.bai.read(path .. ".missing")
      assert.are.equal("io", rcode)
      assert.truthy(rmsg:find("^bai: io: "))
      assert.has_error(function() psdl.bai.write(t, path, { bogus = 1 }) end)
    end)
  end)

  describe("psdl.cpvs", function()
    it("decodes §3.6 and keeps the stored row bytes", function()
      local t = assert(psdl.cpvs.decode(V.cpvs_example))
      assert.are.equal(4, t.rooms)
      assert.are.equal(3, #t.rows)
      assert.are.same({ 1, 2, 3 }, t.rows[2].visible)
      assert.are.equal("\x80\xfc", t.rows[2].rle)
    end)

    it("encodes rows from visible lists (canonical RLE) and ignores a stale rle", function()
      local t = { rooms = 4, rows = { { visible = { 1, 2, 3 } }, { visible = { 3, 1, 2 } }, { visible = { 1, 2, 3 } } } }
      assert.are.equal(V.cpvs_example, psdl.cpvs.encode(t))
      local d = assert(psdl.cpvs.decode(V.cpvs_example))
      d.rows[1].visible = { 1 }
      local bytes = psdl.cpvs.encode(d)
      local back = assert(psdl.cpvs.decode(bytes))
      assert.are.same({ 1 }, back.rows[1].visible)
      assert.are.equal("\x80\x0c", back.rows[1].rle)
      -- a non-canonical but equivalent rle is kept: a repeat of 1 instead of a literal
      local odd = "PVS0" .. pack("<I4I4I4", 3, 0, 2) .. "\x01\x0c"
      local o = assert(psdl.cpvs.decode(odd))
      assert.are.same({ 1 }, o.rows[1].visible)
      assert.are.equal(odd, psdl.cpvs.encode(o))
      -- long runs: 1000 rooms, all visible
      local all = {}
      for i = 1, 999 do all[i] = i end
      local big = { rooms = 1000, rows = {} }
      for r = 1, 999 do big.rows[r] = { visible = all } end
      local bb = assert(psdl.cpvs.decode(psdl.cpvs.encode(big)))
      assert.are.same(all, bb.rows[500].visible)
      assert.are.equal(6, #bb.rows[1].rle) -- 0xFC literal, then 249 x 0xFF as repeats of 127 and 122
    end)

    it("refuses bad offsets and cut runs, keeps trailing bytes", function()
      local _, msg, code = psdl.cpvs.decode("PVS0" .. pack("<I4I4I4", 3, 1, 2) .. "\x80\x0c")
      assert.are.equal("bad_index", code)
      assert.truthy(msg:find("first offset 1"))
      _, msg, code = psdl.cpvs.decode("PVS0" .. pack("<I4I4I4", 3, 0, 2) .. "\x85\x0c")
      assert.are.equal("bad_count", code)
      assert.truthy(msg:find("%(record 1%)"), msg)
      local t = assert(psdl.cpvs.decode("PVS0" .. pack("<I4I4I4", 3, 0, 2) .. "\x80\x0cxx"))
      assert.are.equal("xx", t.trailing)
    end)

    it("validates §3.4", function()
      local base = assert(psdl.cpvs.decode(V.cpvs_example))
      assert.is_true((psdl.cpvs.validate(base, fake_psdl(3))))
      local set = rules(psdl.cpvs.validate(base, fake_psdl(4)))
      assert.truthy(set["cpvs_count:error"])
      local t = copy(base)
      t.rows[1].visible = { 2, 3, 4 }
      set = rules(psdl.cpvs.validate(t, fake_psdl(3)))
      assert.truthy(set["row_room:error"])
      assert.truthy(set["sees_itself:error"])
      t.rows[1].visible = { 1, 3000 }
      set = rules(psdl.cpvs.validate(t))
      assert.truthy(set["row_buffer:error"])
      t.rows[3] = nil
      set = rules(psdl.cpvs.validate(t))
      assert.truthy(set["row_count:error"])
      local many = {}
      for i = 1, 600 do many[i] = i end
      set = rules(psdl.cpvs.validate({ rooms = 601, rows = { { visible = many } } }))
      assert.truthy(set["draw_cap:warning"])
    end)
  end)

  describe("psdl.inst", function()
    it("decodes compact and full records", function()
      local t = assert(psdl.inst.decode(V.inst_example .. V.inst_full))
      assert.are.equal(2, #t)
      local c = t[1]
      assert.are.equal(3, c.room)
      assert.are.equal("sp_stop_f", c.name)
      assert.is_true(c.compact)
      assert.are.same({ 0.6000000238418579, 0, 0.800000011920929 }, c.x_axis)
      assert.is_nil(c.y_axis)
      assert.are.same({ -6, 0.15000000596046448, 38 }, c.position)
      local f = t[2]
      assert.is_false(f.compact)
      assert.are.equal(0x100, f.flags)
      assert.are.same({ 0, 0, 2 }, f.z_axis)
      assert.are.equal(V.inst_example .. V.inst_full, psdl.inst.encode(t))
    end)

    it("builds records; refuses a compact y and long names", function()
      local bytes = psdl.inst.encode { { room = 3, name = "sp_stop_f", compact = true, x_axis = { 0.6, 0, 0.8 },
        position = { -6, 0.15, 38 } } }
      assert.are.equal(V.inst_example, bytes)
      assert.has_error(function()
        psdl.inst.encode { { room = 1, name = "x", compact = true, x_axis = { 1, 1, 0 }, position = { 0, 0, 0 } } }
      end)
      local ok, err = pcall(psdl.inst.encode, { { room = 1, name = rep("a", 127), x_axis = { 1, 0, 0 },
        y_axis = { 0, 1, 0 }, z_axis = { 0, 0, 1 }, position = { 0, 0, 0 } } })
      assert.is_false(ok)
      assert.truthy(err:find("%[1%]%.name: 127 bytes"), err)
      local _, _, code = psdl.inst.decode(V.inst_example:sub(1, 14) .. "x" .. V.inst_example:sub(16))
      assert.are.equal("bad_string", code)
    end)

    it("validates §4.4 against the PSDL", function()
      local doc = fake_psdl(3, 0x84)
      local rec = { room = 2, name = "prop", compact = true, x_axis = { 1, 0, 0.5 }, position = { 15, 0, 5 } }
      assert.is_true((psdl.inst.validate({ rec }, doc)))
      local function check(mutate, rule, d)
        local t = { copy(rec) }
        mutate(t[1])
        local set = rules(psdl.inst.validate(t, d or doc))
        assert.truthy(set[rule], rule)
      end
      check(function(r) r.room = 0 end, "room_range:error")
      check(function(r) r.room = 4 end, "room_range:error")
      check(function() end, "room_flag:error", fake_psdl(3, 0x04))
      check(function(r) r.position = { 40, 0, 5 } end, "room_contains:warning")
      check(function(r) r.x_axis = { 0, 0, 0 } end, "axis:error")
      check(function(r) r.x_axis = { 1, 0, 0 } end, "zero_yaw:warning")
      check(function(r) r.name = rep("n", 40) end, "name_length:warning")
      check(function(r) r.name = "" end, "empty_name:error")
    end)
  end)

  describe("psdl.pathset", function()
    it("decodes the parked-car example and builds it without the optional fields", function()
      local t = assert(psdl.pathset.decode(V.pathset_example))
      local p = t.paths[1]
      assert.are.equal("PATH00", p.name)
      assert.is_nil(p.name_field)
      assert.are.same({ 0, 0 }, p.words)
      assert.are.equal(2, p.type)
      assert.are.equal(24, p.spacing)
      assert.are.same({ 9, 0.15000000596046448, 35 }, p.points[2])
      local built = psdl.pathset.encode { paths = { { name = "PATH00", points = { { 9, 0.15, 5 }, { 9, 0.15, 35 } },
        type = 2, spacing = 24 } } }
      assert.are.equal(V.pathset_example, built)
    end)

    it("keeps editor garbage in the name field and point words", function()
      local name = "PATH01\0\xcd\xcd" .. rep("\0", 22) .. "Z"
      local bytes = "PTH1" .. pack("<I4I4", 1, 3) .. name .. pack("<I4I4", 1, 1) .. pack("<I4", 0xCDCDCDCD)
        .. V.vec(1, 2, 3) .. pack("<BBH", 1, 0, 7)
      local t = assert(psdl.pathset.decode(bytes))
      assert.are.equal("PATH01", t.paths[1].name)
      assert.are.equal(name, t.paths[1].name_field)
      assert.are.same({ 0xCDCDCDCD }, t.paths[1].words)
      assert.are.equal(3, t.current)
      assert.are.equal(bytes, psdl.pathset.encode(t))
      -- renaming drops the stale field
      t.paths[1].name = "PATH02"
      local back = assert(psdl.pathset.decode(psdl.pathset.encode(t)))
      assert.are.equal("PATH02", back.paths[1].name)
      assert.is_nil(back.paths[1].name_field)
      local set = rules(psdl.pathset.validate(t))
      assert.truthy(set["odd_pairs:warning"])
      assert.truthy(set["pad:warning"])
      t.paths[1].type = 5
      t.paths[1].name = ""
      set = rules(psdl.pathset.validate(t))
      assert.truthy(set["type:error"])
      assert.truthy(set["empty_name:error"])
    end)
  end)

  describe("psdl.pkg", function()
    it("decodes §7.3 into views and builds it back", function()
      local t = assert(psdl.pkg.decode(V.pkg_example()))
      assert.are.equal("PKG3", t.magic)
      local g = t.chunks[1].geometry
      assert.are.equal("H", t.chunks[1].name)
      assert.are.equal(0x112, g.fvf)
      local pk = g.sections[1].packets[1]
      assert.are.equal(1, g.sections[1].shader)
      assert.are.same({ 1, 3, 2, 1, 4, 3 }, pk.indices)
      assert.are.same({ position = { 20, 0, 60 }, normal = { 0, 1, 0 }, uv = { 1, 1 } }, pk.vertices[3])
      local sh = t.chunks[2].shaders
      assert.is_true(sh.compact)
      assert.are.same({ texture = "hudmap_mycity", diffuse = { 255, 255, 255, 255 }, second = { 255, 255, 255, 255 },
        emissive = { 0, 0, 0, 255 }, power = 0 }, sh.paint_jobs[1][1])
      local built = {
        chunks = {
          { name = "H", geometry = { fvf = 0x112, sections = { { shader = 1, packets = { {
            vertices = pk.vertices, indices = pk.indices } } } } } },
          { name = "shaders", shaders = sh },
        },
      }
      assert.are.equal(V.pkg_example(), psdl.pkg.encode(built))
      assert.is_true((psdl.pkg.validate(t)))
    end)

    it("handles full shaders, xrefs, other vertex layouts and raw chunks", function()
      local geo = pack("<I4I4I4I4I4", 1, 3, 3, 1, 0x1d2) .. pack("<I4I4", 1, 0) .. pack("<I4I4", 3, 3)
      for i = 1, 3 do geo = geo .. V.vec(i, 0, 0) .. V.vec(0, 1, 0) .. pack("<I4I4ff", 0xFF00FF00, 0x11223344, 0.5, 0.25) end
      geo = geo .. pack("<I4HHH", 3, 0, 1, 2)
      local sh = pack("<I4I4", 2, 1) .. pack("<B", 0) .. rep(pack("<f", 0.5), 16) .. pack("<f", 3)
        .. pack("<B", 4) .. "tex\0" .. rep(pack("<f", 1), 16) .. pack("<f", 0)
      local xr = pack("<I4", 1) .. rep(pack("<f", 1), 12) .. "lamp" .. rep("\0", 28)
      local function chunk(name, body) return "FILE" .. pack("<B", #name + 1) .. name .. "\0" .. pack("<I4", #body) .. body end
      local bytes = "PKG3" .. chunk("BODY_H", geo) .. chunk("shaders", sh) .. chunk("xrefs", xr) .. chunk("offset", "\1\2\3")
      local t = assert(psdl.pkg.decode(bytes))
      local v = t.chunks[1].geometry.sections[1].packets[1].vertices[2]
      assert.are.equal(0xFF00FF00, v.diffuse)
      assert.are.equal(0x11223344, v.specular)
      assert.are.same({ 0.5, 0.25 }, v.uv)
      local s = t.chunks[2].shaders
      assert.is_false(s.compact)
      assert.are.equal(2, #s.paint_jobs)
      assert.is_false(s.paint_jobs[1][1].texture)
      assert.are.same({ 0.5, 0.5, 0.5, 0.5 }, s.paint_jobs[1][1].ambient)
      assert.are.equal("tex", s.paint_jobs[2][1].texture)
      assert.are.equal("lamp", t.chunks[3].xrefs[1].name)
      assert.are.same({ 1, 1, 1 }, t.chunks[3].xrefs[1].matrix[4])
      assert.are.equal("\1\2\3", t.chunks[4].data)
      assert.are.equal(bytes, psdl.pkg.encode(t))
      local set = rules(psdl.pkg.validate(t))
      assert.truthy(set["fvf:warning"])
      -- inconsistent totals: raw, still lossless
      local odd = "PKG3" .. chunk("H", geo:sub(1, 4) .. pack("<I4", 9) .. geo:sub(9))
      local o = assert(psdl.pkg.decode(odd))
      assert.is_string(o.chunks[1].data)
      assert.are.equal(odd, psdl.pkg.encode(o))
      set = rules(psdl.pkg.validate(o))
      assert.truthy(set["raw_chunk:warning"])
    end)

    it("refuses what the game cannot draw and reports missing shaders", function()
      local t = assert(psdl.pkg.decode(V.pkg_example()))
      local bad = copy(t)
      bad.chunks[1].geometry.sections[1].packets[1].indices[6] = 5
      local ok, err = pcall(psdl.pkg.encode, bad)
      assert.is_false(ok)
      assert.truthy(err:find("indices%[6%]: 5 is out of range 1..4"), err)
      bad = copy(t)
      bad.chunks[1].data = "x"
      ok, err = pcall(psdl.pkg.encode, bad)
      assert.truthy(err:find("exactly one of"), err)
      local _, _, code = psdl.pkg.decode("PKG2FILE")
      assert.are.equal("bad_magic", code)
      bad = copy(t)
      table.remove(bad.chunks, 2)
      local set = rules(psdl.pkg.validate(bad))
      assert.truthy(set["missing_shaders:error"])
      bad = copy(t)
      bad.chunks[1].geometry.sections[1].shader = 2
      set = rules(psdl.pkg.validate(bad))
      assert.truthy(set["shader_index:error"])
      bad = copy(t)
      bad.chunks[1], bad.chunks[2] = bad.chunks[2], bad.chunks[1]
      set = rules(psdl.pkg.validate(bad))
      assert.truthy(set["geometry_first:warning"])
      bad = copy(t)
      bad.chunks[1].geometry.sections[1].packets[1].primitive = 4
      bad.chunks[2].shaders.paint_jobs[1][1].texture = rep("t", 40)
      set = rules(psdl.pkg.validate(bad))
      assert.truthy(set["primitive:warning"])
      assert.truthy(set["texture_name:warning"])
    end)
  end)

  describe("psdl.tex", function()
    it("decodes §9's example into levels", function()
      local t = assert(psdl.tex.decode(V.tex_example()))
      assert.are.equal(4, t.width)
      assert.are.equal(17, t.format)
      assert.are.equal(3, t.mips)
      assert.are.equal(0x10001, t.flags)
      assert.are.equal(3, #t.levels)
      assert.are.equal("\7\8\9", t.levels[3])
      assert.is_true((psdl.tex.validate(t)))
    end)

    it("keeps palettes, unknown layouts and trailing bytes", function()
      local pal = rep("\1\2\3\4", 16)
      local p4 = pack("<HHHHHI4", 4, 2, 15, 0, 1, 0) .. pal .. "\x10\x32\x54\x76" .. "\x98" .. "tt"
      local t = assert(psdl.tex.decode(p4))
      assert.are.equal(pal, t.palette)
      assert.are.same({ "\x10\x32\x54\x76", "\x98" }, t.levels) -- mips 0: 4x2, 2x1
      assert.are.equal("tt", t.trailing)
      assert.are.equal(p4, psdl.tex.encode(t))
      local dxt = pack("<HHHHHI4", 4, 4, 22, 1, 1, 0) .. rep("\0", 8)
      local d = assert(psdl.tex.decode(dxt))
      assert.are.equal(rep("\0", 8), d.data)
      assert.is_nil(d.levels)
      assert.are.equal(dxt, psdl.tex.encode(d))
      local set = rules(psdl.tex.validate(d))
      assert.truthy(set["format:error"])
      set = rules(psdl.tex.validate(t))
      assert.truthy(set["trailing:warning"])
    end)

    it("builds the full mip chain from pixels", function()
      local px = {}
      for y = 0, 3 do for x = 0, 7 do px[#px + 1] = string.char(x * 32, y * 64, 0) end end
      local t = psdl.tex.from_pixels { width = 8, height = 4, format = 17, pixels = table.concat(px) }
      assert.are.equal(3, #t.levels) -- 8x4, 4x2, 2x1
      assert.are.equal(6, #t.levels[3])
      assert.are.equal(0x10001, t.flags)
      local bytes = psdl.tex.encode(t)
      assert.are.equal(14 + 96 + 24 + 6, #bytes)
      local back = assert(psdl.tex.decode(bytes))
      assert.are.same(t.levels, back.levels)
      -- first texel of level 2: average of (0,0,0), (32,0,0), (0,64,0), (32,64,0)
      assert.are.equal(string.char(16, 32, 0), t.levels[2]:sub(1, 3))
      assert.is_true((psdl.tex.validate(t)))
      assert.has_error(function() psdl.tex.from_pixels { width = 3, height = 4, format = 17, pixels = "" } end)
      local set = rules(psdl.tex.validate { width = 3, height = 4, format = 17, mips = 1, flags = 6, levels = { "" } })
      assert.truthy(set["power_of_two:error"])
      assert.truthy(set["mip_chain:warning"])
      assert.truthy(set["flags:warning"])
      local ok, err = pcall(psdl.tex.encode, { width = 4, height = 4, format = 17, levels = { "x" } })
      assert.is_false(ok)
      assert.truthy(err:find("levels"), err)
    end)
  end)

  describe("detection and the command line", function()
    it("names formats by magic and extension", function()
      assert.are.equal("bai", psdl.companion.detect(V.bai_example()))
      assert.are.equal("cpvs", psdl.companion.detect(V.cpvs_example))
      assert.are.equal("pathset", psdl.companion.detect(V.pathset_example))
      assert.are.equal("pkg", psdl.companion.detect(V.pkg_example()))
      assert.is_nil(psdl.companion.detect(V.tex_example()))
      assert.are.equal("inst", psdl.companion.format_of_name("city/x_ai.inst"))
      assert.are.equal("tex", psdl.companion.format_of_name("texture/HUDMAP.TEX"))
    end)

    it("psdl info, dump --json and undump handle every format byte for byte", function()
      local cli = require "psdl.cli"
      local run = H.cli
      local paths = {}
      finally(function() for _, p in ipairs(paths) do os.remove(p) end end)
      for f, bytes in pairs(EXAMPLES) do
        local src, json, out = H.tmpname("." .. f), H.tmpname(".json"), H.tmpname("." .. f)
        paths[#paths + 1], paths[#paths + 2], paths[#paths + 3] = src, json, out
        H.write_bytes(src, bytes)
        local code, text = run("info", src)
        assert.are.equal(0, code, f)
        assert.truthy(text:find("format%s+" .. f), text)
        code = run("dump", "--json", src, "-o", json)
        assert.are.equal(0, code, f)
        assert.truthy(H.read_bytes(json):find('"format": "psdlkit%-companion"'))
        code = run("undump", json, "-o", out)
        assert.are.equal(0, code, f)
        assert.are.equal(bytes, H.read_bytes(out), f)
      end
      local code, text = run("info", "--json", paths[1])
      assert.are.equal(0, code)
      assert.truthy(text:find('"counts"'))
      -- psdl validate: the format's own rules
      local bad = H.tmpname(".bai")
      paths[#paths + 1] = bad
      local t = assert(psdl.bai.decode(EXAMPLES.bai))
      t.roads[1].x_axis[1] = { 3, 0, 0 }
      H.write_bytes(bad, psdl.bai.encode(t))
      local good = H.tmpname(".tex")
      paths[#paths + 1] = good
      H.write_bytes(good, EXAMPLES.tex)
      code, text = run("validate", good, bad)
      assert.are.equal(1, code, text)
      assert.truthy(text:find(good .. ": ok", 1, true), text)
      assert.truthy(text:find("error unit_axis roads[1].x_axis[1]", 1, true), text)
    end)
  end)
end)

describe("companion encoders on tables they cannot hold", function()
  it("raise naming the field (1-based path) and the problem", function()
    local core = require "psdl.core"
    local function v3() return { 0, 0, 0 } end
    local cases = {
      { "inst_encode", { { room = 1, name = ("a"):rep(127), x_axis = v3(), position = v3() } } },
      { "inst_encode", { { room = 1, name = "x", compact = true, x_axis = { 1, 1, 0 }, position = v3() } } },
      { "inst_encode", { { room = 1.5, name = "x", x_axis = v3(), position = v3() } } },
      { "inst_encode", { { room = 1, name = "x", x_axis = { 1, "a", 0 }, position = v3() } } },
      { "pathset_encode", { paths = { { name = ("a"):rep(33), points = {}, type = 1 } } } },
      { "pathset_encode", { paths = { { name = "a\0b", points = {}, type = 1 } } } },
      { "pathset_encode", { paths = { { name = "a", name_field = "a", points = {}, type = 1 } } } },
      { "pathset_encode", { paths = { { name = "a", points = { v3() }, words = { -1 }, type = 1 } } } },
      { "pathset_encode", { paths = { { name = "a", points = { v3() }, words = { 1, 2 }, type = 1 } } } },
      { "pathset_encode", { paths = {}, trailing = 5 } },
      { "pkg_encode", { magic = "PKG2", chunks = {} } },
      { "pkg_encode", { chunks = { { name = "" } } } },
      { "pkg_encode", { chunks = { { name = "x", xrefs = { { matrix = { v3(), v3(), v3(), v3() }, name = ("n"):rep(32) } } } } } },
      { "pkg_encode", { chunks = { { name = "x", geometry = { fvf = 2, sections = { { shader = 1, packets = {
          { vertices = { { position = v3() } }, indices = { 2 } } } } } } } } } },
      { "pkg_encode", { chunks = { { name = "x", shaders = { compact = true, paint_jobs = { { { texture = false,
          diffuse = { 1, 2, 3, 256 }, second = { 0, 0, 0, 0 }, emissive = { 0, 0, 0, 0 } } } } } } } } },
      { "pkg_encode", { chunks = { { name = "x" } } } },
      { "pkg_encode", { chunks = { { name = "x", data = "ab" } }, } },
      { "tex_encode", { width = 4, height = 4, format = 99, levels = {} } },
      { "tex_encode", { width = 1, height = 1, format = 1, levels = { "\0" }, palette = "ab" } },
      { "tex_encode", { width = 1, height = 1, format = 17, levels = { "ab" } } },
      { "tex_encode", { width = 1, height = 1, format = 17, levels = { "abc" }, trailing = "zz" } },
      { "cpvs_encode", { rooms = 3, rows = { { visible = { 1, 0x1000000 } }, { visible = {} } } } },
      { "cpvs_encode", { rooms = 3, rows = { { visible = { 1 } } } } },
      { "bai_encode", { roads = { { rooms = { 1, "x" } } } } },
      { "bai_encode", { roads = {}, intersections = { { room = 1, center = v3(), roads = { 0 } } } } },
      { "bai_encode", { roads = {}, intersections = {}, cull_rooms = 2, near = { [0] = {}, { 0 } }, ["in"] = { [0] = {}, {} } } },
      { "bai_encode", { roads = {}, intersections = {}, cull_rooms = 2, near = { [0] = {} }, ["in"] = { [0] = {}, {} } } },
      { "bai_encode", { roads = {}, intersections = {}, cull_rooms = 1, near = { [0] = {} }, ["in"] = { [0] = {} }, trailing = "xy" } },
    }
    -- the message inside "bad argument #1 to '<f>' (...)"; false: the table encodes
    local expected = {
      "[1].name: 127 bytes, at most 126 (the name byte holds the length with its NUL in 7 bits)",
      "[1].x_axis: a compact record stores no y component: 0 expected, got 1",
      "[1].room: integer expected, got number",
      "[1].x_axis[2]: number expected, got string",
      "paths[1].name: 33 bytes: at most 32, no NUL",
      "paths[1].name: 3 bytes with a NUL: at most 32, no NUL",
      "paths[1].name_field: 1 bytes, 32 expected",
      "paths[1].words[1]: -1 is out of range 0..4294967295",
      "paths[1].words: 2 words, 1 expected (one per point)",
      "trailing: string expected, got number",
      "magic: only \"PKG3\" can be written",
      "chunks[1].name: 0 bytes: 1 to 254 expected",
      "chunks[1].xrefs[1].name: 32 bytes: at most 31, no NUL",
      "chunks[1].geometry.sections[1].packets[1].indices[1]: 2 is out of range 1..1",
      "chunks[1].shaders.paint_jobs[1][1].diffuse[4]: 256 is out of range 0..255",
      "chunks[1]: exactly one of geometry, shaders, xrefs or data expected, 0 given",
      false,
      "format: 99 has no known texel layout: give the raw bytes as `data`",
      "palette: 2 bytes, 1024 expected for format 1",
      "levels[1]: 2 bytes, 3 expected",
      false,
      "rows[1].visible[2]: 16777216 is out of range 0..16777215",
      "rows: 1 rows, 2 expected (rooms 1 .. rooms - 1)",
      "roads[1].rooms[2]: integer expected, got string",
      "intersections[1].roads[1]: 0 is out of range 1..4294967296",
      "near[1][1]: 0 is out of range 1..65536",
      "near: 2 lists expected (cull_rooms, indexed by room id from 0), 1 given",
      false,
    }
    assert.equal(#cases, #expected)
    for i, c in ipairs(cases) do
      local ok, msg = pcall(core[c[1]], c[2])
      if expected[i] then
        assert.is_false(ok, c[1] .. " case " .. i)
        -- (the function's name is the first that Lua finds it under: psdl.core's or its module's)
        assert.matches("^bad argument #1 to '[%w_.]+' %(", msg)
        assert.equal("(" .. expected[i] .. ")", msg:match("%(.*$"))
      else
        assert.is_true(ok, msg)
        assert.equal("string", type(msg))
      end
    end
  end)
end)

describe("companion cross-checks", function()
  it("bai: road and junction rooms of the PSDL are covered once", function()
    local t = assert(psdl.bai.decode(V.bai_example()))
    local doc = fake_psdl(3)
    doc.rooms[1].flags, doc.rooms[2].flags, doc.rooms[3].flags = 0x10, 0x08, 0x10
    local ok, problems = psdl.bai.validate(t, doc, { strict = false })
    local set = rules(ok, problems)
    assert.is_nil(set["road_rooms:warning"])
    assert.is_nil(set["junction_rooms:warning"])
    local t2 = copy(t)
    t2.roads[1].rooms = { 1 }
    t2.intersections[2].room = 1
    set = rules(psdl.bai.validate(t2, doc))
    assert.truthy(set["road_rooms:warning"])
    assert.truthy(set["junction_rooms:warning"])
  end)

  it("pkg: hud map checks and the texture list", function()
    local t = assert(psdl.pkg.decode(V.pkg_example()))
    assert.are.same({ "hudmap_mycity" }, psdl.pkg.textures(t))
    local doc = fake_psdl(3) -- x 0..30, z 0..10: inside the quad (-20..20 is too narrow in x)
    local set = rules(psdl.pkg.validate(t, doc, { hudmap = true }))
    assert.truthy(set["hudmap_cover:warning"])
    local small = fake_psdl(1)
    assert.is_true((psdl.pkg.validate(t, small, { hudmap = true, strict = true })))
    local bad = copy(t)
    bad.chunks[1].name = "M"
    bad.chunks[1].geometry.sections[1].packets[1].vertices[1].position = { 0, 600, 0 }
    set = rules(psdl.pkg.validate(bad, nil, { hudmap = true }))
    assert.truthy(set["hudmap_lod:error"])
    bad.chunks[1].name = "H"
    bad.chunks[2].shaders.paint_jobs[1][1].texture = false
    set = rules(psdl.pkg.validate(bad, nil, { hudmap = true }))
    assert.truthy(set["hudmap_height:error"])
    assert.truthy(set["hudmap_untextured:warning"])
  end)

  it("propcsv: parses like the game and checks the pair against the PSDL", function()
    local defs = "name,start,distance,maxUse,minLerp,maxLerp,file1,file2,file3,file4\r\n"
      .. "lamp,9,29,9999,0.1,0.1,sp_lightstreet_rt_f\r\n"
      .. "# a comment line\r\n"
      .. "bin,4,40,9999,0.3,0.3,sp_bin_f,,\r\n"
    local rules_csv = "rulename,prop1,prop2,prop3,prop4,prop5,prop6,prop7,prop8\r\nn01left,lamp\r\nn01right,lamp,bin\r\n"
    local p = psdl.propcsv.parse(defs)
    assert.are.same({ "name", "start", "distance", "maxuse", "minlerp", "maxlerp", "file1", "file2", "file3", "file4" },
      p.columns)
    assert.are.equal(2, #p.rows)
    assert.are.same({ "bin", "4", "40", "9999", "0.3", "0.3", "sp_bin_f", "", "", line = 4 }, p.rows[2])
    local doc = fake_psdl(2)
    doc.rooms[1].prop_rule = 1
    doc.roads = { { flags = 0x40, rooms = { 1, 2 } } }
    local ok, problems = psdl.propcsv.validate(defs, rules_csv, doc)
    assert.is_true(ok, problems[1] and problems[1].message)
    local set = rules(ok, problems)
    assert.truthy(set["empty_file:warning"])
    doc.rooms[1].prop_rule = 2
    set = rules(psdl.propcsv.validate(defs, rules_csv, doc))
    assert.truthy(set["missing_rule:error"])
    set = rules(psdl.propcsv.validate(defs, rules_csv .. "n02left,lamp,tree\r\n", doc))
    assert.truthy(set["missing_propdef:error"])
    set = rules(psdl.propcsv.validate("name,start\r\nx,abc\r\n", "rulename\r\n"))
    assert.truthy(set["columns:error"])
    assert.truthy(set["no_files:error"])
    set = rules(psdl.propcsv.validate("name,start,distance,maxUse,minLerp,maxLerp,file1\r\nx,1,0,1,0.8,0.2,m\r\n",
      rules_csv))
    assert.truthy(set["distance:error"])
    assert.truthy(set["lerp:warning"])
    assert.truthy(set["missing_propdef:error"])
    set = rules(psdl.propcsv.validate(defs .. "tree,1,10,1,0,0, sp_tree_f\r\n", rules_csv))
    assert.truthy(set["spaces:warning"])
    local long = psdl.propcsv.parse("a\n" .. string.rep("x", 300) .. "\n")
    assert.are.same({ 2 }, long.long_lines)
    assert.are.equal(2, #long.rows) -- 255 + 45 bytes
  end)
end)

describe("companion robustness", function()
  it("mutated files: decode either fails cleanly or round-trips, and validate never raises", function()
    local seed = 99
    local function rnd(n)
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    local cjson = require "cjson"
    local ccli = require "psdl.cli.companion"
    for f, bytes in pairs(EXAMPLES) do
      local decoded = 0
      for run = 1, 400 do
        local b = { bytes:byte(1, -1) }
        for _ = 1, 1 + rnd(3) do b[1 + rnd(#b)] = rnd(256) end
        local s = string.char(table.unpack(b))
        local t, msg, code = psdl[f].decode(s)
        if t then
          decoded = decoded + 1
          assert.are.equal(s, psdl[f].encode(t), f .. " run " .. run)
          local ok, vok, problems = pcall(psdl[f].validate, t, fake_psdl(3))
          assert.is_true(ok, tostring(vok))
          assert.is_table(problems)
          if run % 8 == 0 then -- JSON round trip through the CLI form
            local fmt, back = ccli.undump(cjson.decode(ccli.dump(f, t)))
            assert.are.equal(f, fmt)
            assert.are.equal(s, psdl[f].encode(back), f .. " json run " .. run)
          end
        else
          assert.truthy(msg:find("^" .. f .. ": " .. code), msg)
        end
      end
      assert.is_true(decoded > 0, f)
    end
  end)
end)
