--- Which roads a repair drops (`psdl.city.repair`): the least road of several, and at a node
-- that roads leave in the same direction, the fewest roads so that the others leave it at
-- least `psdl.city.network.SAME_DIRECTION` degrees apart.
--
-- A road's importance: more lanes first, then the longer (in plan, from node through its via
-- points to node), then the one the script added first. At a node, the most roads stay that
-- can (no two neighbours around it closer than the limit); of the ways to keep that many, the
-- one whose roads rank highest in that order (the sum of their ranks). Three roads leaving at
-- 0, 1.8 and 3.6 degrees keep the two outer ones; 200 roads 1.8 degrees apart all round keep
-- every other one.
-- @module psdl.city.drops

local ipairs, sqrt, abs, pi = ipairs, math.sqrt, math.abs, math.pi
local table_sort = table.sort

local M = {}

--- The plan points of a road: from node, via points, to node, as `{x, z}`.
-- @tparam table r a road of a `psdl.city` City
-- @treturn table points
function M.road_points(r)
  local pts = { { r.a.x, r.a.z } }
  for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2] } end
  pts[#pts + 1] = { r.b.x, r.b.z }
  return pts
end

--- Plan length of a polyline (metres).
-- @tparam table pts `{x, z}` points, or `{x, y, z}` with `is3`
-- @tparam[opt] boolean is3
-- @treturn number
function M.plan_length(pts, is3)
  local s = 0
  local zi = is3 and 3 or 2
  for i = 2, #pts do
    local dx, dz = pts[i][1] - pts[i - 1][1], pts[i][zi] - pts[i - 1][zi]
    s = s + sqrt(dx * dx + dz * dz)
  end
  return s
end

local function road_length(r) return M.plan_length(M.road_points(r)) end

-- M.less with the plan lengths a, b of p, q
local function less(p, q, a, b)
  local lp, lq = p.spec.lanes or 2, q.spec.lanes or 2
  if lp ~= lq then return lp < lq end
  if abs(a - b) > 1e-6 then return a < b end
  return p.index > q.index
end

--- True when road p is less important than road q: fewer lanes, then shorter (by more than
-- 1 µm), then added later.
function M.less(p, q)
  return less(p, q, road_length(p), road_length(q))
end

--- The least road of a list (`M.less`), or nil for an empty list.
function M.least(list)
  local v
  for _, r in ipairs(list) do
    if not v or M.less(r, v) then v = r end
  end
  return v
end

-- (count, weight) of a choice; true when the first is better
local function better(c1, w1, c2, w2) return c1 > c2 or (c1 == c2 and w1 > w2) end

-- The best choice of a chain of m ends at ascending angles u[1..m] (radians, unwrapped):
-- the most ends no two of them closer than limit, then the largest sum of their weights
-- wt[1..m]; with `forced`, end 1 is in it. Returns the chosen positions, their count and
-- weight. (One pass: the best choice of the first i ends either leaves end i out, or takes
-- it after the best choice of those at least limit before it.)
local function chain(u, wt, m, limit, forced)
  local cnt, sum, from = { [0] = 0 }, { [0] = 0 }, {}
  local p = 0 -- the last end at least limit before end i
  for i = 1, m do
    while p + 1 < i and u[i] - u[p + 1] >= limit do p = p + 1 end
    local c, w = cnt[i - 1], sum[i - 1]
    local can = not forced or i == 1 or p >= 1
    if can and (i == 1 or better(cnt[p] + 1, sum[p] + wt[i], c, w)) then
      cnt[i], sum[i], from[i] = cnt[p] + 1, sum[p] + wt[i], p
    else
      cnt[i], sum[i] = c, w
    end
  end
  local chosen, i = {}, m
  while i > 0 do
    if from[i] then chosen[#chosen + 1] = i; i = from[i] else i = i - 1 end
  end
  return chosen, cnt[m], sum[m]
end

--- The ends of a node to keep: the most of them whose neighbours around the node are at
-- least `limit` apart, preferring heavier ones (see the module).
-- @tparam table ang angles of the ends, radians, ascending, within one turn
-- @tparam table wt their weights (numbers)
-- @tparam number limit radians (> 0, below a half turn)
-- @treturn table `{[i] = true}` for the kept ends
function M.keep(ang, wt, limit)
  local k = #ang
  local keep = {}
  if k <= 1 then
    if k == 1 then keep[1] = true end
    return keep
  end
  local turn = 2 * pi
  local function gap(i) -- from end i to the next one round
    local j = i % k + 1
    local d = ang[j] - ang[i]
    if j == 1 then d = d + turn end
    return d
  end
  -- where two neighbours are at least limit apart, the ends from there round are a chain:
  -- every choice of it keeps that gap
  for i = 1, k do
    if gap(i) >= limit then
      local u, w, idx = {}, {}, {}
      for t = 1, k do
        local j = (i + t - 1) % k + 1
        idx[t], w[t] = j, wt[j]
        u[t] = ang[j] + (j <= i and turn or 0)
      end
      for _, t in ipairs((chain(u, w, k, limit))) do keep[idx[t]] = true end
      return keep
    end
  end
  -- every neighbour closer than limit, all round: the best choice that keeps end i, of
  -- every i (the ends too close to i the other way round left out of its chain)
  local best, bc, bw
  for i = 1, k do
    local u, w, idx = {}, {}, {}
    for t = 1, k do
      local j = (i + t - 2) % k + 1
      local d = ang[j] - ang[i]
      if d < 0 then d = d + turn end
      if t > 1 and d > turn - limit then break end
      idx[t], w[t], u[t] = j, wt[j], d
    end
    local chosen, c, s = chain(u, w, #u, limit, true)
    if not best or better(c, s, bc, bw) then
      best, bc, bw = {}, c, s
      for _, t in ipairs(chosen) do best[idx[t]] = true end
    end
  end
  return best
end

--- The roads to drop at a node that roads leave in the same direction: the fewest so that
-- the others leave it at least `limit` apart (`M.keep`, each end weighed by the rank of its
-- road in `M.less` order among the node's roads).
-- @tparam table n a node (`n.ends`, psdl.city.network.classify; ends of removed roads skipped)
-- @tparam number limit radians
-- @treturn table `{{road = r, kept = the kept road nearest to it round the node (or nil),
--   degrees = how far apart they leave}, ...}` in the order the roads were added
function M.at_node(n, limit)
  local ends = {}
  for _, e in ipairs(n.ends or {}) do
    if not e.road.removed then ends[#ends + 1] = e end
  end
  table_sort(ends, function(p, q)
    if p.angle ~= q.angle then return p.angle < q.angle end
    return p.road.index < q.road.index
  end)
  local roads, seen = {}, {}
  for _, e in ipairs(ends) do
    if not seen[e.road] then seen[e.road] = true; roads[#roads + 1] = e.road end
  end
  -- rank: 1 + the roads less important (counted: the 1 µm tolerance is no order to sort by)
  local len, rank = {}, {}
  for _, r in ipairs(roads) do len[r] = road_length(r) end
  for _, r in ipairs(roads) do
    local below = 1
    for _, q in ipairs(roads) do
      if q ~= r and less(q, r, len[q], len[r]) then below = below + 1 end
    end
    rank[r] = below
  end
  local ang, wt = {}, {}
  for i, e in ipairs(ends) do ang[i], wt[i] = e.angle, rank[e.road] end
  local keep = M.keep(ang, wt, limit)
  local gone = {}
  for i, e in ipairs(ends) do
    if not keep[i] then gone[e.road] = true end
  end
  local out = {}
  for _, r in ipairs(roads) do
    if gone[r] then
      local kept, far
      for i, e in ipairs(ends) do
        if keep[i] and not gone[e.road] then
          for _, v in ipairs(ends) do
            if v.road == r then
              local d = abs(e.angle - v.angle)
              if d > pi then d = 2 * pi - d end
              if not far or d < far then kept, far = e.road, d end
            end
          end
        end
      end
      out[#out + 1] = { road = r, kept = kept, degrees = far and far * 180 / pi }
    end
  end
  table_sort(out, function(p, q) return p.road.index < q.road.index end)
  return out
end

return M
