--- Does a road network fit? The measures the OSM clean-up and the network checker share:
-- road widths, the space a junction needs along each of its roads, and the plan-view
-- overlap of roads and junctions.
--
-- **The model.** A road is a corridor of its full width (carriageway, sidewalks, divider:
-- `footprint`) along its centre line. At a junction (three or more roads) each road's
-- corridor stops where its edge line clears the edge lines of its two angular neighbours;
-- with the gap angle `a` to a neighbour of half width `w_o`, a road of half width `w`
-- clears it at `(w_o + w cos a) / sin a` from the node (0 when `a` >= 180 degrees), and the
-- crosswalk depth is added: that distance is the road's **reach** at the node, and the
-- junction's room is the polygon through the road ends there. At a bend (two roads) the
-- inner edges meet at `w tan(d / 2)` from the node for a deflection `d`. A dead end needs
-- nothing. A road fits when its length is at least the reaches at both ends plus
-- `min_road_length`, and no two corridors (flat-ended rectangles per segment, outside
-- the junctions) or junction rooms at the same level overlap in plan.
-- @module psdl.osm.fit

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local T = require "psdl.osm.tags"
local plan_box = require("psdl.plan").box

local ipairs, pairs, type = ipairs, pairs, type
local math_sqrt, math_cos, math_sin, math_tan, math_atan, math_pi, math_abs, math_max, math_min, math_huge, math_rad =
  math.sqrt, math.cos, math.sin, math.tan, math.atan, math.pi, math.abs, math.max, math.min, math.huge, math.rad
local table_sort = table.sort

local M = {}

--- Default cross-sections (metres), the defaults of `psdl.city.profiles` (city
-- generation builds these when a road gives no `lanes` or `width`): 5 m lanes; street and
-- one-sided street 2 lanes and 4 m sidewalks; avenue and boulevard 4 lanes, 5 m
-- sidewalks, 2 m and 8 m medians; freeway 6 lanes, 3 m median, no sidewalks; alley 5 m,
-- walkway 4 m; 3 m crosswalks at junctions except on alleys, walkways and freeways; bridge
-- and tunnel roads start and end with 60 m ramps at grade (`psdl.city.tunnel` BRIDGE and
-- TUNNEL `ramp`).
M.dimensions = {
  lane = 5, crosswalk = 3, ramp = 60,
  profiles = {
    street = { lanes = 2, sidewalk = 4, sides = 2, crosswalk = true },
    one_sided = { lanes = 2, sidewalk = 4, sides = 1, crosswalk = true },
    alley = { width = 5, sides = 0 },
    walkway = { width = 4, sides = 0 },
    avenue = { lanes = 4, median = 2, sidewalk = 5, sides = 2, crosswalk = true },
    boulevard = { lanes = 4, median = 8, sidewalk = 5, sides = 2, crosswalk = true },
    freeway = { lanes = 6, median = 3, sidewalk = 0, sides = 0 },
  },
}

--- Dimensions with overrides: `{ lane =, crosswalk =, ramp =, sidewalk = (every profile
-- that has sidewalks), profiles = { street = { sidewalk = 3 }, ... } }`.
function M.resolve(over)
  local d = { lane = M.dimensions.lane, crosswalk = M.dimensions.crosswalk, ramp = M.dimensions.ramp, profiles = {} }
  for name, p in pairs(M.dimensions.profiles) do
    local q = {}
    for k, v in pairs(p) do q[k] = v end
    d.profiles[name] = q
  end
  if over then
    for k, v in pairs(over) do
      if k == "lane" or k == "crosswalk" or k == "ramp" then d[k] = v
      elseif k == "sidewalk" then
        for _, q in pairs(d.profiles) do if (q.sides or 0) > 0 then q.sidewalk = v end end
      elseif k == "profiles" then
        for name, p in pairs(v) do
          local q = d.profiles[name]
          if not q then error(string.format("unknown profile '%s' in dimensions", tostring(name)), 0) end
          for kk, vv in pairs(p) do q[kk] = vv end
        end
      else
        error(string.format("unknown dimension '%s'", tostring(k)), 0)
      end
    end
  end
  return d
end

local function profile_of(road, dims)
  local P = dims.profiles
  return P[road.walkway and "walkway" or road.profile or "street"] or P.street
end

