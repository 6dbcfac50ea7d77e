--- Turning what a command is given into a city document: a PSDL file, a city script
-- (`psdl build`'s scripts) or an OpenStreetMap extract. Shared by `psdl build` and
-- `psdl view`, and by their `--watch` loops, which need the files a script loaded.
--
-- Failures are raised with `common.failure` (see `psdl.cli.common`): a script error names
-- the script line (`examples/city.lua:12: bad argument #3 to 'road' (...)`).
-- @module psdl.cli.source

local common = require "psdl.cli.common"
local string, math, package = string, math, package
local require, tonumber, tostring, type, setmetatable, getmetatable, loadfile, dofile, xpcall, pcall, debug, ipairs, _G =
  require, tonumber, tostring, type, setmetatable, getmetatable, loadfile, dofile, xpcall, pcall, debug, ipairs, _G

local M = {}

local function first_line(s)
  s = tostring(s)
  return s:match("^[^\n]*")
end

-- Modules a script loaded last time (unloaded before it runs again, so an edit to them
-- is seen).
local script_modules = {}

--- The files the last `run_script` read (also when it failed): `{path, ...}`.
M.last_files = nil

--- Run a city script. It runs with `psdl` (the library) and `SEED` (the seed, or nil) as
-- globals, its own `arg` (`arg[0]` = the script) and `math.random` seeded from `seed`
-- (default 1). `require`, `dofile` and `loadfile` in the script record the files they load
-- (modules whose names start with `psdl` aside).
-- @tparam table psdl the `psdl` module
-- @tparam string path the script
-- @tparam[opt] integer seed
-- @return the script's first result
-- @treturn table the files the script read: `{path, ...}` (the script first)
-- @raise a failure (`io` when the script cannot be opened, `bad_input` for a script error,
--   naming the script line)
function M.run_script(psdl, path, seed)
  for _, name in ipairs(script_modules) do package.loaded[name] = nil end
  script_modules = {}
  local files, seen = { path }, { [path] = true }
  M.last_files = files
  local function note(file)
    if type(file) == "string" and not seen[file] then seen[file] = true; files[#files + 1] = file end
  end
  local env = setmetatable({ psdl = psdl, SEED = seed, arg = { [0] = path } }, { __index = _G })
  env.require = function(name, ...)
    if type(name) == "string" and not name:match("^psdl") and package.loaded[name] == nil then
      local file = package.searchpath(name, package.path)
      if file then
        note(file)
        script_modules[#script_modules + 1] = name
      end
    end
    return require(name, ...)
  end
  env.dofile = function(file, ...) note(file); return dofile(file, ...) end
  env.loadfile = function(file, ...) note(file); return loadfile(file, ...) end
  local chunk, err = loadfile(path, "t", env)
  if not chunk then
    if tostring(err):find("cannot open", 1, true) then common.failure("io", first_line(err)) end
    common.failure("bad_input", first_line(err))
  end
  math.randomseed(seed or 1)
  local ok, result = xpcall(chunk, function(e)
    if type(e) ~= "string" then e = tostring(e) end
    -- name the script line when the message does not already
    if not e:find(path, 1, true) then
      local tb = debug.traceback("", 2)
      local line = tb:match("\n%s*(" .. path:gsub("%p", "%%%0") .. ":%d+):")
      if line then e = line .. ": " .. e end
    end
    return e
  end)
  if not ok then common.failure("bad_input", first_line(result)) end
  return result, files
end

--- Run a city script and build the city it returns (a `psdl.city` City, built with `seed`,
-- or a finished document, validated).
-- @tparam table psdl
-- @tparam string path
-- @tparam[opt] table opts `seed`, `strict`
-- @treturn table document
-- @treturn table report (`psdl.city`'s build report, or `{problems =, counts =}`)
-- @treturn table files the script read
-- @raise a failure naming the script (line)
function M.script_document(psdl, path, opts)
  opts = opts or {}
  local result, files = M.run_script(psdl, path, opts.seed)
  local City = psdl.city.City
  if type(result) == "table" and getmetatable(result) == City then
    local ok, d, rep = xpcall(result.build, function(e) return tostring(e) end, result,
      { seed = opts.seed, strict = opts.strict })
    if not ok then
      local msg = first_line(d)
      if d:find("does not validate", 1, true) then
        common.failure("problems", path .. ": " .. tostring(d):gsub("^.-: the built", "the built"))
      end
      common.failure("bad_input", msg:find(path, 1, true) and msg or (path .. ": " .. msg))
    end
    return d, rep, files
  elseif type(result) == "table" and type(result.rooms) == "table" and type(result.vertices) == "table" then
    local ok, problems, counts = psdl.validate(result, { strict = opts.strict })
    if counts.errors > 0 or (opts.strict and not ok) then
      local p = problems[1]
      common.failure("problems", string.format("%s: the document does not validate: %d errors, %d warnings (%s %s: %s)",
        path, counts.errors, counts.warnings, p.rule, p.path, p.message))
    end
    return result, { problems = problems, counts = counts }, files
  end
  common.failure("bad_input", path .. ": the script must return a city (psdl.city.new{...}) or a document, "
    .. "got " .. (result == nil and "nothing" or type(result)))
end

--- Import an OpenStreetMap extract into a city as `psdl osm -o` does with its defaults
-- (footprint buildings, cleaned network).
-- @tparam table psdl
-- @tparam string path
-- @tparam[opt] table opts `seed`, `style`
-- @treturn table document
-- @treturn table the city's build report
-- @raise a failure naming the extract
function M.osm_document(psdl, path, opts)
  opts = opts or {}
  local osm = require "psdl.osm"
  local data, msg, code = osm.read(path)
  if not data then common.failure(common.exit_for(code), common.clean(msg)) end
  local net = osm.network(data, {})
  if #net.roads == 0 then common.failure("bad_input", path .. ": no roads left to build a city from") end
  local ok, city = pcall(psdl.city.from_network, net, { style = opts.style, seed = opts.seed or 1 })
  if not ok then common.failure("bad_input", path .. ": " .. common.clean(city)) end
  city:blocks { buildings = false }
  local ok2, doc, rep = xpcall(city.build, function(e) return tostring(e) end, city, { seed = opts.seed })
  if not ok2 then
    common.failure("bad_input", path .. ": the city cannot be built: " .. first_line(doc))
  end
  return doc, rep
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
-- @tparam[opt] table opts `seed`, `strict`, `style`
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
