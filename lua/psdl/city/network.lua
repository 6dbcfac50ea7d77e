--- The network of a `psdl.city` before anything is built: road polylines with heights, the
-- conflicts of the network (city-layout.md §1.3: roads meet only at nodes) and their
-- resolution (a junction at a crossing, a road split at a node on its body, a dead end pulled
-- back), the ends of roads at nodes sorted by angle, node classes (junction, bend,
-- transition, through, dead end), road runs through the "through" nodes; and, once built,
-- the overlaps of the rooms of unrelated parts of the network.
--
-- Internal to `psdl.city` (`psdl.city.road` builds on it; `psdl.city.repair` reads the labels
-- its messages start with).
-- @module psdl.city.network

local core = require "psdl.core"
local profiles = require "psdl.city.profiles"
local plan = require "psdl.plan"
local core = require "psdl.core"

local ipairs, pairs, tostring = ipairs, pairs, tostring
local error = error
local sqrt, atan, acos, abs, max, min, pi, huge, sin =
  math.sqrt, math.atan, math.acos, math.abs, math.max, math.min, math.pi, math.huge, math.sin
local string_format, table_sort = string.format, table.sort

local M = {}

local function unit(x, z)
  local l = sqrt(x * x + z * z)
  if l < 1e-9 then return nil end
  return x / l, z / l
end
-- Unit vector of (x, z), or nil for a zero vector.
M.unit = unit

-- A road's builder profile seen from its other end (psdl.builder.mirror_profile), made once
-- per profile table: the city's profiles are its own and never change once resolved.
local MIRRORED = setmetatable({}, { __mode = "k" })
function M.mirrored(bp)
  local m = MIRRORED[bp]
  if not m then
    m = require("psdl.builder").mirror_profile(bp)
    MIRRORED[bp] = m
  end
  return m
end

-- Message prefix naming a road: "downtown.lua:12: road 3 (Main St)".
function M.road_label(r)
  local s = string_format("road %d", r.index)
  if r.name then s = s .. string_format(" (%s)", r.name) end
  if r.where then s = r.where .. ": " .. s end
  return s
end

-- "road 3 (downtown.lua:12)": a road named inside another message.
function M.road_ref(r)
  local s = string_format("road %d", r.index)
  if r.name then s = s .. string_format(" (%s)", r.name) end
  if r.where then s = s .. " at " .. r.where end
  return s
end

function M.node_label(n)
  local s = string_format("node %s", tostring(n.id))
  if n.name then s = s .. string_format(" (%s)", n.name) end
  if n.where then s = n.where .. ": " .. s end
  return s
end

