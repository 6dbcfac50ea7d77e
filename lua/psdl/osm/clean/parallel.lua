--- Clean-up fit round (`psdl.osm.clean`): parallel roads. Two roads between the same two
-- nodes that would overlap become one; two opposite one-ways become a two-way road.
-- @module psdl.osm.clean.parallel

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local T = require "psdl.osm.tags"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_max, math_floor = math.max, math.floor
local change, major = C.change, C.major

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

return M
