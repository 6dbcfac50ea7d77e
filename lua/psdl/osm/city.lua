--- A city from an imported network: `psdl.city.from_network` with the repairs of
-- `psdl.city.repair`, simplified until it fits the game's limits, and measured: the kept
-- fraction (`psdl.osm.kept`), every repair and drop of the import and the build with its
-- reason and position (metres and degrees), buildings placed, trimmed and left out.
--
--     local net, report = osm.import("town.osm")
--     local doc, city_report, result = require("psdl.osm.city").build(net, report, { seed = 1 })
--
-- **Limits.** When a build goes over a limit of the format (the vertex budget of 65,024, or
-- another "limit"/"budget" error of `psdl.builder`), the network is simplified one step at a
-- time and built again (`LEVELS`): building footprints simplified, footprints left out, service
-- roads and living streets left out (over a room limit: a few at a time, `fit_service`), residential
-- dead ends left out and shape points thinned.
-- What was simplified is listed in `result.simplified`. When even the last step does not fit,
-- `build` raises a message naming the limit and suggesting a smaller `--bbox`.
-- @module psdl.osm.city

local P = require "psdl.osm.projection"
local kept = require "psdl.osm.kept"

local ipairs, pairs, type, tostring, pcall, error = ipairs, pairs, type, tostring, pcall, error
local string_format, math_floor, os_clock = string.format, math.floor, os.clock

local M = {}

-- squared distance from c to segment p-q (psdl.osm.geometry.seg_dist2)
local seg_dist2 = require("psdl.osm.geometry").seg_dist2
local function d2seg(c, p, q)
  return (seg_dist2(c[1], c[2], p[1], p[2], q[1], q[2]))
end

