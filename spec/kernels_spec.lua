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
