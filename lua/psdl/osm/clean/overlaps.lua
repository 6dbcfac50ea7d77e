--- Clean-up (`psdl.osm.clean`): overlaps. The lesser of two roads or junctions that still
-- overlap in plan is narrowed, cut or dropped.
-- @module psdl.osm.clean.overlaps

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs, pairs = ipairs, pairs
local math_max, math_min, math_huge = math.max, math.min, math.huge
local string_format = string.format
local len = Graph.len
local change, describe, drop, major, remove_orphans =
  C.change, C.describe, C.drop, C.major, C.remove_orphans

local function owner_text(o)
  if fit.is_edge(o) then return describe(o) end
  return "the junction at node " .. o.id
end

--- Make a road narrower before giving it up: its sidewalks go first, then lanes down to
-- one each way (one in all on a one-way road; alleys too, but not the decks of the elevated
-- level). Returns true when it became narrower
-- (counted in `report.changes` as "roads narrowed to fit: ...").
-- @tparam table ctx
-- @tparam table e edge
-- @treturn boolean
function M.narrow(ctx, e)
  local dims = ctx.dims
  local a = e.attr
  local hw0 = fit.hw(e, dims)
  local steps = {}
  if a.sidewalk ~= "none" and a.profile ~= "alley" and a.profile ~= "freeway" and a.profile ~= "walkway" then
    steps[#steps + 1] = { { sidewalk = "none" }, "sidewalks left out" }
  end
  local least = a.oneway and 1 or 2
  -- an alley (links, service roads) with more lanes than the least drops lanes too (Nairobi's
  -- 2-lane flyover ramp 8.6 m beside its twin); decks of the elevated level (`deck`) keep
  -- theirs: two decks side by side become one two-way deck there instead
  if a.profile ~= "walkway" and (a.profile ~= "alley" or ((a.lanes or least) > least and not a.deck)) then
    steps[#steps + 1] = { { lanes = least, width = Graph.NIL }, "fewer lanes" }
  end
  for _, st in ipairs(steps) do
    local attr = Graph.with(a, st[1])
    if fit.footprint(attr, dims) / 2 < hw0 - 0.25 then
      e.attr = attr
      change(ctx, "roads narrowed to fit: " .. st[2], 1, e)
      return true
    end
  end
  return false
end

--- Drop only the part of a road that overlaps another (the overlap `c` of `fit.overlaps`):
-- the road is cut a margin beyond the overlapping stretch, and what is left on either side
-- stays when it is long enough for a dead end. Returns true when it cut (the part dropped is
-- listed in `report.dropped` with the reason), false when the overlap spans the road.
-- @tparam table ctx
-- @tparam table e the edge
-- @tparam table c the overlap record
-- @treturn boolean
function M.cut_overlap(ctx, e, c)
  local g, dims = ctx.g, ctx.dims
  local pieces = c.polys and c.polys[e]
  if not pieces then return false end
  local L = len(e)
  local lo, hi = math_huge, -math_huge
  for p in pairs(pieces) do
    for _, v in ipairs(p.poly) do
      local _, s = G.project(e.pts, v[1], v[2])
      if s < lo then lo = s end
      if s > hi then hi = s end
    end
  end
  local hw = fit.hw(e, dims)
  local margin = 2 * hw + 2
  local keep = 2 * hw + 2 + ctx.opts.min_road_length -- the least a piece left must have
  lo, hi = lo - margin, hi + margin
  local keep_a = lo >= keep
  local keep_b = L - hi >= keep
  if not keep_a and not keep_b then return false end
  local against = c.p == e and c.q or c.p
  local why = string_format("overlaps %s in plan (%.1f m): the overlapping %.0f m cut away", owner_text(against),
    c.depth, math_min(L, hi) - math_max(0, lo))
  -- split off the ends kept, then drop the middle
  local mid = e
  if keep_b then
    local _, e1, e2 = g:split_at(mid, hi, 0, "o")
    if not e1 then return false end
    mid = e1
  end
  if keep_a then
    local _, e1, e2 = g:split_at(mid, lo, 0, "o")
    if not e2 then return false end
    mid = e2
  end
  drop(ctx, mid, "overlapping part of a road cut away", why)
  remove_orphans(g)
  return true
end

function M.overlaps(ctx)
  local g, dims = ctx.g, ctx.dims
  local list = fit.overlaps(g, dims)
  local changed = false
  local narrowed = {}
  for _, c in ipairs(list) do
    local p, q = c.p, c.q
    if not p.dead and not q.dead then
      local victim, against
      local pe, qe = fit.is_edge(p), fit.is_edge(q)
      if pe and qe then
        victim, against = q, p
        if major(q, p) then victim, against = p, q end
      else
        -- a junction against a road or another junction: drop the least road among
        -- the road and the junction's roads
        local cands = {}
        for _, o in ipairs({ p, q }) do
          if fit.is_edge(o) then cands[#cands + 1] = o else
            for _, e in ipairs(o.edges) do cands[#cands + 1] = e end
          end
        end
        for _, e in ipairs(cands) do
          if not victim or major(victim, e) then victim = e end
        end
        against = victim == p and q or (victim == q and p) or ((fit.is_edge(p) or victim.a == p or victim.b == p) and q or p)
      end
      if victim and not victim.dead and (narrowed[victim] or M.narrow(ctx, victim)) then
        narrowed[victim] = true -- narrower now: measured again on the next pass
        changed = true
      elseif victim and not victim.dead and against and fit.is_edge(against) and not against.dead
        and (narrowed[against] or M.narrow(ctx, against)) then
        narrowed[against] = true
        changed = true
      elseif victim and not victim.dead and fit.is_edge(victim) and M.cut_overlap(ctx, victim, c) then
        changed = true
      elseif victim and not victim.dead then
        drop(ctx, victim, "overlaps another road or junction in plan",
          string_format("overlaps %s in plan (%.1f m)", owner_text(against), c.depth))
        changed = true
      end
    end
  end
  if changed then remove_orphans(g) end
  return changed
end

return M
