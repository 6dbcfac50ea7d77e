--- Clean-up of the road graph built from OSM, so that city generation can turn every
-- road and junction into rooms that do not overlap (the model: `psdl.osm.fit`).
--
-- Passes, in order (each counts what it did in `report.changes`; roads it removes go to
-- `report.dropped` with the reason):
--
-- 1. **merge**: nodes closer than `merge_distance` (at a common level) become one.
-- 2. **snap**: a dead end within `snap_distance` of another road at its level is joined
--    to it (the road is split there): OSM "almost junctions".
-- 3. **crossings**: two roads at the same level that cross without a shared node get
--    one (every at-grade crossing is a node, docs/network.md).
-- 4. **roundabouts** (`junction=roundabout`): `"keep"` keeps the ring, with the
--    junctions on it that are too close merged; `"collapse"` replaces it by one node
--    (marked `roundabout = true`) where all its roads meet; `"auto"` (default) keeps a
--    ring whose junctions fit on it with `min_road_length` between them and whose island
--    is at least `ISLAND` metres wide, and collapses the others.
-- 5. **join**: two roads meeting end to end at a node nothing else uses, and carrying
--    the same road, become one (the node becomes a shape point).
-- 6. **dual carriageways**: chains of one-way roads of the same class and name that run
--    opposite to each other within `dual_max_separation` over `dual_min_length` become one
--    divided road along the middle line (profile by class: freeway, avenue, boulevard;
--    `divided = true`, lanes and widths added up, `median` the estimated real median);
--    the junctions on both carriageways move onto that line and junctions closer than
--    3 m along it merge (cross streets then meet the road once).
-- 7. Then, until nothing changes (at most 20 rounds): **loops** (a road from a node back
--    to itself: split in three, or removed when its island is too small for its width),
--    **parallel roads** (two roads between the same two nodes that would overlap become one;
--    two opposite one-ways become a two-way road), **acute junctions** (two roads leaving a
--    node less than `min_angle` apart: the lesser is re-attached to the greater where they
--    part, or merged into it when it never parts), **spacing** (a road shorter than the
--    reaches of its two junctions plus `min_road_length`: the junctions merge; a dead end
--    shorter than its junction is removed; a too-short bridge or tunnel grows over its
--    approach), **join** again, **shape points** (simplified, straightened inside
--    junctions, and thinned where a bend has no room for the road's width), **crossings**
--    again (merges move roads), **bridges and tunnels** that end too close to the road they
--    cross grow over their approach roads; when a round changes nothing, **overlaps**: the
--    lesser of two roads or junctions that still overlap in plan is dropped, and the rounds
--    go on.
-- 8. **Last resort**: for each problem `psdl.osm.check` still finds, as little as can be
--    is given up, until none is left: a bend without room loses its shape points; a road
--    overlapping another loses the overlapping stretch; of two roads leaving a node too
--    flat the lesser is re-attached to the other where they part (at most twice), else
--    only its end there is cut away; else the least road involved is dropped. Then isolated
--    fragments shorter than `min_road_length` are removed.
--
-- What the last resort could not resolve (nothing, in every test) ends in
-- `report.warnings`, as do bridges that end too close to what they cross.
-- @module psdl.osm.clean

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local T = require "psdl.osm.tags"
local elevated = require "psdl.osm.elevated"

local ipairs, pairs, type, tostring, next = ipairs, pairs, type, tostring, next
local math_sqrt, math_abs, math_max, math_min, math_huge, math_pi, math_rad, math_deg, math_cos, math_atan, math_floor =
  math.sqrt, math.abs, math.max, math.min, math.huge, math.pi, math.rad, math.deg, math.cos, math.atan, math.floor
local string_format, table_sort, table_remove = string.format, table.sort, table.remove

local M = {}

--- A kept roundabout's island must be at least this wide (metres, between the inner
-- edges of its ring road).
M.ISLAND = 4

local len, degree, other = Graph.len, Graph.degree, Graph.other

-- One entry of `report.change_list` (what changed where): `at` is an edge (its middle), a
-- node (its position; the ways of its roads) or `{x =, z =, e = edge[, src = ways]}`.
local function note(ctx, what, n, at)
  local x, z, e, src
  if at.pts then
    e = at
    x, z = G.at(at.pts, len(at) / 2)
  elseif at.edges then
    x, z = at.x, at.z
    local list = {}
    for _, f in ipairs(at.edges) do
      list = Graph.union(list, f.src)
      if not e or (not e.attr.name and f.attr.name) then e = f end
    end
    src = list
  else
    x, z, e, src = at.x, at.z, at.e, at.src
  end
  local l = ctx.report.change_list
  l[#l + 1] = { stage = "clean-up", reason = what, count = n or 1,
    source = (src or (e and e.src)) and Graph.source_text(src or e.src) or nil,
    name = e and e.attr.name, highway = e and e.attr.highway,
    x = math_floor(x * 10 + 0.5) / 10, z = math_floor(z * 10 + 0.5) / 10 }
end

-- Count a clean-up change by kind (`report.changes`) and, with `at` (see `note`), list it
-- with its place (`report.change_list`).
local function change(ctx, what, n, at)
  local c = ctx.report.changes
  c[what] = (c[what] or 0) + (n or 1)
  if at then note(ctx, what, n, at) end
end

local function describe(e)
  local s = Graph.source_text(e.src)
  if e.attr.name then s = s .. " (" .. e.attr.name .. ")" end
  return s
end

-- Remove a road and list it in report.dropped; `key` is the reason's kind (counted in
-- report.dropped_by_reason), `reason` the full text.
local function drop(ctx, e, key, reason)
  local d = ctx.report.dropped
  local L = len(e)
  local x, z = G.at(e.pts, L / 2)
  d[#d + 1] = { source = Graph.source_text(e.src), name = e.attr.name, highway = e.attr.highway,
    length = math_floor(L * 10 + 0.5) / 10, reason = reason or key, kind = key, stage = "clean-up",
    x = math_floor(x * 10 + 0.5) / 10, z = math_floor(z * 10 + 0.5) / 10 }
  local k = ctx.report.dropped_by_reason
  k[key] = (k[key] or 0) + 1
  ctx.g:remove_edge(e)
end

-- a bridge or tunnel the clean-up had to build at grade is the intruder there: it gives way
-- to the roads that are at grade in the place
local function rank(e) return (e.attr.rank or 0) - (e.attr.flattened and 100 or 0) end

-- true when p is the more important edge: higher class, then longer, then older
local function major(p, q)
  if rank(p) ~= rank(q) then return rank(p) > rank(q) end
  local lp, lq = len(p), len(q)
  if math_abs(lp - lq) > 1e-6 then return lp > lq end
  return p.k < q.k
end

local function max_rank(n)
  local r = -1
  for _, e in ipairs(n.edges) do if rank(e) > r then r = rank(e) end end
  return r
end

local function levels_of(n)
  local set = {}
  for _, e in ipairs(n.edges) do set[fit.level(e.attr)] = true end
  return set
end

local function share_level(n, m)
  local a = levels_of(n)
  for lv in pairs(levels_of(m)) do if a[lv] then return true end end
  return false
end

local function remove_orphans(g)
  for _, n in ipairs(g:node_list()) do
    if #n.edges == 0 then g:remove_node(n) end
  end
end

------------------------------------------------------------------------ 1. merge close nodes

