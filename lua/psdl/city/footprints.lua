--- Footprints of a road-network table's `buildings` (docs/network.md), checked for
-- `psdl.city.from_network`: a height or levels no building can have is left out, with a note.
-- @module psdl.city.footprints

local check = require "psdl.check"

local type, ipairs, pairs, tostring = type, ipairs, pairs, tostring
local string_format, table_concat = string.format, table.concat

local M = {}

--- Tallest building a network's footprint may ask for (m): 1,000 floors of 3.5 m
-- (`psdl.city.blocks.options.MAX_FLOORS`); beyond it (an OSM `height = 1e9` typo) the
-- footprint's height is ignored and the building gets its style's floors.
M.MAX_BUILDING_HEIGHT = 3500

--- A network's `buildings` as the blocks' footprints: an entry whose `height` or `levels` no
-- building can have (not a number, NaN, infinite, <= 0, over MAX_BUILDING_HEIGHT m or
-- MAX_FLOORS levels) is kept as a copy with that field left out, and a note names it by its
-- `source` (the OSM way) or index. The caller's tables are never changed.
-- @tparam table|nil list the network's `buildings`
-- @treturn table|nil footprints (the same list when every entry is fine)
-- @treturn table|nil notes (strings), nil when there is none
function M.check(list)
  if type(list) ~= "table" then return list, nil end
  local max_floors = require("psdl.city.blocks.options").MAX_FLOORS
  local out, notes = list, nil
  for i, f in ipairs(list) do
    if type(f) == "table" then
      local h, lv = f.height, f.levels
      local bad_h = h ~= nil and not (type(h) == "number" and h > 0 and h <= M.MAX_BUILDING_HEIGHT)
      local bad_lv = lv ~= nil and not (type(lv) == "number" and lv >= 1 and lv <= max_floors)
      if bad_h or bad_lv then
        if out == list then
          out = {}
          for k = 1, #list do out[k] = list[k] end
        end
        local g = {}
        for k, v in pairs(f) do g[k] = v end
        local what = {}
        if bad_h then
          g.height = nil
          what[#what + 1] = string_format("height %s m (0..%d m)", check.shown(h), M.MAX_BUILDING_HEIGHT)
        end
        if bad_lv then
          g.levels = nil
          what[#what + 1] = string_format("levels %s (1..%d)", check.shown(lv), max_floors)
        end
        out[i] = g
        notes = notes or {}
        notes[#notes + 1] = string_format("buildings[%d]%s: %s ignored: built at its style's height", i,
          f.source and (" (" .. tostring(f.source) .. ")") or "", table_concat(what, " and "))
      end
    end
  end
  return out, notes
end

return M
