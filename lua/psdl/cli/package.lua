--- `psdl package CITY.lua|EXTRACT.osm|CITY.psdl -o MYCITY.ar [--name mycity] [--dir OUT/]`:
-- build (or read) a city and write the whole add-on: PSDL, AI roads, visibility, minimap,
-- city and cruise files, packed as a zip-format `.ar` the game reads (docs/package.md).
--
-- A city script's `package` table (`psdl.city.new{package = {...}}`) gives defaults; the
-- options here override them. Nothing is written when any file cannot be generated or a
-- cross-check fails; the archive is written atomically, and never over an input.
--
-- Exit code: 0 written; 1 usage error; 2 the input cannot be read, built or packaged (it
-- fails `psdl validate` with errors, or a cross-check); 3 a file cannot be read or written.
-- @module psdl.cli.package

local common = require "psdl.cli.common"
local string, os, io, math, table = string, os, io, math, table
local require, tostring, tonumber, type, pcall, xpcall, getmetatable, ipairs, pairs =
  require, tostring, tonumber, type, pcall, xpcall, getmetatable, ipairs, pairs

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Package a city as an MM2 add-on (.ar): AI roads, visibility, minimap, city files."

--- Longer description shown by `psdl package --help`.
M.description = "Build a city script (or import an OpenStreetMap extract, or read a PSDL with road records), "
  .. "generate every companion file the game needs (city/<map>.bai, .cpvs, .aimap, tune/<map>.cinfo, "
  .. ".mmhudmap, race/<map>/roam.aimap(_p), the minimap model and its textures, prop-rule CSVs, "
  .. "optional stop signs), cross-check them and write one .ar (a plain zip) or, with --dir, the "
  .. "unpacked tree. Install: copy the .ar into the game's folder (docs/package.md)."

--- Declare the command's arguments (shared with `build` and `osm` for `--package`).
-- @tparam table cmd the argparse command
-- @tparam boolean shortcut true when declared on `build`/`osm` (only the package options)
-- @tparam[opt] boolean has_name the command already has `--name` (`osm`: it names the city, and
--   the package uses it as the map name)
function M.options(cmd, shortcut, has_name)
  if not has_name then cmd:option("--name", "Map name: lower case, digits, '_', at most 21 characters (default: the input's name)."):argname("<map>") end
  cmd:option("--title", "Name shown in the game's menus (default: the map name)."):argname("<text>")
  cmd:option("--density", "Ambient traffic density 0-4 on every AI road (default 1, the game's own)."):argname("<x>")
  cmd:flag("--left-hand", "Traffic drives on the left.")
  cmd:option("--police", "Police cars in cruise, 0-8 (default 2)."):argname("<n>")
  cmd:flag("--dressing", "Also place stop signs at stop approaches (city/<map>_ai.inst).")
  cmd:option("--rays", "Visibility: random rays per room (default 1024)."):argname("<n>")
  if not shortcut then
    cmd:argument("input", "City script (.lua), OpenStreetMap extract (.osm) or PSDL with road records (.psdl).")
    cmd:option("-o --output", "The .ar to write (default: <map>.ar)."):argname("<out.ar>")
    cmd:option("--dir", "Write the unpacked tree into this folder instead of an .ar."):argname("<dir>")
    cmd:option("--seed", "Seed of the city's randomness and of the visibility sampling (an integer)."):argname("<n>")
    cmd:option("--style", "Texture style for an .osm import.", "london"):choices({ "london", "sf" })
    cmd:flag("-q --quiet", "Print nothing on success.")
    cmd:flag("-v --verbose", "List every note (roads ending without a junction room are otherwise counted).")
  end
end

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  M.options(cmd, false)
end

local function base(path)
  return (path:match("([^/\\]*)$"):gsub("%.[^.]*$", ""))
end