function M.merge_close(ctx)
  local d = ctx.opts.merge_distance
  if not d or d <= 0 then return false end
  local g = ctx.g
  local nodes = g:node_list()
  local grid = G.grid(math_max(d * 4, 10))
  local parent = {}
  local function find(n)
    while parent[n] and parent[n] ~= n do n = parent[n] end
    return n
  end
  for _, n in ipairs(nodes) do
    grid:query(n.x - d, n.z - d, n.x + d, n.z + d, function(m)
      if G.dist(n.x, n.z, m.x, m.z) < d and share_level(n, m) then
        local rn, rm = find(n), find(m)
        if rn ~= rm then
          if rn.k < rm.k then parent[rm] = rn else parent[rn] = rm end
        end
      end
    end)
    grid:insert(n, n.x, n.z, n.x, n.z)
  end
  local clusters = {}
  for _, n in ipairs(nodes) do
    local r = find(n)
    if r ~= n then
      local c = clusters[r]
      if not c then c = { r } clusters[r] = c clusters[#clusters + 1] = c end
      c[#c + 1] = n
    end
  end
  local changed = false
  for _, c in ipairs(clusters) do
    local sx, sz = 0, 0
    for _, n in ipairs(c) do sx, sz = sx + n.x, sz + n.z end
    local x, z = sx / #c, sz / #c
    table_sort(c, function(p, q) return p.k < q.k end)
    for i = 2, #c do g:merge(c[1], c[i], x, z) end
    change(ctx, string_format("nodes merged (closer than %g m)", d), #c - 1, c[1])
    changed = true
  end
  return changed
end

------------------------------------------------------------------------ 2. snap dead ends

function M.snap(ctx)
  local d = ctx.opts.snap_distance
  if not d or d <= 0 then return false end
  local g = ctx.g
  local changed = false
  for _ = 1, 5 do
    local grid = G.grid(50)
    for _, e in ipairs(g:edge_list()) do
      for i = 2, #e.pts do
        local a, b = e.pts[i - 1], e.pts[i]
        grid:insert_segment({ e = e, i = i - 1 }, a[1], a[2], b[1], b[2], 0)
      end
    end
    local todo = {}
    for _, n in ipairs(g:node_list()) do
      if degree(n) == 1 and not n.boundary then
        local mine = n.edges[1]
        local lv = fit.level(mine.attr)
        local best, bd
        grid:query(n.x - d, n.z - d, n.x + d, n.z + d, function(sg)
          local e = sg.e
          if e ~= mine and fit.level(e.attr) == lv then
            local a, b = e.pts[sg.i], e.pts[sg.i + 1]
            local d2, t = G.seg_dist2(n.x, n.z, a[1], a[2], b[1], b[2])
            local dist = math_sqrt(d2)
            if dist < d and (not bd or dist < bd or (dist == bd and e.k < best.e.k)) then
              best, bd = { e = e, i = sg.i, t = t }, dist
            end
          end
        end)
        if best then todo[#todo + 1] = { n = n, hit = best } end
      end
    end
    local done = 0
    local touched = {}
    for _, s in ipairs(todo) do
      local n, e = s.n, s.hit.e
      if not e.dead and not n.dead and not touched[e] and degree(n) == 1 then
        local other_end = n.edges[1]
        local target
        local pts = e.pts
        local a, b = pts[s.hit.i], pts[s.hit.i + 1]
        local x, z = a[1] + s.hit.t * (b[1] - a[1]), a[2] + s.hit.t * (b[2] - a[2])
        -- onto an end node of e, or into its middle
        if G.dist(x, z, e.a.x, e.a.z) < 1e-6 + d * 0.5 and (s.hit.i == 1 and s.hit.t < 0.5) then
          target = e.a
        elseif G.dist(x, z, e.b.x, e.b.z) < 1e-6 + d * 0.5 and (s.hit.i == #pts - 1 and s.hit.t > 0.5) then
          target = e.b
        else
          target = g:split(e, s.hit.i, s.hit.t, nil, nil, "j")
        end
        if target ~= other(other_end, n) then
          g:merge(target, n, target.x, target.z)
          done = done + 1
          touched[e] = true
          note(ctx, string_format("dead ends joined to a road they almost touch (within %g m)", d), 1, target)
        end
      end
    end
    if done == 0 then break end
    change(ctx, string_format("dead ends joined to a road they almost touch (within %g m)", d), done)
    changed = true
  end
  return changed
end

------------------------------------------------------------------------ 3. crossings

-- Split edges at the given cut points: cuts = { [edge] = { {i, t, node}, ... } }.
local function apply_cuts(g, cuts)
  local list = {}
  for e, c in pairs(cuts) do list[#list + 1] = { e = e, c = c } end
  table_sort(list, function(p, q) return p.e.k < q.e.k end)
  for _, item in ipairs(list) do
    local e, c = item.e, item.c
    table_sort(c, function(p, q)
      if p.i ~= q.i then return p.i > q.i end
      return p.t > q.t
    end)
    -- from the far end backwards: earlier segment indices stay valid in the first piece
    local cur = e
    for _, cut in ipairs(c) do
      if cut.node.dead then cut.node = cut.node.merged_into or cut.node end
      local _, first = g:split(cur, cut.i, cut.t, cut.node, true)
      cur = first
    end
  end
end

function M.crossings(ctx)
  local g = ctx.g
  local list = fit.crossings(g, "grade")
  if #list == 0 then return false end
  local cuts = {}
  local function add(e, i, t, node)
    local c = cuts[e]
    if not c then c = {} cuts[e] = c end
    c[#c + 1] = { i = i, t = t, node = node }
  end
  for _, c in ipairs(list) do
    local node = g:node(c.x, c.z, nil, "x")
    add(c.e, c.i, c.t, node)
    add(c.f, c.j, c.u, node)
    note(ctx, "at-grade crossings without a shared node joined", 1,
      { x = c.x, z = c.z, e = c.e, src = Graph.union(c.e.src, c.f.src) })
  end
  apply_cuts(g, cuts)
  change(ctx, "at-grade crossings without a shared node joined", #list)
  return true
end

------------------------------------------------------------------------ 4. roundabouts

function M.roundabouts(ctx)
  local g, opts, dims = ctx.g, ctx.opts, ctx.dims
  local ring = {}
  for _, e in ipairs(g:edge_list()) do
    if e.attr.roundabout then ring[#ring + 1] = e end
  end
  if #ring == 0 then return false end
  -- components of ring edges
  local comp_of = {}
  local comps = {}
  for _, e in ipairs(ring) do
    if not comp_of[e] then
      local c = { edges = {}, nodes = {}, node_list = {} }
      comps[#comps + 1] = c
      local stack = { e }
      comp_of[e] = c
      while #stack > 0 do
        local x = table_remove(stack)
        c.edges[#c.edges + 1] = x
        for _, n in ipairs({ x.a, x.b }) do
          if not c.nodes[n] then
            c.nodes[n] = true
            c.node_list[#c.node_list + 1] = n
          end
          for _, y in ipairs(n.edges) do
            if y.attr.roundabout and not comp_of[y] then
              comp_of[y] = c
              stack[#stack + 1] = y
            end
          end
        end
      end
    end
  end
  local changed = false
  for _, c in ipairs(comps) do
    table_sort(c.node_list, function(p, q) return p.k < q.k end)
    -- centre, perimeter, ring width
    local sx, sz, sl, perim, hw_ring = 0, 0, 0, 0, 0
    for _, e in ipairs(c.edges) do
      hw_ring = math_max(hw_ring, fit.hw(e, dims))
      for i = 2, #e.pts do
        local a, b = e.pts[i - 1], e.pts[i]
        local l = G.dist(a[1], a[2], b[1], b[2])
        sx, sz, sl = sx + (a[1] + b[1]) / 2 * l, sz + (a[2] + b[2]) / 2 * l, sl + l
      end
      perim = perim + len(e)
    end
    local cx, cz = sx / math_max(sl, 1e-9), sz / math_max(sl, 1e-9)
    if sl == 0 then cx, cz = c.node_list[1].x, c.node_list[1].z end
    local radius = perim / (2 * math_pi)
    -- attachments: ring nodes with other roads, by angle around the centre
    local att = {}
    for _, n in ipairs(c.node_list) do
      local outside, hw = 0, 0
      for _, e in ipairs(n.edges) do
        if not comp_of[e] then outside = outside + 1 hw = math_max(hw, fit.hw(e, dims)) end
      end
      if outside > 0 then
        att[#att + 1] = { n = n, angle = math_atan(n.z - cz, n.x - cx), hw = hw, outside = outside }
      end
    end
    table_sort(att, function(p, q) return p.angle < q.angle end)
    -- cluster attachments too close along the ring
    local clusters = {}
    for _, a in ipairs(att) do
      local last = clusters[#clusters]
      if last and radius * (a.angle - last[#last].angle) < last.hw + a.hw + 2 * dims.crosswalk + opts.min_road_length then
        last[#last + 1] = a
        last.hw = math_max(last.hw, a.hw)
      else
        clusters[#clusters + 1] = { a, hw = a.hw }
      end
    end
    if #clusters > 1 then
      local first, last = clusters[1], clusters[#clusters]
      local gap = radius * (first[1].angle + 2 * math_pi - last[#last].angle)
      if gap < first.hw + last.hw + 2 * dims.crosswalk + opts.min_road_length then
        for _, a in ipairs(first) do last[#last + 1] = a end
        last.hw = math_max(last.hw, first.hw)
        table_remove(clusters, 1)
      end
    end
    local island = 2 * (radius - hw_ring)
    local keep = opts.roundabouts == "keep"
      or (opts.roundabouts == "auto" and #clusters >= 2 and island >= M.ISLAND)
    if keep and #clusters >= 1 then
      for _, cl in ipairs(clusters) do
        if #cl > 1 then
          table_sort(cl, function(p, q)
            if p.outside ~= q.outside then return p.outside > q.outside end
            return p.n.k < q.n.k
          end)
          local rep = cl[1].n
          for i = 2, #cl do
            g:merge(rep, cl[i].n, rep.x, rep.z)
          end
          change(ctx, "roundabout junctions merged (too close on the ring)", #cl - 1, rep)
        end
      end
      change(ctx, "roundabouts kept as a ring of roads", 1, { x = cx, z = cz, e = c.edges[1] })
    else
      local centre = g:node(cx, cz, nil, "r")
      centre.roundabout = true
      for _, e in ipairs(c.edges) do
        if not e.dead then g:remove_edge(e) end
      end
      for _, n in ipairs(c.node_list) do
        if not n.dead then
          if #n.edges > 0 then g:merge(centre, n, cx, cz) else g:remove_node(n) end
        end
      end
      if #centre.edges == 0 then g:remove_node(centre) end
      change(ctx, "roundabouts collapsed into one junction", 1, { x = cx, z = cz, e = c.edges[1] })
    end
    changed = true
  end
  return changed
end

------------------------------------------------------------------------ 5. join

function M.join(ctx)
  local g = ctx.g
  local changed, n_joined = false, 0
  local again = true
  while again do
    again = false
    for _, n in ipairs(g:node_list()) do
      if not n.dead and #n.edges == 2 and not n.roundabout
        and other(n.edges[1], n) ~= other(n.edges[2], n) then
        local e = g:join(n, false)
        if e then
          n_joined = n_joined + 1
          note(ctx, "roads joined end to end (same road, nothing else at the node)", 1, { x = n.x, z = n.z, e = e })
          again, changed = true, true
        end
      end
    end
  end
  if n_joined > 0 then ctx.joined = (ctx.joined or 0) + n_joined end
  return changed
end

------------------------------------------------------------------------ 6. dual carriageways

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

------------------------------------------------------------------------ 7a. loops

function M.loops(ctx)
  local g, dims = ctx.g, ctx.dims
  local changed = false
  for _, e in ipairs(g:edge_list()) do
    if not e.dead and e.a == e.b then
      local L = len(e)
      local hw = fit.hw(e, dims)
      local area = math_abs(G.area(e.pts))
      local r_eff = L > 0 and 2 * area / L or 0
      if L < 6 * hw or r_eff < hw + M.ISLAND / 2 then
        if L > 2 * ctx.opts.merge_distance and r_eff >= 1 then
          drop(ctx, e, "loop too small for its road",
            string_format("loop too small for its road (%.0f m around, %.0f m wide)", L, 2 * hw))
        else
          -- flat or tiny: what is left of a road between two nodes that became one
          g:remove_edge(e)
          change(ctx, "flat loops removed (left where two nodes became one)", 1, e)
        end
      else
        local n1, e1, e2 = g:split_at(e, L / 3, 0, "l")
        if e2 then g:split_at(e2, L / 3, 0, "l") end
        change(ctx, "loops split into three roads", 1, e)
      end
      changed = true
    end
  end
  if changed then remove_orphans(g) end
  return changed
end

------------------------------------------------------------------------ 7b. parallel roads

-- greatest distance from points along p to the polyline q
local function one_sided(p, q)
  local worst = 0
  local L = G.length(p)
  local steps = math_max(2, math_floor(L / 3))
  for k = 0, steps do
    local x, z = G.at(p, L * k / steps)
    local d = G.project(q, x, z)
    if d > worst then worst = d end
  end
  return worst
end

function M.parallel(ctx)
  local g, dims = ctx.g, ctx.dims
  local groups, keys = {}, {}
  for _, e in ipairs(g:edge_list()) do
    if e.a ~= e.b then
      local p, q = e.a.k, e.b.k
      if p > q then p, q = q, p end
      local key = p .. ":" .. q
      local grp = groups[key]
      if not grp then grp = {} groups[key] = grp keys[#keys + 1] = key end
      grp[#grp + 1] = e
    end
  end
  local changed = false
  for _, key in ipairs(keys) do
    local grp = groups[key]
    if #grp >= 2 then
      local again = true
      while again do
        again = false
        for i = 1, #grp do
          for j = i + 1, #grp do
            local e, f = grp[i], grp[j]
            if not e.dead and not f.dead and fit.level(e.attr) == fit.level(f.attr) then
              local pe = e.pts
              local pf = f.a == e.a and f.pts or G.reversed(f.pts)
              local d = math_max(one_sided(pe, pf), one_sided(pf, pe))
              if d < fit.hw(e, dims) + fit.hw(f, dims) then
                local keep, gone = e, f
                if major(f, e) then keep, gone = f, e end
                local ka, ga = keep.attr, gone.attr
                local attr = ka
                if ka.oneway and ga.oneway and gone.a == keep.b then
                  -- two opposite one-ways between the same nodes: one two-way road
                  local cls = T.classes[ka.highway] or T.classes.residential
                  attr = Graph.with(ka, {
                    oneway = false,
                    profile = (ctx.opts.profiles and ctx.opts.profiles[ka.highway]) or cls.profile,
                    lanes = (ka.lanes and ga.lanes) and ka.lanes + ga.lanes or Graph.NIL,
                    width = (ka.width and ga.width) and ka.width + ga.width or Graph.NIL,
                  })
                  change(ctx, "opposite one-ways between the same nodes merged into a two-way road", 1, gone)
                else
                  change(ctx, "parallel roads between the same nodes merged", 1, gone)
                end
                local src = Graph.union(keep.src, gone.src)
                g:remove_edge(gone)
                keep.attr, keep.src = attr, src
                changed, again = true, true
              end
            end
          end
        end
      end
    end
  end
  return changed
end

------------------------------------------------------------------------ 7c. acute junctions

--- The angle (degrees) at which a re-attached road leaves the road it ran along.
M.REATTACH_ANGLE = 35

-- Re-attach edge m (leaving node n) to edge M where it parts from it.
local function reattach(ctx, n, m, Mj)
  local g, dims = ctx.g, ctx.dims
  local pm = Graph.pts_from(m, n)
  local pM = Graph.pts_from(Mj, n)
  local Lm, LM = G.length(pm), G.length(pM)
  local clear = fit.hw(m, dims) + fit.hw(Mj, dims)
  local far_M = other(Mj, n)
  local far_m = other(m, n)
  -- walk along m until it is clear of M
  local sp
  local s = 0
  while s <= Lm do
    local x, z = G.at(pm, s)
    local d = G.project(pM, x, z)
    if d >= clear then sp = s break end
    if s == Lm then break end
    s = math_min(Lm, s + 1)
  end
  local into_n = m.b == n -- m is stored running into n (matters for one-ways)
  local function new_m(start, rest)
    -- rest: polyline from the parting point to m's far end (oriented away from n)
    local pts = { { start.x, start.z } }
    for _, p in ipairs(rest) do pts[#pts + 1] = p end
    local e
    if into_n then
      e = g:edge(far_m, start, G.reversed(pts), m.attr, m.src)
    else
      e = g:edge(start, far_m, pts, m.attr, m.src)
    end
    e.turn_off = into_n and "b" or "a" -- the end that turns off M (the shape pass keeps its bend)
  end
  local function node_on_M(sM)
    if sM >= LM - 1 then return far_M end
    if sM <= 1 then return n end
    local s_stored = Mj.a == n and sM or LM - sM
    return (g:split_at(Mj, s_stored, 0, "a"))
  end
  -- a dead end that parts from M only near its end is just a spur along M
  if sp and degree(far_m) == 1 and Lm - sp < 2 * clear then sp = nil end
  -- opposite one-way carriageways of one road (the dual-carriageway pass did not pair them):
  -- the stretch of M that m runs along carries both directions
  local opposite = m.attr.oneway and Mj.attr.oneway and (m.b == n) ~= (Mj.b == n)
    and m.attr.highway == Mj.attr.highway and not m.attr.link
  local function both_ways(q)
    if not opposite then return end
    for _, e in ipairs(n.edges) do
      if not e.dead and other(e, n) == q and e.attr.oneway and e.attr.highway == Mj.attr.highway
        and (e.src == Mj.src or Graph.source_text(e.src) == Graph.source_text(Mj.src)) then
        local ka = e.attr
        local cls = T.classes[ka.highway] or T.classes.residential
        e.attr = Graph.with(ka, { oneway = false,
          profile = (ctx.opts.profiles and ctx.opts.profiles[ka.highway]) or cls.profile,
          lanes = Graph.NIL, width = Graph.NIL })
        e.src = Graph.union(e.src, m.src)
        change(ctx, "opposite one-ways running side by side merged into a two-way road", 1, m)
        return
      end
    end
  end
  -- a road that would vanish into M (it never parts from it, or only at its far end) is
  -- first made narrower: it may part from M then
  local vanish = not sp
  if sp then
    local x, z = G.at(pm, sp)
    local _, sM = G.project(pM, x, z)
    vanish = sM >= LM - 1 and far_M == far_m
  end
  if (vanish and Lm > 2 * clear or (sp and sp > 2 * clear)) and M.narrow(ctx, m) then return true end
  if sp then
    local x, z = G.at(pm, sp)
    local _, sM = G.project(pM, x, z)
    if sM <= 1 then return false end
    local rest = fit.sub(pm, sp, Lm)
    -- the new junction goes back along M so that m leaves it at REATTACH_ANGLE: at the foot
    -- of the parting point m would run off at a right angle, but the shape pass straightens
    -- it inside the junction and it would leave M as flat as before (and be re-attached again
    -- and again, a stretch lost each time)
    local dM = G.project(pM, x, z)
    local sQ = sM - dM / math.tan(math_rad(M.REATTACH_ANGLE))
    if sQ > 1 + clear then sM = sQ end
    g:remove_edge(m)
    local q = node_on_M(sM)
    both_ways(q)
    if q == far_m then
      change(ctx, "roads running along another merged into it", 1, m)
      return true
    end
    new_m(q, rest)
    change(ctx, "acute junctions re-attached where the roads part", 1, m)
    return true
  end
  -- m never parts from M: it runs along it; its far end joins M
  local _, sM = G.project(pM, far_m.x, far_m.z)
  g:remove_edge(m)
  if far_m ~= far_M and far_m ~= n then
    local q = node_on_M(sM)
    both_ways(q)
    if q ~= far_m then g:merge(q, far_m, q.x, q.z) end
  else
    both_ways(far_M)
  end
  change(ctx, "roads running along another merged into it", 1, m)
  return true
end

function M.acute(ctx)
  local g, dims = ctx.g, ctx.dims
  local min_angle = math_rad(ctx.opts.min_angle)
  local changed = false
  for _, n in ipairs(g:node_list()) do
    if not n.dead and #n.edges >= 2 then
      local ends = fit.ends(n, dims)
      local k = #ends
      local worst, wi, wj
      for i = 1, k do
        local j = i % k + 1
        if j ~= i then
          local gap = fit.ccw_gap(ends[i].angle, ends[j].angle)
          if gap < min_angle and (not worst or gap < worst) then worst, wi, wj = gap, i, j end
        end
      end
      if worst then
        local e, f = ends[wi].e, ends[wj].e
        if e ~= f and e.a ~= e.b and f.a ~= f.b and other(e, n) ~= other(f, n)
          and fit.level(e.attr) == fit.level(f.attr) then
          local Mj, m = e, f
          if major(f, e) then Mj, m = f, e end
          if reattach(ctx, n, m, Mj) then
            changed = true
            remove_orphans(g)
          end
        end
      end
    end
  end
  return changed
end

------------------------------------------------------------------------ 7d. spacing

-- edges that cross another road at a different level (bridges, tunnels over/under roads)
local function separated_edges(g, dims)
  local set = {}
  for e, list in pairs(fit.separated(g, dims)) do
    set[e] = true
    for _, c in ipairs(list) do set[c.other] = true end
  end
  return set
end

-- What an edge would need if every road met it at a right angle: the widest other road
-- at each junction end plus the crosswalks. A road much longer than that is too short only
-- because of an acute angle, which merging its junctions would not fix.
local function square_need(e, dims, min_len)
  local need = min_len
  for _, n in ipairs({ e.a, e.b }) do
    if degree(n) >= 3 then
      local w = 0
      for _, f in ipairs(n.edges) do
        if f ~= e then w = math_max(w, fit.hw(f, dims)) end
      end
      need = need + w + dims.crosswalk
    elseif degree(n) == 2 then
      need = need + fit.hw(e, dims)
    end
  end
  return need
end

function M.spacing(ctx)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  local min_len = opts.min_road_length
  local changed = false
  local reach = fit.reach_table(g, dims)
  for _ = 1, 50 do
    local bad = {}
    for _, e in ipairs(g:edge_list()) do
      if e.a ~= e.b then
        local L = len(e)
        local need = fit.need(e, dims, min_len, reach)
        if L < need - 1e-6 and L < 1.5 * square_need(e, dims, min_len) then
          bad[#bad + 1] = { e = e, short = need - L }
        end
      end
    end
    if #bad == 0 then break end
    table_sort(bad, function(p, q)
      if math_abs(p.short - q.short) > 1e-9 then return p.short > q.short end
      return p.e.k < q.e.k
    end)
    local crossing = separated_edges(g, dims)
    local touched, did = {}, 0
    for _, b in ipairs(bad) do
      local e = b.e
      if not e.dead and not touched[e.a] and not touched[e.b] then
        local a, z = e.a, e.b
        local da, dz = degree(a), degree(z)
        local L = len(e)
        if crossing[e] and (da == 2 or dz == 2) then
          -- a short bridge or tunnel: grow it over its approach
          local at = dz == 2 and z or a
          local attr = e.attr
          if g:join(at, true, attr) then
            change(ctx, "bridges and tunnels extended over their approach roads", 1, e)
            touched[a], touched[z] = true, true
            did = did + 1
          end
        elseif crossing[e] then
          -- between two junctions: leave it, reported by the final check
        elseif da == 1 and dz == 1 then
          if L < min_len then
            drop(ctx, e, "isolated fragment", string_format("isolated fragment (%.1f m)", L))
            did = did + 1
          end
        elseif da == 1 or dz == 1 then
          local j = da == 1 and z or a
          if degree(j) >= 3 then
            drop(ctx, e, "dead end shorter than the junction it leaves",
              string_format("dead end shorter than the junction it leaves (%.1f m, needs %.1f m)", L, L + b.short))
          else
            g:remove_edge(e)
            change(ctx, "short road ends trimmed at a bend or profile change", 1, e)
          end
          touched[a], touched[z] = true, true
          did = did + 1
        else
          -- merge the two ends
          local keep, gone = a, z
          local function better(p, q)
            local dp, dq = degree(p), degree(q)
            if dp ~= dq then return dp > dq end
            local rp, rq = max_rank(p), max_rank(q)
            if rp ~= rq then return rp > rq end
            return p.k < q.k
          end
          if better(z, a) then keep, gone = z, a end
          local x, zz = keep.x, keep.z
          if degree(a) == degree(z) and max_rank(a) == max_rank(z) then
            x, zz = (a.x + z.x) / 2, (a.z + z.z) / 2
          end
          local both = da >= 3 and dz >= 3
          g:remove_edge(e)
          g:merge(keep, gone, x, zz)
          touched[keep] = true
          change(ctx, both and "junctions too close for their roads merged"
            or "short roads between a junction and a bend merged away", 1, keep)
          did = did + 1
        end
      end
    end
    remove_orphans(g)
    if did == 0 then break end
    changed = true
    -- a merge can leave loops and parallel roads behind: tidy before measuring again
    local l1 = M.loops(ctx)
    local l2 = M.parallel(ctx)
    if l1 or l2 then
      reach = fit.reach_table(g, dims)
    else -- only the junctions changed here and their neighbours need measuring again
      local redo = {}
      for n in pairs(touched) do
        redo[n] = true
        if not n.dead then
          for _, e in ipairs(n.edges) do redo[other(e, n)] = true end
        end
      end
      fit.reach_update(reach, redo, dims)
    end
  end
  return changed
end

------------------------------------------------------------------------ 7e'. dead-end caps

-- A dead end becomes a turning circle as wide as its road, reaching half a road width past
-- its node: where that would touch another road at the same level (their widths plus a
-- margin), the dead end is cut back along its road until it clears, or dropped when too
-- little of it would be left.
M.CAP_MARGIN = 1

function M.caps(ctx)
  local g, dims = ctx.g, ctx.dims
  local grid = G.grid(50)
  local maxhw = 0
  for _, e in ipairs(g:edge_list()) do
    maxhw = math_max(maxhw, fit.hw(e, dims))
    for i = 2, #e.pts do
      local a, b = e.pts[i - 1], e.pts[i]
      grid:insert_segment({ e = e, i = i - 1, pts = e.pts }, a[1], a[2], b[1], b[2], 0)
    end
  end
  local trimmed, dropped = 0, 0
  for _, n in ipairs(g:node_list()) do
    if not n.dead and degree(n) == 1 and #n.edges == 1 then
      local e = n.edges[1]
      local far = other(e, n)
      local hw, lv = fit.hw(e, dims), fit.level(e.attr)
      local r = hw + maxhw + M.CAP_MARGIN
      local need = 0
      grid:query(n.x - r, n.z - r, n.x + r, n.z + r, function(sg)
        local o = sg.e
        if o ~= e and not o.dead and fit.level(o.attr) == lv and o.a ~= far and o.b ~= far then
          -- the grid holds the segments as they were when it was filled: a road cut back
          -- since (an earlier dead end) is measured on its current points
          local d2
          if o.pts == sg.pts then
            local a, b = o.pts[sg.i], o.pts[sg.i + 1]
            d2 = G.seg_dist2(n.x, n.z, a[1], a[2], b[1], b[2])
          else
            d2 = math.huge
            for k = 2, #o.pts do
              local a, b = o.pts[k - 1], o.pts[k]
              d2 = math_min(d2, G.seg_dist2(n.x, n.z, a[1], a[2], b[1], b[2]))
            end
          end
          local short = hw + fit.hw(o, dims) + M.CAP_MARGIN - math_sqrt(d2)
          if short > need then need = short end
        end
      end)
      if need > 0 then
        local L = len(e)
        local keep = L - need - 1
        if keep < 2 * hw + 2 then
          drop(ctx, e, "dead end too close to another road", "its turning circle would overlap another road")
          dropped = dropped + 1
        else
          -- cut the polyline at arc length `need + 1` from n
          local pts = e.pts
          local from_a = e.a == n
          local seq = {}
          if from_a then for i = 1, #pts do seq[i] = pts[i] end
          else for i = #pts, 1, -1 do seq[#seq + 1] = pts[i] end end
          local cut, acc = need + 1, 0
          local out
          for i = 2, #seq do
            local p, q = seq[i - 1], seq[i]
            local l = G.dist(p[1], p[2], q[1], q[2])
            if acc + l >= cut then
              local t = (cut - acc) / l
              out = { { p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2]) } }
              for k = i, #seq do out[#out + 1] = seq[k] end
              break
            end
            acc = acc + l
          end
          if out and #out >= 2 then
            if not from_a then
              local rev = {}
              for i = #out, 1, -1 do rev[#rev + 1] = out[i] end
              out = rev
            end
            local np = from_a and out[1] or out[#out]
            n.x, n.z = np[1], np[2]
            e.pts = out
            e.len = nil
            trimmed = trimmed + 1
            note(ctx, "dead ends cut back to keep their turning circle off another road", 1, n)
          end
        end
      end
    end
  end
  if trimmed > 0 then change(ctx, "dead ends cut back to keep their turning circle off another road", trimmed) end
  return trimmed + dropped > 0
end

------------------------------------------------------------------------ 7f. shape points

function M.shape(ctx)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  local min_angle = math_rad(opts.min_angle)
  -- whether edge e along pts (from its end at node n) leaves n less than min_angle from
  -- another road there
  local function flat_at(e, n, pts, from_a)
    if degree(n) < 3 then return false end
    local L = G.length(pts)
    local d = math_min(L * 0.5, fit.HEADING_DISTANCE)
    local x, z = G.at(pts, from_a and d or L - d)
    local a = math_atan(z - n.z, x - n.x)
    for _, en in ipairs(fit.ends(n, dims)) do
      if en.e ~= e then
        local gap = math_abs(G.wrap(en.angle - a))
        if gap < min_angle then return true end
      end
    end
    return false
  end
  local changed = false
  local reach = fit.reach_table(g, dims)
  local function reach_at(n, e, from_a)
    local r = reach[e]
    return r and r[from_a and 1 or 2] or 0
  end
  for _, e in ipairs(g:edge_list()) do
    local pts = e.pts
    local n0 = #pts
    if n0 > 2 then
      -- 1. simplify
      pts = G.simplify(pts, opts.simplify)
      -- 2. straight inside the junctions
      local L = G.length(pts)
      local ra = degree(e.a) >= 3 and math_min(reach_at(e.a, e, true), L / 2) or 0
      local rb = degree(e.b) >= 3 and math_min(reach_at(e.b, e, false), L / 2) or 0
      if (ra > 0 or rb > 0) and #pts > 2 then
        local keep = { pts[1] }
        local acc = 0
        for i = 2, #pts - 1 do
          acc = acc + G.dist(pts[i - 1][1], pts[i - 1][2], pts[i][1], pts[i][2])
          if acc > ra and acc < L - rb then keep[#keep + 1] = pts[i] end
        end
        keep[#keep + 1] = pts[#pts]
        -- not where the straight road would leave a junction flatter than min_angle to
        -- another road while the bent one does not (a re-attached road's turn-off)
        if #keep < #pts and not (e.turn_off == "a" and flat_at(e, e.a, keep, true) and not flat_at(e, e.a, pts, true))
          and not (e.turn_off == "b" and flat_at(e, e.b, keep, false) and not flat_at(e, e.b, pts, false)) then
          pts = keep
        end
      end
      -- 3. room for the bends
      local hw = fit.hw(e, dims)
      for _ = 1, #pts do
        if #pts <= 2 then break end
        local wi, short, need = fit.bend_violation(pts, hw, ra, rb)
        if not wi or short < 0.05 then break end
        local i1, i2 = wi, wi + 1
        local victim
        if i1 == 1 then victim = i2
        elseif i2 == #pts then victim = i1
        else victim = need[i1] >= need[i2] and i1 or i2 end
        local fewer = {}
        for i = 1, #pts do if i ~= victim then fewer[#fewer + 1] = pts[i] end end
        -- as above: a bend that keeps the road off another one at a junction stays (the
        -- final check straightens it, or the layout eases it, if it must go)
        if (e.turn_off == "a" and victim == 2 and flat_at(e, e.a, fewer, true) and not flat_at(e, e.a, pts, true))
          or (e.turn_off == "b" and victim == #pts - 1 and flat_at(e, e.b, fewer, false) and not flat_at(e, e.b, pts, false)) then
          break
        end
        pts = fewer
      end
      if #pts ~= n0 then
        e.pts = pts
        e.len = nil
        changed = true
        change(ctx, "shape points removed", n0 - #pts, e)
      end
    end
  end
  return changed
end

------------------------------------------------------------------------ 7g. overlaps

local function owner_text(o)
  if fit.is_edge(o) then return describe(o) end
  return "the junction at node " .. o.id
end

--- Make a road narrower before giving it up: its sidewalks go first, then lanes down to
-- one each way (one in all on a one-way road). Returns true when it became narrower
-- (counted in `report.changes` as "roads narrowed to fit: ...").
-- @tparam table ctx
-- @tparam table e edge
-- @treturn boolean
function M.narrow(ctx, e)
  local dims = ctx.dims
  local a = e.attr
  local hw0 = fit.hw(e, dims)
  local steps = {}
  if a.sidewalk ~= "none" and a.profile ~= "alley" and a.profile ~= "freeway" and a.profile ~= "walkway" then
    steps[#steps + 1] = { { sidewalk = "none" }, "sidewalks left out" }
  end
  local least = a.oneway and 1 or 2
  if a.profile ~= "alley" and a.profile ~= "walkway" then
    steps[#steps + 1] = { { lanes = least, width = Graph.NIL }, "fewer lanes" }
  end
  for _, st in ipairs(steps) do
    local attr = Graph.with(a, st[1])
    if fit.footprint(attr, dims) / 2 < hw0 - 0.25 then
      e.attr = attr
      change(ctx, "roads narrowed to fit: " .. st[2], 1, e)
      return true
    end
  end
  return false
end

--- Drop only the part of a road that overlaps another (the overlap `c` of `fit.overlaps`):
-- the road is cut a margin beyond the overlapping stretch, and what is left on either side
-- stays when it is long enough for a dead end. Returns true when it cut (the part dropped is
-- listed in `report.dropped` with the reason), false when the overlap spans the road.
-- @tparam table ctx
-- @tparam table e the edge
-- @tparam table c the overlap record
-- @treturn boolean
function M.cut_overlap(ctx, e, c)
  local g, dims = ctx.g, ctx.dims
  local pieces = c.polys and c.polys[e]
  if not pieces then return false end
  local L = len(e)
  local lo, hi = math_huge, -math_huge
  for p in pairs(pieces) do
    for _, v in ipairs(p.poly) do
      local _, s = G.project(e.pts, v[1], v[2])
      if s < lo then lo = s end
      if s > hi then hi = s end
    end
  end
  local hw = fit.hw(e, dims)
  local margin = 2 * hw + 2
  local keep = 2 * hw + 2 + ctx.opts.min_road_length -- the least a piece left must have
  lo, hi = lo - margin, hi + margin
  local keep_a = lo >= keep
  local keep_b = L - hi >= keep
  if not keep_a and not keep_b then return false end
  local against = c.p == e and c.q or c.p
  local why = string_format("overlaps %s in plan (%.1f m): the overlapping %.0f m cut away", owner_text(against),
    c.depth, math_min(L, hi) - math_max(0, lo))
  -- split off the ends kept, then drop the middle
  local mid = e
  if keep_b then
    local _, e1, e2 = g:split_at(mid, hi, 0, "o")
    if not e1 then return false end
    mid = e1
  end
  if keep_a then
    local _, e1, e2 = g:split_at(mid, lo, 0, "o")
    if not e2 then return false end
    mid = e2
  end
  drop(ctx, mid, "overlapping part of a road cut away", why)
  remove_orphans(g)
  return true
end

function M.overlaps(ctx)
  local g, dims = ctx.g, ctx.dims
  local list = fit.overlaps(g, dims)
  local changed = false
  local narrowed = {}
  for _, c in ipairs(list) do
    local p, q = c.p, c.q
    if not p.dead and not q.dead then
      local victim, against
      local pe, qe = fit.is_edge(p), fit.is_edge(q)
      if pe and qe then
        victim, against = q, p
        if major(q, p) then victim, against = p, q end
      else
        -- a junction against a road or another junction: drop the least road among
        -- the road and the junction's roads
        local cands = {}
        for _, o in ipairs({ p, q }) do
          if fit.is_edge(o) then cands[#cands + 1] = o else
            for _, e in ipairs(o.edges) do cands[#cands + 1] = e end
          end
        end
        for _, e in ipairs(cands) do
          if not victim or major(victim, e) then victim = e end
        end
        against = victim == p and q or (victim == q and p) or ((fit.is_edge(p) or victim.a == p or victim.b == p) and q or p)
      end
      if victim and not victim.dead and (narrowed[victim] or M.narrow(ctx, victim)) then
        narrowed[victim] = true -- narrower now: measured again on the next pass
        changed = true
      elseif victim and not victim.dead and against and fit.is_edge(against) and not against.dead
        and (narrowed[against] or M.narrow(ctx, against)) then
        narrowed[against] = true
        changed = true
      elseif victim and not victim.dead and fit.is_edge(victim) and M.cut_overlap(ctx, victim, c) then
        changed = true
      elseif victim and not victim.dead then
        drop(ctx, victim, "overlaps another road or junction in plan",
          string_format("overlaps %s in plan (%.1f m)", owner_text(against), c.depth))
        changed = true
      end
    end
  end
  if changed then remove_orphans(g) end
  return changed
end

------------------------------------------------------------------------ 8. bridges, fragments

local function flatten(attr)
  return Graph.with(attr, { bridge = false, tunnel = false, layer = 0,
    flattened = (attr.bridge or attr.tunnel or (attr.layer or 0) ~= 0) and true or Graph.NIL })
end

--- Bridges and tunnels as city generation builds them: one road per structure, with a
-- ramp of `dimensions.ramp` metres at grade at each end, what it crosses under its deck
-- (or over its bore). Consecutive pieces are joined; a structure too short for its ramps
-- grows over its approach roads through nodes nothing else uses; where it cannot (a
-- junction or a dead end in the way), the crossings too close to that end are made at grade
-- (the crossings pass then gives them a junction); a bridge or tunnel that crosses no road
-- becomes an ordinary road (the map is flat: nothing to clear).
function M.bridges(ctx)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  local ramp = dims.ramp or 0
  local changed = false
  -- one road per structure: consecutive off-ground pieces at the same level
  local function join_structures()
    local any = false
    for _, n in ipairs(g:node_list()) do
      if not n.dead and #n.edges == 2 then
        local e, f = n.edges[1], n.edges[2]
        if e ~= f and e.a ~= e.b and f.a ~= f.b and other(e, n) ~= other(f, n)
          and fit.off_ground(e.attr) and fit.off_ground(f.attr) and fit.level(e.attr) == fit.level(f.attr) then
          local keep = len(e) >= len(f) and e.attr or f.attr
          if g:join(n, true, keep) then
            change(ctx, "bridge and tunnel pieces joined into one road", 1, { x = n.x, z = n.z, e = e })
            any = true
          end
        end
      end
    end
    return any
  end
  if join_structures() then changed = true end
  -- 2. ramps: each round measures once and changes every structure that needs it (a
  -- structure or approach changed in a round waits for the next)
  for _ = 1, 200 do
    local did = false
    if join_structures() then did = true end
    local sep = fit.separated(g, dims)
    local touched = {}
    local crossing_flattened = false
    for _, e in ipairs(g:edge_list()) do
      if not e.dead and not touched[e] and fit.off_ground(e.attr) then
        local list = sep[e]
        if not list then
          e.attr = Graph.with(flatten(e.attr), { flattened = Graph.NIL })
          touched[e] = true
          change(ctx, "bridges and tunnels over no road made ordinary roads", 1, e)
          did = true
        else
          local L = len(e)
          local first, last = list[1], list[#list]
          local gap_a = first.s - first.clear
          local gap_b = L - last.s - last.clear
          local done = false
          for _, side in ipairs({ { n = e.a, gap = gap_a, cut = first.s + first.clear + 1 },
                                  { n = e.b, gap = gap_b, cut = last.s - last.clear - 1 } }) do
            if not e.dead and side.gap < ramp - 1e-6 and not touched[side.n] then
              local n = side.n
              local f = #n.edges == 2 and (n.edges[1] == e and n.edges[2] or n.edges[1]) or nil
              local usable = f and f ~= e and f.a ~= f.b and other(f, n) ~= other(e, n) and not touched[f]
                and not touched[other(f, n)]
              if usable and fit.off_ground(f.attr) and fit.level(f.attr) == fit.level(e.attr) then
                -- the next piece of the same structure: one road
                local joined = g:join(n, true, len(e) >= len(f) and e.attr or f.attr)
                if joined then
                  change(ctx, "bridge and tunnel pieces joined into one road", 1, { x = n.x, z = n.z, e = joined })
                  touched[joined], touched[joined.a], touched[joined.b] = true, true, true
                  done = true
                end
              elseif usable and not fit.off_ground(f.attr) then
                -- grow: just enough of the approach road (plus 1 m) joins the structure
                local extra = ramp - side.gap + 1
                local Lf = len(f)
                if extra < Lf - opts.min_road_length then
                  g:split_at(f, f.a == n and extra or Lf - extra, 0, "g")
                end
                local joined = g:join(n, true, e.attr)
                if joined then
                  change(ctx, "bridges and tunnels extended over their approach roads (room for the ramps)", 1,
                    { x = n.x, z = n.z, e = joined })
                  touched[joined], touched[joined.a], touched[joined.b] = true, true, true
                  done = true
                end
              elseif not (f and (touched[f] or touched[other(f, n)])) then
                -- no room to grow (a junction or a dead end): the crossing nearest this end
                -- is made at grade
                local at = side.cut
                local pieces = {}
                if at > opts.min_road_length and at < L - opts.min_road_length then
                  local mid, e1, e2 = g:split_at(e, at, 0, "g")
                  local piece = n == e.a and e1 or e2
                  if piece then piece.attr = flatten(piece.attr) end
                  pieces = { e1, e2, mid }
                else
                  e.attr = flatten(e.attr)
                  pieces = { e }
                end
                for _, x in ipairs(pieces) do touched[x] = true end
                touched[e.a], touched[e.b] = true, true
                crossing_flattened = true
                change(ctx, "bridge and tunnel crossings made at grade (no room for the ramps)", 1, e)
                done = true
              end
              if done then
                did = true
                touched[e.a], touched[e.b] = true, true
              end
              done = false
            end
          end
        end
      end
    end
    -- crossings made at grade become junctions now, so the structures do not grow back
    if crossing_flattened then M.crossings(ctx) end
    if not did then break end
    changed = true
  end
  return changed
end

function M.fragments(ctx)
  local g = ctx.g
  local min_len = ctx.opts.min_road_length
  local seen = {}
  for _, n in ipairs(g:node_list()) do
    if not seen[n] and #n.edges > 0 then
      local stack, edges, total = { n }, {}, 0
      local eseen = {}
      seen[n] = true
      while #stack > 0 do
        local x = table_remove(stack)
        for _, e in ipairs(x.edges) do
          if not eseen[e] then
            eseen[e] = true
            edges[#edges + 1] = e
            total = total + len(e)
            local y = other(e, x)
            if not seen[y] then seen[y] = true stack[#stack + 1] = y end
          end
        end
      end
      if total < min_len then
        table_sort(edges, function(p, q) return p.k < q.k end)
        for _, e in ipairs(edges) do
          drop(ctx, e, "isolated fragment", string_format("isolated fragment (%.1f m)", total))
        end
      end
    end
  end
  remove_orphans(g)
end

------------------------------------------------------------------------ 9. last resort

local function least(list)
  local victim
  for _, e in ipairs(list) do
    if not e.dead and (not victim or major(victim, e)) then victim = e end
  end
  return victim
end

--- Whatever the passes could not fit: drop the least road involved in each problem the
-- checker still finds (a bend without room first loses its shape points), until none is
-- left. Returns the problems of the last check (empty unless something could not be
-- resolved).
function M.enforce(ctx)
  local g = ctx.g
  local check = require "psdl.osm.check"
  local copts = { dimensions = ctx.dims, min_angle = ctx.opts.min_angle, min_road_length = ctx.opts.min_road_length }
  local problems
  local reattached = {}
  for _ = 1, 1000 do
    problems = check.graph(g, copts)
    if #problems == 0 then break end
    local did = false
    for _, p in ipairs(problems) do
      local edges, nodes = p._edges, p._nodes
      local alive = true
      for _, e in ipairs(edges) do if e.dead then alive = false end end
      for _, n in ipairs(nodes) do if n.dead then alive = false end end
      if alive then
        local victim
        if p.kind == "bend" and #edges[1].pts > 2 then
          local e = edges[1]
          change(ctx, "roads straightened (no room for their bends)", 1, e)
          e.pts = { e.pts[1], e.pts[#e.pts] }
          e.len = nil
          did = true
        elseif p.kind == "short" or p.kind == "overlap" then
          local cands = {}
          for _, e in ipairs(edges) do cands[#cands + 1] = e end
          for _, n in ipairs(nodes) do
            for _, e in ipairs(n.edges) do cands[#cands + 1] = e end
          end
          victim = least(cands)
        else
          victim = least(edges)
        end
        local n = nodes[1]
        local vkey = victim and Graph.source_text(victim.src)
        if p.kind == "angle" and victim and #edges == 2 and n and (reattached[vkey] or 0) < 2
          and rank(victim) < rank(victim == edges[1] and edges[2] or edges[1]) then
          -- two roads leaving a node too close together: the lesser first joins the other
          -- where they part (as the acute pass does), before it is given up
          local e, f = edges[1], edges[2]
          local Mj = victim == e and f or e
          reattached[vkey] = (reattached[vkey] or 0) + 1
          if e ~= f and e.a ~= e.b and f.a ~= f.b and other(e, n) == other(f, n)
            and fit.level(e.attr) == fit.level(f.attr) and len(victim) > 4 * (fit.hw(e, ctx.dims) + fit.hw(f, ctx.dims)) then
            -- both run to the same far node: the lesser gets a node half-way, so that only
            -- its first half joins the other
            local _, e1, e2 = g:split_at(victim, len(victim) / 2, 0, "h")
            if e1 and e2 then victim = (e1.a == n or e1.b == n) and e1 or e2 end
          end
          if e ~= f and e.a ~= e.b and f.a ~= f.b and other(victim, n) ~= other(Mj, n)
            and fit.level(e.attr) == fit.level(f.attr) and reattach(ctx, n, victim, Mj) then
            remove_orphans(g)
            did = true
            victim = nil
          end
        end
        local cut_end = false
        if p.kind == "angle" and victim and n and victim.a ~= victim.b and (victim.a == n or victim.b == n) then
          -- rather than the whole road, only its end at the flat junction goes: the rest
          -- stays as a dead end (when long enough to be worth it)
          local Mj = victim == edges[1] and edges[2] or edges[1]
          local clear = fit.hw(victim, ctx.dims) + fit.hw(Mj, ctx.dims)
          local L = len(victim)
          local cut = 2 * clear + ctx.opts.min_road_length
          if L > 3 * cut then
            local _, e1, e2 = g:split_at(victim, victim.a == n and cut or L - cut, 0, "c")
            if e1 and e2 then
              local piece = (e1.a == n or e1.b == n) and e1 or e2
              drop(ctx, piece, "end at a junction too flat cut away",
                string_format("its end at node %s cut away (%.0f m): %s", tostring(n.id), len(piece), p.message))
              remove_orphans(g)
              did, cut_end = true, true
            end
          end
        end
        if not victim or cut_end then -- handled above
        elseif victim and M.narrow(ctx, victim) then
          did = true
        elseif victim and p._overlap and M.cut_overlap(ctx, victim, p._overlap) then
          -- only the overlapping stretch goes (listed in report.dropped)
          did = true
        elseif victim then
          drop(ctx, victim, "could not be fitted (" .. p.kind .. ")",
            "could not be fitted: " .. p.kind .. " (" .. p.message .. ")")
          did = true
        end
      end
    end
    remove_orphans(g)
    if not did then break end
  end
  return problems
end

------------------------------------------------------------------------ run

local run_level

--- Run every pass on a graph.
-- @tparam table g graph (`psdl.osm.graph`)
-- @tparam table opts resolved options (`psdl.osm.network`)
-- @tparam table report filled in
function M.run(g, opts, report)
  report.dropped_by_reason = report.dropped_by_reason or {}
  report.change_list = report.change_list or {}
  -- elevated roads (viaducts along the roads below): a level of their own (psdl.osm.elevated)
  local E = opts.elevated ~= false and elevated.split(g, elevated.select(g, opts.dimensions)) or nil
  local problems = 0
  if E then
    local eopts = {}
    for k, v in pairs(opts) do eopts[k] = v end
    eopts.progress = false
    run_level(E, eopts, report)
    problems = report.problems or 0
  end
  run_level(g, opts, report)
  if E then
    local ectx = { g = E, opts = opts, dims = opts.dimensions, report = report, warned = {} }
    local roads, nodes = elevated.merge(g, E, opts.dimensions, function(e, key, reason) drop(ectx, e, key, reason) end)
    if roads > 0 then change({ report = report }, "elevated roads (bridge decks along the roads below)", roads) end
    if nodes > 0 then change({ report = report }, "elevated junctions and ends (on bridge decks)", nodes) end
    report.problems = (report.problems or 0) + problems
  end
end

-- One level of the network through every pass (`M.run`).
function run_level(g, opts, report)
  local ctx = { g = g, opts = opts, dims = opts.dimensions, report = report, warned = {} }
  local function stage(name) if opts.progress then opts.progress(name) end end
  stage("merge")
  M.merge_close(ctx)
  M.snap(ctx)
  stage("crossings")
  M.crossings(ctx)
  M.loops(ctx)
  stage("roundabouts")
  M.roundabouts(ctx)
  M.join(ctx)
  if opts.dual_carriageways then
    stage("dual carriageways")
    M.dual(ctx)
  end
  stage("fit")
  -- a state of the graph seen at the end of an earlier round: the passes undo each other
  -- (a re-attached road's new junction merged back, and again): stop there
  local seen_states = {}
  local function state()
    local nn, sx, sz = 0, 0, 0
    for _, n in ipairs(g:node_list()) do
      nn = nn + 1
      sx, sz = sx + math_floor(n.x * 10 + 0.5), sz + math_floor(n.z * 10 + 0.5)
    end
    local ne, np = 0, 0
    for _, e in ipairs(g:edge_list()) do ne, np = ne + 1, np + #e.pts end
    return string_format("%d:%d:%d:%d:%d", nn, ne, np, sx, sz)
  end
  local REATTACH, MERGE = "acute junctions re-attached where the roads part", "junctions too close for their roads merged"
  local last_cycle
  for round = 1, 20 do
    report.rounds = round
    local c0 = report.changes
    local r0, m0 = c0[REATTACH] or 0, c0[MERGE] or 0
    local changed = false
    if M.loops(ctx) then changed = true end
    if M.parallel(ctx) then changed = true end
    if M.acute(ctx) then changed = true end
    if M.spacing(ctx) then changed = true end
    if M.join(ctx) then changed = true end
    if M.shape(ctx) then changed = true end
    if M.caps(ctx) then changed = true end
    if M.crossings(ctx) then changed = true end
    if M.bridges(ctx) then changed = true end
    if not changed then
      if not M.overlaps(ctx) then break end
    else
      local st = state()
      -- the same few re-attachments merged back again, round after round
      local dr, dm = (c0[REATTACH] or 0) - r0, (c0[MERGE] or 0) - m0
      local cycle = dr > 0 and dm > 0 and dr <= 4 and string.format("%d:%d", dr, dm) or nil
      if cycle and cycle == last_cycle then seen_states[st] = true end
      last_cycle = cycle
      if seen_states[st] then
        change(ctx, "fit rounds stopped where passes undid each other")
        if not M.overlaps(ctx) then break end
      end
      seen_states[st] = true
    end
  end
  -- roads joined end to end here bend where their node was: room for those bends too
  if M.join(ctx) then M.shape(ctx) end
  stage("check")
  local problems = M.enforce(ctx)
  M.fragments(ctx)
  if ctx.joined then change(ctx, "roads joined end to end (same road, nothing else at the node)", ctx.joined) end
  -- what still fails the checks (nothing, unless the last resort gave up)
  for _, p in ipairs(problems) do
    local ws = report.warnings
    ws[#ws + 1] = p.kind .. ": " .. p.message
  end
  report.problems = #problems
end

return M
