--- Read back a city package (`.ar`, a zip archive as `psdl package` writes it; CF §8): the
-- map named by its `tune/<map>.cinfo` (CF §6.1), and that map's `city/<map>.psdl`,
-- `city/<map>.bai` and `city/<map>.cpvs` decoded. Used by `psdl view CITY.ar`.
-- @module psdl.package.archive

local type, ipairs, pairs, tostring, error = type, ipairs, pairs, tostring, error
local string_format, table_sort = string.format, table.sort

local M = {}

--- Most bytes the archive may unpack to (the cap of `psdl validate`).
M.MAX_UNPACKED = 1 << 30

--- The city of a package.
-- @tparam string bytes the `.ar` file's bytes
-- @tparam[opt] string label the archive's name, for messages
-- @treturn[1] table `{map = name, doc = document, bai = table or nil, cpvs = table or nil,
--   notes = {string}}`: `bai`/`cpvs` are nil when the archive lacks them or they do not
--   decode (a note says which and why)
-- @return[2] nil
-- @treturn[2] string message naming the archive and the entry: not a zip archive, no
--   `city/*.psdl`, several cities and no `.cinfo` saying which, the PSDL does not decode
function M.read(bytes, label)
  if type(bytes) ~= "string" then
    error("bad argument #1 to 'read' (string expected, got " .. type(bytes) .. ")", 2)
  end
  label = label or "package"
  local psdl = require "psdl"
  local got, err = require("psdl.core").zip_read(bytes, M.MAX_UNPACKED)
  if not got then return nil, string_format("%s: not a readable package (%s)", label, tostring(err)) end
  local by = {}
  for _, e in ipairs(got) do by[e.name:gsub("\\", "/"):lower()] = e.data end
  -- the map: MapName of the .cinfo (line 2, CF §6.1), else the only city/<map>.psdl
  local maps, seen = {}, {}
  local cinfos = {}
  for name in pairs(by) do
    if name:match("^tune/[^/]+%.cinfo$") then cinfos[#cinfos + 1] = name end
  end
  table_sort(cinfos)
  for _, name in ipairs(cinfos) do
    local map = by[name]:match("MapName=([^\r\n]+)")
    map = map and map:lower()
    if map and by["city/" .. map .. ".psdl"] and not seen[map] then maps[#maps + 1], seen[map] = map, true end
  end
  if #maps == 0 then
    for name in pairs(by) do
      local map = name:match("^city/([^/]+)%.psdl$")
      if map then maps[#maps + 1] = map end
    end
    table_sort(maps)
  end
  if #maps == 0 then return nil, label .. ": no city/<map>.psdl in the package" end
  if #maps > 1 then
    return nil, string_format("%s: %d cities (%s) and no .cinfo naming one of them", label, #maps,
      table.concat(maps, ", "))
  end
  local map = maps[1]
  local doc, msg = psdl.decode(by["city/" .. map .. ".psdl"])
  if not doc then return nil, string_format("%s: city/%s.psdl: %s", label, map, tostring(msg)) end
  local out = { map = map, doc = doc, notes = {} }
  for _, fmt in ipairs { "bai", "cpvs" } do
    local name = "city/" .. map .. "." .. fmt
    if by[name] then
      local t, why = psdl[fmt].decode(by[name])
      if t then out[fmt] = t
      else out.notes[#out.notes + 1] = string_format("%s: %s: %s (shown without it)", label, name, tostring(why)) end
    else
      out.notes[#out.notes + 1] = string_format("%s: no %s (shown without it)", label, name)
    end
  end
  return out
end

return M