-- the document (and script settings) of an input
local function load_input(psdl, args, seed, ctx)
  local input = args.input
  local low = input:lower()
  if low:match("%.lua$") then
    -- run in the sandbox and built there, as `psdl build` does (psdl.cli.source)
    local d, _, _, meta = require("psdl.cli.source").script_document(psdl, input, { seed = seed,
      outputs = { { args.output, "-o" } } })
    return d, meta.package or {}, meta.name
  elseif low:match("%.osm$") then
    -- the city must fit a package's rooms: built coarser, then simplified (psdl.osm.city)
    -- a large extract takes several builds: each is said as it starts (stderr), so a long run
    -- shows life; the builds' own stages ("city: roads", ...) are left out
    local progress
    if not args.quiet then
      ctx.stderr:write("psdl package: note: building the city from " .. input .. "\n")
      progress = function(stage)
        if not stage:match("^city: ") then ctx.stderr:write("psdl package: note: " .. stage .. "\n") end
      end
    end
    local d, _, res = require("psdl.cli.source").osm_document(psdl, input, { style = args.style, seed = seed or 1,
      max_rooms = require("psdl.package").MAX_ROOMS, progress = progress })
    return d, {}, nil, res
  else
    local d, msg, code = psdl.read(input)
    if not d then
      -- a decode error names the offset and room, not the file: name it like validate/info
      msg = common.clean(msg)
      if not msg:find(input, 1, true) then msg = input .. ": " .. msg end
      common.failure(common.exit_for(code), msg)
    end
    return d, {}, nil
  end
end

--- Check every package option before anything is built or written (`package`, and `build`
-- and `osm` with `--package`): a bad `--name`, `--title` (over 39 characters or more than one
-- line), `--density`, `--police` or `--rays` is a usage failure (exit 1) naming the option.
-- @tparam table args parsed options
function M.check_name(args)
  local text = require("psdl.package.text")
  if args.name then
    local okn, why = pcall(text.check_name, args.name)
    if not okn then common.failure("usage", "--name: " .. tostring(why)) end
  end
  if args.title then
    local okt, why = pcall(text.check_title, args.title)
    if not okt then common.failure("usage", "--title: " .. tostring(why)) end
  end
  M.check_numbers(args)
end

--- Refuse (a usage failure, exit 1, naming the option) a `--density` outside 0-4, a
-- `--police` that is not a whole number 0-8 (the ranges `psdl.package.text.settings` takes)
-- or a `--rays` that is not a positive whole number. Called before anything is built.
-- @tparam table args parsed options
-- @treturn number|nil density
-- @treturn integer|nil police
-- @treturn integer|nil rays
function M.check_numbers(args)
  local density, police
  if args.density then
    density = tonumber(args.density)
    if not density or not (density >= 0 and density <= 4) then
      common.failure("usage", "--density: a number 0-4 expected (ambient traffic, 1 is the game's own), got "
        .. args.density)
    end
  end
  if args.police then
    police = math.tointeger(tonumber(args.police))
    if not police or police < 0 or police > 8 then
      common.failure("usage", "--police: a whole number of cars 0-8 expected, got " .. args.police)
    end
  end
  local rays
  if args.rays then
    rays = math.tointeger(tonumber(args.rays))
    if not rays or rays < 1 then common.failure("usage", "--rays: a positive integer expected, got " .. args.rays) end
  end
  return density, police, rays
end

--- How many validation errors `check_valid` quotes before the count.
M.QUOTE_ERRORS = 3