--- Total width of a road (carriageway, sidewalks, median) as city generation will build
-- it: its `width`, else its `lanes` times the lane width, else the profile's default;
-- plus the profile's sidewalks (or those `sidewalk` asks for) and median. Reads the
-- fields of docs/network.md and the importer's `walkway`.
-- @tparam table road
-- @tparam[opt] table dims (default `M.dimensions`)
-- @treturn number metres
function M.footprint(road, dims)
  dims = dims or M.dimensions
  local P = profile_of(road, dims)
  local carriageway = road.width or (road.lanes and road.lanes * dims.lane) or P.width or (P.lanes or 2) * dims.lane
  local sides = P.sides or 0
  local sw = road.sidewalk
  if sw == "none" then sides = 0 elseif sw == "left" or sw == "right" then sides = 1 elseif sw == "both" then sides = 2 end
  local swidth = P.sidewalk or 0
  if sides > 0 and swidth == 0 then swidth = dims.profiles.street.sidewalk end
  return carriageway + sides * swidth + (P.median or 0)
end

--- Crosswalk depth where a road meets a junction (0 for profiles without crosswalks).
function M.crosswalk(road, dims)
  dims = dims or M.dimensions
  return profile_of(road, dims).crosswalk and dims.crosswalk or 0
end

--- Half width of a graph edge (cached on the edge).
function M.hw(e, dims)
  local h = e._hw
  if not h or e._hw_attr ~= e.attr then
    h = M.footprint(e.attr, dims) / 2
    e._hw, e._hw_attr = h, e.attr
  end
  return h
end

--- The level key of a road: roads cross at grade only when their keys are equal. `deck` is
-- the OSM layer of a road cleaned in the elevated graph (`psdl.osm.elevated`), where every
-- road is off the ground: decks of different layers cross without a junction.
function M.level(attr)
  return (attr.layer or 0) * 4 + (attr.bridge and 1 or 0) + (attr.tunnel and 2 or 0) + (attr.deck or 0) * 256
end

-- point at arc length s from the end `from_a` (true: from pts[1]) of a polyline
local function at_from(pts, s, from_a, L)
  if from_a then return G.at(pts, s) end
  L = L or G.length(pts)
  return G.at(pts, L - s)
end

--- How far along an edge its direction at a node is measured.
M.HEADING_DISTANCE = 10

