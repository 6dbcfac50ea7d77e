--- The import report of `psdl osm` (psdl.cli.osm): the summary printed after an import
-- (network, city, kept fraction, repairs and drops), the report as JSON (`--report`,
-- `import` of `--json`; stable keys, docs/osm.md) and the network as JSON (`--network-json`).
-- @module psdl.cli.osm_report

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"

local string, table, math = string, table, math
local ipairs, pairs, require, tostring = ipairs, pairs, require, tostring

local M = {}

local function km(m)
  if m >= 1000 then return string.format("%.2f km", m / 1000) end
  return string.format("%.0f m", m)
end

local PROFILES = { "street", "one_sided", "alley", "avenue", "boulevard", "freeway" }

local function sorted_counts(t)
  local list = {}
  for k, v in pairs(t) do list[#list + 1] = { k = k, v = v } end
  table.sort(list, function(a, b)
    if a.v ~= b.v then return a.v > b.v end
    return a.k < b.k
  end)
  return list
end

local function sum(t)
  local n = 0
  for _, v in pairs(t) do n = n + v end
  return n
end

--- Print the network part of the summary: what was read, the network, skips, clean-up,
-- drops and problems left.
-- @tparam file out stream
-- @tparam string file the extract's path
-- @tparam table net the network (`psdl.osm.network`)
-- @tparam table report its report
-- @tparam boolean verbose list every drop and problem
function M.print_summary(out, file, net, report, verbose)
  local function line(fmt, ...) out:write(string.format(fmt, ...), "\n") end
  local i = report.input
  line("%s: %s nodes, %s ways, %s relations read", file, common.int(i.nodes), common.int(i.ways),
    common.int(i.relations))
  local b = net.bounds
  if b then
    line("area: %.0f x %.0f m around %.5f%s %.5f%s (transverse Mercator; x east, z north, metres%s)",
      b.max_x - b.min_x, b.max_z - b.min_z, math.abs(net.origin.lat), net.origin.lat >= 0 and "N" or "S",
      math.abs(net.origin.lon), net.origin.lon >= 0 and "E" or "W",
      net.scale ~= 1 and string.format(", scale %g", net.scale) or "")
  end
  local c = report.counts
  local parts = {}
  for _, p in ipairs(PROFILES) do
    if c.by_profile[p] then parts[#parts + 1] = string.format("%d %s", c.by_profile[p], p) end
  end
  line("network: %s nodes (%s junctions, %s dead ends), %s roads, %s%s", common.int(c.nodes),
    common.int(c.junctions), common.int(c.dead_ends), common.int(c.roads), km(c.length),
    #parts > 0 and ": " .. table.concat(parts, ", ") or "")
  local special = {}
  local divided, bridges, tunnels, rings, oneway = 0, 0, 0, 0, 0
  for _, r in ipairs(net.roads) do
    if r.divided then divided = divided + 1 end
    if r.bridge then bridges = bridges + 1 end
    if r.tunnel then tunnels = tunnels + 1 end
    if r.roundabout then rings = rings + 1 end
    if r.oneway then oneway = oneway + 1 end
  end
  for _, kv in ipairs({ { oneway, "one-way" }, { divided, "divided" }, { bridges, "bridges" }, { tunnels, "tunnels" },
    { rings, "on roundabouts" } }) do
    if kv[1] > 0 then special[#special + 1] = string.format("%d %s", kv[1], kv[2]) end
  end
  if #special > 0 then line("  roads: %s", table.concat(special, ", ")) end
  line("buildings: %s", common.int(c.buildings))
  local skipped = sorted_counts(report.skipped)
  if #skipped > 0 then
    line("skipped (%s):", common.int(sum(report.skipped)))
    for _, kv in ipairs(skipped) do line("  %6s  %s", common.int(kv.v), kv.k) end
  end
  local changes = sorted_counts(report.changes)
  if #changes > 0 then
    line("clean-up:")
    for _, kv in ipairs(changes) do line("  %6s  %s", common.int(kv.v), kv.k) end
  end
  if #report.dropped > 0 then
    line("dropped (%s roads):", common.int(#report.dropped))
    if verbose then
      for _, d in ipairs(report.dropped) do
        line("          %s%s: %s", d.source, d.name and " (" .. d.name .. ")" or "", d.reason)
      end
    else
      for _, kv in ipairs(sorted_counts(report.dropped_by_reason or {})) do line("  %6s  %s", common.int(kv.v), kv.k) end
    end
  end
  if #report.warnings > 0 then
    line("problems left (%s):", common.int(#report.warnings))
    for k, w in ipairs(report.warnings) do
      if not verbose and k > 10 then
        line("          ... and %d more (--verbose lists them)", #report.warnings - 10)
        break
      end
      line("          %s", w)
    end
  else
    line("problems left: none")
  end
  local t = report.timings
  line("time: %.2f s (read %.2f s, clean-up %.2f s)", t.total + (t.read or 0), t.read or 0, t.cleanup or 0)
end

--- JSON text of a network (and, when given, its import report).
-- @tparam table net
-- @tparam[opt] table report
-- @treturn string
function M.network_json(net, report)
  local obj = docjson.object
  local nodes = obj()
  for id, n in pairs(net.nodes) do nodes[tostring(id)] = obj(n) end
  local roads = {}
  for i, r in ipairs(net.roads) do
    local t = obj()
    for k, v in pairs(r) do t[k] = v end
    t.from, t.to = tostring(r.from), tostring(r.to)
    roads[i] = t
  end
  local buildings = {}
  for i, b in ipairs(net.buildings or {}) do
    local t = obj()
    for k, v in pairs(b) do t[k] = v end
    buildings[i] = t
  end
  local doc = obj {
    format = "psdlkit-network", version = 1,
    origin = net.origin and obj(net.origin), projection = net.projection, scale = net.scale,
    attribution = net.attribution, bounds = net.bounds and obj(net.bounds),
    nodes = nodes, roads = roads, buildings = buildings,
  }
  if report then doc.report = M.report_object(report) end
  return docjson.encode(doc)
end

--- The report as a table ready for `docjson.encode` (empty maps stay objects).
function M.report_object(report)
  local obj = docjson.object
  local r = obj()
  for k, v in pairs(report) do r[k] = v end
  r.skipped = obj(report.skipped)
  r.changes = obj(report.changes)
  r.dropped_by_reason = obj(report.dropped_by_reason or {})
  r.timings = obj(report.timings)
  r.input = obj(report.input)
  if report.counts then
    r.counts = obj(report.counts)
    r.counts.by_profile = obj(report.counts.by_profile)
  end
  local dropped = {}
  for i, d in ipairs(report.dropped) do dropped[i] = obj(d) end
  r.dropped = dropped
  return r
end

--- Print the city part of the summary: what `psdl.city.summary` says, and the footprints.
-- @tparam file out stream
-- @tparam string path the city's file
-- @tparam table report `City:build`'s report
-- @tparam integer nfootprints footprints of the network
-- @tparam boolean verbose every problem and block note (else the first five)
function M.print_city(out, path, report, nfootprints, verbose)
  local psdl_city = require "psdl.city"
  local text = psdl_city.summary(report, path)
  if not verbose then -- the first problems only
    local lines, kept = {}, 0
    for l in (text .. "\n"):gmatch("([^\n]*)\n") do
      if l:match("^    warning ") or l:match("^    error ") then
        kept = kept + 1
        if kept <= 5 then lines[#lines + 1] = l end
      elseif l:match("^    %(and ") then -- replaced below
      else
        lines[#lines + 1] = l
      end
    end
    if kept > 5 then lines[#lines + 1] = string.format("    (and %d more; --verbose lists them)", kept - 5) end
    text = table.concat(lines, "\n")
  end
  out:write(text, "\n")
  local bl = report.blocks
  if bl and nfootprints > 0 then
    local placed = bl.footprints or 0
    out:write(string.format("  footprints: %s of %s placed as buildings", common.int(placed), common.int(nfootprints)))
    if (bl.footprints_clipped or 0) > 0 then
      out:write(string.format(" (%s cut back off the sidewalks)", common.int(bl.footprints_clipped)))
    end
    local left = nfootprints - placed
    if left > 0 then
      local why = {}
      for _, kv in ipairs(sorted_counts(bl.footprints_why or {})) do
        why[#why + 1] = string.format("%s %s", common.int(kv.v), kv.k)
      end
      out:write(string.format("; %s left out%s", common.int(left), #why > 0 and " (" .. table.concat(why, ", ") .. ")" or ""))
    end
    out:write("\n")
  end
  if bl and (bl.under_decks or 0) > 0 then
    out:write(string.format("  %s buildings left out under bridge decks (no room for a floor)\n", common.int(bl.under_decks)))
  end
  if bl and bl.warnings and #bl.warnings > 0 then
    out:write(string.format("  blocks: %d note%s\n", #bl.warnings, #bl.warnings == 1 and "" or "s"))
    for k, w in ipairs(bl.warnings) do
      if not verbose and k > 5 then
        out:write(string.format("    ... and %d more (--verbose lists them)\n", #bl.warnings - 5))
        break
      end
      out:write("    ", w, "\n")
    end
  end
end

local function pct(f) return string.format("%.1f %%", 100 * f) end

--- The import report (`--report FILE.json`, and `import` in `--json`): stable keys,
-- documented in docs/osm.md.
-- @tparam table args
-- @tparam table net
-- @tparam table report the network report
-- @tparam[opt] table result of `psdl.osm.city.build`
-- @tparam[opt] table city_report
-- @tparam[opt] table failure `{stage =, reason =, message =}` when the city could not be built
--   (the report then holds what was known: the import's clean-up, drops and kept fraction)
-- @tparam[opt] table known with `failure`: what the build repaired, dropped and simplified
--   before it failed (`psdl.osm.city.try_build`'s third result); without it only the
--   clean-up's drops are listed
-- @treturn table ready for `docjson.encode`
function M.import_report(args, net, report, result, city_report, failure, known)
  local obj = docjson.object
  local function entry(e)
    return obj { stage = e.stage, reason = e.reason, detail = e.detail, source = e.source, name = e.name,
                 highway = e.highway, length_m = e.length, x = e.x, z = e.z, lat = e.lat, lon = e.lon }
  end
  local P = require "psdl.osm.projection"
  local proj = net.origin and P.new(net.origin.lat, net.origin.lon)
  local function latlon(x, z) -- degrees of a position in metres, rounded to 1e-7
    if not (proj and x and z) then return nil, nil end
    local lat, lon = proj:inverse(x / (net.scale or 1), z / (net.scale or 1))
    return math.floor(lat * 1e7 + 0.5) / 1e7, math.floor(lon * 1e7 + 0.5) / 1e7
  end
  local repairs, dropped, changes = {}, {}, {}
  for i, c in ipairs(report.change_list or {}) do
    local lat, lon = latlon(c.x, c.z)
    lat, lon = lat or c.lat, lon or c.lon
    changes[i] = obj { stage = c.stage, reason = c.reason, count = c.count, source = c.source, name = c.name,
                       highway = c.highway, x = c.x, z = c.z, lat = lat, lon = lon }
  end
  local kept
  if result then
    for i, e in ipairs(result.repairs) do repairs[i] = entry(e) end
    for i, e in ipairs(result.dropped) do dropped[i] = entry(e) end
    kept = result.kept
  else
    if known then
      for i, e in ipairs(known.repairs) do repairs[i] = entry(e) end
      for i, e in ipairs(known.dropped) do dropped[i] = entry(e) end
    else
      for i, d in ipairs(report.dropped) do
        local lat, lon = latlon(d.x, d.z)
        dropped[i] = entry { stage = d.stage or "clean-up", reason = d.kind or d.reason, detail = d.reason,
          source = d.source, name = d.name, highway = d.highway, length = d.length, x = d.x, z = d.z,
          lat = lat, lon = lon }
      end
    end
    -- (the network's length: what the build would have kept is not known)
    local km = require "psdl.osm.kept"
    local m = km.measure(net.input or {}, km.network_roads(net))
    kept = { input = math.floor(m.input * 10 + 0.5) / 10, kept = math.floor(m.kept * 10 + 0.5) / 10,
             fraction = math.floor(m.fraction * 1e4 + 0.5) / 1e4, lost = m.lost }
  end
  local lost = {}
  for i, l in ipairs(kept.lost) do
    lost[i] = obj { source = l.source, name = l.name, highway = l.highway, length_m = l.length }
  end
  local by_reason = obj()
  for _, e in ipairs(repairs) do local k = "repaired: " .. e.reason; by_reason[k] = (by_reason[k] or 0) + 1 end
  for _, e in ipairs(dropped) do local k = "dropped: " .. e.reason; by_reason[k] = (by_reason[k] or 0) + 1 end
  local structures = { freeways = 0, slip_roads = 0, bridges = 0, tunnels = 0, roundabout_roads = 0, divided = 0,
                       oneway = 0, dead_ends = report.counts and report.counts.dead_ends or 0,
                       turning_circles = 0, open_ends = 0 }
  for _, n in pairs(net.nodes) do
    if n.turning_circle then structures.turning_circles = structures.turning_circles + 1 end
    if n.dead_end == "open" then structures.open_ends = structures.open_ends + 1 end
  end
  for _, r in ipairs(net.roads) do
    if r.profile == "freeway" then structures.freeways = structures.freeways + 1 end
    if r.link then structures.slip_roads = structures.slip_roads + 1 end
    if r.bridge then structures.bridges = structures.bridges + 1 end
    if r.tunnel then structures.tunnels = structures.tunnels + 1 end
    if r.roundabout then structures.roundabout_roads = structures.roundabout_roads + 1 end
    if r.divided then structures.divided = structures.divided + 1 end
    if r.oneway then structures.oneway = structures.oneway + 1 end
  end
  local doc = obj {
    format = "psdlkit-osm-import", version = 1, file = args.file, output = args.output,
    kept = obj { input_m = kept.input, kept_m = kept.kept, fraction = kept.fraction, lost = lost },
    repairs = repairs, dropped = dropped, by_reason = by_reason,
    skipped = obj(report.skipped), clean_up = obj(report.changes), changes = changes, structures = obj(structures),
    simplified = result and result.simplified or known and known.simplified or {},
  }
  if failure then
    doc.failure = obj { stage = failure.stage, reason = failure.reason, message = failure.message }
  end
  if result then
    doc.buildings = obj { footprints = result.buildings.footprints, placed = result.buildings.placed,
      trimmed = result.buildings.trimmed, left_out = obj(result.buildings.left_out) }
  else
    doc.buildings = obj { footprints = #(net.buildings or {}) }
  end
  if city_report then
    doc.city = obj { rooms = city_report.rooms, vertices = city_report.vertices, road_records = city_report.roads,
      errors = city_report.counts.errors, warnings = city_report.counts.warnings,
      bridge_rooms = city_report.kinds and city_report.kinds.bridge or 0,
      tunnel_rooms = city_report.kinds and city_report.kinds.tunnel or 0, builds = city_report.builds or 1,
      roundabout_rooms = result and result.roundabouts.rooms or 0,
      roundabout_junctions = result and result.roundabouts.junctions or 0 }
  end
  return doc
end

--- Print the repairs, drops and kept fraction of a run.
-- @tparam file out stream
-- @tparam table rep the import report (`import_report`)
-- @tparam boolean verbose every repair and drop with its position
function M.print_outcome(out, rep, verbose)
  local function line(fmt, ...) out:write(string.format(fmt, ...), "\n") end
  local k = rep.kept
  line("kept: %s of the drivable length (%s of %s appear as road)", pct(k.fraction), km(k.kept_m), km(k.input_m))
  local groups = { { "repaired", rep.repairs }, { "dropped", rep.dropped } }
  for _, g in ipairs(groups) do
    local list = g[2]
    if #list > 0 then
      local counts, len = {}, {}
      for _, e in ipairs(list) do
        local key = (e.stage or "?") .. ": " .. e.reason
        counts[key] = (counts[key] or 0) + 1
        len[key] = (len[key] or 0) + (e.length_m or 0)
      end
      line("%s (%s):", g[1], common.int(#list))
      for _, kv in ipairs(sorted_counts(counts)) do
        line("  %6s  %s%s", common.int(kv.v), kv.k, g[1] == "dropped" and string.format(" (%s)", km(len[kv.k])) or "")
      end
      if verbose then
        for _, e in ipairs(list) do
          line("          %s%s at %.1f, %.1f (%s): %s", e.source or "?", e.name and " (" .. e.name .. ")" or "",
            e.x or 0, e.z or 0, e.lat and string.format("%.6f, %.6f", e.lat, e.lon) or "-", e.detail or e.reason)
        end
      end
    end
  end
  -- length lost with no drop accounting for it (merged away in clean-up, e.g. a closed
  -- loop): the drops' lengths are taken from the loss; the input ways no drop names that
  -- lost most are listed (otherwise they show only under kept.lost of --report)
  local named, dropped_m = {}, 0
  for _, e in ipairs(rep.dropped) do
    if e.source then named[e.source] = true end
    dropped_m = dropped_m + (e.length_m or 0)
  end
  local unexplained = (k.input_m or 0) - (k.kept_m or 0) - dropped_m
  if unexplained >= 25 then
    -- a drop is filed under one way id of a merged road, the loss under the input way: a way
    -- that lost (within 1 m) what a drop names is taken as that drop, not listed
    local unmatched = {}
    for _, e in ipairs(rep.dropped) do unmatched[#unmatched + 1] = e.length_m or 0 end
    local function drop_of(m)
      for i, d in ipairs(unmatched) do
        if math.abs(d - m) <= 1 then table.remove(unmatched, i); return true end
      end
      return false
    end
    local silent = {}
    for _, l in ipairs(k.lost or {}) do
      if l.source and not named[l.source] and (l.length_m or 0) >= 25 and not drop_of(l.length_m) then
        silent[#silent + 1] = l
      end
    end
    line("not kept without a drop: %s (merged into other roads or cut in clean-up; --report lists each way's "
      .. "loss under kept.lost)", km(unexplained))
    for i, l in ipairs(silent) do
      if not verbose and i > 5 then
        line("          ... and %d more ways (--verbose lists them)", #silent - 5)
        break
      end
      line("          %s%s: %s not kept", l.source, l.name and " (" .. l.name .. ")" or "", km(l.length_m))
    end
  end
  for _, s in ipairs(rep.simplified or {}) do line("simplified to fit: %s", s) end
end

--- The stage and short reason of a city build's failure message (`psdl.osm.city.build`).
-- @tparam string msg
-- @treturn table `{stage =, reason =, message = (its first line)}`
function M.failure_of(msg)
  local stage, reason = "layout", "cannot be built"
  if msg:find("does not validate", 1, true) then stage, reason = "validation", "does not validate"
  elseif msg:find("game's limits", 1, true) then stage, reason = "limits", "over the game's limits"
  elseif msg:match("^blocks: ") then stage = "blocks"
  elseif msg:match("^terrain: ") then stage = "terrain"
  elseif msg:find("no roads left", 1, true) or msg:find("every road of the city had to be dropped", 1, true) then
    reason = "no road left" end
  return { stage = stage, reason = reason, message = msg:match("^[^\n]*") }
end

--- Write `--report` (when asked) for a city that could not be built: what the import
-- knew, and the failure.
-- @tparam table args parsed arguments (`report`: the path, or nil to write nothing)
-- @tparam table net
-- @tparam table report the network report
-- @tparam[opt] string msg the build's error message (its failure from `failure_of`)
-- @tparam[opt] table failure `{stage =, reason =, message =}` given instead of msg
-- @tparam[opt] table known what the build repaired and dropped before it failed
--   (`psdl.osm.city.try_build`'s third result)
function M.write_failure_report(args, net, report, msg, failure, known)
  if not args.report then return end
  local rep = M.import_report(args, net, report, nil, nil, failure or M.failure_of(msg), known)
  common.write_file_atomic(args.report, docjson.encode(rep))
end
return M
