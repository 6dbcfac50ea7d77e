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
local R = require "psdl.cli.osm_report"

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
      R.write_failure_report(args, net, report, nil, { stage = "network", reason = "no drivable road",
        message = "no drivable road to build a city from" })
      fail("bad_input", args.file .. ": no drivable road to build a city from (see the summary of "
        .. "'psdl osm " .. args.file .. "' without -o)")
    end
    if opts.progress then opts.progress(string.format("building the city (%d roads, %d footprints)", #net.roads,
      #(net.buildings or {}))) end
    local t_city = os.clock()
    local d, rep, res = require("psdl.osm.city").try_build(net, report, {
      style = args.style, seed = seed or 1, name = args.name, strict = args.strict, procedural = args.procedural,
      progress = opts.progress,
      -- a package is the target: the city must fit its rooms (coarser rooms, then simplified)
      max_rooms = args.package and require("psdl.package").MAX_ROOMS or nil })
    if not d then
      -- (the report lists what was dropped and repaired before the failure, res)
      local m = tostring(rep); R.write_failure_report(args, net, report, m, nil, res)
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
  local import = R.import_report(args, net, report, result, city_report)
  if args.report then
    local ok, err, ecode = common.write_file_atomic(args.report, docjson.encode(import))
    if not ok then common.failure(common.exit_for(ecode), err) end
  end

  if args.network_json then
    local ok, err, ecode = common.write_file_atomic(args.network_json, R.network_json(net, report))
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
      format = "psdlkit-osm-report", version = 1, file = args.file, report = R.report_object(report),
      city = cityj, import = import,
    }))
  elseif not args.quiet then
    R.print_summary(ctx.stdout, args.file, net, report, args.verbose)
    if city_report then R.print_city(ctx.stdout, args.output, city_report, #(net.buildings or {}), args.verbose) end
    R.print_outcome(ctx.stdout, import, args.verbose)
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

--- The report's JSON and text (`psdl.cli.osm_report`), kept here for callers of this module.
M.network_json, M.report_object, M.import_report = R.network_json, R.report_object, R.import_report

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
