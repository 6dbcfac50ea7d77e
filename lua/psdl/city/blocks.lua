--- Block rooms of a generated city (city-layout.md §1.2, §2.3, §5): every bounded face of
-- the road network becomes one or more block rooms (ground fans, optional rows of buildings
-- along the block edge, parks and plazas), and a ground apron surrounds the whole network out
-- to a margin.
--
-- `fill(b, opts)` runs on a `psdl.builder` Builder after every road and intersection room
-- has been placed and before `b:finish()`:
--
-- 1. **Faces.** The outlines of the ordinary (non-warp) rooms are taken as they stand (a
--    vertex of one room lying inside another's edge splits that edge first). Edges used by
--    exactly one room are the network's boundary; chained into loops (at a vertex with
--    several ways on, the sharpest turn towards the rooms), a loop wound opposite to the
--    rooms (S > 0) bounds a face, a loop wound like them is an outline of the network. An
--    outline inside a face is a hole of that face (an island); the others are holes of the
--    apron. Edges shared with a tunnel room are portals: the face takes their points lifted
--    to the ground above (no ground lid over the ramp, §4.2); edges shared with a bridge
--    deck get theirs lowered to the ground, which runs on under the deck.
--    Damaged networks: loose chain ends within 12 m are joined, small folds of an outline
--    (edges a few points apart crossing) are cut off, and a face whose outline still
--    crosses itself is left without ground; each is a warning in the report.
-- 2. **Rooms.** A face (holes joined to the outer ring by two chords each) is cut by
--    straight chords between its own boundary vertices, across its dominant direction (a
--    street grid's; else its major axis) near the half-area line, until every piece is
--    within `room.max_area`, `room.max_points` and `room.max_length`. Chords get points every
--    `room.step` metres (heights from `opts.height`, else along the chord), so no new point
--    ever lands on a road room's edge: block rooms share the road rooms' boundary vertices
--    exactly and `finish()` links them. Chords go round given footprints. When that fails,
--    the kernel's convex pieces (`split = "convex"` asks for them).
-- 3. **Ground.** Fans over each room (convex pieces, retail winding); with a height function
--    the room's ground is cut again into smaller pieces whose inner points (and added fan
--    hubs) follow it.
-- 4. **Buildings.** Given footprints (`footprints`, a network table's `buildings`) first,
--    in the room holding them. Then, along each run of street edges of a room: a corner
--    building wrapping every bend sharper than 25 degrees, the straight runs between cut
--    into buildings of whole bays with random gaps, set back by `setback`, `depth` deep
--    (walls square to the street; on curves the walls meet the offset line at its bends, so
--    they never cross). Each is a `Builder:building` on the room's ground (a facade bound
--    per wall run with the light index of its direction, one facade per wall segment,
--    slivers where the ground under a facade falls below its base, a flat roof). Footprints
--    stay inside their room and never overlap; the ground under them is the room's ground.
--
-- Randomness comes only from `opts.rng`: the same sequence gives the same rooms.
--
-- @module psdl.city.blocks
-- @usage
-- local blocks = require "psdl.city.blocks"
-- local report = blocks.fill(b, { style = b.style, rng = rng, margin = 30,
--                                 buildings = { floors = { 2, 6 } } })
-- local doc = b:finish()

local core = require "psdl.core"

local type, error, ipairs, pairs, tostring, setmetatable = type, error, ipairs, pairs, tostring, setmetatable
local abs, sqrt, floor, ceil, max, min, huge = math.abs, math.sqrt, math.floor, math.ceil, math.max, math.min, math.huge
local atan, pi, acos = math.atan, math.pi, math.acos
local table_sort, table_insert, string_format = table.sort, table.insert, string.format
local os_clock = os.clock

local M = {}

--- Defaults of `fill`'s options.
M.DEFAULTS = {
  margin = 30,
  --- room splitting: most area (m²), perimeter points and major-axis length per block
  -- room; points on chords every `step` m
  room = { max_area = 8000, max_points = 120, max_length = 150, step = 10 },
  --- ground pieces inside a room when a height function is given
  ground = { max_area = 1200, max_points = 60, max_length = 45, step = 8 },
  --- apron: points on the margin rectangle every `step` m
  apron = { max_area = 8000, max_points = 120, max_length = 150, step = 12 },
  buildings = {
    floors = { 2, 6 }, floor_height = 3.5, bay_width = 4, setback = 0, gap = { 0, 3 },
    depth = { 10, 18 }, width = { 10, 24 }, ground_floor = false, sliver_density = 0.25,
  },
}

local FRONTAGE = { street = true }

--- Metres kept between a building's roof and a bridge deck above it.
M.DECK_GAP = 1.0

-- ================================================================ plan geometry
-- Points are {x, y, z}; the plan is x, z. S = Σ (x_i z_{i+1} − x_{i+1} z_i) < 0 is the
-- retail winding (§4.2); the interior of a retail polygon lies on the side (tz, −tx) of
-- each edge direction (tx, tz).

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

local function cross(ax, az, bx, bz, cx, cz) return (bx - ax) * (cz - az) - (bz - az) * (cx - ax) end

local function dist(a, b)
  local dx, dz = b[1] - a[1], b[3] - a[3]
  return sqrt(dx * dx + dz * dz)
end

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

-- A point-in-polygon test for many queries: the edges binned into z slabs.
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

local function seg_dist(px, pz, ax, az, bx, bz)
  local dx, dz = bx - ax, bz - az
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and ((px - ax) * dx + (pz - az) * dz) / l2 or 0
  if t < 0 then t = 0 elseif t > 1 then t = 1 end
  local ex, ez = ax + t * dx - px, az + t * dz - pz
  return sqrt(ex * ex + ez * ez)
end

local TOUCH = 1e-3

-- Do closed segments ab and cd meet (cross, or touch within TOUCH)?
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

-- Do segments ab and cd cross properly (interiors, not at touching ends)?
local function segs_cross(ax, az, bx, bz, cx, cz, dx, dz)
  local d1, d2 = cross(cx, cz, dx, dz, ax, az), cross(cx, cz, dx, dz, bx, bz)
  local d3, d4 = cross(ax, az, bx, bz, cx, cz), cross(ax, az, bx, bz, dx, dz)
  local e = 1e-9
  return ((d1 > e and d2 < -e) or (d1 < -e and d2 > e)) and ((d3 > e and d4 < -e) or (d3 < -e and d4 > e))
end

-- Is the direction from vertex i towards (bx, bz) inside the polygon's interior angle at i?
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

-- Smallest angle (radians) between the chord direction (dx, dz) from vertex i and the two
-- boundary edges at i.
local function chord_angle(pts, i, dx, dz)
  local n = #pts
  local a, p, q = pts[i], pts[(i - 2) % n + 1], pts[i % n + 1]
  local l = sqrt(dx * dx + dz * dz)
  local best = pi
  for _, o in ipairs({ p, q }) do
    local ex, ez = o[1] - a[1], o[3] - a[3]
    local el = sqrt(ex * ex + ez * ez)
    if el > 0 and l > 0 then
      local c = (ex * dx + ez * dz) / (el * l)
      if c > 1 then c = 1 elseif c < -1 then c = -1 end
      local ang = math.acos(c)
      if ang < best then best = ang end
    end
  end
  return best
end

-- Is the chord i-j a diagonal of the simple polygon (inside it, touching no other vertex
-- or edge)?
local function chord_valid(pts, i, j)
  local n = #pts
  if i == j or i % n + 1 == j or j % n + 1 == i then return false end
  local a, c = pts[i], pts[j]
  local ax, az, cx, cz = a[1], a[3], c[1], c[3]
  if not in_cone(pts, i, cx, cz) or not in_cone(pts, j, ax, az) then return false end
  local x0, x1 = min(ax, cx) - TOUCH, max(ax, cx) + TOUCH
  local z0, z1 = min(az, cz) - TOUCH, max(az, cz) + TOUCH
  local p = pts[n]
  local pi_ = n
  for k = 1, n do
    local q = pts[k]
    local px, pz, qx, qz = p[1], p[3], q[1], q[3]
    if not ((px < x0 and qx < x0) or (px > x1 and qx > x1) or (pz < z0 and qz < z0) or (pz > z1 and qz > z1))
       and pi_ ~= i and pi_ ~= j and k ~= i and k ~= j then
      if segs_meet(ax, az, cx, cz, px, pz, qx, qz) then return false end
    end
    p, pi_ = q, k
  end
  return true
end

-- Area, centroid, major axis direction and extent along it.
local function shape(pts)
  local n = #pts
  local ox, oz = pts[1][1], pts[1][3]
  local A, cx, cz, ixx, izz, ixz = 0, 0, 0, 0, 0, 0
  for i = 1, n do
    local p, q = pts[i], pts[i % n + 1]
    local x0, z0, x1, z1 = p[1] - ox, p[3] - oz, q[1] - ox, q[3] - oz
    local c = x0 * z1 - x1 * z0
    A = A + c
    cx = cx + (x0 + x1) * c
    cz = cz + (z0 + z1) * c
    ixx = ixx + (x0 * x0 + x0 * x1 + x1 * x1) * c
    izz = izz + (z0 * z0 + z0 * z1 + z1 * z1) * c
    ixz = ixz + (x0 * z1 + 2 * x0 * z0 + 2 * x1 * z1 + x1 * z0) * c
  end
  A = A / 2
  if abs(A) < 1e-12 then return { area = 0, cx = ox, cz = oz, dx = 1, dz = 0, extent = 0, tmin = 0, tmax = 0 } end
  cx, cz = cx / (6 * A), cz / (6 * A)
  local sxx = ixx / (12 * A) - cx * cx
  local szz = izz / (12 * A) - cz * cz
  local sxz = ixz / (24 * A) - cx * cz
  local function extent(dx, dz)
    local tmin, tmax = huge, -huge
    for i = 1, n do
      local t = (pts[i][1] - ox - cx) * dx + (pts[i][3] - oz - cz) * dz
      if t < tmin then tmin = t end
      if t > tmax then tmax = t end
    end
    return tmin, tmax
  end
  -- the cut runs across the longer side of the frame of the dominant edge direction (edges
  -- of a street grid), or across the major axis of inertia when no direction dominates
  local sc, ss, tl = 0, 0, 0
  for i = 1, n do
    local p, q = pts[i], pts[i % n + 1]
    local ex, ez = q[1] - p[1], q[3] - p[3]
    local l = sqrt(ex * ex + ez * ez)
    if l > 0 then
      -- (cos 4θ, sin 4θ) of the edge direction, without trigonometry
      local c, sn = ex / l, ez / l
      local c2, s2 = c * c - sn * sn, 2 * c * sn
      sc, ss, tl = sc + l * (c2 * c2 - s2 * s2), ss + l * 2 * s2 * c2, tl + l
    end
  end
  local dx, dz
  if tl > 0 and sqrt(sc * sc + ss * ss) > 0.5 * tl then
    local phi = atan(ss, sc) / 4
    local ax, az = math.cos(phi), math.sin(phi)
    local a0, a1 = extent(ax, az)
    local b0, b1 = extent(-az, ax)
    if a1 - a0 >= b1 - b0 then dx, dz = ax, az else dx, dz = -az, ax end
  else
    local th = 0.5 * atan(2 * sxz, sxx - szz)
    dx, dz = math.cos(th), math.sin(th)
  end
  local tmin, tmax = extent(dx, dz)
  return { area = abs(A), cx = cx + ox, cz = cz + oz, dx = dx, dz = dz, extent = tmax - tmin, tmin = tmin, tmax = tmax }
