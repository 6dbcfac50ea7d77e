--- Plane geometry for the network clean-up: polylines as arrays of `{x, z}` points, and
-- the uniform grid for proximity queries (psdl.plan's). Internal to the OSM importer.
-- @module psdl.osm.geometry

local math_sqrt, math_floor, math_atan, math_abs, math_huge, math_max, math_min, math_pi =
  math.sqrt, math.floor, math.atan, math.abs, math.huge, math.max, math.min, math.pi
local setmetatable = setmetatable

local M = {}

--- Distance between two points.
function M.dist(ax, az, bx, bz)
  local dx, dz = bx - ax, bz - az
  return math_sqrt(dx * dx + dz * dz)
end

--- Squared distance from p to segment ab, and the parameter t in [0, 1] of the nearest
-- point.
function M.seg_dist2(px, pz, ax, az, bx, bz)
  local dx, dz = bx - ax, bz - az
  local l2 = dx * dx + dz * dz
  local t = 0
  if l2 > 0 then
    t = ((px - ax) * dx + (pz - az) * dz) / l2
    if t < 0 then t = 0 elseif t > 1 then t = 1 end
  end
  local qx, qz = ax + t * dx - px, az + t * dz - pz
  return qx * qx + qz * qz, t
end

--- Proper intersection of segments ab and cd: parameters t (on ab) and u (on cd), both
-- strictly inside (0, 1) by more than eps, or nil.
function M.seg_intersect(ax, az, bx, bz, cx, cz, dx, dz, eps)
  eps = eps or 1e-9
  local rx, rz = bx - ax, bz - az
  local sx, sz = dx - cx, dz - cz
  local den = rx * sz - rz * sx
  if math_abs(den) < 1e-12 then return nil end
  local qx, qz = cx - ax, cz - az
  local t = (qx * sz - qz * sx) / den
  local u = (qx * rz - qz * rx) / den
  if t <= eps or t >= 1 - eps or u <= eps or u >= 1 - eps then return nil end
  return t, u
end

--- Length of a polyline.
function M.length(pts)
  local L = 0
  for i = 2, #pts do
    local a, b = pts[i - 1], pts[i]
    local dx, dz = b[1] - a[1], b[2] - a[2]
    L = L + math_sqrt(dx * dx + dz * dz)
  end
  return L
end

--- Point at arc length s along a polyline (clamped), and the index of its segment.
function M.at(pts, s)
  if s <= 0 then return pts[1][1], pts[1][2], 1 end
  local acc = 0
  for i = 2, #pts do
    local a, b = pts[i - 1], pts[i]
    local dx, dz = b[1] - a[1], b[2] - a[2]
    local l = math_sqrt(dx * dx + dz * dz)
    if acc + l >= s and l > 0 then
      local t = (s - acc) / l
      return a[1] + t * dx, a[2] + t * dz, i - 1, t
    end
    acc = acc + l
  end
  local p = pts[#pts]
  return p[1], p[2], #pts - 1, 1
end

--- A point sampler for a polyline: `f(s) -> x, z, dx, dz` (the point at arc length s and
-- the unit direction of its segment), fast for increasing s (it walks on from the last
-- segment), correct for any s.
function M.sampler(pts)
  local n = #pts
  local cum = { 0 }
  for i = 2, n do
    local a, b = pts[i - 1], pts[i]
    local dx, dz = b[1] - a[1], b[2] - a[2]
    cum[i] = cum[i - 1] + math_sqrt(dx * dx + dz * dz)
  end
  local i = 1
  return function(s)
    if n == 1 then return pts[1][1], pts[1][2], 1, 0 end
    if s < cum[i] then i = 1 end
    while i < n - 1 and cum[i + 1] < s do i = i + 1 end
    local a, b = pts[i], pts[i + 1]
    local l = cum[i + 1] - cum[i]
    local t = l > 0 and (s - cum[i]) / l or 0
    if t < 0 then t = 0 elseif t > 1 then t = 1 end
    local dx, dz = 1, 0
    if l > 0 then dx, dz = (b[1] - a[1]) / l, (b[2] - a[2]) / l end
    return a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]), dx, dz
  end, cum[n]
