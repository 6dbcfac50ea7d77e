--- Clean-up pass 5 (`psdl.osm.clean`): two roads meeting end to end at a node nothing else
-- uses, and carrying the same road, become one (the node becomes a shape point).
-- @module psdl.osm.clean.join

local Graph = require "psdl.osm.graph"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local other = Graph.other
local note = C.note

function M.join(ctx)
  local g = ctx.g
  local changed, n_joined = false, 0
  local again = true
  while again do
    again = false
    for _, n in ipairs(g:node_list()) do
      -- (not at a ramp foot, `foot`: its structure's ramps come down there)
      if not n.dead and #n.edges == 2 and not n.roundabout and not n.foot
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

return M