end

-- Area of the polygon's part where (p − c)·d <= tau (Sutherland-Hodgman against a
-- half-plane, right for concave polygons too; the clipped ring's shoelace sum is taken on
-- the fly).
local function clipped_area(pts, cx, cz, dx, dz, tau)
  local n = #pts
  local p = pts[n]
  local px, pz = p[1], p[3]
  local tp = (px - cx) * dx + (pz - cz) * dz - tau
  local sum, fx, fz, lx, lz = 0, nil, nil, nil, nil
  for i = 1, n do
    local q = pts[i]
    local qx, qz = q[1], q[3]
    local tq = (qx - cx) * dx + (qz - cz) * dz - tau
    if (tp <= 0) ~= (tq <= 0) then
      local f = tp / (tp - tq)
      local x, z = px + (qx - px) * f, pz + (qz - pz) * f
      if lx then sum = sum + lx * z - x * lz else fx, fz = x, z end
      lx, lz = x, z
    end
    if tq <= 0 then
      if lx then sum = sum + lx * qz - qx * lz else fx, fz = qx, qz end
      lx, lz = qx, qz
    end
    px, pz, tp = qx, qz, tq
  end
  if not lx then return 0 end
  sum = sum + lx * fz - fx * lz
  return abs(sum) / 2
end

-- Area of the part of the ring from index i to j (inclusive), closed by the chord.
local function part_area(pts, i, j)
  local s = 0
  local p = pts[j]
  for k = i, j do
    local q = pts[k]
    s = s + p[1] * q[3] - q[1] * p[3]
    p = q
  end
  return abs(s) / 2
end

-- Inset of a retail polygon by d (mitred, clamped): for overlap tests.
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

-- Do two simple polygons overlap (an edge crossing, or a vertex of one inside the other)?
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

local function bbox(pts)
  local x0, x1, z0, z1 = huge, -huge, huge, -huge
  for _, p in ipairs(pts) do
    if p[1] < x0 then x0 = p[1] end
    if p[1] > x1 then x1 = p[1] end
    if p[3] < z0 then z0 = p[3] end
    if p[3] > z1 then z1 = p[3] end
  end
  return { x0, x1, z0, z1 }
end

-- Is the simple polygon a self-intersection-free ring?
local ring_simple, flatten_points = core.ring_simple, core.flatten_points
local function simple(pts)
  local n = #pts
  if n < 3 then return false end
  local flat = ring_simple and flatten_points(pts)
  if flat then return ring_simple(flat, TOUCH) end -- the same test in C (psdl_ring_simple)
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

-- A polygon: pts (pool-exact points), refs (vertex references), kinds (kind of edge i -> i+1:
-- "street", "cut", "margin", "portal", "deck").
local function poly() return { pts = {}, refs = {}, kinds = {} } end

local function push(P, pt, ref, kind)
  local n = #P.pts + 1
  P.pts[n], P.refs[n], P.kinds[n] = pt, ref, kind
end

