--- Plan geometry on points {x, y, z} (the plan is x, z), shared by the city modules:
-- signed area, distances, point in polygon (one query or many), segment tests, chords of a
-- polygon, insets, overlaps, bounding boxes and simplicity; and the uniform grid for
-- proximity queries (`grid`). S = Σ (x_i z_{i+1} − x_{i+1} z_i) < 0
-- is the retail winding (psdl-format.md §4.2); the interior of a retail polygon lies on the
-- side (tz, −tx) of each edge direction (tx, tz). Units: metres.
--
-- @module psdl.plan
local core = require "psdl.core"

local type, error, ipairs, pairs, tostring, setmetatable = type, error, ipairs, pairs, tostring, setmetatable
local abs, sqrt, floor, ceil, max, min, huge = math.abs, math.sqrt, math.floor, math.ceil, math.max, math.min, math.huge
local atan, pi, acos = math.atan, math.pi, math.acos
local table_sort, table_insert, string_format = table.sort, table.insert, string.format
local os_clock = os.clock

local M = {}

--- Twice the signed plan area of a ring: S = Σ (x_i z_{i+1} − x_{i+1} z_i) (m²; < 0: retail).
-- @tparam table pts points {x, y, z}
-- @treturn number S
local function area2(pts)
  local s, n = 0, #pts
  local p = pts[n]
  for i = 1, n do
    local q = pts[i]
    s = s + p[1] * q[3] - q[1] * p[3]
    p = q
  end
  return s
end

--- Cross product (b − a) × (c − a) in the plan (m²; > 0: c left of a→b seen from +y).
local function cross(ax, az, bx, bz, cx, cz) return (bx - ax) * (cz - az) - (bz - az) * (cx - ax) end

--- Plan distance (m) between two points {x, y, z}.
local function dist(a, b)
  local dx, dz = b[1] - a[1], b[3] - a[3]
  return sqrt(dx * dx + dz * dz)
end

--- Is (x, z) inside the ring (crossing number; points on the boundary either way)?
-- @tparam table pts points {x, y, z} @tparam number x @tparam number z @treturn boolean
local function inside(pts, x, z)
  local c, n = false, #pts
  local p = pts[n]
  for i = 1, n do
    local q = pts[i]
    if (q[3] > z) ~= (p[3] > z) then
      local xi = q[1] + (z - q[3]) * (p[1] - q[1]) / (p[3] - q[3])
      if x < xi then c = not c end
    end
    p = q
  end
  return c
end

