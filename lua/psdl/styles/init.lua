--- Texture styles: load one (by name or as a table) and look up the textures of each role a
-- city or the builder needs (roads, dividers, intersections, tunnels and bridges, ground,
-- facades, roofs, slivers). The styles themselves are `london.lua` and `sf.lua` (texture
-- names of the game, README.md); every module that needs a style's textures asks here, so a
-- role's fallbacks are written once.
-- @module psdl.styles

local type, pcall, require, error, tostring = type, pcall, require, error, tostring
local string_format = string.format

local M = {}

--- The styles shipped (`psdl.styles.<name>`).
M.NAMES = { "london", "sf" }

--- A style table from a name or a table.
-- @tparam string|table style "london", "sf" or a style table
-- @treturn table the style
-- @return[2] nil
-- @treturn[2] string what is wrong: "unknown style 'x' (london or sf, or a style table)" or
--   "style: name or table expected, got <type>"
function M.load(style)
  if type(style) == "string" then
    local ok, s = false, nil
    if style:match("^[%w_]+$") then ok, s = pcall(require, "psdl.styles." .. style) end
    if not ok or type(s) ~= "table" then
      return nil, string_format("unknown style '%s' (london or sf, or a style table)", style)
    end
    return s
  end
  if type(style) ~= "table" then return nil, "style: name or table expected, got " .. type(style) end
  return style
end

-- The style's road entry for a lane count: rN (oneway variant when asked and present),
-- else the nearest count below, else above; the style's `road` when it has none.
local function lanes_entry(style, n, oneway)
  local roads = style.roads or {}
  if oneway and roads["lanes" .. n .. "_oneway"] then return roads["lanes" .. n .. "_oneway"], "lanes" .. n .. "_oneway" end
  if roads["lanes" .. n] then return roads["lanes" .. n], "lanes" .. n end
  for d = 1, 8 do
    if roads["lanes" .. (n - d)] then return roads["lanes" .. (n - d)], "lanes" .. (n - d) end
    if roads["lanes" .. (n + d)] then return roads["lanes" .. (n + d)], "lanes" .. (n + d) end
  end
  return style.road, "road"
end

--- The textures of a road: `textures` as a road profile gives them (nil: by lane count;
-- "alley", "walkway", "freeway" or a key of `style.roads`; anything else is returned as it
-- is: a texture name, a style entry or a builder group).
-- @tparam table style
-- @param textures
-- @tparam string kind the profile's kind ("walkway", "divided", ...)
-- @tparam integer lanes
-- @tparam boolean oneway
-- @return the textures
function M.road(style, textures, kind, lanes, oneway)
  if textures == nil then
    if kind == "walkway" then return style.alley end
    return (lanes_entry(style, lanes, oneway))
  end
  if type(textures) == "string" then
    if textures == "alley" then return style.alley end
    if textures == "walkway" then return (style.walkways and style.walkways[3]) or style.alley.surface end
    if textures == "freeway" then return (style.roads and style.roads.freeway) or (lanes_entry(style, lanes, false)) end
    if style.roads and style.roads[textures] then return style.roads[textures] end
  end
  return textures
end

--- The textures of a divider: nil gives the style's `divider`, a key of `style.dividers`
-- that entry, anything else itself.
function M.divider(style, textures)
  if type(textures) == "string" and style.dividers and style.dividers[textures] then return style.dividers[textures] end
  if textures == nil then return style.divider end
  return textures
end

--- The textures of an intersection: a key of `style.intersections` gives that entry,
-- anything else (nil: the builder's default, the style's `intersection`) itself.
function M.intersection(style, textures)
  if type(textures) == "string" and style.intersections and style.intersections[textures] then
    return style.intersections[textures]
  end
  return textures
end

--- The textures of a tunnel or bridge part (city-layout.md §4): "bore" (a road tunnel), "wall"
-- (the retaining walls of a cut), "bridge_railing" (a deck's railings), "railing" (a ramp's or
-- a street's); the style's `tunnel` when its `tunnels` have none for the role.
-- @tparam table style
-- @tparam string role
function M.tunnel(style, role)
  local t = style.tunnels
  local found
  if t then
    if role == "bore" then found = t.road or t.subway
    elseif role == "wall" then found = t.retaining_wall or t.brick_wall or t.railing
    elseif role == "bridge_railing" then found = t.bridge_railing or t.railing
    elseif role == "railing" then found = t.railing
    else error("psdl.styles.tunnel: unknown role '" .. tostring(role) .. "'", 2) end
  end
  return found or style.tunnel
end

--- The texture name of a kind of ground ("paving", "grass", ...; the style's paving when it
-- has none of that kind, else "s_concrt").
function M.ground(style, kind)
  local g = style.ground or {}
  local list = g[kind] or g.paving
  return list and list[1] or "s_concrt"
end

--- The first facade texture name of a set ("upper" or "ground").
function M.facade(style, set)
  return style.facades[set][1]
end

--- The roof texture names of a style (a list; `{"s_concrt"}` when it has none).
function M.roofs(style)
  return style.roofs or { "s_concrt" }
end

--- The first sliver texture name ("sliver" when the style has none).
function M.sliver(style)
  return (style.slivers and style.slivers[1]) or "sliver"
end

return M
