--- The road side of city generation: from the network of a `psdl.city` (nodes, roads with
-- via points, resolved profiles) to builder rooms: an intersection room at every node where
-- three or more roads meet, a bend room where two roads meet at a sharp angle, a transition
-- room where the profile changes, a turning circle at a dead end; road runs through the
-- nodes where two matching roads meet at a gentle angle, one smooth centre line per run, cut
-- into road rooms of about `room_length` metres at full cross-sections; tunnel and bridge
-- pieces with their ramps; and one road record per run (city-layout.md §1.3–1.5, §3.3, §4).
--
-- Internal to `psdl.city` (its `build` calls `build_roads`); the shapes it leaves on the
-- nodes and roads (`node.class`, `node.junction`, `road.rooms`, `run.rooms`) are what
-- `psdl.city` reports.
-- @module psdl.city.layout

local core = require "psdl.core"
local geom = require "psdl.geom"
local builder = require "psdl.builder"
local profiles = require "psdl.city.profiles"

local type, error, ipairs, pairs, tostring, pcall, next = type, error, ipairs, pairs, tostring, pcall, next
local sqrt, atan, acos, abs, floor, ceil, max, min, pi, huge, sin =
  math.sqrt, math.atan, math.acos, math.abs, math.floor, math.ceil, math.max, math.min, math.pi, math.huge, math.sin
local string_format, table_sort = string.format, table.sort

local M = {}

--- Defaults of the tunnel and bridge options (metres).
M.TUNNEL = { depth = 9, ramp = 60, height = 7.0, height2 = 7.0, ceiling = "curved", wall_height = 5.0,
             wall_height2 = 2.0 }
M.BRIDGE = { height = 8, ramp = 60, railing_height = 1.5, railing_height2 = 1.0 }

