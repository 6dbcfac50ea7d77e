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
-- With `--watch` the command stays running and builds again each time the script or a file
-- it loaded (`require`, `dofile`, `loadfile`) changes; a failed build prints its error and
-- leaves the last good file untouched.
--
-- Exit code: 0 written; 1 usage error, or the city does not validate (with `--strict`: has
-- warnings); 2 the script fails or returns no city; 3 a file cannot be read or written.
-- @module psdl.cli.build

local common = require "psdl.cli.common"
local source = require "psdl.cli.source"
local string, require, tonumber, tostring, math, pcall =
  string, require, tonumber, tostring, math, pcall

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
  cmd:flag("--strict", "Refuse a city with validation warnings too.")
  cmd:flag("-q --quiet", "Print nothing on success.")
  cmd:flag("--watch", "Keep running: build again whenever the script or a file it loads changes "
    .. "(a failed build is reported and leaves the last good file in place). Ctrl-C stops.")
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
  if args.watch then return M.watch(args, ctx, psdl, out, seed, size) end
  local doc, report = source.script_document(psdl, args.script, { seed = seed, strict = args.strict })
  M.write(args, ctx, psdl, doc, report, out, size)
  return ctx.exit.ok
end

--- Write a built city, print its summary and draw the preview (`psdl build` after a build).
-- @raise a failure when the file cannot be written
function M.write(args, ctx, psdl, doc, report, out, size)
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
end

--- `psdl build --watch`: build, then build again on every change of the script or a file
-- it loaded. Runs until the process is ended.
-- @treturn integer exit code (only when `args.watch_stop` ends the loop: tests)
function M.watch(args, ctx, psdl, out, seed, size)
  local watch = require "psdl.watch"
  watch.loop {
    fallback = { args.script },
    stop = args.watch_stop,
    changed = function(p) ctx.stdout:write(string.format("psdl build: %s changed, building again\n", p)) end,
    build = function()
      local files
      local ok, err = pcall(function()
        local doc, report, f = source.script_document(psdl, args.script, { seed = seed, strict = args.strict })
        files = f
        M.write(args, ctx, psdl, doc, report, out, size)
      end)
      if not ok then
        if not common.is_failure(err) then err = { msg = "internal error: " .. tostring(err) } end
        ctx.stderr:write(string.format("psdl build: %s (the last good %s stays)\n", err.msg, out))
        files = source.last_files -- what the failed run had read: the script at least
      end
      if ctx.stdout.flush then ctx.stdout:flush() end
      return files
    end,
  }
  return ctx.exit.ok
end

return M
