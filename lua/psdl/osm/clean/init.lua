--- Clean-up of the road graph built from OSM, so that city generation can turn every
-- road and junction into rooms that do not overlap (the model: `psdl.osm.fit`).
--
-- Passes, in order (each counts what it did in `report.changes`; roads it removes go to
-- `report.dropped` with the reason):
--
-- 1. **merge**: nodes closer than `merge_distance` (at a common level) become one.
-- 2. **snap**: a dead end within `snap_distance` of another road at its level is joined
--    to it (the road is split there): OSM "almost junctions".
-- 3. **crossings**: two roads at the same level that cross without a shared node get
--    one (every at-grade crossing is a node, docs/network.md).
-- 4. **roundabouts** (`junction=roundabout`): `"keep"` keeps the ring, with the
--    junctions on it that are too close merged; `"collapse"` replaces it by one node
--    (marked `roundabout = true`) where all its roads meet; `"auto"` (default) keeps a
--    ring whose junctions fit on it with `min_road_length` between them and whose island
--    is at least `ISLAND` metres wide; a ring too small for that at the game's widths is
--    **grown** about its centre (by up to `RING_GROWTH` metres of radius) when the roads
--    near it can make room (junctions at the far end of its approach roads merged into
--    its ring nodes or moved past it, dead ends moved out; `grow_ring` in
--    `psdl.osm.clean.roundabouts`); the others collapse.
-- 5. **join**: two roads meeting end to end at a node nothing else uses, and carrying
--    the same road, become one (the node becomes a shape point).
-- 6. **dual carriageways**: chains of one-way roads of the same class and name that run
--    opposite to each other within `dual_max_separation` over `dual_min_length` become one
--    divided road along the middle line (profile by class: freeway, avenue, boulevard;
--    `divided = true`, lanes and widths added up, `median` the estimated real median);
--    the junctions on both carriageways move onto that line and junctions closer than
--    3 m along it merge (cross streets then meet the road once).
-- 7. Then, until nothing changes (at most 20 rounds): **loops** (a road from a node back
--    to itself: split in three, or removed when its island is too small for its width),
--    **parallel roads** (two roads between the same two nodes that would overlap become one;
--    two opposite one-ways become a two-way road), **acute junctions** (two roads leaving a
--    node less than `min_angle` apart: the lesser is re-attached to the greater where they
--    part, or merged into it when it never parts), **spacing** (a road shorter than the
--    reaches of its two junctions plus `min_road_length`: the junctions merge; a dead end
--    shorter than its junction is removed; a too-short bridge or tunnel grows over its
--    approach), **join** again, **shape points** (simplified, straightened inside
--    junctions, and thinned where a bend has no room for the road's width), **crossings**
--    again (merges move roads), **bridges and tunnels** that end too close to the road they
--    cross grow over their approach roads; when a round changes nothing, **overlaps**: the
--    lesser of two roads or junctions that still overlap in plan is dropped, and the rounds
--    go on.
-- 8. **Last resort**: for each problem `psdl.osm.check` still finds, as little as can be
--    is given up, until none is left: a bend without room loses its shape points; a road
--    overlapping another loses the overlapping stretch; of two roads leaving a node too
--    flat the lesser is re-attached to the other where they part (at most twice), else
--    only its end there is cut away; else the least road involved is dropped. Then isolated
--    fragments shorter than `min_road_length` are removed.
--
-- What the last resort could not resolve (nothing, in every test) ends in
-- `report.warnings`, as do bridges that end too close to what they cross.
--
-- One file per pass under lua/psdl/osm/clean/ (`merge`, `crossings`, `roundabouts`, `join`,
-- `dual`, `loops`, `parallel`, `acute` and `reattach`, `spacing`, `caps`, `shape`,
-- `overlaps`, `bridges`, `fragments`, `enforce`; helpers in `common`); each adds its pass to
-- the table this module returns (`psdl.osm.clean.passes`), and this file runs them in order.
-- @module psdl.osm.clean

local elevated = require "psdl.osm.elevated"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs, pairs = ipairs, pairs
local math_floor = math.floor
local string_format = string.format
local change, drop = C.change, C.drop

require "psdl.osm.clean.merge"
require "psdl.osm.clean.crossings"
require "psdl.osm.clean.roundabouts"
require "psdl.osm.clean.join"
require "psdl.osm.clean.dual"
require "psdl.osm.clean.loops"
require "psdl.osm.clean.parallel"
require "psdl.osm.clean.acute"
require "psdl.osm.clean.spacing"
require "psdl.osm.clean.caps"
require "psdl.osm.clean.shape"
require "psdl.osm.clean.overlaps"
require "psdl.osm.clean.bridges"
require "psdl.osm.clean.fragments"
require "psdl.osm.clean.enforce"

local run_level

--- Run every pass on a graph.
-- @tparam table g graph (`psdl.osm.graph`)
-- @tparam table opts resolved options (`psdl.osm.network`)
-- @tparam table report filled in
function M.run(g, opts, report)
  report.dropped_by_reason = report.dropped_by_reason or {}
  report.change_list = report.change_list or {}
  -- elevated roads (viaducts along the roads below): a level of their own (psdl.osm.elevated)
  local E = opts.elevated ~= false and elevated.split(g, elevated.select(g, opts.dimensions), opts.dimensions) or nil
  local problems = 0
  if E then
    local eopts = {}
    for k, v in pairs(opts) do eopts[k] = v end
    eopts.progress = false
    run_level(E, eopts, report)
    problems = report.problems or 0
  end
  run_level(g, opts, report)
  if E then
    local ectx = { g = E, opts = opts, dims = opts.dimensions, report = report, warned = {} }
    local roads, nodes = elevated.merge(g, E, opts.dimensions, function(e, key, reason) drop(ectx, e, key, reason) end)
    if roads > 0 then change({ report = report }, "elevated roads (bridge decks along the roads below)", roads) end
    if nodes > 0 then change({ report = report }, "elevated junctions and ends (on bridge decks)", nodes) end
    report.problems = (report.problems or 0) + problems
  end
end

-- One level of the network through every pass (`M.run`).
function run_level(g, opts, report)
  local ctx = { g = g, opts = opts, dims = opts.dimensions, report = report, warned = {} }
  local function stage(name) if opts.progress then opts.progress(name) end end
  stage("merge")
  M.merge_close(ctx)
  M.snap(ctx)
  stage("crossings")
  M.crossings(ctx)
  M.loops(ctx)
  stage("roundabouts")
  M.roundabouts(ctx)
  M.join(ctx)
  if opts.dual_carriageways then
    stage("dual carriageways")
    M.dual(ctx)
  end
  stage("fit")
  -- a state of the graph seen at the end of an earlier round: the passes undo each other
  -- (a re-attached road's new junction merged back, and again): stop there
  local seen_states = {}
  local function state()
    local nn, sx, sz = 0, 0, 0
    for _, n in ipairs(g:node_list()) do
      nn = nn + 1
      sx, sz = sx + math_floor(n.x * 10 + 0.5), sz + math_floor(n.z * 10 + 0.5)
    end
    local ne, np = 0, 0
    for _, e in ipairs(g:edge_list()) do ne, np = ne + 1, np + #e.pts end
    return string_format("%d:%d:%d:%d:%d", nn, ne, np, sx, sz)
  end
  local REATTACH, MERGE = "acute junctions re-attached where the roads part", "junctions too close for their roads merged"
  local last_cycle
  for round = 1, 20 do
    report.rounds = round
    local c0 = report.changes
    local r0, m0 = c0[REATTACH] or 0, c0[MERGE] or 0
    local changed = false
    if M.loops(ctx) then changed = true end
    if M.parallel(ctx) then changed = true end
    if M.acute(ctx) then changed = true end
    if M.spacing(ctx) then changed = true end
    if M.join(ctx) then changed = true end
    if M.shape(ctx) then changed = true end
    if M.caps(ctx) then changed = true end
    if M.crossings(ctx) then changed = true end
    if M.bridges(ctx) then changed = true end
    if not changed then
      if not M.overlaps(ctx) then break end
    else
      local st = state()
      -- the same few re-attachments merged back again, round after round
      local dr, dm = (c0[REATTACH] or 0) - r0, (c0[MERGE] or 0) - m0
      local cycle = dr > 0 and dm > 0 and dr <= 4 and string.format("%d:%d", dr, dm) or nil
      if cycle and cycle == last_cycle then seen_states[st] = true end
      last_cycle = cycle
      if seen_states[st] then
        change(ctx, "fit rounds stopped where passes undid each other")
        if not M.overlaps(ctx) then break end
      end
      seen_states[st] = true
    end
  end
  -- roads joined end to end here bend where their node was: room for those bends too
  if M.join(ctx) then M.shape(ctx) end
  stage("check")
  local problems = M.enforce(ctx)
  M.fragments(ctx)
  if ctx.joined then change(ctx, "roads joined end to end (same road, nothing else at the node)", ctx.joined) end
  -- what still fails the checks (nothing, unless the last resort gave up)
  for _, p in ipairs(problems) do
    local ws = report.warnings
    ws[#ws + 1] = p.kind .. ": " .. p.message
  end
  report.problems = #problems
end

return M
