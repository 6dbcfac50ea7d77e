--- Random-network fuzz of city generation: jittered, skewed, curvy towns with mixed road
-- profiles (streets, one-sided streets, alleys, walkways, avenues, boulevards), missing
-- block sides (T junctions, dead ends), diagonals (skewed five- and six-arm junctions),
-- bridges and tunnels over the grid and building footprints, imported the way
-- `psdl osm` imports a real extract (OSM data → `psdl.osm.network` → `psdl.city`), then
-- built and checked:
--
-- * the build does not raise;
-- * validation: no errors (warnings are counted and listed);
-- * no two ordinary (non-warp) rooms overlap in plan: every perimeter point and the
--   centroid of every triangle of every perimeter lie inside no other ordinary room;
-- * no perimeter has more than 255 points.
--
--     lua5.4 bench/city_fuzz.lua [FIRST [LAST]] [--size N] [--mode osm|network] [-v]
--
-- runs seeds FIRST..LAST (default 1..50) and prints one line per failing seed and a tally.
-- As a library (`dofile`): `generate(seed, opts)` → OSM data table, `network(seed, opts)` →
-- a network table (docs/network.md), `run(seed, opts)` → result, `check(doc)` → problems.

local M = {}

local LAT0, LON0 = 48.85, 2.35
local M_PER_DEG_LAT = 111320
local M_PER_DEG_LON = 111320 * math.cos(math.rad(LAT0))

