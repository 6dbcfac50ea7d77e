--- Clean-up fit round (`psdl.osm.clean`): shape points simplified, straightened inside
-- junctions, and thinned where a bend has no room for the road's width.
-- @module psdl.osm.clean.shape

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_abs, math_min, math_rad, math_atan = math.abs, math.min, math.rad, math.atan
local degree = Graph.degree
local change = C.change

function M.shape(ctx)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  local min_angle = math_rad(opts.min_angle)
  -- whether edge e along pts (from its end at node n) leaves n less than min_angle from
  -- another road there
  local function flat_at(e, n, pts, from_a)
    if degree(n) < 3 then return false end
    local L = G.length(pts)
    local d = math_min(L * 0.5, fit.HEADING_DISTANCE)
    local x, z = G.at(pts, from_a and d or L - d)
    local a = math_atan(z - n.z, x - n.x)
    for _, en in ipairs(fit.ends(n, dims)) do
      if en.e ~= e then
        local gap = math_abs(G.wrap(en.angle - a))
        if gap < min_angle then return true end
      end
    end
    return false
  end
  local changed = false
  local reach = fit.reach_table(g, dims)
  local function reach_at(n, e, from_a)
    local r = reach[e]
    return r and r[from_a and 1 or 2] or 0
  end
  for _, e in ipairs(g:edge_list()) do
    local pts = e.pts
    local n0 = #pts
    if n0 > 2 then
      -- 1. simplify
      pts = G.simplify(pts, opts.simplify)
      -- 2. straight inside the junctions
      local L = G.length(pts)
      local ra = degree(e.a) >= 3 and math_min(reach_at(e.a, e, true), L / 2) or 0
      local rb = degree(e.b) >= 3 and math_min(reach_at(e.b, e, false), L / 2) or 0
      if (ra > 0 or rb > 0) and #pts > 2 then
        local keep = { pts[1] }
        local acc = 0
        for i = 2, #pts - 1 do
          acc = acc + G.dist(pts[i - 1][1], pts[i - 1][2], pts[i][1], pts[i][2])
          if acc > ra and acc < L - rb then keep[#keep + 1] = pts[i] end
        end
        keep[#keep + 1] = pts[#pts]
        -- not where the straight road would leave a junction flatter than min_angle to
        -- another road while the bent one does not (a re-attached road's turn-off)
        if #keep < #pts and not (e.turn_off == "a" and flat_at(e, e.a, keep, true) and not flat_at(e, e.a, pts, true))
          and not (e.turn_off == "b" and flat_at(e, e.b, keep, false) and not flat_at(e, e.b, pts, false)) then
          pts = keep
        end
      end
      -- 3. room for the bends
      local hw = fit.hw(e, dims)
      for _ = 1, #pts do
        if #pts <= 2 then break end
        local wi, short, need = fit.bend_violation(pts, hw, ra, rb)
        if not wi or short < 0.05 then break end
        local i1, i2 = wi, wi + 1
        local victim
        if i1 == 1 then victim = i2
        elseif i2 == #pts then victim = i1
        else victim = need[i1] >= need[i2] and i1 or i2 end
        local fewer = {}
        for i = 1, #pts do if i ~= victim then fewer[#fewer + 1] = pts[i] end end
        -- as above: a bend that keeps the road off another one at a junction stays (the
        -- final check straightens it, or the layout eases it, if it must go)
        if (e.turn_off == "a" and victim == 2 and flat_at(e, e.a, fewer, true) and not flat_at(e, e.a, pts, true))
          or (e.turn_off == "b" and victim == #pts - 1 and flat_at(e, e.b, fewer, false) and not flat_at(e, e.b, pts, false)) then
          break
        end
        pts = fewer
      end
      if #pts ~= n0 then
        e.pts = pts
        e.len = nil
        changed = true
        change(ctx, "shape points removed", n0 - #pts, e)
      end
    end
  end
  return changed
end

return M
