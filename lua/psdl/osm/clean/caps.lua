--- Clean-up fit round (`psdl.osm.clean`): dead-end caps.
-- @module psdl.osm.clean.caps

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_sqrt, math_max, math_min = math.sqrt, math.max, math.min
local len, degree, other = Graph.len, Graph.degree, Graph.other
local note, change, drop = C.note, C.change, C.drop

-- A dead end becomes a turning circle as wide as its road, reaching half a road width past
-- its node: where that would touch another road at the same level (their widths plus a
-- margin), the dead end is cut back along its road until it clears, or dropped when too
-- little of it would be left. Ramp feet (`psdl.osm.elevated`) are left alone.
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
    -- (a ramp foot, `foot`, is no dead end: the road goes on up its structure's ramp)
    if not n.dead and degree(n) == 1 and #n.edges == 1 and not n.foot then
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

return M