end

--- Nearest point of a polyline to p: distance, arc length s, segment index, t, and the
-- point.
function M.project(pts, px, pz)
  local best, bs, bi, bt = math_huge, 0, 1, 0
  local acc = 0
  for i = 2, #pts do
    local a, b = pts[i - 1], pts[i]
    local d2, t = M.seg_dist2(px, pz, a[1], a[2], b[1], b[2])
    local l = M.dist(a[1], a[2], b[1], b[2])
    if d2 < best then best, bs, bi, bt = d2, acc + t * l, i - 1, t end
    acc = acc + l
  end
  local a, b = pts[bi], pts[bi + 1] or pts[bi]
  return math_sqrt(best), bs, bi, bt, a[1] + bt * (b[1] - a[1]), a[2] + bt * (b[2] - a[2])
end

--- Direction angle (radians, atan2(dz, dx)) from the first point of a polyline to the
-- point at arc length s.
function M.heading(pts, s)
  local x, z = M.at(pts, s)
  return math_atan(z - pts[1][2], x - pts[1][1])
end

--- Unit direction of the polyline at arc length s (of the segment holding s).
function M.direction(pts, s)
  local _, _, i = M.at(pts, s)
  local a, b = pts[i], pts[i + 1] or pts[i]
  local dx, dz = b[1] - a[1], b[2] - a[2]
  local l = math_sqrt(dx * dx + dz * dz)
  if l == 0 then return 1, 0 end
  return dx / l, dz / l
end

--- Reverse a polyline (a new array of the same points).
function M.reversed(pts)
  local r, n = {}, #pts
  for i = 1, n do r[i] = pts[n + 1 - i] end
  return r
end

--- Signed area (shoelace, x/z: positive counter-clockwise seen from above, north up).
function M.area(ring)
  local s, n = 0, #ring
  for i = 1, n do
    local a, b = ring[i], ring[i % n + 1]
    s = s + a[1] * b[2] - b[1] * a[2]
  end
  return s / 2
end

--- Whether point p lies inside a ring (even-odd rule).
function M.inside(ring, px, pz)
  local c, n = false, #ring
  local j = n
  for i = 1, n do
    local a, b = ring[i], ring[j]
    if (a[2] > pz) ~= (b[2] > pz) and px < (b[1] - a[1]) * (pz - a[2]) / (b[2] - a[2]) + a[1] then
      c = not c
    end
    j = i
  end
  return c
end

--- Douglas-Peucker simplification of a polyline (end points kept).
function M.simplify(pts, tol)
  local n = #pts
  if n <= 2 then return pts end
  local keep = { [1] = true, [n] = true }
  local tol2 = tol * tol
  local stack = { 1, n }
  while #stack > 0 do
    local j = stack[#stack]; stack[#stack] = nil
    local i = stack[#stack]; stack[#stack] = nil
    local a, b = pts[i], pts[j]
    local worst, wi = -1, nil
    for k = i + 1, j - 1 do
      local d2 = M.seg_dist2(pts[k][1], pts[k][2], a[1], a[2], b[1], b[2])
      if d2 > worst then worst, wi = d2, k end
    end
    if wi and worst > tol2 then
      keep[wi] = true
      stack[#stack + 1] = i; stack[#stack + 1] = wi
      stack[#stack + 1] = wi; stack[#stack + 1] = j
    end
  end
  local out = {}
  for k = 1, n do if keep[k] then out[#out + 1] = pts[k] end end
  return out
end

--- Angle difference a - b wrapped into (-pi, pi].
function M.wrap(a)
  while a <= -math_pi do a = a + 2 * math_pi end
  while a > math_pi do a = a - 2 * math_pi end
  return a
end

------------------------------------------------------------------------ grid

--- A uniform grid over the plane with cells of `size` metres (`psdl.plan.grid`: insert,
-- query, insert_segment, query_segment).
M.grid = require("psdl.plan").grid

M.max, M.min = math_max, math_min

return M