-- The plan polyline of a road from its from node to its to node, with heights: node y,
-- via y when given, else interpolated along the plan length between the end nodes.
local function polyline(r)
  local a, b = r.a, r.b
  local pts = { { a.x, a.y, a.z }, nil } -- (made at the size of a road without via points)
  for _, v in ipairs(r.via or {}) do pts[#pts + 1] = { v[1], v[3], v[2], given = v[3] ~= nil } end
  pts[#pts + 1] = { b.x, b.y, b.z }
  -- interpolate missing via heights between the nearest given ones
  local n = #pts
  local s = { 0, nil }
  for i = 2, n do
    local dx, dz = pts[i][1] - pts[i - 1][1], pts[i][3] - pts[i - 1][3]
    s[i] = s[i - 1] + sqrt(dx * dx + dz * dz)
  end
  local last = 1
  for i = 2, n do
    if i == n or pts[i].given then
      for k = last + 1, i - 1 do
        local t = (s[i] - s[last]) > 0 and (s[k] - s[last]) / (s[i] - s[last]) or 0
        pts[k][2] = pts[last][2] + (pts[i][2] - pts[last][2]) * t
      end
      last = i
    end
  end
  for i = 1, n - 1 do
    if s[i + 1] - s[i] < 1e-6 then
      error(string_format("%s: two consecutive points of its path coincide (point %d at %g, %g)", M.road_label(r), i,
        pts[i][1], pts[i][3]), 0)
    end
  end
  return pts, s[n]
end

-- ============================================================== conflicts

-- A uniform grid of items by plan bounding box (cells of `cell` metres): psdl.plan's.
local grid_new = core.grid -- psdl.plan's Grid in C: items by id, the same candidates in the same order

-- The plan polyline of a road (node, via points, node) as {x, z, y} points with the
-- cumulative plan length `s`.
local function plan_line(r)
  local pts = { { r.a.x, r.a.z, r.a.y0 or r.a.y or 0, s = 0 } }
  for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2], v[3] } end
  pts[#pts + 1] = { r.b.x, r.b.z, r.b.y0 or r.b.y or 0 }
  for i = 2, #pts do
    local p, q = pts[i - 1], pts[i]
    q.s = p.s + sqrt((q[1] - p[1]) ^ 2 + (q[2] - p[2]) ^ 2)
  end
  return pts
end

-- Closest point of segment p-q to (x, z): distance, parameter 0..1.
local function seg_closest(x, z, p, q)
  local dx, dz = q[1] - p[1], q[2] - p[2]
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and max(0, min(1, ((x - p[1]) * dx + (z - p[2]) * dz) / l2)) or 0
  local ex, ez = p[1] + t * dx - x, p[2] + t * dz - z
  return sqrt(ex * ex + ez * ez), t
end

local function level(r) return r.bridge ~= nil or r.tunnel ~= nil end

--- Closest point of segment p-q ({x, z} points) to (x, z): distance, parameter 0..1.
M.seg_closest = seg_closest

--- A dead end closer than this (m) to another road's room is on that road's body.
M.DEAD_END_GAP = 1.0

-- "road 3 (Main St) at downtown.lua:12" / "node 4 at downtown.lua:9"
local function ref_line(x) return x.a and M.road_ref(x) or M.node_label(x) end

--- Conflicts of the network before anything is built (city-layout §1.3: roads meet only at
-- nodes): two roads at grade whose centre lines cross without a shared node, and a node
-- lying on the body (within the half width) of a road that does not end there. Bridges and
-- tunnels may cross anything (their ramps are checked with the rooms, `overlaps`).
-- Uses a grid of the centre-line segments (no pairwise tests over all roads).
-- @tparam table city
-- A dead end whose room (the road's half width past the node) comes within
-- `DEAD_END_GAP` of another road's body touches it.
-- @treturn table `{ {kind = "cross", a = road, b = road, x, z, sa, sb},
--   {kind = "node" | "touch", node = node, road = road, x, z, s, d, need, own}, ... }` in a
-- stable order (`s`: plan distance along the road from its from node; `d` the node's
-- distance from its centre line, `need` the distance a dead end needs; `own` a dead end's
-- road)
-- @tparam[opt] table only `{roads = set, nodes = set}`: the network had no conflict when it
--   was last checked, and only these roads and nodes changed since (`psdl.city.repair`
--   checking its repairs): pairs of two other at-grade roads, and other nodes on other
--   roads, are not tested again (the result is the same as without `only`; every bridge and
--   tunnel is still measured against every road for its `crossings`)
function M.conflicts(city, only)
  local out = {}
  local nodes, roads = city.nodes, city.roads
  -- (with `only`: a small grid of the segments of the changed roads and of bridges and
  -- tunnels, met by the segments of the other roads and by the other nodes)
  local small = only and true or false
  local nid = {}
  for i, n in ipairs(nodes) do n.roads = { nil, nil, nil, nil }; nid[n] = i end -- (a crossing's size)
  for _, r in ipairs(roads) do
    local ra, rb = r.a.roads, r.b.roads
    ra[#ra + 1] = r
    if rb ~= ra then rb[#rb + 1] = r end
  end
  -- the roads' polylines (node, via points, node as x, z, y) and what the kernel needs of
  -- each road and node, flat (core.network_conflicts, src/psdl_conflicts.c)
  local pts, starts, rinfo, ninfo = {}, {}, {}, {}
  local w, k = 0, 0
  for i, r in ipairs(roads) do
    starts[i] = w // 3 + 1
    local a, b = r.a, r.b
    pts[w + 1], pts[w + 2], pts[w + 3] = a.x, a.z, a.y0 or a.y or 0
    w = w + 3
    for _, v in ipairs(r.via) do
      pts[w + 1], pts[w + 2], pts[w + 3] = v[1], v[2], v[3] or 0
      w = w + 3
    end
    pts[w + 1], pts[w + 2], pts[w + 3] = b.x, b.z, b.y0 or b.y or 0
    w = w + 3
    local lv = level(r)
    local changed = small and only.roads[r]
    rinfo[k + 1], rinfo[k + 2], rinfo[k + 3], rinfo[k + 4] = r.index, nid[a], nid[b], r.spec.half_width or 0
    rinfo[k + 5], rinfo[k + 6] = lv and 1 or 0, (small and (changed or lv)) and 1 or 0
    rinfo[k + 7] = (small and not changed and not lv) and 1 or 0
    k = k + 7
    r.crossings = {}
  end
  starts[#roads + 1] = w // 3 + 1
  k = 0
  for _, n in ipairs(nodes) do
    local deg, own = 0, nil
    for _, r in ipairs(n.roads) do deg, own = deg + 1, r end
    -- a dead end's room reaches its road's half width past the node; one that comes
    -- within DEAD_END_GAP of another road's room counts too (the sliver of ground between
    -- them would be no block, and the curves between the nodes bulge a little)
    local reach = deg == 1 and (own.spec.half_width or 0) + M.DEAD_END_GAP or 0
    local active = deg > 0 and not (n.opts.tunnel or n.opts.bridge)
    ninfo[k + 1], ninfo[k + 2], ninfo[k + 3] = n.x, n.z, reach
    ninfo[k + 4], ninfo[k + 5] = active and 1 or 0, (small and not only.nodes[n]) and 1 or 0
    k = k + 5
  end
  local levels, crosses, touches = core.network_conflicts(pts, starts, rinfo, ninfo, small, 50)
  -- a bridge or tunnel over / under a road at grade: where the road passes, the level road
  -- must be on its deck or in its bore (`piece_levels` fits the ramps)
  for i = 1, #levels, 5 do
    local list = roads[levels[i]].crossings
    list[#list + 1] = { x = levels[i + 2], z = levels[i + 3], road = roads[levels[i + 1]], half = levels[i + 4] }
  end
  -- two roads at grade crossing
  for i = 1, #crosses, 7 do
    out[#out + 1] = { kind = "cross", a = roads[crosses[i]], b = roads[crosses[i + 1]], x = crosses[i + 2],
                      z = crosses[i + 3], sa = crosses[i + 4], sb = crosses[i + 5], y = crosses[i + 6] }
  end
  -- nodes on another road's body (away from the road's own ends: a node near another node
  -- is a matter of room overlaps), the nearest road
  for i = 1, #touches, 8 do
    local n, o = nodes[touches[i]], roads[touches[i + 1]]
    local d = touches[i + 2]
    local hw = o.spec.half_width or 0
    local deg, own = 0, nil
    for _, r in ipairs(n.roads) do deg, own = deg + 1, r end
    local reach = deg == 1 and (own.spec.half_width or 0) + M.DEAD_END_GAP or 0
    out[#out + 1] = { kind = d < hw and "node" or "touch", node = n, road = o, d = d, s = touches[i + 3],
                      dead_end = deg == 1, dir = { touches[i + 6], touches[i + 7] }, need = hw + reach, own = own,
                      x = touches[i + 4], z = touches[i + 5] }
  end
  return out
end

-- Splits road r at the nodes of `cuts` ({s = plan distance from r.a, node}, any order):
-- r keeps the first piece, new roads (appended to the city) the others; via points go to
-- the piece they lie in. The pieces keep the road's options, profile and script line.
local function split_road(city, r, cuts)
  table_sort(cuts, function(x, y) return x.s < y.s end)
  local pts = plan_line(r)
  local pieces, cur = {}, { via = {}, a = r.a }
  local k = 1
  for i = 2, #pts do
    local p = pts[i]
    while cuts[k] and cuts[k].s < p.s - 1e-6 do
      local c = cuts[k]
      if c.node ~= cur.a then
        cur.b = c.node
        pieces[#pieces + 1] = cur
        cur = { via = {}, a = c.node }
      end
      k = k + 1
    end
    if i < #pts then
      local v = r.via[i - 1]
      if abs(v[1] - cur.a.x) > 1e-6 or abs(v[2] - cur.a.z) > 1e-6 then cur.via[#cur.via + 1] = v end
    end
  end
  cur.b = r.b
  pieces[#pieces + 1] = cur
  local list = {}
  for i, pc in ipairs(pieces) do
    local nr = r
    if i > 1 then
      nr = {}
      for key, val in pairs(r) do nr[key] = val end
      nr.index = #city.roads + 1
      city.roads[nr.index] = nr
    end
    nr.a, nr.b, nr.via = pc.a, pc.b, pc.via
    nr.split_from = r.split_from or r.index
    list[#list + 1] = nr
  end
  return list
end

-- Pulls dead end `n` of road r back along the road until its plan distance from road o's
-- centre line is at least `need` metres (its via points beyond drop out); refuses when
-- less than 10 m or half the road would be left.
local function pull_back(r, n, o, need)
  local pts = plan_line(r)
  if r.a == n then -- walk from the other end
    local rev = {}
    for i = #pts, 1, -1 do rev[#rev + 1] = pts[i] end
    pts = rev
    local L = pts[1].s
    for _, p in ipairs(pts) do p.s = L - p.s end
  end
  local L = pts[#pts].s
  local other = plan_line(o)
  local function clear(x, z)
    for i = 1, #other - 1 do
      if seg_closest(x, z, other[i], other[i + 1]) < need then return false end
    end
    return true
  end
  -- from the dead end back in steps of 0.25 m
  local x, z, keep
  local i = #pts
  local s = L
  while s > max(10, L / 2) do
    s = s - 0.25
    while i > 1 and pts[i - 1].s > s do i = i - 1 end
    local p, q = pts[i - 1], pts[i]
    local t = (s - p.s) / max(1e-9, q.s - p.s)
    local px, pz = p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])
    if clear(px, pz) then x, z, keep = px, pz, i - 1; break end
  end
  if not x then -- (psdl.city.repair may drop a road: the message starts with the node)
    error(string_format("%s: the dead end of %s would overlap %s, and pulling it back would leave too little of the "
      .. "road (%.1f m long): move the node", M.node_label(n), M.road_ref(r), M.road_ref(o), L), 0)
  end
  local via = {}
  for k = 2, keep do via[#via + 1] = { pts[k][1], pts[k][2], pts[k][3] } end
  n.pulled = (n.pulled or 0) + sqrt((n.x - x) ^ 2 + (n.z - z) ^ 2)
  n.x, n.z = x, z
  if r.a == n then
    local rev = {}
    for k = #via, 1, -1 do rev[#rev + 1] = via[k] end
    r.via = rev
  else
    r.via = via
  end
end
-- Resolves the conflicts: an error naming both script lines, or with `auto_junctions` a
-- node at each crossing (both roads split there) and each road split at a node on its body
-- (it then runs through that node). Repeats until none is left.
-- With `city.only` (`psdl.city.repair` checking its repairs on a part of the city) and a
-- network found free of conflicts the last time, the first check is of what changed.
local function resolve_conflicts(city)
  local only = city.conflicts_clean and city.only or nil
  city.conflicts_clean = false
  for _ = 1, 8 do
    local list = M.conflicts(city, only)
    only = nil -- (what this pass changes is checked with everything)
    if #list == 0 then
      city.conflicts_clean = true
      return
    end
    if not city.auto_junctions then
      local c = list[1]
      if c.kind == "cross" then
        error(string_format("%s crosses %s at (%.1f, %.1f) without a junction: give them a shared node there, "
          .. "make one a bridge or tunnel, or pass auto_junctions = true to psdl.city.new", M.road_label(c.a),
          M.road_ref(c.b), c.x, c.z), 0)
      end
      -- (conflicts are mistakes of the script, not for psdl.city.repair: their messages do
      -- not start with "<road or node label>:")
      if c.kind == "touch" then
        error(string_format("the dead end of %s (node %s) would overlap %s (%.1f m from its centre line at (%.1f, "
          .. "%.1f), it needs %.1f m): move the node clear of it, join the roads there, or pass auto_junctions = "
          .. "true to psdl.city.new (the dead end is then pulled back)", M.road_ref(c.own), tostring(c.node.id),
          M.road_ref(c.road), c.d, c.x, c.z, c.need), 0)
      end
      error(string_format("%s lies on the body of %s (%.1f m from its centre line at (%.1f, %.1f)): split that road "
        .. "at the node (or pass auto_junctions = true to psdl.city.new), or move the node clear of it",
        M.node_label(c.node), M.road_ref(c.road), c.d, c.x, c.z), 0)
    end
    local cuts = {}
    local function cut(r, s, node)
      local l = cuts[r]
      if not l then l = {}; cuts[r] = l; cuts[#cuts + 1] = r end
      for _, c in ipairs(l) do if abs(c.s - s) < 1e-6 or c.node == node then return end end
      l[#l + 1] = { s = s, node = node }
    end
    -- nodes on a body first: the road then runs through the node, which may settle
    -- crossings beside it; crossings in a later pass
    local any_node = false
    for _, c in ipairs(list) do
      if c.kind == "node" then
        -- a road of the node running along the other one: no junction can part them
        for _, r in ipairs(c.node.roads) do
          local pts = plan_line(r)
          local p, q = pts[1], pts[2]
          if r.b == c.node then p, q = pts[#pts], pts[#pts - 1] end
          local ux, uz = unit(q[1] - p[1], q[2] - p[2])
          if ux and abs(ux * c.dir[2] - uz * c.dir[1]) < sin(15 * pi / 180) then
            error(string_format("%s: it runs along %s from %s: their rooms would overlap (roads side by side need their "
              .. "widths apart; join them into one road or move one)", M.road_label(r), M.road_ref(c.road),
              M.node_label(c.node)), 0)
          end
        end
        if c.dead_end and c.d > 1e-6 then -- a dead end on the road: it joins it there
          c.node.x, c.node.z = c.x, c.z
        end
        cut(c.road, c.s, c.node)
        any_node = true
      elseif c.kind == "touch" then
        pull_back(c.own, c.node, c.road, c.need + 0.05)
        any_node = true
      end
    end
    if not any_node then
      local made = {}
      for _, c in ipairs(list) do
        local n
        for _, m in ipairs(made) do -- several crossings at one spot: one junction
          if abs(m.x - c.x) < 2 and abs(m.z - c.z) < 2 then n = m; break end
        end
        if not n then
          local name = string_format("junction of road %d and road %d", c.a.split_from or c.a.index,
            c.b.split_from or c.b.index)
          n = city:node(c.x, c.z, { y = c.y, id = string_format("auto %d", #city.nodes + 1), name = name,
                                    where = c.a.where })
          n.y = c.y
          made[#made + 1] = n
        end
        cut(c.a, c.sa, n)
        cut(c.b, c.sb, n)
      end
    end
    for _, r in ipairs(cuts) do split_road(city, r, cuts[r]) end
  end
  local list = M.conflicts(city)
  if #list > 0 then
    local c = list[1]
    error(string_format("%s: conflicts remain after inserting junctions (auto_junctions)", ref_line(c.a or c.node)), 0)
  end
end

--- Resolves the conflicts of the network (an error, or with `auto_junctions` junctions
-- inserted and roads split); repeats until none is left.
-- @tparam table city
M.resolve_conflicts = resolve_conflicts

-- ============================================================== overlaps of what was built

--- Rooms of unrelated parts of the network that overlap in plan (more than 5 cm): the road
-- and intersection rooms of roads sharing no node, of a node and a road not ending there, of
-- two nodes no road joins. Bridge decks and tunnel bores (warp rooms) may overlap anything.
-- The search and the tests are C's (`Builder:overlaps`, src/psdl_overlaps.c): a grid of the
-- rooms' boxes, each pair of owners tested once.
-- @tparam table city a built `psdl.city` City (`road.rooms`, `node.room`)
-- @tparam Builder b
-- @treturn table `{ {a = road or node, b = road or node, x, z}, ... }`
function M.overlaps(city, b)
  -- owners: the nodes, then the roads (a road's ends: its nodes' numbers; a node's: 0, 0)
  local id, list, ends = {}, {}, {}
  local nodes, roads = city.nodes, city.roads
  local nn = #nodes
  for i = 1, nn do
    local n = nodes[i]
    id[n], list[i] = i, n
    ends[2 * i - 1], ends[2 * i] = 0, 0
  end
  for i = 1, #roads do
    local r, k = roads[i], nn + i
    id[r], list[k] = k, r
  end
  for i = 1, #roads do
    local r, k = roads[i], nn + i
    ends[2 * k - 1], ends[2 * k] = id[r.a], id[r.b]
  end
  local outlines, owners = {}, {}
  local function add(room, owner)
    if not room or not room.outline or room.is_tunnel or room.is_bridge or (room.flags and room.flags & 0x40 ~= 0) then
      return
    end
    outlines[#outlines + 1] = room.outline
    owners[#owners + 1] = id[owner]
  end
  for _, n in ipairs(nodes) do add(n.room, n) end
  for _, r in ipairs(roads) do
    for _, rm in ipairs(r.rooms or {}) do add(rm, r) end
  end
  local flat = b:overlaps(outlines, owners, ends, 0.05)
  local out = {}
  for k = 1, #flat, 4 do
    out[#out + 1] = { a = list[flat[k]], b = list[flat[k + 1]], x = flat[k + 2], z = flat[k + 3] }
  end
  return out
end

-- ============================================================== graph

--- Roads that leave a node closer than this (degrees) leave it in the same direction: no
-- intersection can part them (psdl.city.drops keeps the most of them that are this far apart).
M.SAME_DIRECTION = 2

-- The pairs of neighbouring ends of node n (its ends sorted by angle, the largest first)
-- closer than M.SAME_DIRECTION, as `n.close = {{p, q, radians}, ...}` (every pair at once,
-- for psdl.city.repair to part or drop them all in one step); raises naming the first few.
local MORE_PAIRS = 3 -- (pairs the message names after the first; the rest are counted)
local function same_direction(n)
  local ends = n.ends
  local k = #ends
  if k < 2 then return end
  local limit, close = M.SAME_DIRECTION * pi / 180, nil
  for i = 1, k do
    local p, q = ends[i], ends[i % k + 1]
    local d = p.angle - q.angle
    if d < 0 then d = d + 2 * pi end
    if d < limit then
      close = close or {}
      close[#close + 1] = { p, q, d }
    end
  end
  if not close then return end
  n.close = close
  local c = close[1]
  local more = {}
  for i = 2, min(#close, 1 + MORE_PAIRS) do
    local o = close[i]
    more[#more + 1] = string_format(", and so do %s and %s (%.1f degrees apart)", M.road_ref(o[1].road),
      M.road_ref(o[2].road), o[3] * 180 / pi)
  end
  if #close > 1 + MORE_PAIRS then
    more[#more + 1] = string_format(", and %d pairs more", #close - 1 - MORE_PAIRS)
  end
  error(string_format("%s: %s and %s leave it in the same direction (%.1f degrees apart)%s; join them "
    .. "further out or move a via point", M.node_label(n), M.road_ref(c[1].road), M.road_ref(c[2].road),
    c[3] * 180 / pi, table.concat(more)), 0)
end

-- Ends of roads at nodes, sorted by angle; node classes.
local function classify(city)
  local nodes, roads = city.nodes, city.roads
  for _, n in ipairs(nodes) do n.ends = { nil, nil, nil, nil } end -- (made at a crossing's size)
  for _, r in ipairs(roads) do
    local pts, len = polyline(r)
    r.poly, r.length = pts, len
    local n = #pts
    local ax, az = unit(pts[2][1] - pts[1][1], pts[2][3] - pts[1][3])
    local bx, bz = unit(pts[n - 1][1] - pts[n][1], pts[n - 1][3] - pts[n][3])
    r.ea = { road = r, at = "a", node = r.a, dir = { ax, az }, angle = atan(az, ax) }
    r.eb = { road = r, at = "b", node = r.b, dir = { bx, bz }, angle = atan(bz, bx) }
    local ea, eb = r.a.ends, r.b.ends
    ea[#ea + 1] = r.ea
    eb[#eb + 1] = r.eb
  end
  local bend = (city.bend_angle or 45) * pi / 180
  for _, n in ipairs(nodes) do n.close = nil end
  for _, n in ipairs(nodes) do
    local ends = n.ends
    table_sort(ends, function(p, q)
      if p.angle ~= q.angle then return p.angle > q.angle end
      return p.road.index < q.road.index
    end)
    same_direction(n)
    local deg = #ends
    n.underground = n.opts.tunnel and true or false
    n.elevated = n.opts.bridge and true or false
    if deg == 0 then
      n.class = "isolated"
    elseif n.opts.junction or deg >= 3 then
      n.class = "junction"
    elseif deg == 1 then
      local mode = n.opts.dead_end or city.dead_end or "cul_de_sac"
      if mode ~= "cul_de_sac" and mode ~= "open" then
        error(string_format("%s: dead_end: \"cul_de_sac\" or \"open\" expected, got %s", M.node_label(n), tostring(mode)), 0)
      end
      n.class = mode == "open" and "open" or "dead_end"
    else
      local e1, e2 = ends[1], ends[2]
      local k1 = profiles.oriented_key(e1.road.spec, e1.at == "b")
      local k2 = profiles.oriented_key(e2.road.spec, e2.at == "a")
      local cosang = -(e1.dir[1] * e2.dir[1] + e1.dir[2] * e2.dir[2])
      local turn = acos(max(-1, min(1, cosang)))
      if k1 ~= k2 then n.class = "transition"
      elseif turn > bend then n.class = "bend"
      else n.class = "through" end
    end
  end
end

-- Road runs: maximal chains of roads through "through" nodes.
local function runs_of(city)
  local visited, runs = {}, {}
  local function other_end(n, e)
    return n.ends[1] == e and n.ends[2] or n.ends[1]
  end
  local function walk(node, e)
    local pieces = { nil } -- (made at the usual run's size, one piece)
    local cur, ce = node, e
    while true do
      local r = ce.road
      visited[r] = true
      local fwd = ce.at == "a"
      local to = fwd and r.b or r.a
      local te = fwd and r.eb or r.ea
      pieces[#pieces + 1] = { road = r, forward = fwd, from = cur, to = to }
      if to.class ~= "through" then
        -- (with the fields psdl.city.road sets: the run is made at its full size)
        runs[#runs + 1] = { pieces = pieces, start = node, start_end = e, finish = to, finish_end = te,
                            index = #runs + 1, flags = nil, prop_rule = nil, rooms = nil, subs = nil, record = nil }
        return
      end
      cur, ce = to, other_end(to, te)
    end
  end
  local function from_node(n)
    for _, e in ipairs(n.ends) do
      if not visited[e.road] then walk(n, e) end
    end
  end
  for _, n in ipairs(city.nodes) do
    if n.class ~= "through" and n.class ~= "isolated" then from_node(n) end
  end
  -- pure cycles of through nodes: the first node of each becomes a bend room
  for _, r in ipairs(city.roads) do
    if not visited[r] then
      r.a.class = "bend"
      r.a.cycle = true
      from_node(r.a)
    end
  end
  return runs
end

--- Ends of roads at nodes (`node.ends`, `road.ea`, `road.eb`, `road.poly`, `road.length`)
-- and node classes (`node.class`). Raises at the first node two roads leave in the same
-- direction (closer than `M.SAME_DIRECTION`), naming them, with every such pair of that node
-- in `node.close` (`{{end, end, radians}, ...}`, nil at the other nodes).
-- @tparam table city
M.classify = classify

--- Road runs: maximal chains of roads through "through" nodes.
-- @tparam table city (classified)
-- @treturn table `{ {pieces = {{road, forward, from, to}, ...}, start, start_end, finish, finish_end, index}, ... }`
M.runs = runs_of

--- Where the plan polyline pts ({x, z} points: from node, via points, to node) crosses or
-- touches itself: two segments that are not neighbours meet (a point of one lying on the
-- other counts, a repeated point does not; a loop may close where it began). Returns x, z
-- and the indices of the two segments' first and last points (j1, j2, i1, i2 of pts[k].i),
-- or nil. The earliest meeting along the road counts. The test is C's
-- (psdl_polyline_crossing, a sweep over the segments' boxes).
function M.self_crossing(pts)
  local flat = {}
  for k, p in ipairs(pts) do flat[3 * k - 2], flat[3 * k - 1], flat[3 * k] = p[1], 0, p[2] end
  local x, z, k1, k2, k3, k4 = core.polyline_crossing(flat)
  if x then return x, z, pts[k1].i, pts[k2].i, pts[k3].i, pts[k4].i end
end

return M
