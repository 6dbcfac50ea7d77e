-- Cities on terrain (issue 6, part 4): psdl.city's `terrain` option (nodes, road centre
-- lines, block ground and buildings on the ground, terrain ground rooms out to the terrain's
-- extent), psdl.terrain.from_city (a city's ground back out as a height grid),
-- `psdl terrain export CITY.psdl`, and examples/terrain_city.lua.
local psdl = require "psdl"
local cli = require "psdl.cli"
local common = require "psdl.cli.common"
local cterrain = require "psdl.city.terrain"
local plan = require "psdl.plan"
local H = require "helper"

local T = psdl.terrain
local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
local abs, sqrt, huge = math.abs, math.sqrt, math.huge

------------------------------------------------------------------------ helpers

local psdl_cli = H.cli

local q, run = H.q, H.run

-- A Terrain of rows x cols points `cell` m apart over h(x, z).
local function terrain_of(h, rows, cols, cell, origin)
  origin = origin or { x = 0, z = 0 }
  local hs = {}
  for i = 0, rows - 1 do
    for j = 0, cols - 1 do hs[#hs + 1] = h(origin.x + j * cell, origin.z + i * cell) end
  end
  return T.from_grid({ rows = rows, cols = cols, heights = hs }, { cell_size = cell, origin = origin })
end

-- The ground of the tests: a plane rising 1 m per 10 m along z (north), and the same with a
-- hill 12 m high on it.
local function plane(_, z) return 20 + 0.1 * z end
local function hill(x, z)
  local dx, dz = x - 250, z - 230
  return 20 + 0.1 * z + 12 * math.exp(-(dx * dx + dz * dz) / (2 * 70 * 70))
end

-- A town on terrain t (400 m square): 3 x 3 nodes 160 m apart, a lane curving out of the
-- north-east corner, buildings, a park.
local function town(t, opts)
  opts = opts or {}
  local o = { style = "london", seed = 9, name = "slopeton", terrain = t, terrain_opts = opts.terrain_opts }
  if opts.height then o.terrain, o.terrain_opts, o.height = nil, nil, opts.height end
  local city = psdl.city.new(o)
  local xs, zs = { 60, 220, 340 }, { 50, 210, 330 }
  local n = {}
  for i, x in ipairs(xs) do
    n[i] = {}
    for j, z in ipairs(zs) do n[i][j] = city:node(x, z) end
  end
  for i = 1, 3 do
    for j = 1, 3 do
      if i < 3 then city:road(n[i][j], n[i + 1][j], { profile = j == 2 and "avenue" or "street" }) end
      if j < 3 then city:road(n[i][j], n[i][j + 1]) end
    end
  end
  city:road(n[2][3], city:node(150, 375), { via = { { 190, 370 } }, name = "Hill Lane" })
  city:blocks{ buildings = { floors = { 2, 4 }, gap = { 0, 4 } }, overrides = { { point = { 280, 270 }, park = true } } }
  return city
end

local built = {}
-- The built towns, once: "plane", "hill", and "even" (the hill with `height =`: the old
-- behaviour, roads climbing evenly between their ends).
local function get(kind)
  if not built[kind] then
    local t = terrain_of(kind == "plane" and plane or hill, 41, 41, 10)
    local city = town(t, { height = kind == "even" and hill or nil })
    local doc, report = city:build{ strict = true }
    built[kind] = { t = t, city = city, doc = doc, report = report }
  end
  return built[kind]
end

-- Plan polygon of a room's perimeter.
local function perimeter(doc, room)
  local pts = {}
  for _, p in ipairs(room.perimeter) do pts[#pts + 1] = doc.vertices[p.vertex] end
  return pts
end

local inside = plan.inside

local function is_road(room) return (room.flags & 0x18) ~= 0 end

-- Vertices used by road and intersection rooms.
local function road_vertices(doc)
  local set, list = {}, {}
  for _, room in ipairs(doc.rooms) do
    if is_road(room) then
      for _, a in ipairs(room.attributes) do
        for _, v in ipairs(a.vertices or {}) do
          if not set[v] then set[v] = true; list[#list + 1] = doc.vertices[v] end
        end
      end
    end
  end
  return set, list
end

local seg_dist = plan.seg_dist

-- A test "is (x, z) within r metres of a road or intersection room (or inside one)?" over
-- the rooms' perimeters, binned in cells of r.
local function near_roads(doc, r)
  local cells, rooms = {}, {}
  for _, room in ipairs(doc.rooms) do
    if is_road(room) then
      local pts = perimeter(doc, room)
      rooms[#rooms + 1] = pts
      for i = 1, #pts do
        local a, b = pts[i], pts[i % #pts + 1]
        for cx = math.floor((math.min(a[1], b[1]) - r) / r), math.floor((math.max(a[1], b[1]) + r) / r) do
          for cz = math.floor((math.min(a[3], b[3]) - r) / r), math.floor((math.max(a[3], b[3]) + r) / r) do
            local k = cx * 100003 + cz
            cells[k] = cells[k] or {}
            table.insert(cells[k], { a[1], a[3], b[1], b[3] })
          end
        end
      end
    end
  end
  return function(x, z)
    for _, s in ipairs(cells[math.floor(x / r) * 100003 + math.floor(z / r)] or {}) do
      if seg_dist(x, z, s[1], s[2], s[3], s[4]) <= r then return true end
    end
    for _, pts in ipairs(rooms) do if inside(pts, x, z) then return true end end
    return false
  end
end

-- Centre-line points of the road rooms: {x, y, z, curb_l_y, curb_r_y}.
local function centre_points(doc)
  local V, out = doc.vertices, {}
  for _, room in ipairs(doc.rooms) do
    if (room.flags & 0x08) ~= 0 and (room.flags & 0x10) == 0 then
      for _, a in ipairs(room.attributes) do
        local stride, l, r
        if a.type == "road" then stride, l, r = 4, 2, 3 elseif a.type == "divided_road" then stride, l, r = 6, 3, 4 end
        if stride then
          for k = 0, #a.vertices - stride, stride do
            local pl, pr = V[a.vertices[k + l]], V[a.vertices[k + r]]
            out[#out + 1] = { (pl[1] + pr[1]) / 2, (pl[2] + pr[2]) / 2, (pl[3] + pr[3]) / 2, pl[2], pr[2],
                              V[a.vertices[k + 1]][2], V[a.vertices[k + stride]][2] }
          end
        end
      end
    end
  end
  return out
end

-- Height of a room's ground fans at (x, z) (nil outside them).
local function ground_at(doc, room, x, z)
  local V = doc.vertices
  for _, a in ipairs(room.attributes) do
    if a.type == "fan" then
      local h = V[a.vertices[1]]
      for k = 2, #a.vertices - 1 do
        local p, c = V[a.vertices[k]], V[a.vertices[k + 1]]
        local d = (p[3] - c[3]) * (h[1] - c[1]) + (c[1] - p[1]) * (h[3] - c[3])
        if abs(d) > 1e-12 then
          local l1 = ((p[3] - c[3]) * (x - c[1]) + (c[1] - p[1]) * (z - c[3])) / d
          local l2 = ((c[3] - h[3]) * (x - c[1]) + (h[1] - c[1]) * (z - c[3])) / d
          local l3 = 1 - l1 - l2
          if l1 >= -1e-6 and l2 >= -1e-6 and l3 >= -1e-6 then return l1 * h[2] + l2 * p[2] + l3 * c[2] end
        end
      end
    end
  end
  return nil
end

local function node_distance(city, x, z)
  local best = huge
  for _, n in ipairs(city.nodes) do best = math.min(best, sqrt((n.x - x) ^ 2 + (n.z - z) ^ 2)) end
  return best
end

------------------------------------------------------------------------ specs

describe("cities on terrain", function()
  describe("the terrain option", function()
    it("a city on a sloped plane and one on a hill validate strictly: 0 errors, 0 warnings", function()
      for _, kind in ipairs { "plane", "hill" } do
        local b = get(kind)
        assert.same({ errors = 0, warnings = 0 }, b.report.counts)
        -- and again from the bytes, as the game would read them
        local doc = assert(psdl.decode(psdl.encode(b.doc)))
        local good, problems, counts = psdl.validate(doc, { strict = true })
        assert.is_true(good, problems[1] and (problems[1].path .. ": " .. problems[1].message))
        assert.same({ errors = 0, warnings = 0 }, counts)
        for _, room in ipairs(doc.rooms) do assert.is_true(#room.perimeter <= 255) end
        local tr = b.report.terrain
        assert.is_table(tr)
        assert.same({ 0, 0, 400, 400 }, tr.extent)
        assert.is_true(tr.rooms > 0 and tr.apron_rooms > 0, "terrain and apron rooms")
        assert.matches("terrain: ground out to x 0..400, z 0..400: %d+ apron rooms, %d+ grid rooms %(10 m cells%)",
          psdl.city.summary(b.report))
      end
    end)

    it("puts every node on the terrain, and road centre lines on it between the flat intersections", function()
      for _, kind in ipairs { "plane", "hill" } do
        local b = get(kind)
        for _, n in ipairs(b.city.nodes) do assert.near(b.t:height(n.x, n.z), n.y, 1e-9) end
        local far, all = 0, 0
        for _, p in ipairs(centre_points(b.doc)) do
          local d = abs(p[2] - b.t:height(p[1], p[3]))
          -- cross-sections are level: both curbs (medians) at the same height, straight across
          assert.near(p[4], p[5], 1e-4)
          -- the outer points are the curb raised by the sidewalk's 0.15 m, or the curb itself
          for _, y in ipairs { p[6], p[7] } do
            assert.is_true(abs(y - p[4] - 0.15) < 1e-3 or abs(y - p[4]) < 1e-3)
          end
          if node_distance(b.city, p[1], p[3]) > 50 then
            far = far + 1
            assert.is_true(d < 0.01, string.format("%s: centre (%.1f, %.1f) %.3f m off the ground", kind, p[1], p[3], d))
          end
          all = all + 1
          -- near an intersection the road leaves the flat room's level and meets the ground
          -- within the blend (30 m): never further off than the slope over that distance
          assert.is_true(d < 0.25 * 50, string.format("%.2f m off", d))
        end
        assert.is_true(far >= 20, "centre points away from the intersections: " .. far)
        assert.is_true(all > far)
      end
    end)

    it("makes roads follow the ground where `height =` only lifts their ends (existing callers unchanged)", function()
      local even, hilly = get("even"), get("hill")
      assert.is_nil(even.report.terrain)
      assert.is_nil(even.city.drape)
      local worst_even, worst = 0, 0
      for _, p in ipairs(centre_points(even.doc)) do
        if node_distance(even.city, p[1], p[3]) > 50 then
          worst_even = math.max(worst_even, abs(p[2] - hill(p[1], p[3])))
        end
      end
      for _, p in ipairs(centre_points(hilly.doc)) do
        if node_distance(hilly.city, p[1], p[3]) > 50 then worst = math.max(worst, abs(p[2] - hill(p[1], p[3]))) end
      end
      assert.is_true(worst_even > 0.5, "with height = the roads cut through the hill: " .. worst_even)
      assert.is_true(worst < 0.05, "on the terrain they follow it: " .. worst)
    end)

    it("lays block ground on the terrain; buildings stand on it, with slivers where it slopes under a facade", function()
      for _, kind in ipairs { "plane", "hill" } do
        local b = get(kind)
        local doc, V = b.doc, b.doc.vertices
        local roadv = road_vertices(doc)
        local near = near_roads(doc, 20)
        local checked, facades, slivers, sloped, feet = 0, 0, 0, 0, 0
        for _, room in ipairs(doc.rooms) do
          if not is_road(room) then
            local sliver_at, lowest = {}, {}
            for _, a in ipairs(room.attributes) do
              if a.type == "fan" then
                for _, v in ipairs(a.vertices) do
                  if not roadv[v] then
                    local p = V[v]
                    assert.is_true(abs(p[2] - b.t:height(p[1], p[3])) < 1e-3,
                      string.format("%s: ground vertex (%.1f, %.2f, %.1f) off the terrain", kind, p[1], p[2], p[3]))
                    checked = checked + 1
                  end
                end
              elseif a.type == "sliver" then
                sliver_at[a.vertices[1] .. ":" .. a.vertices[2]] = doc.heights[a.top]
                slivers = slivers + 1
              elseif a.type == "facade" then
                local key = a.vertices[1] .. ":" .. a.vertices[2]
                local bottom = doc.heights[a.bottom]
                if not lowest[key] or bottom < lowest[key] then lowest[key] = bottom end
                facades = facades + 1
              end
            end
            for key, bottom in pairs(lowest) do
              local va, vb = key:match("^(%d+):(%d+)$")
              local pa, pb = V[tonumber(va)], V[tonumber(vb)]
              -- the facade's foot is on the block's ground (the terrain, but for a ramp of up
              -- to two cells to the roads' level edges), to the millimetre, and the facade
              -- starts at or above it
              for _, p in ipairs { pa, pb } do
                local y = ground_at(doc, room, p[1], p[3])
                assert.is_number(y, "a facade foot outside its room's ground")
                assert.is_true(abs(p[2] - y) < 2e-3, string.format("foot %.3f, ground %.3f", p[2], y))
                if not near(p[1], p[3]) then
                  assert.is_true(abs(p[2] - b.t:height(p[1], p[3])) < (kind == "plane" and 0.002 or 0.3))
                end
                feet = feet + 1
                assert.is_true(bottom >= p[2] - 1e-3)
              end
              if math.min(pa[2], pb[2]) < bottom - 1e-3 then
                sloped = sloped + 1
                assert.is_number(sliver_at[key], "a facade over sloping ground without a sliver")
                assert.near(bottom, sliver_at[key], 1e-3)
              end
            end
          end
        end
        assert.is_true(checked > 500, "ground vertices checked: " .. checked)
        assert.is_true(feet > 50, "facade feet away from the roads: " .. feet)
        assert.is_true(facades > 100 and sloped > 50 and slivers >= sloped,
          string.format("%s: %d facades, %d over sloping ground, %d slivers", kind, facades, sloped, slivers))
        assert.is_true(b.report.blocks.buildings > 20)
      end
    end)

    it("covers the terrain with rooms: each sample point lies in exactly one room", function()
      for _, kind in ipairs { "plane", "hill" } do
        local b = get(kind)
        local doc = b.doc
        local polys = {}
        for r, room in ipairs(doc.rooms) do polys[r] = perimeter(doc, room) end
        local n = 0
        for i = 0, 52 do
          for j = 0, 52 do
            local x, z = 0.37 + i * 7.5631, 0.21 + j * 7.5517
            if x < 400 and z < 400 then
              local count, which = 0, {}
              for r, pts in ipairs(polys) do
                if inside(pts, x, z) then count = count + 1; which[#which + 1] = r end
              end
              assert.equal(1, count, string.format("%s: (%.2f, %.2f) lies in rooms {%s}", kind, x, z,
                table.concat(which, ", ")))
              n = n + 1
            end
          end
        end
        assert.is_true(n > 2500)
      end
    end)

    it("builds terrain grid rooms on the terrain, sharing every point of their inner edge with the apron", function()
      local b = get("hill")
      local doc, tr = b.doc, b.report.terrain
      local rx0, rz0, rx1, rz1 = tr.rect[1], tr.rect[2], tr.rect[3], tr.rect[4]
      local names = {}
      for r, room in ipairs(b.report.builder.rooms) do names[room.id or r] = room.name end
      local apron, grid = {}, {}
      local ngrid = 0
      for r, room in ipairs(doc.rooms) do
        local nm = names[r] or ""
        if nm:match("^terrain %d+$") then
          ngrid = ngrid + 1
          assert.equal(0x04, room.flags & 0x1C)
          for _, a in ipairs(room.attributes) do
            if a.type == "fan" then
              assert.equal(4, #a.vertices) -- one cell: four corners on the terrain
              for _, v in ipairs(a.vertices) do
                local p = doc.vertices[v]
                assert.near(b.t:height(p[1], p[3]), p[2], 1e-4)
              end
            end
          end
          for _, p in ipairs(room.perimeter) do grid[p.vertex] = true end
        elseif nm:match("^apron %d+$") then
          for _, p in ipairs(room.perimeter) do apron[p.vertex] = true end
        end
      end
      assert.equal(tr.rooms, ngrid)
      local on_ring = 0
      for v in pairs(grid) do
        local p = doc.vertices[v]
        local onx = (abs(p[1] - rx0) < 1e-6 or abs(p[1] - rx1) < 1e-6) and p[3] >= rz0 - 1e-6 and p[3] <= rz1 + 1e-6
        local onz = (abs(p[3] - rz0) < 1e-6 or abs(p[3] - rz1) < 1e-6) and p[1] >= rx0 - 1e-6 and p[1] <= rx1 + 1e-6
        if onx or onz then
          on_ring = on_ring + 1
          assert.is_true(apron[v], string.format("ring point (%.1f, %.1f) is not an apron perimeter vertex", p[1], p[3]))
        end
      end
      assert.is_true(on_ring >= 40, "ring points " .. on_ring)
    end)

    it("exports the city's ground back: the terrain again away from the roads, in the same orientation", function()
      for _, kind in ipairs { "plane", "hill" } do
        local b = get(kind)
        local g, info = T.from_city(b.doc, { like = b.t })
        assert.is_table(g)
        assert.same({ b.t.rows, b.t.cols, b.t.cell_size }, { g.rows, g.cols, g.cell_size })
        assert.equal(0, info.filled)
        local near = near_roads(b.doc, 20)
        local n, worst = 0, 0
        for i = 0, g.rows - 1 do
          for j = 0, g.cols - 1 do
            local x, z = j * 10, i * 10
            -- near a road the ground ramps to the road's level edges (flat intersections,
            -- level cross-sections) over up to two cells; further out (under buildings too:
            -- roofs do not count) it is the terrain
            if not near(x, z) then
              local d = abs(g:point(i, j) - b.t:point(i, j))
              worst = math.max(worst, d)
              n = n + 1
            end
          end
        end
        assert.is_true(n > 700, "points compared: " .. n)
        assert.is_true(worst < (kind == "plane" and 0.005 or 0.3), kind .. ": worst " .. worst)
      end
      -- orientation: the plane's gradient runs along z (rows) in the grid, the NHTG and the PNG
      local b = get("plane")
      local g = assert(T.from_city(b.city, { cell = 10 })) -- a City works too; origin from the ground
      assert.same({ 0, 0, 41, 41 }, { g.origin.x, g.origin.z, g.rows, g.cols })
      local along_z, along_x = 0, 0
      for i = 0, 39 do
        for j = 0, 39 do
          along_z = along_z + (g:point(i + 1, j) - g:point(i, j))
          along_x = along_x + (g:point(i, j + 1) - g:point(i, j))
        end
      end
      assert.near(1.0, along_z / 1600, 0.02) -- 1 m per 10 m cell along z
      assert.near(0.0, along_x / 1600, 0.02)
      local nhtg = assert(g:to_nhtg())
      local back = assert(T.load(T.encode_nhtg(nhtg), { bytes = true }))
      assert.near(g:point(39, 2), back:point(39, 2), 1e-4)
      assert.near(20 + 0.1 * 390, back:point(39, 2), 0.005)
      local png = assert(T.encode_heightmap(g, { format = "png" }))
      local img = assert(T.load(png, { bytes = true }))
      assert.equal(10, img.cell_size)
      assert.near(20 + 0.1 * 385, img:height(20, 385), 0.01)
      assert.near(20 + 0.1 * 2, img:height(20, 2), 0.01)
    end)

    it("psdl terrain export CITY.psdl writes the ground as a PNG or an NHTG", function()
      local b = get("hill")
      local src, png, nhtg = H.tmpname(".psdl"), H.tmpname(".png"), H.tmpname(".nhtg")
      finally(function() os.remove(src); os.remove(png); os.remove(nhtg) end)
      assert(psdl.write(b.doc, src))
      local code, _, err = psdl_cli("terrain", "export", src, "-o", png)
      assert.equal(0, code, err)
      assert.matches("41 x 41 points %(cell 10 m, origin x 0, z 0%)", err)
      local t = assert(T.load(png))
      assert.same({ 41, 41, 10 }, { t.rows, t.cols, t.cell_size })
      assert.near(hill(0, 200), t:height(0, 200), 0.01) -- grid room corners: exact
      assert.near(hill(400, 100), t:height(400, 100), 0.01)
      code, _, err = psdl_cli("terrain", "export", src, "-o", nhtg, "--cell-size", "5")
      assert.equal(0, code, err)
      local n = assert(T.decode_nhtg(H.read_bytes(nhtg)))
      assert.same({ 81, 81 }, { n.rows, n.cols })
      assert.near(hill(395, 5), n.heights[1 * 81 + 79 + 1], 0.01) -- point (i = 1, j = 79): x 395, z 5
      code, _, err = psdl_cli("terrain", "export", "--help")
      assert.equal(0, code)
    end)
  end)

  describe("options and odd layouts", function()
    it("checks the options", function()
      local t = terrain_of(plane, 5, 5, 10)
      local function raises(o, text)
        local ok, err = pcall(psdl.city.new, o)
        assert.is_false(ok)
        assert.matches(text, tostring(err), 1, true)
      end
      raises({ terrain = t, height = plane }, "height or terrain, not both")
      raises({ terrain = 3 }, "terrain: a psdl.terrain Terrain or a function")
      raises({ terrain = plane, terrain_opts = { extent = "terrain" } }, "needs a psdl.terrain Terrain")
      raises({ terrain = t, terrain_opts = { cell = -1 } }, "terrain_opts.cell: a positive number")
      raises({ terrain = t, terrain_opts = { colour = 1 } }, "unknown option 'colour'")
      raises({ terrain_opts = {} }, "terrain_opts: only with terrain")
      local s = cterrain.setup(t, { blend = 0 })
      assert.equal(0, s.blend)
      assert.same({ 0, 0, 40, 40 }, s.extent)
    end)

    it("drapes a centre line: ends and explicit heights kept, faded into the ground over the blend", function()
      local samples, ctrl = {}, {}
      for k = 0, 10 do samples[#samples + 1] = { 10 * k, 0, 0 } end
      samples[1][2], samples[11][2] = 5, -4
      ctrl = { { 0, 5, 0 }, { 50, 5, 0 }, { 100, -4, 0 } } -- ends at 5 and -4; the middle on the ground
      cterrain.drape(samples, ctrl, function(x) return x / 10 end, 30)
      assert.near(5, samples[1][2], 1e-9)          -- the start: 5 (ground 0)
      assert.near(1 + 5 * (2 / 3), samples[2][2], 1e-9) -- 10 m in: a third of the way
      assert.near(3, samples[4][2], 1e-9)          -- 30 m: the ground
      assert.near(6, samples[7][2], 1e-9)
      assert.near(-4, samples[11][2], 1e-9)        -- the end: -4 (ground 10)
      assert.near(9 - 14 * 2 / 3, samples[10][2], 1e-9)
      -- a via point with its own height is kept too
      for _, p in ipairs(samples) do p[2] = p[1] / 10 end
      cterrain.drape(samples, { { 0, 0, 0 }, { 50, 20, 0 }, { 100, 10, 0 } }, function(x) return x / 10 end, 30)
      assert.near(20, samples[6][2], 1e-9)
      assert.near(3 + 15 * (1 - 20 / 25), samples[4][2], 1e-9)
    end)

    it("a terrain function with the margin only; a network larger than the terrain, with a tunnel and a bridge",
      function()
      local function wavy(x, z) return 20 + 0.1 * z + 6 * math.sin(x / 70) end
      local t = terrain_of(wavy, 21, 21, 25, { x = 100, z = 0 }) -- x 100..600: the city starts west of it
      for _, mode in ipairs { "terrain", "margin", "function" } do
        local o = { seed = 2, name = "wavy", terrain = t, terrain_opts = { extent = mode } }
        if mode == "function" then o.terrain, o.terrain_opts = wavy, nil end
        local city = psdl.city.new(o)
        local a, b, c, d = city:node(50, 100), city:node(300, 100), city:node(300, 350), city:node(50, 350)
        local e, g = city:node(550, 100), city:node(550, 350)
        city:road(a, b); city:road(b, c); city:road(c, d); city:road(d, a); city:road(e, g)
        city:road(b, e, { bridge = { height = 8, ramp = 60 } })
        city:road(g, c, { tunnel = { depth = 9, ramp = 60 } })
        city:blocks{ buildings = { floors = { 2, 3 } } }
        local doc, report = city:build{ strict = true }
        assert.same({ errors = 0, warnings = 0 }, report.counts, mode)
        assert.equal(1, report.kinds.tunnel)
        assert.equal(1, report.kinds.bridge)
        local tr = report.terrain
        if mode == "terrain" then
          -- the ground reaches the terrain's far edges, and west beyond it to hold the city
          assert.same({ 0, 0, 600, 500 }, tr.extent)
          assert.is_true(tr.rooms > 0)
        else
          assert.equal(0, tr.rooms) -- only the apron, out to the margin snapped to the grid
          assert.is_true(tr.extent[1] <= 50 - 40 and tr.extent[3] >= 550 + 40)
        end
        -- nodes on the ground (the terrain's edge extended beyond it)
        for _, n in ipairs(city.nodes) do
          assert.near(mode == "function" and wavy(n.x, n.z) or t:height(n.x, n.z), n.y, 1e-9)
        end
        assert.is_table(doc)
      end
    end)

    it("keeps its ground grid within max_points by coarsening it", function()
      local t = terrain_of(plane, 101, 101, 10) -- 1 km square, 10 201 points
      local city = psdl.city.new{ seed = 1, terrain = t, terrain_opts = { max_points = 3000 } }
      city:road(city:node(400, 400), city:node(600, 400))
      local _, report = city:build{ strict = true }
      assert.same({ errors = 0, warnings = 0 }, report.counts)
      assert.equal(20, report.terrain.cell)
      assert.is_true(report.terrain.grid[1] * report.terrain.grid[2] <= 3000)
    end)
  end)

  describe("examples/terrain_city.lua", function()
    it("builds a town on a heightmap that validates strictly (psdl build), and runs on its own", function()
      local out, map = H.tmpname(".psdl"), H.tmpname(".png")
      finally(function() os.remove(out); os.remove(map) end)
      local code, stdout, err = psdl_cli("build", "examples/terrain_city.lua", "-o", out, "--preview", map, "--strict")
      assert.equal(0, code, err)
      assert.matches("validation: 0 errors, 0 warnings", stdout)
      assert.matches("terrain: ground out to x 0..640, z 0..640", stdout)
      assert.matches("blocks: 12 blocks, %d+ buildings, 1 parks", stdout)
      local doc = assert(psdl.read(out))
      assert.same({ errors = 0, warnings = 0 }, select(3, psdl.validate(doc, { strict = true })))
      local f = assert(io.open(map, "rb"))
      assert.equal("\137PNG", f:read(4))
      f:close()
      -- on its own: writes the same city and compares its ground with the heightmap
      local out2 = H.tmpname(".psdl")
      finally(function() os.remove(out2) end)
      local log, ok = run("PSDL_BUILD_DIR=" .. q(build_dir) .. " lua5.4 examples/terrain_city.lua " .. q(out2))
      assert.is_true(ok, log)
      assert.matches("ground exported back: %d+ of 4225 points within 0.25 m", log)
      assert.equal(H.read_bytes(out), H.read_bytes(out2))
    end)
  end)
end)