local function unit(x, z)
  local l = sqrt(x * x + z * z)
  if l < 1e-9 then return nil end
  return x / l, z / l
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
  local pts = { { a.x, a.y, a.z } }
  for _, v in ipairs(r.via or {}) do pts[#pts + 1] = { v[1], v[3], v[2], given = v[3] ~= nil } end
  pts[#pts + 1] = { b.x, b.y, b.z }
  -- interpolate missing via heights between the nearest given ones
  local n = #pts
  local s = { 0 }
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

-- A uniform grid of items by plan bounding box (cells of `cell` metres).
local function grid_new(cell)
  local g = { cell = cell, cells = {} }
  function g.add(item, x0, z0, x1, z1)
    for i = floor(x0 / cell), floor(x1 / cell) do
      for j = floor(z0 / cell), floor(z1 / cell) do
        local k = i * 1000003 + j
        local l = g.cells[k]
        if not l then l = {}; g.cells[k] = l end
        l[#l + 1] = item
      end
    end
  end
  function g.query(x0, z0, x1, z1, out, seen)
    for i = floor(x0 / cell), floor(x1 / cell) do
      for j = floor(z0 / cell), floor(z1 / cell) do
        local l = g.cells[i * 1000003 + j]
        if l then
          for _, it in ipairs(l) do
            if not seen[it] then seen[it] = true; out[#out + 1] = it end
          end
        end
      end
    end
    return out
  end
  return g
end
M.grid = grid_new

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

-- Proper crossing of segments p-q and u-v: the parameters on both, or nil.
local function seg_cross(p, q, u, v)
  local rx, rz = q[1] - p[1], q[2] - p[2]
  local sx, sz = v[1] - u[1], v[2] - u[2]
  local den = rx * sz - rz * sx
  if abs(den) < 1e-12 then return nil end
  local wx, wz = u[1] - p[1], u[2] - p[2]
  local t = (wx * sz - wz * sx) / den
  local w = (wx * rz - wz * rx) / den
  if t > 1e-9 and t < 1 - 1e-9 and w > 1e-9 and w < 1 - 1e-9 then return t, w end
  return nil
end

local function level(r) return r.bridge ~= nil or r.tunnel ~= nil end

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
  local cell = 50
  local g = grid_new(cell)
  -- (with `only`: a grid of the segments of the changed roads and of bridges and tunnels,
  -- met by the segments of the other roads and by the other nodes)
  local small = only and grid_new(cell)
  local lines = {}
  for _, n in ipairs(city.nodes) do n.roads = {} end
  for _, r in ipairs(city.roads) do
    local ra, rb = r.a.roads, r.b.roads
    ra[#ra + 1] = r
    if rb ~= ra then rb[#rb + 1] = r end
  end
  for _, r in ipairs(city.roads) do
    local pts = plan_line(r)
    lines[r] = pts
    local hw = r.spec.half_width or 0
    local both = small and (only.roads[r] or level(r))
    for i = 1, #pts - 1 do
      local p, q = pts[i], pts[i + 1]
      local it = { r = r, i = i }
      local x0, z0, x1, z1 = min(p[1], q[1]) - hw, min(p[2], q[2]) - hw, max(p[1], q[1]) + hw, max(p[2], q[2]) + hw
      g.add(it, x0, z0, x1, z1)
      if both then small.add(it, x0, z0, x1, z1) end
    end
  end
  -- crossings
  local seen_pair = {}
  for _, r in ipairs(city.roads) do r.crossings = {} end
  for _, r in ipairs(city.roads) do
    do
      local pts = lines[r]
      local gr = (small and not only.roads[r] and not level(r)) and small or g
      for i = 1, #pts - 1 do
        local p, q = pts[i], pts[i + 1]
        local cand = gr.query(min(p[1], q[1]), min(p[2], q[2]), max(p[1], q[1]), max(p[2], q[2]), {}, {})
        for _, c in ipairs(cand) do
          local o = c.r
          local u, v = lines[o][c.i], lines[o][c.i + 1]
          if o.index > r.index and level(o) ~= level(r) then
            -- a bridge or tunnel over / under a road at grade: where the road passes, the
            -- level road must be on its deck or in its bore (`piece_levels` fits the ramps)
            local t, w = seg_cross(p, q, u, v)
            if t then
              local lv, gr = r, o
              if level(o) then lv, gr = o, r end
              local ax, az = unit(q[1] - p[1], q[2] - p[2])
              local bx, bz = unit(v[1] - u[1], v[2] - u[2])
              local sn = abs((ax or 0) * (bz or 0) - (az or 0) * (bx or 0))
              local list = lv.crossings
              list[#list + 1] = { x = p[1] + t * (q[1] - p[1]), z = p[2] + t * (q[2] - p[2]), road = gr,
                                  half = ((lv.spec.half_width or 0) + (gr.spec.half_width or 0)) / max(sn, 0.2) + 1 }
            end
          end
          if o.index > r.index and not level(o) and not level(r) then
            local t, w = seg_cross(p, q, u, v)
            if t then
              local key = r.index .. ":" .. o.index .. ":" .. i .. ":" .. c.i
              if not seen_pair[key] then
                seen_pair[key] = true
                local x, z = p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])
                out[#out + 1] = { kind = "cross", a = r, b = o, x = x, z = z,
                                  sa = p.s + t * (q.s - p.s), sb = u.s + w * (v.s - u.s),
                                  y = ((p[3] or 0) + t * ((q[3] or 0) - (p[3] or 0)) + (u[3] or 0)
                                       + w * ((v[3] or 0) - (u[3] or 0))) / 2 }
              end
            end
          end
        end
      end
    end
  end
  -- nodes on another road's body
  for _, n in ipairs(city.nodes) do
    if not (n.opts.tunnel or n.opts.bridge) then
      local deg, own = 0, nil
      for _, r in ipairs(n.roads or {}) do deg, own = deg + 1, r end
      -- a dead end's room reaches its road's half width past the node; one that comes
      -- within DEAD_END_GAP of another road's room counts too (the sliver of ground between
      -- them would be no block, and the curves between the nodes bulge a little)
      local reach = deg == 1 and (own.spec.half_width or 0) + M.DEAD_END_GAP or 0
      if deg > 0 then
        local gr = (small and not only.nodes[n]) and small or g
        local cand = gr.query(n.x - reach, n.z - reach, n.x + reach, n.z + reach, {}, {})
        local best
        for _, c in ipairs(cand) do
          local o = c.r
          if o.a ~= n and o.b ~= n and not level(o) then
            local pts = lines[o]
            local p, q = pts[c.i], pts[c.i + 1]
            local d, t = seg_closest(n.x, n.z, p, q)
            local s = p.s + t * (q.s - p.s)
            local L = pts[#pts].s
            -- on the body, away from the road's own ends (a node near another node is a
            -- matter of room overlaps)
            if d < (o.spec.half_width or 0) + reach and s > 1 and s < L - 1 and (not best or d < best.d) then
              local hw = o.spec.half_width or 0
              local dx, dz = unit(q[1] - p[1], q[2] - p[2])
              best = { kind = d < hw and "node" or "touch", node = n, road = o, d = d, s = s, dead_end = deg == 1,
                       dir = { dx or 1, dz or 0 },
                       need = hw + reach, own = own,
                       x = p[1] + t * (q[1] - p[1]), z = p[2] + t * (q[2] - p[2]) }
            end
          end
        end
        if best then out[#out + 1] = best end
      end
    end
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


-- ============================================================== overlaps of what was built

-- Signed plan distance of (x, z) from polygon poly ({x, z} points): negative inside.
local function poly_dist(x, z, poly)
  local n, c, d = #poly, false, huge
  for i = 1, n do
    local a, b = poly[i], poly[i % n + 1]
    local e = seg_closest(x, z, a, b)
    if e < d then d = e end
    if (a[2] > z) ~= (b[2] > z) and x < a[1] + (z - a[2]) * (b[1] - a[1]) / (b[2] - a[2]) then c = not c end
  end
  return c and -d or d
end

-- A point where plan polygons P and Q overlap by more than eps: a point of one inside the
-- other, or two edges crossing; nil when they only touch.
local function poly_overlap(P, Q, eps)
  for _, pair in ipairs({ { P, Q }, { Q, P } }) do
    local A, B = pair[1], pair[2]
    for _, p in ipairs(A) do
      if p[1] > B.x0 and p[1] < B.x1 and p[2] > B.z0 and p[2] < B.z1 and poly_dist(p[1], p[2], B) < -eps then
        return p[1], p[2]
      end
    end
  end
  local n, m = #P, #Q
  for i = 1, n do
    local a, b = P[i], P[i % n + 1]
    if max(a[1], b[1]) > Q.x0 and min(a[1], b[1]) < Q.x1 and max(a[2], b[2]) > Q.z0 and min(a[2], b[2]) < Q.z1 then
      for k = 1, m do
        local u, v = Q[k], Q[k % m + 1]
        local t, w = seg_cross(a, b, u, v)
        if t then
          -- a proper crossing: the ends of each edge clear of the other's line
          local ex, ez = unit(b[1] - a[1], b[2] - a[2])
          local fx, fz = unit(v[1] - u[1], v[2] - u[2])
          if ex and fx then
            local du = (u[1] - a[1]) * ez - (u[2] - a[2]) * ex
            local dv = (v[1] - a[1]) * ez - (v[2] - a[2]) * ex
            local da = (a[1] - u[1]) * fz - (a[2] - u[2]) * fx
            local db = (b[1] - u[1]) * fz - (b[2] - u[2]) * fx
            if min(abs(du), abs(dv), abs(da), abs(db)) > eps then
              return a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])
            end
          end
        end
      end
    end
  end
  return nil
end

--- Rooms of unrelated parts of the network that overlap in plan (more than 5 cm): the road
-- and intersection rooms of roads sharing no node, of a node and a road not ending there, of
-- two nodes no road joins. Bridge decks and tunnel bores (warp rooms) may overlap anything.
-- @tparam table city a built `psdl.city` City (`road.rooms`, `node.room`)
-- @tparam Builder b
-- @treturn table `{ {a = road or node, b = road or node, x, z}, ... }`
function M.overlaps(city, b)
  local items = {}
  local g = grid_new(40)
  local function add(room, owner)
    if not room or not room.outline or room.is_tunnel or room.is_bridge or (room.flags and room.flags & 0x40 ~= 0) then
      return
    end
    local poly = { x0 = huge, z0 = huge, x1 = -huge, z1 = -huge }
    for _, ref in ipairs(room.outline) do
      local p = b:point(ref)
      local q = poly[#poly]
      if not q or abs(q[1] - p[1]) > 1e-6 or abs(q[2] - p[3]) > 1e-6 then poly[#poly + 1] = { p[1], p[3] } end
      poly.x0, poly.x1 = min(poly.x0, p[1]), max(poly.x1, p[1])
      poly.z0, poly.z1 = min(poly.z0, p[3]), max(poly.z1, p[3])
    end
    if #poly < 3 then return end
    local it = { poly = poly, owner = owner }
    items[#items + 1] = it
    g.add(it, poly.x0, poly.z0, poly.x1, poly.z1)
  end
  for _, n in ipairs(city.nodes) do add(n.room, n) end
  for _, r in ipairs(city.roads) do
    for _, rm in ipairs(r.rooms or {}) do add(rm, r) end
  end
  -- related owners: a road and its end nodes, roads sharing a node, nodes joined by a road
  local function related(p, q)
    if p == q then return true end
    if p.a and q.a then return p.a == q.a or p.a == q.b or p.b == q.a or p.b == q.b end
    if p.a then return p.a == q or p.b == q end
    if q.a then return q.a == p or q.b == p end
    for _, e in ipairs(p.ends or {}) do
      local r = e.road
      if r.a == q or r.b == q then return true end
    end
    return false
  end
  local out, done = {}, {}
  for _, it in ipairs(items) do
    local P = it.poly
    for _, o in ipairs(g.query(P.x0, P.z0, P.x1, P.z1, {}, {})) do
      local Q = o.poly
      if o ~= it and not related(it.owner, o.owner) and Q.x0 < P.x1 and P.x0 < Q.x1 and Q.z0 < P.z1 and P.z0 < Q.z1 then
        local k1, k2 = it.owner, o.owner
        local key = tostring(k1) < tostring(k2) and (tostring(k1) .. tostring(k2)) or (tostring(k2) .. tostring(k1))
        if not done[key] then
          local x, z = poly_overlap(P, Q, 0.05)
          if x then
            done[key] = true
            out[#out + 1] = { a = k1, b = k2, x = x, z = z }
          end
        end
      end
    end
  end
  return out
end

-- ============================================================== graph

-- Ends of roads at nodes, sorted by angle; node classes.
local function classify(city)
  local nodes, roads = city.nodes, city.roads
  for _, n in ipairs(nodes) do n.ends = {} end
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
  for _, n in ipairs(nodes) do
    local ends = n.ends
    table_sort(ends, function(p, q)
      if p.angle ~= q.angle then return p.angle > q.angle end
      return p.road.index < q.road.index
    end)
    for i = 1, #ends do
      local p, q = ends[i], ends[i % #ends + 1]
      if #ends > 1 then
        local d = p.angle - q.angle
        if d < 0 then d = d + 2 * pi end
        if d < 2 * pi / 180 and i <= #ends then
          error(string_format("%s: %s and %s leave it in the same direction (%.1f degrees apart); join them "
            .. "further out or move a via point", M.node_label(n), M.road_ref(p.road), M.road_ref(q.road),
            d * 180 / pi), 0)
        end
      end
    end
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
    local pieces = {}
    local cur, ce = node, e
    while true do
      local r = ce.road
      visited[r] = true
      local fwd = ce.at == "a"
      local to = fwd and r.b or r.a
      local te = fwd and r.eb or r.ea
      pieces[#pieces + 1] = { road = r, forward = fwd, from = cur, to = to }
      if to.class ~= "through" then
        runs[#runs + 1] = { pieces = pieces, start = node, start_end = e, finish = to, finish_end = te,
                            index = #runs + 1 }
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

-- ============================================================== intersections

local function arm_profile(e)
  local bp = e.road.spec.builder
  if e.at == "a" then return bp end
  return builder.mirror_profile(bp)
end

local function build_junction(city, b, n)
  local ends = n.ends
  local arms = {}
  local deg = #ends
  for i, e in ipairs(ends) do
    local spec = e.road.spec
    local cw = 0
    if n.class == "junction" and deg >= 3 then
      cw = e.road.opts.crosswalk
      if cw == nil then cw = spec.crosswalk end
      if cw == false then cw = 0 end
    end
    local md = n.opts.min_distance
    if md == nil and deg == 2 then md = city.transition or 5 end
    arms[i] = { dir = e.dir, profile = arm_profile(e), crosswalk = cw, min_distance = md }
    e.arm = i
  end
  local room = { name = n.name or string_format("%s %s", n.class, tostring(n.id)), tunnel = n.underground,
                 bridge = n.elevated and not n.underground }
  local tunnel
  if n.underground then
    local t = type(n.opts.tunnel) == "table" and n.opts.tunnel or {}
    tunnel = { textures = t.textures or city.style.tunnels and (city.style.tunnels.road or city.style.tunnels.subway)
                 or city.style.tunnel,
               height = t.height or M.TUNNEL.height, height2 = t.height2 or M.TUNNEL.height2,
               ceiling = t.ceiling ~= false, walls = t.walls or "outside" }
  end
  local textures = n.opts.textures
  if type(textures) == "string" and city.style.intersections and city.style.intersections[textures] then
    textures = city.style.intersections[textures]
  end
  local ok, r, info = pcall(b.intersection, b, {
    center = { n.x, n.y, n.z }, arms = arms, radius = n.opts.radius or city.radius or 5,
    arc_step = city.arc_step, textures = textures, room = room, tunnel = tunnel })
  if not ok then error(string_format("%s: %s", M.node_label(n), tostring(r):gsub("^.-:%d+: ", "")), 0) end
  n.room, n.junction = r, info
  n.rooms = { r }
end

-- ============================================================== runs

-- Height profile of a tunnel or bridge piece: y at plan distance s along a piece of length
-- L, given the levels at the ends of the middle part and the ramp lengths.
local function piece_levels(city, piece, y0, y1, L, pts, acc)
  local r = piece.road
  local t = r.tunnel or r.bridge
  if not t then return nil end
  local is_tunnel = r.tunnel ~= nil
  local D = is_tunnel and M.TUNNEL or M.BRIDGE
  local depth = is_tunnel and (t.depth or D.depth) or (t.height or D.height)
  local sign = is_tunnel and -1 or 1
  local from, to = piece.from, piece.to
  -- a ramp at an end whose node is at grade (not underground / elevated)
  local special_from = is_tunnel and from.underground or (not is_tunnel and from.elevated)
  local special_to = is_tunnel and to.underground or (not is_tunnel and to.elevated)
  local ramp = t.ramp or D.ramp
  if depth == 0 then ramp = 0 end
  local ra = special_from and 0 or ramp
  local rb = special_to and 0 or ramp
  -- roads at grade passing under a bridge or over a tunnel: the ramps stop short of them
  -- (shortened down to a 40 % slope when the road did not set `ramp`)
  for _, c in ipairs(pts and r.crossings or {}) do
    local best, sc = huge, nil
    for i = 1, #pts - 1 do
      local d, t = seg_closest(c.x, c.z, { pts[i][1], pts[i][3] }, { pts[i + 1][1], pts[i + 1][3] })
      if d < best then best, sc = d, acc[i] + t * (acc[i + 1] - acc[i]) end
    end
    if sc and best < c.half + 5 then
      local lo, hi = sc - c.half, L - (sc + c.half)
      local least = 2.5 * abs(depth)
      local function fit(cur, room)
        if cur <= room or cur == 0 then return cur end
        if t.ramp == nil and room >= least then return room end
        error(string_format("%s: its %s ramp would reach %s where it passes at (%.1f, %.1f): %.1f m of ramp fit "
          .. "before it, %g m are needed%s", M.road_label(r), is_tunnel and "tunnel" or "bridge", M.road_ref(c.road),
          c.x, c.z, max(0, room), t.ramp or least, t.ramp and " (ramp = ... shorter)" or
          " (a lower height or depth, or move the crossing nearer the middle)"), 0)
      end
      ra, rb = fit(ra, lo), fit(rb, hi)
    end
  end
  if ra + rb > L - 10 and ra + rb > 0 then
    error(string_format("%s: its %s ramps (%g m each) need more than its %.1f m of length (ramp = ... shorter, "
      .. "or a longer road)", M.road_label(r), is_tunnel and "tunnel" or "bridge", ramp, L), 0)
  end
  local la = special_from and y0 or (y0 + sign * depth)
  local lb = special_to and y1 or (y1 + sign * depth)
  return { ra = ra, rb = rb, la = la, lb = lb, y0 = y0, y1 = y1, tunnel = is_tunnel, opts = t }
end

-- Inserts a sample at plan distance s into a point list with cumulative distances; returns
-- its index.
local function insert_at(pts, acc, s)
  for i = 2, #pts do
    if acc[i] >= s - 1e-6 then
      if abs(acc[i] - s) < 0.5 then return i end
      if abs(acc[i - 1] - s) < 0.5 then return i - 1 end
      local t = (s - acc[i - 1]) / (acc[i] - acc[i - 1])
      local p = geom.lerp(pts[i - 1], pts[i], t)
      table.insert(pts, i, p)
      table.insert(acc, i, s)
      return i
    end
  end
  return #pts
end

local function cumulative(pts)
  local acc = { 0 }
  for i = 2, #pts do
    local dx, dz = pts[i][1] - pts[i - 1][1], pts[i][3] - pts[i - 1][3]
    acc[i] = acc[i - 1] + sqrt(dx * dx + dz * dz)
  end
  return acc
end

local tangent_cut

-- Tables equal key by key, nested tables compared the same way (profiles, textures).
local function same_value(a, b2)
  if a == b2 then return true end
  if type(a) ~= "table" or type(b2) ~= "table" then return false end
  for k, v in pairs(a) do if not same_value(v, b2[k]) then return false end end
  for k in pairs(b2) do if a[k] == nil then return false end end
  return true
end

-- True when two pieces of a run (a through node between them) build the same street: the
-- same oriented profile, textures and divider, so one room may span the node.
local function same_street(p, q)
  local a, c = p.road.spec, q.road.spec
  if profiles.oriented_key(a, p.forward) ~= profiles.oriented_key(c, q.forward) then return false end
  local pa = p.forward and a.builder or builder.mirror_profile(a.builder)
  local pc = q.forward and c.builder or builder.mirror_profile(c.builder)
  return same_value(pa, pc) and same_value(a.textures, c.textures) and same_value(a.divider, c.divider)
end

local function build_run(city, b, run, rng)
  local pieces = run.pieces
  local first, last = pieces[1], pieces[#pieces]
  local spec = first.road.spec
  local sn, fn = run.start, run.finish
  local se, fe = run.start_end, run.finish_end
  local sj = sn.junction
  local fj = fn.junction
  -- control points
  local ctrl = {}
  local start_dir, end_dir, start_section, end_section
  local d0, d1 = 0, 0
  if sj then
    local c = sj.centers[se.arm]
    ctrl[1] = { c[1], c[2], c[3] }
    start_dir = sj.dirs[se.arm]
    start_section = sj.sections[se.arm]
    d0 = sj.distance[se.arm]
  else
    ctrl[1] = { sn.x, sn.y, sn.z }
  end
  local cuts = {}
  for k, p in ipairs(pieces) do
    local poly = p.road.poly
    local n = #poly
    for i = 2, n - 1 do
      local v = p.forward and poly[i] or poly[n + 1 - i]
      local keep = true
      if k == 1 and sj then
        local dx, dz = v[1] - sn.x, v[3] - sn.z
        if dx * start_dir[1] + dz * start_dir[2] < d0 + 1 then keep = false end
      end
      if k == #pieces and fj then
        local fd = fj.dirs[fe.arm]
        local dx, dz = v[1] - fn.x, v[3] - fn.z
        if dx * fd[1] + dz * fd[2] < fj.distance[fe.arm] + 1 then keep = false end
      end
      if keep then ctrl[#ctrl + 1] = { v[1], v[2], v[3] } end
    end
    if k < #pieces then
      local t = p.to
      ctrl[#ctrl + 1] = { t.x, t.y, t.z }
      cuts[k] = #ctrl
    end
  end
  if fj then
    local c = fj.centers[fe.arm]
    ctrl[#ctrl + 1] = { c[1], c[2], c[3] }
    local d = fj.dirs[fe.arm]
    end_dir = { -d[1], -d[2] }
    end_section = builder.reverse(fj.sections[fe.arm])
    d1 = fj.distance[fe.arm]
  else
    ctrl[#ctrl + 1] = { fn.x, fn.y, fn.z }
  end
  -- a shape point just past an intersection's end that the curve, leaving the end square
  -- to the intersection, could only reach on a bend tighter than the road is wide (the
  -- sides would fold): dropped, as those inside the intersection are (not the nodes
  -- between pieces)
  do
    local hw = 0
    for _, p in ipairs(pieces) do hw = max(hw, p.road.spec.half_width or 0) end
    local is_cut = {}
    for _, ci in pairs(cuts) do is_cut[ci] = true end
    -- the curve from end c (leaving along dir) to point p (going on towards q) turns from
    -- dir to the chord and from the chord to p -> q within the chord's length
    local function too_tight(c, dir, p, q)
      local vx, vz = p[1] - c[1], p[3] - c[3]
      local L = sqrt(vx * vx + vz * vz)
      if L < 1e-9 then return true end
      vx, vz = vx / L, vz / L
      local wx, wz = unit(q[1] - p[1], q[3] - p[3])
      local s1 = abs(dir[1] * vz - dir[2] * vx)
      local s2 = abs(vx * wz - vz * wx)
      if dir[1] * vx + dir[2] * vz < 0 then s1 = 1 end
      if vx * wx + vz * wz < 0 then s2 = 1 end
      local s = max(s1, s2)
      return s > 1e-9 and L / (2 * s) < 2 * hw
    end
    local drop = {}
    if start_dir then
      for i = 2, #ctrl - 1 do
        if is_cut[i] or not too_tight(ctrl[1], start_dir, ctrl[i], ctrl[i + 1]) then break end
        drop[i] = true
      end
    end
    if end_dir then
      local back = { -end_dir[1], -end_dir[2] }
      for i = #ctrl - 1, 2, -1 do
        if drop[i] or is_cut[i] or not too_tight(ctrl[#ctrl], back, ctrl[i], ctrl[i - 1]) then break end
        drop[i] = true
      end
    end
    if next(drop) then
      local kept, map = {}, {}
      for i, p in ipairs(ctrl) do
        if not drop[i] then kept[#kept + 1] = p; map[i] = #kept end
      end
      for k, ci in pairs(cuts) do cuts[k] = map[ci] end
      ctrl = kept
    end
  end
  -- the ends must not pass each other (intersections taking more than the road's length)
  do
    local a, z = ctrl[1], ctrl[#ctrl]
    local nx = ctrl[2]
    local dx, dz = nx[1] - a[1], nx[3] - a[3]
    local len = sqrt(dx * dx + dz * dz)
    local bad = len < 1
    if start_dir and not bad then bad = (dx * start_dir[1] + dz * start_dir[2]) <= 0 end
    local px = ctrl[#ctrl - 1]
    local ex, ez = z[1] - px[1], z[3] - px[3]
    if end_dir and not bad then bad = (ex * end_dir[1] + ez * end_dir[2]) <= 0 or sqrt(ex * ex + ez * ez) < 1 end
    if bad then
      local r = #pieces == 1 and first.road or nil
      local total = 0
      for _, p in ipairs(pieces) do total = total + p.road.length end
      error(string_format("%s: too short for its ends: %.1f m long, the intersection at %s takes %.1f m of it and "
        .. "the one at %s %.1f m (move the nodes apart, or make the roads there meet at wider angles)",
        M.road_label(r or first.road), total, tostring(sn.id), d0, tostring(fn.id), d1), 0)
    end
  end
  local flat = {}
  for i, p in ipairs(ctrl) do flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = p[1], p[2], p[3] end
  local half = 0
  for _, p in ipairs(pieces) do half = max(half, p.road.spec.half_width) end
  local ok, cflat = pcall(core.spline, flat, { spacing = city.spacing or 20, max_angle = city.max_angle,
                                              half_width = half, start_dir = start_dir, end_dir = end_dir })
  if not ok or #cflat < 6 then
    error(string_format("%s: its centre line cannot be built: %s", M.road_label(first.road), tostring(cflat)), 0)
  end
  local samples = geom.unflatten(cflat)
  -- a city on a terrain: the centre line follows the ground between its ends (psdl.city.terrain)
  if city.drape then
    samples = city.drape(samples, ctrl, { spacing = city.spacing or 20, max_angle = city.max_angle, half_width = half,
                                          start_dir = start_dir, end_dir = end_dir })
  end
  -- cut the samples at the through nodes (every control point is a sample)
  local bounds = { 1 }
  do
    local k = 1
    for pi_ = 1, #pieces - 1 do
      local c = ctrl[cuts[pi_]]
      local found
      for i = k + 1, #samples do
        local s = samples[i]
        if abs(s[1] - c[1]) < 1e-6 and abs(s[3] - c[3]) < 1e-6 then found = i; break end
      end
      if not found then error("internal: a through node is not a sample of the centre line", 0) end
      bounds[#bounds + 1] = found
      k = found
    end
    bounds[#bounds + 1] = #samples
  end
  -- sub-pieces: {points, kind, piece}
  local subs = {}
  for k, p in ipairs(pieces) do
    local pts = {}
    for i = bounds[k], bounds[k + 1] do pts[#pts + 1] = samples[i] end
    local acc = cumulative(pts)
    local L = acc[#acc]
    local lv = piece_levels(city, p, pts[1][2], pts[#pts][2], L, pts, acc)
    if not lv then
      subs[#subs + 1] = { pts = pts, kind = "road", piece = p, length = L }
    else
      local ia = lv.ra > 0 and insert_at(pts, acc, lv.ra) or 1
      local ib = lv.rb > 0 and insert_at(pts, acc, L - lv.rb) or #pts
      -- heights: ramps linear from the end's grade to the level, the middle linear between levels
      local sa, sb = acc[ia], acc[ib]
      for i = 1, #pts do
        local s, y = acc[i], nil
        if i <= ia and lv.ra > 0 then y = lv.y0 + (lv.la - lv.y0) * (s / sa)
        elseif i >= ib and lv.rb > 0 then y = lv.y1 + (lv.lb - lv.y1) * ((L - s) / (L - sb))
        else y = lv.la + (lv.lb - lv.la) * ((s - sa) / max(1e-9, sb - sa)) end
        local q = pts[i]
        pts[i] = { q[1], y, q[3] }
      end
      local mid = lv.tunnel and "bore" or "deck"
      local ramp = lv.tunnel and "cut" or "ramp"
      local function sub(i0, i1, kind)
        local s = {}
        for i = i0, i1 do s[#s + 1] = pts[i] end
        subs[#subs + 1] = { pts = s, kind = kind, piece = p, length = acc[i1] - acc[i0], levels = lv }
      end
      if ia > 1 then sub(1, ia, ramp) end
      sub(ia, ib, mid)
      if ib < #pts then sub(ib, #pts, ramp) end
    end
  end
  -- `run_rooms` (psdl.city.new): plain road pieces that continue each other through a node
  -- build one street, so that its rooms may span the node (fewer rooms, the same road)
  if city.run_rooms and #subs > 1 then
    local merged = {}
    for _, s in ipairs(subs) do
      local prev = merged[#merged]
      if prev and prev.kind == "road" and s.kind == "road" and same_street(prev.piece, s.piece) then
        for i = 2, #s.pts do prev.pts[#prev.pts + 1] = s.pts[i] end
        prev.length = prev.length + s.length
        prev.also[#prev.also + 1] = s.piece.road
      else
        s.also = {}
        merged[#merged + 1] = s
      end
    end
    subs = merged
  end
  -- streets
  local rooms = {}
  local style = city.style
  local room_length = city.room_length or 100
  for k, s in ipairs(subs) do
    local p = s.piece
    local r = p.road
    local rs = r.spec
    local profile = p.forward and rs.builder or builder.mirror_profile(rs.builder)
    local n = #s.pts
    local o = { center = s.pts, profile = profile, textures = rs.textures, spacing = city.spacing }
    o.start_dir = start_dir
    if k > 1 then
      local prev = subs[k - 1].pts
      o.start_dir = tangent_cut(prev, s.pts)
    end
    if k < #subs then o.end_dir = tangent_cut(s.pts, subs[k + 1].pts) else o.end_dir = end_dir end
    if k == 1 then o.start_section = start_section end
    if k == #subs then o.end_section = end_section end
    local nrooms = max(1, floor(s.length / room_length + 0.5))
    -- at most 120 sections a room (240 perimeter points of the 255 a room may have): climbing
    -- curves get many sections to keep their quads planar
    o.split = min(120, max(2, ceil((n - 1) / nrooms) + 1))
    if rs.divider then
      local dv = {}
      for kk, v in pairs(rs.divider) do dv[kk] = v end
      dv.cap_start = k == 1
      dv.cap_end = k == #subs
      o.divider = dv
    end
    local room = { name = r.name or string_format("road %d", r.index) }
    if k == 1 then room.prop_rule = run.prop_rule end
    local lv = s.levels
    if s.kind == "bore" then
      local t = type(lv.opts) == "table" and lv.opts or {}
      o.tunnel = { textures = t.textures or (style.tunnels and (style.tunnels.road or style.tunnels.subway)) or style.tunnel,
                   ceiling = t.ceiling or M.TUNNEL.ceiling, height = t.height or M.TUNNEL.height,
                   height2 = t.height2 or M.TUNNEL.height2 }
      room.tunnel = true
    elseif s.kind == "cut" then
      local t = type(lv.opts) == "table" and lv.opts or {}
      local walls = t.walls or (style.tunnels and (style.tunnels.retaining_wall or style.tunnels.brick_wall
        or style.tunnels.railing)) or style.tunnel
      o.tunnel = { textures = walls, wall = true, height = t.wall_height or M.TUNNEL.wall_height,
                   height2 = t.wall_height2 or M.TUNNEL.wall_height2 }
      room.tunnel = false
    elseif s.kind == "deck" then
      local t = type(lv.opts) == "table" and lv.opts or {}
      o.railing = { textures = t.railing or (style.tunnels and (style.tunnels.bridge_railing or style.tunnels.railing))
                      or style.tunnel,
                    height = t.railing_height or M.BRIDGE.railing_height,
                    height2 = t.railing_height2 or M.BRIDGE.railing_height2 }
      room.bridge = true
    elseif s.kind == "ramp" then
      local t = type(lv.opts) == "table" and lv.opts or {}
      o.railing = { textures = t.ramp_railing or (style.tunnels and style.tunnels.railing) or style.tunnel,
                    height = 1.0, height2 = 1.0 }
    end
    o.room = room
    local ok2, list = pcall(b.street, b, o)
    if not ok2 then
      local msg = tostring(list):gsub("^[^\n]-%.lua:%d+: ", ""):gsub("; widen the curve or pass allow_clamp",
        "; widen the curve (via points further apart) or narrow the road")
      error(string_format("%s: %s", M.road_label(r), msg), 0)
    end
    for _, rm in ipairs(list) do
      rm.city_kind = s.kind
      rooms[#rooms + 1] = rm
      r.rooms[#r.rooms + 1] = rm
      for _, o2 in ipairs(s.also or {}) do o2.rooms[#o2.rooms + 1] = rm end
    end
  end
  run.rooms = rooms
  run.subs = #subs
  -- road record: lanes seen along the run
  local ll, lr = spec.lanes_left, spec.lanes_right
  if not first.forward then ll, lr = lr, ll end
  run.record = b:road_record{ rooms = rooms, lanes_left = ll, lanes_right = lr, flags = run.flags }
end

-- Tangent at the sample shared by two consecutive sub-pieces (last of a, first of b).
tangent_cut = function(a, b2)
  local n = #a
  local p, k, q = a[n - 1], a[n], b2[2]
  local ax, az = unit(k[1] - p[1], k[3] - p[3])
  local bx, bz = unit(q[1] - k[1], q[3] - k[3])
  if not ax then return { bx, bz } end
  if not bx then return { ax, az } end
  local tx, tz = unit(ax + bx, az + bz)
  return { tx or bx, tz or bz }
end

-- Runs f(...); when the city collects failures (`city.failures`, set by psdl.city.repair),
-- a failure is listed there and the build goes on with the next node or run.
local function guarded(city, f, ...)
  local list = city.failures
  if not list then return f(...) end
  local ok, err = pcall(f, ...)
  if not ok then list[#list + 1] = tostring(err) end
end

--- Build the road and intersection rooms of a city into a builder.
-- @tparam table city a `psdl.city` City
-- @tparam table b a `psdl.builder` Builder
-- @param rng a `psdl.city.random` generator
-- @treturn table `{runs = {...}, classes = {junction = n, ...}}`
function M.build_roads(city, b, rng)
  resolve_conflicts(city)
  classify(city)
  local runs = runs_of(city)
  local classes = {}
  for _, n in ipairs(city.nodes) do
    classes[n.class] = (classes[n.class] or 0) + 1
    n.room, n.junction, n.rooms = nil, nil, {}
  end
  for _, r in ipairs(city.roads) do r.rooms = {} end
  -- underground / elevated nodes: only tunnel / bridge roads may meet there
  for _, n in ipairs(city.nodes) do
    if n.underground or n.elevated then
      for _, e in ipairs(n.ends) do
        if (n.underground and not e.road.tunnel) or (n.elevated and not n.underground and not e.road.bridge) then
          error(string_format("%s: it is %s, but %s is no %s", M.node_label(n),
            n.underground and "underground (tunnel = ...)" or "on a bridge (bridge = ...)", M.road_ref(e.road),
            n.underground and "tunnel" or "bridge"), 0)
        end
      end
    end
  end
  if city.only then -- the nodes at the ends of the runs to build
    for _, run in ipairs(runs) do
      for _, p in ipairs(run.pieces) do
        if city.only.roads[p.road] then
          city.only.nodes[run.start], city.only.nodes[run.finish] = true, true
          break
        end
      end
    end
  end
  for _, n in ipairs(city.nodes) do
    local c = n.class
    if (c == "junction" or c == "bend" or c == "transition" or c == "dead_end")
      and (not city.only or city.only.nodes[n]) then
      guarded(city, build_junction, city, b, n)
    end
  end
  if city.failures and #city.failures > 0 then return { runs = runs, classes = classes } end
  local prng = rng:derive("props")
  for _, run in ipairs(runs) do
    -- (psdl.city.repair checks its repairs on a part of the city: `city.only`)
    local wanted = not city.only
    if not wanted then
      for _, p in ipairs(run.pieces) do if city.only.roads[p.road] then wanted = true break end end
    end
    if not wanted then goto next_run end
    local first = run.pieces[1].road
    local spec = first.spec
    run.flags = spec.flags
    local rule = first.opts.prop_rule
    if rule == nil then
      local pv = city.props
      if pv == false then rule = 0
      elseif type(pv) == "table" and pv[spec.name] ~= nil then rule = pv[spec.name]
      elseif type(pv) == "function" then rule = pv(first)
      else rule = spec.props end
    end
    run.prop_rule = (spec.flags & profiles.RECORD.sidewalks) ~= 0 and profiles.prop_rule(rule, spec.style, prng) or 0
    guarded(city, build_run, city, b, run, rng)
    ::next_run::
  end
  -- (roads to repair first: psdl.city.repair runs the layout again; an importer's network,
  -- auto_junctions: the validator's room_overlap rule judges)
  if city.failures and #city.failures > 0 then return { runs = runs, classes = classes } end
  local ov = (city.auto_junctions or city.only) and {} or M.overlaps(city, b)
  if ov[1] then
    -- name two roads where there are, else a road and an intersection
    local c = ov[1]
    local function rank(x) return (x.a.a and 1 or 0) + (x.b.a and 1 or 0) end
    for _, o in ipairs(ov) do if rank(o) > rank(c) then c = o end end
    local what = function(x) return x.a and M.road_label(x) or M.node_label(x) end
    local ref = function(x) return x.a and M.road_ref(x) or ("the intersection of " .. M.node_label(x)) end
    -- a script's mistake, refused (not led by "<label>:", so not for psdl.city.repair)
    error(string_format("%s, its rooms would overlap those of %s at (%.1f, %.1f): roads side by side need their "
      .. "widths apart; move them apart, join them at a node, or make one a bridge or tunnel", what(c.a),
      ref(c.b), c.x, c.z), 0)
  end
  return { runs = runs, classes = classes }
end

return M
