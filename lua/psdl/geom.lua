--- Geometry for building PSDL cities: Lua wrappers over the C kernels of `psdl.core`
-- (src/psdl_geom.h) that take and return point lists `{ {x, y, z}, ... }`.
--
-- Units are metres (Y up, XZ the ground plane) and degrees; winding follows
-- psdl-format.md §4.2: up-facing polygons (fans, roofs, perimeters) have a negative shoelace
-- sum S = Σ (x_i·z_{i+1} − x_{i+1}·z_i) ("retail winding"), and a strip section's first
-- point lies on the left of travel, where the left of a direction (tx, tz) is (tz, −tx).
-- Every kernel emits that winding. ("Left" here is the format's L column: with x east and z
-- north, docs/network.md, it is the driver's right on a north-up map.)
--
-- The flat-array forms (`psdl.core.spline(flat, ...)` and so on, documented in
-- src/lpsdl_geom.c) are faster for bulk work; these wrappers convert.
--
-- @module psdl.geom
-- @usage
-- local geom = require "psdl.geom"
-- local line = geom.spline({ {0, 0, 0}, {40, 0, 30}, {80, 2, 30} }, { spacing = 4 })
-- local rows = geom.sections(line, { kind = "road", left = 5, right = 5,
--                                     sidewalk_left = 3, sidewalk_right = 3 })
-- print(#rows, #rows[1], geom.strip_deviation(rows))   --> n, 4, 0.0...

local core = require "psdl.core"

local type, error, ipairs = type, error, ipairs
local sqrt, atan, pi = math.sqrt, math.atan, math.pi
local string_format = string.format

local M = {}

--- Sidewalk rise over the road, metres (§2.4 0x0).
M.CURB = 0.15

--- Strides (points per section) of the cross-section kinds.
M.STRIDE = { road = 4, walkway = 2, divided = 6, sidewalk = 2 }

-- ============================================================== conversion

--- Flatten a point list into `{x1, y1, z1, x2, ...}`.
-- @tparam table points `{ {x, y, z}, ... }`
-- @treturn table flat array
function M.flatten(points)
  local f, n = {}, 0
  for i = 1, #points do
    local p = points[i]
    if type(p) ~= "table" then
      error(string_format("bad point %d: {x, y, z} expected, got %s", i, type(p)), 2)
    end
    f[n + 1], f[n + 2], f[n + 3] = p[1], p[2] or 0, p[3]
    n = n + 3
  end
  return f
end

--- Split a flat array into a point list.
-- @tparam table flat `{x1, y1, z1, ...}`
-- @treturn table `{ {x, y, z}, ... }`
function M.unflatten(flat)
  local pts = {}
  for i = 1, #flat, 3 do pts[#pts + 1] = { flat[i], flat[i + 1], flat[i + 2] } end
  return pts
end

-- ============================================================== small vector helpers

--- Plan distance between two points.
function M.dist2(a, b)
  local dx, dz = b[1] - a[1], b[3] - a[3]
  return sqrt(dx * dx + dz * dz)
end

--- 3D distance between two points.
function M.dist3(a, b)
  local dx, dy, dz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
  return sqrt(dx * dx + dy * dy + dz * dz)
end

--- Unit plan vector of (x, z), or nil for a zero vector.
-- @treturn number x
-- @treturn number z
function M.unit(x, z)
  local l = sqrt(x * x + z * z)
  if l < 1e-12 then return nil end
  return x / l, z / l
end

--- The left of a plan direction (§4.2): (tz, −tx).
function M.left(x, z) return z, -x end

--- Point `a + t·(b − a)`.
function M.lerp(a, b, t)
  return { a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t, a[3] + (b[3] - a[3]) * t }
end

-- ============================================================== centre lines

--- Smooth centre line through control points (centripetal Catmull-Rom, psdl_spline).
-- Two control points give a straight line. Samples are at most `spacing` apart and turn at
-- most `max_angle` degrees per chord; with `half_width`, pieces on climbing curves are
-- halved until level sections of that half width give quads within `planar_tol` of planar.
-- @tparam table points control points `{ {x, y, z}, ... }` (2 or more)
-- @tparam[opt] table opts `spacing` (m, 5), `max_angle` (degrees, 7.5), `half_width` (m),
-- `planar_tol` (m, 0.02), `start_dir`, `end_dir` (`{x, z}` tangents at the ends)
-- @treturn table points, every control point among them
function M.spline(points, opts)
  return M.unflatten(core.spline(M.flatten(points), opts))
end

--- Straight line from a to b sampled every `spacing` metres (default 5).
function M.line(a, b, spacing)
  return M.spline({ a, b }, { spacing = spacing })
end

--- Length of a polyline in metres (3D, or in plan when `plan` is true).
function M.length(points, plan)
  return core.polyline_length(M.flatten(points), plan)
end

--- Offset a polyline sideways (positive = left of travel, §4.2), mitred at corners and
-- clamped on tight curves so it never folds back (psdl_offset).
-- @treturn table points
-- @treturn integer number of clamped points
function M.offset(points, distance, miter_limit)
  local f, clamped = core.offset(M.flatten(points), distance, miter_limit)
  return M.unflatten(f), clamped
end

-- ============================================================== cross-sections

--- Cross-sections along a centre line (psdl_sections, §2.4).
-- Each section is straight across and level; points run left to right of travel.
-- Carriageway, curb and median points sit at the centre line's height, sidewalk outer
-- points 0.15 m higher; a zero sidewalk width puts the outer point on the curb point.
-- @tparam table center points `{ {x, y, z}, ... }`
-- @tparam table profile `kind` ("road" 4 points: outer L, curb L, curb R, outer R;
-- "walkway" 2: left, right; "divided" 6: outer L, curb L, median L, median R, curb R,
-- outer R; "sidewalk" 2: curb, outer, with the outer edge on the right), `left`, `right`
-- (carriageway widths from the centre line, or from the median edge for "divided"),
-- `sidewalk_left`, `sidewalk_right`, `median`, `curb`, `miter_limit`
-- @tparam[opt] table opts `start_dir`, `end_dir`: `{x, z}` directions of travel at the ends
-- (the end sections are square to them)
-- @treturn table rows: `rows[k]` = the points of section k
-- @treturn integer points clamped on curves tighter than the profile
function M.sections(center, profile, opts)
  opts = opts or {}
  local f, clamped = core.sections(M.flatten(center), profile, opts.start_dir, opts.end_dir)
  local stride = M.STRIDE[profile.kind or "road"]
  local rows = {}
  for i = 1, #f, 3 * stride do
    local row = {}
    for j = 0, stride - 1 do
      local k = i + 3 * j
      row[j + 1] = { f[k], f[k + 1], f[k + 2] }
    end
    rows[#rows + 1] = row
  end
  return rows, clamped
end

-- ============================================================== polygons and fans

-- Concatenates an outer ring and holes into one flat array plus 1-based hole starts.
local function rings(outer, holes)
  local flat = M.flatten(outer)
  local starts, all = nil, nil
  if holes and #holes > 0 then
    starts, all = {}, {}
    for i = 1, #outer do all[i] = outer[i] end
    for _, h in ipairs(holes) do
      starts[#starts + 1] = #all + 1
      for _, p in ipairs(h) do
        all[#all + 1] = p
        local n = #flat
        flat[n + 1], flat[n + 2], flat[n + 3] = p[1], p[2] or 0, p[3]
      end
    end
  end
  return flat, starts, all or outer
end

--- Signed plan area in m² (S / 2): negative for retail winding (§4.2).
function M.signed_area(points) return core.signed_area(M.flatten(points)) end

--- Unsigned plan area in m².
function M.area(points)
  local a = core.signed_area(M.flatten(points))
  return a < 0 and -a or a
end

--- Winding of a polygon: -1 retail (S < 0), 1 opposite, 0 degenerate (|area| <= eps).
function M.winding(points, eps) return core.winding(M.flatten(points), eps) end

--- The polygon in retail winding (a reversed copy if needed; the same table if not).
function M.retail(points)
  if core.signed_area(M.flatten(points)) <= 0 then return points end
  local r = {}
  for i = #points, 1, -1 do r[#r + 1] = points[i] end
  return r
end

--- Triangulate a polygon with holes (ear clipping, psdl_triangulate).
-- @tparam table outer ring of points, either winding
-- @tparam[opt] table holes list of rings
-- @treturn table triangles `{ {a, b, c}, ... }` of 1-based indices into outer followed by
-- the holes' points, in retail winding, none degenerate
function M.triangulate(outer, holes)
  local flat, starts = rings(outer, holes)
  local t = core.triangulate(flat, starts)
  local tris = {}
  for i = 1, #t, 3 do tris[#tris + 1] = { t[i], t[i + 1], t[i + 2] } end
  return tris
end

--- Triangle fans covering a polygon with holes (psdl_fans): convex pieces
-- (Hertel-Mehlhorn), each one fan in retail winding with no degenerate triangle.
-- @tparam table outer ring of points, either winding
-- @tparam[opt] table holes list of rings
-- @tparam[opt] table opts `no_extra = true`: never add a hub point (split pieces instead)
-- @treturn table fans: lists of points `{hub, rim...}` (the tables of the input, or new
-- points for added hubs)
-- @treturn table index fans: the same as 1-based indices into the input points, with
-- added hubs numbered after them
-- @treturn table the added hub points
function M.fans(outer, holes, opts)
  local flat, starts, all = rings(outer, holes)
  local idx, extra = core.fans(flat, starts, opts and opts.no_extra)
  local added = M.unflatten(extra)
  local n = #all
  local fans = {}
  for i, f in ipairs(idx) do
    local pts = {}
    for j, k in ipairs(f) do pts[j] = k <= n and all[k] or added[k - n] end
    fans[i] = pts
  end
  return fans, idx, added
end

--- One perimeter ring for a polygon with holes (psdl_keyhole): the outer ring in retail
-- winding with each hole joined through a zero-width keyhole cut (a bridge edge to the hole,
-- the hole ring the other way round, back along the bridge), which the game's
-- crossing-number point-in-perimeter test (psdl-format.md §1.5) reads without the holes.
-- @tparam table outer ring of points
-- @tparam[opt] table holes list of rings (inside outer)
-- @treturn table the ring's points (the tables of the input)
-- @treturn table the same as 1-based indices into outer followed by the holes' points
function M.keyhole(outer, holes)
  local flat, starts, all = rings(outer, holes)
  local idx = core.keyhole(flat, starts)
  local ring = {}
  for i, k in ipairs(idx) do ring[i] = all[k] end
  return ring, idx
end

--- The first two edges of a polygon with holes that cross (psdl_self_crossing): nil when
-- the rings are simple and apart, else the two edge numbers (edge k runs from point k to the
-- next point of its ring; numbered through outer then the holes, as `triangulate` numbers
-- points).
function M.self_crossing(outer, holes, tol)
  local flat, starts = rings(outer, holes)
  return core.self_crossing(flat, starts, tol)
end

--- The first point of `points` (a ring when `closed`) outside `polygon` by more than `eps`
-- (0.005 m), or the first point of an edge leaving it; nil when all inside
-- (psdl_first_outside; a keyhole ring works).
function M.first_outside(polygon, points, closed, eps)
  return core.first_outside(M.flatten(polygon), M.flatten(points), closed, eps)
end

-- ============================================================== measures

--- Largest quad deviation (m) of a strip given as a flat `{x, y, z, ...}` array of
-- sections of `stride` points (0 = every quad planar).
function M.strip_deviation_flat(flat, stride) return core.strip_deviation(flat, stride) end

--- Largest quad deviation (m) of a strip given as rows of points (0 = every quad planar).
function M.strip_deviation(rows)
  if #rows == 0 then return 0 end
  local flat, stride = {}, #rows[1]
  for _, row in ipairs(rows) do
    if #row ~= stride then error("bad rows: every section needs the same number of points", 2) end
    for _, p in ipairs(row) do flat[#flat + 1] = p[1]; flat[#flat + 1] = p[2]; flat[#flat + 1] = p[3] end
  end
  return core.strip_deviation(flat, stride)
end

--- Largest |y − y_hub| over a fan's points (hub first); a road fan must be flat.
function M.fan_flatness(points) return core.fan_flatness(M.flatten(points)) end

--- Smallest plan triangle area (m²) of a fan (hub first); 0 means degenerate.
function M.fan_min_area(points) return core.fan_min_area(M.flatten(points)) end

--- Bounds per §1.6 of points (`first` skips leading points, e.g. a dummy vertex).
-- @treturn table `{min = {x,y,z}, max = {x,y,z}, center = {x,y,z}, radius = r}` or nil
function M.bounds(points, first) return core.bounds(M.flatten(points), first) end

-- ============================================================== facades

--- Light-table index 0..63 of a wall whose base runs in plan direction (dx, dz)
-- (§2.4 0x7): the wall faces (−dz, 0, dx); entry i faces a = i·π/32 − π/2 with normal
-- (cos a, 0, sin a) [INFER]: −Z → 0, +X → 16, +Z → 32, −X → 48.
function M.light_index(dx, dz) return core.light_index(dx, dz) end

--- Facade layout along an outline (psdl_facades).
-- @tparam table points base points; a closed building outline in retail winding makes
-- every facade face outward
-- @tparam table opts `bottom`, `top` (m), `floor_height` (m per vertical repeat, 3),
-- `bay_width` (m per horizontal repeat, 4), `closed`, `collinear` (degrees, 1)
-- @treturn table segments `{left, right, u, v, light, run, sloped}`: 1-based point indices,
-- repeats, light index, `run` = starts a wall run (one facade bound per run), `sloped` =
-- the ground is below `bottom` at an end (a sliver fills it)
function M.facades(points, opts)
  return core.facades(M.flatten(points), opts)
end

-- ============================================================== intersections

--- Geometry of an intersection (psdl_junction_build).
-- @tparam table center `{x, y, z}`; the intersection is flat at y
-- @tparam table arms `{ {dir = {x, z}, profile = {...}, crosswalk = m, min_distance = m}, ... }`
-- with `profile` as for `sections` (kind "road", "walkway" or "divided"), seen travelling
-- outward
-- @tparam[opt] table opts `radius` (curb corner radius, m), `arc_step` (degrees, 15), `curb`
-- @treturn table `{points, surface, sections, distance, strips, crosswalks, outline}`:
-- `points` a point list; `surface` (road fan polygon), `outline` (room perimeter) index
-- lists in retail winding; `sections[i]` arm i's end section (indices, left to right of
-- outward travel); `distance[i]` its distance from the node; `strips` sidewalk strips
-- `{pairs = {curb, outer, ...}, start_cap, end_cap}`; `crosswalks` `{c0, c1, c2, c3}` each
function M.junction(center, arms, opts)
  local j = core.junction(center, arms, opts)
  j.points = M.unflatten(j.points)
  return j
end

-- ============================================================== rooms

--- Outline (retail winding) of the union of triangles given as index triples into points.
-- @tparam table tris flat `{a, b, c, ...}` of 1-based indices
-- @tparam table points point list (or a vertex pool)
-- @treturn table indices of the largest boundary loop
function M.boundary(tris, points)
  if type(points) == "table" then points = M.flatten(points) end
  return core.boundary(tris, points)
end

--- A deduplicating pool (exact float32 equality, psdl_pool): `geom.pool(3, true)` is a
-- vertex pool whose entry 1 is the reserved dummy vertex (§3.2); `geom.pool(1)` a height
-- pool. Methods: `add(x, y, z)`, `add_flat(flat)`, `find`, `count`, `get(i)`,
-- `set_dummy`, `totable`, `flat`, `close`.
function M.pool(dim, reserve_first) return core.pool(dim, reserve_first) end

--- Angle of a plan direction in degrees (atan2(z, x)).
function M.angle(dx, dz) return atan(dz, dx) * 180 / pi end

return M