--- Refuse a document that fails `psdl.validate` (errors only; warnings such as a vertex outside
-- the bounding box do not stop a package): the game would load a broken city, and the modder
-- would only learn of it by validating the .ar. Raises the `bad_input` failure (exit 2) with
-- the error count and the first QUOTE_ERRORS errors in `psdl validate`'s form.
-- @tparam table psdl the `psdl` module
-- @tparam table doc
-- @tparam string label the input's name, quoted in the message
function M.check_valid(psdl, doc, label)
  local okv, _, problems, counts = pcall(psdl.validate, doc, { name = label })
  if not okv then
    common.failure("bad_input", label .. ": cannot package the city: it cannot be validated: " .. common.clean(_))
  end
  local errors = type(counts) == "table" and counts.errors
  local first = {}
  local n = 0
  for _, p in ipairs(problems or {}) do
    if p.severity == "error" then
      n = n + 1
      if #first < M.QUOTE_ERRORS then
        local where = (p.path and p.path ~= "") and (" " .. p.path) or ""
        local esc = require("psdl.package.validate").escape
        first[#first + 1] = esc(string.format("  error %s%s: %s", p.rule, where, p.message))
      end
    end
  end
  errors = errors or n
  if errors > 0 then
    common.failure("bad_input", string.format("%s: cannot package the city: it fails validation with %s error%s "
      .. "(psdl validate %s lists them all)%s:\n%s", label, common.int(errors), errors == 1 and "" or "s", label,
      errors > #first and string.format("; the first %d", #first) or "", table.concat(first, "\n")))
  end
end

--- Package a document and write it (shared with `build --package` and `osm --package`).
-- @tparam table doc
-- @tparam table args parsed options (`name`, `title`, `density`, `left_hand`, `police`,
--   `dressing`, `rays`, `seed`, `quiet`)
-- @tparam table script settings from the script's `package` table
-- @tparam string default_name map name when neither is given
-- @tparam table ctx the command context
-- @tparam string|nil ar the .ar path
-- @tparam string|nil dir the folder
-- @tparam table|nil inputs paths that must not be overwritten
-- @tparam[opt] table import the result of `psdl.osm.city.build` for an OSM extract: what was
--   simplified to fit the package's rooms is printed with the kept fraction of road length
-- @tparam[opt] table outputs a `psdl.cli.outputs` set: the .ar is added to it (written with
--   the command's other outputs) instead of written here
function M.package(doc, args, script, default_name, ctx, ar, dir, inputs, import, outputs)
  local psdl = common.psdl()
  local pkg = require "psdl.package"
  local opts = {}
  for k, v in pairs(script or {}) do opts[k] = v end
  opts.name = args.name or opts.name
  M.check_name(args)
  if not opts.name then
    local whole
    opts.name, whole = pkg.text.name_from(default_name or "city")
    -- the map name names every file of the package and the 31-character texture
    -- hudmap_<map>_NN, so it holds 21 characters at most (CF §6.1): a longer one is cut, said here
    if whole then
      ctx.stderr:write(string.format("psdl package: warning: the map name %s is longer than the 21 characters a map "
        .. "name may have; the package uses %s (--name sets another)\n", whole, opts.name))
    end
  end
  if args.title then opts.title = args.title end
  local density, police, rays = M.check_numbers(args)
  if density then opts.density = density end
  if args.left_hand then opts.left_hand = true end
  if police then opts.police = police end
  if args.dressing then opts.dressing = true end
  opts.seed = args.seed and math.tointeger(tonumber(args.seed)) or opts.seed
  local cp = {}
  cp.rays = rays
  opts.cpvs = cp
  local ok_t, term = pcall(require, "term")
  local tty = ok_t and term.isatty and term.isatty(io.stderr)
  if not args.quiet and tty then
    opts.progress = function(_, done, total)
      local w = 30
      local k = math.floor(w * done / total + 0.5)
      ctx.stderr:write(string.format("\rpsdl package: visibility [%s%s] %d/%d rooms", string.rep("#", k),
        string.rep(".", w - k), done, total))
      if done == total then ctx.stderr:write("\n") end
    end
  end
  for _, p in ipairs(inputs or {}) do
    if ar and p == ar then common.failure("usage", "the output " .. ar .. " is an input: choose another name") end
  end
  -- what no package can hold is said first (its fix comes before any other), then validation
  local cannot = pkg.too_many_rooms(doc) or pkg.bai_gen.no_records(doc)
  if cannot then common.failure("bad_input", "cannot package the city: " .. cannot) end
  M.check_valid(psdl, doc, inputs and inputs[1] or opts.name)
  local ok, files, report = pcall(pkg.generate, doc, opts)
  if not ok then common.failure("bad_input", "cannot package the city: " .. tostring(files)) end
  if dir then
    -- a file of the package that is one of the inputs (IN.psdl given as DIR/city/<map>.psdl):
    -- refused like -o, before anything is written
    for _, f in ipairs(files) do
      for _, p in ipairs(inputs or {}) do
        if common.same_file(p, dir .. "/" .. f[1]) then
          common.failure("usage", string.format("--dir %s: the package's file %s is the input file %s: refusing "
            .. "to overwrite an input (choose another --dir or move the input)", dir, f[1], p))
        end
      end
    end
    local okw, err, code = pkg.write_dir(files, dir)
    if not okw then common.failure(common.exit_for(code), common.clean(err)) end
  else
    ar = ar or (report.map .. ".ar")
    local okw, err, code
    if outputs then
      okw, err, code = pkg.ar_bytes(files)
      if okw then outputs:add(ar, okw) else err = "psdl: " .. tostring(code) .. ": " .. tostring(err) end
    else
      okw, err, code = pkg.write_ar(files, ar)
    end
    if not okw then common.failure(common.exit_for(code), common.clean(err)) end
  end
  if not args.quiet then
    local s = report.seconds
    ctx.stdout:write(string.format("%s: map %s, %d files; %d rooms, %d AI roads, %d intersections (cruise start %d), "
      .. "visibility %.1f rooms a row on average (longest %d%s)%s; %.2f s (visibility %.2f s)\n",
      dir or ar, report.map, report.files, report.rooms, report.roads, report.intersections, report.start,
      report.cpvs.mean, report.cpvs.longest,
      report.cpvs.cut > 0 and string.format("; %d rows cut to %d rooms, the game's draw cap", report.cpvs.cut,
        pkg.cpvs_gen.MAX_VISIBLE) or "",
      report.signs > 0 and string.format(", %d stop signs", report.signs) or "", s.total, s.cpvs))
    if import and #(import.simplified or {}) > 0 then
      ctx.stdout:write(string.format("  note: simplified to fit %d rooms, %.1f %% of the drivable length kept "
        .. "(%.2f of %.2f km):\n", pkg.MAX_ROOMS, 100 * import.kept.fraction, import.kept.kept / 1000,
        import.kept.input / 1000))
      for _, w in ipairs(import.simplified) do ctx.stdout:write("    " .. w .. "\n") end
    end
    M.print_notes(ctx.stdout, report.notes, args.verbose)
  end
  return report
end

--- Print the package's notes (`psdl.package.generate`'s `report.notes`), one `  note:` line
-- each; the roads that end without a junction room (a dead-end intersection is made in
-- their end room, bai_gen) are one line with their count unless `verbose` (an OSM extract
-- has a hundred of them).
-- @tparam file out the stream
-- @tparam table notes list of strings
-- @tparam[opt] boolean verbose list every note
function M.print_notes(out, notes, verbose)
  local dead = 0
  for _, n in ipairs(notes) do
    if not verbose and n:match("^road %d+: no junction room at its %a+ end") then
      dead = dead + 1
    else
      out:write("  note: " .. n .. "\n")
    end
  end
  if dead > 0 then
    out:write(string.format("  note: %d road end%s without a junction room; each gets a dead-end intersection "
      .. "in its end room (--verbose lists them)\n", dead, dead == 1 and "" or "s"))
  end
end

--- Run `psdl package`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local seed = common.seed(args.seed)
  if args.output and args.dir then common.failure("usage", "-o and --dir: one or the other") end
  if args.output and not args.output:lower():match("%.ar$") then
    common.failure("usage", "-o: an .ar file expected, got " .. args.output)
  end
  common.refuse_overwrite({ args.input }, { { args.output, "-o" } })
  M.check_name(args)
  local psdl = common.psdl()
  local doc, script, cname, import = load_input(psdl, args, seed, ctx)
  M.package(doc, args, script, cname or base(args.input), ctx, args.output, args.dir, { args.input }, import)
  return ctx.exit.ok
end

return M