--- The road ends at node n, sorted by angle: `{ e =, from_a =, angle =, hw = }` (a
-- self-loop gives two ends).
function M.ends(n, dims)
  local list = {}
  for _, e in ipairs(n.edges) do
    local L = Graph.len(e)
    local d = math_min(L * 0.5, M.HEADING_DISTANCE)
    if e.a == n then
      local x, z = at_from(e.pts, d, true)
      list[#list + 1] = { e = e, from_a = true, angle = math_atan(z - n.z, x - n.x), hw = M.hw(e, dims) }
    end
    if e.b == n then
      local x, z = at_from(e.pts, d, false, L)
      list[#list + 1] = { e = e, from_a = false, angle = math_atan(z - n.z, x - n.x), hw = M.hw(e, dims) }
    end
  end
  table_sort(list, function(p, q)
    if p.angle ~= q.angle then return p.angle < q.angle end
    return p.e.k < q.e.k
  end)
  return list
end

local function ccw_gap(a1, a2) -- angle from a1 turning counter-clockwise to a2, in [0, 2pi)
  local d = a2 - a1
  while d < 0 do d = d + 2 * math_pi end
  while d >= 2 * math_pi do d = d - 2 * math_pi end
  return d
end
M.ccw_gap = ccw_gap

-- (`clearance`) d raised to x when the corner (x, z) lies in the strip |z| <= w
local function clear_corner(d, w, x, z)
  if x > d and z <= w and z >= -w then return x end
  return d
end

-- (`clearance`) d raised to the largest x where side a-b crosses z = w or z = -w
local function clear_side(d, w, xa, za, xb, zb)
  local dz = zb - za
  if dz ~= 0 then
    local t = (w - za) / dz
    if t >= 0 and t <= 1 then
      local x = xa + t * (xb - xa)
      if x > d then d = x end
    end
    t = (-w - za) / dz
    if t >= 0 and t <= 1 then
      local x = xa + t * (xb - xa)
      if x > d then d = x end
    end
  end
  return d
end

--- How far along a road (half width w, leaving the node along +x) its corridor meets the
-- corridor of another road leaving the same node at angle phi (radians, counter-clockwise),
-- of half width wo and length lo: the largest x of the other corridor (a rectangle from
-- the node) inside the strip |z| <= w, x >= 0; 0 when they do not meet. The largest x of
-- that convex piece is at one of the rectangle's corners inside the strip or where one of
-- its sides crosses z = w or z = -w.
function M.clearance(phi, w, wo, lo)
  local c, s = math_cos(phi), math_sin(phi)
  local nx, nz = -s * wo, c * wo
  local ux, uz = c * lo, s * lo
  -- corners in order: A = n, D = n + u, C = -n + u, B = -n
  local x1, z1 = nx, nz
  local x2, z2 = nx + ux, nz + uz
  local x3, z3 = ux - nx, uz - nz
  local x4, z4 = -nx, -nz
  local d = 0
  d = clear_corner(d, w, x1, z1) d = clear_corner(d, w, x2, z2)
  d = clear_corner(d, w, x3, z3) d = clear_corner(d, w, x4, z4)
  d = clear_side(d, w, x1, z1, x2, z2) d = clear_side(d, w, x2, z2, x3, z3)
  d = clear_side(d, w, x3, z3, x4, z4) d = clear_side(d, w, x4, z4, x1, z1)
  return d
end

--- The reach of every end at a node: sets `reach` on each entry of `ends` and returns
-- the list. Junctions add the crosswalk depth; bends use the inner-edge distance.
function M.reaches(n, dims, ends)
  ends = ends or M.ends(n, dims)
  local k = #ends
  for i = 1, k do
    local me = ends[i]
    local d = 0
    if k >= 2 then
      for j = 1, k do
        if j ~= i then
          local o = ends[j]
          local c = M.clearance(o.angle - me.angle, me.hw, o.hw, Graph.len(o.e))
          if c > d then d = c end
        end
      end
      d = math_min(d, Graph.len(me.e) * 4 + 1000)
    end
    me.reach = k >= 3 and d + M.crosswalk(me.e.attr, dims) or d
  end
  return ends
end

--- Reach of edge e at its end on node n (`from_a` picks the end of a self-loop).
function M.reach(n, e, dims, from_a)
  if from_a == nil then from_a = e.a == n end
  for _, en in ipairs(M.reaches(n, dims)) do
    if en.e == e and en.from_a == from_a then return en.reach end
  end
  return 0
end

--- Length an edge needs: reach at both ends plus the minimum road length (`table`: a
-- reach table from `reach_table`, to avoid measuring the nodes again).
function M.need(e, dims, min_len, table)
  local r = table and table[e]
  if r then return (r[1] or 0) + (r[2] or 0) + (min_len or 0) end
  return M.reach(e.a, e, dims, true) + M.reach(e.b, e, dims, false) + (min_len or 0)
end

-- Measures node n's ends into t (t.ends[n] and the edges' reaches).
local function reach_node(t, n, dims)
  local ends = M.reaches(n, dims)
  t.ends[n] = ends
  for _, en in ipairs(ends) do
    local r = t[en.e]
    if not r then r = {} t[en.e] = r end
    if en.from_a then r[1] = en.reach else r[2] = en.reach end
  end
end

--- The reaches of every edge of a graph at both ends: `t[e] = { at a, at b }`, and
-- `t.ends[node]` the measured ends of each node.
function M.reach_table(g, dims)
  local t = { ends = {} }
  for n in pairs(g.nodes) do reach_node(t, n, dims) end
  return t
end

--- Update a `reach_table` for the nodes in `nodes` (a set; nodes that are gone are skipped):
-- their ends are measured again.
-- @tparam table t from `reach_table`
-- @tparam table nodes set of nodes
-- @tparam table dims
function M.reach_update(t, nodes, dims)
  for n in pairs(nodes) do
    if not n.dead then
      reach_node(t, n, dims)
    else
      t.ends[n] = nil
    end
  end
end

------------------------------------------------------------------------ overlap

-- Separating-axis test of two convex polygons (point lists): the overlap depth along the
-- axis of least overlap (<= 0 when separated).
local function sat(p, q)
  local best = math_huge
  for pass = 1, 2 do
    local poly = pass == 1 and p or q
    local n = #poly
    for i = 1, n do
      local a, b = poly[i], poly[i % n + 1]
      local ax, az = b[2] - a[2], a[1] - b[1] -- edge normal
      local l = math_sqrt(ax * ax + az * az)
      if l > 1e-9 then
        ax, az = ax / l, az / l
        local pmin, pmax, qmin, qmax = math_huge, -math_huge, math_huge, -math_huge
        for _, v in ipairs(p) do
          local d = v[1] * ax + v[2] * az
          if d < pmin then pmin = d end
          if d > pmax then pmax = d end
        end
        for _, v in ipairs(q) do
          local d = v[1] * ax + v[2] * az
          if d < qmin then qmin = d end
          if d > qmax then qmax = d end
        end
        local o = math_min(pmax, qmax) - math_max(pmin, qmin)
        if o < best then best = o end
        if best <= 0 then return best end
      end
    end
  end
  return best
end
M.sat = sat

local function rect(ax, az, bx, bz, hw)
  local dx, dz = bx - ax, bz - az
  local l = math_sqrt(dx * dx + dz * dz)
  if l < 1e-9 then return nil end
  local nx, nz = -dz / l * hw, dx / l * hw
  return { { ax + nx, az + nz }, { bx + nx, bz + nz }, { bx - nx, bz - nz }, { ax - nx, az - nz } }
end

-- The part of a polyline between arc lengths s0 and s1.
local function sub(pts, s0, s1)
  local out = {}
  local x, z, i = G.at(pts, s0)
  out[1] = { x, z }
  local acc = 0
  for j = 2, #pts do
    local p, q = pts[j - 1], pts[j]
    acc = acc + G.dist(p[1], p[2], q[1], q[2])
    if acc > s0 and acc < s1 then out[#out + 1] = q end
  end
  local x1, z1 = G.at(pts, s1)
  out[#out + 1] = { x1, z1 }
  return out
end
M.sub = sub

-- convex hull (monotone chain) of points
local function hull(points)
  table_sort(points, function(p, q) if p[1] ~= q[1] then return p[1] < q[1] end return p[2] < q[2] end)
  local function cross(o, a, b) return (a[1] - o[1]) * (b[2] - o[2]) - (a[2] - o[2]) * (b[1] - o[1]) end
  local lower, upper = {}, {}
  for _, p in ipairs(points) do
    while #lower >= 2 and cross(lower[#lower - 1], lower[#lower], p) <= 0 do lower[#lower] = nil end
    lower[#lower + 1] = p
  end
  for i = #points, 1, -1 do
    local p = points[i]
    while #upper >= 2 and cross(upper[#upper - 1], upper[#upper], p) <= 0 do upper[#upper] = nil end
    upper[#upper + 1] = p
  end
  lower[#lower] = nil
  upper[#upper] = nil
  for _, p in ipairs(upper) do lower[#lower + 1] = p end
  return lower
end

--- The pieces (convex polygons) of a graph in this model: per edge, one rectangle per
-- segment of the part outside its end junctions and bends; per junction (3+ roads), the
-- convex hull of its roads' cross-sections at their reaches. Each piece:
-- `{ poly =, owner = edge|node, level =, minx, minz, maxx, maxz }`. Also returns, per
-- edge, the clear interval `e._clear = {s0, s1}` (s0 > s1 when the edge is too short).
-- `reach`: the graph's `reach_table` when the caller has it (measured here otherwise).
function M.pieces(g, dims, reach)
  local pieces = {}
  reach = reach or M.reach_table(g, dims)
  for _, n in ipairs(g:node_list()) do
    local ends = reach.ends[n]
    if #ends >= 3 then
      local pts = {}
      for _, en in ipairs(ends) do
        local d = math_min(en.reach, Graph.len(en.e))
        local x, z = at_from(en.e.pts, d, en.from_a)
        local ux, uz = x - n.x, z - n.z
        local l = math_sqrt(ux * ux + uz * uz)
        if l > 1e-9 then ux, uz = ux / l, uz / l else ux, uz = math_cos(en.angle), math_sin(en.angle) end
        local px, pz = -uz * en.hw, ux * en.hw
        pts[#pts + 1] = { x + px, z + pz }
        pts[#pts + 1] = { x - px, z - pz }
      end
      local poly = hull(pts)
      if #poly >= 3 then
        -- the junction's level: its roads' when they agree, else one piece per level
        local levels = {}
        for _, en in ipairs(ends) do levels[M.level(en.e.attr)] = true end
        for lv in pairs(levels) do
          pieces[#pieces + 1] = { poly = poly, owner = n, level = lv }
        end
      end
    end
  end
  for _, e in ipairs(g:edge_list()) do
    local r = reach[e] or {}
    local L = Graph.len(e)
    local s0, s1 = r[1] or 0, L - (r[2] or 0)
    e._clear = { s0, s1 }
    local hw = M.hw(e, dims)
    local lv = M.level(e.attr)
    -- a bridge's or tunnel's ramps are at grade: the clear part in up to three spans
    local spans = { { s0, s1, lv } }
    local ramp = M.off_ground(e.attr) and (dims.ramp or 0) or 0
    if ramp > 0 and lv ~= 0 then
      if L <= 2 * ramp then
        spans = { { s0, s1, 0 } } -- all ramp, no deck
      else
        spans = {
          { s0, math_min(s1, ramp), 0 },
          { math_max(s0, ramp), math_min(s1, L - ramp), lv },
          { math_max(s0, L - ramp), s1, 0 },
        }
      end
    end
    for _, span in ipairs(spans) do
      if span[2] - span[1] > 0.01 then
        local pts = sub(e.pts, span[1], span[2])
        for i = 2, #pts do
          -- long segments in pieces of at most 40 m (smaller boxes for the grid)
          local ax, az, bx, bz = pts[i - 1][1], pts[i - 1][2], pts[i][1], pts[i][2]
          local l = G.dist(ax, az, bx, bz)
          local k = math.floor(l / 40) + 1
          for j = 0, k - 1 do
            local t0, t1 = j / k, (j + 1) / k
            local poly = rect(ax + t0 * (bx - ax), az + t0 * (bz - az), ax + t1 * (bx - ax), az + t1 * (bz - az), hw)
            if poly then pieces[#pieces + 1] = { poly = poly, owner = e, level = span[3], seg = i - 1 } end
          end
        end
      end
    end
  end
  for _, p in ipairs(pieces) do
    local box = plan_box()
    for _, v in ipairs(p.poly) do box:add(v[1], v[2]) end
    p.minx, p.minz, p.maxx, p.maxz = box.u0, box.v0, box.u1, box.v1
  end
  return pieces
end

local function is_edge(o) return o.pts ~= nil end

-- pieces whose overlap is by construction (an edge and its own end junctions; junctions
-- joined by a road, whose shortness is reported separately)
local function related(p, q)
  if p == q then return true end
  local pe, qe = is_edge(p), is_edge(q)
  if pe and qe then return false end
  if pe and not qe then return p.a == q or p.b == q end
  if qe and not pe then return q.a == p or q.b == p end
  for _, e in ipairs(p.edges) do
    if e.a == q or e.b == q then return true end
  end
  return false
end

--- Overlapping pairs of a graph: `{ { p = owner, q = owner, depth = metres }, ... }`,
-- each pair once, in a deterministic order. Owners are edges or junction nodes.
-- @tparam table g graph
-- @tparam table dims
-- @tparam[opt=0.25] number tol overlaps shallower than this are ignored
-- @tparam[opt] table reach the graph's current `reach_table`, when the caller has one
function M.overlaps(g, dims, tol, reach)
  tol = tol or 0.25
  local pieces = M.pieces(g, dims, reach)
  local grid = G.grid(40)
  for _, p in ipairs(pieces) do grid:insert(p, p.minx, p.minz, p.maxx, p.maxz) end
  local found, list = {}, {}
  for _, p in ipairs(pieces) do
    grid:query(p.minx, p.minz, p.maxx, p.maxz, function(q)
      if q ~= p and q.owner ~= p.owner and q.level == p.level and p.owner.k and q.owner.k
        and not related(p.owner, q.owner)
        and q.minx <= p.maxx and q.maxx >= p.minx and q.minz <= p.maxz and q.maxz >= p.minz then
        local a, b = p.owner, q.owner
        -- one key per unordered pair of owners
        local ka = (is_edge(a) and "e" or "n") .. a.k
        local kb = (is_edge(b) and "e" or "n") .. b.k
        local key = ka < kb and ka .. ":" .. kb or kb .. ":" .. ka
        local rec = found[key]
        if not rec or rec.depth < math_huge then
          local depth = sat(p.poly, q.poly)
          if depth > tol then
            if not rec then
              rec = { p = a, q = b, depth = depth, key = key, polys = {} }
              found[key] = rec
              list[#list + 1] = rec
            elseif depth > rec.depth then
              rec.depth = depth
            end
            -- where along each road the overlap is (the pieces' outlines, by owner)
            local pl = rec.polys
            pl[a] = pl[a] or {}
            pl[a][p] = true
            pl[b] = pl[b] or {}
            pl[b][q] = true
          end
        end
      end
    end)
  end
  table_sort(list, function(x, y) return x.key < y.key end)
  return list
end

--- Whether a road is off the ground somewhere (a bridge, a tunnel, or on another layer).
function M.off_ground(attr)
  return attr.bridge or attr.tunnel or (attr.layer or 0) ~= 0 or false
end

------------------------------------------------------------------------ crossings

local CROSS_CELL = 50 -- metres: the cells whose query order orders `crossings`

--- Work counters (for specs that bound the clean-up's work): `crossing_pairs`, the segment
-- pairs `crossings` has looked at since the module was loaded.
M.stats = { crossing_pairs = 0 }

--- Segment crossings between edges (and within one edge, between segments that are not
-- neighbours): `{ { e =, i =, t =, f =, j =, u =, x =, z =, at_grade = bool }, ... }`;
-- `i`/`j` are segment indices, `t`/`u` parameters along them. With `only` = "grade",
-- only crossings at the same level; "separated", only crossings at different levels.
function M.crossings(g, only)
  local segs = {}
  local total = 0
  for _, e in ipairs(g:edge_list()) do
    local pts = e.pts
    for i = 2, #pts do
      local a, b = pts[i - 1], pts[i]
      segs[#segs + 1] = { e = e, i = i - 1, ax = a[1], az = a[2], bx = b[1], bz = b[2], lv = M.level(e.attr),
        n = #segs + 1 }
      total = total + G.dist(a[1], a[2], b[1], b[2])
    end
  end
  -- the crossings of segment s with the segments a grid holds, in the grid's query order
  local stats = M.stats
  local function hits(grid, s, out)
    grid:query_segment(s.ax, s.az, s.bx, s.bz, 0.01, function(o)
      stats.crossing_pairs = stats.crossing_pairs + 1
      if o.n > s.n and not (o.e == s.e and math_abs(o.i - s.i) <= 1) then
        local same = o.lv == s.lv
        if only == nil or (only == "grade") == same then
          local t, u = G.seg_intersect(s.ax, s.az, s.bx, s.bz, o.ax, o.az, o.bx, o.bz, 1e-7)
          if t then
            local x, z = s.ax + t * (s.bx - s.ax), s.az + t * (s.bz - s.az)
            out[#out + 1] = { e = s.e, i = s.i, t = t, f = o.e, j = o.i, u = u, x = x, z = z, at_grade = same }
          end
        end
      end
    end)
  end
  local function filled(size)
    local grid = G.grid(size)
    for _, sg in ipairs(segs) do grid:insert_segment(sg, sg.ax, sg.az, sg.bx, sg.bz, 0.01) end
    return grid
  end
  -- The order of the list (which node a crossing makes first) is that of 50 m cells. Where
  -- the segments are short (a way of 0.1 m steps: hundreds in a cell, all met by each
  -- other), cells of a few mean segment lengths find the same crossings (two segments that
  -- cross meet in a cell of any size); a segment with two or more of them is asked again
  -- of the 50 m grid for their order.
  local size = #segs > 0 and math_max(4 * total / #segs, 0.05) or CROSS_CELL
  local out = {}
  if size >= CROSS_CELL then
    local grid = filled(CROSS_CELL)
    for _, s in ipairs(segs) do hits(grid, s, out) end
    return out
  end
  local fine, coarse = filled(size), nil
  local mine = {}
  for _, s in ipairs(segs) do
    for k = #mine, 1, -1 do mine[k] = nil end
    hits(fine, s, mine)
    if #mine == 1 then
      out[#out + 1] = mine[1]
    elseif mine[2] then
      coarse = coarse or filled(CROSS_CELL)
      hits(coarse, s, out)
    end
  end
  return out
end

--- Where each off-ground road crosses roads at other levels: `t[e] = { {s =, clear =,
-- other =}, ... }`, `s` the arc length of the crossing along e and `clear` how far along e
-- the other road's corridor reaches from it (`w_o / sin a + w cos a / sin a`, the angle
-- taken at 11.5 degrees at least). A bridge or tunnel needs its ramp at grade between each
-- end and `s - clear` (or `s + clear`).
function M.separated(g, dims)
  local t = {}
  local function arc(e, i, tt)
    local s = 0
    for k = 2, i do s = s + G.dist(e.pts[k - 1][1], e.pts[k - 1][2], e.pts[k][1], e.pts[k][2]) end
    local a, b = e.pts[i], e.pts[i + 1]
    return s + tt * G.dist(a[1], a[2], b[1], b[2])
  end
  local function add(e, i, tt, o, j)
    local a, b = e.pts[i], e.pts[i + 1]
    local oa, ob = o.pts[j], o.pts[j + 1]
    local dx, dz = b[1] - a[1], b[2] - a[2]
    local ex, ez = ob[1] - oa[1], ob[2] - oa[2]
    local l = math_max(math_sqrt(dx * dx + dz * dz) * math_sqrt(ex * ex + ez * ez), 1e-9)
    local sin = math_max(math_abs(dx * ez - dz * ex) / l, 0.2)
    local cos = math_abs(dx * ex + dz * ez) / l
    local list = t[e]
    if not list then list = {} t[e] = list end
    list[#list + 1] = { s = arc(e, i, tt), clear = M.hw(o, dims) / sin + M.hw(e, dims) * cos / sin, other = o }
  end
  -- a grid of the off-ground roads' segments only (few), met by every segment
  local grid = G.grid(50)
  local any = false
  for _, e in ipairs(g:edge_list()) do
    if M.off_ground(e.attr) then
      any = true
      local lv = M.level(e.attr)
      for i = 2, #e.pts do
        local a, b = e.pts[i - 1], e.pts[i]
        grid:insert_segment({ e = e, i = i - 1, lv = lv, ax = a[1], az = a[2], bx = b[1], bz = b[2] },
          a[1], a[2], b[1], b[2], 0.01)
      end
    end
  end
  if not any then return t end
  for _, f in ipairs(g:edge_list()) do
    local lf = M.level(f.attr)
    local off_f = M.off_ground(f.attr)
    for j = 2, #f.pts do
      local a, b = f.pts[j - 1], f.pts[j]
      grid:query_segment(a[1], a[2], b[1], b[2], 0.01, function(sg)
        -- each pair once: an off-ground f meets only off-ground edges made before it
        if sg.e ~= f and sg.lv ~= lf and (not off_f or sg.e.k < f.k) then
          local tt, u = G.seg_intersect(sg.ax, sg.az, sg.bx, sg.bz, a[1], a[2], b[1], b[2], 1e-7)
          if tt then
            add(sg.e, sg.i, tt, f, j - 1)
            if off_f then add(f, j - 1, u, sg.e, sg.i) end
          end
        end
      end)
    end
  end
  for _, list in pairs(t) do table_sort(list, function(p, q) return p.s < q.s end) end
  return t
end

--- How many half-widths of radius a bend keeps (`psdl.osm.network` rounds each sharp
-- corner into an arc of at least this radius; city generation folds a road's sides on a
-- bend of radius under one half-width, so some margin is kept).
M.BEND_RADIUS = 1.3

--- Bend room of a polyline: for each interior point, the distance its inner edge needs
-- on both sides (`BEND_RADIUS hw tan(deflection / 2)`), and the first segment (index i,
-- from point i to i+1) too short for the needs at its two ends; ends get `need_a`/`need_b`.
-- @treturn integer|nil index of the worst segment
-- @treturn number its shortfall (metres)
function M.bend_violation(pts, hw, need_a, need_b)
  local n = #pts
  local need = { need_a or 0 }
  for i = 2, n - 1 do
    local p, q, r = pts[i - 1], pts[i], pts[i + 1]
    local a1 = math_atan(q[2] - p[2], q[1] - p[1])
    local a2 = math_atan(r[2] - q[2], r[1] - q[1])
    local d = math_abs(G.wrap(a2 - a1))
    if d > math_rad(170) then d = math_rad(170) end
    need[i] = M.BEND_RADIUS * hw * math_tan(d / 2)
  end
  need[n] = need_b or 0
  local worst, wi = 0, nil
  for i = 1, n - 1 do
    local p, q = pts[i], pts[i + 1]
    local short = need[i] + need[i + 1] - G.dist(p[1], p[2], q[1], q[2])
    if short > worst + 1e-9 then worst, wi = short, i end
  end
  return wi, worst, need
end

M.is_edge = is_edge
M.at_from = at_from

return M
