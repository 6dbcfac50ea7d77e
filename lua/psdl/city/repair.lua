--- Repairs of roads and nodes a city cannot build as given: degrade, never give up.
--
-- `psdl.city` builds its road and intersection rooms (`psdl.city.road`) with this module
-- around it. A road or node the layout cannot build as written is repaired and the layout is
-- run again, or, when no repair is left to try, the road is dropped; every step is recorded
-- (`Log.entries`) with the road's script line or network source, the reason and where it is.
-- With `strict`, the first road that needs a repair is an error instead (the layout's own
-- message, naming the script line).
--
-- Repairs, in the order they are tried for one road (each failure of the same road moves one
-- step down its ladder):
--
-- * before the layout runs (`prepare`): consecutive points of a road's path closer than
--   `MERGE` metres become one (`"coincident points merged"`); a road whose two ends are at the
--   same place is dropped (`"zero length"`);
-- * a centre line that bends tighter than the road is wide, or cannot be built: the shape
--   points are simplified with a tolerance of the road's half width (`"bend eased"`), then
--   removed (`"road straightened"`), then the road loses lanes and sidewalks down to one lane
--   each way (`"road narrowed"`), then it is dropped;
-- * a bridge or tunnel too short for its ramps: built at grade (`"bridge/tunnel made at
--   grade"`);
-- * a road of an importer's network (`auto_junctions`) shorter than `COLLAPSE` and too short
--   for the intersections at its ends, at the end of its ladder: its two nodes become one junction (`"collapsed into one junction"`),
--   the roads of one moved to the other through its old place, rather than leaving a dead
--   end beside the node it led to;
-- * a road too short for the intersections at its ends, an intersection that cannot be
--   built: the least road involved (fewest lanes, then shortest) is dropped; where more
--   roads meet than one intersection room holds (255 perimeter points), the least of them,
--   as many as it takes (`"too many roads at its node"`);
-- * roads leaving a node in the same direction (closer than
--   `psdl.city.network.SAME_DIRECTION`): the shape point next to the node goes (`"end
--   straightened"`), else the fewest roads are dropped so that the others leave it that far
--   apart (`psdl.city.drops`), every close pair of the node at once;
-- * a road that leaves a node along the body of another road (`auto_junctions`: the layout's
--   conflict check; no junction can part them) is dropped (`"runs along another road"`)
--   where it was found, without building the city again from the start.
--
-- Mistakes in a script (bad arguments, unknown profiles) are not repairs: they raise at once
-- from `psdl.city` (`City:road`, `City:node`) as before.
-- @module psdl.city.repair

local type, error, ipairs, pairs, next, tostring, pcall =
  type, error, ipairs, pairs, next, tostring, pcall
local sqrt, max, min, huge = math.sqrt, math.max, math.min, math.huge
local string_format, table_remove = string.format, table.remove
local heights = require "psdl.city.height"
local drops = require "psdl.city.drops"
local MAX_PERIMETER = require("psdl.core").limits.perimeter

local M = {}

--- Points of a road's path closer than this (metres, in plan) are one point.
M.MERGE = 0.05
--- The layout is run at most this many times per road in the city (plus 10).
M.RETRIES_PER_ROAD = 4

local repair_log = require "psdl.city.repair_log"
M.Log, M.log = repair_log.Log, repair_log.new
local road_ref = repair_log.road_ref
M.road_ref = road_ref
local plan_length, road_points = drops.plan_length, drops.road_points

-- ================================================================ single repairs

