-- The C kernels behind the builder's and the city's fast paths (src/lpsdl_geom.c): point
-- lists checked and flattened in one pass, rings simple with a margin, points kept in C,
-- blocks beside roads at another height, a building's attributes, flat facade layouts, and
-- the pool's `points`. Each is checked against what it replaces.
local core = require "psdl.core"
local psdl = require "psdl"

local sqrt, max, min, cos, sin, pi = math.sqrt, math.max, math.min, math.cos, math.sin, math.pi

describe("psdl.core fast paths", function()
  describe("flatten_points", function()
    it("flattens {x, y, z} points, keeping integers integers, y nil or false as 0", function()
      local flat = core.flatten_points({ { 1, 2, 3 }, { 4.5, nil, 6 }, { 7, false, 8 } })
      assert.same({ 1, 2, 3, 4.5, 0, 6, 7, 0, 8 }, flat)
      assert.equal("integer", math.type(flat[1]))
      assert.equal("float", math.type(flat[4]))
      assert.same({}, core.flatten_points({}))
    end)

    it("names the first point that is not a table of finite float32 numbers", function()
      for _, case in ipairs({
        { { { 1, 2, 3 }, "x" }, 2 },
        { { { 1, 2, 3 }, { 1, "2", 3 } }, 2 },
        { { { 0 / 0, 0, 0 } }, 1 },
        { { { 1, 0, 1 }, { 1, 0, math.huge } }, 2 },
        { { { 1, 0, 1 }, { 1, 0, 1 }, { 4e38, 0, 0 } }, 3 },
        { { { 1, 0 } }, 1 },
      }) do
        local flat, bad = core.flatten_points(case[1])
        assert.is_nil(flat)
        assert.equal(case[2], bad)
      end
    end)
  end)

  describe("polygon_points", function()
    it("gives the flat points, the signed area and the first crossing in one pass", function()
      local sq = { { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 10 }, { 10, 0, 0 } }
      local flat, area, e1 = core.polygon_points(sq)
      assert.same(core.flatten_points(sq), flat)
      assert.equal(core.signed_area(flat), area)
      assert.is_nil(e1)
      local bow = { { 0, 0, 0 }, { 10, 0, 10 }, { 0, 0, 10 }, { 10, 0, 0 } }
      local _, _, c1, c2 = core.polygon_points(bow)
      local s1, s2 = core.self_crossing(core.flatten_points(bow))
      assert.same({ s1, s2 }, { c1, c2 })
      local none, bad = core.polygon_points({ { 0, 0, 0 }, { 1, 0, 0 }, { 1, 0 / 0, 1 } })
      assert.is_nil(none)
      assert.equal(3, bad)
    end)
  end)

  describe("ring_simple", function()
    -- the test psdl.city.blocks made in Lua before (segments meeting within 1 mm)
    local TOUCH = 1e-3
    local plan = require "psdl.plan"
    local meet = plan.segs_meet -- the same test as the kernel, in Lua
    local function simple(pts)
      local n = #pts
      if n < 3 then return false end
      for i = 1, n do
        local p, q = pts[i], pts[i % n + 1]
        if sqrt((q[1] - p[1]) ^ 2 + (q[3] - p[3]) ^ 2) < 1e-6 then return false end
        for j = i + 2, n do
          if not (i == 1 and j == n) then
            local r, s = pts[j], pts[j % n + 1]
            if meet(p[1], p[3], q[1], q[3], r[1], r[3], s[1], s[3]) then return false end
          end
        end
      end
      return true
    end

    it("finds crossings, near touches and zero-length edges", function()
      local function rs(pts) return core.ring_simple(core.flatten_points(pts), TOUCH) end
      assert.is_true(rs({ { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 10 }, { 10, 0, 0 } }))
      assert.is_false(rs({ { 0, 0, 0 }, { 10, 0, 10 }, { 0, 0, 10 }, { 10, 0, 0 } }))
      assert.is_false(rs({ { 0, 0, 0 }, { 0, 0, 10 }, { 5, 0, 0.0005 }, { 10, 0, 10 }, { 10, 0, 0 } }))
      assert.is_false(rs({ { 0, 0, 0 }, { 0, 0, 10 }, { 0, 0, 10 }, { 10, 0, 0 } }))
      assert.is_false(rs({ { 0, 0, 0 }, { 0, 0, 10 } }))
    end)

    it("agrees with the Lua test on random rings, small and large (swept)", function()
      local seed = 12345
      local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
      for trial = 1, 600 do
        local n = 3 + math.floor(rnd() * (trial % 3 == 0 and 70 or 10))
        local pts = {}
        for i = 1, n do
          local a = 2 * pi * i / n
          local r = trial % 2 == 0 and 10 or 5 + rnd() * 20
          local x, z = r * cos(a), r * sin(a)
          if rnd() < 0.03 then x, z = rnd() * 30 - 15, rnd() * 30 - 15 end
          pts[i] = { x, 0, z }
        end
        if trial % 7 == 0 and n > 4 then pts[3] = { pts[1][1] + 0.0005, 0, pts[1][3] } end
        assert.equal(simple(pts), core.ring_simple(core.flatten_points(pts), TOUCH), "trial " .. trial)
      end
    end)
  end)

  describe("points", function()
    it("keeps a polygon in C for first_outside, with the same answers as a flat table", function()
      local room = core.flatten_points({ { 0, 0, 0 }, { 0, 0, 40 }, { 30, 0, 40 }, { 30, 0, 20 }, { 15, 0, 20 },
                                         { 15, 0, 0 } })
      local kept = core.points(room)
      assert.equal(6, #kept)
      for _, fp in ipairs({
        { { 1, 0, 1 }, { 1, 0, 10 }, { 10, 0, 10 }, { 10, 0, 1 } },
        { { 1, 0, 1 }, { 1, 0, 30 }, { 25, 0, 30 }, { 25, 0, 1 } },
        { { 20, 0, 25 }, { 20, 0, 35 }, { 35, 0, 35 } },
      }) do
        local f = core.flatten_points(fp)
        assert.equal(core.first_outside(room, f, true, 0.01), core.first_outside(kept, f, true, 0.01))
        assert.equal(core.first_outside(room, f, false, 0.25), core.first_outside(kept, core.points(f), false, 0.25))
      end
    end)
  end)

  describe("pool points", function()
    it("gives the entries of references as one flat array", function()
      local pool = core.pool(3, true)
      local refs = pool:add_flat({ 1, 2, 3, 4.5, 5, 6, 1, 2, 3 })
      local flat = pool:points({ refs[2], refs[1], refs[3] })
      local a = { pool:get(refs[2]) }
      assert.same({ a[1], a[2], a[3], 1, 2, 3, 1, 2, 3 }, flat)
      assert.has_error(function() pool:points({ 99 }) end)
    end)
  end)

  describe("facades", function()
    it("gives the same layout flat (opts.flat) as in tables", function()
      local pts = core.flatten_points({ { 0, 0, 0 }, { 0, -1, 12 }, { 9, 0, 12 }, { 9, 0, 6 }, { 9, 0, 0 } })
      local o = { bottom = 0, top = 12, floor_height = 3, bay_width = 4, closed = true }
      local segs = core.facades(pts, o)
      o.flat = true
      local flat = core.facades(pts, o)
      assert.equal(6 * #segs, #flat)
      for i, s in ipairs(segs) do
        local q = 6 * (i - 1)
        assert.same({ s.left, s.right, s.u, s.v, s.light }, { flat[q + 1], flat[q + 2], flat[q + 3], flat[q + 4], flat[q + 5] })
        assert.equal(s.run, flat[q + 6] & 1 ~= 0)
        assert.equal(s.sloped, flat[q + 6] & 2 ~= 0)
      end
    end)
  end)

  describe("building", function()
    -- a building made one attribute call after another, as Builder:building did before
    local function by_calls(b, room, outline, o)
      local flat = core.flatten_points(outline)
      if core.signed_area(flat) > 0 then
        local r = {}
        for i = #outline, 1, -1 do r[#r + 1] = outline[i] end
        outline = r
        flat = core.flatten_points(outline)
      end
      local base = -math.huge
      for i = 2, #flat, 3 do base = max(base, flat[i]) end
      local fh, gh = o.floor_height, o.ground_height or 0
      local top = base + gh + o.floors * fh
      local segs = core.facades(flat, { bottom = base, top = top, floor_height = fh, bay_width = 4, closed = true })
      local vup = max(1, math.floor((top - base - gh) / fh + 0.5))
      local i = 1
      while i <= #segs do
        local j = i
        while j < #segs and not segs[j + 1].run do j = j + 1 end
        room:facade_bound(outline[segs[i].left], outline[segs[j].right], { top = top, light = segs[i].light })
        for k = i, j do
          local s = segs[k]
          local a, c = outline[s.left], outline[s.right]
          if s.sloped then room:sliver(a, c, { top = base }) end
          if gh > 0 then
            room:facade(a, c, { bottom = base, top = base + gh, u = s.u, v = max(1, math.floor(gh / fh + 0.5)),
                                texture = b.style.facades.ground[1] })
          end
          room:facade(a, c, { bottom = base + gh, top = top, u = s.u, v = vup })
        end
        i = j + 1
      end
      room:roof(outline, top)
    end

    it("makes the bytes the attribute calls made, on sloping ground, with a ground floor", function()
      local docs = {}
      for pass = 1, 2 do
        local b = psdl.builder.new{ style = "london" }
        local blk = b:block{ outline = { { -5, 0, -5 }, { -5, 0, 40 }, { 40, 0, 40 }, { 40, 0, -5 } } }
        for _, o in ipairs({
          { outline = { { 0, 0.4, 0 }, { 0, 0, 12 }, { 9, 0, 12 }, { 9, 0, 6 }, { 18, 0.2, 6 }, { 18, 0, 0 } },
            floors = 3, floor_height = 3 },
          { outline = { { 22, 0, 20 }, { 34, 0, 20 }, { 34, 0, 30 }, { 22, 0, 30 } }, floors = 4, floor_height = 3.5,
            ground_height = 3.5 },
        }) do
          if pass == 1 then
            b:building(blk, o)
          else
            by_calls(b, blk, o.outline, o)
          end
        end
        docs[pass] = psdl.encode((b:finish()))
      end
      assert.equal(docs[2], docs[1])
    end)
  end)

  describe("height_mismatches", function()
    it("reports a block edge along a road edge at another height, one record per pair of rooms", function()
      local pool = core.pool(3, true)
      local function refs(list) return pool:add_flat(core.flatten_points(list)) end
      -- a road room (kind 2) and a block beside it, 0.15 m lower along x = 10
      local road = refs({ { 0, 0.15, 0 }, { 0, 0.15, 20 }, { 10, 0.15, 20 }, { 10, 0.15, 0 } })
      local low = refs({ { 10, 0, 0 }, { 10, 0, 20 }, { 20, 0, 20 }, { 20, 0, 0 } })
      local far = refs({ { 10, 3, 0 }, { 10, 3, 20 }, { 20, 3, 20 }, { 20, 3, 0 } })
      local function linked(list)
        local out = {}
        for i, v in ipairs(list) do out[i] = { vertex = v, neighbour = 0 } end
        return out
      end
      local found = core.height_mismatches(pool, { linked(road), linked(low), linked(far) }, { 2, 1, 1 }, 1e-3, 1.0)
      assert.equal(4, #found)
      assert.same({ 2, 1, 1 }, { found[1], found[2], found[3] })
      assert.near(-0.15, found[4], 1e-6)
      assert.same({}, core.height_mismatches(pool, { linked(road), linked(low) }, { 0, 1 }, 1e-3, 1.0))
    end)
  end)
end)

-- Streets and intersections: one C call per node and per street (core.junction_room,
-- core.street_rooms) against the Lua glue they replace (the kernel's points pooled, fans cut
-- over the surface, sections pooled and cut into rooms in Lua), and hostile arguments.
describe("street and intersection glue", function()
  local ROAD = { kind = "road", left = 6, right = 6, sidewalk_left = 3, sidewalk_right = 3 }
  local DIVIDED = { kind = "divided", left = 7, right = 7, median = 2, sidewalk_left = 3, sidewalk_right = 3 }
  local function arms_of(dirs, profile)
    local arms = {}
    for i, d in ipairs(dirs) do arms[i] = { dir = d, profile = profile, crosswalk = 3 } end
    return arms
  end

  -- what Builder:intersection did before: kernel, pool every point, fans of the surface
  local function old_junction(pool, center, arms, opts)
    local j = core.junction(center, arms, opts)
    local refs = pool:add_flat(j.points)
    local sflat = {}
    for i, v in ipairs(j.surface) do
      for k = 1, 3 do sflat[3 * (i - 1) + k] = j.points[3 * (v - 1) + k] end
    end
    local idx, xpts = core.fans(sflat)
    local xrefs = #xpts > 0 and pool:add_flat(xpts) or {}
    local fans = {}
    for i, f in ipairs(idx) do
      fans[i] = {}
      for k, v in ipairs(f) do fans[i][k] = v <= #j.surface and refs[j.surface[v]] or xrefs[v - #j.surface] end
    end
    local function R(list) local o = {} for i, v in ipairs(list) do o[i] = refs[v] end return o end
    local strips = {}
    for i, s in ipairs(j.strips) do strips[i] = { pairs = R(s.pairs), start_cap = s.start_cap, end_cap = s.end_cap } end
    local cws = {}
    for i, c in ipairs(j.crosswalks) do cws[i] = R(c) end
    local sections = {}
    for i, sec in ipairs(j.sections) do
      sections[i] = {}
      for k, v in ipairs(sec) do sections[i][k] = { j.points[3 * v - 2], j.points[3 * v - 1], j.points[3 * v] } end
    end
    return { outline = R(j.outline), fans = fans, strips = strips, crosswalks = cws, sections = sections,
             distance = j.distance }
  end

  -- A crossroads, a T of a divided road, a bend and a dead end.
  local function junction_cases()
    return {
      arms_of({ { 1, 0 }, { 0, 1 }, { -1, 0 }, { 0, -1 } }, ROAD),
      arms_of({ { 1, 0 }, { -1, 0 }, { 0.3, 1 } }, DIVIDED),
      arms_of({ { 1, 0 }, { cos(2), sin(2) } }, ROAD),
      arms_of({ { 0, 1 } }, ROAD),
    }
  end

  it("junction_room pools and fans an intersection as the Lua glue did", function()
    local cases = junction_cases()
    for _, arms in ipairs(cases) do
      for _, snap in ipairs({ 0, 0.25 }) do
        local p1, p2 = core.pool(3, true), core.pool(3, true)
        local center = { 12.5, 3, -7.25 }
        local want
        if snap > 0 then
          -- snapping applies to what is pooled: compare against a snapped pool of the same points
          local got = core.junction_room(p2, center, arms, { radius = 5, snap = snap })
          for i = 2, p2:count() do
            for _, v in ipairs({ p2:get(i) }) do assert.equal(0, v % snap) end
          end
          assert.is_true(#got.fans > 0)
        else
          want = old_junction(p1, center, arms, { radius = 5 })
          local got = core.junction_room(p2, center, arms, { radius = 5 })
          assert.same(want, got)
          assert.same(p1:flat(), p2:flat())
        end
      end
    end
  end)

  it("junction_room's flat records are its fans, strips with their caps and crosswalks", function()
    local cases = junction_cases()
    for _, arms in ipairs(cases) do
      local p1, p2 = core.pool(3, true), core.pool(3, true)
      local t = core.junction_room(p1, { 1, 2, 3 }, arms, { radius = 5 })
      local f = core.junction_room(p2, { 1, 2, 3 }, arms, { radius = 5, records = true })
      local want = {}
      local function put(ty, cap, refs)
        want[#want + 1], want[#want + 2], want[#want + 3] = ty, cap, #refs
        for _, r in ipairs(refs) do want[#want + 1] = r end
      end
      for _, fan in ipairs(t.fans) do put(5, 0, fan) end
      for _, st in ipairs(t.strips) do
        local r, n = st.pairs, #st.pairs
        if st.start_cap then put(1, 1, { r[1], r[2] }) end
        put(1, 0, r)
        if st.end_cap then put(1, 2, { r[n - 1], r[n] }) end
      end
      for _, cw in ipairs(t.crosswalks) do put(4, 0, cw) end
      local words = {}
      for i = 1, #f.records, 4 do words[#words + 1] = string.unpack("=I4", f.records, i) end
      assert.same(want, words)
      assert.equal(#t.fans, f.fans)
      assert.same(t.outline, f.outline)
      assert.same(t.sections, f.sections)
      assert.same(t.distance, f.distance)
      assert.is_nil(f.strips)
      assert.same(p1:flat(), p2:flat())
    end
  end)

  -- psdl.city's intersections: arms flat, records straight into the store
  local function flat_arms(arms)
    local f = {}
    for _, a in ipairs(arms) do
      f[#f + 1], f[#f + 2], f[#f + 3] = a.dir[1], a.dir[2], a.profile
      f[#f + 1], f[#f + 2] = a.crosswalk or 0, a.min_distance or 0
    end
    return f
  end

  it("junction_store pushes what junction_room's records push, with flat sections", function()
    local cases = {
      arms_of({ { 1, 0 }, { 0, 1 }, { -1, 0 }, { 0, -1 } }, ROAD),
      arms_of({ { 1, 0 }, { -1, 0 }, { 0.3, 1 } }, DIVIDED),
      arms_of({ { 1, 0 }, { cos(2), sin(2) } }, ROAD),
      arms_of({ { 0, 1 } }, { kind = "walkway", left = 1.5, right = 1.5 }),
    }
    cases[3][1].min_distance = 5
    for _, snap in ipairs({ 0, 0.25 }) do
      for _, arms in ipairs(cases) do
        local p1, p2, s1, s2 = core.pool(3, true), core.pool(3, true), core.store(), core.store()
        local r1, r2 = s1:room(), s2:room()
        local f = core.junction_room(p1, { 1, 2, 3 }, arms, { radius = 4, arc_step = 10, snap = snap, records = true })
        s1:push_flat(r1, 7, f.records)
        local outline, distance, sections, fans = core.junction_store(p2, s2, r2, 7, 1, 2, 3, flat_arms(arms), 4, 10, snap)
        assert.same(p1:flat(), p2:flat())
        assert.same(s1:ops(r1), s2:ops(r2))
        assert.same(f.outline, outline)
        assert.same(f.distance, distance)
        assert.equal(f.fans, fans)
        for i, row in ipairs(f.sections) do
          local flat = {}
          for _, pt in ipairs(row) do flat[#flat + 1], flat[#flat + 2], flat[#flat + 3] = pt[1], pt[2], pt[3] end
          assert.same(flat, sections[i])
        end
      end
    end
  end)

  it("junction_store refuses hostile arguments, naming them, and pushes nothing", function()
    local pool, store = core.pool(3, true), core.store()
    local room = store:room()
    local arms = flat_arms(arms_of({ { 1, 0 }, { 0, 1 }, { -1, 0 } }, ROAD))
    local function call(...)
      local args = table.pack(pool, store, room, 1, 0, 0, 0, arms, 5, 0, 0)
      for i = 1, select("#", ...), 2 do
        local k, v = select(i, ...)
        args[k] = v
      end
      return pcall(core.junction_store, table.unpack(args, 1, 11))
    end
    assert.is_true((call()))
    local n0, r0 = pool:count(), store:count(room)
    local bad = {
      { { 1, {} }, "Pool" }, { { 1, core.pool(1, false) }, "dimension 3" }, { { 2, pool }, "Store" },
      { { 3, 0 }, "a room of the store" }, { { 3, 99 }, "a room of the store" }, { { 3, "x" }, "number expected" },
      { { 4, 0 }, "texture group" }, { { 5, 0 / 0 }, "x: a finite number" }, { { 6, math.huge }, "y: a finite number" },
      { { 7, "z" }, "number expected" }, { { 8, {} }, "5 values an arm" }, { { 8, { 1, 0, ROAD, 0 } }, "5 values an arm" },
      { { 8, { 1, 0, "road", 0, 0 } }, "a profile table" }, { { 8, { 1, true, ROAD, 0, 0 } }, "arms%[2%]: number expected" },
      { { 8, { 1, {}, ROAD, 0, 0 } }, "arms%[2%]: number expected" },
      { { 8, { 1, 0, { kind = "lane", left = 1 }, 0, 0 } }, "invalid option 'lane'" },
      { { 8, { 1, 0, ROAD, 0, 0, 1, 0.001, ROAD, 0, 0 } }, "arms cannot be joined" },
      { { 8, { 0 / 0, 0, ROAD, 0, 0, 0, 1, ROAD, 0, 0 } }, "arms cannot be joined" },
      { { 9, 0 / 0 }, "radius: a finite number" }, { { 10, -math.huge }, "arc_step: a finite number" },
      { { 11, -1 }, "snap" }, { { 11, 0 / 0 }, "snap" },
    }
    for _, b in ipairs(bad) do
      local ok, msg = call(table.unpack(b[1]))
      assert.is_false(ok, b[2])
      assert.is_string(msg)
      assert.truthy(msg:find(b[2]), msg .. " (wanted " .. b[2] .. ")")
    end
    assert.equal(r0, store:count(room)) -- (a refused call pushes no record)
    assert.equal(n0, pool:count())
    -- over 4,096 arms
    local many = {}
    for i = 1, 4097 do
      local a = 2 * pi * i / 4097
      for _, v in ipairs({ cos(a), sin(a), ROAD, 0, 0 }) do many[#many + 1] = v end
    end
    local ok, msg = call(8, many)
    assert.is_false(ok)
    assert.truthy(msg:find("at most 4096 arms"))
  end)

  it("street_rooms takes end sections as flat rows as it takes rows of points", function()
    local center = core.spline({ 0, 0, 0, 40, 2, 30, 90, 1, 20 }, { spacing = 5, half_width = 9 })
    for _, profile in ipairs({ ROAD, DIVIDED, { kind = "walkway", left = 1.5, right = 1.5 } }) do
      local stride = ({ road = 4, walkway = 2, divided = 6 })[profile.kind]
      local row, flat = {}, {}
      for c = 1, stride do
        row[c] = { (c - 1) * 2 - 3, 0.5, -1 }
        flat[#flat + 1], flat[#flat + 2], flat[#flat + 3] = (c - 1) * 2 - 3, 0.5, -1
      end
      local p1, p2 = core.pool(3, true), core.pool(3, true)
      local a = core.street_rooms(p1, center, profile, { start_section = row, end_section = row, flat = true })
      local b = core.street_rooms(p2, center, profile, { start_section = flat, end_section = flat, flat = true })
      assert.same(a, b)
      local bad = { table.unpack(flat) }
      bad[2] = 0 / 0
      assert.has_error(function() core.street_rooms(p2, center, profile, { start_section = bad }) end,
        "option 'start_section': point 1: finite numbers expected")
      bad[2] = "x"
      assert.has_error(function() core.street_rooms(p2, center, profile, { end_section = bad }) end,
        "option 'end_section': point 1: finite numbers expected")
      assert.has_error(function() core.street_rooms(p2, center, profile, { end_section = { 1, 2 } }) end)
    end
  end)

  -- psdl.city's usual run in one call, against the general way: core.spline, the rooms'
  -- split of psdl.city.road, core.street_rooms and the records pushed one room at a time
  local function general_run(pool, store, ctrl, profile, sd, ed, ss, es, p)
    local c = core.spline(ctrl, { spacing = p[1], max_angle = p[2], half_width = p[3], start_dir = sd, end_dir = ed })
    local n, L = #c // 3, 0
    for i = 2, n do L = L + sqrt((c[3 * i - 2] - c[3 * i - 5]) ^ 2 + (c[3 * i] - c[3 * i - 3]) ^ 2) end
    local nrooms = max(1, math.floor(L / p[4] + 0.5))
    local split = min(120, max(2, math.ceil((n - 1) / nrooms) + 1))
    local res = core.street_rooms(pool, c, profile, { start_dir = sd, end_dir = ed, start_section = ss,
      end_section = es, split = split, snap = p[5], min_length = 1e-6, records = profile.kind ~= "divided" })
    local first, outlines = nil, {}
    local count = res.records and #res.records or #res.rooms
    for k = 1, count do
      local room = store:room()
      first = first or room
      if res.records then
        store:push_flat(room, p[6], res.records[k])
        outlines[k] = res.outlines[k]
      else
        store:push(room, { type = "divided_road", group = p[6], divider_group = p[7], divider_type = p[8],
                           cap_start = k == 1 and p[11] & 1 ~= 0, cap_end = k == count and p[11] & 2 ~= 0,
                           divider_value = p[9], refs = res.rooms[k].refs })
        outlines[k] = res.rooms[k].outline
      end
    end
    return first, count, outlines
  end

  it("run_street builds a run as spline, street_rooms and the pushes do", function()
    local ctrl = { 0, 1, 0, 40, 2, 30, 90, 1, 20, 160, 4, 90, 260, 3, 100 }
    local walk = { kind = "walkway", left = 1.5, right = 1.5 }
    for _, profile in ipairs({ ROAD, DIVIDED, walk }) do
      local stride = ({ road = 4, walkway = 2, divided = 6 })[profile.kind]
      local row = {}
      for c = 1, stride do row[#row + 1], row[#row + 2], row[#row + 3] = (c - 1) * 2 - 3, 1, -1 end
      for _, case in ipairs({ { 100, 0, nil }, { 40, 0.5, { 0.8, 0.6 } }, { 1000, 0, { 1, 0 } } }) do
        -- (an integer divider value and type, a float one: kept as they were given)
        for _, dv in ipairs({ { 2, 0.15, 1 }, { 1, 5, 9 } }) do
          local p = { 20, 0, 9, case[1], case[2], 3, 4, dv[1], dv[2], dv[3], 3 }
          local p1, p2, s1, s2 = core.pool(3, true), core.pool(3, true), core.store(), core.store()
          local w1, n1, o1 = general_run(p1, s1, ctrl, profile, case[3], { 1, 0.1 }, row, row, p)
          local w2, n2, o2 = core.run_street(p2, s2, ctrl, profile, case[3], { 1, 0.1 }, row, row, p)
          assert.equal(w1, w2)
          assert.equal(n1, n2)
          assert.same(o1, o2)
          assert.same(p1:flat(), p2:flat())
          -- the end row given outward (as an intersection gives it), read in reverse: the same run
          local back = {}
          for c = stride, 1, -1 do
            local q = 3 * c
            back[#back + 1], back[#back + 2], back[#back + 3] = row[q - 2], row[q - 1], row[q]
          end
          local p3, s3 = core.pool(3, true), core.store()
          local w3, n3, o3 = core.run_street(p3, s3, ctrl, profile, case[3], { 1, 0.1 }, row, back, p, true)
          assert.same({ w2, n2, o2 }, { w3, n3, o3 })
          assert.same(p2:flat(), p3:flat())
          for k = 0, n2 - 1 do assert.same(s2:ops(w2 + k), s3:ops(w3 + k)) end
          for k = 0, n1 - 1 do
            local a, b = s1:ops(w1 + k), s2:ops(w2 + k)
            assert.same(a, b)
            -- (integers stay integers: what Builder:attributes reads back)
            for f, v in pairs(a[1]) do assert.equal(math.type(v), math.type(b[1][f]), f) end
          end
        end
      end
    end
  end)

  it("run_street leaves what it cannot build to the general way, and refuses hostile arguments", function()
    local pool, store = core.pool(3, true), core.store()
    local p = { 20, 0, 9, 100, 0, 1, 0, 0, 0, 0, 0 }
    local line = { 0, 0, 0, 200, 0, 0 }
    local function unchanged(...)
      local n0, r0 = pool:count(), store:rooms()
      assert.equal(0, select("#", core.run_street(pool, store, ...)))
      assert.equal(n0, pool:count())
      assert.equal(r0, store:rooms())
    end
    unchanged({ 0, 0, 0, 0 / 0, 0, 0 }, ROAD, nil, nil, nil, nil, p) -- not a finite control point
    unchanged({ 0, 0, 0, "x", 0, 0 }, ROAD, nil, nil, nil, nil, p)
    unchanged({ 0, 0, 0, 1 }, ROAD, nil, nil, nil, nil, p) -- not x, y, z
    unchanged({ 0, 0, 0, 0, 5, 0 }, ROAD, nil, nil, nil, nil, p) -- no plan length
    unchanged({ 0, 0, 0, 70000, 0, 0 }, ROAD, nil, nil, nil, nil, p) -- beyond 65,536 m
    unchanged(line, ROAD, { 0, 0 }, nil, nil, nil, p) -- a zero direction
    unchanged(line, ROAD, { 1, 0 / 0 }, nil, nil, nil, p)
    unchanged(line, ROAD, nil, nil, { 1, 2, 3 }, nil, p) -- a short end row
    unchanged({ 0, 0, 0, 30, 0, 0, 30, 0, 3, 0, 0, 3 }, ROAD, nil, nil, nil, nil, p) -- clamped on a hairpin
    local long = { 5, 0, 9, 1, 0, 1, 0, 0, 0, 0, 0 }
    unchanged({ 0, 0, 0, 3000, 0, 0 }, ROAD, nil, nil, nil, nil, long) -- over 255 rooms
    assert.equal(1, (core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, p)))
    local bad = {
      { function() core.run_street({}, store, line, ROAD, nil, nil, nil, nil, p) end, "Pool" },
      { function() core.run_street(core.pool(1, false), store, line, ROAD, nil, nil, nil, nil, p) end, "dimension 3" },
      { function() core.run_street(pool, pool, line, ROAD, nil, nil, nil, nil, p) end, "Store" },
      { function() core.run_street(pool, store, 5, ROAD, nil, nil, nil, nil, p) end, "table expected" },
      { function() core.run_street(pool, store, line, "road", nil, nil, nil, nil, p) end, "table expected" },
      { function() core.run_street(pool, store, line, { kind = "sidewalk", left = 1 }, nil, nil, nil, nil, p) end,
        "road, walkway or divided" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, nil) end, "table expected" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 1, 2 }) end, "p%[3%]: number" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 20, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0 }) end,
        "room_length" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 20, 0, 9, 100, -1, 1, 0, 0, 0, 0, 0 }) end,
        "snap" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 20, 0, 9, 100, 0, 0, 0, 0, 0, 0, 0 }) end,
        "texture group" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 20, 0, 9, 100, 0, 1.5, 0, 0, 0, 0, 0 }) end,
        "texture group" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 20, 0, 9, 100, 0, 1, 0, 0, 0, 0, 4 }) end,
        "caps" },
      { function() core.run_street(pool, store, line, ROAD, nil, nil, nil, nil, { 20, 0 / 0, 9, 100, 0, 1, 0, 0, 0, 0, 0 }) end,
        "p%[2%]: a finite number" },
    }
    for _, b in ipairs(bad) do
      local ok, msg = pcall(b[1])
      assert.is_false(ok, b[2])
      assert.truthy(tostring(msg):find(b[2]), tostring(msg) .. " (wanted " .. b[2] .. ")")
    end
  end)

  it("flat_check finds the first number outside +-65,536 m (PSDL_MAX_COORDINATE)", function()
    assert.is_nil(core.flat_check({ 1, 2.5, -65536 }))
    assert.equal(2, core.flat_check({ 1, 0 / 0, 3 }))
    assert.equal(3, core.flat_check({ 1, 2, 65536.001 }))
    assert.equal(3, core.flat_check({ 1, 2, 1e39 }))
    assert.equal(1, core.flat_check({ "1" }))
    assert.is_nil(core.flat_check({}))
    assert.has_error(function() core.flat_check(5) end)
  end)

  -- what Builder:street did before: sections, end rows, pool, cut into rooms, outlines
  local function old_street(pool, center, profile, o)
    local sf, clamped = core.sections(center, profile, o.start_dir, o.end_dir)
    local stride = ({ road = 4, walkway = 2, divided = 6 })[profile.kind]
    local nsec = #sf // (3 * stride)
    local function put(k, row)
      for c = 1, stride do
        local p, i = row[c], 3 * ((k - 1) * stride + c - 1)
        sf[i + 1], sf[i + 2], sf[i + 3] = p[1], p[2] or 0, p[3]
      end
    end
    if o.start_section then put(1, o.start_section) end
    if o.end_section then put(nsec, o.end_section) end
    local srefs = pool:add_flat(sf)
    local split = o.split or 64
    local nrooms = (nsec - 2) // (split - 1) + 1
    local rooms, first = {}, 1
    while first < nsec do
      local last = min(nsec, first + (nsec - first + (nrooms - #rooms) - 1) // (nrooms - #rooms))
      local refs = {}
      for i = (first - 1) * stride + 1, last * stride do refs[#refs + 1] = srefs[i] end
      local ns, out = #refs // stride, {}
      local function add(v) if out[#out] ~= v then out[#out + 1] = v end end
      for c = 1, stride do add(refs[c]) end
      for k = 2, ns do add(refs[k * stride]) end
      for c = stride - 1, 1, -1 do add(refs[(ns - 1) * stride + c]) end
      for k = ns - 1, 2, -1 do add(refs[(k - 1) * stride + 1]) end
      while #out > 1 and out[#out] == out[1] do out[#out] = nil end
      rooms[#rooms + 1] = { refs = refs, outline = out }
      first = last
    end
    return { clamped = clamped, sections = nsec, stride = stride, rooms = rooms, flat = sf, refs = srefs }
  end

  it("street_rooms cuts, pools and outlines a street as the Lua glue did", function()
    local center = core.spline({ 0, 0, 0, 40, 2, 30, 90, 1, 20, 160, 4, 90 }, { spacing = 5, half_width = 9 })
    local walk = { kind = "walkway", left = 1.5, right = 1.5 }
    for _, profile in ipairs({ ROAD, DIVIDED, walk }) do
      for _, split in ipairs({ 2, 3, 7, 64 }) do
        local stride = ({ road = 4, walkway = 2, divided = 6 })[profile.kind]
        local row = {}
        for c = 1, stride do row[c] = { (c - 1) * 2 - 3, 0.5, -1 } end
        local o = { start_dir = { 0.8, 0.6 }, end_section = row, split = split }
        local p1, p2 = core.pool(3, true), core.pool(3, true)
        local want = old_street(p1, center, profile, o)
        o.flat = true
        local got = core.street_rooms(p2, center, profile, o)
        assert.same(want, got)
        assert.same(p1:flat(), p2:flat())
        -- a list of points gives what its flat array gives
        local pts = {}
        for i = 1, #center, 3 do pts[#pts + 1] = { center[i], center[i + 1], center[i + 2] } end
        assert.same(got, core.street_rooms(p2, pts, profile, o))
        -- opts.records: a road's or walkway's rooms as record strings (type, 0, count, refs)
        -- and outlines; a divided road's as rooms
        o.flat, o.records = nil, true
        local rec = core.street_rooms(p2, center, profile, o)
        if profile.kind == "divided" then
          assert.same(got.rooms, rec.rooms)
          assert.is_nil(rec.records)
        else
          assert.equal(#got.rooms, #rec.records)
          for k, room in ipairs(got.rooms) do
            local words = {}
            for i = 1, #rec.records[k], 4 do words[#words + 1] = string.unpack("=I4", rec.records[k], i) end
            local want_words = { profile.kind == "walkway" and 2 or 0, 0, #room.refs }
            for _, r in ipairs(room.refs) do want_words[#want_words + 1] = r end
            assert.same(want_words, words)
            assert.same(room.outline, rec.outlines[k])
          end
          assert.is_nil(rec.rooms)
        end
        o.records = nil
      end
    end
    local pool = core.pool(3, true)
    assert.is_false(core.street_rooms(pool, { { 1, 0, 1 }, { 1, 5, 1 } }, ROAD, { min_length = 1e-6 }))
    assert.equal(1, pool:count()) -- nothing pooled
    -- a bad end row raises before anything is pooled, and the calls after it (which share a
    -- block of memory kept between calls) give what they gave before
    local p3, p4 = core.pool(3, true), core.pool(3, true)
    local want = core.street_rooms(p3, center, ROAD, { split = 3 })
    local ok, err = pcall(core.street_rooms, p4, center, ROAD, { end_section = { { 0, 0, 0 } } })
    assert.is_false(ok)
    assert.matches("option 'end_section': a row of 4 points expected", err, 1, true)
    assert.equal(1, p4:count())
    assert.same(want, core.street_rooms(p4, center, ROAD, { split = 3 }))
    assert.same(core.spline({ 0, 0, 0, 40, 2, 30, 90, 1, 20, 160, 4, 90 }, { spacing = 5, half_width = 9 }), center)
  end)

  it("plan_outline reads an outline in plan with repeats left out and its box", function()
    local pool = core.pool(3, true)
    local refs = pool:add_flat({ 0, 0, 0, 10, 1, 0, 10, 2, 0, 10, 0, 5, 0, 0, 5 })
    local poly = core.plan_outline(pool, refs)
    assert.same({ { 0, 0 }, { 10, 0 }, { 10, 5 }, { 0, 5 } }, { poly[1], poly[2], poly[3], poly[4] })
    assert.equal(4, #poly)
    assert.same({ 0, 0, 10, 5 }, { poly.x0, poly.z0, poly.x1, poly.z1 })
  end)

  it("refuses hostile arguments with an error naming them, never a crash", function()
    local pool = core.pool(3, true)
    local arms = arms_of({ { 1, 0 }, { 0, 1 } }, ROAD)
    local function fails(pattern, f, ...)
      local ok, err = pcall(f, ...)
      assert.is_false(ok)
      assert.matches(pattern, tostring(err))
    end
    fails("psdl.Pool expected", core.junction_room, {}, { 0, 0, 0 }, arms)
    fails("dimension 3", core.junction_room, core.pool(1), { 0, 0, 0 }, arms)
    fails("center", core.junction_room, pool, { 0, "x", 0 }, arms)
    fails("at least one arm", core.junction_room, pool, { 0, 0, 0 }, {})
    fails("arms%[1%]: table expected", core.junction_room, pool, { 0, 0, 0 }, { 5 })
    fails("arms cannot be joined", core.junction_room, pool, { 0, 0, 0 / 0 }, arms)
    fails("arms cannot be joined", core.junction_room, pool, { 0, 0, 0 }, arms_of({ { 1, 0 }, { 1, 1e-9 } }, ROAD))
    fails("snap", core.junction_room, pool, { 0, 0, 0 }, arms, { snap = -1 })
    fails("snap", core.junction_room, pool, { 0, 0, 0 }, arms, { snap = math.huge })
    local many = {}
    for i = 1, 5000 do many[i] = { dir = { cos(i), sin(i) }, profile = ROAD } end
    fails("at most 4096 arms", core.junction_room, pool, { 0, 0, 0 }, many)
    local line = { 0, 0, 0, 0, 0, 50 }
    fails("psdl.Pool expected", core.street_rooms, nil, line, ROAD)
    fails("2 or more points", core.street_rooms, pool, { 0, 0, 0 }, ROAD)
    fails("finite", core.street_rooms, pool, { 0, 0, 0, 0, 0 / 0, 50 }, ROAD)
    fails("center%[2%]%[3%]: number expected", core.street_rooms, pool, { { 0, 0, 0 }, { 0, 0, "z" } }, ROAD)
    fails("center%[2%]: {x, y, z} expected", core.street_rooms, pool, { { 0, 0, 0 }, 7 }, ROAD)
    fails("kind", core.street_rooms, pool, line, { kind = "sidewalk", left = 1, right = 1 })
    fails("invalid option 'lane'", core.street_rooms, pool, line, { kind = "lane", left = 1 })
    fails("split", core.street_rooms, pool, line, ROAD, { split = 1 })
    fails("split", core.street_rooms, pool, line, ROAD, { split = 2.5 })
    fails("split", core.street_rooms, pool, line, ROAD, { split = 1e300 })
    fails("start_section", core.street_rooms, pool, line, ROAD, { start_section = { { 0, 0, 0 } } })
    fails("start_section", core.street_rooms, pool, line, ROAD,
      { start_section = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0 / 0, 0 } } })
    fails("end_dir", core.street_rooms, pool, line, ROAD, { end_dir = "north" })
    fails("refs%[2%]: integer", core.plan_outline, pool, { 1, 1e9 })
    local closed = core.pool(3, true)
    closed:close()
    fails("closed", core.street_rooms, closed, line, ROAD)
    fails("closed", core.junction_room, closed, { 0, 0, 0 }, arms)
    fails("closed", core.plan_outline, closed, {})
  end)

  it("keeps Builder:intersection's and Builder:street's info, made when asked for", function()
    local b = psdl.builder.new()
    local _, x = b:intersection{ center = { 0, 0, 0 }, arms = arms_of({ { 1, 0 }, { 0, 1 }, { -1, 0 } }, ROAD) }
    local raw = core.junction({ 0, 0, 0 }, arms_of({ { 1, 0 }, { 0, 1 }, { -1, 0 } }, ROAD), { radius = 5 })
    assert.same(raw, x.junction)
    assert.equal(#raw.outline, #x.outline)
    assert.same({ raw.points[3 * raw.outline[1] - 2], raw.points[3 * raw.outline[1] - 1], raw.points[3 * raw.outline[1]] },
      x.outline[1])
    local rooms, info = b:street{ from = { x, 1 }, path = { { 60, 0, 10 }, { 120, 0, 0 } }, profile = ROAD, split = 5 }
    local after = b.vpool:count()
    assert.equal(info.sections, #info.left) -- reading the info pools nothing new
    assert.equal(info.sections * info.stride, #info.refs)
    assert.equal(info.sections * info.stride * 3, #info.flat)
    assert.same(info.first, x.sections[1])
    assert.equal(after, b.vpool:count())
    assert.is_true(#rooms >= 2)
    assert.same(rooms[1].outline[1], info.refs[1])
  end)
end)

describe("core.grid", function()
  it("finds the candidates psdl.plan's Grid finds, in the same order", function()
    local plan = require "psdl.plan"
    local seed = 12345
    local function rnd() -- a small deterministic generator
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    end
    for _, cell in ipairs({ 50, 40, 7.5 }) do
      local lg, cg = plan.grid(cell), core.grid(cell)
      local items = {}
      for id = 1, 400 do
        local x, z = rnd() * 1000 - 500, rnd() * 1000 - 500
        local w, h = rnd() * 120, rnd() * 60
        items[id] = { id = id }
        lg:insert(items[id], x, z, x + w, z + h)
        cg:insert(id, x, z, x + w, z + h)
      end
      for _ = 1, 200 do
        local x, z = rnd() * 1100 - 550, rnd() * 1100 - 550
        local w, h = rnd() * 150, rnd() * 150
        local want = {}
        for i, it in ipairs(lg:collect(x, z, x + w, z + h, {}, {})) do want[i] = it.id end
        assert.same(want, cg:collect(x, z, x + w, z + h))
      end
    end
  end)

  it("refuses bad cells, ids and boxes", function()
    assert.has_error(function() core.grid(0) end)
    assert.has_error(function() core.grid(0 / 0) end)
    local g = core.grid(10)
    assert.has_error(function() g:insert(0, 0, 0, 1, 1) end)
    assert.has_error(function() g:insert(2 ^ 40, 0, 0, 1, 1) end)
    assert.has_error(function() g:insert(1, 0, 0, 1e300, 1) end)
    assert.has_error(function() g:insert(1, 0 / 0, 0, 1, 1) end)
    assert.has_error(function() g:collect(-1e9, -1e9, 1e9, 1e9) end)
    assert.has_error(function() g:insert("x", 0, 0, 1, 1) end)
    g:close()
    assert.has_error(function() g:collect(0, 0, 1, 1) end)
  end)
end)
