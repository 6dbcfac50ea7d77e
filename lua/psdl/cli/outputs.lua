--- The files one command writes, as a set: every output is made in memory first (the city's
-- bytes, the package, the preview, the reports) and nothing is written until all of them
-- are ready, so a failure in any stage (a package that cannot be generated, a preview that
-- cannot be drawn) leaves every existing output untouched and writes nothing new. Then
-- `commit` writes them one after another, each atomically (`psdl.write_file`: temporary
-- file, rename); should a later write fail (a full disk), the files written before it are
-- put back as they were (their old bytes written again, or removed when they were new), so
-- the set is written whole or not at all. docs/cli.md, "Safety of inputs and outputs".
-- @module psdl.cli.outputs

local common = require "psdl.cli.common"
local setmetatable, ipairs, io, os, require = setmetatable, ipairs, io, os, require

local M = {}

local Set = {}
Set.__index = Set

--- A new, empty set of outputs.
-- @treturn table the set (`add`, `commit`)
function M.new()
  return setmetatable({ list = {} }, Set)
end

--- Add an output: `bytes` for `path`, written by `commit` in the order added.
-- @tparam string path
-- @tparam string bytes
function Set:add(path, bytes)
  self.list[#self.list + 1] = { path, bytes }
end

-- The bytes of an existing regular file (followed through links), false when there is no
-- file, or nil, message when it cannot be read (then it is not overwritten).
local function old_bytes(path)
  local mode = require("lfs").attributes(path, "mode")
  if mode == nil then return false end
  if mode ~= "file" then return false end -- (a device or pipe: written straight, nothing to keep)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local data = f:read("a")
  f:close()
  if not data then return nil, path .. ": cannot be read back" end
  return data
end

--- Write every output (see the module). On a failure the outputs written before are put back
-- and the failure is raised (`psdl.cli.common.failure`, exit 3 for an I/O error).
-- @raise a failure naming the file that could not be written
function Set:commit()
  local psdl = require "psdl"
  local done = {}
  local n = #self.list
  for i, o in ipairs(self.list) do
    local path, bytes = o[1], o[2]
    -- (the last one is never put back: it is written whole or not at all)
    local old, rerr = false, nil
    if i < n then old, rerr = old_bytes(path) end
    local ok, err, code
    if old == nil then
      ok, err, code = nil, "psdl: io: " .. path .. ": the old file cannot be read to keep it: " .. rerr, "io"
    else
      ok, err, code = psdl.write_file(path, bytes)
    end
    if not ok then
      for k = #done, 1, -1 do
        local d = done[k]
        if d[2] then psdl.write_file(d[1], d[2]) else os.remove(d[1]) end
      end
      common.failure(common.exit_for(code), common.clean(err))
    end
    done[#done + 1] = { path, old }
  end
  self.list = {}
end

return M
