--- Running a city script from someone else: a sandbox and time and memory limits
-- (`psdl build`; docs/city.md "Sandbox").
--
-- By default a script runs in a **sandbox**. Its globals are:
--
-- * the `psdl` library (a read-only view: the script cannot replace library functions);
-- * `string`, `table`, `math`, `utf8`, `coroutine` (copies), the base functions (`print`,
--   `pairs`, `ipairs`, `select`, `type`, `tostring`, `tonumber`, `pcall`, `xpcall`, `error`,
--   `assert`, `next`, `rawget`, `rawset`, `rawequal`, `rawlen`, `setmetatable`,
--   `getmetatable`, `load` (text only, into the sandbox), `collectgarbage("count")`), `_VERSION`;
-- * `os.time`, `os.clock`, `os.date` and no other `os` function;
-- * `io.open(path)` / `io.lines(path)` reading (never writing) files under the script's
--   folder (heightmaps, OSM extracts, data tables); library functions that read files
--   (`psdl.read`, `psdl.terrain.load`, `psdl.osm.import`) get the same rule, and no library
--   function may write a file while the script runs;
-- * `require` of the public library (`psdl` and the modules of `M.MODULES`, read-only
--   views too) and of Lua modules in the script's own folder (`require "streets"` loads
--   `<folder>/streets.lua`, sandboxed too); never `psdl.core`, `psdl.control`,
--   `psdl.sandbox` or `psdl.cli.*`;
-- * `SCRIPT_DIR` (the script's folder), `arg` (`arg[0]` = the script) and what the caller
--   adds (`psdl build` adds `SEED`).
--
-- What the script may not touch gives an error naming the script line and the function,
-- e.g. `city.lua:3: os.execute is not available in a sandboxed city script (psdl build
-- --trust gives full access)`. With `trust = true` (`psdl build --trust`) the script gets
-- the full standard library instead; `os.exit` then raises an error rather than ending the
-- program. `psdl.city` used from plain Lua is not sandboxed at all.
--
-- Both modes have a **time limit** (seconds of processor time, checked about every 10 ms of
-- it; the default of `psdl build --timeout` is 120) and a **memory
-- limit** on the Lua heap (bytes; `--max-memory` default 4,096 MB): exceeding either stops
-- the script with a message naming the script line it was on. A script cannot catch these
-- two errors (`pcall` passes them on).
--
-- A host may also give a **poll** function (`psdl view --watch` serves HTTP and watches
-- files with it while a script runs): the limit hook calls it outside the sandbox's rules
-- (full library, no memory limit, its processor time not counted against the script's),
-- and when it returns true the script is stopped (`"superseded"`, uncatchable too).
-- @module psdl.sandbox

local core = require "psdl.core"
local control = require "psdl.control"
local debug, coroutine, string, table, math, utf8, os, io, package =
  debug, coroutine, string, table, math, utf8, os, io, package
local type, tostring, error, pcall, xpcall, setmetatable, getmetatable, rawget, rawset, rawequal, rawlen,
  next, pairs, ipairs, select, tonumber, assert, load, loadfile, print, collectgarbage, require =
  type, tostring, error, pcall, xpcall, setmetatable, getmetatable, rawget, rawset, rawequal, rawlen,
  next, pairs, ipairs, select, tonumber, assert, load, loadfile, print, collectgarbage, require

local M = {}

--- Default time limit, seconds.
M.DEFAULT_TIMEOUT = 120

--- Default memory limit, bytes (4,096 MB).
M.DEFAULT_MAX_MEMORY = 4096 * 1024 * 1024

-- Instructions between two checks of the limits where there is no processor-time timer
-- (control.tick: a timer whose signal sets a one-shot hook, so that the script runs unhooked;
-- a count hook makes Lua 5.4 trap on every instruction).
local HOOK_COUNT = 10000
local tick, tick_thread = control.tick, control.tick_thread

-- The error value that stops a script (time or memory): pcall inside the sandbox passes
-- it on.
local Stop = {}
Stop.__index = Stop
Stop.__tostring = function(s) return s.msg end

local function is_stop(e) return getmetatable(e) == Stop end

local function copy(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end

-- Copy plain data (tables by next, no metamethods run; strings, numbers, booleans): what
-- leaves the sandbox, so nothing the script attached (a metatable, a function) runs later
-- outside it.
local function plain_copy(v, seen)
  local t = type(v)
  if t ~= "table" then
    if t == "string" or t == "number" or t == "boolean" then return v end
    return nil
  end
  seen = seen or {}
  if seen[v] then return seen[v] end
  local c = {}
  seen[v] = c
  for k, x in next, v do
    local ck = plain_copy(k, seen)
    if ck ~= nil then c[ck] = plain_copy(x, seen) end
  end
  return c
end
M.plain_copy = plain_copy

--- A message without positions inside psdlkit's own Lua files
-- (`/.../lua/psdl/init.lua:216: bad argument ...` -> `bad argument ...`): a user should
-- read their own file and field, not the library's internals.
-- @tparam string msg
-- @treturn string
function M.clean_message(msg)
  msg = tostring(msg)
  local prev
  repeat
    prev = msg
    msg = msg:gsub("^[^\n:]*/lua/psdl/[%w_/]+%.lua:%d+: ", ""):gsub("^%[string \"psdl[^\"]*\"%]:%d+: ", "")
  until msg == prev
  return (msg:gsub("(: )[^\n: ]*/lua/psdl/[%w_/]+%.lua:%d+: ", "%1"))
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- The script line a stop or error happened on: the innermost frame, from `level` of the
-- caller's stack outwards (1: the caller), whose source is one of the sandbox's own chunks
-- (the script or its modules), as "file:line" (control.script_line: the limit hook asks this
-- every few thousand instructions, so the walk is in C).
local script_line_at = control.script_line
local function script_line(box, level)
  return script_line_at(box.chunks, level or 1)
end

------------------------------------------------------------------------ the box

local Box = {}
Box.__index = Box

--- Largest number of matching steps a pattern may be expected to take in a sandbox.
M.PATTERN_STEPS = 1e9

--- Whether a pattern match is bounded enough to run in the sandbox. Lua's pattern matcher
-- runs in C, out of reach of the `--timeout` hook, and backtracks: a pattern with k
-- unbounded repetitions (`*`, `+`, `-`) can take about n^k steps on a subject of n bytes
-- (`("a"):rep(30000):find(".-.-.-.-.-.-b")` runs for hours). A match is refused when
-- n^k exceeds `PATTERN_STEPS` with k >= 3 (a final `.*`/`.-` not counted; one or two
-- repetitions, the usual `^(%S+)%s+(.*)$` line parsing, always run); plain finds always run.
-- @tparam any subject
-- @tparam any pattern
-- @tparam[opt] boolean plain `string.find`'s plain flag
-- @treturn boolean
-- @treturn[opt] string why not
function M.pattern_cost_ok(subject, pattern, plain)
  if plain or type(subject) ~= "string" or type(pattern) ~= "string" then return true end
  local n = #subject
  if n < 64 then return true end
  local k, i, len = 0, 1, #pattern
  while i <= len do
    local c = pattern:sub(i, i)
    if c == "%" then
      i = i + 2
    elseif c == "[" then -- a set: up to its closing bracket (a ']' first is part of it)
      local j = i + 1
      if pattern:sub(j, j) == "^" then j = j + 1 end
      if pattern:sub(j, j) == "]" then j = j + 1 end
      while j <= len and pattern:sub(j, j) ~= "]" do
        if pattern:sub(j, j) == "%" then j = j + 1 end
        j = j + 1
      end
      i = j + 1
    else
      i = i + 1
    end
    local q = pattern:sub(i, i)
    if q == "*" or q == "+" or q == "-" then k = k + 1; i = i + 1 elseif q == "?" then i = i + 1 end
  end
  -- a last "anything" repetition ("(.*)$", ".-)$") takes the rest in one step
  if pattern:match("%.[%*%-%+]%)*%$?$") and not pattern:match("%%%.[%*%-%+]%)*%$?$") then k = k - 1 end
  if k >= 3 and k * math.log(n, 10) > math.log(M.PATTERN_STEPS, 10) then
    return false, string.format("a pattern with %d repetitions over %d bytes could run for hours (Lua's matcher "
      .. "is out of reach of --timeout): match shorter pieces (one line at a time)", k, n)
  end
  return true
end

--- The modules a sandboxed script may `require` besides its own folder's: the public
-- library, each as the same read-only view as the global `psdl` gives (docs/city.md
-- "Sandbox" lists them with the reason). Not listed, and refused: `psdl.core` (the C
-- module: raw file writes, decoders without the library's checks), `psdl.control` (the
-- write switch, the limits, the heap, Ctrl-C), `psdl.sandbox` (a box made with
-- `trust = true` hands out the host's `os` and `io`), `psdl.cli.*` (the commands: they
-- write files and end the process), `psdl.view`, `psdl.serve`, `psdl.watch` (HTTP server,
-- file watching), `psdl.package` (writes archives and folders), and the library's internal
-- modules (`psdl.city.road`, `psdl.plan`, ...: reachable through the public ones where
-- they are meant to be).
M.MODULES = {
  "psdl", "psdl.city", "psdl.builder", "psdl.geom", "psdl.terrain", "psdl.osm", "psdl.styles",
  "psdl.styles.london", "psdl.styles.sf", "psdl.retexture", "psdl.companion", "psdl.bai", "psdl.cpvs",
  "psdl.inst", "psdl.pathset", "psdl.pkg", "psdl.tex", "psdl.propcsv",
}
local MODULE_SET = {}
for _, name in ipairs(M.MODULES) do MODULE_SET[name] = true end

-- The message for a psdl module the sandbox does not give.
local function module_denied(name)
  return string.format("require %q: not available in a sandboxed city script, which can require only the "
    .. "public library (%s) and Lua modules of its own folder (psdl build --trust gives full access)", name,
    table.concat(M.MODULES, ", "))
end

--- Make a sandbox for one script.
-- @tparam table opts `script` (path of the script), `trust` (full access), `timeout`
--   (seconds; default `DEFAULT_TIMEOUT`; 0 = none), `max_memory` (bytes; default
--   `DEFAULT_MAX_MEMORY`; 0 = none), `globals` (extra globals), `psdl` (the library table;
--   default `require "psdl"`), `poll` (function() -> true to stop the script; called about
--   every 10 ms of processor time while the script runs, see above)
-- @treturn table the box: `box:load()`, `box:run(fn, ...)`, `box.env`
function M.new(opts)
  assert(type(opts) == "table" and type(opts.script) == "string", "psdl.sandbox.new: opts.script expected")
  local box = setmetatable({
    script = opts.script, trust = opts.trust and true or false,
    timeout = opts.timeout or M.DEFAULT_TIMEOUT, max_memory = opts.max_memory or M.DEFAULT_MAX_MEMORY,
    poll = opts.poll,
    chunks = {},          -- chunk source ("@path") -> path, for script lines
    reads = {},           -- real paths of the files the script read with io.open (the library too)
    modules = {},         -- sandboxed modules loaded by require
    script_mts = setmetatable({}, { __mode = "k" }), -- metatables the script set
    depth = 0,
  }, Box)
  box.root = core.real_path(dirname(opts.script))
  -- absolute, so that SCRIPT_DIR .. "/x" names the same file from any folder, in both modes
  box.dir = box.root or dirname(opts.script)
  local psdl = opts.psdl or require "psdl"
  box.env = box.trust and box:trusted_env(psdl) or box:sandbox_env(psdl)
  for k, v in pairs(opts.globals or {}) do box.env[k] = v end
  box.env.SCRIPT_DIR = box.dir
  box.env.arg = { [0] = opts.script }
  return box
end

-- The message for something the sandbox does not allow.
local function denied(what)
  return what .. " is not available in a sandboxed city script (psdl build --trust gives full access)"
end

--- Whether a file may be read from the sandbox: it must exist and lie under the script's
-- folder (compared by real path, so links and `..` cannot leave it).
-- @tparam string path
-- @treturn[1] string the real path
-- @treturn[2] nil
-- @treturn[2] string message
-- @treturn[2] boolean true when the file exists but lies outside the folder
function Box:readable(path)
  if type(path) ~= "string" then return nil, "a file name expected" end
  -- a relative name is under the script's folder (as `require` looks there), not under
  -- whatever folder psdl was started from
  if path:sub(1, 1) ~= "/" and self.dir then path = self.dir .. "/" .. path end
  local real, err = core.real_path(path)
  if not real then return nil, (tostring(err):gsub("^psdl: io: ", "")) end
  local root = self.root
  if root and (real == root or real:sub(1, #root + 1) == (root == "/" and "/" or root .. "/")) then
    return real
  end
  return nil, string.format("%s: outside the script's folder %s: a sandboxed city script reads only files "
    .. "under its own folder (psdl build --trust gives full access)", path, self.dir), true
end

-- io.open as the sandbox allows it: read modes only, under the script's folder.
function Box:guarded_open(real_open)
  return function(path, mode)
    mode = mode or "r"
    if type(mode) ~= "string" or not mode:match("^r[b]?$") then
      -- a capability the sandbox withholds, like os.execute: an error at the script's line
      error(tostring(path) .. ": " .. denied("io.open for writing (mode " .. tostring(mode) .. ")"), 2)
    end
    local real, err, outside = self:readable(path)
    -- a file outside the folder stops the script at its line (a nil would let it go on
    -- without its data); a missing file is nil, message, as io.open gives
    if outside then error(err, 2) end
    if not real then return nil, err end
    local f, oerr, code = real_open(real, mode)
    if f then self.reads[#self.reads + 1] = real end
    return f, oerr, code
  end
end

-- io.open / io.lines of a trusted script (any file, any mode): the files opened for
-- reading are recorded (`box.reads`), so that the command refuses to write over them.
function Box:recording_open(real_open, lines)
  return function(path, ...)
    local r = table.pack(real_open(path, ...))
    local mode = ...
    if r[1] and type(path) == "string" and (lines or mode == nil or (type(mode) == "string" and mode:match("^r[b]?$"))) then
      self.reads[#self.reads + 1] = core.real_path(path) or path
    end
    return table.unpack(r, 1, r.n)
  end
end

-- A read-only view of a library table: functions run inside the box (`Box:inside`), nested
-- tables are viewed the same way, nothing can be assigned. Views passed back to a library
-- function are replaced by the tables they show (also one level down in an options table).
local function read_only(box, t, cache)
  if cache[t] then return cache[t] end
  local view = {}
  cache[t] = view
  cache.real[view] = t
  setmetatable(view, {
    __index = function(_, k)
      local v = t[k]
      if type(v) == "table" then return read_only(box, v, cache) end
      if type(v) == "function" then
        -- the script line that takes a library function, as the line of last resort for an
        -- error the function raises when the script tail-calls it (`return psdl.f(x)` leaves
        -- no frame of the script on the stack; Box:run)
        local w = script_line(box, 2)
        if w then box.last_line = w end
        if not cache.fn[v] then
          local name = type(k) == "string" and k or "?"
          cache.fn[v] = function(...)
            return (function(ok, ...)
              if ok then return ... end
              local e = ...
              if type(e) ~= "string" then error(e, 0) end
              -- the library's own position says nothing to the script's author: the
              -- error is raised again at the script's line, naming the function
              e = M.clean_message(e):gsub("to 'fn'", "to '" .. name .. "'", 1)
              error(e, 2)
            end)(pcall(box.inside, box, v, cache.unwrap(...)))
          end
        end
        return cache.fn[v]
      end
      return v
    end,
    __newindex = function(_, k)
      error(string.format("cannot assign %s in the psdl library from a sandboxed city script", tostring(k)), 2)
    end,
    __pairs = function()
      return function(_, k)
        local nk = next(t, k)
        if nk == nil then return nil end
        return nk, view[nk]
      end, view, nil
    end,
    __len = function() return #t end,
    __metatable = false,
  })
  return view
end

local function view_cache()
  local cache = { real = setmetatable({}, { __mode = "k" }), fn = setmetatable({}, { __mode = "k" }) }
  local real = cache.real
  local function unwrap_one(v)
    if type(v) ~= "table" then return v end
    local r = real[v]
    if r then return r end
    -- an options table holding views: a copy with the real tables
    local fixed
    for k, x in next, v do
      if type(x) == "table" and real[x] then
        fixed = fixed or copy(v)
        fixed[k] = real[x]
      end
    end
    if fixed and getmetatable(v) == nil then return fixed end
    return v
  end
  function cache.unwrap(...)
    local n = select("#", ...)
    if n == 0 then return end
    local args = { ... }
    for i = 1, n do args[i] = unwrap_one(args[i]) end
    return table.unpack(args, 1, n)
  end
  return cache
end

function Box:sandbox_env(psdl)
  local box = self
  local env = {}
  local lib_cache = view_cache()
  -- (box.views.real[view] -> the library table it shows: for audits, spec/sandbox_reach_spec.lua)
  box.views = lib_cache
  env.psdl = read_only(box, psdl, lib_cache)
  env.string, env.table, env.math, env.utf8 = copy(string), copy(table), copy(math), copy(utf8)
  env.string.dump = function() error(denied("string.dump"), 2) end
  for _, name in ipairs { "find", "match", "gmatch", "gsub" } do
    local f = string[name]
    env.string[name] = function(subject, pattern, ...)
      local ok, why = M.pattern_cost_ok(subject, pattern, name == "find" and select(2, ...))
      if not ok then error(string.format("string.%s: %s", name, why), 2) end
      return f(subject, pattern, ...)
    end
  end
  -- what ("..."):find(...) finds while the box runs (Box:inside): the guarded functions, in
  -- a table of the box's own that the script never holds, so that a script that replaces
  -- string.match in its own `string` changes nothing for the library or the host's poll
  box.string_methods = copy(env.string)
  env.os = {
    time = os.time, clock = os.clock, date = os.date,
  }
  setmetatable(env.os, { __index = function(_, k) error(denied("os." .. tostring(k)), 2) end })
  local real_open = io.open
  local open = self:guarded_open(real_open)
  env.io = setmetatable({
    open = open,
    lines = function(path, ...)
      local f, err = open(path, "r")
      if not f then error(err, 2) end
      return f:lines(...)
    end,
  }, { __index = function(_, k) error(denied("io." .. tostring(k)), 2) end })
  for _, name in ipairs { "print", "pairs", "ipairs", "select", "type", "tostring", "tonumber", "error",
    "assert", "next", "rawget", "rawequal", "rawlen" } do
    env[name] = _G[name]
  end
  env._VERSION = _VERSION
  env.rawset = function(t, k, v)
    if getmetatable(t) == false then error("cannot assign in the psdl library from a sandboxed city script", 2) end
    return rawset(t, k, v)
  end
  -- metatables: the script sees and changes only those it set itself (not the string
  -- metatable or the library's classes); no finalizers (__gc would run outside the box)
  env.setmetatable = function(t, mt)
    if type(t) ~= "table" then error("bad argument #1 to 'setmetatable' (table expected)", 2) end
    local cur = getmetatable(t)
    if cur ~= nil and not box.script_mts[cur] then
      error("setmetatable: this table's metatable belongs to the psdl library", 2)
    end
    if mt ~= nil then
      if type(mt) ~= "table" then error("bad argument #2 to 'setmetatable' (nil or table expected)", 2) end
      if rawget(mt, "__gc") ~= nil then error(denied("a __gc metamethod"), 2) end
      box.script_mts[mt] = true
    end
    return setmetatable(t, mt)
  end
  env.getmetatable = function(v)
    local mt = getmetatable(v)
    if mt ~= nil and box.script_mts[mt] then return mt end
    if type(mt) == "table" and rawget(mt, "__metatable") ~= nil then return rawget(mt, "__metatable") end
    return nil
  end
  -- pcall/xpcall do not catch the stop of the time or memory limit
  env.pcall = function(f, ...)
    return (function(ok, ...)
      if not ok and (is_stop((...)) or box.stopped or control.memory_exceeded()) then error(box.stopped or (...), 0) end
      return ok, ...
    end)(pcall(f, ...))
  end
  env.xpcall = function(f, handler, ...)
    return (function(ok, ...)
      if not ok and (box.stopped or control.memory_exceeded()) then error(box.stopped or (...), 0) end
      return ok, ...
    end)(xpcall(f, function(e)
      if is_stop(e) or box.stopped or control.memory_exceeded() then return box.stopped or e end
      return handler(e)
    end, ...))
  end
  env.collectgarbage = function(what, ...)
    what = what or "collect"
    if what == "count" or what == "collect" or what == "step" or what == "isrunning" then
      return collectgarbage(what, ...)
    end
    error(denied("collectgarbage(\"" .. tostring(what) .. "\")"), 2)
  end
  env.load = function(chunk, name, mode, cenv)
    if mode ~= nil and mode ~= "t" then return nil, denied("load of binary chunks") end
    if cenv ~= nil then return nil, denied("load with an environment") end
    return load(chunk, name, "t", env)
  end
  local co = copy(coroutine)
  co.create, co.resume, co.wrap = box:coroutines()
  env.coroutine = co
  env.require = function(name)
    if type(name) ~= "string" then error("bad argument #1 to 'require' (string expected)", 2) end
    if name == "psdl" then return env.psdl end
    if name:match("^psdl%.") then
      -- the public library only (M.MODULES): never psdl.core, psdl.control, psdl.sandbox,
      -- psdl.cli.* or a module that writes files, runs programs or changes the limits
      if not MODULE_SET[name] then error(module_denied(name), 2) end
      return read_only(box, require(name), lib_cache)
    end
    if box.modules[name] ~= nil then return box.modules[name] end
    if not name:match("^[%w_]+$") and not name:match("^[%w_]+[%.%w_]*[%w_]$") then
      error(string.format("require %q: a sandboxed city script can require psdl modules and Lua modules of "
        .. "its own folder only", name), 2)
    end
    local path = box.dir .. "/" .. name:gsub("%.", "/") .. ".lua"
    -- (readable takes the absolute name: a relative one is taken under the script's folder again)
    local ok, err = box:readable(path:sub(1, 1) == "/" and path or (core.real_path(".") or ".") .. "/" .. path)
    if not ok then
      error(string.format("require %q: no module %s in the script's folder (a sandboxed city script can "
        .. "require psdl modules and Lua modules of its own folder only)", name, path), 2)
    end
    local fn, lerr = box:loadfile(path)
    if not fn then error(lerr, 2) end
    local result = fn(name, path)
    if result == nil then result = true end
    box.modules[name] = result
    return result
  end
  env._G = env
  return env
end

-- The real coroutine functions (a trusted run swaps the global ones for `Box:coroutines`).
local co_create, co_resume = coroutine.create, coroutine.resume

--- The box's coroutine `create`, `resume` and `wrap`: each new coroutine gets the limit
-- hook (the count hook where there is no tick), the tick hooks a coroutine while it is
-- resumed (the tick hooks one thread, the one running), and resume passes a stop on. The
-- sandbox's `coroutine` holds them, and a trusted run puts them in the global `coroutine`
-- table while it runs (`inside`), so that `--timeout` stops a loop inside a coroutine there
-- too.
-- @treturn function create
-- @treturn function resume
-- @treturn function wrap
function Box:coroutines()
  local box = self
  local function create(f)
    local thread = co_create(f)
    box:hook(thread)
    return thread
  end
  local function resume(thread, ...)
    local outer = box.ticking and type(thread) == "thread" and tick_thread(thread)
    return (function(ok, ...)
      if outer then tick_thread(outer) end
      if not ok and (box.stopped or control.memory_exceeded()) then error(box.stopped or (...), 0) end
      return ok, ...
    end)(co_resume(thread, ...))
  end
  local function wrap(f)
    local thread = create(f)
    return function(...)
      return (function(ok, ...)
        if not ok then error((...), 0) end
        return ...
      end)(resume(thread, ...))
    end
  end
  return create, resume, wrap
end

function Box:trusted_env(psdl)
  local env = setmetatable({ psdl = psdl }, { __index = _G })
  local fake_os = copy(os)
  fake_os.exit = function(code)
    error(string.format("the script called os.exit(%s): a city script returns its city instead", tostring(code)), 2)
  end
  env.os = fake_os
  return env
end

--- Load a chunk of the script (or of one of its modules) into the box's environment.
-- @tparam[opt] string path default the script
-- @treturn[1] function
-- @treturn[2] nil
-- @treturn[2] string message
-- @treturn[2] string `"io"` when the file cannot be opened or read (a missing file, a
--   folder), else `"syntax"`
function Box:loadfile(path)
  path = path or self.script
  local fn, err = loadfile(path, "t", self.env)
  if not fn then
    err = tostring(err)
    local io_error = err:find("^cannot open ") or err:find("^cannot read ")
    return nil, err, io_error and "io" or "syntax"
  end
  self.chunks["@" .. path] = path
  return fn
end

-- The limits' check, from the tick or the count hook: it checks the time limit, remembers the
-- script line the script is on (for the message of the memory limit, whose error carries no
-- position) and calls the poll.
function Box:check()
  if self.stopped then error(self.stopped, 0) end
  local where = script_line(self, 1)
  if where then self.last_line = where end
  if self.poll and self:outside(self.poll) then
    self.stopped = setmetatable({ msg = string.format("%sthe run was superseded", where and (where .. ": ") or ""),
      kind = "superseded" }, Stop)
    error(self.stopped, 0)
  end
  if self.deadline and os.clock() > self.deadline then
    self.stopped = setmetatable({ msg = string.format("%sthe script ran longer than --timeout %s s",
      where and (where .. ": ") or "", tostring(self.timeout)), kind = "timeout" }, Stop)
    error(self.stopped, 0)
  end
end

-- Install the limit hook on a thread (nil: the running one), a count hook calling Box:check;
-- nothing while the tick runs (it hooks the thread the script is in, Box:run).
function Box:hook(thread)
  if not self.hooked or self.ticking then return end
  local box = self
  local function check() return box:check() end
  if thread then debug.sethook(thread, check, "", HOOK_COUNT) else debug.sethook(check, "", HOOK_COUNT) end
end

-- Call the host's `fn()` from the limit hook as if the script were not running: library
-- writes and file reads as outside the box, no memory limit, and the processor time it
-- takes added to the script's deadline. Returns fn's first result (an error in fn is raised).
function Box:outside(fn)
  local t0 = os.clock()
  local inside = self.depth > 0 and not self.trust
  local deny, open, sindex
  local smt = getmetatable("")
  if inside then
    deny = control.deny_writes(self.prev_deny)
    open = io.open
    io.open = self.prev_open
    -- the host's string methods (not the pattern guards) for the host's code
    if smt and self.prev_sindex then sindex = smt.__index; smt.__index = self.prev_sindex end
  end
  -- (an exceeded limit that library code caught stays in force, so that run() still sees it)
  local stats = self.memory_cap and control.memory_stats()
  local lift = stats and not stats.exceeded
  if lift then control.memory_limit(0) end
  local ok, r = pcall(fn)
  if lift then control.memory_limit(self.memory_cap) end
  if inside then
    control.deny_writes(deny)
    io.open = open
    if sindex then smt.__index = sindex end
  end
  if self.deadline then self.deadline = self.deadline + (os.clock() - t0) end
  if not ok then error(r, 0) end
  return r
end

--- Run `fn(...)` inside the box: library writes denied and file reads limited to the
-- script's folder (sandbox mode), the time and memory limits in force. Re-entrant (the
-- read-only library view calls it for each library function).
-- @tparam function fn
-- @return what `fn` returns; raises what it raises (a stop as a table whose `tostring` is
--   the message)
function Box:inside(fn, ...)
  if self.depth > 0 then return fn(...) end
  self.depth = 1
  local prev_deny, prev_open, prev_sindex
  local smt = getmetatable("")
  if not self.trust then
    prev_deny = control.deny_writes(true)
    prev_open = io.open
    io.open = self:guarded_open(prev_open)
    self.prev_deny, self.prev_open = prev_deny, prev_open -- for Box:outside
    -- ("..."):find(...) goes through the string metatable: the guarded copies there too
    -- (never the script's `string`, which it may change: Box:sandbox_env)
    if smt and self.string_methods then prev_sindex = smt.__index; smt.__index = self.string_methods end
    self.prev_sindex = prev_sindex
  else
    prev_open, self.prev_lines = io.open, io.lines
    io.open, io.lines = self:recording_open(prev_open), self:recording_open(io.lines, true)
    -- the script's and its modules' coroutines: hooked while they run (Box:coroutines)
    self.prev_co = { coroutine.create, coroutine.resume, coroutine.wrap }
    coroutine.create, coroutine.resume, coroutine.wrap = self:coroutines()
  end
  local function leave()
    self.depth = 0
    if not self.trust then
      control.deny_writes(prev_deny)
      io.open = prev_open
      if prev_sindex then smt.__index = prev_sindex end
    else
      io.open, io.lines = prev_open, self.prev_lines
      coroutine.create, coroutine.resume, coroutine.wrap = table.unpack(self.prev_co)
    end
  end
  return (function(ok, ...)
    leave()
    if not ok then error((...), 0) end
    return ...
  end)(pcall(fn, ...))
end

--- Run `fn(...)` in the box with the limits, and report a failure with the script line.
-- @tparam function fn
-- @treturn[1] true
-- @return[1] ... what `fn` returns
-- @treturn[2] false
-- @treturn[2] string message naming the script line (`"city.lua:12: ..."`)
-- @treturn[2] string `"timeout"`, `"memory"`, `"superseded"` (the poll stopped it) or `"error"`
function Box:run(fn, ...)
  local box = self
  self.stopped = nil
  if self.timeout and self.timeout > 0 then self.deadline = os.clock() + self.timeout else self.deadline = nil end
  local old_hook = { debug.gethook() }
  self.hooked = self.deadline ~= nil or (self.max_memory and self.max_memory > 0) or self.poll ~= nil
  local outer_fn, outer_thread
  if self.hooked and tick then
    -- the tick in place of the count hook (an outer sandbox's tick comes back afterwards)
    debug.sethook()
    outer_fn, outer_thread = tick(function() return box:check() end)
    self.ticking = true
  end
  self:hook(nil)
  if self.max_memory and self.max_memory > 0 then
    collectgarbage("collect")
    -- the limit is on what the script adds to the heap: the host (psdl build, a test
    -- runner, an editor plugin) may already hold any amount
    self.memory_cap = self.max_memory + math.floor(collectgarbage("count") * 1024)
    control.memory_limit(self.memory_cap)
  end
  local function memory_stop(where)
    box.stopped = setmetatable({ msg = string.format("%sthe script used more than --max-memory %d MB",
      where and (where .. ": ") or (box.script .. ": "), box.max_memory // (1024 * 1024)), kind = "memory" }, Stop)
    return box.stopped
  end
  local function handler(e)
    local stats = control.memory_stats()
    if box.stopped then return box.stopped end
    if is_stop(e) then return e end
    local where = script_line(box, 1)
    if stats and stats.exceeded then return memory_stop(where or box.last_line) end
    if type(e) ~= "string" then e = tostring(e) end
    e = M.clean_message(e)
    if where and not e:find(where:match("^(.*):%d+$"), 1, true) then e = where .. ": " .. e end
    if not where and box.last_line and not e:find(box.last_line:match("^(.*):%d+$") .. ":", 1, true) then
      -- no frame of the script: the error came from a function it tail-called (`return f(x)`
      -- replaces the script's frame); the last script line seen is named, as approximate
      e = string.format("%s: %s (about this line: the error came from a call made with `return f(...)`, a tail "
        .. "call that leaves no line; this is the last line of the script seen before it)", box.last_line, e)
    end
    return e
  end
  local results = table.pack(xpcall(function(...) return box:inside(fn, ...) end, handler, ...))
  if self.ticking then
    tick(outer_fn, outer_thread)
    self.ticking = false
  end
  debug.sethook(table.unpack(old_hook))
  self.deadline = nil
  local stats = control.memory_stats()
  if stats and self.max_memory and self.max_memory > 0 then control.memory_limit(0) end
  self.memory_cap = nil
  if stats and stats.exceeded and not is_stop(results[2]) then
    -- a memory error (Lua calls no message handler for it), or one library code caught
    results = { false, memory_stop(self.last_line), n = 2 }
  end
  if not results[1] then
    local e = results[2]
    if is_stop(e) then return false, e.msg, e.kind end
    return false, tostring(e), "error"
  end
  return table.unpack(results, 1, results.n)
end

return M
