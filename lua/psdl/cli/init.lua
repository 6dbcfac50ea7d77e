--- The `psdl` command line: argument parsing, dispatch to one module per subcommand,
-- exit codes and error printing.
--
--     psdl info FILE...                    counts, statistics, distance to the limits
--     psdl validate FILE... [--strict]     errors and warnings per file
--     psdl dump FILE [-o OUT.json]         the complete document as JSON
--     psdl undump FILE.json -o OUT.psdl    back to the identical PSDL bytes
--     psdl terrain info|export|import ...  The Sims 2 hood terrain (NHTG) and heightmaps
--     psdl retexture PATH... --rename/--map/--remap/--move/--swap/--compact
--                                          batch texture editing of files and folders
--     psdl diff A B [--json]               structural differences (exit 0 when equal)
--     psdl export FILE -o OUT.obj|.gltf|.glb  the city as triangles (full detail)
--     psdl render FILE -o MAP.png|.svg     a top-down map (--rooms, --problems)
--     psdl build SCRIPT.lua [-o OUT.psdl]  run a city script (psdl.city), write the city
--     psdl osm EXTRACT.osm [--network-json OUT.json] [--svg MAP.svg]
--                                          OpenStreetMap import: the cleaned road network
--     psdl package CITY.lua|.osm|.psdl -o MYCITY.ar  the whole add-on (docs/package.md)
--     psdl view CITY [-o CITY.html] [--watch]  the city in an interactive 3D page
--
-- Exit codes (`exit`): 0 ok; 1 usage error, or `validate` found problems that fail the
-- check; 2 bad input (not a PSDL file / psdlkit JSON document that can be decoded);
-- 3 I/O error; 4 internal error (a bug: message and traceback on stderr). Commands that
-- go through several files go on after a bad one and exit with the largest code met.
--
-- Expected failures print `psdl <verb>: <message>` on stderr.
--
-- A subcommand is a module `psdl.cli.<verb>` with `summary` (one line), `configure(cmd)`
-- (declares its arguments on an argparse command) and `run(args, ctx) -> exit code`;
-- adding one is writing that module and adding its name to `commands`.
-- @module psdl.cli

local argparse = require "argparse"
local common = require "psdl.cli.common"
local io, string, debug = io, string, debug
local require, pcall, xpcall, error, tostring, type, ipairs, rawequal, setmetatable =
  require, pcall, xpcall, error, tostring, type, ipairs, rawequal, setmetatable

local M = {}

--- Exit codes by name (see `psdl.cli.common.exit`).
M.exit = common.exit

--- Subcommands in the order `psdl --help` lists them; each is the module
-- `psdl.cli.<name>`.
M.commands = { "info", "validate", "dump", "undump", "terrain", "retexture", "diff", "export", "render", "build", "osm", "package", "view" }

local STOP = setmetatable({}, { __tostring = function() return "psdl.cli: stop parsing" end })

-- The command context handed to a subcommand's `run`: `verb`, `exit` (the exit-code
-- table), `stdout`, `stderr`, `stdin`, and the methods `fail` and `note`.
local Context = {}
Context.__index = Context

--- `ctx:fail(code, msg)`: print `psdl <verb>: <msg>` on stderr and return the exit code
-- for it (for a failure the command goes on after, such as one bad file of several).
-- @tparam integer|string code exit code or its name
-- @tparam string msg
-- @treturn integer the exit code
function Context:fail(code, msg)
  if type(code) == "string" then code = M.exit[code] end
  self.stderr:write(string.format("psdl %s: %s\n", self.verb, msg))
  return code
end

--- `ctx:note(msg)`: print `psdl <verb>: note: <msg>` on stderr.
-- @tparam string msg
function Context:note(msg)
  self.stderr:write(string.format("psdl %s: note: %s\n", self.verb, msg))
end

local function new_context(verb, streams)
  return setmetatable({
    verb = verb, exit = M.exit,
    stdout = streams.stdout, stderr = streams.stderr, stdin = streams.stdin,
  }, Context)
end

