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
-- roads and living streets left out, residential dead ends left out and shape points thinned.
-- What was simplified is listed in `result.simplified`. When even the last step does not fit,
-- `build` raises a message naming the limit and suggesting a smaller `--bbox`.
-- @module psdl.osm.city

local P = require "psdl.osm.projection"
local kept = require "psdl.osm.kept"

local ipairs, pairs, type, tostring, pcall, error = ipairs, pairs, type, tostring, pcall, error
local string_format, math_floor, os_clock = string.format, math.floor, os.clock

local M = {}

-- squared distance from c to segment p-q
local function d2seg(c, p, q)
  local dx, dz = q[1] - p[1], q[2] - p[2]
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and ((c[1] - p[1]) * dx + (c[2] - p[2]) * dz) / l2 or 0
  if t < 0 then t = 0 elseif t > 1 then t = 1 end
  local ex, ez = p[1] + t * dx - c[1], p[2] + t * dz - c[2]
  return ex * ex + ez * ez
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

--- Build the city of an imported network, repaired and simplified to fit, and measure it.
-- @tparam table net from `psdl.osm.import` / `network`
-- @tparam table report the import report (its `dropped` entries get positions in degrees)
-- @tparam[opt] table opts `style`, `seed`, `name`, `strict` (refuse the first repair),
--   `procedural` (generated building rows too), `progress` (function(stage)), `dimensions`
-- @treturn table doc
-- @treturn table city_report (`City:build`)
-- @treturn table result `{kept = {input, kept, fraction, lost}, repairs = {...}, dropped =
--   {...}, simplified = {...}, buildings = {footprints, placed, trimmed, left_out}, city}`
-- @raise "the city cannot be built: ..." (a road the repairs could not save, in strict mode
--   the first repair), or a message naming the limit when nothing fits
function M.build(net, report, opts)
  opts = opts or {}
  local psdl_city = require "psdl.city"
  local cur = net
  local simplified = {}
  local conflict_drops = {}
  local doc, rep, city
  local max_rooms = opts.max_rooms
  local coarse, redo, over_rooms = false, false, false
  local level = 0
  while true do
    if level > 0 and not redo then
      local what
      cur, what = M.LEVELS[level](cur)
      simplified[#simplified + 1] = what
      if opts.progress then opts.progress("simplifying: " .. what) end
    end
    redo = false
    if #cur.roads == 0 then error("the city cannot be built: no roads left", 0) end
    local ok, d, r
    -- a road the conflict check refuses (it runs along another road from a shared node: no
    -- junction can part them) is dropped and the city built again; at most MAX_CONFLICT_DROPS
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
      if #cur.roads == 0 then error("the city cannot be built: no roads left", 0) end
    end
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
      if not over_rooms and (not M.is_limit(msg) or opts.strict) then error(msg, 0) end
      -- steps that cannot take rooms away are skipped when rooms are the problem
      repeat level = level + 1 until level > #M.LEVELS or not over_rooms or M.LEVEL_ROOMS[level]
      if level > #M.LEVELS then
        error(string_format("the city does not fit the game's limits even simplified (%s): %s; import a smaller "
          .. "area with --bbox minlon,minlat,maxlon,maxlat", table.concat(simplified, "; "), msg:match("^[^\n]*")), 0)
      end
    end
  end
  -- positions in degrees
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
  for _, e in ipairs(conflict_drops) do dropped[#dropped + 1] = place(e) end
  for _, e in ipairs(rep.repairs or {}) do
    local t = place { stage = e.stage, reason = e.reason, detail = e.detail, source = e.source, name = e.name,
      length = e.length, x = e.x, z = e.z }
    if e.action == "dropped" then dropped[#dropped + 1] = t else repairs[#repairs + 1] = t end
  end
  local m = kept.measure(net.input or {}, kept.city_roads(city))
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
  }
  return doc, rep, result
end

--- Counts of entries by reason (`{[reason] = n}`).
function M.by_reason(list)
  local c = {}
  for _, e in ipairs(list) do c[e.reason] = (c[e.reason] or 0) + 1 end
  return c
end

return M