-- Douglas-Peucker of a closed ring (first point kept)
local function simplify_ring(ring, tol)
  local n = #ring
  if n <= 4 then return ring end
  local pts = {}
  for i = 1, n do pts[i] = ring[i] end
  pts[n + 1] = ring[1]
  local keep = { [1] = true, [n + 1] = true }
  -- split at the point farthest from the first so both halves are open polylines
  local far, fd = 2, -1
  for i = 2, n do
    local dx, dz = pts[i][1] - pts[1][1], pts[i][2] - pts[1][2]
    local d = dx * dx + dz * dz
    if d > fd then far, fd = i, d end
  end
  keep[far] = true
  local stack = { { 1, far }, { far, n + 1 } }
  while #stack > 0 do
    local s = table.remove(stack)
    local worst, wi = -1, nil
    for i = s[1] + 1, s[2] - 1 do
      local d = d2seg(pts[i], pts[s[1]], pts[s[2]])
      if d > worst then worst, wi = d, i end
    end
    if wi and worst > tol * tol then
      keep[wi] = true
      stack[#stack + 1] = { s[1], wi }
      stack[#stack + 1] = { wi, s[2] }
    end
  end
  local out = {}
  for i = 1, n do if keep[i] then out[#out + 1] = ring[i] end end
  if #out < 3 then return ring end
  return out
end

local function copy_net(net)
  local c = {}
  for k, v in pairs(net) do c[k] = v end
  return c
end

local function filter_roads(net, keep)
  local c = copy_net(net)
  local roads, used, gone = {}, {}, 0
  for _, r in ipairs(net.roads) do
    if keep(r) then
      roads[#roads + 1] = r
      used[r.from], used[r.to] = true, true
    else
      gone = gone + 1
    end
  end
  local nodes = {}
  for id, n in pairs(net.nodes) do if used[id] then nodes[id] = n end end
  c.roads, c.nodes = roads, nodes
  return c, gone
end

local function degrees(net)
  local d = {}
  for _, r in ipairs(net.roads) do
    d[r.from] = (d[r.from] or 0) + 1
    d[r.to] = (d[r.to] or 0) + 1
  end
  return d
end

--- The simplification steps tried, in order, when a city goes over a limit: each takes a
-- network and returns a simpler one and a description of what it did.
M.LEVELS = {
  function(net) -- building detail
    local c = copy_net(net)
    local list, pts = {}, 0
    for i, b in ipairs(net.buildings or {}) do
      local nb = {}
      for k, v in pairs(b) do nb[k] = v end
      local before = #b.outline
      nb.outline = simplify_ring(b.outline, 1.5)
      nb.holes = nil
      pts = pts + before - #nb.outline
      list[i] = nb
    end
    c.buildings = list
    return c, string_format("building footprints simplified (%d outline points removed, courtyards left out)", pts)
  end,
  function(net) -- buildings left out
    local c = copy_net(net)
    local n = #(net.buildings or {})
    c.buildings = {}
    return c, string_format("building footprints left out (%d)", n)
  end,
  function(net) -- service roads
    local c, gone = filter_roads(net, function(r)
      return r.highway ~= "service" and r.highway ~= "living_street" and r.highway ~= "track" and not r.walkway
    end)
    return c, string_format("service roads, living streets and walkways left out (%d roads)", gone)
  end,
  function(net) -- residential detail
    local deg = degrees(net)
    local c, gone = filter_roads(net, function(r)
      local minor = r.highway == "residential" or r.highway == "unclassified" or r.highway == "road"
      return not (minor and (deg[r.from] == 1 or deg[r.to] == 1))
    end)
    local thinned = 0
    local roads = {}
    for i, r in ipairs(c.roads) do
      if r.via and #r.via > 2 and (r.highway == "residential" or r.highway == "unclassified") then
        local nr = {}
        for k, v in pairs(r) do nr[k] = v end
        local via = {}
        for k = 1, #r.via, 2 do via[#via + 1] = r.via[k] end
        thinned = thinned + #r.via - #via
        nr.via = via
        roads[i] = nr
      else
        roads[i] = r
      end
    end
    c.roads = roads
    return c, string_format("residential dead ends left out (%d roads) and residential shape points thinned (%d)",
      gone, thinned)
  end,
}

--- Which of `LEVELS` can take rooms away (roads left out); the others only save vertices.
M.LEVEL_ROOMS = { false, false, true, true }

--- The step of `LEVELS` that leaves service roads out; over a room limit it is taken road by
-- road (`fit_service`) before the whole step.
M.SERVICE_LEVEL = 3

--- Most builds `fit_service` may spend looking for how many service roads to leave out.
M.FIT_BUILDS = 5

--- True for the roads the service step leaves out.
local function is_service(r)
  return r.highway == "service" or r.highway == "living_street" or r.highway == "track" or r.walkway
end

local function road_length(net, r)
  local a, b = net.nodes[r.from], net.nodes[r.to]
  local px, pz, len = a.x, a.z, 0
  for _, v in ipairs(r.via or {}) do
    len = len + math.sqrt((v[1] - px) ^ 2 + (v[2] - pz) ^ 2)
    px, pz = v[1], v[2]
  end
  return len + math.sqrt((b.x - px) ^ 2 + (b.z - pz) ^ 2)
end

--- The service roads of a network in the order `fit_service` leaves them out: least length
-- per room saved first. The rooms a road saves are estimated from the network's shape, in
-- coarse rooms (`COARSE`): its own road room; at an end node of degree 3 the junction room
-- and the split of the through road (2); one block room when it joins the network at both
-- ends (it divides a face). The build measures the real saving; the estimate only orders.
-- @tparam table net
-- @treturn table `{ {road =, length = metres, rooms = estimate}, ... }` in that order
function M.service_order(net)
  local deg = degrees(net)
  local list = {}
  for i, r in ipairs(net.roads) do
    if is_service(r) then
      local rooms = 1
      for _, id in ipairs({ r.from, r.to }) do
        if deg[id] == 3 then rooms = rooms + 2 end
      end
      if (deg[r.from] or 0) >= 2 and (deg[r.to] or 0) >= 2 then rooms = rooms + 1 end
      list[#list + 1] = { road = r, length = road_length(net, r), rooms = rooms, index = i }
    end
  end
  table.sort(list, function(a, b)
    local ka, kb = a.length / a.rooms, b.length / b.rooms
    if ka ~= kb then return ka < kb end
    return a.index < b.index
  end)
  return list
end

--- The coarser rooms tried first when a city has more rooms than `opts.max_rooms`: options
-- of `psdl.city.new` (`city`) and of `City:blocks` (`blocks`), and the line for
-- `result.simplified` (`what`, formatted with the room count and the limit).
M.COARSE = {
  city = { room_length = 1e6, dead_end = "open", run_rooms = true },
  blocks = { room = { max_area = 1e9, max_points = 240, max_length = 1e6 },
             apron = { max_area = 1e9, max_points = 240, max_length = 1e6 } },
  what = "coarser rooms (%d rooms, %d at most): one room a road between its junctions, one block room "
    .. "a face where its outline allows, dead ends without turning circles",
}

--- How many roads a build may drop because they run along another road (conflicts of the
-- network that no junction resolves, `psdl.city.network`) before it gives up.
M.MAX_CONFLICT_DROPS = 200

--- True for a build error about a limit of the format (the vertex budget and the like).
-- @tparam string msg
function M.is_limit(msg)
  msg = tostring(msg)
  return msg:find("vertex pool reaches", 1, true) ~= nil or msg:find("budget", 1, true) ~= nil
    or msg:find("exceeds", 1, true) ~= nil and msg:find("largest the format can store", 1, true) ~= nil
end

local function round(v, k)
  local m = 10 ^ (k or 2)
  return math_floor(v * m + 0.5) / m
end

-- The roundabouts of a built city: its road rooms on ring roads (`roundabout` roads of the
-- network `net` it was built from, matched by their `roads[i]` label) and its junctions
-- where a ring road meets another road (intersection rooms).
local function roundabout_counts(net, city)
  local rooms, junctions, seen = 0, 0, {}
  for _, r in ipairs(city.roads) do
    local i = r.opts and r.opts.where and tonumber(r.opts.where:match("^roads%[(%d+)%]"))
    if i and net.roads[i] and net.roads[i].roundabout then
      rooms = rooms + #(r.rooms or {})
      for _, n in ipairs({ r.a, r.b }) do
        if not seen[n] and n.class == "junction" then
          seen[n] = true
          junctions = junctions + 1
        end
      end
    end
  end
  return { rooms = rooms, junctions = junctions }
end

-- The repairs and drops of an import and its build, with positions in degrees (metres
-- rounded to 0.1): the clean-up's drops (`report.dropped`), the layout's drops (`layout`:
-- roads crossing themselves, roads running along another road) and the build's repair log
-- (`entries`, `psdl.city.repair`; an entry with `action = "dropped"` is a drop).
local function outcome(net, report, layout, entries)
  local proj = net.origin and P.new(net.origin.lat, net.origin.lon)
  local scale = net.scale or 1
  local function place(e)
    if proj and e.x and e.z then
      local lat, lon = proj:inverse(e.x / scale, e.z / scale)
      e.lat, e.lon = round(lat, 7), round(lon, 7)
    end
    if e.x then e.x, e.z = round(e.x, 1), round(e.z, 1) end
    if e.length then e.length = round(e.length, 1) end
    return e
  end
  local repairs, dropped = {}, {}
  for _, d in ipairs(report.dropped or {}) do
    dropped[#dropped + 1] = place { stage = d.stage or "clean-up", reason = d.kind or d.reason, detail = d.reason,
      source = d.source, name = d.name, highway = d.highway, length = d.length, x = d.x, z = d.z }
  end
  for _, e in ipairs(layout) do
    local t = {}
    for k, v in pairs(e) do t[k] = v end
    dropped[#dropped + 1] = place(t)
  end
  for _, e in ipairs(entries) do
    local t = place { stage = e.stage, reason = e.reason, detail = e.detail, source = e.source, name = e.name,
      length = e.length, x = e.x, z = e.z }
    if e.action == "dropped" then dropped[#dropped + 1] = t else repairs[#repairs + 1] = t end
  end
  return repairs, dropped
end

-- The build of `M.build` (below); `known` (optional) receives, as they happen, the layout's
-- drops (`layout`), the simplification steps taken (`simplified`) and the last city tried
-- (`city`), which `M.try_build` reports when the build fails
local function build(net, report, opts, known)
  opts = opts or {}
  known = known or {}
  local psdl_city = require "psdl.city"
  local cur = net
  local simplified = {}
  local conflict_drops = {}
  known.layout, known.simplified = conflict_drops, simplified
  -- A road whose centre line crosses itself is refused by psdl.city (a script's mistake); the
  -- clean-up splits such ways, so this only guards against one that slips through (e.g. via
  -- points rounded onto each other): outside strict mode it is dropped with its reason
  -- instead of costing the whole city.
  if not opts.strict then
    local self_crossing = require("psdl.city.network").self_crossing
    local crossing = {}
    for _, r in ipairs(cur.roads) do
      if r.via and #r.via >= 2 then
        local a, b = cur.nodes[r.from], cur.nodes[r.to]
        local pts = { { a.x, a.z } }
        for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2] } end
        pts[#pts + 1] = { b.x, b.z }
        local x, z = self_crossing(pts)
        if x then
          crossing[r] = true
          conflict_drops[#conflict_drops + 1] = { stage = "layout", reason = "crosses itself",
            detail = string_format("its centre line crosses itself at (%.1f, %.1f)", x, z),
            source = r.source, name = r.name, highway = r.highway, x = x, z = z }
        end
      end
    end
    if next(crossing) then cur = filter_roads(cur, function(r) return not crossing[r] end) end
  end
  local doc, rep, city
  local max_rooms = opts.max_rooms
  local coarse, redo, over_rooms = false, false, false
  local rooms_over -- the rooms of the last build over max_rooms
  local level = 0
  -- one build of a network: a road the conflict check refuses (it runs along another road
  -- from a shared node: no junction can part them) is dropped and the city built again, at
  -- most MAX_CONFLICT_DROPS times; returns ok, doc or message, report, and the network built
  local function attempt(cur)
    local ok, d, r
    for _ = 0, M.MAX_CONFLICT_DROPS do
      -- the area limit was checked on the import (psdl.osm.extent, in real km)
      local copts = { style = opts.style, seed = opts.seed or 1, name = opts.name, strict = opts.strict,
                      max_extent = false }
      local bopts = { buildings = opts.procedural and {} or false }
      if coarse then
        for k, v in pairs(M.COARSE.city) do copts[k] = v end
        for k, v in pairs(M.COARSE.blocks) do bopts[k] = v end
      end
      city = psdl_city.from_network(cur, copts)
      known.city = city
      city:blocks(bopts)
      ok, d, r = pcall(city.build, city, { seed = opts.seed, strict = opts.strict, progress = opts.progress })
      local i = not ok and not opts.strict and tostring(d):match("^roads%[(%d+)%][^\n]- runs along ")
      local bad = i and cur.roads[tonumber(i)]
      if not bad then break end
      local pts = { cur.nodes[bad.from] }
      for _, v in ipairs(bad.via or {}) do pts[#pts + 1] = { x = v[1], z = v[2] } end
      pts[#pts + 1] = cur.nodes[bad.to]
      local mid = pts[(#pts + 1) // 2] or {}
      conflict_drops[#conflict_drops + 1] = { stage = "layout", reason = "runs along another road",
        detail = tostring(d):match("^[^\n]*"), source = bad.source, name = bad.name, highway = bad.highway,
        x = mid.x, z = mid.z }
      cur = filter_roads(cur, function(x) return x ~= bad end)
      if #cur.roads == 0 then
        -- say which stage dropped the last road and the build's own reason
        local drop = conflict_drops[#conflict_drops]
        error(string_format("the city cannot be built: no roads left: the last one, %s%s, was dropped by the layout "
          .. "(the build refused it: %s)", drop.source or "a road", drop.name and (" (" .. drop.name .. ")") or "",
          drop.detail), 0)
      end
    end
    return ok, d, r, cur, city
  end
  -- Over the room limit in coarse rooms: leave service roads out a few at a time, least length
  -- per room first, until the city fits; the number is found by at most FIT_BUILDS builds,
  -- each guessing from the rooms the last ones saved (a secant on the estimate of
  -- `service_order`). Returns the fitting build (ok, doc, report, network, what) or nil when
  -- even all of them out does not fit in those builds (the whole step then runs as before).
  local function fit_service(base, rooms0)
    local order = M.service_order(base)
    local n = #order
    if n == 0 then return nil end
    local est = { [0] = 0 }
    for k = 1, n do est[k] = est[k - 1] + order[k].rooms end
    local lo, hi, best = 0, nil, nil -- lo: known over the limit; hi: fewest known to fit
    local factor, builds = 1, 0
    while builds < M.FIT_BUILDS do
      -- the fewest roads whose estimated saving, scaled by what the builds measured, is enough
      local need = (rooms0 - max_rooms) / factor
      local k = n
      for j = 1, n do
        if est[j] >= need then k = j; break end
      end
      if k <= lo then k = lo + 1 end
      if hi and k >= hi then k = hi - 1 end
      if k <= lo then break end -- hi = lo + 1: hi is the answer
      builds = builds + 1
      local drop = {}
      for j = 1, k do drop[order[j].road] = true end
      local net = filter_roads(base, function(r) return not drop[r] end)
      if opts.progress then
        -- one step of a search (at most FIT_BUILDS builds): said as a trial, not as a result
        opts.progress(string_format("simplifying: searching how many service roads to leave out: trying %d of %d "
          .. "(build %d of at most %d)", k, n, builds, M.FIT_BUILDS))
      end
      local ok, d, r, built, bcity = attempt(net)
      if not ok then
        if M.is_limit(d) then lo = k else error(tostring(d), 0) end
      elseif #d.rooms <= max_rooms then
        hi, best = k, { ok, d, r, built, bcity }
      else
        lo = k
        if k == n then break end -- all of them out is not enough
      end
      local rooms = ok and #d.rooms or rooms0
      if est[k] > 0 and rooms < rooms0 then factor = (rooms0 - rooms) / est[k] end
    end
    if not best then return nil end
    local kept_len, kept_n = 0, 0
    for j = hi + 1, n do kept_len, kept_n = kept_len + order[j].length, kept_n + 1 end
    local what = string_format("service roads, living streets and walkways left out: %d of %d, least length per "
      .. "room first (%d kept, %.1f km)", hi, n, kept_n, kept_len / 1000)
    city = best[5]
    return best[1], best[2], best[3], best[4], what
  end
  local tried_service = false
  local last_msg -- the last failed build's message (said when simplifying leaves no road)
  while true do
    if level > 0 and not redo then
      local what
      cur, what = M.LEVELS[level](cur)
      simplified[#simplified + 1] = what
      if opts.progress then opts.progress("simplifying: " .. what) end
    end
    redo = false
    if #cur.roads == 0 then
      -- say which stage took the last road out and the build's own reason for it
      error(string_format("the city cannot be built: no roads left: simplifying to fit the game's limits (%s) "
        .. "took the last road out; the build before it: %s", table.concat(simplified, "; "),
        last_msg and last_msg:match("^[^\n]*") or "?"), 0)
    end
    local ok, d, r
    ok, d, r, cur = attempt(cur)
    over_rooms = false
    if ok and max_rooms and #simplified > 0 then
      -- with a room limit, each step says how many rooms it left
      simplified[#simplified] = string_format("%s: %d rooms", simplified[#simplified], #d.rooms)
    end
    if ok and max_rooms and #d.rooms > max_rooms then
      -- Over the room limit of a package (a CPVS row describes room ids below 2,048 only,
      -- CF §3.3): first the same network in coarser rooms (no road length lost: one room a road
      -- between its nodes, one block room a face where its outline allows, dead ends without a
      -- turning-circle room), then the simplification steps that take roads out.
      over_rooms = true
      if not coarse then
        coarse, redo, ok = true, true, false
        local what = string_format(M.COARSE.what, #d.rooms, max_rooms)
        simplified[#simplified + 1] = what
        if opts.progress then opts.progress("simplifying: " .. what) end
      else
        rooms_over = #d.rooms
        ok, d = false, string_format("%d rooms, more than the %d a package may hold (the room budget of its "
          .. "visibility rows, CF §3.3)", #d.rooms, max_rooms)
      end
    end
    if ok then
      doc, rep = d, r
      break
    end
    if not redo then
      local msg = tostring(d)
      last_msg = msg
      if not over_rooms and (not M.is_limit(msg) or opts.strict) then error(msg, 0) end
      -- steps that cannot take rooms away are skipped when rooms are the problem
      repeat level = level + 1 until level > #M.LEVELS or not over_rooms or M.LEVEL_ROOMS[level]
      if over_rooms and level == M.SERVICE_LEVEL and not tried_service then
        tried_service = true
        local fok, fd, fr, fnet, what = fit_service(cur, rooms_over)
        if fok then
          cur, doc, rep = fnet, fd, fr
          simplified[#simplified + 1] = string_format("%s: %d rooms", what, #fd.rooms)
          if opts.progress then opts.progress("simplifying: " .. what) end
          break
        end
      end
      if level > #M.LEVELS then
        error(string_format("the city does not fit the game's limits even simplified (%s): %s; import a smaller "
          .. "area with --bbox minlon,minlat,maxlon,maxlat", table.concat(simplified, "; "), msg:match("^[^\n]*")), 0)
      end
    end
  end
  local repairs, dropped = outcome(net, report, conflict_drops, rep.repairs or {})
  local measured = kept.city_roads(city)
  for _, d in ipairs(kept.islands(cur, city)) do measured[#measured + 1] = d end
  local m = kept.measure(net.input or {}, measured)
  local bl = rep.blocks or {}
  local nfp = #(cur.buildings or {})
  local left = {}
  for k, v in pairs(bl.footprints_why or {}) do left[k] = v end
  if #simplified > 0 and #(net.buildings or {}) > nfp then
    left["left out to fit the game's limits"] = #(net.buildings or {}) - nfp
  end
  local result = {
    kept = { input = round(m.input, 1), kept = round(m.kept, 1), fraction = round(m.fraction, 4), lost = m.lost },
    repairs = repairs, dropped = dropped, simplified = simplified,
    buildings = { footprints = #(net.buildings or {}), placed = bl.footprints or 0,
                  trimmed = bl.footprints_clipped or 0, left_out = left },
    city = city,
    roundabouts = roundabout_counts(cur, city),
  }
  return doc, rep, result
end

--- Build the city of an imported network, repaired and simplified to fit, and measure it.
-- @tparam table net from `psdl.osm.import` / `network`
-- @tparam table report the import report (its `dropped` entries get positions in degrees)
-- @tparam[opt] table opts `style`, `seed`, `name`, `strict` (refuse the first repair),
--   `procedural` (generated building rows too), `progress` (function(stage)), `dimensions`,
--   `max_rooms` (a package's room limit: coarser rooms, then simplified, until it fits)
-- @treturn table doc
-- @treturn table city_report (`City:build`)
-- @treturn table result `{kept = {input, kept, fraction, lost}, repairs = {...}, dropped =
--   {...}, simplified = {...}, buildings = {footprints, placed, trimmed, left_out}, city,
--   roundabouts = {rooms, junctions}}` (`roundabouts`: road rooms on roundabout rings and
--   the junctions on them)
-- @tparam[opt] table known filled as the build goes (for `try_build`): `layout` (the
--   layout's drops), `simplified`, `city` (the last city tried)
-- @raise "the city cannot be built: ..." (a road the repairs could not save, in strict mode
--   the first repair), or a message naming the limit when nothing fits
function M.build(net, report, opts, known)
  return build(net, report, opts, known)
end

--- `build`, with a city that cannot be built returned instead of raised, together with
-- what was repaired and dropped before the failure (a `--report` of a failed import lists
-- every dropped road with its reason as a successful one does).
-- @tparam table net
-- @tparam table report
-- @tparam[opt] table opts as `build`'s
-- @treturn table|nil doc, or nil when the city cannot be built
-- @treturn table|string city_report, or the message `build` raises
-- @treturn table result, or on failure `{repairs = {...}, dropped = {...}, simplified =
--   {...}}`: the clean-up's drops, the layout's drops (roads crossing themselves or running
--   along another road, taken out before the failure) and the repairs and drops of the last
--   build tried (entries as `result.repairs`/`result.dropped`), and the simplification steps
function M.try_build(net, report, opts)
  local known = {}
  local ok, doc, rep, result = pcall(M.build, net, report, opts, known)
  if ok then return doc, rep, result end
  local log = known.city and known.city.repair_log
  local repairs, dropped = outcome(net, report, known.layout or {}, log and log.entries or {})
  return nil, tostring(doc), { repairs = repairs, dropped = dropped, simplified = known.simplified or {} }
end

--- Counts of entries by reason (`{[reason] = n}`).
function M.by_reason(list)
  local c = {}
  for _, e in ipairs(list) do c[e.reason] = (c[e.reason] or 0) + 1 end
  return c
end

return M
