--- Helpers shared by the `psdl` subcommands: exit codes, failures, file I/O, number
-- formatting and loading a PSDL document from a file.
--
-- Subcommand modules report *expected* failures in one of two ways: a per-file problem is
-- printed with `ctx:fail(code, msg)` and the command goes on with the next file; a failure
-- that ends the command raises `common.failure(code, msg)`, which `psdl.cli.main` turns
-- into `psdl <verb>: <msg>` on stderr and the exit code. Anything else that raises is an
-- internal error (exit code `internal`, with a traceback).
-- @module psdl.cli.common

local io, os, string, math, table = io, os, string, math, table
local type, setmetatable, getmetatable, require, pcall, tostring, tonumber, select, error, assert, ipairs, pairs =
  type, setmetatable, getmetatable, require, pcall, tostring, tonumber, select, error, assert, ipairs, pairs

local M = {}

--- Exit codes returned by `psdl.cli.main`, by name. When a command meets several
-- outcomes (for example one file with problems and one that cannot be decoded), it
-- exits with the largest code.
-- @table exit
-- @field ok 0: success; `validate`: every file is clean
-- @field usage 1: bad command line (usage error)
-- @field problems 1: `validate` found problems that fail the check
-- @field bad_input 2: an input is not a valid PSDL file or psdlkit JSON document
-- @field io 3: a file could not be opened, read or written
-- @field internal 4: unexpected error (a bug): message and traceback on stderr
M.exit = { ok = 0, usage = 1, problems = 1, bad_input = 2, io = 3, internal = 4 }

local FAILURE = {}
FAILURE.__index = FAILURE
FAILURE.__tostring = function(f) return f.msg end

--- Raise an expected failure that ends the current command.
-- @tparam string|integer code a name from `exit` (or the code itself)
-- @tparam string msg what went wrong, without the `psdl <verb>: ` prefix
-- @raise always
function M.failure(code, msg)
  if type(code) == "string" then code = assert(M.exit[code], code) end
  error(setmetatable({ code = code, msg = M.strip_internal(msg) }, FAILURE), 0)
end

--- A message without the library's own source positions (`scripts/../lua/psdl/city/init.lua:434: `):
-- a user needs the script line and the file, not where psdlkit raised it.
-- @param msg any value (non-strings are returned as they are)
-- @return the message
function M.strip_internal(msg)
  if type(msg) ~= "string" then return msg end
  return (msg:gsub("[^%s:\"'(]*lua/psdl/[%w_/]+%.lua:%d+: ", ""))
end

--- The most lines of an error message the CLI prints (`message`): a validation failure
-- lists its problems one a line (the builder at most eight of each kind).
M.MAX_MESSAGE_LINES = 40

--- The most characters of one line of an error message (`message`).
M.MAX_MESSAGE_LINE = 2000

