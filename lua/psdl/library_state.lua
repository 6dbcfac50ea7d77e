--- The library's shared state, kept pristine across script runs: `psdl.sandbox` takes a
-- snapshot when a script starts and puts it back when the script ends, so that nothing a
-- script changed in the library (a style's texture list handed back as `b.style`, a module
-- table a library call returned, a metatable, a cache the library filled for it) reaches the
-- host or the scripts built after it in the same process (`psdl view --watch`, a test
-- runner, an editor plugin).
--
-- The state is every table reachable from the library's modules (`package.loaded["psdl..."]`
-- but the host's own: `psdl.cli.*`, `psdl.sandbox`, `psdl.control`, `psdl.view`,
-- `psdl.serve`, `psdl.watch`, this module), by keys, values, metatables and the upvalues of
-- its functions, and those upvalues themselves; the walk stops at `_G`, the standard
-- libraries, the string metatable and other packages' modules. A snapshot holds each
-- table's pairs and metatable and each Lua upvalue's value; `restore` makes them so again
-- (removing what was added, with raw access: no metamethod runs). A library module first
-- loaded while a script runs is added to the snapshot as its loader returns it, before the
-- script can hold it (`watch_loads`).
-- @module psdl.library_state

local type, next, ipairs, rawget, rawset, select = type, next, ipairs, rawget, rawset, select
local debug, package = debug, package
local getupvalue, setupvalue, upvalueid = debug.getupvalue, debug.setupvalue, debug.upvalueid
local getmetatable, setmetatable = debug.getmetatable, debug.setmetatable

local M = {}

--- Names of the modules whose state is the host's (patterns): never walked, never restored.
M.HOST_MODULES = { "^psdl%.cli$", "^psdl%.cli%.", "^psdl%.sandbox$", "^psdl%.control$", "^psdl%.view$",
  "^psdl%.serve$", "^psdl%.watch$", "^psdl%.library_state$", "^psdl%.script_folder$",
  "^psdl%.pattern_cost$" }

--- Whether a module name is one of the library's (walked and restored).
-- @tparam any name a key of `package.loaded`
-- @treturn boolean
function M.is_library(name)
  if type(name) ~= "string" or not (name == "psdl" or name:sub(1, 5) == "psdl.") then return false end
  for _, p in ipairs(M.HOST_MODULES) do
    if name:match(p) then return false end
  end
  return true
end

-- The values the walk never enters: _G, the standard libraries and other packages, the
-- host's modules, the string metatable.
local function stop_set()
  local stop = { [_G] = true, [package] = true, [package.loaded] = true }
  local smt = getmetatable("")
  if smt then stop[smt] = true end
  for name, mod in next, package.loaded do
    if not M.is_library(name) and (type(mod) == "table" or type(mod) == "function") then stop[mod] = true end
  end
  return stop
end

-- Add v and what it reaches to the snapshot (an explicit stack: no recursion limit).
local function add(snap, v)
  local tables, upvalues, seen, stop = snap.tables, snap.upvalues, snap.seen, snap.stop
  local stack, n = { v }, 1
  while n > 0 do
    local x = stack[n]
    stack[n] = nil
    n = n - 1
    local t = type(x)
    if (t == "table" or t == "function" or t == "userdata") and not seen[x] and not stop[x] then
      seen[x] = true
      if t == "table" then
        local copy = {}
        for k, y in next, x do
          copy[k] = y
          n = n + 1; stack[n] = k
          n = n + 1; stack[n] = y
        end
        local mt = getmetatable(x)
        tables[x] = { copy, mt }
        if mt then n = n + 1; stack[n] = mt end
      elseif t == "function" then
        local i = 1
        while true do
          local name, y = getupvalue(x, i)
          if name == nil then break end
          -- a Lua function's upvalue (name not ""), once per upvalue shared by closures
          if name ~= "" then
            local id = upvalueid(x, i)
            if not upvalues[id] then upvalues[id] = { x, i, y } end
          end
          n = n + 1; stack[n] = y
          i = i + 1
        end
      else
        local mt = getmetatable(x)
        if mt then n = n + 1; stack[n] = mt end
      end
    end
  end
end

--- Take a snapshot of the library's state as it is now.
-- @treturn table the snapshot (for `restore` and `watch_loads`)
function M.snapshot()
  local snap = { tables = {}, upvalues = {}, seen = {}, stop = stop_set() }
  for name, mod in next, package.loaded do
    if M.is_library(name) then add(snap, mod) end
  end
  return snap
end

--- Put the library's state back as the snapshot holds it: every table's pairs and
-- metatable, every upvalue's value (tables and upvalues made since are not touched unless
-- a snapshotted one held them).
-- @tparam table snap from `snapshot`
function M.restore(snap)
  for t, rec in next, snap.tables do
    local copy, mt = rec[1], rec[2]
    for k in next, t do
      if copy[k] == nil then rawset(t, k, nil) end
    end
    for k, v in next, copy do
      if rawget(t, k) ~= v then rawset(t, k, v) end
    end
    if getmetatable(t) ~= mt then setmetatable(t, mt) end
  end
  for _, rec in next, snap.upvalues do
    local f, i, v = rec[1], rec[2], rec[3]
    if select(2, getupvalue(f, i)) ~= v then setupvalue(f, i, v) end
  end
end

--- Add the library modules loaded from now on to `snap` as their loaders return them:
-- `package.searchers` is replaced by a list whose loaders do that, until the returned
-- function puts the host's list back.
-- @tparam table snap from `snapshot`
-- @treturn function unwatch
-- @treturn table the host's `package.searchers` (for host code that runs meanwhile)
function M.watch_loads(snap)
  local host = package.searchers
  local list = {}
  for i, searcher in ipairs(host) do
    list[i] = function(name, ...)
      local loader, extra = searcher(name, ...)
      if type(loader) ~= "function" or not M.is_library(name) then return loader, extra end
      return function(...)
        local mod = loader(...)
        -- (the packages loaded since the snapshot are not entered either)
        for other, m in next, package.loaded do
          if not M.is_library(other) and (type(m) == "table" or type(m) == "function") then snap.stop[m] = true end
        end
        add(snap, mod)
        return mod
      end, extra
    end
  end
  package.searchers = list
  return function() package.searchers = host end, host
end

return M
