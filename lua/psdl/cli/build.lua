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
-- network, blocks and their notes, validation warnings, timings) goes to standard output, then the file is
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
local string, require, tonumber, tostring, math, pcall, ipairs, type =
  string, require, tonumber, tostring, math, pcall, ipairs, type

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Build a city from a Lua script (psdl.city) and write the PSDL."

--- Longer description shown by `psdl build --help`.
M.description = "Run a city script (it has 'psdl' and 'SEED' as globals and returns a psdl.city City, "
  .. "or a document), build the city, validate it, print a summary and write the PSDL atomically. "
  .. "--seed N overrides the city's seed (the same script and seed give the same bytes); "
  .. "--preview draws a top-down map of the result (PNG or SVG). A script error names the script "
  .. "line and leaves no file behind."

--- Declare the sandbox options of a command that runs city scripts (`build`, `package`,
-- `view`): `--trust`, `--timeout`, `--max-memory`.
-- @tparam table cmd the argparse command
function M.sandbox_options(cmd)
  cmd:flag("--trust", "Run the script with full access (os, io, any file); by default it runs in a sandbox "
    .. "(the psdl library, string/table/math/utf8, reading files under its own folder).")
  cmd:option("--timeout", "Stop the script after this many seconds of processor time (0: no limit).",
    "120"):argname("<s>")
  cmd:option("--max-memory", "Stop the script when its Lua memory passes this many MB (0: no limit).",
    "4096"):argname("<mb>")
end

--- The sandbox settings of parsed arguments (see `sandbox_options`) for `psdl.cli.source`.
-- @raise a usage failure for a bad `--timeout` or `--max-memory`
-- @treturn table `{trust =, timeout = seconds, max_memory = MB}`
function M.sandbox_settings(args)
  local timeout, max_memory = tonumber(args.timeout or "120"), math.tointeger(tonumber(args.max_memory or "4096"))
  if not timeout or timeout < 0 or timeout ~= timeout then
    common.failure("usage", string.format("--timeout: seconds >= 0 expected, got %q", args.timeout))
  end
  if not max_memory or max_memory < 0 or max_memory > (1 << 40) then
    common.failure("usage", string.format("--max-memory: whole MB >= 0 expected, got %q", args.max_memory))
  end
  return { trust = args.trust, timeout = timeout, max_memory = max_memory }
end

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("script", "City script (Lua).")
  cmd:option("-o --output", "Output PSDL (default: the script's name with .psdl, in the current folder; - for standard "
    .. "output, the summary then goes to standard error)."):argname("<out>")
  cmd:option("--seed", "Seed of the city's randomness (an integer)."):argname("<n>")
  cmd:option("--preview", "Also draw a map of the city: .png or .svg."):argname("<map>")
  cmd:option("--size", "Pixels on the long side of the preview (PNG 64-8192, SVG 64-16384).", "2048"):argname("<n>")
  cmd:flag("--rooms", "Write room numbers on the preview.")
  cmd:flag("--strict", "Refuse a city with validation warnings too, and fail on the first road the build would "
    .. "have to repair or drop (without it: repaired, with a warning naming the script line).")
  M.sandbox_options(cmd)
  cmd:flag("-q --quiet", "Print nothing on success.")
  cmd:option("--package", "Also package the city as an MM2 add-on (.ar, as 'psdl package' does)."):argname("<out.ar>")
  require("psdl.cli.package").options(cmd, true)
  cmd:flag("--watch", "Keep running: build again whenever the script or a file it loads changes "
    .. "(a failed build is reported and leaves the last good file in place). Ctrl-C stops.")
end

--- Run `psdl build`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local seed = common.seed(args.seed)
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
  local outputs = { { out, "-o" }, { args.preview, "--preview" }, { args.package, "--package" } }
  common.refuse_overwrite({ args.script }, outputs)
  if args.package and not args.package:lower():match("%.ar$") then common.failure("usage", "--package: an .ar file expected") end
  local box = M.sandbox_settings(args)
  if args.package then require("psdl.cli.package").check_name(args) end -- before the build
  if args.watch and out == "-" then common.failure("usage", "--watch writes a file again on each change: -o - is not one") end
  if args.watch then return M.watch(args, ctx, psdl, out, seed, size, box, outputs) end
  -- (outputs: one that the script loaded or read is refused before anything is written)
  local doc, report, _, meta = source.script_document(psdl, args.script, { seed = seed, strict = args.strict, sandbox = box,
                                                                          decode = false, outputs = outputs })
  M.write(args, ctx, psdl, doc, report, out, size, meta)
  return ctx.exit.ok
end