-- A small deterministic generator (xorshift), independent of math.random.
local function rng(seed)
  local s = (seed * 2654435761 + 12345) & 0xffffffff
  if s == 0 then s = 1 end
  local r = {}
  function r.u()
    s = s ~ ((s << 13) & 0xffffffff)
    s = s ~ (s >> 17)
    s = s ~ ((s << 5) & 0xffffffff)
    return (s & 0xffffff) / 0x1000000
  end
  function r.range(a, b) return a + (b - a) * r.u() end
  function r.int(a, b) return a + math.floor(r.u() * (b - a + 1)) end
  function r.chance(p) return r.u() < p end
  function r.pick(list) return list[r.int(1, #list)] end
  return r
end
M.rng = rng

local CLASSES = {
  { "residential", 30 }, { "tertiary", 10 }, { "secondary", 8 }, { "primary", 6 }, { "unclassified", 6 },
  { "service", 10 }, { "living_street", 4 }, { "footway", 8 }, { "trunk", 3 },
}

local function weighted(r, list)
  local total = 0
  for _, e in ipairs(list) do total = total + e[2] end
  local x = r.u() * total
  for _, e in ipairs(list) do
    x = x - e[2]
    if x <= 0 then return e[1] end
  end
  return list[#list][1]
end

--- Generate a random town as OSM data (what `psdl.osm.read` returns).
-- @tparam integer seed
-- @tparam[opt] table opts `size` (grid cells per side, default 4..6 drawn), `buildings`
-- (default true)
-- @treturn table data
-- @treturn table info what was drawn
function M.generate(seed, opts)
  opts = opts or {}
  local r = rng(seed)
  local cols = opts.size or r.int(3, 6)
  local rows = opts.size or r.int(3, 6)
  local B = r.range(70, 140)                 -- block size
  local jitter = r.range(0, 0.22) * B        -- node jitter
  local shear = r.range(-0.6, 0.6)           -- skew of the grid
  local rot = r.range(0, math.pi)
  local curvy = r.range(0, 0.12)             -- via point offset, fraction of the side
  local drop = r.range(0, 0.2)               -- missing block sides
  local cr, sr = math.cos(rot), math.sin(rot)
  local data = { nodes = {}, node_tags = {}, ways = {}, relations = {},
                 counts = { nodes = 0, ways = 0, relations = 0, deleted = 0 }, name = "fuzz " .. seed }
  local info = { seed = seed, cols = cols, rows = rows, block = B, jitter = jitter, shear = shear, curvy = curvy,
                 drop = drop, ways = 0, bridges = 0, tunnels = 0, diagonals = 0, buildings = 0 }
  local next_id = 1
  local minlat, minlon, maxlat, maxlon = math.huge, math.huge, -math.huge, -math.huge
  local function node(x, z)
    local id = next_id
    next_id = next_id + 1
    local X, Z = x * cr - z * sr, x * sr + z * cr
    local lat, lon = LAT0 + Z / M_PER_DEG_LAT, LON0 + X / M_PER_DEG_LON
    data.nodes[id] = { lat, lon }
    data.counts.nodes = data.counts.nodes + 1
    minlat, maxlat = math.min(minlat, lat), math.max(maxlat, lat)
    minlon, maxlon = math.min(minlon, lon), math.max(maxlon, lon)
    return id
  end
  local function way(refs, tags)
    local id = next_id
    next_id = next_id + 1
    data.ways[#data.ways + 1] = { id = id, nds = refs, tags = tags, line = #data.ways + 1 }
    data.counts.ways = data.counts.ways + 1
    info.ways = info.ways + 1
    return id
  end
  local function road_tags(class)
    local t = { highway = class }
    if r.chance(0.15) and class ~= "footway" then t.oneway = "yes" end
    if r.chance(0.2) then t.lanes = tostring(r.pick({ 1, 2, 2, 3, 4 })) end
    if r.chance(0.2) and class ~= "footway" and class ~= "service" then
      t.sidewalk = r.pick({ "left", "right", "none", "both" })
    end
    if r.chance(0.5) then t.name = class .. " " .. r.int(1, 40) end
    return t
  end
  -- grid positions, sheared and jittered
  local P = {}
  for i = 0, cols do
    P[i] = {}
    for j = 0, rows do
      local x = i * B + shear * j * B + r.range(-jitter, jitter)
      local z = j * B + r.range(-jitter, jitter)
      P[i][j] = { x, z }
    end
  end
  local ids = {}
  for i = 0, cols do
    ids[i] = {}
    for j = 0, rows do ids[i][j] = node(P[i][j][1], P[i][j][2]) end
  end
  -- a side from grid point a to b: shape points bent sideways
  local function side(a, b, pa, pb, class)
    if r.chance(drop) then return end
    local refs = { a }
    local nvia = r.int(0, 3)
    local dx, dz = pb[1] - pa[1], pb[2] - pa[2]
    local len = math.sqrt(dx * dx + dz * dz)
    local nx, nz = -dz / len, dx / len
    local bend = r.range(-curvy, curvy) * len
    for k = 1, nvia do
      local t = k / (nvia + 1)
      local off = bend * math.sin(math.pi * t) + r.range(-0.5, 0.5)
      refs[#refs + 1] = node(pa[1] + dx * t + nx * off, pa[2] + dz * t + nz * off)
    end
    refs[#refs + 1] = b
    way(refs, road_tags(class))
  end
  -- rows and columns: a class per line (main roads run through), some sides different
  for j = 0, rows do
    local class = weighted(r, CLASSES)
    for i = 0, cols - 1 do
      side(ids[i][j], ids[i + 1][j], P[i][j], P[i + 1][j], r.chance(0.25) and weighted(r, CLASSES) or class)
    end
  end
  for i = 0, cols do
    local class = weighted(r, CLASSES)
    for j = 0, rows - 1 do
      side(ids[i][j], ids[i][j + 1], P[i][j], P[i][j + 1], r.chance(0.25) and weighted(r, CLASSES) or class)
    end
  end
  -- diagonals through a cell (skewed junctions at both ends)
  for _ = 1, r.int(0, 2) do
    local i, j = r.int(0, cols - 1), r.int(0, rows - 1)
    local flip = r.chance(0.5)
    local a, b = flip and { i + 1, j } or { i, j }, flip and { i, j + 1 } or { i + 1, j + 1 }
    side(ids[a[1]][a[2]], ids[b[1]][b[2]], P[a[1]][a[2]], P[b[1]][b[2]], weighted(r, CLASSES))
    info.diagonals = info.diagonals + 1
  end
  -- a bridge or a tunnel across a grid line, with no shared node
  for _ = 1, r.int(0, 1) do
    local i, j = r.int(0, cols - 1), r.int(1, rows - 1)
    local pa, pb = P[i][j - 1], P[i + 1][j]
    local c = { (P[i][j][1] + P[i + 1][j][1]) / 2, (P[i][j][2] + P[i + 1][j][2]) / 2 }
    local bridge = r.chance(0.5)
    local ax, az = (pa[1] + c[1]) / 2, (pa[2] + c[2]) / 2
    local bx, bz = 2 * c[1] - ax, 2 * c[2] - az
    local t = road_tags(r.pick({ "residential", "tertiary", "primary", "service" }))
    t.oneway = nil
    if bridge then t.bridge, t.layer = "yes", "1" else t.tunnel, t.layer = "yes", "-1" end
    way({ node(ax, az), node(c[1], c[2]), node(bx, bz) }, t)
    if bridge then info.bridges = info.bridges + 1 else info.tunnels = info.tunnels + 1 end
  end
  -- buildings: a few rectangles inside cells
  if opts.buildings ~= false then
    for i = 0, cols - 1 do
      for j = 0, rows - 1 do
        for _ = 1, r.int(0, 3) do
          local u, v = r.range(0.25, 0.75), r.range(0.25, 0.75)
          local function at(s, t)
            local p00, p10, p01, p11 = P[i][j], P[i + 1][j], P[i][j + 1], P[i + 1][j + 1]
            local x = (1 - s) * (1 - t) * p00[1] + s * (1 - t) * p10[1] + (1 - s) * t * p01[1] + s * t * p11[1]
            local z = (1 - s) * (1 - t) * p00[2] + s * (1 - t) * p10[2] + (1 - s) * t * p01[2] + s * t * p11[2]
            return x, z
          end
          local w, d = r.range(0.05, 0.2), r.range(0.05, 0.2)
          local refs = {}
          for _, q in ipairs({ { -w, -d }, { w, -d }, { w, d }, { -w, d } }) do
            refs[#refs + 1] = node(at(u + q[1], v + q[2]))
          end
          refs[#refs + 1] = refs[1]
          local tags = { building = "yes" }
          if r.chance(0.6) then tags["building:levels"] = tostring(r.int(1, 8)) end
          way(refs, tags)
          info.buildings = info.buildings + 1
        end
      end
    end
  end
  local pad = 0.0003
  data.bounds = { minlat = minlat - pad, minlon = minlon - pad, maxlat = maxlat + pad, maxlon = maxlon + pad }
  return data, info
end

--- A random town as a cleaned network (`psdl.osm.network` of `generate`).
-- @treturn table network
-- @treturn table import report
-- @treturn table info
function M.network(seed, opts)
  opts = opts or {}
  local osm = require "psdl.osm"
  local data, info = M.generate(seed, opts)
  local net, report = osm.network(data, { walkways = opts.walkways ~= false, scale = opts.scale })
  return net, report, info
end

------------------------------------------------------------------------ checks

local function perimeter_poly(doc, room)
  local poly, last = {}, nil
  for _, p in ipairs(room.perimeter) do
    if p.vertex ~= last then
      local v = doc.vertices[p.vertex]
      poly[#poly + 1] = { v[1], v[3] }
      last = p.vertex
    end
  end
  if #poly > 1 and room.perimeter[1].vertex == last then poly[#poly] = nil end
  return poly
end

local function seg_dist(px, pz, a, b)
  local dx, dz = b[1] - a[1], b[2] - a[2]
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and math.max(0, math.min(1, ((px - a[1]) * dx + (pz - a[2]) * dz) / l2)) or 0
  local ex, ez = a[1] + t * dx - px, a[2] + t * dz - pz
  return math.sqrt(ex * ex + ez * ez)
end

-- Strictly inside (crossing number), false within `eps` of the boundary.
local function inside(px, pz, poly, eps)
  local n, c = #poly, false
  for i = 1, n do
    local a, b = poly[i], poly[i % n + 1]
    if seg_dist(px, pz, a, b) < (eps or 1e-3) then return false end
    if (a[2] > pz) ~= (b[2] > pz) then
      local x = a[1] + (pz - a[2]) * (b[1] - a[1]) / (b[2] - a[2])
      if px < x then c = not c end
    end
  end
  return c
end
M.inside = inside

local WARP = 0x40

--- Problems of a built document: overlapping ordinary rooms, perimeters over 255 points.
-- @tparam table doc
-- @tparam[opt] table opts `limit` (problems listed, default 20), `eps` (boundary tolerance,
-- metres, default 1 mm)
-- @treturn table list of strings
function M.check(doc, opts)
  opts = opts or {}
  local geom = require "psdl.geom"
  local limit, eps = opts.limit or 20, opts.eps or 1e-3
  local L = opts.label or function(i) return tostring(i - 1) end
  local bad = {}
  local function add(s) if #bad < limit then bad[#bad + 1] = s end end
  local cell, grid, polys, boxes = 40, {}, {}, {}
  for r, room in ipairs(doc.rooms) do
    if #room.perimeter > 255 then add(string.format("room %s: %d perimeter points", L(r), #room.perimeter)) end
    if room.flags & WARP == 0 then
      local poly = perimeter_poly(doc, room)
      polys[r] = poly
      local x0, z0, x1, z1 = math.huge, math.huge, -math.huge, -math.huge
      for _, p in ipairs(poly) do
        x0, x1 = math.min(x0, p[1]), math.max(x1, p[1])
        z0, z1 = math.min(z0, p[2]), math.max(z1, p[2])
      end
      boxes[r] = { x0, z0, x1, z1 }
      for i = math.floor(x0 / cell), math.floor(x1 / cell) do
        for j = math.floor(z0 / cell), math.floor(z1 / cell) do
          local k = i * 100003 + j
          local g = grid[k]
          if not g then g = {}; grid[k] = g end
          g[#g + 1] = r
        end
      end
    end
  end
  local function find(x, z)
    local out = {}
    for _, r in ipairs(grid[math.floor(x / cell) * 100003 + math.floor(z / cell)] or {}) do
      local b = boxes[r]
      if x >= b[1] and x <= b[3] and z >= b[2] and z <= b[4] and inside(x, z, polys[r], eps) then out[#out + 1] = r end
    end
    return out
  end
  local seen = {}
  for r, poly in pairs(polys) do
    local pts = {}
    for i, p in ipairs(poly) do
      pts[i] = { p[1], 0, p[2] }
      for _, o in ipairs(find(p[1], p[2])) do
        if o ~= r and not seen[r .. ":" .. o] then
          seen[r .. ":" .. o] = true
          local d = math.huge
          local q = polys[o]
          for k = 1, #q do d = math.min(d, seg_dist(p[1], p[2], q[k], q[k % #q + 1])) end
          add(string.format("room %s's point (%.2f, %.2f) inside room %s by %.3f m", L(r), p[1], p[2], L(o), d))
        end
      end
    end
    local ok, tris = pcall(geom.triangulate, pts)
    if ok then
      for _, t in ipairs(tris) do
        local a, b, c = pts[t[1]], pts[t[2]], pts[t[3]]
        local cx, cz = (a[1] + b[1] + c[1]) / 3, (a[3] + b[3] + c[3]) / 3
        for _, o in ipairs(find(cx, cz)) do
          local k = math.min(r, o) .. ":" .. math.max(r, o)
          if o ~= r and not seen[k] then
            seen[k] = true
            add(string.format("rooms %s and %s overlap at (%.2f, %.2f)", L(r), L(o), cx, cz))
          end
        end
      end
    else
      add(string.format("room %s: perimeter does not triangulate (%s)", L(r), tostring(tris)))
    end
  end
  return bad
end

--- Import, build and check one random town.
-- @tparam integer seed
-- @tparam[opt] table opts `size`, `style`, `buildings`, `walkways`, `scale`
-- @treturn table `{ seed, ok, error, errors, warnings, problems = {...}, rooms, info, seconds,
--   warning_list }`
function M.run(seed, opts)
  opts = opts or {}
  local city_mod = require "psdl.city"
  local t0 = os.clock()
  local res = { seed = seed, problems = {}, warning_list = {} }
  local ok, err = pcall(function()
    local net, _, info = M.network(seed, opts)
    res.info, res.net = info, net
    res.roads = #net.roads
    local city = city_mod.from_network(net, { style = opts.style or (seed % 2 == 0 and "sf" or "london"), seed = seed })
    city:blocks { buildings = opts.buildings ~= false and { floors = { 1, 6 } } or false }
    local doc, report = city:build()
    res.doc, res.report = doc, report
    res.rooms = #doc.rooms
    res.errors, res.warnings = report.counts.errors, report.counts.warnings
    for _, p in ipairs(report.problems or {}) do
      res.warning_list[#res.warning_list + 1] = string.format("%s %s %s: %s", p.severity, p.rule, p.path, p.message)
    end
    local names = {}
    for _, room in ipairs(report.builder and report.builder.rooms or {}) do
      if room.id then names[room.id] = room.name or room.kind end
    end
    res.problems = M.check(doc, { label = function(i)
      return string.format("%d [%s]", i - 1, tostring(names[i] or "?"))
    end })
  end)
  res.seconds = os.clock() - t0
  if not ok then res.error = tostring(err) end
  res.ok = ok and res.errors == 0 and #res.problems == 0
  return res
end

-- command line
if debug.getinfo(3) == nil then -- run as a script (not loaded with dofile)
  package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
  local build = os.getenv("PSDL_BUILD_DIR") or "./build"
  package.cpath = build .. "/?.so;" .. package.cpath
  local nums, opts, verbose = {}, {}, false
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--size" then opts.size = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--scale" then opts.scale = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--no-buildings" then opts.buildings = false
    elseif a == "--no-walkways" then opts.walkways = false
    elseif a == "-v" then verbose = true
    else nums[#nums + 1] = tonumber(a) end
    i = i + 1
  end
  local first, last = nums[1] or 1, nums[2] or nums[1] or 50
  if not nums[2] and not nums[1] then last = 50 end
  local pass, fail, warn, total_t = 0, 0, 0, 0
  for seed = first, last do
    local res = M.run(seed, opts)
    total_t = total_t + res.seconds
    if res.ok then pass = pass + 1 else fail = fail + 1 end
    if (res.warnings or 0) > 0 then warn = warn + 1 end
    if not res.ok or verbose or (res.warnings or 0) > 0 then
      print(string.format("seed %d: %s roads %s rooms %s errors %s warnings %.2f s%s", seed, tostring(res.roads),
        tostring(res.rooms), tostring(res.errors), tostring(res.warnings), res.seconds,
        res.error and ("\n  raised: " .. res.error) or ""))
      for k, p in ipairs(res.problems) do
        if k > 5 then print("  ...") break end
        print("  " .. p)
      end
      for k, w in ipairs(res.warning_list) do
        if k > 3 then print("  ...") break end
        print("  " .. w)
      end
    end
  end
  print(string.format("%d passed, %d failed (%d with warnings), %.1f s", pass, fail, warn, total_t))
end

return M
