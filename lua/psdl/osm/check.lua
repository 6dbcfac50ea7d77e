--- Check that a road network (docs/network.md) can be built without overlapping rooms, in
-- the model of `psdl.osm.fit`: every at-grade crossing is a node, no road runs from a
-- node to itself, every road is long enough for the junctions at its ends, a bridge or
-- tunnel has room for its ramps at grade before it reaches what it crosses, roads leave a
-- junction at least `min_angle` apart, every bend has room for the road's width, and no
-- two roads or junctions at the same level overlap in plan.
--
-- Problems: `{ kind = "invalid"|"crossing"|"loop"|"short"|"ramp"|"angle"|"bend"|"overlap",
-- message = "...", roads = { i, ... }, nodes = { id, ... } }` (road indices into
-- `net.roads`, when checking a network table).
-- @module psdl.osm.check

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"

local ipairs, pairs, type, tostring = ipairs, pairs, type, tostring
local math_rad, math_deg, math_huge = math.rad, math.deg, math.huge
local string_format, table_sort = string.format, table.sort

local M = {}

local function name(e)
  if e.index then return "road " .. e.index .. (e.attr.source and " (" .. e.attr.source .. ")" or "") end
  local s = Graph.source_text(e.src or {})
  if e.attr.name then s = s .. " (" .. e.attr.name .. ")" end
  return s
end

local function owner(o)
  if fit.is_edge(o) then return name(o) end
  return "the junction at node " .. tostring(o.id)
end

local function resolve(opts)
  opts = opts or {}
  local dims = opts.dimensions or fit.dimensions
  return dims, opts.min_angle or 25, opts.min_road_length or 3
end

--- Check a graph (`psdl.osm.graph`).
-- @tparam table g
-- @tparam[opt] table opts `dimensions`, `min_angle` (degrees, default 25),
--   `min_road_length` (metres, default 3)
-- @treturn table problems
function M.graph(g, opts)
  local dims, min_angle, min_len = resolve(opts)
  local problems = {}
  local function add(kind, msg, edges, nodes)
    local roads = {}
    for _, e in ipairs(edges or {}) do roads[#roads + 1] = e.index or e.k end
    local ids = {}
    for _, n in ipairs(nodes or {}) do ids[#ids + 1] = n.id end
    -- _edges, _nodes: the graph objects, for the clean-up's last resort
    problems[#problems + 1] = { kind = kind, message = msg, roads = roads, nodes = ids, _edges = edges or {},
      _nodes = nodes or {} }
  end
  for _, c in ipairs(fit.crossings(g, "grade")) do
    add("crossing", string_format("%s and %s cross at grade without a shared node at (%.1f, %.1f)",
      name(c.e), name(c.f), c.x, c.z), { c.e, c.f })
  end
  local reach = fit.reach_table(g, dims)
  local sep = fit.separated(g, dims)
  for _, e in ipairs(g:edge_list()) do
    if e.a == e.b then
      add("loop", string_format("%s runs from node %s back to itself", name(e), tostring(e.a.id)), { e }, { e.a })
    else
      local L = Graph.len(e)
      local need = fit.need(e, dims, min_len, reach)
      if L < need - 0.05 then
        add("short", string_format("%s is %.1f m long; its ends need %.1f m", name(e), L, need), { e }, { e.a, e.b })
      end
      if #e.pts > 2 then
        local r = reach[e] or {}
        local ra = Graph.degree(e.a) >= 3 and r[1] or 0
        local rb = Graph.degree(e.b) >= 3 and r[2] or 0
        local L2 = L / 2
        if ra > L2 then ra = L2 end
        if rb > L2 then rb = L2 end
        local wi, short = fit.bend_violation(e.pts, fit.hw(e, dims), ra, rb)
        if wi and short > 0.05 then
          add("bend", string_format("%s: the bend at shape point %d lacks %.1f m for the road's width", name(e),
            wi, short), { e })
          problems[#problems]._segment = wi -- the segment too short, for the clean-up's last resort
        end
      end
    end
  end
  -- bridges and tunnels: ramps at grade at both ends, clear of what they cross
  local ramp = dims.ramp or 0
  if ramp > 0 then
    for _, e in ipairs(g:edge_list()) do
      local list = sep[e]
      if list then
        local L = Graph.len(e)
        local first, last = list[1], list[#list]
        if first.s - first.clear < ramp - 0.05 or L - last.s - last.clear < ramp - 0.05 then
          add("ramp", string_format("%s: no room for %g m ramps between its ends and %s it crosses", name(e), ramp,
            name(first.s - first.clear < ramp - 0.05 and first.other or last.other)), { e }, { e.a, e.b })
        end
      end
    end
  end
  local lim = math_rad(min_angle) - 1e-6
  for _, n in ipairs(g:node_list()) do
    local ends = reach.ends[n]
    local k = #ends
    if k >= 2 then
      for i = 1, (k == 2 and 1 or k) do
        local j = i % k + 1
        local gap = fit.ccw_gap(ends[i].angle, ends[j].angle)
        if k == 2 and gap > math.pi then gap = 2 * math.pi - gap end
        local e, f = ends[i].e, ends[j].e
        if gap < lim then
          add("angle", string_format("%s and %s leave node %s only %.0f degrees apart", name(e), name(f),
            tostring(n.id), math_deg(gap)), { e, f }, { n })
        end
      end
    end
  end
  for _, c in ipairs(fit.overlaps(g, dims, nil, reach)) do
    local edges, nodes = {}, {}
    for _, o in ipairs({ c.p, c.q }) do
      if fit.is_edge(o) then edges[#edges + 1] = o else nodes[#nodes + 1] = o end
    end
    add("overlap", string_format("%s overlaps %s in plan by %.1f m", owner(c.p), owner(c.q), c.depth), edges, nodes)
    problems[#problems]._overlap = c -- the overlap record, for the clean-up's last resort
  end
  return problems
end

--- Check a network table.
-- @tparam table net network (docs/network.md)
-- @tparam[opt] table opts as for `graph`
-- @treturn table problems
function M.run(net, opts)
  local g = Graph.new()
  local problems = {}
  local ids = {}
  for id in pairs(net.nodes or {}) do ids[#ids + 1] = id end
  table_sort(ids, function(p, q)
    if type(p) ~= type(q) then return type(p) == "number" end
    return p < q
  end)
  local nodes = {}
  for _, id in ipairs(ids) do
    local n = net.nodes[id]
    nodes[id] = g:node(n.x, n.z, id)
  end
  for i, r in ipairs(net.roads or {}) do
    local a, b = nodes[r.from], nodes[r.to]
    if not a or not b then
      problems[#problems + 1] = { kind = "invalid", roads = { i }, nodes = {},
        message = string_format("road %d: unknown node %s", i, tostring(not a and r.from or r.to)) }
    else
      local pts = { { a.x, a.z } }
      for _, v in ipairs(r.via or {}) do pts[#pts + 1] = { v[1], v[2] } end
      pts[#pts + 1] = { b.x, b.z }
      local e = g:edge(a, b, pts, r, { r.source or ("road " .. i) })
      e.index = i
    end
  end
  for _, p in ipairs(M.graph(g, opts)) do problems[#problems + 1] = p end
  return problems
end

return M
