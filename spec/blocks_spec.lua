-- Block rooms of city generation (lua/psdl/city/blocks/): faces of the road layout,
-- splitting, ground, buildings, parks and plazas, the apron; layouts built directly with
-- the builder (intersections and streets), then blocks.fill and b:finish().
local psdl = require "psdl"
local builder = require "psdl.builder"
local blocks = require "psdl.city.blocks"
local plan = require "psdl.plan"

local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }

-- A deterministic generator in [0, 1).
local function lcg(seed)
  local s = seed or 1
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  end
end

-- A grid of nx x nz nodes `spacing` apart joined by streets; `stubs` (m): dead-end streets
-- out of the border nodes; `node_height(x, z)`; `skip(i, j)`: no node there.
local function grid(o)
  local b = builder.new{ style = o.style or "london" }
  local nx, nz, sp = o.nx, o.nz, o.spacing or 120
  local hf = o.node_height or function() return 0 end
  local info = {}
  local function has(i, j) return i >= 1 and i <= nx and j >= 1 and j <= nz and not (o.skip and o.skip(i, j)) end
  local dirs = { { 1, 0 }, { 0, 1 }, { -1, 0 }, { 0, -1 } }
  for i = 1, nx do
    info[i] = {}
    for j = 1, nz do
      if has(i, j) then
        local arms, map = {}, {}
        for _, d in ipairs(dirs) do
          if has(i + d[1], j + d[2]) or o.stubs then
            arms[#arms + 1] = { dir = d, profile = STREET }
            map[d[1] .. "," .. d[2]] = #arms
          end
        end
        local x, z = (i - 1) * sp, (j - 1) * sp
        local _, inf = b:intersection{ center = { x, hf(x, z), z }, radius = 5, arms = arms }
        info[i][j] = { inf = inf, map = map, x = x, z = z }
      end
    end
  end
  local function arm(n, dx, dz) return { n.inf, n.map[dx .. "," .. dz] } end
  for i = 1, nx do
    for j = 1, nz do
      local n = info[i][j]
      if n then
        local e = info[i + 1] and info[i + 1][j]
        if e then b:road_record{ rooms = b:street{ from = arm(n, 1, 0), to = arm(e, -1, 0), profile = STREET } } end
        local s = info[i][j + 1]
        if s then b:road_record{ rooms = b:street{ from = arm(n, 0, 1), to = arm(s, 0, -1), profile = STREET } } end
        if o.stubs then
          for _, d in ipairs(dirs) do
            if not has(i + d[1], j + d[2]) then
              local ex, ez = n.x + d[1] * o.stubs, n.z + d[2] * o.stubs
              b:street{ from = arm(n, d[1], d[2]), path = { { ex, hf(ex, ez), ez } }, profile = STREET }
            end
          end
        end
      end
    end
  end
  return b
end

-- Plan polygon of a room's perimeter.
local function perimeter_pts(doc, room)
  local pts = {}
  for _, p in ipairs(room.perimeter) do
    local v = doc.vertices[p.vertex]
    local q = pts[#pts]
    if not q or q[1] ~= v[1] or q[3] ~= v[3] then pts[#pts + 1] = v end
  end
  return pts
end

local function area(pts) return plan.area2(pts) / 2 end

local inside = plan.inside

-- Checks that the ordinary rooms tile the ground out to the apron's edge (`margin` m out
-- from the network, psdl.city.blocks.apron, found on a grid of `cell` m): sample points
-- closer than margin - cell to a room other than the apron's lie in exactly one perimeter,
-- the others in at most one; rep is blocks.fill's report.
local function assert_tiles(doc, step, rep, margin, cell)
  margin, cell = margin or 30, cell or 12
  local apron = {}
  for _, r in ipairs(rep.apron_rooms) do apron[r.id] = true end
  local x0, x1, z0, z1 = math.huge, -math.huge, math.huge, -math.huge
  local polys, net = {}, {}
  for i, r in ipairs(doc.rooms) do
    if r.flags & 0x40 == 0 then
      local pts = perimeter_pts(doc, r)
      polys[#polys + 1] = pts
      if not apron[i] then net[#net + 1] = pts end
      for _, p in ipairs(pts) do
        x0, x1, z0, z1 = math.min(x0, p[1]), math.max(x1, p[1]), math.min(z0, p[3]), math.max(z1, p[3])
      end
    end
  end
  local reach = margin - cell - 0.5
  local function near_network(x, z)
    for _, pts in ipairs(net) do
      if inside(pts, x, z) then return true end
      local n = #pts
      for k = 1, n do
        local a, c = pts[k], pts[k % n + 1]
        if plan.seg_dist(x, z, a[1], a[3], c[1], c[3]) < reach then return true end
      end
    end
    return false
  end
  local misses, doubles, covered = 0, 0, 0
  for x = x0 + 0.37, x1, step do
    for z = z0 + 0.61, z1, step * 0.93 do
      local n = 0
      for _, pts in ipairs(polys) do if inside(pts, x, z) then n = n + 1 end end
      if n == 0 and near_network(x, z) then misses = misses + 1 elseif n > 1 then doubles = doubles + 1 end
      if n == 1 then covered = covered + 1 end
    end
  end
  assert.is_true(covered > 0)
  assert.are.equal(0, misses, "sample points near the network in no room")
  assert.are.equal(0, doubles, "sample points in two rooms")
end

local assert_symmetric = require("helper").assert_symmetric

local function assert_clean(doc, rep, opts)
  local ok, problems = psdl.validate(doc, { strict = true, drivable = opts and opts.drivable })
  assert.is_true(ok)
  assert.are.equal(0, #problems)
  assert.are.equal(0, #rep.tjunctions.unrepaired)
end

-- Buildings in a doc: per block room, the facades, bounds and slivers before each roof.
local function buildings_of(doc, room)
  local out, cur = {}, { facades = {}, bounds = {}, slivers = {} }
  for _, a in ipairs(room.attributes) do
    if a.type == "facade" then cur.facades[#cur.facades + 1] = a
    elseif a.type == "facade_bound" then cur.bounds[#cur.bounds + 1] = a
    elseif a.type == "sliver" then cur.slivers[#cur.slivers + 1] = a
    elseif a.type == "roof" then
      if #cur.facades > 0 then
        cur.roofs = { a }
        out[#out + 1] = cur
        cur = { facades = {}, bounds = {}, slivers = {} }
      else -- a concave roof: more fans of the same building
        local last = out[#out].roofs
        last[#last + 1] = a
      end
    end
  end
  return out
end

-- The roof fans' points (hub first in each fan; every footprint point appears).
local function roof_points(doc, bl)
  local pts, seen = {}, {}
  for _, roof in ipairs(bl.roofs) do
    for _, v in ipairs(roof.vertices) do
      if not seen[v] then seen[v] = true; pts[#pts + 1] = doc.vertices[v] end
    end
  end
  return pts
end

local function build(o)
  local b = grid(o)
  local rep = blocks.fill(b, o.fill)
  local doc, frep = b:finish()
  return doc, rep, frep, b
end

describe("psdl.city.blocks", function()
  describe("faces", function()
    it("finds the one bounded face of a 2 x 2 grid and the network's outline", function()
      local b = grid{ nx = 2, nz = 2, spacing = 120, stubs = 40 }
      local f = blocks.faces(b)
      assert.are.equal(1, #f.faces)
      assert.are.equal(1, #f.outlines)
      -- the face's boundary is the streets' outer sidewalk edges: 120 - 2 * 8 m square
      assert.is_near(104 * 104, f.faces[1].area, 1)
      assert.is_true(area(f.faces[1].pts) < 0) -- retail winding
    end)

    it("finds (nx - 1) x (nz - 1) faces in a grid, next to T-junctions too", function()
      local f = blocks.faces(grid{ nx = 3, nz = 2, spacing = 100 })
      assert.are.equal(2, #f.faces)
      f = blocks.faces(grid{ nx = 4, nz = 3, spacing = 90 })
      assert.are.equal(6, #f.faces)
    end)
  end)

  describe("a 2 x 2 grid with buildings", function()
    local doc, rep, frep
    setup(function()
      doc, rep, frep = build{ nx = 2, nz = 2, spacing = 120, stubs = 40,
                              fill = { rng = lcg(5), buildings = { floors = { 2, 5 }, floor_height = 3.5 } } }
    end)

    it("validates strictly, with symmetric links and no unrepaired T-junction", function()
      assert_clean(doc, frep)
      assert_symmetric(doc)
    end)

    it("turns the bounded face into block rooms and surrounds the network with an apron", function()
      assert.are.equal(1, rep.blocks)
      assert.is_true(#rep.faces[1].rooms >= 1)
      assert.is_true(rep.apron)
      assert.is_true(#rep.apron_rooms >= 4)
      for _, r in ipairs(rep.rooms) do
        assert.are.equal("block", r.kind)
        assert.are.equal(0x04, doc.rooms[r.id].flags)
      end
    end)

    it("tiles the area with road, intersection and block rooms: no gap, no overlap", function()
      assert_tiles(doc, 3.1, rep)
    end)

    it("shares the road rooms' boundary vertices: every block room links to a road", function()
      for _, r in ipairs(rep.faces[1].rooms) do
        local roads = 0
        for _, p in ipairs(doc.rooms[r.id].perimeter) do
          if p.neighbour > 0 and doc.rooms[p.neighbour].flags ~= 0x04 then roads = roads + 1 end
        end
        assert.is_true(roads > 0)
      end
    end)

    it("keeps rooms within the limits: 255 perimeter points, 256 collision polygons", function()
      for _, r in ipairs(rep.rooms) do
        local room = doc.rooms[r.id]
        assert.is_true(#room.perimeter <= 255)
        local polys = 0
        for _, a in ipairs(room.attributes) do
          if a.type == "fan" or a.type == "roof" then polys = polys + #a.vertices - 2
          elseif a.type == "facade_bound" then polys = polys + 1 end
        end
        assert.is_true(polys < 256, polys .. " collision polygons")
      end
    end)

    it("lines the block with buildings whose facades face outward", function()
      assert.is_true(rep.buildings >= 12)
      local n, k = 0, 0
      for _, r in ipairs(rep.rooms) do
        local list = {}
        for _, bl in ipairs(rep.building_list) do if bl.room == r then list[#list + 1] = bl end end
        local built = buildings_of(doc, doc.rooms[r.id])
        assert.are.equal(#list, #built)
        for i, bl in ipairs(built) do
          local outline = list[i].outline
          local cx, cz = 0, 0
          for _, p in ipairs(outline) do cx, cz = cx + p[1], cz + p[3] end
          cx, cz = cx / #outline, cz / #outline
          assert.is_true(#bl.facades >= 4)
          for _, f in ipairs(bl.facades) do
            local a, c = doc.vertices[f.vertices[1]], doc.vertices[f.vertices[2]]
            local l = math.sqrt((c[1] - a[1]) ^ 2 + (c[3] - a[3]) ^ 2)
            local nx, nz = -(c[3] - a[3]) / l, (c[1] - a[1]) / l
            local mx, mz = (a[1] + c[1]) / 2, (a[3] + c[3]) / 2
            -- just in front of the facade is outside the footprint, just behind it inside
            assert.is_false(inside(outline, mx + 0.05 * nx, mz + 0.05 * nz))
            assert.is_true(inside(outline, mx - 0.05 * nx, mz - 0.05 * nz))
            if nx * (mx - cx) + nz * (mz - cz) > 0 then k = k + 1 end
            n = n + 1
          end
        end
      end
      assert.is_true(n >= 48)
      assert.is_true(k >= 0.9 * n) -- away from the centroid (all but an L's inner walls)
    end)

    it("puts roofs at ground + floors x floor height, facades from the ground to the roof", function()
      for _, bl in ipairs(rep.building_list) do
        assert.is_true(bl.floors >= 2 and bl.floors <= 5)
        assert.is_near(bl.base + bl.floors * 3.5, bl.top, 1e-6)
      end
      for _, r in ipairs(rep.faces[1].rooms) do
        for _, bl in ipairs(buildings_of(doc, doc.rooms[r.id])) do
          local top = doc.heights[bl.roofs[1].height]
          for _, roof in ipairs(bl.roofs) do assert.are.equal(bl.roofs[1].height, roof.height) end
          local base = -math.huge
          for _, p in ipairs(roof_points(doc, bl)) do base = math.max(base, p[2]) end
          local floors = (top - base) / 3.5
          assert.is_near(math.floor(floors + 0.5), floors, 1e-3)
          for _, f in ipairs(bl.facades) do
            assert.is_near(top, doc.heights[f.top], 1e-4)
            assert.is_near(base, doc.heights[f.bottom], 1e-4)
            assert.are.equal(math.floor(floors + 0.5), f.v_repeat)
            local a, c = doc.vertices[f.vertices[1]], doc.vertices[f.vertices[2]]
            local w = math.sqrt((c[1] - a[1]) ^ 2 + (c[3] - a[3]) ^ 2)
            assert.are.equal(math.max(1, math.floor(w / 4 + 0.5)), f.u_repeat)
          end
        end
      end
    end)

    it("gives each wall run a facade bound first, with the light index of its direction", function()
      local seen = {}
      for _, r in ipairs(rep.faces[1].rooms) do
        local room = doc.rooms[r.id]
        local have_bound = false
        for _, a in ipairs(room.attributes) do
          if a.type == "facade_bound" then
            have_bound = true
            local p, q = doc.vertices[a.vertices[1]], doc.vertices[a.vertices[2]]
            local dx, dz = q[1] - p[1], q[3] - p[3]
            local nx, nz = -dz, dx -- the wall's normal
            local want
            if math.abs(nx) < 1e-3 and nz < 0 then want = 0
            elseif math.abs(nz) < 1e-3 and nx > 0 then want = 16
            elseif math.abs(nx) < 1e-3 and nz > 0 then want = 32
            elseif math.abs(nz) < 1e-3 and nx < 0 then want = 48 end
            if want then
              assert.are.equal(want, a.light)
              seen[want] = true
            end
          elseif a.type == "facade" then
            assert.is_true(have_bound, "a facade before any bound")
          elseif a.type == "roof" then
            have_bound = false
          end
        end
      end
      assert.is_true(seen[0] and seen[16] and seen[32] and seen[48])
    end)

    it("has no slivers on flat ground", function()
      for _, bl in ipairs(rep.building_list) do assert.are.equal(0, bl.slivers) end
    end)

    it("keeps every footprint inside its room, and footprints apart", function()
      local by_room = {}
      for _, bl in ipairs(rep.building_list) do
        local room = perimeter_pts(doc, doc.rooms[bl.room.id])
        local cx, cz = 0, 0
        for _, p in ipairs(bl.outline) do cx, cz = cx + p[1], cz + p[3] end
        cx, cz = cx / #bl.outline, cz / #bl.outline
        for _, p in ipairs(bl.outline) do
          -- a point pulled 10 cm towards the centroid lies inside the room
          local dx, dz = cx - p[1], cz - p[3]
          local l = math.sqrt(dx * dx + dz * dz)
          assert.is_true(inside(room, p[1] + dx / l * 0.1, p[3] + dz / l * 0.1))
        end
        local l = by_room[bl.room] or {}
        by_room[bl.room] = l
        for _, other in ipairs(l) do
          -- no centroid inside another footprint
          assert.is_false(inside(other, cx, cz))
        end
        l[#l + 1] = bl.outline
      end
    end)

    it("gives the same bytes for the same random sequence, other bytes for another", function()
      local d1 = build{ nx = 2, nz = 2, spacing = 120, stubs = 40, fill = { rng = lcg(5), buildings = {} } }
      local d2 = build{ nx = 2, nz = 2, spacing = 120, stubs = 40, fill = { rng = lcg(5), buildings = {} } }
      local d3 = build{ nx = 2, nz = 2, spacing = 120, stubs = 40, fill = { rng = lcg(6), buildings = {} } }
      assert.are.equal(psdl.encode(d1), psdl.encode(d2))
      assert.are_not.equal(psdl.encode(d1), psdl.encode(d3))
    end)
  end)

  describe("parks, plazas and overrides", function()
    local doc, rep, frep
    setup(function()
      doc, rep, frep = build{ nx = 3, nz = 3, spacing = 110, fill = {
        rng = lcg(9), buildings = { floors = { 3, 3 } },
        overrides = { { point = { 55, 55 }, park = true }, { point = { 165, 55 }, plaza = true },
                      { point = { 55, 165 }, buildings = { floors = { 8, 8 }, facades = "wall" } } } } }
    end)

    it("validates strictly and tiles the area", function()
      assert_clean(doc, frep)
      assert_symmetric(doc)
      assert_tiles(doc, 4.3, rep)
    end)

    it("makes parks grass and plazas paving, with no facades", function()
      assert.are.equal(1, rep.parks)
      assert.are.equal(1, rep.plazas)
      assert.are.equal(4, rep.blocks)
      local style = require "psdl.styles.london"
      for _, f in ipairs(rep.faces) do
        if f.kind == "park" or f.kind == "plaza" then
          assert.are.equal(0, f.buildings)
          local want = f.kind == "park" and style.ground.grass[1] or style.ground.plaza[1]
          for _, r in ipairs(f.rooms) do
            for _, a in ipairs(doc.rooms[r.id].attributes) do
              assert.are_not.equal("facade", a.type)
              assert.are_not.equal("roof", a.type)
              if a.type == "texture" then assert.are.equal(want, doc.textures[a.value]) end
            end
          end
        else
          assert.is_true(f.buildings > 0)
        end
      end
    end)

    it("applies a face's own building options", function()
      local style = require "psdl.styles.london"
      local walls = {}
      for _, n in ipairs(style.facades.wall) do walls[n] = true end
      for _, bl in ipairs(rep.building_list) do
        local c = bl.outline[1]
        if c[1] < 110 and c[3] > 110 then
          assert.are.equal(8, bl.floors)
        else
          assert.are.equal(3, bl.floors)
        end
      end
      local found = false
      for _, f in ipairs(rep.faces) do
        if f.kind == "block" and f.outline[1][1] < 110 and f.outline[1][3] > 110 then
          for _, r in ipairs(f.rooms) do
            for _, a in ipairs(doc.rooms[r.id].attributes) do
              if a.type == "texture" and walls[doc.textures[a.value]] then found = true end
            end
          end
        end
      end
      assert.is_true(found)
    end)
  end)

  describe("sloped ground", function()
    local function hf(x, z) return 10 * math.sin(x / 80) + 6 * math.cos(z / 60) end
    local doc, rep, frep
    setup(function()
      doc, rep, frep = build{ nx = 3, nz = 3, spacing = 110, stubs = 30, node_height = hf,
                              fill = { rng = lcg(2), buildings = {}, height = function(x, z) return hf(x, z) + 0.15 end } }
    end)

    it("validates strictly and tiles the area", function()
      assert_clean(doc, frep)
      assert_symmetric(doc)
      assert_tiles(doc, 4.7, rep)
    end)

    it("follows the height function inside the blocks", function()
      local worst, n = 0, 0
      for _, r in ipairs(rep.rooms) do
        local room = doc.rooms[r.id]
        local on_perimeter = {}
        for _, p in ipairs(room.perimeter) do on_perimeter[p.vertex] = true end
        for _, a in ipairs(room.attributes) do
          if a.type == "fan" then
            for _, v in ipairs(a.vertices) do
              if not on_perimeter[v] then
                local p = doc.vertices[v]
                worst = math.max(worst, math.abs(p[2] - (hf(p[1], p[3]) + 0.15)))
                n = n + 1
              end
            end
          end
        end
      end
      assert.is_true(n > 20)
      assert.is_true(worst < 1.0, "inner ground points " .. worst .. " m off the height function")
    end)

    it("puts slivers exactly under the facades whose ground falls below their base", function()
      local slivers, sloped = 0, 0
      for _, r in ipairs(rep.rooms) do
        local room = doc.rooms[r.id]
        local sl = {}
        for _, a in ipairs(room.attributes) do
          if a.type == "sliver" then sl[a.vertices[1] .. ":" .. a.vertices[2]] = a end
        end
        for _, a in ipairs(room.attributes) do
          if a.type == "facade" then
            local p, q = doc.vertices[a.vertices[1]], doc.vertices[a.vertices[2]]
            local bottom = doc.heights[a.bottom]
            local s = sl[a.vertices[1] .. ":" .. a.vertices[2]]
            if math.min(p[2], q[2]) < bottom - 1e-3 then
              sloped = sloped + 1
              assert.is_truthy(s, "no sliver under a facade on sloping ground")
              assert.is_near(bottom, doc.heights[s.top], 1e-4)
            elseif math.min(p[2], q[2]) > bottom - 1e-6 then
              assert.is_nil(s)
            end
          end
        end
        for _ in pairs(sl) do slivers = slivers + 1 end
      end
      assert.is_true(sloped > 10)
      assert.is_true(slivers >= sloped)
    end)

    it("stands buildings on the ground: the facade base is the footprint's highest ground", function()
      for _, bl in ipairs(rep.building_list) do
        local hi = -math.huge
        for _, p in ipairs(bl.outline) do hi = math.max(hi, p[2]) end
        assert.is_near(hi, bl.base, 1e-6)
      end
    end)
  end)

  describe("other layouts", function()
    it("handles an island ring road inside a face (a face with a hole)", function()
      local b = builder.new{ style = "sf" }
      local function square(x0, z0, s)
        local nodes = {}
        local corners = { { x0, z0, { { 1, 0 }, { 0, 1 } } }, { x0 + s, z0, { { -1, 0 }, { 0, 1 } } },
                          { x0 + s, z0 + s, { { 0, -1 }, { -1, 0 } } }, { x0, z0 + s, { { 1, 0 }, { 0, -1 } } } }
        for i, c in ipairs(corners) do
          local arms = {}
          for k, d in ipairs(c[3]) do arms[k] = { dir = d, profile = STREET } end
          local _, inf = b:intersection{ center = { c[1], 0, c[2] }, radius = 5, arms = arms }
          nodes[i] = inf
        end
        b:street{ from = { nodes[1], 1 }, to = { nodes[2], 1 }, profile = STREET }
        b:street{ from = { nodes[2], 2 }, to = { nodes[3], 1 }, profile = STREET }
        b:street{ from = { nodes[3], 2 }, to = { nodes[4], 1 }, profile = STREET }
        b:street{ from = { nodes[4], 2 }, to = { nodes[1], 2 }, profile = STREET }
      end
      square(0, 0, 240)
      square(80, 80, 70)
      local f = blocks.faces(b)
      assert.are.equal(2, #f.faces)
      local holes = 0
      for _, face in ipairs(f.faces) do holes = holes + #face.holes end
      assert.are.equal(1, holes)
      local rep = blocks.fill(b, { rng = lcg(1), buildings = {} })
      assert.are.equal(2, rep.blocks)
      local doc, frep = b:finish()
      assert_clean(doc, frep)
      assert_symmetric(doc)
      assert_tiles(doc, 5.3, rep)
    end)

    it("covers a tunnel with ground (no lid over the portal) and leaves room under a bridge deck", function()
      local b = builder.new{ style = "london" }
      local road = { kind = "road", left = 5, right = 5, sidewalk_left = 2, sidewalk_right = 2 }
      -- a street over a 7 m deep tunnel (ramps ordinary, bore warp), and a bridge over it
      b:street{ path = { { 0, 0, 0 }, { 0, -7, 70 } }, profile = road, room = { name = "ramp" } }
      b:street{ path = { { 0, -7, 70 }, { 0, -7, 150 } }, profile = road, tunnel = { ceiling = "curved" } }
      b:street{ path = { { 0, -7, 150 }, { 0, 0, 220 } }, profile = road }
      b:street{ path = { { -150, 0, 110 }, { -100, 8, 110 } }, profile = road }
      b:street{ path = { { -100, 8, 110 }, { 100, 8, 110 } }, profile = road, room = { bridge = true } }
      b:street{ path = { { 100, 8, 110 }, { 150, 0, 110 } }, profile = road }
      local rep = blocks.fill(b, { rng = lcg(1) })
      assert.is_true(rep.apron)
      local doc, frep = b:finish()
      assert_clean(doc, frep)
      assert_symmetric(doc)
      -- over the bore (|x| < 7, 75 < z < 145) the ground is at the surface; under the deck
      -- (|z - 110| < 6, not over the tunnel) it is at street level
      for _, r in ipairs(rep.rooms) do
        for _, a in ipairs(doc.rooms[r.id].attributes) do
          if a.type == "fan" then
            for _, v in ipairs(a.vertices) do
              local p = doc.vertices[v]
              if math.abs(p[1]) < 6.9 and p[3] > 71 and p[3] < 149 then
                assert.is_true(p[2] > -0.5, string.format("ground at (%g, %g, %g) sinks into the tunnel", p[1], p[2], p[3]))
              end
              if math.abs(p[3] - 110) < 6.9 and math.abs(p[1]) > 8 and math.abs(p[1]) < 99 then
                assert.is_true(p[2] < 1, string.format("ground at (%g, %g, %g) fills the space under the deck", p[1], p[2], p[3]))
              end
            end
          end
        end
      end
    end)

    it("splits a big face into rooms within the limits", function()
      local doc, rep, frep = build{ nx = 2, nz = 2, spacing = 300, fill = { rng = lcg(3), margin = false,
        room = { max_area = 5000, max_points = 80 } } }
      assert_clean(doc, frep)
      assert.is_false(rep.apron)
      assert.is_true(#rep.faces[1].rooms >= 14)
      for _, r in ipairs(rep.rooms) do
        local pts = perimeter_pts(doc, doc.rooms[r.id])
        assert.is_true(math.abs(area(pts)) <= 5000 + 1e-3)
        assert.is_true(#pts <= 80)
      end
    end)

    it("places given footprints (a network's buildings) in the rooms holding them", function()
      local b = grid{ nx = 2, nz = 2, spacing = 300, stubs = 30 }
      local fps = {
        { outline = { { 100, 100 }, { 130, 100 }, { 130, 125 }, { 100, 125 } }, levels = 4, height = 14 },
        -- across the block's middle, where a cut would run: the cut goes round it
        { outline = { { 140, 140 }, { 160, 140 }, { 160, 160 }, { 140, 160 } }, levels = 3 },
        { outline = { { -5, 100 }, { 5, 100 }, { 5, 110 }, { -5, 110 } } },      -- on the street: skipped
        -- in the apron (within its 30 m margin of the east street; the apron follows the roads)
        { outline = { { 316, 100 }, { 330, 100 }, { 330, 112 } }, height = 6 },
      }
      local rep = blocks.fill(b, { rng = lcg(4), footprints = fps })
      local doc, frep = b:finish()
      assert_clean(doc, frep)
      assert.are.equal(3, rep.footprints)
      assert.are.equal(1, rep.footprints_skipped)
      assert.is_true(#rep.faces[1].rooms >= 4)
      local seen = {}
      for _, bl in ipairs(rep.building_list) do
        if bl.footprint then
          seen[bl.footprint] = bl
          local room = perimeter_pts(doc, doc.rooms[bl.room.id])
          for _, p in ipairs(bl.outline) do
            local cx, cz = fps[bl.footprint].outline[1][1], fps[bl.footprint].outline[1][2]
            assert.is_true(inside(room, p[1] + (p[1] < cx + 5 and 0.1 or -0.1), p[3] + (p[3] < cz + 5 and 0.1 or -0.1)))
          end
        end
      end
      assert.is_near(seen[1].base + 14, seen[1].top, 1e-6)
      assert.are.equal(4, seen[1].floors)
      assert.are.equal(3, seen[2].floors)
      assert.is_near(seen[4].base + 6, seen[4].top, 1e-6)
      assert.is_nil(seen[3])
    end)

    it("gives buildings a ground floor of shop fronts on request", function()
      local doc, rep, frep = build{ nx = 2, nz = 2, spacing = 100, fill = { rng = lcg(12), margin = false,
        buildings = { floors = { 3, 4 }, floor_height = 3, ground_floor = true } } }
      assert_clean(doc, frep)
      local style = require "psdl.styles.london"
      local ground, upper = {}, {}
      for _, n in ipairs(style.facades.ground) do ground[n] = true end
      for _, n in ipairs(style.facades.upper) do upper[n] = true end
      local g, u = 0, 0
      for _, r in ipairs(rep.rooms) do
        local tex
        for _, a in ipairs(doc.rooms[r.id].attributes) do
          if a.type == "texture" then tex = doc.textures[a.value]
          elseif a.type == "facade" then
            if ground[tex] then
              g = g + 1
              assert.are.equal(1, a.v_repeat)
              assert.is_near(3, doc.heights[a.top] - doc.heights[a.bottom], 1e-4)
            else
              assert.is_true(upper[tex])
              u = u + 1
            end
          end
        end
      end
      assert.is_true(g > 0)
      assert.are.equal(g, u)
      for _, bl in ipairs(rep.building_list) do assert.is_near(bl.base + bl.floors * 3, bl.top, 1e-6) end
    end)

    it("falls back to the kernel's convex pieces, which tile the area as well", function()
      local doc, rep, frep = build{ nx = 3, nz = 2, spacing = 120, stubs = 30,
                                    fill = { rng = lcg(8), buildings = {}, split = "convex" } }
      assert_clean(doc, frep)
      assert_symmetric(doc)
      assert_tiles(doc, 4.1, rep)
      assert.are.equal(2, rep.blocks)
      assert.is_true(rep.buildings > 0)
    end)

    it("rejects bad arguments", function()
      local b = grid{ nx = 2, nz = 2 }
      assert.has_error(function() blocks.fill({}) end)
      assert.has_error(function() blocks.fill(b, { rng = 3 }) end)
      assert.has_error(function() blocks.fill(b, { buildings = { floors = { 5, 2 } } }) end)
      assert.has_error(function() blocks.fill(b, { overrides = { { park = true } } }) end)
      assert.has_error(function() blocks.fill(b, { split = "voronoi" }) end)
      assert.has_error(function() blocks.fill(b, { height = 3 }) end)
    end)
  end)
end)

describe("psdl.city.blocks apron along the roads", function()
  local city_mod = require "psdl.city"
  -- a lone straight road from (0, 0) to (d, d) with the default 30 m apron
  local function diagonal(len)
    local city = city_mod.new{ style = "london", seed = 1, max_extent = false }
    local d = len / math.sqrt(2)
    city:road(city:node(0, 0), city:node(d, d))
    city:blocks{}
    local doc, report = city:build()
    return doc, report, d
  end

  it("gives a lone long road a number of apron rooms that grows with its length, not its box", function()
    local doc1, rep1 = diagonal(1000)
    local doc3, rep3, d = diagonal(3000)
    assert.equal(0, rep1.counts.errors)
    assert.equal(0, rep3.counts.errors)
    local a1, a3 = #rep1.blocks.apron_rooms, #rep3.blocks.apron_rooms
    -- three times the length: about three times the rooms (the bounding box would need nine)
    assert.is_true(a3 >= 2 * a1 and a3 <= 4 * a1, string.format("%d apron rooms for 1 km, %d for 3 km", a1, a3))
    -- every point of the apron lies within the margin (plus the 12 m grid and the road's own
    -- half width) of the road's centre line
    for _, r in ipairs(rep3.blocks.apron_rooms) do
      for _, p in ipairs(doc3.rooms[r.id].perimeter) do
        local v = doc3.vertices[p.vertex]
        local t = math.max(0, math.min(1, (v[1] + v[3]) / (2 * d)))
        local dist = math.sqrt((v[1] - t * d) ^ 2 + (v[3] - t * d) ^ 2)
        assert.is_true(dist < 30 + 12 + 15, string.format("apron point (%.1f, %.1f) is %.1f m from the road", v[1], v[3], dist))
      end
    end
  end)

  it("joins parts of the network far apart with a strip of apron, so every road room is reachable", function()
    local city = city_mod.new{ style = "london", seed = 1 }
    city:road(city:node(0, 0), city:node(200, 0))
    city:road(city:node(0, 400), city:node(200, 400))
    city:blocks{}
    local doc, report = city:build() -- the validator's unreachable rule is an error for road rooms
    assert.equal(0, report.counts.errors)
    local _, problems = psdl.validate(doc)
    for _, p in ipairs(problems) do assert.not_equal("unreachable", p.rule, p.message) end
    -- one apron, not a rectangle: the ground between the roads is a strip, not 200 m wide
    local area = 0
    for _, r in ipairs(report.blocks.apron_rooms) do
      area = area + math.abs(plan.area2(perimeter_pts(doc, doc.rooms[r.id]))) / 2
    end
    assert.is_true(area < 0.8 * (200 + 60) * (400 + 60), string.format("apron of %.0f m²", area))
  end)

  it("gives the edge's points as the Lua loop did (core.apron_edge), and names a bad argument", function()
    local core = require "psdl.core"
    local plan = require "psdl.plan"
    local apron = require "psdl.city.blocks.apron"
    local pool = core.pool(3, true)
    local pts = { { 0, 2, 0 }, { 0, 2, 60 }, { 100, 7, 60 }, { 130, 7, 0 } }
    local refs = {}
    for i, p in ipairs(pts) do refs[i] = pool:add(p[1], p[2], p[3]) end
    local flats = core.apron_edge(pool, { refs }, {}, 30, 6, 12, 30, 40)
    -- the Lua of blocks/init.lua before: rings, points every 12 m, the nearest point's height
    local grid = plan.grid(30)
    local items = {}
    for i, r in ipairs(refs) do
      local x, y, z = pool:get(r)
      items[i] = { x, y, z }
      grid:insert_point(items[i])
    end
    local rings = apron.rings({ items }, 30, 6)
    assert.equal(#rings, #flats)
    for ri, ring in ipairs(rings) do
      local flat, n = {}, #ring
      for k = 1, n do
        local a, c = ring[k], ring[k % n + 1]
        local len = math.sqrt((c[1] - a[1]) ^ 2 + (c[2] - a[2]) ^ 2)
        local m = math.max(1, math.ceil(len / 12 - 1e-9))
        for i = 0, m - 1 do
          local t = i / m
          local x, z = a[1] + (c[1] - a[1]) * t, a[2] + (c[2] - a[2]) * t
          local p = grid:nearest(x, z, 40)
          flat[#flat + 1], flat[#flat + 2], flat[#flat + 3] = x, p and p[2] or 0, z
        end
      end
      assert.same(flat, flats[ri])
    end
    local function err(...)
      local ok, m = pcall(core.apron_edge, ...)
      assert.is_false(ok)
      return m
    end
    assert.matches("bad argument #1", err({}, { refs }, {}, 30, 6, 12, 30, 40))
    assert.matches("lists%[1%]%[2%]: vertex reference", err(pool, { { 2, 99, 3 } }, {}, 30, 6, 12, 30, 40))
    assert.matches("lists%[1%]: list of vertex references", err(pool, { refs }, { 5 }, 30, 6, 12, 30, 40))
    assert.matches("margin must be", err(pool, { refs }, {}, 0, 6, 12, 30, 40))
    assert.matches("step must be", err(pool, { refs }, {}, 30, 6, 0 / 0, 30, 40))
    assert.matches("hcell must be", err(pool, { refs }, {}, 30, 6, 12, -1, 40))
    assert.matches("distance grid would need", err(pool, { refs }, {}, 30, 1e-3, 12, 30, 40))
    assert.same({}, core.apron_edge(pool, {}, {}, 30, 6, 12, 30, 40))
    -- area and inside on references: psdl.plan's on the points
    assert.equal(plan.area2(items), core.refs_area2(pool, refs))
    assert.equal(plan.inside(items, 50, 30), core.refs_inside(pool, refs, 50, 30))
    assert.equal(plan.inside(items, 150, 30), core.refs_inside(pool, refs, 150, 30))
    assert.equal(0, core.refs_area2(pool, {}))
    assert.is_false(core.refs_inside(pool, {}, 0, 0))
    local ok, m = pcall(core.refs_area2, pool, { 1, "x" })
    assert.is_false(ok)
    assert.matches("refs%[2%]", m)
  end)

  it("computes the edge in C (core.apron_rings) and names a bad outline point", function()
    local apron = require "psdl.city.blocks.apron"
    local rings = apron.rings({ { { 0, 0, 0 }, { 100, 0, 0 }, { 100, 0, 60 }, { 0, 0, 60 } } }, 30, 6)
    assert.equal(1, #rings)
    local s = 0
    for i, p in ipairs(rings[1]) do
      local q = rings[1][i % #rings[1] + 1]
      s = s + p[1] * q[2] - q[1] * p[2]
      assert.equal(2, #p)
    end
    assert.is_true(s < 0, "retail winding")
    assert.same({}, apron.rings({}, 30, 6))
    local ok, err = pcall(apron.rings, { { { 0, 0, 0 }, { 1, 0, 0 }, { 1, 0, "x" } } }, 30, 6)
    assert.is_false(ok)
    assert.matches("outlines%[1%]%[3%]%[3%]: finite number expected", err)
    ok, err = pcall(apron.rings, { { { 0, 0, 0 }, { 1e9, 0, 0 }, { 1, 0, 1 } } }, 30, 6)
    assert.is_false(ok)
    assert.matches("distance grid would need", err)
    ok, err = pcall(apron.rings, { { { 0, 0, 0 } } }, 0, 6)
    assert.is_false(ok)
    assert.matches("margin must be", err)
  end)
end)