-- Merge consecutive path points closer than `tol`; false when the road has no length left.
local function merge_points(r, tol)
  local a, b = r.a, r.b
  local kept = {}
  local px, pz = a.x, a.z
  for _, v in ipairs(r.via) do
    local dx, dz = v[1] - px, v[2] - pz
    if dx * dx + dz * dz >= tol * tol then
      kept[#kept + 1] = v
      px, pz = v[1], v[2]
    end
  end
  -- the last kept point must not sit on the end node either
  while #kept > 0 do
    local v = kept[#kept]
    local dx, dz = v[1] - b.x, v[2] - b.z
    if dx * dx + dz * dz >= tol * tol then break end
    kept[#kept] = nil
  end
  local changed = #kept ~= #r.via
  r.via = kept
  local dx, dz = b.x - a.x, b.z - a.z
  local ok = #kept > 0 or dx * dx + dz * dz >= tol * tol
  return ok, changed
end

-- Douglas-Peucker simplification of the via points with tolerance tol (metres); with
-- `ends`, the via points next to the nodes stay (the directions the road leaves its nodes in).
local function simplify(r, tol, ends)
  local pts = { { r.a.x, r.a.z } }
  for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2], v = v } end
  pts[#pts + 1] = { r.b.x, r.b.z }
  local keep = { [1] = true, [#pts] = true }
  if ends and #pts > 3 then keep[2], keep[#pts - 1] = true, true end
  local stack = {}
  do -- the spans between points kept from the start
    local last = 1
    for i = 2, #pts do
      if keep[i] then stack[#stack + 1] = { last, i }; last = i end
    end
  end
  while #stack > 0 do
    local s = table_remove(stack)
    local i0, i1 = s[1], s[2]
    local p, q = pts[i0], pts[i1]
    local dx, dz = q[1] - p[1], q[2] - p[2]
    local L2 = dx * dx + dz * dz
    local worst, wi = -1, nil
    for i = i0 + 1, i1 - 1 do
      local c = pts[i]
      local t = L2 > 0 and ((c[1] - p[1]) * dx + (c[2] - p[2]) * dz) / L2 or 0
      t = max(0, min(1, t))
      local ex, ez = p[1] + t * dx - c[1], p[2] + t * dz - c[2]
      local d = ex * ex + ez * ez
      if d > worst then worst, wi = d, i end
    end
    if wi and worst > tol * tol then
      keep[wi] = true
      stack[#stack + 1] = { i0, wi }
      stack[#stack + 1] = { wi, i1 }
    end
  end
  local via = {}
  for i = 2, #pts - 1 do if keep[i] then via[#via + 1] = pts[i].v end end
  local changed = #via ~= #r.via
  r.via = via
  return changed
end

-- The tightest corners of a road's path (turn over the shorter segment beside it) lose their
-- shape point: a quarter of the via points (at least one), the tightest first.
local function ease_tightest(r)
  local n = #r.via
  if n == 0 then return false end
  local pts = { { r.a.x, r.a.z } }
  for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2] } end
  pts[#pts + 1] = { r.b.x, r.b.z }
  local score = {}
  for i = 2, #pts - 1 do
    local p, q, w = pts[i - 1], pts[i], pts[i + 1]
    local ax, az, bx, bz = q[1] - p[1], q[2] - p[2], w[1] - q[1], w[2] - q[2]
    local l1, l2 = sqrt(ax * ax + az * az), sqrt(bx * bx + bz * bz)
    local turn = math.abs(math.atan(ax * bz - az * bx, ax * bx + az * bz))
    score[#score + 1] = { i = i - 1, s = turn / max(0.01, min(l1, l2)) }
  end
  table.sort(score, function(x, y) if x.s ~= y.s then return x.s > y.s end return x.i < y.i end)
  local gone = {}
  for k = 1, max(1, math.ceil(n / 4)) do gone[score[k].i] = true end
  local via = {}
  for i, v in ipairs(r.via) do if not gone[i] then via[#via + 1] = v end end
  r.via = via
  return true
end

-- Fewer lanes and no sidewalks: true when the road became narrower.
local function narrow(city, r)
  local spec = r.spec
  local no = {}
  for k, v in pairs(r.opts) do no[k] = v end
  local least = spec.oneway and 1 or 2
  if spec.kind == "walkway" then least = 1 end
  local changed = false
  if (spec.lanes or 2) > least then no.lanes = least; changed = true end
  if no.width ~= nil then no.width = nil; changed = true end
  if spec.sidewalks then
    no.sidewalk, no.sidewalk_left, no.sidewalk_right = "none", nil, nil
    changed = true
  end
  if not changed then return false end
  local profiles = require "psdl.city.profiles"
  local ok, spec2 = pcall(profiles.resolve, city.style, city.profile_table, no, "")
  if not ok or (spec2.half_width or 0) >= (spec.half_width or 0) - 1e-6 then return false end
  r.opts, r.spec = no, spec2
  return true
end

--- Roads shorter than this (metres, in plan) that are too short for the intersections at
-- their ends collapse into one node before they would be dropped (`collapse`).
M.COLLAPSE = 15

-- The roads of a city at node n.
local function roads_at(city, n)
  local list = {}
  for _, q in ipairs(city.roads) do
    if q.a == n or q.b == n then list[#list + 1] = q end
  end
  return list
end

-- A short road collapses: its two nodes become one (the node with more roads stays, the
-- other's roads move to it, each keeping the old node's place as a shape point so that its
-- path does not move) and the road is removed. Dropping it instead would leave a dead end,
-- or a bend, next to the node it led to, whose rooms then overlap. False (nothing changed)
-- for a bridge or tunnel, a node under or over the ground or with options of its own, or
-- roads that would run from the node back to itself or twice between the same nodes.
-- Recorded in `log` ("collapsed into one junction").
local function collapse(city, r, log, msg)
  local a, b = r.a, r.b
  -- (an importer's network, `auto_junctions`; a script's nodes stay where its author put them)
  if not city.auto_junctions or a == b or r.bridge or r.tunnel or plan_length(road_points(r)) >= M.COLLAPSE then
    return false
  end
  local ra, rb = roads_at(city, a), roads_at(city, b)
  local keep, gone, moved = a, b, rb
  if #rb > #ra then keep, gone, moved = b, a, ra end
  for _, n in ipairs({ keep, gone }) do
    if n.opts and (n.opts.tunnel or n.opts.bridge or n.opts.junction or n.opts.radius) then return false end
  end
  local far = {}
  for _, q in ipairs(roads_at(city, keep)) do
    if q ~= r then far[q.a == keep and q.b or q.a] = true end
  end
  for _, q in ipairs(moved) do
    if q ~= r then
      if q.bridge or q.tunnel or q.a == q.b then return false end
      local o = q.a == gone and q.b or q.a
      if o == keep or far[o] then return false end
      far[o] = true
    end
  end
  log:road(r, "dropped", "collapsed into one junction", msg)
  for _, q in ipairs(moved) do
    if q ~= r then
      if q.a == gone then
        q.a = keep
        table.insert(q.via, 1, { gone.x, gone.z })
      else
        q.b = keep
        q.via[#q.via + 1] = { gone.x, gone.z }
      end
    end
  end
  M.remove_road(city, r)
  return true
end

--- Remove a road from a city (the other roads are renumbered).
-- @tparam table city
-- @tparam table r
function M.remove_road(city, r)
  local roads = city.roads
  for i = r.index, #roads - 1 do
    roads[i] = roads[i + 1]
    roads[i].index = i
  end
  roads[#roads] = nil
  r.removed = true
  city.built = nil
end

-- ================================================================ before the layout

--- Clean the roads of a city before its layout: coincident consecutive points merged, roads
-- of no length dropped. Recorded in `log`.
-- @tparam table city
-- @tparam table log from `M.log`
function M.prepare(city, log)
  local gone = {}
  for _, r in ipairs(city.roads) do
    local before = #r.via
    local ok, changed = merge_points(r, M.MERGE)
    if not ok then
      gone[#gone + 1] = r
    elseif changed then
      log:road(r, "repaired", "coincident points merged",
        string_format("%s: %d point%s of its path coincided with the one before and were merged",
          require("psdl.city.network").road_label(r), before - #r.via, before - #r.via == 1 and "" or "s"))
    end
  end
  for k = #gone, 1, -1 do
    local r = gone[k]
    log:road(r, "dropped", "zero length", string_format("%s: its two ends are at the same place (%.2f, %.2f)",
      require("psdl.city.network").road_label(r), r.a.x, r.a.z))
    M.remove_road(city, r)
  end
end

-- ================================================================ the layout, repaired

--- True for an error about a limit of the whole city (the vertex budget): no repair of one
-- road is the answer to it.
-- @tparam string msg
function M.is_limit(msg)
  return msg:find("vertex pool reaches", 1, true) ~= nil or msg:find("than one road record holds", 1, true) ~= nil
end

-- The road a layout message is about: the label it starts with (`network.road_label`).
local function culprit(city, msg, network)
  local best, bestlen = nil, 0
  for _, r in ipairs(city.roads) do
    local l = network.road_label(r)
    if #l > bestlen and msg:sub(1, #l) == l and (msg:sub(#l + 1, #l + 1) == ":" or msg:sub(#l + 1, #l + 1) == "") then
      best, bestlen = r, #l
    end
  end
  if best then return "road", best end
  for _, n in ipairs(city.nodes) do
    local l = network.node_label(n)
    if msg:sub(1, #l) == l and msg:sub(#l + 1, #l + 1) == ":" then return "node", n end
  end
  return nil
end

-- the least of a list of roads: fewest lanes, then shortest, then last added
local least = drops.least

-- Roads named in a message as `network.road_ref` writes them ("road 12 (...)").
local function named_roads(city, msg)
  local list, seen = {}, {}
  for d in msg:gmatch("road (%d+)") do
    local r = city.roads[tonumber(d)]
    if r and not seen[r] then seen[r] = true; list[#list + 1] = r end
  end
  return list
end

-- Apply the next repair to a road the layout failed on; returns true when something changed.
local function repair_road(city, r, msg, log, network)
  local what = msg
  r.repairs = (r.repairs or 0) + 1
  if what:find("ramps", 1, true) and (r.bridge or r.tunnel) then
    local kind = r.bridge and "bridge" or "tunnel"
    r.bridge, r.tunnel = nil, nil
    -- a node on a deck or underground that this road reaches now meets a road at grade:
    -- it comes to the ground (its other structures get a ramp or cut at this end instead)
    for _, n in ipairs({ r.a, r.b }) do
      if n.opts.bridge or n.opts.tunnel then
        n.opts.bridge, n.opts.tunnel = nil, nil
        if n.deck_height then n.y0, n.deck_height = nil, nil end
      end
    end
    log:road(r, "repaired", kind .. " made at grade", msg)
    return true
  end
  -- a road leaving a node along another road's body (the conflict check of the layout): no
  -- junction can part them, and no simpler shape of it would leave the node elsewhere
  if what:find(": it runs along ", 1, true) then
    log:road(r, "dropped", "runs along another road", msg)
    M.remove_road(city, r)
    return true
  end
  if what:find("coincide", 1, true) then
    local ok = merge_points(r, 0.5)
    if ok then
      log:road(r, "repaired", "coincident points merged", msg)
      return true
    end
  end
  local bendy = what:find("bends tighter", 1, true) or what:find("centre line cannot be built", 1, true)
    or what:find("coincide", 1, true)
  -- every other failure of a road (too short for its ends, ...) climbs the same ladder:
  -- a simpler, straighter, narrower road may fit where the original did not
  do
    local step = r.bend_step or 0
    local hw = max(1, r.spec.half_width or 5)
    if step < 1 and #r.via > 1 then
      r.bend_step = 1
      if simplify(r, hw, true) then
        log:road(r, "repaired", "bend eased", msg)
        return true
      end
    end
    -- then the tightest corners, a quarter of the shape points at a time (three times)
    if step < 4 and #r.via > 1 then
      r.bend_step = math.max(2, step + 1)
      if ease_tightest(r) then
        log:road(r, "repaired", "bend eased", msg)
        return true
      end
    end
    if step < 5 and #r.via > 0 then
      r.bend_step = 5
      r.via = {}
      log:road(r, "repaired", "road straightened", msg)
      return true
    end
    if step < 6 then
      r.bend_step = 6
      if narrow(city, r) then
        log:road(r, "repaired", "road narrowed", msg)
        return true
      end
    end
  end
  -- a short road between two intersections that need more of it: the two become one
  if what:find("too short for its ends", 1, true) and collapse(city, r, log, msg) then return true end
  local reason = "cannot be built"
  if what:find("too short for its ends", 1, true) then reason = "too short for its intersections"
  elseif what:find("room_overlap", 1, true) then reason = "rooms overlap"
  elseif bendy then reason = "bends too tight" end
  log:road(r, "dropped", reason, msg)
  M.remove_road(city, r)
  return true
end

-- Roads leaving node n in the same direction (`n.close`: every pair of neighbours closer than
-- psdl.city.network.SAME_DIRECTION, psdl.city.network.classify): first the shape point next
-- to the node goes, on the road of each pair with the shorter first segment (the direction a
-- road leaves in is that of its first segment, which a point a few metres out can turn; one
-- road straightened parts all the pairs it is in); when no road of any pair has one there,
-- the fewest roads are dropped so that the others leave at least that far apart
-- (psdl.city.drops: the more important roads stay), each warning naming the road kept that
-- leaves nearest to it. True when something changed.
local function part_same_direction(city, n, msg, log, network)
  local done, any = {}, false
  for _, c in ipairs(n.close) do
    local p, q = c[1].road, c[2].road
    if not (p.removed or q.removed or done[p] or done[q]) then
      local best, bl
      for _, r in ipairs({ p, q }) do
        if #r.via > 0 then
          local v = r.a == n and r.via[1] or r.via[#r.via]
          local l = sqrt((v[1] - n.x) ^ 2 + (v[2] - n.z) ^ 2)
          if not bl or l < bl then best, bl = r, l end
        end
      end
      if best then
        if best.a == n then table_remove(best.via, 1) else best.via[#best.via] = nil end
        log:road(best, "repaired", "end straightened", msg)
        done[best], any = true, true
      end
    elseif p.removed or q.removed then
      any = true -- (parted already: a road of the pair was dropped in this round)
    end
  end
  if next(done) then return true end
  local list = drops.at_node(n, network.SAME_DIRECTION * math.pi / 180)
  for _, d in ipairs(list) do
    local victim, kept = d.road, d.kept
    if kept then
      log:road(victim, "dropped", "leaves a node along another road", string_format("%s: %s leaves it in the same "
        .. "direction as %s (%.1f degrees apart): road %d dropped, road %d kept; join them further out or move a "
        .. "via point", network.node_label(n), road_ref(victim), road_ref(kept), d.degrees, victim.number or victim.index,
        kept.number or kept.index), nil, true)
    else
      log:road(victim, "dropped", "leaves a node along another road", msg)
    end
  end
  for _, d in ipairs(list) do M.remove_road(city, d.road) end
  return any or #list > 0
end

local function repair_node(city, n, msg, log, network, named)
  if n.close and msg:find("same direction", 1, true) then return part_same_direction(city, n, msg, log, network) end
  local cands = {}
  for _, r in ipairs(named or named_roads(city, msg)) do
    if not r.removed then cands[#cands + 1] = r end
  end
  if #cands == 0 then
    for _, e in ipairs(n.ends or {}) do
      if not e.road.removed then cands[#cands + 1] = e.road end
    end
  end
  local victim = least(cands)
  if not victim then return false end
  local reason = "cannot be built at its node"
  local victims = { victim }
  local count = msg:find("perimeter points", 1, true) and tonumber(msg:match("(%d+) perimeter points"))
  if count then
    -- more perimeter points than a room may have (each road brings about count / roads of
    -- them): as many of the least roads go as that takes, at once
    reason = "too many roads at its node"
    local left = {}
    for _, r in ipairs(cands) do if r ~= victim then left[#left + 1] = r end end
    for _ = 2, #cands - math.floor(#cands * MAX_PERIMETER / count) do
      local v = least(left)
      victims[#victims + 1] = v
      for i, r in ipairs(left) do if r == v then table_remove(left, i) break end end
    end
  elseif msg:find("room_overlap", 1, true) then reason = "rooms overlap"
  elseif msg:find("it is underground", 1, true) or msg:find("it is on a bridge", 1, true) then
    reason = "meets a tunnel or bridge node at grade" end
  for _, r in ipairs(victims) do log:road(r, "dropped", reason, msg) end
  for _, r in ipairs(victims) do M.remove_road(city, r) end
  return true
end

-- Is a builder room a warp room (a bridge deck or tunnel bore, flag 0x40): the validator lets
-- those overlap anything.
local function is_warp(rm)
  if rm.is_tunnel or rm.is_bridge then return true end
  return rm.flags ~= nil and (rm.flags & 0x40) ~= 0
end

--- Rooms of a road layout that overlap in plan by more than the validator's room_overlap rule
-- allows (0.5 m², docs/validate.md; the same C code, `psdl.core.overlaps`), found right after
-- the layout so that the roads at fault are repaired before any block is placed: the
-- validation of the finished city would find them too, but only after the whole city (blocks
-- and buildings) had been built once for nothing.
-- @tparam table city a City whose layout was just built (`road.rooms`, `node.rooms`)
-- @tparam Builder b the builder it was built into
-- @treturn table `{{a = Room, b = Room, owner_a = road or node, owner_b = road or node, x, z,
--   message}, ...}` (owners nil for a room neither made)
function M.overlaps(city, b)
  local core = require "psdl.core"
  local per, warp, list, k = {}, {}, {}, 0
  for _, rm in ipairs(b.rooms) do
    local out = rm.outline or b:room_outline(rm) -- (a room's own outline read in place, not copied)
    if out and #out >= 3 then k = k + 1; per[k], warp[k], list[k] = out, is_warp(rm), rm end
  end
  local found = core.overlaps(b.vpool, per, warp)
  if not found[1] then return {} end -- (no overlap: no owners to look up)
  local owner = {}
  for _, r in ipairs(city.roads) do for _, rm in ipairs(r.rooms or {}) do owner[rm] = r end end
  for _, n in ipairs(city.nodes) do for _, rm in ipairs(n.rooms or {}) do owner[rm] = owner[rm] or n end end
  local out = {}
  for _, o in ipairs(found) do
    local ra, rb = list[o.room], list[o.other]
    out[#out + 1] = { a = ra, b = rb, owner_a = owner[ra], owner_b = owner[rb], x = o.x, z = o.z,
                      message = o.message }
  end
  return out
end

--- After a layout that built without failures (`city.failures` collected, not in strict mode):
-- its rooms that overlap (`M.overlaps`) become failures of the roads or nodes that made them,
-- for `M.run` to repair like any other: a road room is blamed before an intersection room,
-- and of two roads the least (fewest lanes, then shortest); two intersection rooms blame the
-- first node. In strict mode nothing is checked here: the validation of the finished city
-- refuses the overlap as before; neither on a part of a script's city (`city.only` without
-- `auto_junctions`).
-- @tparam table city
-- @tparam Builder b
-- @treturn integer the number of overlaps found
function M.overlap_failures(city, b)
  local list = city.failures
  if not list or #list > 0 then return 0 end
  -- a script's roads (no auto_junctions) checked on a part of the city: rooms of unrelated
  -- roads that overlap are the script's mistake, which the layout refuses with both script
  -- lines once the whole city is built (`psdl.city.road`), not a repair
  if city.only and not city.auto_junctions then return 0 end
  local network = require "psdl.city.network"
  local function ref(o)
    if o.spec then return network.road_ref(o) end
    return "the intersection of " .. network.node_label(o)
  end
  local found = M.overlaps(city, b)
  for _, o in ipairs(found) do
    local p, q = o.owner_a, o.owner_b
    if p and q then
      local culprit, other = p, q
      if p.spec and q.spec then
        culprit = least({ p, q })
        other = culprit == p and q or p
      elseif q.spec then
        culprit, other = q, p
      end
      local label = culprit.spec and network.road_label(culprit) or network.node_label(culprit)
      local whose = culprit.spec and "its room" or "its intersection room"
      list[#list + 1] = string_format("%s: %s overlaps %s by %s: the car would be in two rooms at once "
        .. "(the room_overlap rule, docs/validate.md)", label, whose,
        other == culprit and "another room of its own" or ref(other),
        (o.message:match("overlap by ([%d.]+ m² around %([^)]*%))") or string_format("more than 0.5 m² around (%.2f, %.2f)", o.x, o.z)))
    end
  end
  return #found
end

--- Run the layout (`attempt()` builds the road rooms into a fresh builder and returns what
-- it returns) until it succeeds, repairing or dropping the roads it fails on each time.
-- After a round with failures, the repaired roads and the roads sharing their nodes are
-- built alone (`city.only`, a part of the city) until they build; then the whole city is
-- built again.
-- @tparam table city
-- @tparam table log from `M.log`
-- @tparam function attempt
-- @return what `attempt` returns
-- @raise the layout's message in strict mode, when the culprit cannot be found, or when the
--   city has no road left
function M.run(city, log, attempt)
  local network = require "psdl.city.network"
  local limit = #city.roads * M.RETRIES_PER_ROAD + 10
  local changed = nil -- roads repaired since the last whole build, when checking a part
  for _ = 1, limit do
    -- the layout lists every node and run it fails on (not in strict mode: the first
    -- failure raises, as it always did)
    city.failures = not log.strict and {} or nil
    if changed then
      local nodes, roads = {}, {}
      for _, r in ipairs(changed) do nodes[r.a], nodes[r.b] = true, true end
      for _, q in ipairs(city.roads) do
        if nodes[q.a] or nodes[q.b] then roads[q] = true end
      end
      city.only = { nodes = nodes, roads = roads }
    end
    local res = table.pack(pcall(attempt))
    local failures = city.failures or {}
    city.failures, city.only = nil, nil
    if res[1] and #failures == 0 then
      if not changed then return table.unpack(res, 2, res.n) end
      changed = nil -- the part builds: the whole city again
    else
      if not res[1] then failures = { tostring(res[2]) } end
      -- one repair per road or node in this round (the first message about it); culprits
      -- are found first: a dropped road renumbers the others, and messages name roads by number
      local seen, todo = {}, {}
      for _, msg in ipairs(failures) do
        if log.strict or #city.roads == 0 or M.is_limit(msg) or heights.is_error(msg) then error(msg, 0) end
        local kind, obj = culprit(city, msg, network)
        if not obj then error(msg, 0) end
        if not seen[obj] then
          seen[obj] = true
          todo[#todo + 1] = { kind, obj, msg, kind == "node" and named_roads(city, msg) or nil }
        end
      end
      local before = #log.entries
      for _, t in ipairs(todo) do
        local kind, obj, msg = t[1], t[2], t[3]
        local done = false
        if kind == "road" then
          done = obj.removed or repair_road(city, obj, msg, log, network)
        elseif kind == "node" then
          done = repair_node(city, obj, msg, log, network, t[4])
        end
        if not done then error(msg, 0) end
      end
      if #city.roads == 0 then
        error("every road of the city had to be dropped; the last: " .. failures[#failures], 0)
      end
      changed = changed or {}
      for k = before + 1, #log.entries do
        local r = log.by_entry[log.entries[k]]
        if r then changed[#changed + 1] = r end
      end
    end
  end
  error("the city's roads could not be repaired in " .. limit .. " attempts", 0)
end

--- Build a city (`build(city, opts)`: the whole build with its validation), and when the
-- document has validation errors in rooms of roads or intersections, repair those roads one
-- step down their ladder (or drop the least road at the intersection) and build again, at
-- most `VALIDATION_ROUNDS` times. Errors in other rooms (blocks, the apron), in strict mode,
-- or left after the last round are raised as they are. Rooms that overlap are found and
-- repaired earlier, right after the layout (`overlap_failures`), so a second build is rare;
-- the report's `builds` says how many there were.
-- @tparam table city
-- @tparam table opts the options of `City:build`
-- @tparam function build
-- @return what `build` returns
M.VALIDATION_ROUNDS = 4
function M.validated(city, opts, build)
  local network = require "psdl.city.network"
  for round = 1, M.VALIDATION_ROUNDS + 1 do
    local ok, doc, report = pcall(build, city, opts)
    if ok then
      report.builds = round
      return doc, report
    end
    local msg = tostring(doc)
    local log = city.repair_log
    -- (an intersection room that the roads beside it give more perimeter points than its
    -- outline had, refused by finish: its roads are repaired as a validation error's)
    local long = msg:match("room (%d+) %b(): %d+ perimeter points; the game keeps")
    if round > M.VALIDATION_ROUNDS or not (long or msg:find("does not validate", 1, true)) or not log or log.strict
      or opts.strict or city.strict or not city.last_builder then
      error(msg, 0)
    end
    -- builder rooms by their number in the document, and who made them
    local by_id = require("psdl.builder").trusted.document_rooms(city.last_builder, "blocks_first") -- (finish's ids)
    local owner = {}
    for _, r in ipairs(city.roads) do for _, rm in ipairs(r.rooms or {}) do owner[rm] = r end end
    for _, n in ipairs(city.nodes) do for _, rm in ipairs(n.rooms or {}) do owner[rm] = owner[rm] or n end end
    local seen, todo = {}, {}
    for line in msg:gmatch("[^\n]+") do
      local idx = line:match("^%s*error %S+ rooms%[(%d+)%]")
      if long then line, idx = line:match("(room %d+ .*)$"), long end
      if idx then
        idx = tonumber(idx)
        -- document paths count rooms from 0 or 1: the builder's ids from 1 (a room's label too)
        local rm = by_id[idx] or (not long and by_id[idx + 1]) or nil
        local o = rm and owner[rm]
        if o and not seen[o] then
          seen[o] = true
          todo[#todo + 1] = { o, line:gsub("^%s+", "") }
        end
      end
    end
    if #todo == 0 then error(msg, 0) end
    for _, t in ipairs(todo) do
      local o, line = t[1], t[2]
      if o.spec then -- a road
        if not o.removed then
          repair_road(city, o, network.road_label(o) .. ": " .. line, log, network)
        end
      else
        repair_node(city, o, network.node_label(o) .. ": " .. line, log, network, {})
      end
    end
    city.built = nil
  end
end

return M
