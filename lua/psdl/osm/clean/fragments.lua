--- Clean-up, last step (`psdl.osm.clean`): isolated fragments shorter than
-- `min_road_length` are removed.
-- @module psdl.osm.clean.fragments

local Graph = require "psdl.osm.graph"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local string_format, table_sort, table_remove = string.format, table.sort, table.remove
local len, other = Graph.len, Graph.other
local drop, remove_orphans = C.drop, C.remove_orphans

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

return M
