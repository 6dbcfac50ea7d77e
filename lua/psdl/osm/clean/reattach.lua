--- Re-attaching a road that leaves a node too close to another one to the other road where
-- the two part (`psdl.osm.clean`: acute junctions and the last resort). Returns the function
-- `reattach(ctx, n, m, Mj)` (true when done).
-- @module psdl.osm.clean.reattach

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local T = require "psdl.osm.tags"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_min, math_rad = math.min, math.rad
local degree, other = Graph.degree, Graph.other
local change = C.change

--- The angle (degrees) at which a re-attached road leaves the road it ran along.
M.REATTACH_ANGLE = 35

-- Re-attach edge m (leaving node n) to edge M where it parts from it.
local function reattach(ctx, n, m, Mj)
  local g, dims = ctx.g, ctx.dims
  local pm = Graph.pts_from(m, n)
  local pM = Graph.pts_from(Mj, n)
  local Lm, LM = G.length(pm), G.length(pM)
  local clear = fit.hw(m, dims) + fit.hw(Mj, dims)
  local far_M = other(Mj, n)
  local far_m = other(m, n)
  -- walk along m until it is clear of M
  local sp
  local s = 0
  while s <= Lm do
    local x, z = G.at(pm, s)
    local d = G.project(pM, x, z)
    if d >= clear then sp = s break end
    if s == Lm then break end
    s = math_min(Lm, s + 1)
  end
  local into_n = m.b == n -- m is stored running into n (matters for one-ways)
  local function new_m(start, rest)
    -- rest: polyline from the parting point to m's far end (oriented away from n)
    local pts = { { start.x, start.z } }
    for _, p in ipairs(rest) do pts[#pts + 1] = p end
    local e
    if into_n then
      e = g:edge(far_m, start, G.reversed(pts), m.attr, m.src)
    else
      e = g:edge(start, far_m, pts, m.attr, m.src)
    end
    e.turn_off = into_n and "b" or "a" -- the end that turns off M (the shape pass keeps its bend)
  end
  local function node_on_M(sM)
    if sM >= LM - 1 then return far_M end
    if sM <= 1 then return n end
    local s_stored = Mj.a == n and sM or LM - sM
    return (g:split_at(Mj, s_stored, 0, "a"))
  end
  -- a dead end that parts from M only near its end is just a spur along M
  if sp and degree(far_m) == 1 and Lm - sp < 2 * clear then sp = nil end
  -- opposite one-way carriageways of one road (the dual-carriageway pass did not pair them):
  -- the stretch of M that m runs along carries both directions
  local opposite = m.attr.oneway and Mj.attr.oneway and (m.b == n) ~= (Mj.b == n)
    and m.attr.highway == Mj.attr.highway
  local function both_ways(q)
    if not opposite then return end
    for _, e in ipairs(n.edges) do
      if not e.dead and other(e, n) == q and e.attr.oneway and e.attr.highway == Mj.attr.highway
        and (e.src == Mj.src or Graph.source_text(e.src) == Graph.source_text(Mj.src)) then
        local ka = e.attr
        local cls = T.classes[ka.highway] or T.classes.residential
        e.attr = Graph.with(ka, { oneway = false,
          profile = (ctx.opts.profiles and ctx.opts.profiles[ka.highway]) or cls.profile,
          lanes = Graph.NIL, width = Graph.NIL })
        e.src = Graph.union(e.src, m.src)
        change(ctx, "opposite one-ways running side by side merged into a two-way road", 1, m)
        return
      end
    end
  end
  -- a road that would vanish into M (it never parts from it, or only at its far end) is
  -- first made narrower: it may part from M then
  local vanish = not sp
  if sp then
    local x, z = G.at(pm, sp)
    local _, sM = G.project(pM, x, z)
    vanish = sM >= LM - 1 and far_M == far_m
  end
  if (vanish and Lm > 2 * clear or (sp and sp > 2 * clear)) and M.narrow(ctx, m) then return true end
  if sp then
    local x, z = G.at(pm, sp)
    local _, sM = G.project(pM, x, z)
    if sM <= 1 then return false end
    local rest = fit.sub(pm, sp, Lm)
    -- the new junction goes back along M so that m leaves it at REATTACH_ANGLE: at the foot
    -- of the parting point m would run off at a right angle, but the shape pass straightens
    -- it inside the junction and it would leave M as flat as before (and be re-attached again
    -- and again, a stretch lost each time)
    local dM = G.project(pM, x, z)
    local sQ = sM - dM / math.tan(math_rad(M.REATTACH_ANGLE))
    if sQ > 1 + clear then sM = sQ end
    g:remove_edge(m)
    local q = node_on_M(sM)
    both_ways(q)
    if q == far_m then
      change(ctx, "roads running along another merged into it", 1, m)
      return true
    end
    new_m(q, rest)
    change(ctx, "acute junctions re-attached where the roads part", 1, m)
    return true
  end
  -- m never parts from M: it runs along it; its far end joins M
  local _, sM = G.project(pM, far_m.x, far_m.z)
  g:remove_edge(m)
  if far_m ~= far_M and far_m ~= n then
    local q = node_on_M(sM)
    both_ways(q)
    if q ~= far_m then g:merge(q, far_m, q.x, q.z) end
  else
    both_ways(far_M)
  end
  change(ctx, "roads running along another merged into it", 1, m)
  return true
end

return reattach