--- Write a built city, print its summary and draw the preview (`psdl build` after a build).
-- The bytes validated in the sandbox (`report.checked`) are written as they are; the
-- document table is made from them only for what needs one (a document's summary, the
-- preview, the package). The PSDL, the package and the preview are all made before any of
-- them is written (`psdl.cli.outputs`): a failure in any leaves every existing file as it was.
-- @tparam table|nil doc the document, or nil when `report.checked` has its bytes
-- @raise a failure when the file cannot be written
function M.write(args, ctx, psdl, doc, report, out, size, meta)
  -- roads the build had to repair or drop (psdl.city.repair): warnings naming the script line
  for _, e in ipairs(report and report.repairs or {}) do
    -- "dropped road 5 at city.lua:9 (leaves a node along another road): <what the layout said>"
    ctx.stderr:write(string.format("psdl build: warning: %s %s (%s): %s\n", e.action, e.ref or ("road " .. tostring(e.road)),
      e.reason, tostring(e.detail):match("^[^\n]*")))
  end
  -- what the build left out and went on without (an override in no block, psdl.city)
  for _, w in ipairs(report and report.warnings or {}) do
    if type(w) == "string" then ctx.stderr:write("psdl build: warning: ", common.message(w, 1), "\n") end
  end
  local ok, err, code
  -- (the PSDL, the package and the preview are written together at the end: psdl.cli.outputs)
  local outputs = require("psdl.cli.outputs").new()
  -- `-o -`: the PSDL to standard output (as dump/undump), the summary to standard error
  local info = out == "-" and ctx.stderr or ctx.stdout
  if out == "-" then
    local checked = report.checked
    if not checked then
      local _
      _, _, _, checked = require("psdl.document").check(doc, { strict = args.strict }, true)
    end
    if not checked or checked.errors > 0 or (args.strict and checked.warnings > 0) then
      common.failure("problems", string.format("-o -: the city does not validate%s: %d errors, %d warnings",
        args.strict and " (strict)" or "", checked and checked.errors or 0, checked and checked.warnings or 0))
    end
    ok, err = ctx.stdout:write(checked.bytes)
    if not ok then common.failure("io", "standard output: " .. tostring(err)) end
  else
    local document = require "psdl.document"
    if report.checked then
      ok, err, code = document.checked_bytes(report.checked, out, { strict = args.strict })
    else
      ok, err, code = document.bytes(doc, out, { strict = args.strict })
    end
    if ok then outputs:add(out, ok) end
  end
  if not ok then common.failure(common.exit_for(code), common.clean(err)) end
  if not doc and (not report.kinds or args.package or args.preview) then
    local derr
    doc, derr = psdl.decode(report.checked.bytes)
    if not doc then common.failure("internal", out .. ": the built city does not decode: " .. tostring(derr)) end
  end
  if not args.quiet then
    if report.kinds then
      info:write(psdl.city.summary(report, out), "\n")
      M.print_block_notes(info, report.blocks)
    else
      info:write(string.format("%s: %s rooms, %s vertices, %s textures, %s road records; %d errors, %d warnings\n",
        out, common.int(#doc.rooms), common.int(#doc.vertices), common.int(#doc.textures), common.int(#(doc.roads or {})),
        report.counts.errors, report.counts.warnings))
    end
  end
  local rooms = doc and #doc.rooms or report.rooms
  -- (psdl.package and what it loads, ~3 ms, only for a city over the package limit)
  local over = not args.package and rooms and rooms > require("psdl.package.cpvs_gen").MAX_ROOM_ID
    and require("psdl.package").room_warning(rooms, args.script)
  if over and not args.quiet then ctx.stderr:write("psdl build: warning: ", out, ": ", over, "\n") end
  if args.package then
    meta = meta or {}
    require("psdl.cli.package").package(doc, args, meta.package or {}, meta.name or out:match("([^/\\]*)$"):gsub("%.psdl$", ""),
      ctx, args.package, nil, { args.script, out }, nil, outputs)
  end
  if args.preview then
    local render = require "psdl.render"
    local r, rerr, rcode = render.render(doc, { format = render.format_of(args.preview), size = size,
      rooms = args.rooms, title = out:match("([^/\\]*)$") })
    if not r then
      common.failure(common.exit_for(rcode), common.clean(rerr))
    end
    outputs:add(args.preview, r.bytes)
    if not args.quiet then
      info:write(string.format("%s: %d x %d px map\n", args.preview, r.width, r.height))
    end
  end
  outputs:commit()
end

--- The most block notes `psdl build` prints (`print_block_notes`).
M.MAX_BLOCK_NOTES = 20

--- Print the notes of a city's blocks (`report.blocks.warnings`: building heights or levels
-- ignored, footprints left out, ...) under the summary, as `psdl osm` does: a
-- `  blocks: N notes` line, then one indented line each, at most `MAX_BLOCK_NOTES`, then
-- `... and N more`.
-- @param out a writable file (`write`)
-- @tparam table|nil blocks the build report's `blocks`
function M.print_block_notes(out, blocks)
  local notes = type(blocks) == "table" and blocks.warnings
  if type(notes) ~= "table" or #notes == 0 then return end
  out:write(string.format("  blocks: %d note%s\n", #notes, #notes == 1 and "" or "s"))
  for k, w in ipairs(notes) do
    if k > M.MAX_BLOCK_NOTES then
      out:write(string.format("    ... and %d more\n", #notes - M.MAX_BLOCK_NOTES))
      break
    end
    out:write("    ", common.message(w, 1), "\n")
  end
end

--- `psdl build --watch`: build, then build again on every change of the script or a file
-- it loaded. Runs until the process is ended.
-- @treturn integer exit code (only when `args.watch_stop` ends the loop: tests)
function M.watch(args, ctx, psdl, out, seed, size, box, outputs)
  local watch = require "psdl.watch"
  watch.loop {
    fallback = { args.script },
    stop = args.watch_stop,
    changed = function(p) ctx.stdout:write(string.format("psdl build: %s changed, building again\n", p)) end,
    build = function()
      local files
      local ok, err = pcall(function()
        local doc, report, f, meta = source.script_document(psdl, args.script,
          { seed = seed, strict = args.strict, sandbox = box, decode = false, outputs = outputs })
        files = f
        M.write(args, ctx, psdl, doc, report, out, size, meta)
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

--- Run a city script as `psdl build` does (see `psdl.cli.source.run_script`); returns its
-- first result. `opts`: `sandbox = {trust =, timeout = s, max_memory = MB}`.
function M.run_script(psdl, path, seed, opts)
  return (source.run_script(psdl, path, seed, opts))
end

return M
