--- Random-network fuzz of city generation: jittered, skewed, curvy towns with mixed road
-- profiles (streets, one-sided streets, alleys, walkways, avenues, boulevards), missing
-- block sides (T junctions, dead ends), diagonals (skewed five- and six-arm junctions),
-- bridges and tunnels over the grid and building footprints, imported the way
-- `psdl osm` imports a real extract (OSM data → `psdl.osm.network` → `psdl.city` with
-- `auto_junctions`), then built and checked:
--
-- * the build does not raise;
-- * validation with every rule, the format's and the drivability rules (docs/validate.md):
--   no errors, and no hole or edge gap even as a warning (other warnings are counted);
-- * its own measurements (`drivability`, independent of the validator): no hole or open
--   gap over 1 m², no floor attribute more than 25 % outside its room, no self-crossing
--   perimeter, every road and intersection room reachable, finite numbers (spikes and
--   smaller holes and floor strays are counted as warnings);
-- * no two ordinary (non-warp) rooms overlap in plan: every perimeter point and the
--   centroid of every triangle of every perimeter lie inside no other ordinary room;
-- * no perimeter has more than 255 points.
--
--     lua5.4 bench/city_fuzz.lua [FIRST [LAST]] [--size N] [--scale S] [--no-buildings]
--                                [--no-walkways] [-v]
--
-- runs seeds FIRST..LAST (default 1..50), prints one line per failing seed with what failed,
-- a tally per rule (seeds with a measured / validated problem, and raised errors by kind)
-- and `N passed, N failed`; exits 1 when a seed failed.
-- As a library (`dofile`): `generate(seed, opts)` → OSM data table, `network(seed, opts)` →
-- a network table (docs/network.md), `run(seed, opts)` → result, `check(doc)` → overlap
-- problems, `drivability(doc)` → measured problems.

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

-- psdl.plan, loaded when first used (run as a script, the module path is set below).
local plan_mod
local function plan() plan_mod = plan_mod or require "psdl.plan"; return plan_mod end

-- Plan polygon {x, z} of a room's perimeter (psdl.plan.room_poly).
local function perimeter_poly(doc, room) return plan().room_poly(doc, room) end

-- Plan distance from (px, pz) to the segment a-b of points {x, z}.
local function seg_dist(px, pz, a, b) return plan().seg_dist(px, pz, a[1], a[2], b[1], b[2]) end

-- Strictly inside (crossing number), false within `eps` (1 mm) of the boundary
-- (psdl.plan.inside_strict).
local function inside(px, pz, poly, eps) return plan().inside_strict(poly, px, pz, eps or 1e-3) end
M.inside = inside

local WARP, ROADF, ISECT = 0x40, 0x08, 0x10

