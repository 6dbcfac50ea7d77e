--- The script's folder rule of the sandbox (`psdl.sandbox`): which paths a sandboxed city
-- script may name, answered so that nothing tells whether a path outside the folder exists
-- (docs/city.md "Sandbox"). `readable` judges a path; `lfs` and `real_path` give the
-- versions of `lfs.attributes`, `lfs.symlinkattributes`, `lfs.dir`, `lfs.currentdir` and
-- `psdl.real_path` that follow it (the sandbox puts the lfs ones in the `lfs` table while a
-- sandboxed script runs, so that the library's own path checks follow it too).
-- @module psdl.script_folder

local core = require "psdl.core"
local lfs = require "lfs"
local type, tostring, error, string, table = type, tostring, error, string, table
local lfs_attributes, lfs_symlinkattributes, lfs_dir = lfs.attributes, lfs.symlinkattributes, lfs.dir

local M = {}

-- A path made absolute (a relative one under `dir`) with `.`, `..` and repeated slashes
-- taken out by its text alone, before the system sees it.
local function lexical(path, dir)
  if path:sub(1, 1) ~= "/" then path = dir .. "/" .. path end
  local parts, n = {}, 0
  for c in string.gmatch(path, "[^/]+") do
    if c == ".." then
      if n > 0 then parts[n] = nil; n = n - 1 end
    elseif c ~= "." then
      n = n + 1; parts[n] = c
    end
  end
  return "/" .. table.concat(parts, "/")
end

--- Where a path a sandboxed script names lies, told the same way whether or not anything
-- exists outside the script's folder (so that no answer says whether an outside file
-- exists). The path is taken by its text first (a relative name under the folder, `..`
-- removed): a path whose text leaves the folder is outside; under it, the real path (links
-- followed) must stay under the folder, and a missing name must not lie behind a link
-- (a dangling link is outside too, as a link to an existing outside file is).
-- @tparam table box the sandbox (`root`: the folder's real path, `dir`: the folder as named)
-- @tparam string path
-- @treturn[1] string the real path (the file exists and lies under the folder)
-- @treturn[1] string the absolute path by its text (`lfs.symlinkattributes` looks at it)
-- @treturn[2] nil
-- @treturn[2] string message (a missing name under the folder: the system's; outside: one
--   message naming the path as given and the folder)
-- @treturn[2] boolean true when the path is outside the folder or not a regular file or folder
--   (a FIFO, socket or device: its open could block; the caller raises)
-- @treturn[2] string the absolute path by its text, when not outside
function M.readable(box, path)
  if type(path) ~= "string" then return nil, "a file name expected" end
  local root = box.root
  local function under(p)
    return root and (p == root or p:sub(1, #root + 1) == (root == "/" and "/" or root .. "/"))
  end
  local outside = string.format("%s: outside the script's folder %s: a sandboxed city script reads only files "
    .. "under its own folder (psdl build --trust gives full access)", path, box.dir)
  -- (a relative name is under the script's folder, as `require` looks there, not under
  -- whatever folder psdl was started from)
  local abs = lexical(path, box.dir)
  if not under(abs) then return nil, outside, true end
  local real, err = core.real_path(abs)
  if real then
    if not under(real) then return nil, outside, true end
    -- a FIFO, socket or device inside the folder: opening it could block for ever (a FIFO's
    -- open waits for a writer, and --timeout counts processor time), so it is refused, found
    -- by stat without opening it
    local mode = lfs_attributes(real, "mode")
    if mode and mode ~= "file" and mode ~= "directory" then
      return nil, string.format("%s: not a regular file (a %s): a sandboxed city script reads only regular files "
        .. "(opening a pipe or device could block the build for ever)", abs, mode), true
    end
    return real, abs
  end
  err = (tostring(err):gsub("^psdl: io: ", ""))
  -- missing: the names from the folder down, up to the first that is not there
  local prefix = root
  for c in string.gmatch(abs:sub(#root + 2), "[^/]+") do
    local p = prefix == "/" and "/" .. c or prefix .. "/" .. c
    local mode = lfs_symlinkattributes(p, "mode")
    if mode == nil then
      local rp = core.real_path(prefix)
      if rp and under(rp) then return nil, err, false, abs end
      return nil, outside, true
    end
    if mode == "link" and lfs_attributes(p, "mode") == nil then return nil, outside, true end
    prefix = p
  end
  return nil, err, false, abs
end

--- lfs's path functions as the sandbox allows them: psdl.sandbox puts them in the lfs table
-- while a sandboxed script runs, so that the library's checks of a path (psdl.write's folder
-- test, export's image files) follow the rules of io.open and say nothing about a path
-- outside the folder but that it is outside. `lfs.currentdir()` is the script's folder.
-- @tparam table box
-- @treturn table `attributes`, `symlinkattributes`, `dir`, `currentdir`
function M.lfs(box)
  -- the real path and the path by its text, or nil and the message of a missing name (an
  -- outside path raises at the library's line)
  local function place(path)
    local real, second, outside = M.readable(box, path)
    if outside then error(second, 3) end
    return real, second
  end
  return {
    attributes = function(path, ...)
      local real, err = place(path)
      if not real then return nil, err end
      return lfs_attributes(real, ...)
    end,
    symlinkattributes = function(path, ...)
      local real, abs = place(path)
      if not real then return nil, abs end
      return lfs_symlinkattributes(abs, ...) -- (the path by its text: a link is not followed)
    end,
    dir = function(path)
      local real, err = place(path)
      if not real then error(err, 2) end
      return lfs_dir(real)
    end,
    currentdir = function() return box.dir end,
  }
end

--- psdl.real_path as the sandbox gives it (the read-only view calls this in its place): a
-- path outside the script's folder is an error whether or not it exists (`readable`).
-- @tparam table box
-- @treturn function
function M.real_path(box)
  return function(path, ...)
    if type(path) ~= "string" then return core.real_path(path, ...) end -- (its own argument error)
    local real, err, outside = M.readable(box, path)
    if outside then error(err, 2) end
    if real then return real end
    return nil, "psdl: io: " .. err, "io"
  end
end

return M