--- `inside` for a ring given as a flat array x1, z1, x2, z2, ... (render's perimeters).
-- @tparam table xz plan coordinates @tparam number x @tparam number z @treturn boolean
local function inside_flat(xz, x, z)
  local n = #xz // 2
  local c = false
  local j = n
  for i = 1, n do
    local xi, zi, xj, zj = xz[2 * i - 1], xz[2 * i], xz[2 * j - 1], xz[2 * j]
    if (zi > z) ~= (zj > z) and x < (xj - xi) * (z - zi) / (zj - zi) + xi then c = not c end
    j = i
  end
  return c
end

--- A point-in-polygon test for many queries: the edges binned into z slabs.
local function locator(pts)
  local n = #pts
  local z0, z1 = huge, -huge
  for i = 1, n do
    local z = pts[i][3]
    if z < z0 then z0 = z end
    if z > z1 then z1 = z end
  end
  local h = max((z1 - z0) / max(1, floor(n / 4)), 1)
  local slabs = {}
  local p = pts[n]
  for i = 1, n do
    local q = pts[i]
    local a, c = p[3], q[3]
    if a ~= c then
      local lo, hi = floor((min(a, c) - z0) / h), floor((max(a, c) - z0) / h)
      for k = lo, hi do
        local l = slabs[k]
        if not l then l = {}; slabs[k] = l end
        l[#l + 1] = { p[1], a, q[1], c }
      end
    end
    p = q
  end
  return function(x, z)
    local l = slabs[floor((z - z0) / h)]
    if not l then return false end
    local c = false
    for i = 1, #l do
      local e = l[i]
      local ax, az, bx, bz = e[1], e[2], e[3], e[4]
      if (bz > z) ~= (az > z) then
        if x < bx + (z - bz) * (ax - bx) / (az - bz) then c = not c end
      end
    end
    return c
  end
end

--- Plan distance (m) from (px, pz) to the closed segment (ax, az)–(bx, bz).
local function seg_dist(px, pz, ax, az, bx, bz)
  local dx, dz = bx - ax, bz - az
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and ((px - ax) * dx + (pz - az) * dz) / l2 or 0
  if t < 0 then t = 0 elseif t > 1 then t = 1 end
  local ex, ez = ax + t * dx - px, az + t * dz - pz
  return sqrt(ex * ex + ez * ez)
end

--- Distance (m) within which segments count as touching (`segs_meet`, `simple`).
local TOUCH = 1e-3

--- Do closed segments ab and cd meet (cross, or touch within TOUCH)?
local function segs_meet(ax, az, bx, bz, cx, cz, dx, dz)
  if max(ax, bx) < min(cx, dx) - TOUCH or max(cx, dx) < min(ax, bx) - TOUCH
     or max(az, bz) < min(cz, dz) - TOUCH or max(cz, dz) < min(az, bz) - TOUCH then
    return false
  end
  local d1, d2 = cross(cx, cz, dx, dz, ax, az), cross(cx, cz, dx, dz, bx, bz)
  local d3, d4 = cross(ax, az, bx, bz, cx, cz), cross(ax, az, bx, bz, dx, dz)
  if ((d1 > 0 and d2 < 0) or (d1 < 0 and d2 > 0)) and ((d3 > 0 and d4 < 0) or (d3 < 0 and d4 > 0)) then
    return true
  end
  -- both ends of one segment on the same side of the other's line, farther than TOUCH from
  -- it: no end comes within TOUCH of the other segment (d = cross / length)
  local t2 = TOUCH * TOUCH
  local l2 = ((dx - cx) * (dx - cx) + (dz - cz) * (dz - cz)) * t2
  if ((d1 > 0 and d2 > 0) or (d1 < 0 and d2 < 0)) and d1 * d1 > l2 and d2 * d2 > l2 then return false end
  l2 = ((bx - ax) * (bx - ax) + (bz - az) * (bz - az)) * t2
  if ((d3 > 0 and d4 > 0) or (d3 < 0 and d4 < 0)) and d3 * d3 > l2 and d4 * d4 > l2 then return false end
  return seg_dist(ax, az, cx, cz, dx, dz) < TOUCH or seg_dist(bx, bz, cx, cz, dx, dz) < TOUCH
      or seg_dist(cx, cz, ax, az, bx, bz) < TOUCH or seg_dist(dx, dz, ax, az, bx, bz) < TOUCH
end

--- Do segments ab and cd cross properly (interiors, not at touching ends)?
local function segs_cross(ax, az, bx, bz, cx, cz, dx, dz)
  local d1, d2 = cross(cx, cz, dx, dz, ax, az), cross(cx, cz, dx, dz, bx, bz)
  local d3, d4 = cross(ax, az, bx, bz, cx, cz), cross(ax, az, bx, bz, dx, dz)
  local e = 1e-9
  return ((d1 > e and d2 < -e) or (d1 < -e and d2 > e)) and ((d3 > e and d4 < -e) or (d3 < -e and d4 > e))
end

--- Is the direction from vertex i towards (bx, bz) inside the polygon's interior angle at i?
-- (O'Rourke's InCone for a counter-clockwise polygon; ours run the other way, so the
-- neighbours swap.)
local function in_cone(pts, i, bx, bz)
  local n = #pts
  local a, a0, a1 = pts[i], pts[i % n + 1], pts[(i - 2) % n + 1]
  local ax, az = a[1], a[3]
  if cross(ax, az, a1[1], a1[3], a0[1], a0[3]) >= 0 then -- convex
    return cross(ax, az, bx, bz, a0[1], a0[3]) > 0 and cross(bx, bz, ax, az, a1[1], a1[3]) > 0
  end
  return not (cross(ax, az, bx, bz, a1[1], a1[3]) >= 0 and cross(bx, bz, ax, az, a0[1], a0[3]) >= 0)
end

--- Inset of a retail polygon by d (mitred, clamped): for overlap tests.
local function inset(pts, d)
  local n, out = #pts, {}
  for i = 1, n do
    local p, a, c = pts[i], pts[(i - 2) % n + 1], pts[i % n + 1]
    local ax, az = p[1] - a[1], p[3] - a[3]
    local cx, cz = c[1] - p[1], c[3] - p[3]
    local la, lc = sqrt(ax * ax + az * az), sqrt(cx * cx + cz * cz)
    if la > 0 then ax, az = ax / la, az / la end
    if lc > 0 then cx, cz = cx / lc, cz / lc end
    local nx, nz = az + cz, -ax - cx
    local nl = sqrt(nx * nx + nz * nz)
    if nl < 1e-9 then nx, nz = cz, -cx else nx, nz = nx / nl, nz / nl end
    local k = nx * cz - nz * cx
    if k < 0.3 then k = 0.3 end
    out[i] = { p[1] + nx * d / k, p[2], p[3] + nz * d / k }
  end
  return out
end

--- Do two simple polygons overlap (an edge crossing, or a vertex of one inside the other)?
local function overlap(a, ab, b, bb)
  if ab[2] < bb[1] or bb[2] < ab[1] or ab[4] < bb[3] or bb[4] < ab[3] then return false end
  local na, nb = #a, #b
  for i = 1, na do
    local p, q = a[i], a[i % na + 1]
    for j = 1, nb do
      local r, s = b[j], b[j % nb + 1]
      if segs_meet(p[1], p[3], q[1], q[3], r[1], r[3], s[1], s[3]) then return true end
    end
  end
  return inside(b, a[1][1], a[1][3]) or inside(a, b[1][1], b[1][3])
end

--- A box that grows to take points in, the one bounding-box loop of the tree: `local b =
-- plan.box()`, then `b:add(u, v)` per point (plan x, z; or any two coordinates, such as an OSM
-- node's lat, lon); `b.u0, b.v0, b.u1, b.v1` are the smallest and largest u and v (huge,
-- huge, -huge, -huge while no point was added: `b:empty()`). A NaN coordinate leaves its axis
-- as it was.
-- @treturn table the box
local Box = {}
Box.__index = Box
local function box() return setmetatable({ u0 = huge, v0 = huge, u1 = -huge, v1 = -huge }, Box) end

--- Grows the box to take the point (u, v) in.
function Box:add(u, v)
  if u < self.u0 then self.u0 = u end
  if u > self.u1 then self.u1 = u end
  if v < self.v0 then self.v0 = v end
  if v > self.v1 then self.v1 = v end
end

--- Has no point been added yet (or only NaN ones)?
function Box:empty() return self.u0 > self.u1 end

--- Plan bounding box of points {x, y, z}: {x0, x1, z0, z1}. (Box:add written out: the blocks
-- take the box of every footprint, and a method call a point makes this twice as slow.)
local function bbox(pts)
  local x0, x1, z0, z1 = huge, -huge, huge, -huge
  for _, p in ipairs(pts) do
    local x, z = p[1], p[3]
    if x < x0 then x0 = x end
    if x > x1 then x1 = x end
    if z < z0 then z0 = z end
    if z > z1 then z1 = z end
  end
  return { x0, x1, z0, z1 }
end

local ring_simple, flatten_points = core.ring_simple, core.flatten_points
--- Is the ring of points {x, y, z} simple (at least 3 points, no edges meeting but
-- neighbours, within TOUCH)? The test of psdl_ring_simple (C).
local function simple(pts)
  local n = #pts
  if n < 3 then return false end
  local flat = flatten_points(pts)
  if flat then return ring_simple(flat, TOUCH) end -- the same test in C (psdl_ring_simple)
  -- points the core refuses (not finite): the same test in Lua
  for i = 1, n do
    local p, q = pts[i], pts[i % n + 1]
    if dist(p, q) < 1e-6 then return false end
    for j = i + 2, n do
      if not (i == 1 and j == n) then
        local r, s = pts[j], pts[j % n + 1]
        if segs_meet(p[1], p[3], q[1], q[3], r[1], r[3], s[1], s[3]) then return false end
      end
    end
  end
  return true
end

--- The plan polygon of a room's perimeter in a document (psdl-format §2.3): `{x, z}` points,
-- consecutive repeated vertices and a last point equal to the first dropped.
-- @tparam table doc a document (`vertices`, rooms with `perimeter = {{vertex = i}, ...}`)
-- @tparam table room one of its rooms
-- @treturn table `{ {x, z}, ... }` (metres)
local function room_poly(doc, room)
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

--- Is (x, z) strictly inside a polygon of `{x, z}` points: false within `eps` metres of its
-- boundary, else the crossing number.
-- @tparam table poly `{ {x, z}, ... }` @tparam number x @tparam number z
-- @tparam number eps metres @treturn boolean
local function inside_strict(poly, x, z, eps)
  local n, c = #poly, false
  for i = 1, n do
    local a, b = poly[i], poly[i % n + 1]
    if seg_dist(x, z, a[1], a[2], b[1], b[2]) < eps then return false end
    if (a[2] > z) ~= (b[2] > z) then
      local xi = a[1] + (z - a[2]) * (b[1] - a[1]) / (b[2] - a[2])
      if x < xi then c = not c end
    end
  end
  return c
end

-- ================================================================ grid

--- A uniform grid over the plan for proximity queries: the one bucket grid of the city,
-- OSM and bench modules, a thin wrapper over the C grid (`psdl.core.grid`, src/psdl_grid.c;
-- the items are numbered in C by first insertion). Square cells of `size` metres (cell (i, j)
-- holds what meets x in [i size, (i + 1) size), z likewise; cells within ±2^19 of the
-- origin, keyed i * 2^20 + j). Items (any value but nil and NaN) are inserted with a plan box
-- (or along a segment) and found again by box queries, each once; point items (`{x, y, z}`
-- tables, `insert_point`) also by `nearest`. Within a cell items keep their insertion order
-- and cells are visited x-major, so every query is deterministic. A box with a NaN
-- coordinate inserts nothing; an infinite one, or one over 2^24 cells, raises. A query
-- finds the items inserted before it: its callback may query again, and what it inserts is
-- found by later queries. At most 2^24 distinct items.
-- @type Grid
local Grid = {}
Grid.__index = Grid

local new_c_grid = core.grid

--- A new, empty grid.
-- @tparam number size cell size, metres (> 0)
-- @treturn Grid
local function grid(size)
  return setmetatable({ size = size, g = new_c_grid(size), items = {}, ids = {} }, Grid)
end

-- The C id of an item (numbered on first insertion).
local function id_of(self, item)
  local id = self.ids[item]
  if not id then
    local items = self.items
    id = #items + 1
    items[id] = item
    self.ids[item] = id
  end
  return id
end

--- Insert an item into every cell that its box (metres) meets.
function Grid:insert(item, minx, minz, maxx, maxz)
  if minx ~= minx or minz ~= minz or maxx ~= maxx or maxz ~= maxz then return end
  self.g:insert(id_of(self, item), minx, minz, maxx, maxz)
end

--- Insert a point item `{x, y, z}` into the cell holding its plan position (`nearest`: the
-- position as inserted).
function Grid:insert_point(p)
  self.g:insert_point(id_of(self, p), p[1], p[3])
end

--- The items of the one cell holding (x, z), in insertion order (as often as inserted
-- there), or nil.
function Grid:cell(x, z)
  local ids = self.g:cell(x, z)
  if not ids then return nil end
  local items = self.items
  for k = 1, #ids do ids[k] = items[ids[k]] end
  return ids
end

--- Call fn(item) once for every item whose cells meet the box; a true return from fn
-- stops the query. Queries may nest. (A box within one cell passes an item as often as it
-- was inserted there: `insert_segment` can insert it twice.)
function Grid:query(minx, minz, maxx, maxz, fn)
  local s = self.size
  local ids
  if floor(maxx / s) > floor(minx / s) or floor(maxz / s) > floor(minz / s) then
    ids = self.g:collect(minx, minz, maxx, maxz)
  else
    ids = self.g:cell(minx, minz)
    if not ids then return end
  end
  local items = self.items
  for n = 1, #ids do
    if fn(items[ids[n]]) then return end
  end
end

--- Append to `out` every item whose cells meet the box and that `seen` does not hold yet
-- (marking it there); returns `out`. For loops that collect candidates.
function Grid:collect(minx, minz, maxx, maxz, out, seen)
  local ids = self.g:collect(minx, minz, maxx, maxz)
  local items = self.items
  local m = #out
  for n = 1, #ids do
    local it = items[ids[n]]
    if not seen[it] then
      seen[it] = true
      m = m + 1
      out[m] = it
    end
  end
  return out
end

-- How many pieces no longer than a cell of `size` metres cut a segment (dx, dz) into.
local function pieces(size, dx, dz)
  local l = sqrt(dx * dx + dz * dz)
  return max(1, floor(l / size) + 1)
end

-- The box of piece k of n of the segment from (ax, az) along (dx, dz), padded by pad:
-- minx, minz, maxx, maxz.
local function piece_box(ax, az, dx, dz, k, n, pad)
  local t0, t1 = k / n, (k + 1) / n
  local x0, z0 = ax + t0 * dx, az + t0 * dz
  local x1, z1 = ax + t1 * dx, az + t1 * dz
  return min(x0, x1) - pad, min(z0, z1) - pad, max(x0, x1) + pad, max(z0, z1) + pad
end

--- Insert an item along segment ab (only the cells near the segment), padded by `pad`
-- metres: the segment is cut into pieces no longer than a cell, each inserted by its box
-- (a long diagonal segment would otherwise cover a whole square of cells).
function Grid:insert_segment(item, ax, az, bx, bz, pad)
  pad = pad or 0
  local dx, dz = bx - ax, bz - az
  local n = pieces(self.size, dx, dz)
  for k = 0, n - 1 do self:insert(item, piece_box(ax, az, dx, dz, k, n, pad)) end
end

--- Call fn(item) once for every item in the cells near segment ab (within `pad` metres,
-- the pieces of `insert_segment`); a true return stops the query.
function Grid:query_segment(ax, az, bx, bz, pad, fn)
  pad = pad or 0
  local g, items = self.g, self.items
  local seen = {}
  local dx, dz = bx - ax, bz - az
  local n = pieces(self.size, dx, dz)
  for k = 0, n - 1 do
    local ids = g:collect(piece_box(ax, az, dx, dz, k, n, pad))
    for m = 1, #ids do
      local id = ids[m]
      if not seen[id] then
        seen[id] = true
        if fn(items[id]) then return end
      end
    end
  end
end

--- The point item (`insert_point`) nearest to (x, z) in plan, searched in growing squares
-- of cells around (x, z), at most `span` cells out; among equally near points the first in
-- visiting order (squares outward, cells x-major, insertion order). In C (psdl_grid_nearest).
-- @treturn table|nil the point, and its squared distance (m²)
function Grid:nearest(x, z, span)
  local id, d2 = self.g:nearest(x, z, span)
  if not id then return nil, huge end
  return self.items[id], d2
end

M.area2 = area2
M.cross = cross
M.dist = dist
M.inside = inside
M.inside_flat = inside_flat
M.locator = locator
M.seg_dist = seg_dist
M.TOUCH = TOUCH
M.segs_meet = segs_meet
M.segs_cross = segs_cross
M.in_cone = in_cone
M.inset = inset
M.overlap = overlap
M.box = box
M.bbox = bbox
M.simple = simple
M.grid = grid
M.room_poly = room_poly
M.inside_strict = inside_strict

return M