--- Build the argument parser.
-- @tparam table state receives `help` (text to print) or `usage`/`error` (a usage error)
--   when parsing stops early
-- @tparam[opt] string only a subcommand name: declare only that one (`main` does when the
--   first argument names a command: the other commands' modules are then never loaded,
--   which is most of a small command's start-up)
-- @treturn table the argparse parser
function M.parser(state, only)
  local function help_flag(p)
    p:add_help(false)
    p:flag("-h --help", "Show this help message and exit."):action(function()
      state.help = p:get_help()
      error(STOP, 0)
    end)
  end

  local parser = argparse("psdl", "Read, check and convert Midtown Madness 2 PSDL city files.")
    :epilog("Exit codes: 0 ok; 1 usage error or failed check; 2 bad input; 3 I/O error; "
      .. "4 internal error.\nRun 'psdl <command> --help' for a command's options.")
    :command_target("command")
    :help_description_margin(30)
    :help_max_width(100)
  help_flag(parser)
  parser:flag("--version", "Show the version and exit."):action(function()
    state.version = true
    error(STOP, 0)
  end)
  for _, name in ipairs(only and { only } or M.commands) do
    local mod = require("psdl.cli." .. name)
    local cmd = parser:command(name, mod.summary, mod.description)
    help_flag(cmd)
    mod.configure(cmd, help_flag) -- help_flag for sub-commands of their own (terrain)
  end
  -- argparse reports usage errors through the root parser's `error` method, with the
  -- (sub)command being parsed: record them instead of exiting the process.
  parser.error = function(p, msg)
    state.usage, state.error = p:get_usage(), msg
    error(STOP, 0)
  end
  return parser
end

local function version()
  local ok, psdl = pcall(require, "psdl")
  return "psdl (psdlkit) " .. (ok and type(psdl) == "table" and tostring(psdl._VERSION) or "(library not built)")
end

--- Run the command line.
-- @tparam table argv the arguments (`arg`: `argv[1]` is the subcommand; `argv[0]` is ignored)
-- @tparam[opt] table streams `{stdout=, stderr=, stdin=}` file-like objects (anything with
--   `write`, and `read` for stdin); default `io.stdout`, `io.stderr`, `io.stdin`
-- @treturn integer the exit code (see `exit`)
-- A stream that remembers the first write error (a full disk, a closed pipe), so the
-- command can end with an I/O failure instead of a silent success.
local function guarded(stream)
  local g = {}
  function g.write(self, ...)
    local ok, err = stream:write(...)
    if not ok and not g.error then g.error = err end
    return ok and self or nil, err
  end
  function g.flush()
    local ok, err = stream:flush()
    if not ok and not g.error then g.error = err end
    return ok, err
  end
  return g
end

--- Joins a long option and a following negative number into one argument
-- (`--bbox -75.16,39.97,...` -> `--bbox=-75.16,39.97,...`, `--seed -1` -> `--seed=-1`):
-- argparse would take the number for an option (western longitudes, southern latitudes).
-- @tparam table args the arguments
-- @treturn table the arguments, joined where needed
function M.join_negative_values(args)
  local out, i = {}, 1
  while i <= #args do
    local a, nxt = args[i], args[i + 1]
    if a:match("^%-%-[%w][%w%-]*$") and nxt and nxt:match("^%-%.?%d") then
      out[#out + 1] = a .. "=" .. nxt
      i = i + 2
    else
      out[#out + 1] = a
      i = i + 1
    end
  end
  return out
end

function M.main(argv, streams)
  streams = streams or {}
  streams = {
    stdout = streams.stdout or guarded(io.stdout), stderr = streams.stderr or io.stderr,
    stdin = streams.stdin or io.stdin,
  }
  local args = {}
  for i = 1, argv and #argv or 0 do args[i] = tostring(argv[i]) end
  args = M.join_negative_values(args)

  local verb = "psdl"
  local function handler(err)
    if common.is_failure(err) or rawequal(err, STOP) or common.is_core_missing(err) then return err end
    return debug.traceback(tostring(err), 2)
  end
  local ok, result = xpcall(function()
    local state = {}
    local only
    for _, name in ipairs(M.commands) do
      if args[1] == name then only = name end
    end
    local parser = M.parser(state, only)
    local pok, parsed = pcall(parser.parse, parser, args)
    if state.help then
      streams.stdout:write(state.help, "\n")
      return M.exit.ok
    elseif state.version then
      streams.stdout:write(version(), "\n")
      return M.exit.ok
    elseif state.error then
      -- the usage, then the message with the command's prefix like every other message
      -- ("psdl osm: --bbox: ...")
      local words = {}
      for w in state.usage:gmatch("%S+") do
        if w:match("^[%[<%(%-{]") then break end
        if w ~= "Usage:" then words[#words + 1] = w end
      end
      local prefix = #words > 0 and table.concat(words, " ") or "psdl"
      streams.stderr:write(string.format("%s\n%s: %s\n", state.usage, prefix, state.error))
      return M.exit.usage
    elseif not pok then
      error(parsed, 0)
    end
    verb = parsed.command
    local mod = require("psdl.cli." .. verb)
    return mod.run(parsed, new_context(verb, streams))
  end, handler)

  if ok then
    -- output that could not be written (a full disk, a closed pipe) is an I/O failure
    if streams.stdout.error ~= nil or (streams.stdout.flush and not streams.stdout:flush() and true) then
      streams.stderr:write(string.format("psdl %s: standard output: %s\n", verb,
        tostring(streams.stdout.error or "write failed")))
      return M.exit.io
    end
    return result
  end
  if common.is_failure(result) then
    streams.stderr:write(string.format("psdl %s: %s\n", verb, result.msg))
    return result.code
  end
  if common.is_core_missing(result) then -- before anything was built: a hint, not a traceback
    streams.stderr:write(string.format("psdl %s: %s\n", verb, common.build_hint()))
    return M.exit.io
  end
  streams.stderr:write(string.format("psdl %s: internal error: %s\n", verb, tostring(result)))
  return M.exit.internal
end

return M
