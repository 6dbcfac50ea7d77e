--- Clean-up pass 6 (`psdl.osm.clean`): dual carriageways. Chains of one-way roads of the
-- same class and name running opposite to each other within `dual_max_separation` over
-- `dual_min_length` become one divided road along the middle line.
-- @module psdl.osm.clean.dual

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local T = require "psdl.osm.tags"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_sqrt, math_abs, math_max, math_min, math_huge, math_rad, math_cos, math_atan =
  math.sqrt, math.abs, math.max, math.min, math.huge, math.rad, math.cos, math.atan
local table_sort, table_remove = table.sort, table.remove
local len = Graph.len
local note, change, remove_orphans = C.note, C.change, C.remove_orphans

local DUAL_STEP = 4

local function dual_candidate(e)
  local a = e.attr
  if not a.oneway or a.roundabout or a.link or a.walkway or e.a == e.b then return false end
  local cls = T.classes[a.highway]
  return cls ~= nil and cls.dual_profile ~= nil
end

local function compatible(p, q)
  if p.highway ~= q.highway then return false end
  if p.name and q.name and p.name ~= q.name then return false end
  if p.ref and q.ref and p.ref ~= q.ref then return false end
  return true
end

local function turn(e, f) -- deflection from the end of e into the start of f, radians
  local p, q = e.pts[#e.pts - 1], e.pts[#e.pts]
  local r, s = f.pts[1], f.pts[2]
  local a1 = math_atan(q[2] - p[2], q[1] - p[1])
  local a2 = math_atan(s[2] - r[2], s[1] - r[1])
  return math_abs(G.wrap(a2 - a1))
end

local function build_chains(g)
  local cand = {}
  for _, e in ipairs(g:edge_list()) do if dual_candidate(e) then cand[#cand + 1] = e end end
  local function succ(e)
    local best, bt
    for _, f in ipairs(e.b.edges) do
      if f ~= e and f.a == e.b and dual_candidate(f) and compatible(e.attr, f.attr) then
        local t = turn(e, f)
        if t < math_rad(60) and (not bt or t < bt) then best, bt = f, t end
      end
    end
    return best
  end
  local function pred(e)
    local best, bt
    for _, f in ipairs(e.a.edges) do
      if f ~= e and f.b == e.a and dual_candidate(f) and compatible(e.attr, f.attr) then
        local t = turn(f, e)
        if t < math_rad(60) and (not bt or t < bt) then best, bt = f, t end
      end
    end
    return best
  end
  local chain_of, chains = {}, {}
  for _, e in ipairs(cand) do
    if not chain_of[e] then
      local start = e
      local seen = { [e] = true }
      while true do
        local p = pred(start)
        if not p or chain_of[p] or seen[p] or succ(p) ~= start then break end
        seen[p] = true
        start = p
      end
      local c = { start }
      chain_of[start] = c
      local cur = start
      while true do
        local s = succ(cur)
        if not s or chain_of[s] or pred(s) ~= cur then break end
        c[#c + 1] = s
        chain_of[s] = c
        cur = s
      end
      c.id = #chains + 1
      chains[#chains + 1] = c
    end
  end
  return chains
end

-- The polyline of a chain and the arc length of each of its nodes.
local function chain_geometry(c)
  local pts, arcs, nodes = {}, {}, {}
  local acc = 0
  for i, e in ipairs(c) do
    if i == 1 then
      pts[1] = e.pts[1]
      nodes[1], arcs[1] = e.a, 0
    end
    for j = 2, #e.pts do
      local p, q = e.pts[j - 1], e.pts[j]
      acc = acc + G.dist(p[1], p[2], q[1], q[2])
      pts[#pts + 1] = q
    end
    nodes[#nodes + 1], arcs[#arcs + 1] = e.b, acc
  end
  return pts, arcs, nodes, acc
end

-- a small segment index over a polyline
local function poly_index(pts)
  local grid = G.grid(30)
  local acc = 0
  for i = 2, #pts do
    local a, b = pts[i - 1], pts[i]
    local l = G.dist(a[1], a[2], b[1], b[2])
    grid:insert_segment({ i = i - 1, s = acc, l = l }, a[1], a[2], b[1], b[2], 0)
    acc = acc + l
  end
  return grid
end

-- nearest point of an indexed polyline within r: distance, arc length, unit direction
local function nearest(grid, pts, x, z, r)
  local bd, bs, bdx, bdz = math_huge, nil, 0, 0
  grid:query(x - r, z - r, x + r, z + r, function(sg)
    local a, b = pts[sg.i], pts[sg.i + 1]
    local d2, t = G.seg_dist2(x, z, a[1], a[2], b[1], b[2])
    if d2 < bd then
      bd, bs = d2, sg.s + t * sg.l
      if sg.l > 0 then bdx, bdz = (b[1] - a[1]) / sg.l, (b[2] - a[2]) / sg.l end
    end
  end)
  if not bs then return nil end
  return math_sqrt(bd), bs, bdx, bdz
end

local function find_pairs(ctx, chains)
  local opts = ctx.opts
  local maxsep = opts.dual_max_separation
  local cos_lim = math_cos(math_rad(35))
  local grid = G.grid(50)
  local geo = {}
  for _, c in ipairs(chains) do
    local pts, _, _, L = chain_geometry(c)
    geo[c] = { pts = pts, L = L }
    for i = 2, #pts do
      local a, b = pts[i - 1], pts[i]
      local l = G.dist(a[1], a[2], b[1], b[2])
      if l > 0 then
        grid:insert_segment({ c = c, a = a, b = b, dx = (b[1] - a[1]) / l, dz = (b[2] - a[2]) / l },
          a[1], a[2], b[1], b[2], 0)
      end
    end
  end
  local score = {}
  for _, c in ipairs(chains) do
    local gm = geo[c]
    local s = DUAL_STEP / 2
    local at = G.sampler(gm.pts)
    while s < gm.L do
      local x, z, dx, dz = at(s)
      local best, bd = nil, math_huge
      grid:query(x - maxsep, z - maxsep, x + maxsep, z + maxsep, function(sg)
        if sg.c ~= c and dx * sg.dx + dz * sg.dz < -cos_lim and compatible(c[1].attr, sg.c[1].attr) then
          local d2 = G.seg_dist2(x, z, sg.a[1], sg.a[2], sg.b[1], sg.b[2])
          if d2 < bd and d2 <= maxsep * maxsep then best, bd = sg.c, d2 end
        end
      end)
      if best then
        local p, q = c, best
        if q.id < p.id then p, q = q, p end
        local key = p.id .. ":" .. q.id
        local r = score[key]
        if not r then r = { c1 = p, c2 = q, length = 0 } score[key] = r score[#score + 1] = r end
        r.length = r.length + DUAL_STEP / 2 -- seen from both chains
      end
      s = s + DUAL_STEP
    end
  end
  local out = {}
  for _, r in ipairs(score) do
    if r.length >= opts.dual_min_length then out[#out + 1] = r end
  end
  table_sort(out, function(p, q)
    if p.length ~= q.length then return p.length > q.length end
    if p.c1.id ~= q.c1.id then return p.c1.id < q.c1.id end
    return p.c2.id < q.c2.id
  end)
  return out
end

-- Cut a chain at arc length s (an existing node within tol is used). The chain's edge
-- list is updated. Returns the node.
local function cut_chain(g, c, s, tol)
  local _, arcs, nodes = chain_geometry(c)
  for i, a in ipairs(arcs) do
    if math_abs(a - s) <= tol then return nodes[i] end
  end
  for i, e in ipairs(c) do
    if s > arcs[i] and s < arcs[i + 1] then
      local n, e1, e2 = g:split_at(e, s - arcs[i], 0, "d")
      if e1 then
        table_remove(c, i)
        table.insert(c, i, e2)
        table.insert(c, i, e1)
      end
      return n
    end
  end
  return s <= 0 and nodes[1] or nodes[#nodes]
end

local function chain_alive(c)
  for _, e in ipairs(c) do if e.dead then return false end end
  return true
end

local REAL_LANE = 3.5 -- metres: real-world lane width for the median estimate

local function carriageway(attr)
  if attr.width then return attr.width end
  local cls = T.classes[attr.highway] or T.classes.residential
  return (attr.lanes or cls.oneway_lanes or 1) * REAL_LANE
end

-- long: one pair of carriageways from paired samples to the rebuilt divided road; its
-- steps (runs, middle line, node clusters, attributes, rebuild) share the runs' arc lengths
local function merge_pair(ctx, c1, c2)
  local g, opts = ctx.g, ctx.opts
  local maxsep = opts.dual_max_separation
  local cos_lim = math_cos(math_rad(35))
  local pts1, arcs1, nodes1, L1 = chain_geometry(c1)
  local pts2, _, _, L2 = chain_geometry(c2)
  local idx2 = poly_index(pts2)
  -- samples along c1: every DUAL_STEP metres and at its nodes
  local S = {}
  local s = 0
  while s < L1 do S[#S + 1] = s s = s + DUAL_STEP end
  S[#S + 1] = L1
  for _, a in ipairs(arcs1) do S[#S + 1] = a end
  table_sort(S)
  local samples = {}
  local at1 = G.sampler(pts1)
  for _, v in ipairs(S) do
    if #samples == 0 or v - samples[#samples].s > 1e-6 then
      local x, z = at1(v)
      local _, _, dx, dz = at1(math_min(v + 1e-6, L1))
      local d, u, ex, ez = nearest(idx2, pts2, x, z, maxsep)
      samples[#samples + 1] = { s = v, x = x, z = z, d = d, u = u,
        ok = d ~= nil and d <= maxsep and dx * ex + dz * ez < -cos_lim }
    end
  end
  -- the longest run of paired samples
  local best_i, best_j, i = nil, nil, 1
  while i <= #samples do
    if samples[i].ok then
      local j = i
      while j + 1 <= #samples and samples[j + 1].ok do j = j + 1 end
      if not best_i or samples[j].s - samples[i].s > samples[best_j].s - samples[best_i].s then
        best_i, best_j = i, j
      end
      i = j + 1
    else
      i = i + 1
    end
  end
  if not best_i then return false end
  -- where the carriageways taper into one road (or part), the direction test fails
  -- first: carry the run on while they stay within reach of each other and opposite
  local function loose(smp) return smp.d ~= nil and smp.d <= maxsep end
  while best_i > 1 and loose(samples[best_i - 1]) and samples[best_i - 1].u >= samples[best_i].u - 1e-6 do
    best_i = best_i - 1
  end
  while best_j < #samples and loose(samples[best_j + 1]) and samples[best_j + 1].u <= samples[best_j].u + 1e-6 do
    best_j = best_j + 1
  end
  local s0, s1 = samples[best_i].s, samples[best_j].s
  if s1 - s0 < opts.dual_min_length then return false end
  local u0, u1 = samples[best_i].u, samples[best_j].u
  if u0 - u1 < opts.dual_min_length * 0.5 then return false end
  local tol = DUAL_STEP
  -- snap the run's ends to chain nodes near them
  for k, a in ipairs(arcs1) do
    if math_abs(a - s0) <= tol then s0 = a end
    if math_abs(a - s1) <= tol then s1 = a end
  end
  local n1s = cut_chain(g, c1, s0, 1e-6)
  local n1e = cut_chain(g, c1, s1, 1e-6)
  local n2s = cut_chain(g, c2, u1, tol) -- c2 runs the other way: its start is near s1
  local n2e = cut_chain(g, c2, u0, tol)
  -- the edges of both runs, and the nodes on them
  local function run(c, from, to)
    local edges, nodes, on = {}, {}, false
    for _, e in ipairs(c) do
      if e.a == from then on = true end
      if on then
        edges[#edges + 1] = e
        nodes[#nodes + 1] = e.a
        if e.b == to then nodes[#nodes + 1] = e.b break end
      end
    end
    if #edges == 0 or nodes[#nodes] ~= to then return nil end
    return edges, nodes
  end
  local e1, ns1 = run(c1, n1s, n1e)
  local e2, ns2 = run(c2, n2s, n2e)
  if not e1 or not e2 then return false end
  -- geometry of the two runs, the middle line
  local p1 = {}
  for k, e in ipairs(e1) do
    for j = (k == 1 and 1 or 2), #e.pts do p1[#p1 + 1] = e.pts[j] end
  end
  local p2 = {}
  for k, e in ipairs(e2) do
    for j = (k == 1 and 1 or 2), #e.pts do p2[#p2 + 1] = e.pts[j] end
  end
  local at_p1, R1 = G.sampler(p1)
  local at_p2, R2 = G.sampler(p2)
  local idx = poly_index(p2)
  local function mid(t) -- t: arc length along run 1
    local x, z = at_p1(t)
    local d, u = nearest(idx, p2, x, z, maxsep * 2)
    if not d then return x, z, 0 end
    local x2, z2 = at_p2(u)
    return (x + x2) / 2, (z + z2) / 2, d
  end
  -- nodes to place on the middle line, by arc length along run 1
  local placed = {}
  local a1 = 0
  for k, n in ipairs(ns1) do
    placed[#placed + 1] = { n = n, t = a1 }
    if e1[k] then a1 = a1 + len(e1[k]) end
  end
  local idx1 = poly_index(p1)
  for k, n in ipairs(ns2) do
    local t
    if k == 1 then t = R1 elseif k == #ns2 then t = 0 else
      local _, u = nearest(idx1, p1, n.x, n.z, maxsep * 2)
      t = u or 0
    end
    placed[#placed + 1] = { n = n, t = math_max(0, math_min(R1, t)) }
  end
  table_sort(placed, function(p, q)
    if math_abs(p.t - q.t) > 1e-9 then return p.t < q.t end
    return p.n.k < q.n.k
  end)
  -- clusters of nodes within 3 m along the line; the ends stay at the ends
  local clusters = {}
  for _, p in ipairs(placed) do
    local last = clusters[#clusters]
    if last and p.t - last.t0 <= 3 then
      last[#last + 1] = p
    else
      clusters[#clusters + 1] = { p, t0 = p.t }
    end
  end
  for k, cl in ipairs(clusters) do
    if k == 1 then cl.t = 0
    elseif k == #clusters then cl.t = R1
    else
      local sum = 0
      for _, p in ipairs(cl) do sum = sum + p.t end
      cl.t = sum / #cl
    end
    local rep
    for _, p in ipairs(cl) do
      if not p.n.dead and (not rep or p.n.k < rep.k) then rep = p.n end
    end
    cl.rep = rep
  end
  if #clusters < 2 then return false end
  -- attributes: from the run-1 edge at the middle of each piece
  local function edge_at(edges, t)
    local acc = 0
    for _, e in ipairs(edges) do
      acc = acc + len(e)
      if t <= acc then return e end
    end
    return edges[#edges]
  end
  local pieces = {}
  for k = 1, #clusters - 1 do
    local ta, tb = clusters[k].t, clusters[k + 1].t
    local tm = (ta + tb) / 2
    local ea = edge_at(e1, tm)
    local xm, zm = at_p1(tm)
    local _, um = nearest(idx, p2, xm, zm, maxsep * 2)
    local eb = edge_at(e2, um or R2 / 2)
    local sep_sum, sep_n = 0, 0
    local t = ta
    local via = {}
    while true do
      t = t + DUAL_STEP
      if t >= tb - 0.5 then break end
      local x, z, d = mid(t)
      via[#via + 1] = { x, z }
      sep_sum, sep_n = sep_sum + d, sep_n + 1
    end
    local _, _, dm = mid(tm)
    sep_sum, sep_n = sep_sum + dm, sep_n + 1
    local A, Bt = ea.attr, eb.attr
    local cls = T.classes[A.highway]
    local profile = (opts.profiles and opts.profiles[A.highway]) or cls.dual_profile
    local attr = Graph.with(A, {
      oneway = false, profile = profile,
      divided = T.divided[profile] and true or Graph.NIL,
      lanes = (A.lanes and Bt.lanes) and A.lanes + Bt.lanes or Graph.NIL,
      width = (A.width and Bt.width) and A.width + Bt.width or Graph.NIL,
      name = A.name or Bt.name or Graph.NIL, ref = A.ref or Bt.ref or Graph.NIL,
      bridge = (A.bridge or Bt.bridge) or false, tunnel = (A.tunnel and Bt.tunnel) or false,
      sidewalk = Graph.NIL,
    })
    attr.median = T.divided[profile] and math_max(0, sep_sum / sep_n - (carriageway(A) + carriageway(Bt)) / 2) or nil
    pieces[k] = { via = via, attr = attr, src = Graph.union(ea.src, eb.src) }
  end
  -- rebuild: remove the two runs, gather each cluster into one node on the line
  for _, e in ipairs(e1) do g:remove_edge(e) end
  for _, e in ipairs(e2) do g:remove_edge(e) end
  for _, cl in ipairs(clusters) do
    local x, z = mid(math_max(0, math_min(R1, cl.t)))
    if cl.t == 0 then x, z = (n1s.x + n2e.x) / 2, (n1s.z + n2e.z) / 2 end
    if cl.t == R1 then x, z = (n1e.x + n2s.x) / 2, (n1e.z + n2s.z) / 2 end
    local rep = cl.rep
    if rep.dead then rep = rep.merged_into end
    for _, p in ipairs(cl) do
      local n = p.n
      while n.dead and n.merged_into do n = n.merged_into end
      if n ~= rep and not n.dead then g:merge(rep, n, x, z) end
    end
    g:move(rep, x, z)
    cl.node = rep
  end
  for k, piece in ipairs(pieces) do
    local a, b = clusters[k].node, clusters[k + 1].node
    if a ~= b then
      local pts = { { a.x, a.z } }
      for _, v in ipairs(piece.via) do pts[#pts + 1] = v end
      pts[#pts + 1] = { b.x, b.z }
      g:edge(a, b, G.simplify(pts, opts.simplify), piece.attr, piece.src)
    end
  end
  remove_orphans(g)
  change(ctx, "dual carriageways merged into one divided road", 1, e1[1] or e2[1])
  change(ctx, "one-way carriageway roads merged into divided roads", #e1 + #e2)
  for _, list in ipairs({ e1, e2 }) do
    for _, e in ipairs(list) do note(ctx, "one-way carriageway roads merged into divided roads", 1, e) end
  end
  return true
end

function M.dual(ctx)
  local changed = false
  for _ = 1, 6 do
    local chains = build_chains(ctx.g)
    if #chains < 2 then break end
    local pairs_ = find_pairs(ctx, chains)
    local used, merged = {}, false
    for _, pr in ipairs(pairs_) do
      if not used[pr.c1] and not used[pr.c2] and chain_alive(pr.c1) and chain_alive(pr.c2) then
        used[pr.c1], used[pr.c2] = true, true
        if merge_pair(ctx, pr.c1, pr.c2) then merged = true end
      end
    end
    if not merged then break end
    changed = true
  end
  return changed
end

return M
