-- Geometry kernels through the binding (src/lpsdl_geom.c) and lua/psdl/geom.lua:
-- centre lines, cross-sections, fans, facades, intersections, pools, rooms.
local geom = require "psdl.geom"
local core = require "psdl.core"

local abs, sqrt, cos, sin, pi = math.abs, math.sqrt, math.cos, math.sin, math.pi

-- Plan S (twice the signed area) of a triangle of points.
local function tri_s(a, b, c)
  return (a[1] * b[3] - b[1] * a[3]) + (b[1] * c[3] - c[1] * b[3]) + (c[1] * a[3] - a[1] * c[3])
end

-- Checks fans (lists of points, hub first): retail winding, convex, no degenerate triangle;
-- returns the covered area.
local function check_fans(fans)
  local area = 0
  for fi, f in ipairs(fans) do
    assert(#f >= 3, "fan " .. fi .. " has " .. #f .. " points")
    for i = 2, #f - 1 do
      local s = tri_s(f[1], f[i], f[i + 1])
      assert(s < 0, "fan " .. fi .. " triangle " .. (i - 1) .. " is not in retail winding (S = " .. s .. ")")
      area = area - s / 2
    end
    assert(geom.fan_min_area(f) > 1e-6, "fan " .. fi .. " has a degenerate triangle")
  end
  return area
end

-- Is the polygon (points) convex in retail winding (collinear corners allowed)?
local function convex(poly)
  local n = #poly
  for i = 1, n do
    local a, b, c = poly[i], poly[i % n + 1], poly[(i + 1) % n + 1]
    local cr = (b[1] - a[1]) * (c[3] - b[3]) - (b[3] - a[3]) * (c[1] - b[1])
    if cr > 1e-9 then return false end
  end
  return true
end

local function pts(list)
  local out = {}
  for i, p in ipairs(list) do out[i] = { p[1], p[2] or 0, p[2] and p[3] or p[2] } end
  return out
end

-- Plan polygons {x, z} pairs -> points at height y.
local function poly(xz, y)
  local out = {}
  for i, p in ipairs(xz) do out[i] = { p[1], y or 0, p[2] } end
  return out
end

local L_SHAPE = poly{ {0, 0}, {30, 0}, {30, 10}, {10, 10}, {10, 30}, {0, 30} }
local U_SHAPE = poly{ {0, 0}, {15, 0}, {30, 0}, {30, 20}, {20, 20}, {20, 8}, {10, 8}, {10, 20}, {0, 20},
                      {0, 15}, {0, 10}, {0, 5} }

describe("psdl.geom", function()
  describe("measures", function()
    it("gives the signed area and winding of §4.2 (retail: negative)", function()
      local sq = poly{ {0, 0}, {0, 1}, {1, 1}, {1, 0} }
      assert.near(-1, geom.signed_area(sq), 1e-12)
      assert.equal(-1, geom.winding(sq))
      assert.equal(1, geom.winding(geom.retail({ sq[4], sq[3], sq[2], sq[1] })) * -1)
      assert.equal(-1, geom.winding(geom.retail({ sq[4], sq[3], sq[2], sq[1] })))
      assert.near(1, geom.area(sq), 1e-12)
    end)

    it("measures quad planarity and fan flatness", function()
      assert.near(0, core.quad_deviation({ 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1 }), 1e-12)
      assert.is_true(core.quad_deviation({ 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0.5, 1 }) > 0.2)
      assert.near(0.3, geom.fan_flatness({ {0, 1, 0}, {1, 1, 0}, {1, 1.3, 1} }), 1e-12)
    end)

    it("computes bounds as §1.6 recommends, skipping a dummy", function()
      local b = geom.bounds({ {100, 100, 100}, {-1, 2, -3}, {3, 4, 5} }, 2)
      assert.same({ -1, 2, -3 }, b.min)
      assert.same({ 3, 4, 5 }, b.max)
      assert.same({ 1, 3, 1 }, b.center)
      assert.near(sqrt(21), b.radius, 1e-12)
    end)
  end)

  describe("centre lines", function()
    it("samples a straight line at the spacing", function()
      local line = geom.line({ 0, 1, 0 }, { 0, 1, 23 }, 5)
      assert.equal(6, #line)
      for i = 1, #line - 1 do assert.near(23 / 5, line[i + 1][3] - line[i][3], 1e-9) end
      assert.near(23, geom.length(line), 1e-9)
    end)

    it("passes through every control point and bends in small steps", function()
      local ctrl = { {0, 0, 0}, {30, 0, 10}, {40, 0, 40} }
      local line = geom.spline(ctrl, { spacing = 5, max_angle = 5 })
      local hit = 0
      for _, p in ipairs(line) do
        for _, c in ipairs(ctrl) do
          if p[1] == c[1] and p[3] == c[3] then hit = hit + 1 end
        end
      end
      assert.equal(3, hit)
      for i = 1, #line - 2 do
        local a, b, c = line[i], line[i + 1], line[i + 2]
        local ux, uz, vx, vz = b[1] - a[1], b[3] - a[3], c[1] - b[1], c[3] - b[3]
        local ang = abs(math.atan(ux * vz - uz * vx, ux * vx + uz * vz)) * 180 / pi
        assert.is_true(ang <= 5.5, "chord turn " .. ang)
        assert.is_true(geom.dist2(a, b) <= 5 + 1e-9)
      end
    end)

    it("meets given end tangents", function()
      local line = geom.spline({ {0, 0, 0}, {30, 0, 30} }, { start_dir = {1, 0}, end_dir = {0, 1} })
      local a, b = line[1], line[2]
      assert.is_true(abs(math.atan(b[3] - a[3], b[1] - a[1])) < 0.1)
      local c, d = line[#line - 1], line[#line]
      assert.is_true(abs(math.atan(d[3] - c[3], d[1] - c[1]) - pi / 2) < 0.1)
    end)

    it("reaches the end point with tangents at both ends, chords within the spacing", function()
      local line = geom.spline({ {12, 0, 0}, {68, 0, 0} }, { start_dir = {1, 0}, end_dir = {1, 0} })
      assert.equal(13, #line)
      assert.same({ 68, 0, 0 }, line[#line])
      for i = 1, #line - 1 do assert.near(56 / 12, line[i + 1][1] - line[i][1], 1e-9) end
      local curve = geom.spline({ {0, 0, 0}, {30, 1, 20}, {60, 0, 0} },
                                { start_dir = {1, 1}, end_dir = {1, -1}, spacing = 4 })
      assert.same({ 60, 0, 0 }, curve[#curve])
      for i = 1, #curve - 1 do assert.is_true(geom.dist2(curve[i], curve[i + 1]) <= 4 + 1e-9) end
    end)

    it("offsets to the left of travel and never folds on a tight curve", function()
      local off = geom.offset({ {0, 0, 0}, {0, 0, 10}, {10, 0, 10} }, 2)
      assert.near(2, off[1][1], 1e-12)           -- travelling +Z the left is +X (§4.2)
      assert.near(2, off[2][1], 1e-9)
      assert.near(8, off[2][3], 1e-9)            -- mitred corner, 2 m from both legs
      local arc = {}
      for i = 0, 12 do arc[#arc + 1] = { 3 * cos(pi * i / 12), 0, 3 * sin(pi * i / 12) } end
      local inner, clamped = geom.offset(arc, -5)
      assert.is_true(clamped > 0)
      for i = 1, 12 do
        local cx, cz = arc[i + 1][1] - arc[i][1], arc[i + 1][3] - arc[i][3]
        local ox, oz = inner[i + 1][1] - inner[i][1], inner[i + 1][3] - inner[i][3]
        assert.is_true(cx * ox + cz * oz >= -1e-9, "offset reverses at " .. i)
      end
    end)
  end)

  describe("cross-sections", function()
    local road = { kind = "road", left = 6, right = 6, sidewalk_left = 3, sidewalk_right = 3 }

    it("puts the curb 0.15 m below the sidewalk, left to right of travel", function()
      local rows = geom.sections({ {0, 2, 0}, {0, 2.5, 10}, {0, 3, 20} }, road)
      assert.equal(3, #rows)
      local r = rows[1]
      assert.equal(4, #r)
      assert.near(9, r[1][1], 1e-12); assert.near(6, r[2][1], 1e-12)
      assert.near(-6, r[3][1], 1e-12); assert.near(-9, r[4][1], 1e-12)
      assert.near(0.15, r[1][2] - r[2][2], 1e-12)
      assert.near(0.15, r[4][2] - r[3][2], 1e-12)
      assert.near(2, r[2][2], 1e-12)
      -- §4.2: ((last - first) x (c1 - c0)).y > 0
      local lx, lz = r[4][1] - r[1][1], r[4][3] - r[1][3]
      assert.is_true(lz * 0 - lx * 10 > 0)
    end)

    it("gives planar quads on a straight climb and on a flat curve", function()
      assert.near(0, geom.strip_deviation(geom.sections({ {0, 0, 0}, {0, 1, 10}, {0, 2.5, 20} }, road)), 1e-9)
      local arc = {}
      for i = 0, 9 do arc[#arc + 1] = { 50 * cos(i * 0.08), 0, 50 * sin(i * 0.08) } end
      local rows = geom.sections(arc, road)
      assert.near(0, geom.strip_deviation(rows), 1e-9)
      for _, row in ipairs(rows) do -- every section straight across and level
        for j = 2, 3 do
          local cr = (row[j][1] - row[1][1]) * (row[4][3] - row[1][3]) - (row[j][3] - row[1][3]) * (row[4][1] - row[1][1])
          assert.near(0, cr, 1e-6)
        end
        assert.equal(row[2][2], row[3][2])
      end
    end)

    it("keeps a climbing curve's quads within the planarity tolerance", function()
      local ctrl = {}
      for i = 0, 3 do ctrl[#ctrl + 1] = { 40 * cos(i * pi / 6), i * 8 / 3, 40 * sin(i * pi / 6) } end
      local line = geom.spline(ctrl, { half_width = 10, planar_tol = 0.05 })
      local rows = geom.sections(line, { kind = "walkway", left = 10, right = 10 })
      assert.is_true(geom.strip_deviation(rows) <= 0.06)
    end)

    it("builds divided (6), walkway (2) and sidewalk (2) sections", function()
      local c = { {0, 0, 0}, {0, 0, 10} }
      local d = geom.sections(c, { kind = "divided", left = 7, right = 7, median = 2, sidewalk_left = 4, sidewalk_right = 4 })[1]
      assert.equal(6, #d)
      local xs = {}
      for i, p in ipairs(d) do xs[i] = p[1] end
      assert.same({ 12, 8, 1, -1, -8, -12 }, xs)
      assert.equal(2, #geom.sections(c, { kind = "walkway", left = 2, right = 3 })[1])
      local s = geom.sections(c, { kind = "sidewalk", sidewalk_right = 4 })[1]
      assert.near(-4, s[2][1], 1e-12)
      assert.near(0.15, s[2][2] - s[1][2], 1e-12)
      -- no sidewalk: the outer point is the curb point
      local n = geom.sections(c, { kind = "road", left = 5, right = 5 })[1]
      assert.same(n[1], n[2])
    end)
  end)

  describe("fans", function()
    local function check_polygon(p, holes, max_fans)
      local fans, idx, added = geom.fans(p, holes)
      local want = geom.area(p)
      for _, h in ipairs(holes or {}) do want = want - geom.area(h) end
      assert.near(want, check_fans(fans), 1e-6 * want)
      if max_fans then assert.is_true(#fans <= max_fans, #fans .. " fans") end
      local n = #p
      for _, h in ipairs(holes or {}) do n = n + #h end
      local used = {}
      for _, f in ipairs(idx) do
        for _, k in ipairs(f) do
          assert.is_true(k >= 1 and k <= n + #added, "index " .. k .. " out of range")
          used[k] = true
        end
      end
      for k = 1, n do assert.is_true(used[k], "point " .. k .. " is in no fan") end
      for _, f in ipairs(fans) do
        local ring = {}
        if f[#f] == f[2] then -- hub inside: the rim closes on itself
          for i = 2, #f - 1 do ring[#ring + 1] = f[i] end
        else
          for i = 1, #f do ring[i] = f[i] end
        end
        assert.is_true(convex(ring), "a fan is not convex")
      end
      return fans
    end

    it("makes one fan of a convex polygon, either winding", function()
      local sq = poly{ {0, 0}, {10, 0}, {10, 10}, {0, 10} }
      assert.equal(1, #check_polygon(sq))
      assert.equal(1, #check_polygon({ sq[4], sq[3], sq[2], sq[1] }))
    end)

    it("hubs a fan inside when collinear runs defeat every corner", function()
      local rc = {}
      for i = 0, 3 do rc[#rc + 1] = { i * 10, 1, 0 } end
      for i = 0, 3 do rc[#rc + 1] = { 40, 1, i * 5 } end
      for i = 0, 3 do rc[#rc + 1] = { 40 - i * 10, 1, 20 } end
      for i = 0, 3 do rc[#rc + 1] = { 0, 1, 20 - i * 5 } end
      local fans, _, added = geom.fans(rc)
      assert.equal(1, #fans)
      assert.equal(1, #added)
      assert.same({ 20, 1, 10 }, added[1])
      check_polygon(rc)
      -- without extra points: split into triangles, still no degenerate one
      local nf = geom.fans(rc, nil, { no_extra = true })
      assert.near(800, check_fans(nf), 1e-6)
    end)

    it("decomposes a concave L-shaped block into valid fans", function()
      check_polygon(L_SHAPE, nil, 2)
    end)

    it("decomposes a concave U-shaped block into valid fans", function()
      check_polygon(U_SHAPE, nil, 5)
    end)

    it("covers polygons with holes", function()
      check_polygon(poly{ {0, 0}, {20, 0}, {20, 20}, {0, 20} }, { poly{ {5, 5}, {5, 15}, {15, 15}, {15, 5} } })
      check_polygon(poly{ {0, 0}, {40, 0}, {40, 20}, {0, 20} },
        { poly{ {5, 5}, {15, 5}, {15, 15}, {5, 15} }, poly{ {25, 5}, {35, 5}, {35, 15}, {25, 15} } })
    end)

    it("triangulates with retail winding and non-degenerate triangles", function()
      local tris = geom.triangulate(U_SHAPE)
      assert.equal(#U_SHAPE - 2, #tris)
      local area = 0
      for _, t in ipairs(tris) do
        local s = tri_s(U_SHAPE[t[1]], U_SHAPE[t[2]], U_SHAPE[t[3]])
        assert.is_true(s < -1e-9)
        area = area - s / 2
      end
      assert.near(geom.area(U_SHAPE), area, 1e-9)
    end)
  end)

  describe("facades", function()
    it("gives the light index of walls facing each axis ([INFER] a = i*pi/32 - pi/2)", function()
      -- a wall whose base runs (dx, dz) faces (-dz, 0, dx)
      assert.equal(0, geom.light_index(-1, 0))   -- faces -Z
      assert.equal(16, geom.light_index(0, -1))  -- faces +X
      assert.equal(32, geom.light_index(1, 0))   -- faces +Z
      assert.equal(48, geom.light_index(0, 1))   -- faces -X
      for deg = 0, 359, 7 do
        local v = geom.light_index(cos(deg * pi / 180), sin(deg * pi / 180))
        assert.is_true(v >= 0 and v <= 63)
      end
    end)

    it("lays facades out along an outline, facing out, one run per straight wall", function()
      local b = { {0, 0, 0}, {0, 0, 12}, {10, 0.5, 12}, {20, 1, 12}, {20, 1, 0} }
      local segs = geom.facades(b, { bottom = 1, top = 13, floor_height = 3, bay_width = 4, closed = true })
      assert.equal(5, #segs)
      local runs = 0
      for _, s in ipairs(segs) do
        if s.run then runs = runs + 1 end
        local l, r = b[s.left], b[s.right]
        local dx, dz = r[1] - l[1], r[3] - l[3]
        local mx, mz = (l[1] + r[1]) / 2 - 10, (l[3] + r[3]) / 2 - 6
        assert.is_true(-dz * mx + dx * mz > 0, "facade faces inward")
        assert.equal(4, s.v)
        assert.equal(geom.light_index(dx, dz), s.light)
        assert.equal(l[2] < 1 or r[2] < 1, s.sloped)
      end
      assert.equal(4, runs)
    end)
  end)

  describe("intersections", function()
    local P = { kind = "road", left = 6, right = 6, sidewalk_left = 3, sidewalk_right = 3 }

    local function outline_of_parts(j)
      -- surface fans + crosswalks + sidewalk strips -> triangles -> boundary
      local sp = {}
      for i, k in ipairs(j.surface) do
        local q = j.points[k]
        sp[i] = q
      end
      local tris = {}
      local fans, idx = geom.fans(sp)
      assert.equal(0, #select(3, geom.fans(sp)), "the surface needed an extra hub")
      for _, f in ipairs(idx) do
        local refs = {}
        for i, k in ipairs(f) do refs[i] = j.surface[k] end
        for _, v in ipairs(core.surface_triangles("road_fan", refs)) do tris[#tris + 1] = v end
      end
      check_fans(fans)
      for _, cw in ipairs(j.crosswalks) do
        for _, v in ipairs(core.surface_triangles("crosswalk", cw)) do tris[#tris + 1] = v end
      end
      for _, s in ipairs(j.strips) do
        for _, v in ipairs(core.surface_triangles("sidewalk_strip", s.pairs)) do tris[#tris + 1] = v end
      end
      return geom.boundary(tris, j.points)
    end

    local function same_cycle(a, b)
      if #a ~= #b then return false end
      for s = 0, #b - 1 do
        local ok = true
        for k = 1, #a do if a[k] ~= b[(s + k - 1) % #b + 1] then ok = false; break end end
        if ok then return true end
      end
      return false
    end

    for _, case in ipairs({
      { "a 4-way", { {1, 0}, {0, 1}, {-1, 0}, {0, -1} } },
      { "a T-junction", { {1, 0}, {-1, 0}, {0, 1} } },
      { "a Y-junction", { {1, 0}, {cos(2.3), sin(2.3)}, {cos(-2.0), sin(-2.0)} } },
      { "a bend", { {1, 0}, {cos(2.0), sin(2.0)} } },
      { "a dead end", { {0, 1} } },
    }) do
      it("closes " .. case[1] .. ": its perimeter is the outline of its surface", function()
        local arms = {}
        for i, d in ipairs(case[2]) do arms[i] = { dir = d, profile = P, crosswalk = 3 } end
        local j = geom.junction({ 5, 2, -7 }, arms, { radius = 4 })
        assert.is_true(same_cycle(outline_of_parts(j), j.outline))
        local out = {}
        for i, k in ipairs(j.outline) do out[i] = j.points[k] end
        assert.equal(-1, geom.winding(out))
        for _, k in ipairs(j.surface) do assert.equal(2, j.points[k][2]) end  -- flat road fan
        for i, a in ipairs(arms) do                                          -- sections at the ends
          assert.equal(4, #j.sections[i])
          for _, k in ipairs(j.sections[i]) do
            local p = j.points[k]
            local dl = sqrt(a.dir[1] ^ 2 + a.dir[2] ^ 2)
            assert.near(j.distance[i], ((p[1] - 5) * a.dir[1] + (p[3] + 7) * a.dir[2]) / dl, 1e-9)
          end
        end
      end)
    end

    it("caps the sidewalks that stop at a walkway", function()
      local j = geom.junction({ 0, 0, 0 }, { { dir = {1, 0}, profile = P, crosswalk = 3 },
        { dir = {-1, 0}, profile = P, crosswalk = 3 }, { dir = {0, -1}, profile = { kind = "walkway", left = 2, right = 2 } } })
      local caps = 0
      for _, s in ipairs(j.strips) do
        if s.start_cap then caps = caps + 1 end
        if s.end_cap then caps = caps + 1 end
      end
      assert.equal(2, caps)
      assert.equal(2, #j.crosswalks)
    end)

    it("raises for arms it cannot join", function()
      assert.has_error(function()
        geom.junction({ 0, 0, 0 }, { { dir = {1, 0}, profile = P }, { dir = {1, 0.001}, profile = P } })
      end)
      assert.has_error(function() geom.junction({ 0, 0, 0 }, {}) end)
    end)
  end)

  describe("pools", function()
    it("deduplicates exactly and keeps a dummy vertex first", function()
      local p = geom.pool(3, true)
      assert.equal(1, p:count())
      assert.equal(2, p:add(1, 2, 3))
      assert.equal(2, p:add(1, 2, 3))
      local z = p:add(0, 0, 0)
      assert.is_true(z > 1)                 -- the dummy never matches
      assert.equal(z, p:add(-0.0, 0, -0.0))  -- -0 is +0
      assert.same({ 2, 2, z }, p:add_flat({ 1, 2, 3, 1, 2, 3, 0, 0, 0 }))
      p:set_dummy(7, 8, 9)
      assert.same({ 7, 8, 9 }, p:totable()[1])
      assert.is_nil(p:find(7, 8, 9))
      local h = geom.pool(1)
      assert.equal(1, h:add(12.5)); assert.equal(2, h:add(3)); assert.equal(1, h:add(12.5))
      assert.same({ 12.5, 3 }, h:totable())
      p:close()
      assert.has_error(function() p:count() end, "attempt to use a closed psdl.Pool")
    end)
  end)

  describe("rooms", function()
    -- a 3 x 3 grid of points 10 m apart, reference = z * 3 + x + 1
    local grid = {}
    for z = 0, 2 do for x = 0, 2 do grid[#grid + 1] = { x * 10, 0, z * 10 } end end

    it("links neighbours symmetrically and repeats a vertex shared with a corner room", function()
      local per = core.link({ {1, 4, 5, 2}, {2, 5, 6, 3}, {4, 7, 8, 5}, {5, 8, 9, 6} }, #grid)
      local function has(r, n)
        for _, p in ipairs(per[r]) do if p.neighbour == n then return true end end
        return false
      end
      for r = 1, 4 do
        for _, p in ipairs(per[r]) do
          if p.neighbour > 0 then assert.is_true(has(p.neighbour, r), r .. " -> " .. p.neighbour) end
        end
      end
      -- room 1 touches room 4 only at vertex 5: repeated, with room 4 on the zero-length edge
      assert.same({ {vertex = 1, neighbour = 0}, {vertex = 4, neighbour = 3}, {vertex = 5, neighbour = 4},
                    {vertex = 5, neighbour = 2}, {vertex = 2, neighbour = 0} }, per[1])
    end)

    it("finds a T-junction, and none once the vertex is in the perimeter", function()
      local flat = geom.flatten(grid)
      local t = core.tjunctions(flat, { {1, 7, 8, 2}, {2, 5, 6, 3}, {5, 8, 9, 6} })
      assert.same({ 1, 3, 5 }, t) -- room 1, edge 3 (8 -> 2), vertex 5
      assert.same({}, core.tjunctions(flat, { {1, 7, 8, 5, 2}, {2, 5, 6, 3}, {5, 8, 9, 6} }))
    end)

    it("takes a room outline from its surface triangles", function()
      local tris = {}
      for _, f in ipairs({ {1, 4, 5, 2}, {2, 5, 6, 3}, {4, 7, 8, 5}, {5, 8, 9, 6} }) do
        for _, v in ipairs(core.surface_triangles("fan", f)) do tris[#tris + 1] = v end
      end
      local out = geom.boundary(tris, grid)
      assert.equal(8, #out)
      local p = {}
      for i, k in ipairs(out) do p[i] = grid[k] end
      assert.near(-400, geom.signed_area(p), 1e-9)
    end)
  end)

  describe("hardening", function()
    -- Crossing-number test of psdl-format.md §1.5 (the game's PointInPerimeter).
    local function in_ring(ring, x, z)
      local inside = false
      for i = 1, #ring do
        local a, b = ring[i], ring[i % #ring + 1]
        if (a[3] > z) ~= (b[3] > z) and x < a[1] + (z - a[3]) * (b[1] - a[1]) / (b[3] - a[3]) then inside = not inside end
      end
      return inside
    end
    local outer = { {0, 0, 0}, {0, 0, 30}, {30, 0, 30}, {30, 0, 0} }
    local hole = { {10, 0, 10}, {20, 0, 10}, {20, 0, 20}, {10, 0, 20} }

    it("refuses NaN and infinite spline input instead of sampling without bound", function()
      for _, bad in ipairs({ 0 / 0, math.huge, -math.huge }) do
        local ok, err = pcall(core.spline, { 0, 0, 0, bad, 0, 50 }, { half_width = 8 })
        assert.is_false(ok)
        assert.matches("not a finite number", err)
      end
      assert.has_error(function() core.spline({ 0, 0, 0, 10, 0, 50 }, { spacing = math.huge }) end)
      assert.has_error(function() core.spline({ 0, 0, 0, 10, 0, 50 }, { start_dir = { 0 / 0, 1 } }) end)
      assert.has_error(function()
        core.junction({ 0, 0, 0 }, { { dir = { 1, 0 }, profile = { kind = "road", left = 5, right = 5 } } },
                      { radius = math.huge })
      end)
      assert.has_error(function()
        core.junction({ 0, 0, 0 }, { { dir = { 1, 0 }, profile = { kind = "road", left = 0 / 0, right = 5 } } })
      end)
    end)

    it("joins two arms in line, straight or changing width, with road surface between the crosswalks", function()
      local P = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
      local W = { kind = "road", left = 7, right = 7, sidewalk_left = 3, sidewalk_right = 3 }
      for _, q in ipairs({ P, W }) do
        local j = geom.junction({ 0, 0, 0 }, { { dir = { 1, 0 }, profile = P, crosswalk = 3 },
                                               { dir = { -1, 0 }, profile = q, crosswalk = 3 } }, { radius = 5 })
        local surf = {}
        for i, k in ipairs(j.surface) do surf[i] = j.points[k] end
        assert.is_true(geom.area(surf) > 10)
        assert.is_true(j.distance[1] >= 4 and j.distance[2] >= 4)
        local out = {}
        for i, k in ipairs(j.outline) do out[i] = j.points[k] end
        assert.equal(-1, geom.winding(out))
      end
    end)

    it("keyholes holes into one ring that the crossing-number test reads as the room", function()
      local all = {}
      for _, p in ipairs(outer) do all[#all + 1] = p end
      for _, p in ipairs(hole) do all[#all + 1] = p end
      local k = core.keyhole(geom.flatten(all), { 5 })
      assert.equal(10, #k)
      local ring = {}
      for i, v in ipairs(k) do ring[i] = all[v] end
      assert.near(-800, geom.signed_area(ring), 1e-9)
      assert.is_true(in_ring(ring, 5, 25) and in_ring(ring, 25, 5) and in_ring(ring, 3, 2))
      assert.is_false(in_ring(ring, 15, 15) or in_ring(ring, 11, 19) or in_ring(ring, 40, 5))
      -- the outline of fans over the holed polygon is the same kind of ring
      local tris = {}
      for _, t in ipairs(geom.triangulate(outer, { hole })) do
        for _, v in ipairs(t) do tris[#tris + 1] = v end
      end
      local b = geom.boundary(tris, all)
      assert.equal(10, #b)
      local bring = {}
      for i, v in ipairs(b) do bring[i] = all[v] end
      assert.near(-800, geom.signed_area(bring), 1e-9)
      assert.is_false(in_ring(bring, 15, 15))
    end)

    it("finds crossing edges and points outside a polygon", function()
      assert.same({ 1, 3 }, { core.self_crossing(geom.flatten({ {0, 0, 0}, {10, 0, 10}, {10, 0, 0}, {0, 0, 10} })) })
      assert.is_nil(core.self_crossing(geom.flatten(outer)))
      local poke = { {25, 0, 5}, {35, 0, 5}, {35, 0, 10}, {25, 0, 10} }
      local all = {}
      for _, p in ipairs(outer) do all[#all + 1] = p end
      for _, p in ipairs(poke) do all[#all + 1] = p end
      assert.same({ 3, 5 }, { core.self_crossing(geom.flatten(all), { 5 }) })
      local room = geom.flatten(outer)
      assert.is_nil(core.first_outside(room, geom.flatten({ {0, 0, 5}, {5, 0, 5}, {5, 0, 10} }), true))
      assert.equal(2, core.first_outside(room, geom.flatten({ {5, 0, 5}, {-1, 0, 5}, {5, 0, 10} }), true))
      -- the point-list wrappers
      local ring = geom.keyhole(outer, { { {10, 0, 10}, {20, 0, 10}, {20, 0, 20}, {10, 0, 20} } })
      assert.equal(10, #ring)
      assert.near(-800, geom.signed_area(ring), 1e-9)
      assert.same({ 3, 5 }, { geom.self_crossing(outer, { poke }) })
      assert.equal(2, geom.first_outside(outer, { {5, 0, 5}, {-1, 0, 5}, {5, 0, 10} }, true))
      assert.is_nil(geom.first_outside(ring, { {2, 0, 2}, {2, 0, 6}, {6, 0, 6}, {6, 0, 2} }, true))
    end)

    it("finds where an open polyline meets itself, touching included (a road's centre line)", function()
      -- x, z of the meeting point and the points at the ends of the two segments
      assert.same({ 5, 0, 1, 2, 3, 4 }, { core.polyline_crossing({ 0, 0, 0, 10, 0, 0, 10, 0, 10, 0, 0, -10 }) })
      assert.same({ 4, 0, 1, 2, 3, 4 }, { core.polyline_crossing({ 0, 0, 0, 10, 0, 0, 10, 0, 10, 4, 0, 0 }) })
      assert.is_nil(core.polyline_crossing({ 0, 0, 0, 10, 0, 0, 10, 0, 10, 0, 0, 0 })) -- a loop closing at its start
      assert.is_nil(core.polyline_crossing({ 0, 0, 0, 10, 0, 0, 10, 0, 10 }))
      assert.is_nil(core.polyline_crossing({}))
      -- psdl.city.network.self_crossing: {x, z} points with their own numbers `i`
      local x, z, j1, j2, i1, i2 = require("psdl.city.network").self_crossing({ { 0, 0, i = 0 }, { 10, 0, i = 1 },
        { 10, 0, i = 2 }, { 10, 10, i = 3 }, { 0, -10, i = 4 } })
      assert.same({ 5, 0, 0, 1, 3, 4 }, { x, z, j1, j2, i1, i2 })
      -- misuse raises naming the argument
      assert.error_matches(function() core.polyline_crossing({ 0, 0 }) end, "bad argument #1 .*flat x, y, z")
      assert.error_matches(function() core.polyline_crossing({ 0, "x", 0 }) end, "bad argument #1")
      assert.error_matches(function() core.polyline_crossing(7) end, "bad argument #1")
    end)
  end)

  describe("binding safety", function()
    -- Runs `body` in a fresh lua5.4 with this psdl.core, after a prelude defining
    -- under_finalizers(finalize, rounds, f): f(litter) is called `rounds` times with a GC
    -- step at almost every allocation; litter() makes garbage whose __gc calls finalize, so
    -- that a binding call right after it runs finalizers inside its own allocations. (A fresh
    -- process keeps the heap small: in the spec runner's large heap a collection cycle spans
    -- far more allocations than one call makes.) Returns the output and whether it exited 0.
    local function fresh_lua(body)
      local prelude = string.format([[
package.cpath = %q
local core = require "psdl.core"
local function under_finalizers(finalize, rounds, f)
  local mt = { __gc = function() finalize() end }
  local function litter() for _ = 1, 50 do setmetatable({}, mt) end end
  collectgarbage("incremental", 1, 1000)
  for _ = 1, rounds do f(litter) end
end
]], package.cpath)
      local path = os.tmpname()
      local fh = assert(io.open(path, "w"))
      fh:write(prelude, body)
      fh:close()
      local p = assert(io.popen("lua5.4 " .. path .. " 2>&1"))
      local out = p:read("a")
      local ok = p:close()
      os.remove(path)
      return out, ok
    end

    it("reads each perimeter only to the length seen first when a finalizer grows it mid-call", function()
      local out, ok = fresh_lua([[
local perims, linked, grown, bad = nil, 0, 0, 0
local function grow()
  if perims then
    local p = perims[1]
    for i = #p + 1, #p + 200 do p[i] = 1 end
  end
end
under_finalizers(grow, 300, function(litter)
  perims = { {1, 2, 3}, {3, 2, 4} }
  litter()
  local ok, r = pcall(core.link, perims, 4)
  if ok then
    linked = linked + 1
    if #r[1] > 4 then bad = bad + 1 end
    if #perims[1] > 3 then grown = grown + 1 end
  end
  perims = { {1, 2, 3}, {3, 2, 4} }
  litter()
  local ok2, t = pcall(core.tjunctions, { 0, 0, 0, 10, 0, 0, 10, 0, 10, 0, 0, 10 }, perims)
  if ok2 and #t % 3 ~= 0 then bad = bad + 1 end
end)
print("linked", linked, "grown", grown, "bad", bad)
]])
      assert.is_true(ok, out)
      local linked, grown, bad = out:match("linked%s+(%d+)%s+grown%s+(%d+)%s+bad%s+(%d+)")
      assert.is_truthy(linked, out)
      assert.equal(0, tonumber(bad))
      assert.is_true(tonumber(grown) > 0, out) -- the finalizers did run inside the calls
    end)

    it("reads a pool's points after allocating, when a finalizer may add to it or close it", function()
      local out, ok = fresh_lua([[
local pool, armed, k, bad = nil, false, 0, 0
local function move() -- once armed: enough new points (inside the square) to move its data
  if pool and armed then
    armed = false
    for _ = 1, pool:count() + 256 do
      k = k + 1
      pool:add(1 + (k % 1000) * 0.008, 0, 1 + (k // 1000 % 1000) * 0.008)
    end
  end
end
local function check(c) if not c then bad = bad + 1 end end
local sq = { {0, 0, 0}, {0, 0, 10}, {10, 0, 10}, {10, 0, 0} }
under_finalizers(move, 30, function(litter)
  pool = core.pool(3)
  for _, p in ipairs(sq) do pool:add(p[1], p[2], p[3]) end
  litter(); armed = true
  local b = core.bounds(pool)
  check(b.min[1] == 0 and b.min[2] == 0 and b.min[3] == 0 and b.max[1] == 10 and b.max[2] == 0 and b.max[3] == 10)
  litter(); armed = true
  local f = pool:points({ 1, 2, 3, 4 })
  check(#f == 12 and f[1] == 0 and f[6] == 10 and f[7] == 10 and f[10] == 10 and f[12] == 0)
  litter(); armed = true
  local t = pool:totable()
  check(t[1][1] == 0 and t[2][3] == 10 and t[3][1] == 10)
  litter(); armed = true
  local fl = pool:flat()
  check(fl[1] == 0 and fl[6] == 10 and fl[7] == 10)
end)
local closing
under_finalizers(function() if closing then closing:close() end end, 30, function(litter)
  closing = core.pool(3)
  closing:add(1, 2, 3)
  litter()
  local ok, err = pcall(core.bounds, closing)
  if not ok and not tostring(err):match("closed") then bad = bad + 1 end
  closing = nil
end)
print("bad", bad, "moved", k)
]])
      assert.is_true(ok, out)
      local bad, moved = out:match("bad%s+(%d+)%s+moved%s+(%d+)")
      assert.equal("0", bad, out)
      assert.is_true(tonumber(moved) > 0, out)
    end)

    it("refuses set_dummy on a pool created without the reserved dummy", function()
      local p = core.pool(3)
      assert.equal(1, p:add(1, 2, 3))
      assert.has_error(function() p:set_dummy(4, 5, 6) end,
        "the pool reserves no dummy entry (create it with core.pool(dim, true))")
      assert.same({ 1, 2, 3 }, { p:get(1) })
      assert.equal(1, p:find(1, 2, 3))
      assert.is_nil(p:find(4, 5, 6))
      local r = core.pool(3, true)
      r:set_dummy(4, 5, 6)
      assert.same({ 4, 5, 6 }, { r:get(1) })
    end)

    it("takes a point count up to 2^32 - 1 and sizes link's scratch by the vertices used", function()
      local ok, err = pcall(core.link, { {1, 2, 3} }, 1 << 40)
      assert.is_false(ok)
      assert.matches("point count", err)
      assert.has_error(function() core.link({ {1, 2, 3} }, -1) end)
      local t0 = os.clock()
      local r = core.link({ {1, 2, 3}, {3, 2, 4} }, (1 << 32) - 1)
      assert.is_true(os.clock() - t0 < 0.5) -- 2^31 took 8 GB and seconds
      assert.equal(3, #r[1])
      assert.has_error(function() core.link({ {1, 2, 5} }, 4) end)
    end)

    it("refuses T-junction input whose extent is not a finite number", function()
      local pts = { -1e308, 0, 0, 1e308, 0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 5 }
      local ok, err = pcall(core.tjunctions, pts, { {1, 2, 3}, {4, 5} })
      assert.is_false(ok)
      assert.matches("largest finite number", err)
      pts[1], pts[4], pts[9] = -1e150, 1e150, 1e150
      assert.same({ 1, 1, 4 }, core.tjunctions(pts, { {1, 2, 3}, {4, 5} }))
    end)

    it("first_outside on a large polygon stays fast (edges sorted once)", function()
      local poly, n = {}, 40000
      for i = 0, n - 1 do
        local a = -2 * pi * i / n
        poly[#poly + 1] = 100 * cos(a); poly[#poly + 1] = 0; poly[#poly + 1] = 100 * sin(a)
      end
      local t0 = os.clock()
      assert.is_nil(core.first_outside(poly, { 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1 }, true, 0.01))
      assert.is_true(os.clock() - t0 < 1) -- 2.5 s per call at 40000 points
      assert.equal(3, core.first_outside(poly, { 0, 0, 0, 1, 0, 0, 150, 0, 1, 0, 0, 1 }, true, 0.01))
    end)
  end)
end)
