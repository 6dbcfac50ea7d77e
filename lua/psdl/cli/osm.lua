--- `psdl osm EXTRACT.osm`: read an OpenStreetMap XML extract and build the cleaned road
-- network (docs/network.md) a city is generated from; print a summary of what was read,
-- kept, changed, dropped and skipped; write the network as JSON (`--network-json`) and a
-- picture of it (`--svg`).
--
--     psdl osm EXTRACT.osm [--bbox minlon,minlat,maxlon,maxlat] [--network-json OUT.json]
--              [--svg MAP.svg] [--json] [--walkways] [--scale S] [...]
--
--     psdl osm EXTRACT.osm -o CITY.psdl [--bbox ...] [--style london|sf] [--seed N]
--              [--preview MAP.png] [--procedural] [--strict] [--progress]
--
-- With `-o`, the network becomes a city (`psdl.city.from_network(net, {style, seed})`,
-- blocks from the faces of the network with the extract's building footprints, and with
-- `--procedural` generated building rows along the block edges too), which is validated
-- and written atomically (`psdl.write`: nothing is written when it has validation errors,
-- or warnings with `--strict`); `--preview` then draws its map (`psdl.render`). The summary
-- adds the city: rooms by kind, road records, intersections, blocks, buildings placed and
-- footprints left out (with the reason), validation and timings. Progress (the stages, on
-- stderr) shows when stderr is a terminal, or with `--progress`.
--
-- Exit code: 0 done; 1 usage error, or the city does not validate, or `--strict` and the
-- network still has problems or the city has validation warnings; 2 the input is not OSM XML
-- (the message gives the line), or the city cannot be built from it, or its area is larger
-- than `--max-extent` km (default 5) on one side (refused before any heavy work, with the size
-- in km and the `--bbox` remedy: `psdl.osm.extent`, docs/osm.md "Area limit"); 3 a file cannot
-- be read or written.
-- @module psdl.cli.osm

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"

local string, table, math, os, io = string, table, math, os, io
local ipairs, pairs, tonumber, type, require, tostring = ipairs, pairs, tonumber, type, require, tostring

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Import OpenStreetMap: a city (PSDL) from an OSM extract, or its road network (JSON, SVG)."

--- Longer description shown by `psdl osm --help`.
M.description = "Read an OpenStreetMap XML extract, project it to metres (transverse Mercator "
  .. "around the area's centre; x east, z north), turn its highways into a road network "
  .. "(profiles street, alley, avenue, boulevard, freeway), merge dual carriageways, handle "
  .. "roundabouts, bridges and tunnels, and clean it up so every road and junction fits "
  .. "without overlaps; building footprints are kept. With -o, build the city from it (roads, "
  .. "intersections, blocks from the faces of the network, buildings on the footprints), validate "
  .. "it and write the PSDL atomically; --preview draws its map. Prints what was skipped and why. "
  .. "OSM data: © OpenStreetMap contributors, ODbL 1.0."

