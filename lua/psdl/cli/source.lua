--- Turning what a command is given into a city document: a PSDL file, a city script
-- (`psdl build`'s scripts) or an OpenStreetMap extract. Shared by `psdl build` and
-- `psdl view`, and by their `--watch` loops, which need the files a script loaded.
--
-- Failures are raised with `common.failure` (see `psdl.cli.common`): a script error names
-- the script line (`examples/city.lua:12: bad argument #3 to 'road' (...)`).
-- @module psdl.cli.source

local common = require "psdl.cli.common"
local string, math, table = string, math, table
local require, tonumber, tostring, type, getmetatable, xpcall, pcall, error, ipairs, pairs =
  require, tonumber, tostring, type, getmetatable, xpcall, pcall, error, ipairs, pairs

local M = {}

local function first_line(s)
  s = tostring(s)
  return s:match("^[^\n]*")
end

-- A script's error as the CLI shows it: every line (capped, `common.message`), so that a
-- builder's "does not validate (strict):" keeps the problems listed under it.
local whole = common.message

--- The files the last `run_script` or `script_document` read (also when it failed):
-- `{path, ...}`, the script first.
M.last_files = nil

-- A sandbox (`psdl.sandbox`) for one run of a script. `opts.sandbox`: `trust` (full access),
-- `timeout` (seconds, default 120; 0 = none), `max_memory` (MB, default 4,096; 0 = none);
-- `opts.poll`: the sandbox's poll (called while the script runs; true stops it).
local function new_box(psdl, path, seed, opts)
  local s = opts.sandbox or {}
  local sandbox = require "psdl.sandbox"
  return sandbox.new { script = path, trust = s.trust, timeout = s.timeout or 120,
    max_memory = (s.max_memory or 4096) * 1024 * 1024, globals = { SEED = seed }, psdl = psdl, poll = opts.poll }
end

-- The files a box loaded: the script, then its modules (sorted), then the files it read
-- (io.open, and the library's reads such as psdl.terrain.load; in the order read), then the
-- modules a trusted script required (`loaded`: the names package.loaded had before the run).
local function box_files(box, path, loaded)
  local files, seen = { path }, { [path] = true }
  local list = {}
  for _, file in pairs(box.chunks or {}) do list[#list + 1] = file end
  table.sort(list)
  for _, file in ipairs(box.reads or {}) do list[#list + 1] = file end
  if loaded then
    local names = {}
    for name in pairs(package.loaded) do
      if not loaded[name] and type(name) == "string" then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do list[#list + 1] = package.searchpath(name, package.path) end
  end
  for _, file in ipairs(list) do
    if not seen[file] then seen[file] = true; files[#files + 1] = file end
  end
  return files
end

--- Refuse (a `usage` failure, exit 1) an output that is one of the files a script loaded or
-- read (a module, a heightmap, a data table): called after the script ran, before anything
-- is written.
-- @tparam table files the script's files (`run_script`'s second result)
-- @tparam table outputs `{ {path, option}, ... }` (nil paths and `"-"` skipped)
-- @raise a failure naming the option, the output and the input
function M.refuse_inputs(files, outputs)
  for _, out in ipairs(outputs or {}) do
    local path, option = out[1], out[2]
    for i = 2, #files do
      if path and common.same_file(files[i], path) then
        common.failure("usage", string.format("%s %s is %s, which the script %s loaded: refusing to overwrite an "
          .. "input (choose another output name)", option, path, files[i], files[1]))
      end
    end
  end
end

-- The parts of a city's build report that leave the sandbox: the figures, problems, repairs
-- and warnings, without the object graphs the report also holds for in-process callers (the
-- builder, the road runs, the block rooms, faces and buildings: about 330,000 tables for a
-- London-scale city, whose deep copy took longer than the build itself).
local INTERNAL = { builder = true, run_list = true }
local BLOCK_INTERNAL = { rooms = true, faces = true, apron_rooms = true, building_list = true }
local function plain_report(rep)
  local out = {}
  for k, v in pairs(rep) do
    if not INTERNAL[k] then out[k] = v end
  end
  if type(rep.blocks) == "table" then
    local bl = {}
    for k, v in pairs(rep.blocks) do
      if not BLOCK_INTERNAL[k] then bl[k] = v end
    end
    out.blocks = bl
  end
  return require("psdl.sandbox").plain_copy(out)
end
M.plain_report = plain_report

--- The wall-clock backstop of `--timeout` (processor seconds): a script run that takes more
-- than WALL_FACTOR x the timeout + WALL_EXTRA seconds of real time ends the process (exit 2,
-- with a message): a run blocked in the system uses no processor time (`psdl.control.wall_limit`).
M.WALL_FACTOR, M.WALL_EXTRA = 4, 60

-- Loads the script into a box and runs `body(chunk)` there with the limits; returns what
-- body returns, or raises a failure naming the script line.
local function run_in_box(psdl, path, seed, opts, body)
  local box = new_box(psdl, path, seed, opts)
  M.last_files = { path }
  local chunk, lerr, lcode = box:loadfile()
  if not chunk then common.failure(lcode == "io" and "io" or "bad_input", first_line(lerr)) end
  local loaded
  if box.trust then
    loaded = {}
    for name in pairs(package.loaded) do loaded[name] = true end
  end
  -- (--timeout counts processor time: a script blocked in an open or a read uses none, so a
  -- wall-clock backstop ends the process, with a message, should the run outlast it)
  local wall = box.timeout and box.timeout > 0 and box.timeout * M.WALL_FACTOR + M.WALL_EXTRA
  local control = require "psdl.control"
  if wall then
    control.wall_limit(wall, string.format("psdl: %s: stopped after %s s of real time, the backstop of --timeout %s "
      .. "(%d x its processor seconds + %d s): the script or its build waited for something, a file or a pipe\n",
      path, common.num(wall), common.num(box.timeout), M.WALL_FACTOR, M.WALL_EXTRA))
  end
  local results = table.pack(box:run(function()
    math.randomseed(seed or 1)
    return body(chunk)
  end))
  if wall then control.wall_limit(0) end
  M.last_files = box_files(box, path, loaded)
  if not results[1] then
    local msg = whole(results[2])
    common.failure("bad_input", msg:find(path, 1, true) and msg or (path .. ": " .. msg))
  end
  M.refuse_inputs(M.last_files, opts.outputs)
  return M.last_files, table.unpack(results, 2, results.n)
end

--- Run a city script. By default it runs in the sandbox of `psdl.sandbox` (the library,
-- string/table/math/utf8, reading files under its own folder, a time and a memory limit;
-- `opts.sandbox.trust` gives full access), with `psdl` (the library), `SEED` (the seed, or
-- nil) and `SCRIPT_DIR` as globals, its own `arg` (`arg[0]` = the script) and `math.random`
-- seeded from `seed` (default 1).
-- @tparam table psdl the `psdl` module
-- @tparam string path the script
-- @tparam[opt] integer seed
-- @tparam[opt] table opts `sandbox = {trust =, timeout = s, max_memory = MB}`, `outputs`
--   (`{ {path, option}, ... }`: the command's outputs, refused when the script loaded or
--   read one of them, `refuse_inputs`)
-- @return the script's first result
-- @treturn table the files the script loaded: `{path, ...}` (the script first)
-- @raise a failure (`io` when the script cannot be opened, `bad_input` for a script error
--   or a limit, naming the script line)
function M.run_script(psdl, path, seed, opts)
  local files, result = run_in_box(psdl, path, seed, opts or {}, function(chunk) return chunk() end)
  return result, files
end

--- Run a city script and build the city it returns (a `psdl.city` City, built with `seed`,
-- or a finished document, validated). The script and the build run in the sandbox with its
-- limits; what comes out is plain data (the document decoded from the built bytes).
-- @tparam table psdl
-- @tparam string path
-- @tparam[opt] table opts `seed`, `strict`, `sandbox` (see `run_script`), `validate`
--   (false: a city with validation errors is returned too, for `psdl view` to show them),
--   `poll` (function() -> true to abandon the run; called about every 10 ms of processor time
--   of the script and its build, see `psdl.sandbox`), `decode` (false: no document table
--   when the report has the checked bytes; `psdl build` decodes them only for a preview or
--   a package), `outputs` (the command's outputs: see `run_script`)
-- @treturn table|nil document
-- @treturn table report (`psdl.city`'s build report, or `{problems =, counts =}`; with
--   `checked`, the bytes as validated in the sandbox, `psdl.document.check`, unless
--   validation was off)
-- @treturn table files the script loaded
-- @treturn table `{name =, package =}`: the City's name and `package` options (empty for a document)
-- @raise a failure naming the script (line)
function M.script_document(psdl, path, opts)
  opts = opts or {}
  local sandbox = require "psdl.sandbox"
  local City = psdl.city.City
  local files, bytes, report, kind, meta = run_in_box(psdl, path, opts.seed, opts, function(chunk)
    local result = chunk()
    if type(result) == "table" and getmetatable(result) == City then
      local ok, d, rep = pcall(result.build, result, { seed = opts.seed, strict = opts.strict,
        validate = opts.validate })
      if not ok then
        d = tostring(d)
        if d:find("does not validate", 1, true) then
          -- the whole list of problems (the builder lists at most eight of each kind)
          return nil, path .. ": " .. d:gsub("^.-: the built", "the built"), "problems"
        end
        -- (the script has returned: an error of the build without a script line is the
        -- script's as a whole, named so, not guessed to be a tail call's)
        error(d:find(path, 1, true) and d or (path .. ": " .. d), 0)
      end
      if type(d) ~= "table" or type(rep) ~= "table" then
        -- (a script that set city.build = ... itself)
        return nil, string.format("%s: the city's build() returned no document and report (%s, %s): a script "
          .. "must not replace city.build", path, type(d), type(rep)), "bad_input"
      end
      local po = result.package
      if po ~= nil and type(po) ~= "table" then return nil, path .. ": package: a table expected", "bad_input" end
      -- (the bytes finish validated: the document is not converted again)
      return rep.checked and rep.checked.bytes or psdl.encode(d), plain_report(rep), nil,
        { name = type(result.name) == "string" and result.name or nil, package = sandbox.plain_copy(po or {}) }
    elseif type(result) == "table" and type(result.rooms) == "table" and type(result.vertices) == "table" then
      local vok, problems, counts, checked = require("psdl.document").check(result, { strict = opts.strict }, true)
      if opts.validate ~= false and (counts.errors > 0 or (opts.strict and not vok)) then
        local p = problems[1]
        return nil, string.format("%s: the document does not validate: %d errors, %d warnings (%s %s: %s)",
          path, counts.errors, counts.warnings, p.rule, p.path, p.message), "problems"
      end
      return checked and checked.bytes or psdl.encode(result),
        sandbox.plain_copy({ problems = problems, counts = counts, checked = checked }), nil, {}
    end
    local got = result == nil and "nothing" or type(result)
    if type(result) == "table" and getmetatable(result) == psdl.builder.Builder then
      got = "a builder that was not finished: end the script with return (b:finish())"
    end
    return nil, path .. ": the script must return a city (psdl.city.new{...}) or a document, got " .. got, "bad_input"
  end)
  if not bytes then common.failure(kind, whole(report)) end
  if opts.decode == false and report.checked then return nil, report, files, meta or {} end
  local doc, derr = psdl.decode(bytes)
  if not doc then common.failure("internal", path .. ": the built city does not decode: " .. tostring(derr)) end
  return doc, report, files, meta or {}
end

--- Import an OpenStreetMap extract into a city as `psdl osm -o` does with its defaults
-- (footprint buildings, cleaned network).
-- @tparam table psdl
-- @tparam string path
-- @tparam[opt] table opts `seed`, `style`, `max_rooms` (a package's room limit: the city is
--   built in coarser rooms, then simplified, until it fits; `psdl.osm.city.build`), `progress`
--   (function(stage), `psdl.osm.city.build`'s)
-- @treturn table document
-- @treturn table the city's build report
-- @treturn table the import result (`kept`, `simplified`, ...; `psdl.osm.city.build`)
-- @raise a failure naming the extract
function M.osm_document(psdl, path, opts)
  opts = opts or {}
  local osm = require "psdl.osm"
  local data, msg, code = osm.read(path)
  if not data then common.failure(common.exit_for(code), common.clean(msg)) end
  local net, report, ncode = osm.network(data, {})
  if not net then common.failure(common.exit_for(ncode), path .. ": " .. report) end
  if #net.roads == 0 then common.failure("bad_input", path .. ": no roads left to build a city from") end
  -- the same repairing, limit-fitting build as `psdl osm -o` (psdl.osm.city)
  local ok, doc, rep, res = xpcall(require("psdl.osm.city").build, function(e) return tostring(e) end, net, report,
    { style = opts.style, seed = opts.seed or 1, name = opts.name, max_rooms = opts.max_rooms,
      progress = opts.progress })
  if not ok then
    local m = tostring(doc)
    if m:find("does not validate", 1, true) then
      common.failure("problems", path .. ": " .. (m:gsub("^.-: the built", "the built")))
    end
    -- every line (capped): a message may list what it found under its first line
    if m:find("game's limits", 1, true) then common.failure("bad_input", path .. ": " .. whole(m)) end
    common.failure("bad_input", path .. ": the city cannot be built: "
      .. whole((m:gsub("^the city cannot be built: ", ""))))
  end
  return doc, rep, res
end

--- The kind of an input by its name: `"script"` (.lua), `"osm"` (.osm), else `"psdl"`.
-- @tparam string path
-- @treturn string
function M.kind(path)
  local lower = path:lower()
  if lower:match("%.lua$") then return "script" end
  if lower:match("%.osm$") then return "osm" end
  return "psdl"
end

--- A document from any input: read (.psdl), run and built (.lua) or imported (.osm).
-- @tparam table psdl
-- @tparam string path
-- @tparam[opt] table opts `seed`, `strict`, `style`, `poll` (scripts only, see `script_document`)
-- @treturn table document
-- @treturn table files to watch for changes (`{path}`, or the script and what it loaded)
-- @raise a failure naming the input
function M.document(psdl, path, opts)
  local kind = M.kind(path)
  if kind == "script" then
    local doc, _, files = M.script_document(psdl, path, opts)
    return doc, files
  elseif kind == "osm" then
    return (M.osm_document(psdl, path, opts)), { path }
  end
  local doc, err, code = common.load(psdl, path)
  if not doc then common.failure(common.exit_for(code), common.clean(err)) end
  return doc, { path }
end

--- Where a failure message points in a script: `"file.lua:12: message"` -> file, line.
-- @tparam string msg
-- @treturn string|nil file
-- @treturn integer|nil line
function M.location(msg)
  local file, line = tostring(msg):match("^([^:\n]+%.lua):(%d+):")
  return file, tonumber(line)
end

return M
