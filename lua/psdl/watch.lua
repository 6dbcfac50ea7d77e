--- Watching files for changes (the `--watch` loops of `psdl build` and `psdl view`).
--
-- A snapshot holds each file's size, modification time and contents (city scripts are
-- small), so an edit within the same second as the last build is still seen; a file that
-- disappears or appears counts as a change.
-- @module psdl.watch

local io, os, type, ipairs, pairs, require = io, os, type, ipairs, pairs, require

local M = {}

local function state(path)
  local f = io.open(path, "rb")
  if not f then return false end
  local data = f:read("a")
  f:close()
  return data or false
end

--- Take a snapshot of files.
-- @tparam table files list of paths
-- @treturn table snapshot `{[path] = contents or false}`
function M.snapshot(files)
  local snap = {}
  for _, p in ipairs(files) do snap[p] = state(p) end
  return snap
end

--- The first file that changed since a snapshot, or nil.
-- @tparam table snap from `snapshot`
-- @treturn string|nil path
function M.changed(snap)
  for p, old in pairs(snap) do
    if state(p) ~= old then return p end
  end
  return nil
end

--- Sleep (seconds, fractions allowed; lua-socket's sleep).
-- @tparam number seconds
function M.sleep(seconds)
  require("socket").sleep(seconds)
end

--- Run `build` now and again after every change of the files it returns, until `stop()`
-- returns true (checked between polls; default: never) or the process is ended.
-- @tparam table opts `build` (function() -> list of files to watch, or nil and a message:
--   then the files of the last build, or `fallback` when none, are watched; it may return
--   a second value, a `snapshot` taken before it read the files, so that a save during the
--   build is still seen as a change), `fallback`
--   (files to watch while no build has succeeded), `wait` (function(seconds): waits between
--   polls, e.g. serving HTTP; default `sleep`), `interval` (seconds, default 0.25),
--   `stop` (function), `changed` (function(path): called before a rebuild)
function M.loop(opts)
  local interval = opts.interval or 0.25
  local wait = opts.wait or M.sleep
  -- the files' state now, but as they were before the build where it says so
  local function after(files, before)
    local snap = M.snapshot(files)
    if type(before) == "table" then
      for path, old in pairs(before) do
        if snap[path] ~= nil then snap[path] = old end
      end
    end
    return snap
  end
  local first, before = opts.build()
  local files = first or opts.fallback
  local snap = after(files, before)
  while not (opts.stop and opts.stop()) do
    wait(interval)
    local p = M.changed(snap)
    if p then
      if opts.changed then opts.changed(p) end
      local new
      new, before = opts.build()
      if new then files = new end
      snap = after(files, before)
    end
  end
end

return M