-- A grid index of polygons ({pts, bb}) for box queries.
local function poly_index(list, cell)
  local grid = {}
  for i, f in ipairs(list) do
    local bb = f.bb
    for gx = floor(bb[1] / cell), floor(bb[2] / cell) do
      for gz = floor(bb[3] / cell), floor(bb[4] / cell) do
        local key = gx * 1000003 + gz
        local l = grid[key]
        if not l then l = {}; grid[key] = l end
        l[#l + 1] = i
      end
    end
  end
  local stamp, mark = 0, {}
  local idx = {}
  -- the polygons whose boxes meet the box (x0, x1, z0, z1), each once, in list order
  function idx.query(x0, x1, z0, z1)
    stamp = stamp + 1
    local out = {}
    for gx = floor(x0 / cell), floor(x1 / cell) do
      for gz = floor(z0 / cell), floor(z1 / cell) do
        local l = grid[gx * 1000003 + gz]
        if l then
          for _, i in ipairs(l) do
            if mark[i] ~= stamp then
              mark[i] = stamp
              local bb = list[i].bb
              if not (bb[2] < x0 or bb[1] > x1 or bb[4] < z0 or bb[3] > z1) then out[#out + 1] = i end
            end
          end
        end
      end
    end
    table_sort(out)
    return out
  end
  -- does the segment a-c cross or enter one of the polygons?
  function idx.hit(a, c)
    local ax, az, cx, cz = a[1], a[3], c[1], c[3]
    for _, i in ipairs(idx.query(min(ax, cx), max(ax, cx), min(az, cz), max(az, cz))) do
      local pts = list[i].pts
      local n = #pts
      local p = pts[n]
      for k = 1, n do
        local q = pts[k]
        if segs_meet(ax, az, cx, cz, p[1], p[3], q[1], q[3]) then return true end
        p = q
      end
      if inside(pts, (ax + cx) / 2, (az + cz) / 2) then return true end
    end
    return false
  end
  return idx
end

-- Does a ring (with holes: polygons {pts}) cross itself? The kernel's test when the core has
-- it, else a quadratic one (small rings only).
local function crosses(Q, holes)
  local f = core.self_crossing
  if f then
    local flat, starts = {}, nil
    local function add(pts)
      for _, p in ipairs(pts) do
        local n = #flat
        flat[n + 1], flat[n + 2], flat[n + 3] = p[1], p[2], p[3]
      end
    end
    add(Q.pts)
    for _, H in ipairs(holes or {}) do
      starts = starts or {}
      starts[#starts + 1] = #flat // 3 + 1
      add(H.pts)
    end
    return f(flat, starts) ~= nil
  end
  if #Q.pts <= 400 and not (holes and #holes > 0) then return not simple(Q.pts) end
  return false
end

-- Removes small folds from a ring: where two edges at most three apart cross (an outline
-- that doubles back on itself for a few points, e.g. a junction corner), the points between
-- them are dropped. Returns the number of folds removed.
local function unfold(Q, warnings, what)
  local f = core.self_crossing
  if not f then return 0 end
  local removed = 0
  for _ = 1, 16 do
    local n = #Q.pts
    if n < 5 then break end
    local flat = {}
    for i, p in ipairs(Q.pts) do flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = p[1], p[2], p[3] end
    local e1, e2 = f(flat)
    if not e1 then break end
    local gap = e2 - e1
    local a, c -- keep point a, drop the points after it up to c
    if gap <= 3 then a, c = e1, e2
    elseif n - gap <= 3 then a, c = e2, e1 + n
    else break end
    local drop = {}
    for k = a + 1, c do drop[(k - 1) % n + 1] = true end
    local p = Q.pts[a]
    warnings[#warnings + 1] = string_format("%s: a fold of the network's outline near (%.1f, %.1f) was cut off "
      .. "(an outline doubling back on itself)", what, p[1], p[3])
    local R = poly()
    for i = 1, n do
      if not drop[i] then
        -- the edge leaving a kept point ends at the next kept point: a cut when points were dropped
        local kind = Q.kinds[i]
        if drop[i % n + 1] then kind = "cut" end
        push(R, Q.pts[i], Q.refs[i], kind)
      end
    end
    Q.pts, Q.refs, Q.kinds = R.pts, R.refs, R.kinds
    removed = removed + 1
  end
  return removed
end

-- ================================================================ context

local Ctx = {}
Ctx.__index = Ctx


-- A new vertex: its reference and the pool's exact point.
function Ctx:new_point(x, y, z)
  local b = self.b
  local ref = b:vertex({ x, y, z })
  return b:point(ref), ref
end

-- Ground height at (x, z) for a new point: the height function, else `fallback`.
function Ctx:h(x, z, fallback)
  local f = self.height
  if f then
    local y = f(x, z)
    if type(y) == "number" then return y end
  end
  return fallback
end

-- Points strictly between a and c every `step` m (heights from the height function, else
-- along the chord).
function Ctx:chord_points(a, c, step)
  local len = dist(a, c)
  local n = max(1, ceil(len / step - 1e-9))
  local pts, refs = {}, {}
  for k = 1, n - 1 do
    local t = k / n
    local x, z = a[1] + (c[1] - a[1]) * t, a[3] + (c[3] - a[3]) * t
    local y = self:h(x, z, a[2] + (c[2] - a[2]) * t)
    pts[k], refs[k] = self:new_point(x, y, z)
  end
  return pts, refs
end

-- ================================================================ network and faces

local SURFACE = { road = true, divided_road = true, walkway = true, sidewalk_strip = true,
                  crosswalk = true, road_fan = true, fan = true }

local function is_warp(r)
  if r.is_tunnel or r.is_bridge then return true end
  return r.flags ~= nil and (r.flags & 0x40) ~= 0
end

-- A room's outline as vertex references: its own, or that of its ground geometry.
local function room_outline(b, r)
  if r.outline then return r.outline end
  local tris = {}
  for _, op in ipairs(r.ops) do
    if SURFACE[op.type] and op.cap == nil then
      local t = core.surface_triangles(op.type, op.refs)
      local n = #tris
      for i = 1, #t do tris[n + i] = t[i] end
    end
  end
  if #tris == 0 then return nil end
  return core.boundary(tris, b.vpool)
end

local function ukey(a, c)
  if a < c then return a * 4294967296 + c end
  return c * 4294967296 + a
end

-- Splits a loop of references at a vertex it visits twice (a pinch) into simple loops.
local function split_pinches(loop, out)
  local seen = {}
  for i, v in ipairs(loop) do
    local j = seen[v]
    if j then
      local a, c = {}, {}
      for k = j, i - 1 do a[#a + 1] = loop[k] end
      for k = i, #loop do c[#c + 1] = loop[k] end
      for k = 1, j - 1 do c[#c + 1] = loop[k] end
      split_pinches(a, out)
      split_pinches(c, out)
      return
    end
    seen[v] = i
  end
  out[#out + 1] = loop
end

--- The faces of the road layout placed in a builder so far.
-- @tparam Builder b
-- @tparam[opt] table opts `skip`: a set of rooms to leave out
-- @treturn table `{faces = {{refs, pts, kinds, holes = {...}, area}...}, outlines =
-- {...} (the network's outer loops not inside a face, wound S > 0: holes of the apron),
-- warnings = {...}}`; a face's `refs` / `pts` run in retail winding
function M.faces(b, opts)
  opts = opts or {}
  local base, tunnel_edges, deck_edges = {}, {}, {}
  for _, r in ipairs(b.rooms) do
    if not (opts.skip and opts.skip[r]) then
      local out = room_outline(b, r)
      if out and #out >= 3 then
        if is_warp(r) then
          local set = (r.is_tunnel or (r.flags and (r.flags & 0x02) ~= 0)) and tunnel_edges or deck_edges
          local n = #out
          for k = 1, n do set[ukey(out[k], out[k % n + 1])] = true end
        else
          local c = {}
          for k, v in ipairs(out) do c[k] = v end
          base[#base + 1] = c
        end
      end
    end
  end
  -- split edges at vertices of other rooms lying inside them (T-junctions)
  if #base > 1 then
    local t = core.tjunctions(b.vpool, base, b.eps)
    local by = {}
    for i = 1, #t, 3 do
      local ri, e, v = t[i], t[i + 1], t[i + 2]
      local l = by[ri]
      if not l then l = {}; by[ri] = l end
      l[#l + 1] = { e = e, v = v, o = #l }
    end
    for ri = 1, #base do
      local l = by[ri]
      if l then
        table_sort(l, function(x, y) if x.e ~= y.e then return x.e > y.e end return x.o > y.o end)
        local per = base[ri]
        for _, x in ipairs(l) do table_insert(per, x.e + 1, x.v) end
      end
    end
  end
  -- boundary edges: used by exactly one room, directed as in that room
  local count = {}
  for _, per in ipairs(base) do
    local n = #per
    for k = 1, n do
      local a, c = per[k], per[k % n + 1]
      if a ~= c then
        local key = ukey(a, c)
        count[key] = (count[key] or 0) + 1
      end
    end
  end
  local edges, outs = {}, {}
  for _, per in ipairs(base) do
    local n = #per
    for k = 1, n do
      local a, c = per[k], per[k % n + 1]
      if a ~= c and count[ukey(a, c)] == 1 then
        local e = { a = a, c = c }
        edges[#edges + 1] = e
        local l = outs[a]
        if not l then l = {}; outs[a] = l end
        l[#l + 1] = e
      end
    end
  end
  local P = {}
  local function pt(v)
    local p = P[v]
    if not p then p = b:point(v); P[v] = p end
    return p
  end
  -- Rooms that overlap or leave a sliver between them leave chains that end where no other
  -- begins: join each loose end to the nearest loose start within 12 m (nearest pairs first).
  local warnings = {}
  do
    local deg = {}
    local order_v = {}
    for _, e in ipairs(edges) do
      if not deg[e.a] then deg[e.a] = 0; order_v[#order_v + 1] = e.a end
      if not deg[e.c] then deg[e.c] = 0; order_v[#order_v + 1] = e.c end
      deg[e.a] = deg[e.a] + 1
      deg[e.c] = deg[e.c] - 1
    end
    local ends, starts = {}, {}
    for _, v in ipairs(order_v) do
      local d = deg[v]
      for _ = 1, -d do ends[#ends + 1] = v end
      for _ = 1, d do starts[#starts + 1] = v end
    end
    if #ends > 0 then
      local pairs_ = {}
      for i, u in ipairs(ends) do
        for j, v in ipairs(starts) do
          local d = dist(pt(u), pt(v))
          if d <= 12 and u ~= v then pairs_[#pairs_ + 1] = { i, j, d } end
        end
      end
      table_sort(pairs_, function(x, y)
        if x[3] ~= y[3] then return x[3] < y[3] end
        if x[1] ~= y[1] then return x[1] < y[1] end
        return x[2] < y[2]
      end)
      local ue, us = {}, {}
      for _, pr in ipairs(pairs_) do
        if not ue[pr[1]] and not us[pr[2]] then
          ue[pr[1]], us[pr[2]] = true, true
          local a, c = ends[pr[1]], starts[pr[2]]
          local e = { a = a, c = c, virtual = true }
          edges[#edges + 1] = e
          local l = outs[a]
          if not l then l = {}; outs[a] = l end
          l[#l + 1] = e
          local p, q = pt(a), pt(c)
          warnings[#warnings + 1] = string_format("a gap of %.2f m between rooms' outlines at (%.1f, %.1f) - (%.1f, %.1f) "
            .. "(overlapping or parted rooms) was closed", pr[3], p[1], p[3], q[1], q[3])
        end
      end
    end
  end
  -- trace loops; the face lies on the left (math) of each edge: take the sharpest left turn
  local loops = {}
  for _, e0 in ipairs(edges) do
    if not e0.used then
      e0.used = true
      local loop = { e0.a }
      local e = e0
      local ok = true
      for _ = 1, #edges + 1 do
        local v = e.c
        local cand = outs[v]
        local best, bestang
        if cand then
          local pv, pu = pt(v), pt(e.a)
          local bx, bz = pu[1] - pv[1], pu[3] - pv[3]
          local back = atan(bz, bx)
          for _, f in ipairs(cand) do
            if not f.used or f == e0 then
              local q = pt(f.c)
              local ang = (back - atan(q[3] - pv[3], q[1] - pv[1])) % (2 * pi)
              if ang <= 1e-12 then ang = 2 * pi end
              if not bestang or ang < bestang then best, bestang = f, ang end
            end
          end
        end
        if not best then ok = false; break end
        if best == e0 then break end
        best.used = true
        loop[#loop + 1] = v
        e = best
      end
      if ok then
        split_pinches(loop, loops)
      else
        warnings[#warnings + 1] = string_format("an open chain of %d boundary edges from vertex %d was left out", #loop, e0.a)
      end
    end
  end
  local function edge_kind(a, c)
    local key = ukey(a, c)
    if tunnel_edges[key] then return "portal" end
    if deck_edges[key] then return "deck" end
    return "street"
  end
  -- classify: S > 0 bounds a face, S < 0 is an outline of the network
  local faces, outlines = {}, {}
  for _, loop in ipairs(loops) do
    if #loop >= 3 then
      local pts = {}
      for i, v in ipairs(loop) do pts[i] = pt(v) end
      local s = area2(pts)
      if abs(s) > 2 * 0.5 then
        local Q = poly()
        if s > 0 then -- reverse into retail winding
          for i = #loop, 1, -1 do
            local j = i == 1 and #loop or i - 1 -- edge (loop[i] -> loop[i-1]) reversed original (loop[i-1] -> loop[i])
            local a, c = loop[i], loop[j]
            push(Q, pts[i], a, edge_kind(a, c))
          end
          Q.area = s / 2
          Q.holes = {}
          faces[#faces + 1] = Q
        else
          local n = #loop
          for i = 1, n do
            local a, c = loop[i], loop[i % n + 1]
            push(Q, pts[i], a, edge_kind(a, c))
          end
          Q.area = -s / 2
          outlines[#outlines + 1] = Q
        end
      end
    end
  end
  -- islands: an outline inside a face is a hole of the smallest face holding it
  local order = {}
  for i = 1, #faces do order[i] = i end
  table_sort(order, function(x, y) if faces[x].area ~= faces[y].area then return faces[x].area < faces[y].area end return x < y end)
  local apron = {}
  for _, L in ipairs(outlines) do
    local host
    local p = L.pts[1]
    for _, fi in ipairs(order) do
      local F = faces[fi]
      if F.area > L.area and inside(F.pts, p[1], p[3]) then host = F; break end
    end
    -- holes run against the region's winding (S > 0)
    local H = poly()
    for i = #L.pts, 1, -1 do
      local j = i == 1 and #L.pts or i - 1
      push(H, L.pts[i], L.refs[i], L.kinds[j])
    end
    H.area = L.area
    if host then host.holes[#host.holes + 1] = H else apron[#apron + 1] = H end
  end
  return { faces = faces, outlines = apron, warnings = warnings }
end

-- Moves the points of edges shared with warp rooms to the ground: a tunnel portal's
-- points up to the ground above (no ground lid over the ramp, city-layout §4.2), a bridge
-- deck's end down to the ground under it (clearance under the deck). The height function
-- gives that ground, else the highest (portal) or lowest (deck) of the polygon's other
-- boundary points within 80 m. The street edges next to a moved point are no longer shared
-- with the road: no buildings there.
local function lift_portals(ctx, Q)
  local n = #Q.pts
  local mode = {}
  local any = false
  for i = 1, n do
    local k = Q.kinds[i]
    if k == "portal" or k == "deck" then
      mode[i] = mode[i] or k
      mode[i % n + 1] = mode[i % n + 1] or k
      any = true
    end
  end
  if not any then return end
  local new = {}
  for i = 1, n do
    local md = mode[i]
    if md then
      local p = Q.pts[i]
      local y = ctx:h(p[1], p[3], nil)
      if not y then
        for j = 1, n do
          local q = Q.pts[j]
          if not mode[j] and dist(p, q) < 80 then
            if not y or (md == "portal" and q[2] > y) or (md == "deck" and q[2] < y) then y = q[2] end
          end
        end
        y = y or p[2]
      end
      new[i] = { ctx:new_point(p[1], y, p[3]) }
    end
  end
  for i = 1, n do
    if new[i] then
      Q.pts[i], Q.refs[i] = new[i][1], new[i][2]
      if Q.kinds[i] == "street" then Q.kinds[i] = "portal" end
      local pi_ = (i - 2) % n + 1
      if Q.kinds[pi_] == "street" then Q.kinds[pi_] = "portal" end
    end
  end
end

-- ================================================================ splitting

-- The best chord splitting the polygon across its major axis near the middle (nil if none).
-- The line square to the axis at the half-area station crosses the polygon in spans; the
-- chords tried join the vertices next to the two ends of a span (a few each side), so they
-- run nearly along that line. Other stations are tried when none fits.
local function find_chord(pts, sh, obstacles)
  local n = #pts
  local A = sh.area
  local cx, cz, dx, dz = sh.cx, sh.cz, sh.dx, sh.dz
  local ux, uz = -dz, dx
  local function station(frac)
    local lo, hi = sh.tmin, sh.tmax
    for _ = 1, 11 do
      local mid = (lo + hi) / 2
      if clipped_area(pts, cx, cz, dx, dz, mid) < A * frac then lo = mid else hi = mid end
    end
    return (lo + hi) / 2
  end
  local function candidates(tau)
    -- crossings of the line t = tau: edge index and position u along the line
    local xs = {}
    local t = {}
    for i = 1, n do t[i] = (pts[i][1] - cx) * dx + (pts[i][3] - cz) * dz - tau end
    for k = 1, n do
      local k2 = k % n + 1
      local a, c = t[k], t[k2]
      if (a <= 0) ~= (c <= 0) then
        local f = a / (a - c)
        local x = pts[k][1] + (pts[k2][1] - pts[k][1]) * f
        local z = pts[k][3] + (pts[k2][3] - pts[k][3]) * f
        xs[#xs + 1] = { k = k, u = (x - cx) * ux + (z - cz) * uz }
      end
    end
    table_sort(xs, function(p, q) if p.u ~= q.u then return p.u < q.u end return p.k < q.k end)
    local out = {}
    local W = 3
    for s = 1, #xs - 1, 2 do
      local e1, e2 = xs[s], xs[s + 1]
      local near1, near2 = {}, {}
      for w = -W + 1, W do
        near1[#near1 + 1] = (e1.k - 1 + w) % n + 1
        near2[#near2 + 1] = (e2.k - 1 + w) % n + 1
      end
      for _, i in ipairs(near1) do
        for _, j in ipairs(near2) do
          if i ~= j then out[#out + 1] = { i, j, abs(t[i]) + abs(t[j]) } end
        end
      end
    end
    table_sort(out, function(p, q)
      if p[3] ~= q[3] then return p[3] < q[3] end
      if p[1] ~= q[1] then return p[1] < q[1] end
      return p[2] < q[2]
    end)
    return out
  end
  local function evaluate(i, j, minfrac)
    local a, c = pts[i], pts[j]
    local ddx, ddz = c[1] - a[1], c[3] - a[3]
    if i % n + 1 == j or j % n + 1 == i then return nil end
    if not in_cone(pts, i, c[1], c[3]) or not in_cone(pts, j, a[1], a[3]) then return nil end
    if chord_angle(pts, i, ddx, ddz) < 0.35 or chord_angle(pts, j, -ddx, -ddz) < 0.35 then return nil end
    local frac = part_area(pts, min(i, j), max(i, j)) / A
    if frac < minfrac or frac > 1 - minfrac then return nil end
    -- (the footprints first: near buildings most chords cross one, and that test is cheaper)
    if obstacles and obstacles.hit(a, c) then return nil end
    if not chord_valid(pts, i, j) then return nil end
    local len = dist(a, c)
    return abs(frac - 0.5) * 2 + 0.6 * len / sqrt(A) + 1.5 * abs(ddx * dx + ddz * dz) / len
  end
  local best, bs = nil, huge
  for _, frac in ipairs({ 0, 0.5, 0.42, 0.58, 0.33, 0.67, 0.25, 0.75 }) do
    -- first the line through the centroid (the half-area line of a symmetric shape)
    local tau = frac == 0 and 0 or station(frac)
    local valid = 0
    for _, cd in ipairs(candidates(tau)) do
      local s = evaluate(cd[1], cd[2], frac == 0 and 0.3 or 0.12)
      if s then
        valid = valid + 1
        if s < bs then best, bs = { cd[1], cd[2] }, s end
        if valid >= 4 then break end
      end
    end
    if best then return best end
  end
  if obstacles then return find_chord(pts, sh, nil) end -- through a building if need be
  return nil
end

-- Cuts polygon P along the chord i-j (with points every `step` m): two polygons.
local function cut(ctx, P, i, j, step)
  if i > j then i, j = j, i end
  local n = #P.pts
  local mp, mr = ctx:chord_points(P.pts[i], P.pts[j], step)
  local A, B = poly(), poly()
  for k = i, j - 1 do push(A, P.pts[k], P.refs[k], P.kinds[k]) end
  push(A, P.pts[j], P.refs[j], "cut")
  for m = #mp, 1, -1 do push(A, mp[m], mr[m], "cut") end
  for k = j, n do push(B, P.pts[k], P.refs[k], P.kinds[k]) end
  for k = 1, i - 1 do push(B, P.pts[k], P.refs[k], P.kinds[k]) end
  push(B, P.pts[i], P.refs[i], "cut")
  for m = 1, #mp do push(B, mp[m], mr[m], "cut") end
  return A, B
end

-- Splits P recursively until it fits the limits; appends the pieces to out.
local function split(ctx, P, lim, out, depth)
  depth = depth or 0
  local n = #P.pts
  if n <= lim.max_points then
    -- clearly within the limits (area and bounding-box diagonal): no need for the axes
    local bb = bbox(P.pts)
    local dx, dz = bb[2] - bb[1], bb[4] - bb[3]
    if dx * dx + dz * dz <= lim.max_length * lim.max_length and abs(area2(P.pts)) / 2 <= lim.max_area then
      out[#out + 1] = P
      return
    end
  end
  local sh = shape(P.pts)
  local need = sh.area > lim.max_area or n > lim.max_points or sh.extent > lim.max_length
  if need and depth < 24 and sh.area > 4 then
    local ch = find_chord(P.pts, sh, ctx.obstacles)
    if ch then
      local A, B = cut(ctx, P, ch[1], ch[2], lim.step)
      split(ctx, A, lim, out, depth + 1)
      split(ctx, B, lim, out, depth + 1)
      return
    end
    if n > 250 then
      error(string_format("psdl.city.blocks: a block of %d boundary points near (%.1f, %.1f) cannot be cut into "
        .. "rooms of at most 255 perimeter points", n, P.pts[1][1], P.pts[1][3]), 0)
    end
    ctx.unsplit = (ctx.unsplit or 0) + 1
  end
  out[#out + 1] = P
end

-- Is the segment a-c free of every ring's edges (except those at its ends) and inside the
-- region (outer minus holes)?
local function visible(rings, a, c, outer, holes)
  local ax, az, cx, cz = a[1], a[3], c[1], c[3]
  for _, R in ipairs(rings) do
    local pts = R.pts
    local n = #pts
    local p = pts[n]
    for k = 1, n do
      local q = pts[k]
      if p ~= a and p ~= c and q ~= a and q ~= c then
        if segs_meet(ax, az, cx, cz, p[1], p[3], q[1], q[3]) then return false end
      end
      p = q
    end
  end
  local mx, mz = (ax + cx) / 2, (az + cz) / 2
  if not inside(outer.pts, mx, mz) then return false end
  for _, H in ipairs(holes) do
    if inside(H.pts, mx, mz) then return false end
  end
  return true
end

-- Cuts a polygon with holes into simple polygons: each hole is joined to the outer ring
-- by two chords (from its extreme points along x), which splits the region in two.
local function bridge_holes(ctx, outer, holes, step, out)
  if #holes == 0 then out[#out + 1] = outer; return end
  local rings = { outer }
  for _, h in ipairs(holes) do rings[#rings + 1] = h end
  -- the first hole (in order) whose two extreme points both see the outer ring: another
  -- hole may hide the outer ring from the first one's
  local H, rest, hp, lo, hi, w1, w2
  -- the smallest angle (radians) between the chord from point k of ring pts (towards x, z)
  -- and the ring's two edges at k: a chord almost along an edge cuts off a sliver
  local function edge_angle(pts, k, x, z)
    local n = #pts
    local p = pts[k]
    local cx, cz = x - p[1], z - p[3]
    local cl = sqrt(cx * cx + cz * cz)
    if cl < 1e-9 then return 0 end
    local best = pi
    for _, q in ipairs({ pts[(k - 2) % n + 1], pts[k % n + 1] }) do
      local ex, ez = q[1] - p[1], q[3] - p[3]
      local el = sqrt(ex * ex + ez * ez)
      if el > 1e-9 then
        local c = (cx * ex + cz * ez) / (cl * el)
        best = min(best, acos(max(-1, min(1, c))))
      end
    end
    return best
  end
  local SLIVER = 10 * pi / 180
  local function target(hk, avoid, other)
    local h = hp[hk]
    local cands = {}
    for k, p in ipairs(outer.pts) do
      if k ~= avoid then cands[#cands + 1] = { k, dist(h, p) } end
    end
    table_sort(cands, function(x, y) if x[2] ~= y[2] then return x[2] < y[2] end return x[1] < y[1] end)
    for pass = 1, 2 do -- first without chords along an edge, then any
      for _, cd in ipairs(cands) do
        local p = outer.pts[cd[1]]
        if in_cone(outer.pts, cd[1], h[1], h[3]) and visible(rings, h, p, outer, holes)
           and (pass == 2 or (edge_angle(hp, hk, p[1], p[3]) >= SLIVER
                              and edge_angle(outer.pts, cd[1], h[1], h[3]) >= SLIVER)) then
          if not other or not segs_meet(h[1], h[3], p[1], p[3], other[1][1], other[1][3], other[2][1], other[2][3]) then
            return cd[1]
          end
        end
      end
    end
    return nil
  end
  for hi_ = 1, #holes do
    H = holes[hi_]
    hp = H.pts
    lo, hi = 1, 1
    for k = 2, #hp do
      if hp[k][1] < hp[lo][1] or (hp[k][1] == hp[lo][1] and hp[k][3] < hp[lo][3]) then lo = k end
      if hp[k][1] > hp[hi][1] or (hp[k][1] == hp[hi][1] and hp[k][3] > hp[hi][3]) then hi = k end
    end
    w1 = target(lo)
    w2 = w1 and target(hi, w1, { hp[lo], outer.pts[w1] })
    if w1 and w2 and lo ~= hi then
      rest = {}
      for k = 1, #holes do if k ~= hi_ then rest[#rest + 1] = holes[k] end end
      break
    end
  end
  if not rest then
    error("psdl.city.blocks: cannot join a hole of the network outline to the ground around it", 0)
  end
  local c1p, c1r = ctx:chord_points(outer.pts[w1], hp[lo], step) -- w1 -> h(lo)
  local c2p, c2r = ctx:chord_points(outer.pts[w2], hp[hi], step) -- w2 -> h(hi)
  local no, nh = #outer.pts, #hp
  local function piece(wa, wb, ca, cb, ha, hb)
    -- outer wa -> wb, chord wb -> h(hb) (cb forward), hole hb -> ha, chord h(ha) -> wa (ca reversed)
    local Q = poly()
    local k = wa
    while true do
      push(Q, outer.pts[k], outer.refs[k], k == wb and "cut" or outer.kinds[k])
      if k == wb then break end
      k = k % no + 1
    end
    for m = 1, #cb[1] do push(Q, cb[1][m], cb[2][m], "cut") end
    k = hb
    while true do
      push(Q, hp[k], H.refs[k], k == ha and "cut" or H.kinds[k])
      if k == ha then break end
      k = k % nh + 1
    end
    for m = #ca[1], 1, -1 do push(Q, ca[1][m], ca[2][m], "cut") end
    return Q
  end
  local X = piece(w1, w2, { c1p, c1r }, { c2p, c2r }, lo, hi)
  local Y = piece(w2, w1, { c2p, c2r }, { c1p, c1r }, hi, lo)
  if area2(X.pts) >= 0 or area2(Y.pts) >= 0 then
    error("psdl.city.blocks: joining a hole of the network outline gave a piece wound the wrong way", 0)
  end
  local hx, hy = {}, {}
  for _, h in ipairs(rest) do
    local p = h.pts[1]
    if inside(X.pts, p[1], p[3]) then hx[#hx + 1] = h else hy[#hy + 1] = h end
  end
  bridge_holes(ctx, X, hx, step, out)
  bridge_holes(ctx, Y, hy, step, out)
end

-- The kernel's convex pieces (Hertel-Mehlhorn, no added point) of a region with holes, as
-- polygons: the fallback when joining holes or cutting fails.
local function convex_pieces(F, holes)
  local pts, refs, ekind, starts = {}, {}, {}, {}
  local function add_ring(Q)
    local n = #Q.pts
    for i = 1, n do
      pts[#pts + 1], refs[#refs + 1] = Q.pts[i], Q.refs[i]
      ekind[Q.refs[i] * 4294967296 + Q.refs[i % n + 1]] = Q.kinds[i]
    end
  end
  add_ring(F)
  for _, H in ipairs(holes) do
    starts[#starts + 1] = #pts + 1
    add_ring(H)
  end
  local flat = {}
  for i, p in ipairs(pts) do flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = p[1], p[2], p[3] end
  local idx = core.fans(flat, #starts > 0 and starts or nil)
  local n = #pts
  local out = {}
  for _, f0 in ipairs(idx) do
    -- the piece's ring: the fan's points, or its rim when the hub is an added point
    local f = f0
    if f0[1] > n then
      f = {}
      for j = 2, #f0 - 1 do f[#f + 1] = f0[j] end
    end
    local Q = poly()
    local m = #f
    for j = 1, m do
      local a, c = refs[f[j]], refs[f[j % m + 1]]
      push(Q, pts[f[j]], a, ekind[a * 4294967296 + c] or "cut")
    end
    if area2(Q.pts) > 0 then -- keep retail winding
      local R = poly()
      for j = m, 1, -1 do push(R, Q.pts[j], Q.refs[j], Q.kinds[(j - 2) % m + 1]) end
      Q = R
    end
    out[#out + 1] = Q
  end
  return out
end

-- Simple polygons within the limits covering a region (outer ring and holes): holes joined
-- by chords, then cut; when that fails, the kernel's convex pieces, cut where they can be.
local function region_pieces(ctx, F, holes, lim, what)
  local ok, res = false, "convex pieces asked for"
  if ctx.mode ~= "convex" then ok, res = pcall(function()
    local simple_pieces, polys = {}, {}
    bridge_holes(ctx, F, holes, lim.step, simple_pieces)
    for _, S in ipairs(simple_pieces) do split(ctx, S, lim, polys) end
    return polys
  end) end
  if ok then return res end
  local w = ctx.report.warnings
  if ctx.mode ~= "convex" then w[#w + 1] = string_format("%s: %s; convex pieces used instead", what, tostring(res):gsub("^psdl%.city%.blocks: ", "")) end
  local polys = {}
  for _, Q in ipairs(convex_pieces(F, holes)) do
    local part = {}
    if pcall(split, ctx, Q, lim, part) then
      for _, x in ipairs(part) do polys[#polys + 1] = x end
    else
      polys[#polys + 1] = Q
    end
  end
  return polys
end

-- ================================================================ ground

-- Heights of the ground surface at plan points, from its triangles (flat rooms: constant).
local function sampler(tris, flat_y)
  if flat_y then return function() return flat_y end end
  local cell = 12
  local grid = {}
  for ti, t in ipairs(tris) do
    local x0, x1 = min(t[1], t[4], t[7]), max(t[1], t[4], t[7])
    local z0, z1 = min(t[3], t[6], t[9]), max(t[3], t[6], t[9])
    for gx = floor(x0 / cell), floor(x1 / cell) do
      for gz = floor(z0 / cell), floor(z1 / cell) do
        local key = gx * 1000003 + gz
        local l = grid[key]
        if not l then l = {}; grid[key] = l end
        l[#l + 1] = ti
      end
    end
  end
  return function(x, z)
    local l = grid[floor(x / cell) * 1000003 + floor(z / cell)]
    local bestd, besty = huge, nil
    if l then
      for _, ti in ipairs(l) do
        local t = tris[ti]
        local ax, az, bx, bz, cx, cz = t[1], t[3], t[4], t[6], t[7], t[9]
        local d = (bz - cz) * (ax - cx) + (cx - bx) * (az - cz)
        if abs(d) > 1e-12 then
          local l1 = ((bz - cz) * (x - cx) + (cx - bx) * (z - cz)) / d
          local l2 = ((cz - az) * (x - cx) + (ax - cx) * (z - cz)) / d
          local l3 = 1 - l1 - l2
          local m = min(l1, l2, l3)
          if m >= -1e-6 then return l1 * t[2] + l2 * t[5] + l3 * t[8] end
          if -m < bestd then bestd, besty = -m, l1 * t[2] + l2 * t[5] + l3 * t[8] end
        end
      end
    end
    if besty then return besty end
    -- outside every triangle (a point on the rim): the nearest vertex
    local bd, by = huge, 0
    for _, t in ipairs(tris) do
      for k = 0, 6, 3 do
        local dx, dz = t[k + 1] - x, t[k + 3] - z
        local dd = dx * dx + dz * dz
        if dd < bd then bd, by = dd, t[k + 2] end
      end
    end
    return by
  end
end

-- Ground fans of a room over polygon pieces (hubs the decomposition adds follow the height
-- function); returns the fans' triangles (x, y, z of three points each) as drawn.
local function ground(ctx, r, pieces, texture)
  local b = ctx.b
  local tris = {}
  local hub = ctx.height and function(x, z) return ctx:h(x, z, nil) end or nil
  for _, g in ipairs(pieces) do
    local n0 = #r.ops
    r:fan(g.pts, texture, { hub_height = hub })
    for k = n0 + 1, #r.ops do
      local op = r.ops[k]
      if op.type == "fan" then
        local f = b:flat_of(op.refs) -- the fan's points, x, y, z each, in one call
        local hx, hy, hz = f[1], f[2], f[3]
        for j = 3, #op.refs do
          local i = 3 * j
          tris[#tris + 1] = { hx, hy, hz, f[i - 5], f[i - 4], f[i - 3], f[i - 2], f[i - 1], f[i] }
        end
      end
    end
  end
  return tris
end

-- ================================================================ buildings

-- Runs of consecutive frontage edges of a room polygon, as point chains; a room whose whole
-- boundary is frontage gives one closed run opened at the middle of its longest edge.
local function frontage(P, want)
  local n = #P.pts
  local all = true
  for i = 1, n do if not want[P.kinds[i]] then all = false; break end end
  local chains = {}
  if all then
    local best, bl = 1, -1
    for i = 1, n do
      local l = dist(P.pts[i], P.pts[i % n + 1])
      if l > bl then best, bl = i, l end
    end
    local a, c = P.pts[best], P.pts[best % n + 1]
    local mid = { (a[1] + c[1]) / 2, (a[2] + c[2]) / 2, (a[3] + c[3]) / 2 }
    local ch = { mid }
    for k = 1, n do ch[#ch + 1] = P.pts[(best + k - 1) % n + 1] end
    ch[#ch + 1] = mid
    chains[1] = ch
    return chains
  end
  for i = 1, n do
    local prev = (i - 2) % n + 1
    if want[P.kinds[i]] and not want[P.kinds[prev]] then
      local ch = { P.pts[i] }
      local k = i
      while want[P.kinds[k]] do
        k = k % n + 1
        ch[#ch + 1] = P.pts[k]
        if k == i then break end
      end
      chains[#chains + 1] = ch
    end
  end
  return chains
end

-- Drops chain points that lie on the line of their neighbours (straight streets sample a
-- point every few metres; a wall needs one segment there).
local function simplify(ch)
  local out = { ch[1] }
  for k = 2, #ch - 1 do
    local a, p, c = out[#out], ch[k], ch[k + 1]
    local d = seg_dist(p[1], p[3], a[1], a[3], c[1], c[3])
    if d > 0.03 then out[#out + 1] = p end
  end
  out[#out + 1] = ch[#ch]
  local clean = { out[1] }
  for k = 2, #out do
    if dist(out[k], clean[#clean]) > 0.05 then clean[#clean + 1] = out[k] end
  end
  return clean
end

local function rint(rng, lo, hi)
  if hi <= lo then return lo end
  return lo + floor(rng() * (hi - lo + 1))
end

local function runi(rng, lo, hi)
  if hi <= lo then return lo end
  return lo + rng() * (hi - lo)
end

local function range(v, name)
  if type(v) == "number" then return v, v end
  if type(v) == "table" and type(v[1]) == "number" then return v[1], v[2] or v[1] end
  error(string_format("psdl.city.blocks: buildings.%s: a number or {min, max} expected", name), 0)
end

local function pick(rng, list)
  return list[rint(rng, 1, #list)]
end

-- Texture names from a style set name, a list or one name.
local function names(style_set, v, default)
  if v == nil then v = default end
  if type(v) == "string" then
    local s = style_set and style_set[v]
    if type(s) == "table" then return s end
    return { v }
  end
  if type(v) == "table" and #v > 0 then return v end
  return nil
end

-- Does footprint fp (retail) stand inside room R, clear of the buildings placed there? If
-- so it is recorded as placed.
local function fits(R, fp)
  if #fp < 3 or not simple(fp) then return false end
  if area2(fp) >= 0 then return false end
  local t = inset(fp, 0.05)
  local room = R.pts
  local first_outside = core.first_outside
  if first_outside then -- the builder's own test (Builder:building), stricter than its 0.05 m
    local rf = R.flat
    if not rf then
      rf = {}
      for i, p in ipairs(room) do rf[3 * i - 2], rf[3 * i - 1], rf[3 * i] = p[1], p[2], p[3] end
      if core.points then rf = core.points(rf) end -- converted once for all the room's tests
      R.flat = rf
    end
    local ff = {}
    for i, p in ipairs(fp) do ff[3 * i - 2], ff[3 * i - 1], ff[3 * i] = p[1], 0, p[3] end
    if first_outside(rf, ff, true, 0.01) then return false end
  else -- the same in Lua: the inset footprint's points inside, its edges crossing no room edge
    local within = R.inside
    if not within then within = locator(room); R.inside = within end
    for _, p in ipairs(t) do
      if not within(p[1], p[3]) then return false end
    end
    local bb = bbox(t)
    local bx0, bx1, bz0, bz1 = bb[1], bb[2], bb[3], bb[4]
    local nr, nt = #room, #t
    local a = room[nr]
    for j = 1, nr do
      local c = room[j]
      local ax, az, cx, cz = a[1], a[3], c[1], c[3]
      if not ((ax < bx0 and cx < bx0) or (ax > bx1 and cx > bx1) or (az < bz0 and cz < bz0) or (az > bz1 and cz > bz1)) then
        for i = 1, nt do
          local p, q = t[i], t[i % nt + 1]
          if segs_cross(p[1], p[3], q[1], q[3], ax, az, cx, cz) then return false end
        end
      end
      a = c
    end
  end
  local bb = bbox(t)
  for _, o in ipairs(R.placed) do
    if overlap(t, bb, o.pts, o.bb) then return false end
  end
  R.placed[#R.placed + 1] = { pts = t, bb = bb }
  return true
end

-- A footprint (retail) cut back to room R's polygon (retail) and kept `margin` metres off its
-- edges: clipped by the inner half-plane of every room edge near it (Sutherland-Hodgman). On
-- a concave room this can cut a little more than needed; `fits` checks the result. Returns
-- nil when less than `min_share` of the footprint's area (or under 8 m²) is left.
local FOOTPRINT_MARGIN, FOOTPRINT_MIN_SHARE = 0.1, 0.3
local function clip_footprint(fp, room, margin)
  local bb = bbox(fp)
  local pad = margin + 0.5
  local out = fp
  local n = #room
  for i = 1, n do
    local a, c = room[i], room[i % n + 1]
    local ex, ez = c[1] - a[1], c[3] - a[3]
    local el = sqrt(ex * ex + ez * ez)
    if el > 1e-9 and not ((a[1] < bb[1] - pad and c[1] < bb[1] - pad) or (a[1] > bb[2] + pad and c[1] > bb[2] + pad)
        or (a[3] < bb[3] - pad and c[3] < bb[3] - pad) or (a[3] > bb[4] + pad and c[3] > bb[4] + pad)) then
      -- signed distance inside (retail: the room lies right of a -> c, cross < 0)
      local function d(p) return -((ex * (p[3] - a[3]) - ez * (p[1] - a[1])) / el) - margin end
      local res = {}
      local m = #out
      for k = 1, m do
        local p, q = out[k], out[k % m + 1]
        local dp, dq = d(p), d(q)
        if dp >= 0 then res[#res + 1] = p end
        if (dp >= 0) ~= (dq >= 0) then
          local t = dp / (dp - dq)
          res[#res + 1] = { p[1] + t * (q[1] - p[1]), p[2], p[3] + t * (q[3] - p[3]) }
        end
      end
      out = res
      if #out < 3 then return nil end
    end
  end
  -- drop repeated points
  local clean = {}
  for _, p in ipairs(out) do
    local l = clean[#clean]
    if not l or abs(l[1] - p[1]) + abs(l[3] - p[3]) > 1e-3 then clean[#clean + 1] = p end
  end
  if #clean > 1 and abs(clean[1][1] - clean[#clean][1]) + abs(clean[1][3] - clean[#clean][3]) <= 1e-3 then
    clean[#clean] = nil
  end
  local a0, a1 = -area2(fp), -area2(clean)
  if #clean < 3 or a1 < 16 or a1 < FOOTPRINT_MIN_SHARE * a0 then return nil end
  return clean
end

-- Lays buildings out along one frontage chain of a room.
local function layout(ctx, R, chain, bs)
  local rng = ctx.rng
  local Q = simplify(chain)
  local m = #Q
  if m < 2 then return end
  local seg, S = {}, 0
  for k = 1, m - 1 do
    local dx, dz = Q[k + 1][1] - Q[k][1], Q[k + 1][3] - Q[k][3]
    local l = sqrt(dx * dx + dz * dz)
    seg[k] = { tx = dx / l, tz = dz / l, len = l, s0 = S }
    S = S + l
  end
  local L = S
  -- mitre vectors: the inward offset of chain point k by o is Q[k] + mit[k] * o
  local mit = {}
  for k = 1, m do
    local a, c = seg[k - 1] or seg[k], seg[k] or seg[k - 1]
    local nax, naz, ncx, ncz = a.tz, -a.tx, c.tz, -c.tx
    local sx, sz = nax + ncx, naz + ncz
    local sl = sqrt(sx * sx + sz * sz)
    if sl < 1e-9 then mit[k] = { ncx, ncz }
    else
      sx, sz = sx / sl, sz / sl
      local d = sx * ncx + sz * ncz
      if d < 0.3 then d = 0.3 end
      mit[k] = { sx / d, sz / d }
    end
  end
  local sb = bs.setback
  local dmin, dmax = bs.depth[1], bs.depth[2]
  local wmin, wmax = bs.width[1], bs.width[2]
  local gmin, gmax = bs.gap[1], bs.gap[2]
  local bay = bs.bay_width
  local minw = max(4, bay)
  local cm = 0.3
  -- Around chain point k, the stretch [S_k - before, S_k + after] where a wall square to
  -- the street at depth `o` would not meet the offset lines cleanly.
  local function reach(k, o)
    local before = max(0, -o * (mit[k][1] * seg[k - 1].tx + mit[k][2] * seg[k - 1].tz), 0)
    local after = max(0, o * (mit[k][1] * seg[k].tx + mit[k][2] * seg[k].tz))
    -- the setback line too
    before = max(before, -sb * (mit[k][1] * seg[k - 1].tx + mit[k][2] * seg[k - 1].tz))
    after = max(after, sb * (mit[k][1] * seg[k].tx + mit[k][2] * seg[k].tz))
    return before + cm, after + cm
  end
  -- sharp bends (corners) get a corner building; regular buildings never end near one
  local corners, forbid = {}, {}
  for k = 2, m - 1 do
    local a, c = seg[k - 1], seg[k]
    local turn = abs(atan(a.tx * c.tz - a.tz * c.tx, a.tx * c.tx + a.tz * c.tz))
    if turn > 25 * pi / 180 then
      corners[#corners + 1] = k
      local bf, af = reach(k, sb + dmax)
      forbid[#forbid + 1] = { seg[k].s0 - bf, seg[k].s0 + af, k = k }
    end
  end
  local function allowed(s)
    if s < -1e-9 or s > L + 1e-9 then return false end
    for _, f in ipairs(forbid) do if s > f[1] and s < f[2] then return false end end
    return true
  end
  local function snap_back(s, lo)
    for _ = 1, #forbid + 1 do
      local moved = false
      for _, f in ipairs(forbid) do
        if s > f[1] and s < f[2] then s = f[1]; moved = true end
      end
      if not moved then break end
    end
    if s < lo then return nil end
    return s
  end
  local function snap_fwd(s, hi)
    for _ = 1, #forbid + 1 do
      local moved = false
      for _, f in ipairs(forbid) do
        if s > f[1] and s < f[2] then s = f[2]; moved = true end
      end
      if not moved then break end
    end
    if s > hi then return nil end
    return s
  end
  local function locate(s) -- the first segment ending at or after s (ends never decrease): bisection
    local lo, hi = 1, m - 1
    while lo < hi do
      local mid = (lo + hi) // 2
      local g = seg[mid]
      if s <= g.s0 + g.len + 1e-9 then hi = mid else lo = mid + 1 end
    end
    return lo, s - seg[lo].s0
  end
  -- The point of a wall square to the street at station s, o metres in; near a bend, where
  -- that square line would leave the offset line's segment, the bend's mitre point instead,
  -- so that walls at increasing stations never cross (gentle curves need no gap).
  local function foot(s, o)
    local k, u = locate(s)
    local g = seg[k]
    local lo = o * (mit[k][1] * g.tx + mit[k][2] * g.tz)
    local hi = g.len + o * (mit[k + 1][1] * g.tx + mit[k + 1][2] * g.tz)
    if u < lo then return { Q[k][1] + mit[k][1] * o, 0, Q[k][3] + mit[k][2] * o } end
    if u > hi then return { Q[k + 1][1] + mit[k + 1][1] * o, 0, Q[k + 1][3] + mit[k + 1][2] * o } end
    return { Q[k][1] + g.tx * u + g.tz * o, 0, Q[k][3] + g.tz * u - g.tx * o }
  end
  local function footprint(s0, s1, D)
    local front, back = { foot(s0, sb) }, { foot(s0, sb + D) }
    for k = 2, m - 1 do
      local sk = seg[k].s0
      if sk > s0 + 1e-6 and sk < s1 - 1e-6 then
        front[#front + 1] = { Q[k][1] + mit[k][1] * sb, 0, Q[k][3] + mit[k][2] * sb }
        back[#back + 1] = { Q[k][1] + mit[k][1] * (sb + D), 0, Q[k][3] + mit[k][2] * (sb + D) }
      end
    end
    front[#front + 1] = foot(s1, sb)
    back[#back + 1] = foot(s1, sb + D)
    for i = #back, 1, -1 do front[#front + 1] = back[i] end
    local out = {}
    for _, p in ipairs(front) do
      local q = out[#out]
      if not q or dist(p, q) > 0.05 then out[#out + 1] = p end
    end
    while #out > 1 and dist(out[1], out[#out]) <= 0.05 do out[#out] = nil end
    return out
  end
  -- the ends pulled in when a building does not fit (a slanted room edge at a row's end)
  local TRIMS = { { 0, 0 }, { 2, 0 }, { 0, 2 }, { 4, 0 }, { 0, 4 }, { 4, 4 }, { 7, 0 }, { 0, 7 } }
  local DEPTHS = { 1, 0.65, 0.4 } -- the depth tried, as shares of D
  local function place(s0, s1, D)
    if s1 - s0 < minw then return false end
    local fp
    for _, tr in ipairs(TRIMS) do
      local a, c = s0 + tr[1], s1 - tr[2]
      if c - a < minw then break end
      if tr[1] == 0 or allowed(a) then
        if tr[2] == 0 or allowed(c) then
          for _, f in ipairs(DEPTHS) do
            local d = D * f
            if d >= 3 then
              local cand = footprint(a, c, d)
              if fits(R, cand) then fp = cand; break end
            end
          end
        end
      end
      if fp then break end
    end
    if not fp then return false end
    ctx:building(R, fp, bs)
    return true
  end
  local function width()
    local nb = rint(rng, max(1, floor(wmin / bay + 0.5)), max(1, floor(wmax / bay + 0.5)))
    return max(minw, nb * bay)
  end
  local endm = max(0.5, gmin / 2)
  -- 1. corner buildings: at every bend of more than 25 degrees, a building wrapping it
  local taken = {} -- occupied stretches {s0, s1}, in chain order
  local lo_limit = endm
  for ci, k in ipairs(corners) do
    local D = runi(rng, dmin, dmax)
    local bf, af = reach(k, sb + D)
    local f0, f1 = seg[k].s0 - bf, seg[k].s0 + af
    local nxt = corners[ci + 1]
    local hi_limit = L - endm
    if nxt then
      local nbf = reach(nxt, sb + dmax)
      hi_limit = (f1 + seg[nxt].s0 - nbf) / 2 - gmin / 2
    end
    local arm_a, arm_b = runi(rng, 2, max(2, wmax / 2)), runi(rng, 2, max(2, wmax / 2))
    local c0 = max(f0 - arm_a, lo_limit)
    local c1 = min(f1 + arm_b, hi_limit)
    c0 = c0 < f0 and snap_back(c0, lo_limit) or nil
    c1 = c1 > f1 and snap_fwd(c1, hi_limit) or nil
    if c0 and c1 and c0 < f0 and c1 > f1 then
      -- a wall square to the street at depth D must clear every other bend inside
      if place(c0, c1, D) then
        taken[#taken + 1] = { c0, c1 }
        lo_limit = c1 + gmin
      end
    end
  end
  -- 2. rows between the corner buildings (and the chain's ends)
  local runs = {}
  local prev = endm - gmin
  for _, t in ipairs(taken) do
    runs[#runs + 1] = { prev + runi(rng, gmin, gmax), t[1] - runi(rng, gmin, gmax) }
    prev = t[2]
  end
  runs[#runs + 1] = { prev + runi(rng, gmin, gmax), L - endm }
  if #taken == 0 then runs[1][1] = endm end
  for _, run in ipairs(runs) do
    local r0, r1 = run[1], run[2]
    local s = snap_fwd(r0, r1)
    local guard = 0
    while s and r1 - s >= minw and guard < 500 do
      guard = guard + 1
      local e = s + width()
      if r1 - e < max(minw, wmin * 0.6) + gmin then e = r1 end -- no room for another: take the rest
      if e - s > wmax * 1.6 then e = s + wmax end
      if not allowed(e) then e = snap_back(e, s + minw) or snap_fwd(e, r1) end
      if not e then break end
      local D = runi(rng, dmin, dmax)
      place(s, e, D)
      s = snap_fwd(e + runi(rng, gmin, gmax), r1)
    end
  end
end

-- A building on footprint fp (retail, plan) in room R.
function Ctx:building(R, fp, bs, given)
  local rng, b = self.rng, self.b
  local outline = {}
  local base = -huge
  for i, p in ipairs(fp) do
    local y = floor(R.ground(p[1], p[3]) * 1000 + 0.5) / 1000
    outline[i] = { p[1], y, p[3] }
    if y > base then base = y end
  end
  local floors = rint(rng, bs.floors[1], bs.floors[2])
  local fh = bs.floor_height
  local top
  if given then -- a footprint with its own levels and / or height
    local lv, h = given.levels, given.height
    if type(h) == "number" and h > 0 then
      floors = (type(lv) == "number" and lv >= 1) and floor(lv + 0.5) or max(1, floor(h / fh + 0.5))
      fh = h / floors
      top = base + h
    elseif type(lv) == "number" and lv >= 1 then
      floors = floor(lv + 0.5)
    end
  end
  -- under a bridge deck: no taller than the clearance (less a gap for the deck), or none
  local decks = self.decks
  if decks then
    local bb = bbox(fp)
    local clear = huge
    for _, d in ipairs(decks) do
      if overlap(fp, bb, d.pts, d.bb) then clear = min(clear, d.low - base - M.DECK_GAP) end
    end
    if clear < huge then
      if clear < fh then
        self.report.under_decks = (self.report.under_decks or 0) + 1
        if given then given.why = "under a bridge deck" end
        return false
      end
      if (top or base + floors * fh) > base + clear then
        floors = max(1, min(floors, floor(clear / fh)))
        top = nil
        if given then top = base + floors * fh end
      end
    end
  end
  local facade = pick(rng, bs.facades)
  local o = { outline = outline, floors = floors, floor_height = fh, bay_width = bs.bay_width, top = top,
              facade = facade, roof = pick(rng, bs.roofs), sliver = bs.sliver, sliver_density = bs.sliver_density }
  if bs.ground_facades and floors >= 2 then
    o.ground_height = fh
    o.ground = pick(rng, bs.ground_facades)
    o.floors = floors - 1
  end
  local st = b:building(R.room, o)
  self.report.buildings = self.report.buildings + 1
  local rec = { room = R.room, outline = outline, base = st.base, top = st.top, floors = floors,
                facades = st.facades, slivers = st.slivers, footprint = given and given.index or nil }
  self.report.building_list[#self.report.building_list + 1] = rec
  R.nbuildings = R.nbuildings + 1
  return true
end

-- Building options: defaults, the fill's, a face override's.
local function building_spec(ctx, over)
  local d = M.DEFAULTS.buildings
  local src = over
  local o = {}
  for k, v in pairs(d) do o[k] = v end
  for k, v in pairs(ctx.buildings_base or {}) do o[k] = v end
  if type(src) == "table" then for k, v in pairs(src) do o[k] = v end end
  local style = ctx.style
  local f1, f2 = range(o.floors, "floors")
  local g1, g2 = range(o.gap, "gap")
  local d1, d2 = range(o.depth, "depth")
  local w1, w2 = range(o.width, "width")
  if f1 < 1 or f2 < f1 then error("psdl.city.blocks: buildings.floors: 1 <= min <= max expected", 0) end
  if d1 <= 0 or d2 < d1 then error("psdl.city.blocks: buildings.depth: 0 < min <= max expected", 0) end
  if w1 <= 0 or w2 < w1 then error("psdl.city.blocks: buildings.width: 0 < min <= max expected", 0) end
  if g1 < 0 or g2 < g1 then error("psdl.city.blocks: buildings.gap: 0 <= min <= max expected", 0) end
  local facades = names(style.facades, o.facades, "upper")
  if not facades then error("psdl.city.blocks: buildings.facades: a facade set name, a texture name or a list expected", 0) end
  local gf
  if o.ground_floor then
    gf = names(style.facades, o.ground_floor == true and "ground" or o.ground_floor, "ground")
  end
  -- texture group handles, resolved once (the builder takes them as they are)
  local b = ctx.b
  local function groups(list)
    if not list then return nil end
    local out = {}
    for i, nm in ipairs(list) do out[i] = b:texture(nm) end
    return out
  end
  return {
    floors = { f1, f2 }, floor_height = o.floor_height, bay_width = o.bay_width, setback = o.setback or 0,
    gap = { g1, g2 }, depth = { d1, d2 }, width = { w1, w2 }, facades = groups(facades), ground_facades = groups(gf),
    roofs = groups(names(nil, o.roofs, style.roofs) or { "s_concrt" }),
    sliver = b:texture(o.sliver or (style.slivers and style.slivers[1]) or "sliver"),
    sliver_density = o.sliver_density,
  }
end

-- ================================================================ rooms of a face

local function merge(dst, src)
  for k, v in pairs(src or {}) do dst[k] = v end
  return dst
end

-- One block room over polygon P: ground, and buildings when `bs` is given.
function Ctx:room(P, name, texture, bs, frontage_kinds)
  local b = self.b
  if crosses(P) then
    local p = P.pts[1]
    local w = self.report.warnings
    w[#w + 1] = string_format("%s near (%.1f, %.1f): its outline crosses itself; left out", name, p[1], p[3])
    return nil, nil
  end
  local refs = {}
  for i, v in ipairs(P.refs) do refs[i] = v end
  local r = b:room{ kind = "block", name = name, outline_refs = refs }
  local pieces = { P }
  local flat_y = P.pts[1][2]
  for _, p in ipairs(P.pts) do
    if p[2] ~= flat_y then flat_y = nil; break end
  end
  if self.height and #P.pts > 3 then
    pieces = {}
    split(self, P, self.ground_lim, pieces)
    if #pieces > 1 then flat_y = nil end
  end
  local t0 = os_clock()
  local tris = ground(self, r, pieces, texture)
  local t1 = os_clock()
  self.time.ground = self.time.ground + (t1 - t0)
  if flat_y then
    for _, t in ipairs(tris) do
      if t[2] ~= flat_y or t[5] ~= flat_y or t[8] ~= flat_y then flat_y = nil; break end
    end
  end
  local R = { room = r, pts = P.pts, placed = {}, ground = sampler(tris, flat_y), nbuildings = 0 }
  local fps = self.footprints
  if fps then -- given footprints standing wholly in this room, first
    local bb = bbox(P.pts)
    for _, i in ipairs(self.obstacles.query(bb[1], bb[2], bb[3], bb[4])) do
      local f = fps[i]
      if not f.used then
        local c = f.center
        if inside(P.pts, c[1], c[3]) then
          -- cut back to the room, a little off its edges (the sidewalks), when it reaches them
          local pts = f.pts
          local within = R.inside
          if not within then within = locator(P.pts); R.inside = within end
          local off = false
          for _, q in ipairs(inset(pts, -FOOTPRINT_MARGIN)) do
            if not within(q[1], q[3]) then off = true; break end
          end
          if off then pts = clip_footprint(pts, P.pts, FOOTPRINT_MARGIN) end
          if pts and fits(R, pts) then
            if self:building(R, pts, bs or self.footprint_bs, f) then
              f.used = true
              if off then f.clipped = true end
            end
          else
            f.why = pts and "overlaps another building or crosses the block's edge"
              or "mostly on a road or sidewalk (too little left inside the block)"
          end
        end
      end
    end
  end
  if bs then
    for _, ch in ipairs(frontage(P, frontage_kinds or FRONTAGE)) do layout(self, R, ch, bs) end
  end
  self.time.buildings = self.time.buildings + (os_clock() - t1)
  self.report.rooms[#self.report.rooms + 1] = r
  return r, R
end

-- Texture name of a ground kind from the style.
local function ground_texture(style, kind)
  local g = style.ground or {}
  local list = g[kind] or g.paving
  return list and list[1] or "s_concrt"
end

--- Fill a builder's road layout with block rooms (see the module comment).
-- @tparam Builder b a psdl.builder Builder holding the road and intersection rooms
-- @tparam[opt] table opts
--
-- * `style` (default the builder's), `rng` (function() -> [0, 1); default a fixed-seed
--   generator), `margin` (m, 30; 0 or false: no apron), `height` (function(x, z) -> y or
--   nil: the ground);
-- * `buildings`: false (default), or `{floors = {min, max}, floor_height (3.5), bay_width
--   (4), setback (0), gap = {min, max}, depth = {min, max}, width = {min, max}, facades =
--   style set name ("upper") | list of names, ground_floor = true | set name | list (a
--   ground floor of shop fronts), roofs = list, sliver = name, sliver_density}`;
-- * `overrides`: `{ {point = {x, z}, park = true | plaza = true | buildings = {...} |
--   buildings = false, texture = name}, ... }` for the face holding the point;
-- * `footprints`: `{ {outline = {{x, z}...}, levels, height}, ... }` (docs/network.md
--   `buildings`): placed where a room holds them wholly, before any generated row;
-- * `ground`, `park`, `plaza`, `apron_texture`: ground texture names (default the style's
--   first paving, grass, plaza and grass); `apron_buildings`: rows along the network's
--   outside too;
-- * `room`, `ground_limits`, `apron`: splitting limits (`M.DEFAULTS`); `apron_ground`:
--   ground limits of the apron's rooms (default `ground_limits`); `split`: "chords"
--   (default) or "convex";
-- * `apron_ring`: the apron's outer ring instead of the margin rectangle: points `{x, y, z}`
--   (y nil: the ground's) in retail winding around the whole network (psdl.city.terrain
--   passes the inner edge of its terrain grid).
-- @treturn table `{blocks (bounded faces filled), buildings, parks, plazas, apron = bool,
-- rooms = {Room...} (every block room made), faces = {{kind, area, rooms, outline,
-- buildings}...}, apron_rooms = {Room...}, building_list = {{room, outline, base, top,
-- floors, facades, slivers, footprint}...}, footprints, footprints_skipped, skipped_faces,
-- warnings = {...}, seconds = {total, faces, split, ground, buildings, apron}}`
function M.fill(b, opts)
  opts = opts or {}
  if type(b) ~= "table" or type(b.rooms) ~= "table" or not b.vpool then
    error("bad argument #1 to 'fill' (a psdl.builder Builder expected)", 2)
  end
  if type(opts) ~= "table" then error("bad argument #2 to 'fill' (table expected)", 2) end
  local style = opts.style or b.style
  if type(style) == "string" then style = require("psdl.styles." .. style) end
  local rng = opts.rng
  if rng == nil then
    local state = 0x2545F491
    rng = function()
      state = (state * 1103515245 + 12345) % 2147483648
      return state / 2147483648
    end
  elseif type(rng) ~= "function" then
    error("bad argument #2 to 'fill' (rng: function expected)", 2)
  end
  if opts.height ~= nil and type(opts.height) ~= "function" then
    error("bad argument #2 to 'fill' (height: function expected)", 2)
  end
  local report = { blocks = 0, buildings = 0, parks = 0, plazas = 0, apron = false, rooms = {}, faces = {},
                   apron_rooms = {}, building_list = {}, warnings = {} }
  local ctx = setmetatable({
    b = b, rng = rng, style = style, height = opts.height, report = report,
    room_lim = merge(merge({}, M.DEFAULTS.room), opts.room),
    ground_lim = merge(merge({}, M.DEFAULTS.ground), opts.ground_limits),
    apron_lim = merge(merge({}, M.DEFAULTS.apron), opts.apron),
    buildings_base = type(opts.buildings) == "table" and opts.buildings or nil,
    mode = opts.split,
  }, Ctx)
  if opts.split ~= nil and opts.split ~= "chords" and opts.split ~= "convex" then
    error("bad argument #2 to 'fill' (split: \"chords\" or \"convex\" expected)", 2)
  end
  -- bridge decks (warp rooms above the ground): buildings under them stay below
  for _, r in ipairs(b.rooms) do
    if r.is_bridge and not r.is_tunnel then
      local out = room_outline(b, r)
      if out and #out >= 3 then
        local pts, low = {}, huge
        for k, v in ipairs(out) do
          local q = b:point(v)
          pts[k] = q
          if q[2] < low then low = q[2] end
        end
        ctx.decks = ctx.decks or {}
        ctx.decks[#ctx.decks + 1] = { pts = pts, bb = bbox(pts), low = low }
      end
    end
  end
  local existing = #b.rooms
  local t_start = os_clock()
  ctx.time = { ground = 0, buildings = 0 }
  local net = M.faces(b)
  ctx.time.faces = os_clock() - t_start
  for _, w in ipairs(net.warnings) do report.warnings[#report.warnings + 1] = w end
  local default_bs = opts.buildings and building_spec(ctx, nil) or nil
  -- overrides: the face holding each point (the smallest)
  local face_over = {}
  for _, o in ipairs(opts.overrides or {}) do
    local p = o.point
    if type(p) ~= "table" or type(p[1]) ~= "number" then
      error("bad argument #2 to 'fill' (overrides: each needs point = {x, z})", 2)
    end
    local px, pz = p[1], p[3] or p[2]
    if #p >= 3 then pz = p[3] end
    local best
    for fi, F in ipairs(net.faces) do
      if inside(F.pts, px, pz) then
        local inhole = false
        for _, H in ipairs(F.holes) do if inside(H.pts, px, pz) then inhole = true end end
        if not inhole and (not best or F.area < net.faces[best].area) then best = fi end
      end
    end
    if best then face_over[best] = o
    else report.warnings[#report.warnings + 1] = string_format("override point (%g, %g) lies in no face", px, pz) end
  end
  -- given footprints (a network table's `buildings`, docs/network.md)
  if opts.footprints ~= nil then
    if type(opts.footprints) ~= "table" then error("bad argument #2 to 'fill' (footprints: list expected)", 2) end
    local fps = {}
    for i, f in ipairs(opts.footprints) do
      local ol = type(f) == "table" and (f.outline or f) or nil
      local pts = {}
      for _, q in ipairs(type(ol) == "table" and ol or {}) do
        if type(q) == "table" and type(q[1]) == "number" then
          local z = q[3] or q[2]
          if type(z) == "number" then
            local last = pts[#pts]
            if not last or abs(last[1] - q[1]) + abs(last[3] - z) > 1e-6 then pts[#pts + 1] = { q[1], 0, z } end
          end
        end
      end
      if #pts > 1 and abs(pts[1][1] - pts[#pts][1]) + abs(pts[1][3] - pts[#pts][3]) <= 1e-6 then pts[#pts] = nil end
      if #pts >= 3 and abs(area2(pts)) > 1 and simple(pts) then
        if area2(pts) > 0 then
          local r_ = {}
          for k = #pts, 1, -1 do r_[#r_ + 1] = pts[k] end
          pts = r_
        end
        local sx, sz = 0, 0
        for _, q in ipairs(pts) do sx, sz = sx + q[1], sz + q[3] end
        fps[#fps + 1] = { pts = pts, bb = bbox(pts), center = { sx / #pts, 0, sz / #pts }, levels = f.levels,
                          height = f.height, index = i }
      else
        report.footprints_skipped = (report.footprints_skipped or 0) + 1
        report.footprints_why = report.footprints_why or {}
        local w = "not a simple polygon, or too small"
        report.footprints_why[w] = (report.footprints_why[w] or 0) + 1
      end
    end
    if #fps > 0 then
      ctx.footprints = fps
      ctx.obstacles = poly_index(fps, 40)
      ctx.footprint_bs = default_bs or building_spec(ctx, nil)
    end
  end
  local tex_block = opts.ground or ground_texture(style, "paving")
  local tex_park = opts.park or ground_texture(style, "grass")
  local tex_plaza = opts.plaza or ground_texture(style, "plaza")
  for fi, F in ipairs(net.faces) do
    lift_portals(ctx, F)
    for _, H in ipairs(F.holes) do lift_portals(ctx, H) end
    unfold(F, report.warnings, string_format("face %d", fi))
    for _, H in ipairs(F.holes) do unfold(H, report.warnings, string_format("face %d", fi)) end
    if crosses(F, F.holes) then
      local p = F.pts[1]
      report.warnings[#report.warnings + 1] = string_format("face %d near (%.1f, %.1f): its outline crosses itself "
        .. "(rooms of the network overlap there); left without ground", fi, p[1], p[3])
      report.skipped_faces = (report.skipped_faces or 0) + 1
      goto continue
    end
    do
    local o = face_over[fi]
    local kind, bs, tex = "block", default_bs, tex_block
    if o then
      if o.park then kind, bs, tex = "park", nil, tex_park
      elseif o.plaza then kind, bs, tex = "plaza", nil, tex_plaza
      elseif o.buildings == false then bs = nil
      elseif type(o.buildings) == "table" then bs = building_spec(ctx, o.buildings) end
      if o.texture then tex = o.texture end
    end
    local polys = region_pieces(ctx, F, F.holes, ctx.room_lim, string_format("face %d", fi))
    local face = { kind = kind, area = F.area, rooms = {}, outline = F.pts, buildings = 0 }
    for k, Pp in ipairs(polys) do
      local r, R = ctx:room(Pp, string_format("%s %d.%d", kind, fi, k), b:texture(tex), bs)
      if r then
        face.rooms[#face.rooms + 1] = r
        face.buildings = face.buildings + R.nbuildings
      end
    end
    report.faces[#report.faces + 1] = face
    if kind == "park" then report.parks = report.parks + 1
    elseif kind == "plaza" then report.plazas = report.plazas + 1 end
    report.blocks = report.blocks + 1
    end
    ::continue::
  end
  local t_apron = os_clock()
  -- the apron: a rectangle `margin` beyond the network, minus its outlines
  local margin = opts.margin
  if margin == nil then margin = M.DEFAULTS.margin end
  if margin and margin > 0 and #net.outlines > 0 then
    local x0, x1, z0, z1 = huge, -huge, huge, -huge
    for i = 1, existing do
      local r = b.rooms[i]
      local out = room_outline(b, r)
      for _, v in ipairs(out or {}) do
        local p = b:point(v)
        if p[1] < x0 then x0 = p[1] end
        if p[1] > x1 then x1 = p[1] end
        if p[3] < z0 then z0 = p[3] end
        if p[3] > z1 then z1 = p[3] end
      end
    end
    x0, x1, z0, z1 = x0 - margin, x1 + margin, z0 - margin, z1 + margin
    for _, H in ipairs(net.outlines) do
      lift_portals(ctx, H)
      unfold(H, report.warnings, "apron")
    end
    -- a new point's height without a height function: the nearest network outline point's
    -- (a bucket grid of the outline points, searched in growing rings)
    local cell = max(margin, 20)
    local buckets = {}
    for _, H in ipairs(net.outlines) do
      for _, p in ipairs(H.pts) do
        local key = floor(p[1] / cell) * 1000003 + floor(p[3] / cell)
        local l = buckets[key]
        if not l then l = {}; buckets[key] = l end
        l[#l + 1] = p
      end
    end
    local span = ceil(max(x1 - x0, z1 - z0) / cell) + 1
    local function ground_y(x, z)
      local y = ctx:h(x, z, nil)
      if y then return y end
      local gx, gz = floor(x / cell), floor(z / cell)
      local bd, by = huge, 0
      for ring = 0, span do
        for i = gx - ring, gx + ring do
          for j = gz - ring, gz + ring do
            if i == gx - ring or i == gx + ring or j == gz - ring or j == gz + ring then
              local l = buckets[i * 1000003 + j]
              if l then
                for _, p in ipairs(l) do
                  local dx, dz = p[1] - x, p[3] - z
                  local d = dx * dx + dz * dz
                  if d < bd then bd, by = d, p[2] end
                end
              end
            end
          end
        end
        if bd < huge and sqrt(bd) <= ring * cell then break end
      end
      return by
    end
    -- the rectangle in retail winding: (x0, z0) -> (x0, z1) -> (x1, z1) -> (x1, z0)
    local Rr = poly()
    local corners = { { x0, z0 }, { x0, z1 }, { x1, z1 }, { x1, z0 } }
    local step = ctx.apron_lim.step
    -- or the caller's ring around the whole network (retail winding; psdl.city.terrain: the
    -- inner edge of its terrain grid, so the two share these points exactly)
    if opts.apron_ring then
      for _, q in ipairs(opts.apron_ring) do
        local p, ref = ctx:new_point(q[1], q[2] or ground_y(q[1], q[3]), q[3])
        push(Rr, p, ref, "margin")
      end
      corners = {}
    end
    for k = 1, #corners do
      local a, c = corners[k], corners[k % 4 + 1]
      local len = sqrt((c[1] - a[1]) ^ 2 + (c[2] - a[2]) ^ 2)
      local n = max(1, ceil(len / step - 1e-9))
      for i = 0, n - 1 do
        local t = i / n
        local x, z = a[1] + (c[1] - a[1]) * t, a[2] + (c[2] - a[2]) * t
        local p, ref = ctx:new_point(x, ground_y(x, z), z)
        push(Rr, p, ref, "margin")
      end
    end
    local polys = region_pieces(ctx, Rr, net.outlines, ctx.apron_lim, "apron")
    local tex = opts.apron_texture or tex_park
    local abs_ = opts.apron_buildings and default_bs or nil
    local block_ground = ctx.ground_lim
    if opts.apron_ground then ctx.ground_lim = merge(merge({}, block_ground), opts.apron_ground) end
    for k, Pp in ipairs(polys) do
      local r = ctx:room(Pp, string_format("apron %d", k), b:texture(tex), abs_)
      if r then report.apron_rooms[#report.apron_rooms + 1] = r end
    end
    ctx.ground_lim = block_ground
    report.apron = #polys > 0
  end
  if ctx.footprints then
    local placed = 0
    for _, f in ipairs(ctx.footprints) do if f.used then placed = placed + 1 end end
    report.footprints = placed
    report.footprints_skipped = (report.footprints_skipped or 0) + #ctx.footprints - placed
    local why, clipped = report.footprints_why or {}, 0
    for _, f in ipairs(ctx.footprints) do
      if f.clipped then clipped = clipped + 1 end
      if not f.used then
        local w = f.why or "on a road or outside every block"
        why[w] = (why[w] or 0) + 1
      end
    end
    report.footprints_why, report.footprints_clipped = why, clipped
  end
  local t_end = os_clock()
  local tm = ctx.time
  report.seconds = { total = t_end - t_start, faces = tm.faces, apron = t_end - t_apron, ground = tm.ground,
                     buildings = tm.buildings }
  report.seconds.split = report.seconds.total - tm.faces - tm.ground - tm.buildings
  if ctx.unsplit then
    report.warnings[#report.warnings + 1] = string_format("%d pieces stayed above the room limits (no chord found)", ctx.unsplit)
  end
  return report
end

return M