-- Plan polygon of a room's perimeter, repeated points (same vertex or within 1 mm) merged.
local function plan_poly(doc, room)
  local poly = {}
  for _, p in ipairs(room.perimeter) do
    local v = doc.vertices[p.vertex]
    local q = poly[#poly]
    if not q or math.abs(q[1] - v[1]) > 1e-3 or math.abs(q[2] - v[3]) > 1e-3 then
      poly[#poly + 1] = { v[1], v[3] }
    end
  end
  while #poly > 1 and math.abs(poly[1][1] - poly[#poly][1]) <= 1e-3 and math.abs(poly[1][2] - poly[#poly][2]) <= 1e-3 do
    poly[#poly] = nil
  end
  return poly
end
M.plan_poly = plan_poly

local function poly_area(poly)
  local s = 0
  for i = 1, #poly do
    local a, b = poly[i], poly[i % #poly + 1]
    s = s + a[1] * b[2] - b[1] * a[2]
  end
  return s / 2
end

-- Distance from (x, z) to a polygon's boundary, negative inside.
local function signed_dist(px, pz, poly)
  local n, c, d = #poly, false, math.huge
  for i = 1, n do
    local a, b = poly[i], poly[i % n + 1]
    local e = seg_dist(px, pz, a, b)
    if e < d then d = e end
    if (a[2] > pz) ~= (b[2] > pz) then
      local x = a[1] + (pz - a[2]) * (b[1] - a[1]) / (b[2] - a[2])
      if px < x then c = not c end
    end
  end
  return c and -d or d
end
M.signed_dist = signed_dist

-- A uniform grid of items by bounding box (psdl.plan.grid), with a query that returns a fresh
-- list.
local function grid_index(cell)
  local g = require("psdl.plan").grid(cell)
  return {
    add = function(it, x0, z0, x1, z1) g:insert(it, x0, z0, x1, z1) end,
    query = function(x0, z0, x1, z1) return g:collect(x0, z0, x1, z1, {}, {}) end,
    cell = function(x, z) return g:cell(x, z) end,
  }
end

-- Holes: the perimeter edges of ordinary rooms that no other edge runs back along (within
-- `tol`), chained into loops; the loop of largest area is the outside of the city, every
-- loop wound the other way a hole (its area; loops wound like it are the outsides of
-- islands) and every chain that does not close a gap (its length).
local function holes_of(polys, tol)
  local segs = {}
  local g = grid_index(20)
  for r, poly in pairs(polys) do
    local n = #poly
    for i = 1, n do
      local a, b = poly[i], poly[i % n + 1]
      local dx, dz = b[1] - a[1], b[2] - a[2]
      local len = math.sqrt(dx * dx + dz * dz)
      if len > 1e-4 then
        local s = { r = r, a = a, b = b, dx = dx / len, dz = dz / len, len = len }
        segs[#segs + 1] = s
        g.add(s, math.min(a[1], b[1]) - tol, math.min(a[2], b[2]) - tol, math.max(a[1], b[1]) + tol,
          math.max(a[2], b[2]) + tol)
      end
    end
  end
  local pieces = {}
  for _, s in ipairs(segs) do
    local iv = {}
    local cand = g.query(math.min(s.a[1], s.b[1]) - tol, math.min(s.a[2], s.b[2]) - tol,
      math.max(s.a[1], s.b[1]) + tol, math.max(s.a[2], s.b[2]) + tol)
    for _, t in ipairs(cand) do
      if t ~= s and s.dx * t.dx + s.dz * t.dz < -0.99 then
        -- t's ends near s's line
        local d1 = math.abs((t.a[1] - s.a[1]) * s.dz - (t.a[2] - s.a[2]) * s.dx)
        local d2 = math.abs((t.b[1] - s.a[1]) * s.dz - (t.b[2] - s.a[2]) * s.dx)
        if d1 <= tol and d2 <= tol then
          local u1 = ((t.a[1] - s.a[1]) * s.dx + (t.a[2] - s.a[2]) * s.dz) / s.len
          local u2 = ((t.b[1] - s.a[1]) * s.dx + (t.b[2] - s.a[2]) * s.dz) / s.len
          local lo, hi = math.max(0, math.min(u1, u2)), math.min(1, math.max(u1, u2))
          if hi > lo then iv[#iv + 1] = { lo, hi } end
        end
      end
    end
    table.sort(iv, function(p, q) return p[1] < q[1] end)
    local at = 0
    local function emit(u0, u1)
      if (u1 - u0) * s.len > 1e-3 then
        pieces[#pieces + 1] = { s.a[1] + s.dx * s.len * u0, s.a[2] + s.dz * s.len * u0,
                                s.a[1] + s.dx * s.len * u1, s.a[2] + s.dz * s.len * u1, r = s.r }
      end
    end
    for _, v in ipairs(iv) do
      if v[1] > at then emit(at, v[1]) end
      if v[2] > at then at = v[2] end
    end
    if at < 1 then emit(at, 1) end
  end
  -- chain the pieces: a piece goes on at the piece starting nearest its end (within 5 cm)
  local link = 0.05
  local starts = grid_index(1)
  for _, p in ipairs(pieces) do starts.add(p, p[1], p[2], p[1], p[2]) end
  local loops, chains = {}, {}
  for _, p0 in ipairs(pieces) do
    if not p0.used then
      p0.used = true
      local pts, len = { { p0[1], p0[2] } }, 0
      local p = p0
      local closed = false
      while true do
        pts[#pts + 1] = { p[3], p[4] }
        len = len + math.sqrt((p[3] - p[1]) ^ 2 + (p[4] - p[2]) ^ 2)
        local ex, ez = p[3], p[4]
        if p ~= p0 or #pts > 2 then
          if math.abs(ex - p0[1]) <= link and math.abs(ez - p0[2]) <= link then closed = true; break end
        end
        local best, bd
        for _, q in ipairs(starts.query(ex - link, ez - link, ex + link, ez + link)) do
          if not q.used then
            local d = math.abs(q[1] - ex) + math.abs(q[2] - ez)
            if d <= 2 * link and (not bd or d < bd) then best, bd = q, d end
          end
        end
        if not best then break end
        best.used = true
        p = best
      end
      if closed then
        pts[#pts] = nil
        loops[#loops + 1] = { pts = pts, area = poly_area(pts), len = len }
      else
        chains[#chains + 1] = { pts = pts, len = len }
      end
    end
  end
  local outer
  for i, l in ipairs(loops) do
    if not outer or math.abs(l.area) > math.abs(loops[outer].area) then outer = i end
  end
  local out = {}
  local sign = outer and (loops[outer].area > 0 and 1 or -1) or 1
  for i, l in ipairs(loops) do
    -- wound as the outside: the outside of another island of rooms, not a hole
    if i ~= outer and l.area * sign < 0 then
      local cx, cz = 0, 0
      for _, q in ipairs(l.pts) do cx, cz = cx + q[1], cz + q[2] end
      out[#out + 1] = { area = math.abs(l.area), x = cx / #l.pts, z = cz / #l.pts, len = l.len }
    end
  end
  for _, c in ipairs(chains) do
    out[#out + 1] = { area = 0, open = true, x = c.pts[1][1], z = c.pts[1][2], len = c.len }
  end
  return out
end
M.holes = holes_of

local FLOOR = { road = true, divided_road = true, walkway = true, road_fan = true, fan = true, sidewalk_strip = true,
                crosswalk = true }

-- Share of each floor attribute's area more than `eps` outside its room's perimeter:
-- vertices tested first, triangles with a vertex outside sampled on a 6x6 grid.
local function floor_outside(doc, room, poly, eps, add)
  local core = require "psdl.core"
  local cache = {}
  local function out(v)
    local o = cache[v]
    if o == nil then
      local p = doc.vertices[v]
      o = signed_dist(p[1], p[3], poly) > eps
      cache[v] = o
    end
    return o
  end
  for ai, at in ipairs(room.attributes) do
    if FLOOR[at.type] and not at.cap and at.vertices and #at.vertices >= 3 then
      local tris = core.surface_triangles(at.type, at.vertices)
      local total, outside = 0, 0
      for t = 1, #tris, 3 do
        local a, b, c = doc.vertices[tris[t]], doc.vertices[tris[t + 1]], doc.vertices[tris[t + 2]]
        local ar = math.abs((b[1] - a[1]) * (c[3] - a[3]) - (c[1] - a[1]) * (b[3] - a[3])) / 2
        total = total + ar
        if ar > 1e-6 then
          local anyout = out(tris[t]) or out(tris[t + 1]) or out(tris[t + 2])
          if not anyout then
            local cx, cz = (a[1] + b[1] + c[1]) / 3, (a[3] + b[3] + c[3]) / 3
            anyout = signed_dist(cx, cz, poly) > eps
          end
          if anyout then
            local k, m, cnt = 6, 0, 0
            for i = 0, k - 1 do
              for j = 0, k - 1 - i do
                local u, w = (i + 1 / 3) / k, (j + 1 / 3) / k
                local x = a[1] + (b[1] - a[1]) * u + (c[1] - a[1]) * w
                local z = a[3] + (b[3] - a[3]) * u + (c[3] - a[3]) * w
                cnt = cnt + 1
                if signed_dist(x, z, poly) > eps then m = m + 1 end
              end
            end
            outside = outside + ar * m / cnt
          end
        end
      end
      if total > 0 and outside / total > 0.01 then add(outside / total, ai, at.type, total) end
    end
  end
end

-- Spikes (the outline runs out and straight back) and self-crossings of a perimeter.
local function shape_of(poly)
  local geom = require "psdl.geom"
  local n = #poly
  local spikes = {}
  for i = 1, n do
    local p, v, q = poly[(i - 2) % n + 1], poly[i], poly[i % n + 1]
    local ax, az = p[1] - v[1], p[2] - v[2]
    local bx, bz = q[1] - v[1], q[2] - v[2]
    local la, lb = math.sqrt(ax * ax + az * az), math.sqrt(bx * bx + bz * bz)
    if la > 1e-3 and lb > 1e-3 then
      local cr = (ax * bz - az * bx) / (la * lb)
      local dt = (ax * bx + az * bz) / (la * lb)
      if dt > 0 and math.abs(cr) < 0.035 then spikes[#spikes + 1] = { v[1], v[2], math.min(la, lb) } end
    end
  end
  local pts = {}
  for i, p in ipairs(poly) do pts[i] = { p[1], 0, p[2] } end
  local crossing
  if #spikes == 0 and n >= 4 then
    local ok, e1, e2 = pcall(geom.self_crossing, pts, nil, 1e-6)
    if ok and e1 then crossing = { poly[e1][1], poly[e1][2] } end
  end
  return spikes, crossing
end

--- Drivability problems of a built document, each `{rule, severity, message}`:
-- `overlap` (a point or triangle centroid of an ordinary room inside another), `hole`
-- (ground enclosed by ordinary rooms in none: ERROR above 1 m², WARN above 0.01 m²; an
-- open gap chain longer than 0.1 m is an ERROR), `floor_outside` (a floor attribute with
-- more than 1 % of its area over 5 cm outside its room: WARN, ERROR above 25 %),
-- `spike` / `self_crossing` (perimeter shape: WARN / ERROR), `unreachable` (road or
-- intersection rooms not reachable from the largest road room through neighbour links:
-- ERROR), `points` (more than 255 perimeter points: ERROR), `numbers` (NaN or infinite
-- vertex or height: ERROR).
-- @tparam table doc
-- @tparam[opt] table opts `label` (function(room id) → string), `tol` (shared-edge
-- tolerance, 0.02 m)
-- @treturn table problems
function M.drivability(doc, opts)
  opts = opts or {}
  local L = opts.label or function(i) return tostring(i) end
  local tol = opts.tol or 0.02
  local out = {}
  local function add(rule, sev, msg, ...) out[#out + 1] = { rule = rule, severity = sev, message = string.format(msg, ...) } end
  for i, v in ipairs(doc.vertices) do
    for k = 1, 3 do
      if v[k] ~= v[k] or v[k] == math.huge or v[k] == -math.huge then add("numbers", "error", "vertex %d is %s", i - 1, tostring(v[k])) break end
    end
  end
  for i, h in ipairs(doc.heights or {}) do
    if h ~= h or h == math.huge or h == -math.huge then add("numbers", "error", "height %d is %s", i - 1, tostring(h)) end
  end
  if #doc.rooms == 0 then add("empty", "error", "no rooms") return out end
  local polys = {}
  for r, room in ipairs(doc.rooms) do
    if #room.perimeter > 255 then add("points", "error", "room %s: %d perimeter points", L(r), #room.perimeter) end
    local poly = plan_poly(doc, room)
    if #poly >= 3 then
      if room.flags & WARP == 0 then polys[r] = poly end
      local spikes, crossing = shape_of(poly)
      for _, s in ipairs(spikes) do
        add("spike", "warning", "room %s: a zero-width spike %.2f m long at (%.2f, %.2f)", L(r), s[3], s[1], s[2])
      end
      if crossing then add("self_crossing", "error", "room %s: its perimeter crosses itself near (%.2f, %.2f)", L(r), crossing[1], crossing[2]) end
      floor_outside(doc, room, poly, 0.05, function(f, ai, ty, area)
        add("floor_outside", f > 0.25 and "error" or "warning", "room %s: %.0f %% of attribute %d (%s, %.1f m²) is outside it",
          L(r), 100 * f, ai, ty, area)
      end)
    end
  end
  for _, h in ipairs(holes_of(polys, tol)) do
    if h.open then
      if h.len > 0.1 then add("hole", "error", "an open gap %.2f m long between rooms from (%.2f, %.2f)", h.len, h.x, h.z) end
    elseif h.area > 1 then add("hole", "error", "a hole of %.2f m² at (%.2f, %.2f)", h.area, h.x, h.z)
    elseif h.area > 0.01 then add("hole", "warning", "a hole of %.3f m² at (%.2f, %.2f)", h.area, h.x, h.z) end
  end
  -- reachability
  local start, best = nil, -1
  for r, room in ipairs(doc.rooms) do
    if room.flags & ROADF ~= 0 and polys[r] then
      local a = math.abs(poly_area(polys[r]))
      if a > best then start, best = r, a end
    end
  end
  if start then
    local seen, queue = { [start] = true }, { start }
    local k = 1
    while queue[k] do
      local r = queue[k]
      k = k + 1
      for _, p in ipairs(doc.rooms[r].perimeter) do
        local o = p.neighbour
        if o and o > 0 and not seen[o] then seen[o] = true; queue[#queue + 1] = o end
      end
    end
    local miss = {}
    for r, room in ipairs(doc.rooms) do
      if not seen[r] and room.flags & (ROADF | ISECT) ~= 0 then miss[#miss + 1] = L(r) end
    end
    if #miss > 0 then
      add("unreachable", "error", "%d road/intersection rooms not reachable from room %s: %s", #miss, L(start),
        table.concat(miss, ", ", 1, math.min(#miss, 8)))
    end
  end
  return out
end


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
  local grid, polys, boxes = grid_index(40), {}, {}
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
      grid.add(r, x0, z0, x1, z1)
    end
  end
  local function find(x, z)
    local out = {}
    for _, r in ipairs(grid.cell(x, z) or {}) do
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
    local city = city_mod.from_network(net, { style = opts.style or (seed % 2 == 0 and "sf" or "london"), seed = seed,
                                              auto_junctions = true })
    city:blocks { buildings = opts.buildings ~= false and { floors = { 1, 6 } } or false }
    -- built without the validation gate, then validated with every rule (the format's and
    -- the drivability rules of docs/validate.md): errors fail the seed, and so does any hole
    -- or edge gap (warnings too)
    local doc, report = city:build { validate = false }
    res.doc, res.report = doc, report
    res.rooms = #doc.rooms
    local _, vproblems, counts = require("psdl").validate(doc)
    res.errors, res.warnings = counts.errors, counts.warnings
    res.validation = vproblems
    for _, p in ipairs(vproblems) do
      local line = string.format("%s %s %s: %s", p.severity, p.rule, p.path, p.message)
      if p.severity == "error" or p.rule == "hole" or p.rule == "edge_gap" then
        res.problems[#res.problems + 1] = "validate: " .. line
      else
        res.warning_list[#res.warning_list + 1] = line
      end
    end
    local names = {}
    for _, room in ipairs(report.builder and report.builder.rooms or {}) do
      if room.id then names[room.id] = room.name or room.kind end
    end
    local function label(i) return string.format("%d [%s]", i, tostring(names[i] or "?")) end
    for _, p in ipairs(M.check(doc, { label = function(i) return label(i) end })) do res.problems[#res.problems + 1] = p end
    res.drive = M.drivability(doc, { label = label })
    res.drive_errors, res.drive_warnings = 0, 0
    for _, p in ipairs(res.drive) do
      if p.severity == "error" then
        res.drive_errors = res.drive_errors + 1
        res.problems[#res.problems + 1] = p.rule .. ": " .. p.message
      else
        res.drive_warnings = res.drive_warnings + 1
        res.warning_list[#res.warning_list + 1] = "drive " .. p.rule .. ": " .. p.message
      end
    end
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
  local tally = {}
  for seed = first, last do
    local res = M.run(seed, opts)
    total_t = total_t + res.seconds
    local seen = {}
    for _, p in ipairs(res.drive or {}) do
      local k = "measured " .. p.rule .. " " .. p.severity
      if not seen[k] then seen[k] = true; tally[k] = (tally[k] or 0) + 1 end
    end
    for _, p in ipairs(res.validation or {}) do
      local k = "validate " .. p.rule .. " " .. p.severity
      if not seen[k] then seen[k] = true; tally[k] = (tally[k] or 0) + 1 end
    end
    if res.error then
      local k = "raised: " .. res.error:gsub("^.-: road %d+[^:]*: ", ""):gsub("[%d%.%-]+", "N"):sub(1, 60)
      tally[k] = (tally[k] or 0) + 1
    end
    if res.ok then pass = pass + 1 else fail = fail + 1 end
    if (res.warnings or 0) > 0 then warn = warn + 1 end
    if not res.ok or verbose or (res.warnings or 0) > 0 or (verbose and (res.drive_warnings or 0) > 0) then
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
  local keys = {}
  for k in pairs(tally) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do print(string.format("  %4d seeds: %s", tally[k], k)) end
  print(string.format("%d passed, %d failed (%d with warnings), %.1f s", pass, fail, warn, total_t))
  if fail > 0 then os.exit(1) end
end

return M
