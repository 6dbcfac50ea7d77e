--- Clean-up fit round (`psdl.osm.clean`): loops, a road from a node back to itself, split in
-- three, or removed when its island is too small for its width.
-- @module psdl.osm.clean.loops

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_abs = math.abs
local string_format = string.format
local len = Graph.len
local change, drop, remove_orphans = C.change, C.drop, C.remove_orphans

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

return M
