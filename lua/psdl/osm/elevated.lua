--- Elevated roads: viaducts that run along the roads below them (an expressway on piers
-- over the median of a trunk road), cleaned as a level of their own and built as bridge
-- decks above the ground network.
--
-- The clean-up's bridge model (`psdl.osm.clean.bridges`) is one road with a ramp at grade at
-- each end that *crosses* what it passes over. A structure that runs *along* an at-grade
-- road cannot be expressed that way: in plan it lies on the road below, and the clean-up
-- would merge it into that road or drop it. So, before the clean-up:
--
-- 1. **select**: the connected structures of off-ground ways (`bridge=*` or a positive
--    `layer`; not tunnels) that run along at-grade roads for at least `ALONG` metres
--    (sampled every `STEP` metres: samples within both roads' half widths of a ground road
--    that is not an approach road of the structure, heading within `ALONG_ANGLE` degrees of
--    it), or that pass over a ground road at a steeper angle and are long enough to hold
--    both their ramps (`2 * ramp + SPARE` metres). Shorter structures, and those running
--    along a road for less, keep the clean-up's bridge model;
-- 2. **split**: their ways leave the ground graph for a graph of their own. Nodes shared with
--    ground roads stay in the ground graph, marked `foot` (the clean-up neither caps them as
--    dead ends nor joins roads through them: the ramp goes on up there); the elevated graph
--    gets a copy marked `contact` (where the structure comes down to the ground). Two feet
--    side by side (`pair_feet`: a flyover's up and down ramps) become one ground node;
-- 3. the caller cleans both graphs (the elevated one as an ordinary network: its roads meet
--    at elevated junctions, its dual carriageways merge);
-- 4. **merge**: the elevated roads go back into the ground graph as bridge roads; their nodes
--    are **elevated** (`bridge = true` nodes of the network, at deck height: only bridge
--    roads meet there, without a ramp) except the contacts, which become the ground nodes
--    they were copied from (where those survived the clean-up), and its dead ends that the
--    map's edge did not cut: there the road has its ramp at grade. An elevated part with
--    neither has no way up: it is dropped, with that reason.
-- @module psdl.osm.elevated

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"

local ipairs, pairs = ipairs, pairs
local math_sqrt, math_abs, math_max, math_min, math_floor, math_huge, math_cos, math_rad =
  math.sqrt, math.abs, math.max, math.min, math.floor, math.huge, math.cos, math.rad
local string_format, table_sort = string.format, table.sort

local M = {}

--- Sampling step along a structure (metres).
M.STEP = 4
--- A structure is elevated when it runs along ground roads for at least this (metres). (A
-- shorter run along a road, Ankara's 150 m Beştepe Caddesi flyover, fares better in the
-- clean-up's bridge model: its ramp foot next to the road below has no room.)
M.ALONG = 200
--- Heading difference (degrees) under which a structure runs along a ground road.
M.ALONG_ANGLE = 30

--- A structure that passes over a ground road at a steeper angle is elevated when it is at
-- least two ramps plus this long (metres): room for its ramps within itself. Shorter ones keep the
-- clean-up's bridge model (they grow over their approach roads, `psdl.osm.clean.bridges`).
M.SPARE = 10

local len, other = Graph.len, Graph.other

-- off ground and above it (tunnels and negative layers stay in the ground graph)
local function lifted(attr)
  return fit.off_ground(attr) and not attr.tunnel and (attr.layer or 0) >= 0
end

-- connected structures: lists of lifted edges joined at nodes
local function structures(g)
  local seen, out = {}, {}
  for _, e in ipairs(g:edge_list()) do
    if not seen[e] and lifted(e.attr) then
      local list, stack = {}, { e }
      seen[e] = true
      while #stack > 0 do
        local x = stack[#stack]
        stack[#stack] = nil
        list[#list + 1] = x
        for _, n in ipairs({ x.a, x.b }) do
          for _, f in ipairs(n.edges) do
            if not seen[f] and lifted(f.attr) then
              seen[f] = true
              stack[#stack + 1] = f
            end
          end
        end
      end
      out[#out + 1] = list
    end
  end
  return out
end

-- metres of a structure that run along ground roads (not its approach roads), that pass
-- over them at any angle, and its length
local function along_length(list, grid, dims)
  local mine, approach = {}, {}
  for _, e in ipairs(list) do mine[e] = true end
  for _, e in ipairs(list) do
    for _, n in ipairs({ e.a, e.b }) do
      for _, f in ipairs(n.edges) do if not mine[f] then approach[f] = true end end
    end
  end
  local cos_max = math_cos(math_rad(M.ALONG_ANGLE))
  local total, over, length = 0, 0, 0
  for _, e in ipairs(list) do
    local hw = fit.hw(e, dims)
    local L = len(e)
    local mylayer = math_max(1, e.attr.layer or 1)
    length = length + L
    local k = math_max(1, math_floor(L / M.STEP))
    for i = 0, k - 1 do
      local s = (i + 0.5) * L / k
      local x, z = G.at(e.pts, s)
      local dx, dz = G.direction(e.pts, s)
      local hit, near = false, false
      grid:query(x - 40, z - 40, x + 40, z + 40, function(it)
        local f = it.e
        if approach[f] or mine[f] then return false end
        -- roads at grade, and decks of lower structures (a layer-2 deck over a layer-1 one)
        if fit.off_ground(f.attr) and not (lifted(f.attr) and math_max(1, f.attr.layer or 1) < mylayer) then
          return false
        end
        local reach = hw + fit.hw(f, dims)
        local p, q = f.pts[it.i], f.pts[it.i + 1]
        if G.seg_dist2(x, z, p[1], p[2], q[1], q[2]) < reach * reach then
          near = true
          local ux, uz = q[1] - p[1], q[2] - p[2]
          local l = math_sqrt(ux * ux + uz * uz)
          if l > 1e-9 and math_abs((ux * dx + uz * dz) / l) >= cos_max then
            hit = true
            return true
          end
        end
        return false
      end)
      if hit then total = total + L / k end
      if near then over = over + L / k end
    end
  end
  return total, over, length
end

--- Every structure of a graph measured: `{edges, length, along, over, elevated}` (metres:
-- its length, how much of it runs along ground roads, how much passes over them at any
-- angle; `elevated` whether it becomes an elevated road), in a stable order.
-- @tparam table g graph (`psdl.osm.graph`)
-- @tparam table dims resolved dimensions (`psdl.osm.fit.resolve`)
-- @treturn table list
function M.survey(g, dims)
  local ramp = dims.ramp or 60
  local grid = G.grid(50)
  for _, e in ipairs(g:edge_list()) do
    if not fit.off_ground(e.attr) or lifted(e.attr) then
      local hw = fit.hw(e, dims)
      for i = 1, #e.pts - 1 do
        local p, q = e.pts[i], e.pts[i + 1]
        grid:insert({ e = e, i = i }, math_min(p[1], q[1]) - hw, math_min(p[2], q[2]) - hw,
          math_max(p[1], q[1]) + hw, math_max(p[2], q[2]) + hw)
      end
    end
  end
  local out = {}
  for _, list in ipairs(structures(g)) do
    local along, over, length = along_length(list, grid, dims)
    out[#out + 1] = { edges = list, length = length, along = along, over = over,
      elevated = along >= M.ALONG or (over - along > 0 and length >= 2 * ramp + M.SPARE) }
  end
  return out
end

--- The lifted edges of a graph that form elevated roads (see the module text).
-- @tparam table g graph (`psdl.osm.graph`)
-- @tparam table dims resolved dimensions (`psdl.osm.fit.resolve`)
-- @treturn table list of edge lists, one per structure, in a stable order
function M.select(g, dims)
  local out = {}
  for _, s in ipairs(M.survey(g, dims)) do
    if s.elevated then out[#out + 1] = s.edges end
  end
  return out
end

-- the road as the elevated graph cleans it: no bridge, no layer (the graph is a level of its
-- own), its OSM layer kept as `deck` (decks of different layers cross without a junction)
local function at_grade(attr)
  return Graph.with(attr, { bridge = false, layer = 0, flattened = Graph.NIL, deck = math_max(1, attr.layer or 1) })
end

--- Move the elevated structures of `g` into a graph of their own (step 2).
-- @tparam table g graph
-- @tparam table structures from `select`
-- @tparam[opt] table dims resolved dimensions: with them, ramp feet side by side are paired
--   (`pair_feet`)
-- @treturn table the elevated graph (nil when there is none); its nodes copied from ground
--   nodes carry `contact` (the ground node), the others `lifted_from` (the id they had)
function M.split(g, structures_, dims)
  if #structures_ == 0 then return nil end
  local E = Graph.new()
  local copy = {}
  local function node(n)
    local c = copy[n]
    if not c then
      c = E:node(n.x, n.z, n.id)
      c.osm, c.boundary, c.turning_circle = n.osm, n.boundary, n.turning_circle
      copy[n] = c
    end
    return c
  end
  local moved = {}
  for _, list in ipairs(structures_) do
    for _, e in ipairs(list) do moved[e] = true end
  end
  for _, list in ipairs(structures_) do
    for _, e in ipairs(list) do
      local pts = {}
      for i, p in ipairs(e.pts) do pts[i] = { p[1], p[2] } end
      E:edge(node(e.a), node(e.b), pts, at_grade(e.attr), e.src)
    end
  end
  for n, c in pairs(copy) do
    local ground = false
    for _, f in ipairs(n.edges) do if not moved[f] then ground = true break end end
    if ground then c.contact = n; n.foot = true end
  end
  for _, list in ipairs(structures_) do
    for _, e in ipairs(list) do g:remove_edge(e) end
  end
  for n in pairs(copy) do
    if #n.edges == 0 then g:remove_node(n) end
  end
  if dims then M.pair_feet(g, copy, dims) end
  return E
end

--- Two ramp feet side by side become one ground node at their middle: each the end of a
-- ground road that ends there (nothing else at it, not cut by the map's edge), closer than
-- those two roads' half widths added up (Nairobi's flyover over Waiyaki Way: its up and
-- down ramps come down 8 m apart, each onto its own one-way road). As two nodes, each
-- road's end would lie on the other road and one of them was cut back, its ramp left with
-- no way down; as one, the two roads leave one node side by side and the clean-up's acute
-- pass joins them where they part (one two-way stretch, `psdl.osm.clean.reattach`).
-- Closest pairs first; a foot is paired once.
-- @tparam table g the ground graph
-- @tparam table copy `{[ground node] = elevated copy}` (from `split`)
-- @tparam table dims resolved dimensions
-- @treturn integer pairs merged
function M.pair_feet(g, copy, dims)
  local feet = {}
  for n, c in pairs(copy) do
    if c.contact and not n.dead and #n.edges == 1 and not n.boundary then feet[#feet + 1] = n end
  end
  table_sort(feet, function(p, q) return p.k < q.k end)
  local cands = {}
  for i = 1, #feet do
    for j = i + 1, #feet do
      local p, q = feet[i], feet[j]
      local e, f = p.edges[1], q.edges[1]
      local d = math_sqrt((p.x - q.x) ^ 2 + (p.z - q.z) ^ 2)
      if e ~= f and fit.level(e.attr) == fit.level(f.attr) and d < fit.hw(e, dims) + fit.hw(f, dims) then
        cands[#cands + 1] = { p = p, q = q, d = d }
      end
    end
  end
  table_sort(cands, function(a, b)
    if a.d ~= b.d then return a.d < b.d end
    if a.p.k ~= b.p.k then return a.p.k < b.p.k end
    return a.q.k < b.q.k
  end)
  local merged = 0
  for _, c in ipairs(cands) do
    local p, q = c.p, c.q
    if not p.dead and not q.dead and #p.edges == 1 and #q.edges == 1 then
      g:merge(p, q, (p.x + q.x) / 2, (p.z + q.z) / 2)
      merged = merged + 1
    end
  end
  return merged
end

-- the live ground node a contact became (followed through merges), or nil
local function live(n)
  for _ = 1, 1000 do
    if not n then return nil end
    if not n.dead then return n end
    n = n.merged_into
  end
  return nil
end

-- a dead end of the structure that is neither a contact nor cut by the map's edge: the
-- structure comes down to the ground there (a ramp to a dead end at grade)
local function loose(n)
  return #n.edges == 1 and not n.contact and not n.boundary
end

--- Join the elevated graph back into the ground graph as bridge roads (step 4).
-- @tparam table g the cleaned ground graph
-- @tparam table E the cleaned elevated graph
-- @tparam table dims resolved dimensions (`ramp`: the ramp length city generation builds)
-- @tparam function drop `drop(edge, key, reason)` lists a road that cannot be built
-- @treturn integer elevated roads added, integer elevated nodes added
function M.merge(g, E, dims, drop)
  local ramp = dims.ramp or 60
  -- a road with a ramp needs room for it: join it over elevated nodes nothing else uses
  for _ = 1, 100 do
    local did = false
    for _, e in ipairs(E:edge_list()) do
      if not e.dead and (e.a.contact or e.b.contact) and len(e) < ramp + 15 then
        local far = e.a.contact and e.b or e.a
        if not far.contact and #far.edges == 2 and E:join(far, true, e.attr) then did = true end
      end
    end
    if not did then break end
  end
  -- components of the elevated graph and whether each can be reached from the ground
  local comp = {}
  for _, n in ipairs(E:node_list()) do
    if not comp[n] then
      local c = { nodes = {}, up = false }
      local stack = { n }
      comp[n] = c
      while #stack > 0 do
        local x = stack[#stack]
        stack[#stack] = nil
        c.nodes[#c.nodes + 1] = x
        if (x.contact and live(x.contact)) or loose(x) then c.up = true end
        for _, e in ipairs(x.edges) do
          local y = other(e, x)
          if not comp[y] then comp[y] = c stack[#stack + 1] = y end
        end
      end
    end
  end
  local map, roads, nodes = {}, 0, 0
  local function target(n)
    local t = map[n]
    if t then return t end
    local ground = n.contact and live(n.contact)
    if ground then
      t = ground
    else
      t = g:node(n.x, n.z, n.osm and n.id or nil, "e")
      t.osm, t.boundary, t.turning_circle = n.osm, n.boundary, n.turning_circle
      -- a contact whose ground roads the clean-up dropped: the ramp still comes down there
      -- (a dead end at grade)
      if not n.contact and not loose(n) then
        t.elevated = true
        nodes = nodes + 1
      end
    end
    map[n] = t
    return t
  end
  for _, e in ipairs(E:edge_list()) do
    if not comp[e.a].up then
      drop(e, "elevated road with no way up",
        string_format("elevated road with no way up (%.1f m): its ramps to the ground were dropped", len(e)))
    elseif e.a ~= e.b then
      local a, b = target(e.a), target(e.b)
      if a ~= b then
        local pts = {}
        for i, p in ipairs(e.pts) do pts[i] = { p[1], p[2] } end
        g:edge(a, b, pts, Graph.with(e.attr, { bridge = true, layer = e.attr.deck or 1, deck = Graph.NIL,
          elevated = true }), e.src)
        roads = roads + 1
      end
    end
  end
  return roads, nodes
end

return M