local function bbox(s)
  local parts = {}
  for p in s:gmatch("[^,]+") do parts[#parts + 1] = tonumber(p) end
  if #parts ~= 4 then return nil, "four numbers minlon,minlat,maxlon,maxlat expected" end
  local a, b, c, d = parts[1], parts[2], parts[3], parts[4]
  if not (a < c and b < d) then return nil, "minlon < maxlon and minlat < maxlat expected" end
  if b < -90 or d > 90 or a < -180 or c > 180 then return nil, "degrees expected (lon -180..180, lat -90..90)" end
  return parts
end

-- The area an extract covers: its <bounds>, else the box of its nodes; nil without nodes.
local function extract_area(data)
  local b = data.bounds
  if b and b.minlat and b.minlon and b.maxlat and b.maxlon then
    return { minlon = b.minlon, minlat = b.minlat, maxlon = b.maxlon, maxlat = b.maxlat, what = "<bounds>" }
  end
  local a
  for _, n in pairs(data.nodes or {}) do
    local lat, lon = n[1], n[2]
    if not a then a = { minlon = lon, minlat = lat, maxlon = lon, maxlat = lat, what = "nodes' box" }
    else
      if lon < a.minlon then a.minlon = lon elseif lon > a.maxlon then a.maxlon = lon end
      if lat < a.minlat then a.minlat = lat elseif lat > a.maxlat then a.maxlat = lat end
    end
  end
  return a
end

-- A converter whose message names its option ("--bbox: four numbers ... expected").
local function named(option, convert)
  return function(s)
    local v, err = convert(s)
    if v == nil then return nil, option .. ": " .. tostring(err) end
    return v
  end
end

local function positive(s)
  local n = tonumber(s)
  if not n or n ~= n or n <= 0 or n == math.huge then return nil, "a positive number expected" end
  return n
end

local function nonneg(s)
  local n = tonumber(s)
  if not n or n ~= n or n < 0 or n == math.huge then return nil, "a number >= 0 expected" end
  return n
end

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("file", "OSM XML extract (.osm).")
  cmd:option("-o --output", "Build the city and write it here (PSDL; not - : the summary uses standard output)."):argname("<city.psdl>")
  cmd:option("--style", "Texture style of the city (with -o).", "london"):choices({ "london", "sf" })
  cmd:option("--seed", "Seed of the city's randomness (with -o; an integer, default 1)."):argname("<n>")
  cmd:option("--preview", "Also draw a map of the city (with -o): .png or .svg."):argname("<map>")
  cmd:option("--size", "Pixels on the long side of the preview (PNG 64-8192, SVG 64-16384).", "2048"):argname("<n>")
  cmd:flag("--procedural", "Also line the blocks' street edges with generated buildings (default: only the "
    .. "extract's footprints; blocks without any stay open).")
  cmd:option("--name", "City name the validation checks (with -o)."):argname("<name>")
  cmd:option("--bbox", "Clip to this area, in degrees: minlon,minlat,maxlon,maxlat."):argname("<box>"):convert(named("--bbox", bbox))
  cmd:flag("--no-clip", "Keep whole ways even beyond the file's <bounds> (default: clip to them).")
  cmd:option("--network-json", "Write the cleaned network (docs/network.md) as JSON."):argname("<out.json>")
  cmd:option("--svg", "Write a picture of the network: road corridors at their assumed width, "
    .. "junctions, buildings."):argname("<map.svg>")
  cmd:flag("--json", "Print the import report as JSON instead of text.")
  cmd:flag("--walkways", "Keep footways, paths, steps, cycleways as walkways (alleys).")
  cmd:flag("--driveways", "Keep service=driveway/parking_aisle/drive-through roads.")
  cmd:flag("--no-buildings", "Leave building footprints out.")
  cmd:flag("--no-dual", "Do not merge dual carriageways.")
  cmd:option("--roundabouts", "Roundabouts: keep rings, collapse them into one junction, or auto "
    .. "(keep those whose junctions fit; default)."):choices({ "auto", "keep", "collapse" })
  cmd:flag("--raw", "No clean-up: the ways split at shared nodes only (for comparison).")
  cmd:option("--scale", "Multiply every distance (default 1; the game's 5 m lanes and sidewalks are "
    .. "wider than real ones, 1.5 gives streets more room)."):argname("<s>"):convert(named("--scale", positive))
  cmd:option("--lane-width", "Lane width the fit checks assume, metres (default 5, as city generation)."):argname("<m>")
    :convert(named("--lane-width", positive))
  cmd:option("--sidewalk-width", "Sidewalk width the fit checks assume on every road with sidewalks, metres "
    .. "(default: 4 on streets, 5 on avenues and boulevards, as city generation)."):argname("<m>")
    :convert(named("--sidewalk-width", nonneg))
  cmd:option("--ramp", "Ramp length at each end of a bridge or tunnel road, metres (default 60, as city "
    .. "generation)."):argname("<m>"):convert(named("--ramp", nonneg))
  cmd:option("--merge-distance", "Merge nodes closer than this, metres (default 2)."):argname("<m>")
    :convert(named("--merge-distance", nonneg))
  cmd:option("--min-angle", "Smallest angle between two roads at a junction, degrees (default 25)."):argname("<deg>")
    :convert(named("--min-angle", nonneg))
  cmd:option("--report", "Write the import report as JSON (docs/osm.md: kept fraction, every repair and drop with "
    .. "its reason and position, buildings, simplifications)."):argname("<report.json>")
  cmd:flag("--strict", "Refuse instead of repairing: exit 1 when the network still has problems after the clean-up; "
    .. "with -o, fail on the first road the city build would have to repair or drop, and refuse a city with "
    .. "validation warnings too.")
  cmd:flag("-v --verbose", "List every dropped road and every problem left; state the peak memory.")
  cmd:option("--max-input", "Refuse an extract larger than this many MB (default 1024).", "1024"):argname("<mb>")
    :convert(named("--max-input", positive))
  cmd:option("--max-extent", "Refuse an area (--bbox, the file's <bounds>, else the drivable ways) larger than "
    .. "this many km on one side (default 5: the game's 2,047 rooms; docs/osm.md, \"Area limit\").", "5")
    :argname("<km>"):convert(named("--max-extent", positive))
  cmd:option("--max-memory", "Stop when the import's Lua memory passes this many MB (default 4096).", "4096")
    :argname("<mb>"):convert(named("--max-memory", positive))
  cmd:flag("-q --quiet", "Print nothing on success (errors still go to stderr).")
  cmd:option("--package", "Also package the city (with -o) as an MM2 add-on (.ar, as 'psdl package' does)."):argname("<out.ar>")
  require("psdl.cli.package").options(cmd, true, true)
  cmd:flag("--progress", "Show a progress bar of the stages on stderr (default: when stderr is a terminal; "
    .. "one line per stage when it is not).")
end

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

local function print_summary(out, file, net, report, verbose)
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

--- Run `psdl osm`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
-- The city part of the summary: what `psdl.city.summary` says, and the footprints.
local function print_city(out, path, report, nfootprints, verbose)
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

-- The stages a run goes through, in order (for the progress bar).
local STAGES = { "reading", "roads", "graph", "buildings", "merge", "crossings", "roundabouts", "dual carriageways",
                 "fit", "check", "building the city", "city: roads", "city: blocks", "city: finish", "writing" }

-- A progress reporter: a bar redrawn in place on a terminal, one line per stage otherwise.
local function progress_reporter(stream, tty)
  local index = {}
  for i, st in ipairs(STAGES) do index[st] = i end
  local t0 = os.clock()
  local last = 0
  local reporter = {}
  function reporter.stage(stage)
    local key = stage:match("^(city: %a+)") or stage:match("^([%a ]-)%s*%(") or stage:match("^([%a: ]+)") or stage
    key = key:gsub("%s+$", "")
    if key:match("^simplifying") then key = "building the city" end
    local i = index[key] or last
    if i > last then last = i end
    if tty then
      local width = 24
      local done = math.floor(width * last / #STAGES + 0.5)
      local text = stage
      if #text > 44 then text = text:sub(1, 41) .. "..." end
      stream:write(string.format("\r[%s%s] %3d%% %-44s %5.1f s", string.rep("#", done), string.rep("-", width - done),
        math.floor(100 * last / #STAGES + 0.5), text, os.clock() - t0))
    else
      stream:write(string.format("psdl osm: %s...\n", stage))
    end
    stream:flush()
  end
  function reporter.finish()
    if tty then stream:write("\r", string.rep(" ", 90), "\r") stream:flush() end
  end
  return reporter
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
-- @treturn table ready for `docjson.encode`
function M.import_report(args, net, report, result, city_report, failure)
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
    for i, d in ipairs(report.dropped) do
      local lat, lon = latlon(d.x, d.z)
      dropped[i] = entry { stage = d.stage or "clean-up", reason = d.kind or d.reason, detail = d.reason,
        source = d.source, name = d.name, highway = d.highway, length = d.length, x = d.x, z = d.z,
        lat = lat, lon = lon }
    end
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
    simplified = result and result.simplified or {},
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

-- The repairs, drops and kept fraction of a run, as text.
local function print_outcome(out, rep, verbose)
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

-- The stage and short reason of a city build's failure message (`psdl.osm.city.build`).
local function failure_of(msg)
  local stage, reason = "layout", "cannot be built"
  if msg:find("does not validate", 1, true) then stage, reason = "validation", "does not validate"
  elseif msg:find("game's limits", 1, true) then stage, reason = "limits", "over the game's limits"
  elseif msg:match("^blocks: ") then stage = "blocks"
  elseif msg:match("^terrain: ") then stage = "terrain"
  elseif msg:find("no roads left", 1, true) or msg:find("every road of the city had to be dropped", 1, true) then
    reason = "no road left" end
  return { stage = stage, reason = reason, message = msg:match("^[^\n]*") }
end

-- `--report` when the city could not be built: what the import knew, and the failure.
local function write_failure_report(args, net, report, msg, failure)
  if not args.report then return end
  local rep = M.import_report(args, net, report, nil, nil, failure or failure_of(msg))
  common.write_file_atomic(args.report, docjson.encode(rep))
end

-- long: the `psdl osm` command's steps in order (read, network, city written, package,
-- reports), each failure reported at its stage with its exit code; shares the options
local function run_import(args, ctx)
  local osm = require "psdl.osm"
  local seed, size
  if args.seed then
    seed = math.tointeger(tonumber(args.seed))
    if not seed then common.failure("usage", string.format("--seed: an integer expected, got %q", args.seed)) end
  end
  size = common.map_size(args.size, args.preview)
  if args.preview then
    if not args.output then common.failure("usage", "--preview draws the city: it needs -o CITY.psdl") end
    if not (args.preview:lower():match("%.png$") or args.preview:lower():match("%.svg$")) then
      common.failure("usage", "--preview: a .png or .svg file expected, got " .. args.preview)
    end
  end
  if args.output == "-" then -- (its summary, report and progress use standard output: no PSDL there)
    common.failure("usage", "-o -: psdl osm writes the city to a file (its summary goes to standard output): name the .psdl")
  end
  common.refuse_overwrite({ args.file }, { { args.output, "-o" }, { args.network_json, "--network-json" },
    { args.svg, "--svg" }, { args.preview, "--preview" }, { args.report, "--report" }, { args.package, "--package" } })
  if not args.output and (args.seed or args.procedural or args.name) then
    common.failure("usage", "--seed, --procedural and --name are for the city: they need -o CITY.psdl")
  end
  local tty = false
  do
    local ok, term = pcall(require, "term")
    tty = (ok and term.isatty and term.isatty(io.stderr)) or false
  end
  local show_progress = not args.quiet and (args.progress or tty)
  local dims
  if args.lane_width or args.sidewalk_width or args.ramp then
    dims = { lane = args.lane_width, sidewalk = args.sidewalk_width, ramp = args.ramp }
  end
  local opts = {
    bbox = args.bbox or false, clip = not args.no_clip, walkways = args.walkways, driveways = args.driveways,
    buildings = not args.no_buildings, dual_carriageways = not args.no_dual, cleanup = not args.raw,
    roundabouts = args.roundabouts, scale = args.scale, dimensions = dims,
    merge_distance = args.merge_distance, min_angle = args.min_angle,
  }
  local reporter
  if show_progress then
    reporter = progress_reporter(ctx.stderr, tty)
    opts.progress = reporter.stage
  end
  local function fail(kind, msg)
    if reporter then reporter.finish() end
    common.failure(kind, msg)
  end
  if opts.progress then opts.progress("reading") end
  local t0 = os.clock()
  local data, msg, code = osm.read(args.file)
  if not data then fail(common.exit_for(code), common.clean(msg)) end
  local t_read = os.clock() - t0
  if not args.quiet then
    for _, d in ipairs(data.duplicate_ways or {}) do
      ctx.stderr:write(string.format("psdl osm: warning: %s:%d: way %d appears again (first at line %d); both "
        .. "are read as separate ways\n", args.file, d.line, d.id, d.first_line))
    end
  end
  if args.bbox then
    -- a --bbox beside the extract would give "no drivable road": say what is wrong
    local lo = extract_area(data)
    local b = args.bbox
    if lo and (b[3] < lo.minlon or b[1] > lo.maxlon or b[4] < lo.minlat or b[2] > lo.maxlat) then
      fail("bad_input", string.format("%s: the --bbox %s does not overlap the extract (its %s is minlon,minlat,"
        .. "maxlon,maxlat %.6f,%.6f,%.6f,%.6f)", args.file, table.concat(b, ","), lo.what, lo.minlon, lo.minlat,
        lo.maxlon, lo.maxlat))
    end
  end
  opts.max_extent = args.max_extent * 1000
  local net, report, ncode = osm.network(data, opts)
  if not net then
    -- over the area limit (psdl.osm.extent): refused before anything was projected
    fail(common.exit_for(ncode), args.file .. ": " .. (report:gsub("^the area to import %(the bbox", "the area to import (--bbox")))
  end
  report.timings.read = t_read
  if report.area_note and not args.quiet then
    ctx.stderr:write("psdl osm: warning: ", report.area_note, " (fit --bbox to the data to centre the city)\n")
  end

  -- the city: built, validated and written (atomically) before anything else is written
  local city_report, doc, result
  if args.output then
    local psdl = common.psdl()
    if #net.roads == 0 then
      write_failure_report(args, net, report, nil, { stage = "network", reason = "no drivable road",
        message = "no drivable road to build a city from" })
      fail("bad_input", args.file .. ": no drivable road to build a city from (see the summary of "
        .. "'psdl osm " .. args.file .. "' without -o)")
    end
    if opts.progress then opts.progress(string.format("building the city (%d roads, %d footprints)", #net.roads,
      #(net.buildings or {}))) end
    local t_city = os.clock()
    local ok, d, rep, res = xpcall(require("psdl.osm.city").build, function(e) return tostring(e) end, net, report, {
      style = args.style, seed = seed or 1, name = args.name, strict = args.strict, procedural = args.procedural,
      progress = opts.progress,
      -- a package is the target: the city must fit its rooms (coarser rooms, then simplified)
      max_rooms = args.package and require("psdl.package").MAX_ROOMS or nil })
    if not ok then
      local m = tostring(d); write_failure_report(args, net, report, m)
      if m:find("does not validate", 1, true) then
        fail("problems", args.file .. ": " .. (m:gsub("^.-: the built", "the built")))
      end
      -- (every line of the message, capped as build's, common.message)
      if m:find("game's limits", 1, true) then fail("bad_input", args.file .. ": " .. common.message(m)) end
      fail("bad_input", args.file .. ": the city cannot be built: " .. common.message((m:gsub("^the city cannot be built: ", ""))))
    end
    doc, city_report, result = d, rep, res
    if opts.progress then opts.progress("writing " .. args.output) end
    local okw, err, wcode = psdl.write(doc, args.output, { strict = args.strict, name = args.name })
    if not okw then fail(common.exit_for(wcode), common.clean(err)) end
    report.timings.city = os.clock() - t_city
    local over = not args.package and require("psdl.package").room_warning(#doc.rooms, args.file)
    if over and not args.quiet then ctx.stderr:write("psdl osm: warning: ", args.output, ": ", over, "\n") end
    if args.package then
      if not args.package:lower():match("%.ar$") then common.failure("usage", "--package: an .ar file expected") end
      require("psdl.cli.package").package(doc, args, {}, args.name or args.output:match("([^/\\]*)$"):gsub("%.psdl$", ""),
        ctx, args.package, nil, { args.file, args.output })
    end
  end
  if reporter then reporter.finish() end
  local import = M.import_report(args, net, report, result, city_report)
  if args.report then
    local ok, err, ecode = common.write_file_atomic(args.report, docjson.encode(import))
    if not ok then common.failure(common.exit_for(ecode), err) end
  end

  if args.network_json then
    local ok, err, ecode = common.write_file_atomic(args.network_json, M.network_json(net, report))
    if not ok then common.failure(common.exit_for(ecode), err) end
  end
  if args.svg then
    local ok, err, ecode = common.write_file_atomic(args.svg, osm.svg(net, {
      title = args.file:match("([^/\\]*)$"),
      dimensions = dims,
    }))
    if not ok then common.failure(common.exit_for(ecode), err) end
  end
  if args.json then
    local cityj
    if city_report then
      local obj = docjson.object
      local bl = city_report.blocks or {}
      local problems = {}
      for i, p in ipairs(city_report.problems or {}) do
        problems[i] = obj { severity = p.severity, rule = p.rule, path = p.path, message = p.message }
      end
      cityj = obj {
        file = args.output, rooms = city_report.rooms, vertices = city_report.vertices,
        road_records = city_report.roads, kinds = obj(city_report.kinds), nodes = obj(city_report.nodes or {}),
        runs = city_report.runs, blocks = bl.blocks or 0, buildings = bl.buildings or 0, parks = bl.parks or 0,
        footprints = result.buildings.footprints, footprints_placed = bl.footprints or 0,
        footprints_left_out = obj(bl.footprints_why or {}), footprints_clipped = bl.footprints_clipped or 0,
        under_decks = bl.under_decks or 0, block_notes = bl.warnings or {},
        validation = obj(city_report.counts), problems = problems, seed = city_report.seed,
        seconds = obj(city_report.seconds or {}),
      }
    end
    ctx.stdout:write(docjson.encode(docjson.object {
      format = "psdlkit-osm-report", version = 1, file = args.file, report = M.report_object(report),
      city = cityj, import = import,
    }))
  elseif not args.quiet then
    print_summary(ctx.stdout, args.file, net, report, args.verbose)
    if city_report then print_city(ctx.stdout, args.output, city_report, #(net.buildings or {}), args.verbose) end
    print_outcome(ctx.stdout, import, args.verbose)
    local written = {}
    if args.output then written[#written + 1] = args.output .. " (city)" end
    if args.report then written[#written + 1] = args.report .. " (report)" end
    if args.network_json then written[#written + 1] = args.network_json .. " (network)" end
    if args.svg then written[#written + 1] = args.svg .. " (picture)" end
    if #written > 0 then ctx.stdout:write("written: ", table.concat(written, ", "), "\n") end
  end
  if args.preview then
    local r, rerr, rcode = require("psdl.render").render(doc, { output = args.preview, size = size,
      title = args.output:match("([^/\\]*)$") })
    if not r then
      common.failure(common.exit_for(rcode), common.clean(rerr))
    end
    if not args.quiet and not args.json then
      ctx.stdout:write(string.format("%s: %d x %d px map\n", args.preview, r.width, r.height))
    end
  end
  if args.strict and #report.warnings > 0 then
    return ctx:fail("problems", string.format("%d problem%s left in the network (--strict)", #report.warnings,
      #report.warnings == 1 and "" or "s"))
  end
  return ctx.exit.ok
end

--- Run `psdl osm`: the import (above) inside an input-size and memory guard. An extract
-- over `--max-input` MB (default 1,024) is refused before it is read; an import whose Lua
-- memory passes `--max-memory` MB (default 4,096; a 200 MB extract needs about 800 MB) is
-- stopped with a message. `--verbose` adds the peak memory to the summary.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local lfs = require "lfs"
  local size = lfs.attributes(args.file, "size")
  if size and size > args.max_input * 1024 * 1024 then
    common.failure("bad_input", string.format("%s: %.1f MB is over --max-input %s MB (cut a smaller extract, "
      .. "e.g. with osmium extract --bbox, or raise --max-input)", args.file, size / (1024 * 1024),
      common.num(args.max_input)))
  end
  local control = require "psdl.control"
  collectgarbage("collect")
  -- the limit is on what the import adds to the heap (a host may already hold any amount)
  control.memory_limit(math.floor(args.max_memory * 1024 * 1024 + collectgarbage("count") * 1024))
  local ok, result = pcall(run_import, args, ctx)
  local stats = control.memory_stats()
  control.memory_limit(0)
  if stats.exceeded then
    common.failure("bad_input", string.format("%s: the import used more than --max-memory %s MB (cut a smaller "
      .. "extract or raise --max-memory)", args.file, common.num(args.max_memory)))
  end
  if not ok then error(result, 0) end
  if args.verbose and not args.quiet and not args.json then
    ctx.stdout:write(string.format("peak memory: %.0f MB (Lua heap)\n", stats.peak / (1024 * 1024)))
  end
  return result
end

return M
