--- Helpers the clean-up passes (`psdl.osm.clean`) share: recording what changed and what
-- was dropped in the report, the order of roads (rank, major), levels at a node, and the
-- removal of nodes left without roads.
-- @module psdl.osm.clean.common

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"

local ipairs, pairs = ipairs, pairs
local math_abs, math_floor = math.abs, math.floor
local len = Graph.len

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

return {
  note = note, change = change, describe = describe, drop = drop, rank = rank, major = major,
  max_rank = max_rank, levels_of = levels_of, share_level = share_level,
  remove_orphans = remove_orphans,
}