--- An error message as the CLI prints it: every line (a multi-line error such as the
-- builder's "does not validate:" followed by its problems), at most `max_lines` of them
-- (default `MAX_MESSAGE_LINES`), then "... and N more lines"; a line longer than
-- `MAX_MESSAGE_LINE` characters is cut, saying how many were left out. Trailing blank
-- lines are dropped.
-- @param msg any value (`tostring`)
-- @tparam[opt] integer max_lines
-- @treturn string
function M.message(msg, max_lines)
  max_lines = max_lines or M.MAX_MESSAGE_LINES
  local lines = {}
  for line in (tostring(msg):gsub("%s+$", "") .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  local out = {}
  for i = 1, math.min(#lines, max_lines) do
    local line = lines[i]
    if #line > M.MAX_MESSAGE_LINE then
      line = line:sub(1, M.MAX_MESSAGE_LINE) .. string.format(" ... (%d more characters)", #line - M.MAX_MESSAGE_LINE)
    end
    out[#out + 1] = line
  end
  if #lines > max_lines then
    local n = #lines - max_lines
    out[#out + 1] = string.format("  ... and %d more line%s", n, n == 1 and "" or "s")
  end
  return table.concat(out, "\n")
end

--- Whether an error value was raised by `failure`.
-- @param err any error value
-- @treturn boolean
function M.is_failure(err)
  return getmetatable(err) == FAILURE
end

--- The exit code for a fail code from the psdl API (`"io"` is an I/O error, every other
-- code means the input is bad).
-- @tparam string|nil code the third value of a `nil, msg, code` return
-- @treturn integer
function M.exit_for(code)
  if code == "io" then return M.exit.io end
  if code == "nomem" then return M.exit.internal end
  return M.exit.bad_input
end

--- Strip the `psdl: ` prefix the library puts on its messages (the CLI adds its own), and
-- positions inside the library's own files (`.../lua/psdl/init.lua:216: `), which say
-- nothing to a user (`psdl.sandbox.clean_message`).
-- @tparam string msg
-- @treturn string
function M.clean(msg)
  msg = require("psdl.sandbox").clean_message(tostring(msg))
  return (msg:gsub("^psdl: ", ""))
end

--- Load the `psdl` library, failing with a clear message when the C module is missing.
-- @treturn table the `psdl` module
-- @raise a failure (`internal`) when it cannot be loaded
function M.psdl()
  local ok, psdl = pcall(require, "psdl")
  if not ok then
    if M.is_core_missing(psdl) then M.failure("io", M.build_hint()) end
    M.failure("internal", "cannot load the psdl library: " .. (tostring(psdl):match("^[^\n]*")))
  end
  return psdl
end

--- Whether an error says the C module `psdl.core` (psdl/core.so) is not there.
-- @param err an error value
-- @treturn boolean
function M.is_core_missing(err)
  return type(err) == "string" and err:find("module 'psdl.core' not found", 1, true) ~= nil
end

--- The message for a missing C module: what to run to build it (exit code `io`).
-- @treturn string
function M.build_hint()
  local cli = package.loaded["psdl.cli"]
  local root = cli and cli.root
  local where = cli and cli.build_dir and (" (looked in " .. cli.build_dir .. ")") or ""
  local r = root and (root:match("^(.+)/scripts/%.%.$") or (root == "scripts/.." and ".") or root) or "."
  return string.format("the C module psdl/core.so is not built yet%s: build it with 'cmake -S %s -B %s/build "
    .. "&& cmake --build %s/build' (or run %s/scripts/run), or set PSDL_BUILD_DIR to the folder that holds "
    .. "psdl/core.so", where, r, r, r, r)
end

--- The most read from an input that is not a regular file (a pipe, `/dev/stdin`, a device
-- such as `/dev/zero`): 64 MiB, far above any city or package (the largest PSDL the game
-- takes is a few MB), so an endless stream stops there instead of filling the memory.
M.MAX_STREAM = 64 * 1024 * 1024

--- Read a whole file. A regular file is read whole; anything else (a pipe, a device) is
-- read up to `MAX_STREAM` bytes (`max`), past which it is refused naming the file.
-- @tparam string path
-- @tparam[opt] integer max bytes, default `MAX_STREAM`
-- @treturn[1] string its bytes
-- @treturn[2] nil
-- @treturn[2] string message
-- @treturn[2] string `"io"`
function M.read_file(path, max)
  local f, err = io.open(path, "rb")
  if not f then return nil, err, "io" end
  local attr = require("lfs").attributes(path)
  if attr and attr.mode == "file" then
    local data, rerr = f:read("a")
    f:close()
    if not data then return nil, path .. ": " .. tostring(rerr), "io" end
    return data
  end
  max = max or M.MAX_STREAM
  local parts, n = {}, 0
  while true do
    local chunk, rerr = f:read(math.min(1 << 20, max + 1 - n))
    if not chunk then
      f:close()
      if rerr then return nil, path .. ": " .. tostring(rerr), "io" end
      return table.concat(parts)
    end
    n = n + #chunk
    parts[#parts + 1] = chunk
    if n > max then
      f:close()
      return nil, string.format("%s: not a regular file, and longer than the %s bytes read from a pipe or device "
        .. "(docs/cli.md, \"Safety of inputs and outputs\")", path, M.int(max)), "io"
    end
  end
end

--- Write a file atomically through `psdl.write_file` (temporary file in the same folder,
-- synced, permissions kept, renamed; links followed; devices such as /dev/stdout written
-- directly).
-- @tparam string path
-- @tparam string data
-- @treturn[1] true
-- @treturn[2] nil
-- @treturn[2] string message `"<path>: <reason>"`
-- @treturn[2] string `"io"`
function M.write_file_atomic(path, data)
  local ok, err, code = require("psdl").write_file(path, data)
  if not ok then return nil, (err:gsub("^psdl: io: ", "")), code end
  return true
end

--- Whether two names are the same existing file: same device and inode, so symbolic links,
-- hard links and spellings such as `./a` and `dir/../a` all count. Devices, pipes and
-- names that do not exist are never "the same file" (writing `/dev/stdout` is fine).
-- @tparam string a
-- @tparam string b
-- @treturn boolean
function M.same_file(a, b)
  if type(a) ~= "string" or type(b) ~= "string" or a == "-" or b == "-" then return false end
  local lfs = require "lfs"
  local x, y = lfs.attributes(a), lfs.attributes(b)
  if not x or not y or x.mode ~= "file" or y.mode ~= "file" then return false end
  return x.dev == y.dev and x.ino == y.ino
end

-- A path's identity for comparing outputs that may not exist yet: the real path of its
-- folder and its own name (or the path as given when the folder cannot be resolved).
local function path_key(path)
  local dir, name = path:match("^(.*)/([^/]*)$")
  if not dir then dir, name = ".", path end
  if dir == "" then dir = "/" end
  local ok, core = pcall(require, "psdl.core")
  local real = ok and type(core) == "table" and core.real_path and core.real_path(dir)
  if not real then return path end
  local lfs = require "lfs"
  local full = real .. "/" .. name
  -- an existing link is the file it leads to
  local attr = lfs.symlinkattributes(full)
  if attr and attr.mode == "link" then
    local target = core.real_path(full)
    if target then return target end
  end
  return full
end

--- Check every output of a command before anything is built or written: no two outputs
-- are the same file, no output is one of the inputs (`same_file`; a `usage` failure, exit
-- 1, naming both), and each output can be written (`check_outputs`; an `io` failure, exit
-- 3). Call it before any work, so a bad `--preview` folder is found before the city is
-- built and nothing is written.
-- @tparam table inputs input paths (nil entries skipped)
-- @tparam table outputs `{ {path, option}, ... }`: each output and the option naming it
--   (e.g. `"-o"`); nil paths and `"-"` (standard output) skipped
-- @tparam[opt] table opts `folders_made = true`: the command makes the outputs' folders
--   itself (retexture --out), so their writability is not checked here
-- @raise a failure (`usage` or `io`)
function M.refuse_overwrite(inputs, outputs, opts)
  -- two outputs of one command must not be the same file either (the second would
  -- replace the first after both were reported written)
  local seen = {}
  for _, out in ipairs(outputs) do
    local path, option = out[1], out[2]
    if path and path ~= "-" then
      local key = path_key(path)
      if seen[key] then
        M.failure("usage", string.format("%s %s and %s %s are the same file: choose different output names",
          seen[key][2], seen[key][1], option, path))
      end
      seen[key] = out
    end
  end
  for _, out in ipairs(outputs) do
    local path, option = out[1], out[2]
    if path then
      for _, input in pairs(inputs) do
        if M.same_file(input, path) then
          M.failure("usage", string.format("%s %s is the input file %s: refusing to overwrite an input "
            .. "(choose another output name)", option, path, input))
        end
      end
    end
  end
  if not (opts and opts.folders_made) then M.check_outputs(outputs) end
end

--- Raise an `io` failure (exit 3) unless every output can be written: not a folder, its
-- folder exists and takes new files (`psdl.core.check_output`). Writes nothing.
-- @tparam table outputs `{ {path, option}, ... }` (nil paths and `"-"` skipped)
-- @raise a failure (`io`) naming the option and the path
function M.check_outputs(outputs)
  local ok, core = pcall(require, "psdl.core")
  if not ok or type(core) ~= "table" or not core.check_output then return end -- the build hint comes later
  for _, out in ipairs(outputs) do
    local path, option = out[1], out[2]
    if path and path ~= "-" then
      local good, msg = core.check_output(path)
      if not good then
        msg = msg:gsub("^psdl: [%w_]+: ", ""):gsub("^" .. path:gsub("%p", "%%%0") .. ":%s*", "")
        M.failure("io", string.format("%s %s: %s", option, path, msg))
      end
    end
  end
end

--- Check a map size option (`--size` of render, build --preview, osm --preview): 64-8192 px
-- for a PNG map (its canvas holds 64 Mpixels), 64-16384 for SVG.
-- @tparam string text the option's text
-- @tparam[opt] string path the map's file name (its extension tells the format)
-- @tparam[opt] string format `"png"` or `"svg"` (overrides the extension)
-- @treturn integer the size
-- @raise a `usage` failure naming the range
function M.map_size(text, path, format)
  format = format or (path and path:lower():match("%.(svg)$")) or "png"
  local hi = format == "svg" and 16384 or require("psdl.render").PNG_MAX_SIZE
  local n = math.tointeger(tonumber(text))
  if not n or n < 64 or n > hi then
    M.failure("usage", string.format("--size: integer 64-%d expected for a%s map (PNG 64-8192, SVG 64-16384), got %q",
      hi, format == "svg" and "n SVG" or " PNG", tostring(text)))
  end
  return n
end

--- The integer of a `--seed` option (nil without one); anything else fails with "usage".
-- @tparam string|nil text the option's text
-- @treturn integer|nil
function M.seed(text)
  if text == nil then return nil end
  local seed = math.tointeger(tonumber(text))
  if not seed then M.failure("usage", string.format("--seed: an integer expected, got %q", text)) end
  return seed
end

--- Read and decode a PSDL file.
-- @tparam table psdl the `psdl` module
-- @tparam string path
-- @treturn[1] table the document
-- @treturn[1] integer the file size in bytes
-- @treturn[2] nil
-- @treturn[2] string message (without a `psdl: ` prefix, naming the file)
-- @treturn[2] string fail code (`"io"`, `"truncated"`, ...)
function M.load(psdl, path)
  local bytes, err, code = M.read_file(path)
  if not bytes then return nil, err, code end
  local doc, derr, dcode = psdl.decode(bytes)
  if not doc then return nil, path .. ": " .. M.clean(derr), dcode end
  return doc, #bytes
end

--- Format an integer with thousands separators (`65024` -> `"65,024"`).
-- @tparam number n
-- @treturn string
function M.int(n)
  if n == nil then return "?" end
  local s = string.format("%d", n)
  local sign, digits = s:match("^(-?)(%d+)$")
  digits = digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
  return sign .. digits
end

--- Format a number compactly for people: integers as they are, floats with the fewest
-- digits that read back as the same 32-bit float (or double).
-- @tparam number x
-- @treturn string
function M.num(x)
  return require("psdl.cli.docjson").number_text(x)
end

--- Collect command output in memory (for tests and for commands that build a result
-- before printing it). The returned object has `write(self, ...)` like a file, and
-- `text()` returns everything written so far.
-- @treturn table
function M.sink()
  local parts = {}
  return {
    write = function(self, ...)
      for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
      return self
    end,
    flush = function(self) return self end,
    text = function() return table.concat(parts) end,
  }
end

return M
