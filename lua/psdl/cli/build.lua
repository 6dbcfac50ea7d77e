--- `psdl build SCRIPT.lua [-o OUT.psdl] [--seed N] [--preview MAP.png]`: run a city script
-- and write the city it returns.
--
-- The script runs with `psdl` (the library) and `SEED` (the seed, or nil) as globals, its
-- own `arg` (`arg[0]` = the script), and `math.random` seeded from `--seed` (default 1). It
-- returns a `psdl.city` City (built here, with `--seed` when given) or a finished document.
-- The city is validated; the summary (rooms by kind, vertices, textures, road records,
-- network, blocks, validation warnings, timings) goes to standard output, then the file is
-- written atomically (`psdl.write`), then the preview drawn (`psdl.render`).
--
-- A script that fails (a syntax error, a runtime error, a road that cannot be built) is
-- reported with its file and line, e.g. `psdl build: examples/city.lua:12: bad argument #3
-- to 'road' (unknown profile 'avenu' ...)`, and nothing is written.
--
-- Exit code: 0 written; 1 usage error, or the city does not validate (with `--strict`: has
-- warnings); 2 the script fails or returns no city; 3 a file cannot be read or written.
-- @module psdl.cli.build

local common = require "psdl.cli.common"
local string, os, require, tonumber, tostring, type, math, setmetatable, getmetatable, loadfile, xpcall, debug, _G =
  string, os, require, tonumber, tostring, type, math, setmetatable, getmetatable, loadfile, xpcall, debug, _G

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Build a city from a Lua script (psdl.city) and write the PSDL."

--- Longer description shown by `psdl build --help`.
M.description = "Run a city script (it has 'psdl' and 'SEED' as globals and returns a psdl.city City, "
  .. "or a document), build the city, validate it, print a summary and write the PSDL atomically. "
  .. "--seed N overrides the city's seed (the same script and seed give the same bytes); "
  .. "--preview draws a top-down map of the result (PNG or SVG). A script error names the script "
  .. "line and leaves no file behind."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("script", "City script (Lua).")
  cmd:option("-o --output", "Output PSDL (default: the script's name with .psdl, in the current folder)."):argname("<out>")
  cmd:option("--seed", "Seed of the city's randomness (an integer)."):argname("<n>")
  cmd:option("--preview", "Also draw a map of the city: .png or .svg."):argname("<map>")
  cmd:option("--size", "Pixels on the long side of the preview (64-16384).", "2048"):argname("<n>")
  cmd:flag("--rooms", "Write room numbers on the preview.")
  cmd:flag("--strict", "Refuse a city with validation warnings too, and fail on the first road the build would "
    .. "have to repair or drop (without it: repaired, with a warning naming the script line).")
  cmd:flag("-q --quiet", "Print nothing on success.")
end

local function first_line(s)
  s = tostring(s)
  return s:match("^[^\n]*")
end

-- Runs the script; returns its first result or raises a failure naming the script line.
local function run_script(psdl, path, seed)
  local env = setmetatable({ psdl = psdl, SEED = seed, arg = { [0] = path } }, { __index = _G })
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
  return result
end

--- Run `psdl build`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local seed
  if args.seed then
    seed = math.tointeger(tonumber(args.seed))
    if not seed then common.failure("usage", string.format("--seed: an integer expected, got %q", args.seed)) end
  end
  local size = math.tointeger(tonumber(args.size))
  if not size or size < 64 or size > 16384 then
    common.failure("usage", string.format("--size: integer 64-16384 expected, got %q", args.size))
  end
  if args.preview and not (args.preview:lower():match("%.png$") or args.preview:lower():match("%.svg$")) then
    common.failure("usage", "--preview: a .png or .svg file expected, got " .. args.preview)
  end
  local psdl = common.psdl()
  local out = args.output
  if not out then
    local base = args.script:match("([^/\\]*)$"):gsub("%.lua$", "")
    out = base .. ".psdl"
  end
  local result = run_script(psdl, args.script, seed)
  local doc, report
  local City = psdl.city.City
  if type(result) == "table" and getmetatable(result) == City then
    local ok, d, rep = xpcall(result.build, function(e) return tostring(e) end, result, { seed = seed,
                                                                                           strict = args.strict })
    if not ok then
      local msg = first_line(d)
      if d:find("does not validate", 1, true) then
        common.failure("problems", args.script .. ": " .. tostring(d):gsub("^.-: the built", "the built"))
      end
      common.failure("bad_input", msg:find(args.script, 1, true) and msg or (args.script .. ": " .. msg))
    end
    doc, report = d, rep
    -- roads the build had to repair or drop (psdl.city.repair): warnings naming the script line
    for _, e in ipairs(rep.repairs or {}) do
      ctx.stderr:write(string.format("psdl build: warning: %s %s: %s\n", e.action, e.reason, first_line(e.detail)))
    end
  elseif type(result) == "table" and type(result.rooms) == "table" and type(result.vertices) == "table" then
    doc = result
    local ok, problems, counts = psdl.validate(doc, { strict = args.strict })
    if counts.errors > 0 or (args.strict and not ok) then
      local p = problems[1]
      common.failure("problems", string.format("%s: the document does not validate: %d errors, %d warnings (%s %s: %s)",
        args.script, counts.errors, counts.warnings, p.rule, p.path, p.message))
    end
    report = { problems = problems, counts = counts }
  else
    common.failure("bad_input", args.script .. ": the script must return a city (psdl.city.new{...}) or a document, "
      .. "got " .. (result == nil and "nothing" or type(result)))
  end
  local ok, err, code = psdl.write(doc, out, { strict = args.strict })
  if not ok then common.failure(common.exit_for(code), common.clean(err)) end
  if not args.quiet then
    if report.kinds then
      ctx.stdout:write(psdl.city.summary(report, out), "\n")
    else
      ctx.stdout:write(string.format("%s: %s rooms, %s vertices, %s textures, %s road records; %d errors, %d warnings\n",
        out, common.int(#doc.rooms), common.int(#doc.vertices), common.int(#doc.textures), common.int(#(doc.roads or {})),
        report.counts.errors, report.counts.warnings))
    end
  end
  if args.preview then
    local r, rerr, rcode = require("psdl.render").render(doc, { output = args.preview, size = size, rooms = args.rooms,
      title = out:match("([^/\\]*)$") })
    if not r then
      common.failure(rcode == "usage" and "usage" or common.exit_for(rcode), (common.clean(rerr):gsub("^usage: ", "")))
    end
    if not args.quiet then
      ctx.stdout:write(string.format("%s: %d x %d px map\n", args.preview, r.width, r.height))
    end
  end
  return ctx.exit.ok
end

return M
