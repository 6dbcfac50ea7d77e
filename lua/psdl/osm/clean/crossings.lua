--- Clean-up pass 3 (`psdl.osm.clean`): two roads at the same level that cross without a
-- shared node get one (every at-grade crossing is a node, docs/network.md).
-- @module psdl.osm.clean.crossings

local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs, pairs = ipairs, pairs
local table_sort = table.sort
local note, change = C.note, C.change

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

return M
