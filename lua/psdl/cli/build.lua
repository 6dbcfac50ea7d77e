--- `psdl build SCRIPT.lua [-o OUT.psdl] [--seed N] [--preview MAP.png]`: run a city script
-- and write the city it returns.
--
-- The script runs in a sandbox (`psdl.sandbox`: the library, string/table/math/utf8,
-- reading files under its own folder, no os/io; `--trust` gives full access) with a time
-- limit (`--timeout`, default 120 s) and a memory limit (`--max-memory`, default 4,096 MB),
-- with `psdl` (the library), `SEED` (the seed, or nil) and `SCRIPT_DIR` as globals, its
-- own `arg` (`arg[0]` = the script), and `math.random` seeded from `--seed` (default 1). It
-- returns a `psdl.city` City (built here, with `--seed` when given) or a finished document.
-- Going past a limit, or touching what the sandbox does not allow, stops the build with
-- a message naming the script line; nothing is written.
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
local string, require, tonumber, tostring, type, math, getmetatable, pcall, error =
  string, require, tonumber, tostring, type, math, getmetatable, pcall, error

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
  cmd:option("--size", "Pixels on the long side of the preview (PNG 64-8192, SVG 64-16384).", "2048"):argname("<n>")
  cmd:flag("--rooms", "Write room numbers on the preview.")
  cmd:flag("--strict", "Refuse a city with validation warnings too.")
  cmd:flag("--trust", "Run the script with full access (os, io, any file); by default it runs in a sandbox "
    .. "(the psdl library, string/table/math/utf8, reading files under its own folder).")
  cmd:option("--timeout", "Stop the script after this many seconds of processor time (0: no limit).",
    "120"):argname("<s>")
  cmd:option("--max-memory", "Stop the script when its Lua memory passes this many MB (0: no limit).",
    "4096"):argname("<mb>")
  cmd:flag("-q --quiet", "Print nothing on success.")
end

local function first_line(s)
  s = tostring(s)
  return s:match("^[^\n]*")
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
  local size = common.map_size(args.size, args.preview)
  if args.preview and not (args.preview:lower():match("%.png$") or args.preview:lower():match("%.svg$")) then
    common.failure("usage", "--preview: a .png or .svg file expected, got " .. args.preview)
  end
  local psdl = common.psdl()
  local out = args.output
  if not out then
    local base = args.script:match("([^/\\]*)$"):gsub("%.lua$", "")
    out = base .. ".psdl"
  end
  common.refuse_overwrite({ args.script }, { { out, "-o" }, { args.preview, "--preview" } })
  local timeout, max_memory = tonumber(args.timeout), math.tointeger(tonumber(args.max_memory))
  if not timeout or timeout < 0 or timeout ~= timeout then
    common.failure("usage", string.format("--timeout: seconds >= 0 expected, got %q", args.timeout))
  end
  if not max_memory or max_memory < 0 or max_memory > (1 << 40) then
    common.failure("usage", string.format("--max-memory: whole MB >= 0 expected, got %q", args.max_memory))
  end
  local sandbox = require "psdl.sandbox"
  local box = sandbox.new { script = args.script, trust = args.trust, timeout = timeout,
    max_memory = max_memory * 1024 * 1024, globals = { SEED = seed }, psdl = psdl }
  local chunk, lerr, lcode = box:loadfile()
  if not chunk then common.failure(lcode == "io" and "io" or "bad_input", first_line(lerr)) end
  -- the script, the city's build and the encoding all run in the box (limits, sandbox);
  -- what comes out is plain data: the file's bytes and the report
  local City = psdl.city.City
  local ok, bytes, report, kind = box:run(function()
    math.randomseed(seed or 1)
    local result = chunk()
    if type(result) == "table" and getmetatable(result) == City then
      local bok, d, rep = pcall(result.build, result, { seed = seed, strict = args.strict })
      if not bok then
        d = tostring(d)
        if d:find("does not validate", 1, true) then
          return nil, args.script .. ": " .. first_line(d):gsub("^.-: the built", "the built"), "problems"
        end
        error(d, 0)
      end
      return psdl.encode(d), sandbox.plain_copy(rep)
    elseif type(result) == "table" and type(result.rooms) == "table" and type(result.vertices) == "table" then
      local vok, problems, counts = psdl.validate(result, { strict = args.strict })
      if counts.errors > 0 or (args.strict and not vok) then
        local p = problems[1]
        return nil, string.format("%s: the document does not validate: %d errors, %d warnings (%s %s: %s)",
          args.script, counts.errors, counts.warnings, p.rule, p.path, p.message), "problems"
      end
      return psdl.encode(result), sandbox.plain_copy({ problems = problems, counts = counts })
    end
    return nil, args.script .. ": the script must return a city (psdl.city.new{...}) or a document, "
      .. "got " .. (result == nil and "nothing" or type(result)), "bad_input"
  end)
  if not ok then
    local msg = first_line(bytes)
    common.failure("bad_input", msg:find(args.script, 1, true) and msg or (args.script .. ": " .. msg))
  end
  if not bytes then common.failure(kind, report) end
  local doc = psdl.decode(bytes)
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
