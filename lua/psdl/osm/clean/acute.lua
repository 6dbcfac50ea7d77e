--- Clean-up fit round (`psdl.osm.clean`): acute junctions. Of two roads leaving a node less
-- than `min_angle` apart the lesser is re-attached to the greater where they part
-- (`psdl.osm.clean.reattach`), or merged into it when it never parts. So are the two roads
-- of a ramp-foot pair (`psdl.osm.elevated.pair_feet`) that leave their node side by side.
-- @module psdl.osm.clean.acute

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"
local reattach = require "psdl.osm.clean.reattach"

local ipairs = ipairs
local math_rad, math_min = math.rad, math.min
local other = Graph.other
local major, remove_orphans = C.major, C.remove_orphans

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
      if not worst and n.foot and k == 2 and ends[1].e ~= ends[2].e then
        -- two ramp feet made one node (psdl.osm.elevated.pair_feet): their roads leave it side
        -- by side, overlapping, though their headings further on differ
        local e, f = ends[1].e, ends[2].e
        local pe, pf = Graph.pts_from(e, n), Graph.pts_from(f, n)
        local clear = fit.hw(e, dims) + fit.hw(f, dims)
        local s = math_min(2 * clear, G.length(pe), G.length(pf))
        local x, z = G.at(pe, s)
        if G.project(pf, x, z) < clear then worst, wi, wj = 0, 1, 2 end
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

return M
