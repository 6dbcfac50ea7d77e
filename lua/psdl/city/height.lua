--- A city's height function, checked where psdl.city calls it: the `height` and `terrain`
-- options of `psdl.city.new` give heights to nodes, via points, road centre lines (on a
-- terrain), block and terrain ground. A value no position can have (NaN, an infinity, a
-- string, or beyond `LIMIT` metres) stops the build at once with a message naming the
-- function (its script line), the point asked for and the value, instead of surfacing later
-- as an error about a room's vertices or as a city built a million kilometres up.
-- `nil` stays allowed: "no height here" (a node at 0, a block point along its chord).
-- @module psdl.city.height

local type, error, ipairs = type, error, ipairs
local floor, huge = math.floor, math.huge
local string_format = string.format
local debug_getinfo = debug.getinfo

local M = {}

--- The largest height (up or down) a height function may give, metres: 65,536, the same
-- limit as a node's `y` and every coordinate of a city (`psdl.city.MAX_COORDINATE`). The
-- format stores heights as 32-bit floats (psdl-format.md §1.2; up to 3.4e38 m) but their
-- steps are 4 mm just below 65,536 m and grow beyond; the game's own cities lie within a few
-- hundred metres of height, so a value past this is a mistake (a unit, a NaN, a division by
-- zero), not a hill.
M.LIMIT = 65536

-- The phrase every message of `checked` holds (`is_error`).
local PHRASE = "a height must be a finite number"

-- A value as the messages show it (nan, %.14g, strings quoted).
local shown = require("psdl.check").shown

-- The chunk source prefix of the library's own files ("@/.../lua/psdl/").
local LIB = debug_getinfo(1, "S").source:match("^(.*[/\\])city[/\\][^/\\]*$")

--- "city.lua:3": the line of the nearest caller outside the psdl library's files (the
-- sandbox of `psdl build` and psdl.check's own files included), or nil.
-- @treturn string|nil
function M.script_line()
  for level = 2, 200 do
    local info = debug_getinfo(level, "Sl")
    if not info then return nil end
    if info.what ~= "C" and (not LIB or info.source:sub(1, #LIB) ~= LIB) and info.currentline > 0 then
      return string_format("%s:%d", info.short_src, info.currentline)
    end
  end
end

--- What a height function is, for messages: "city.lua:3: the height function" (its script
-- line), or `what` at `where` when it is no Lua function of its own (a Terrain's method).
-- @tparam function fn
-- @tparam string what "the height function", "the terrain's height", ...
-- @tparam[opt] string where "city.lua:1" (the script line that gave it), or nil
-- @treturn string
function M.label(fn, what, where)
  local info = type(fn) == "function" and debug_getinfo(fn, "S")
  if info and info.what == "Lua" and info.linedefined and info.linedefined > 0 then
    return string_format("%s:%d: %s", info.short_src or "?", info.linedefined, what)
  end
  if where then return where .. ": " .. what end
  return what
end

--- `fn` checked at each call: a function(x, z) that returns what fn returns, or raises
-- "<label> gave <value> at (x, z) = (...): a height must be a finite number within
-- +-65536 m (...)" when that is NaN, infinite, beyond `LIMIT` or neither a number nor nil.
-- @tparam function fn (x, z) → y (metres) or nil
-- @tparam string label from `label`
-- @treturn function
function M.checked(fn, label)
  local limit = M.LIMIT
  return function(x, z)
    local y = fn(x, z)
    if y == nil or (type(y) == "number" and y >= -limit and y <= limit) then return y end
    error(string_format("%s gave %s at (x, z) = (%.2f, %.2f): %s within +-%d m, or nil (psdl.city.height.LIMIT, "
      .. "as for a node's y: positions are 32-bit floats whose centimetres are lost further out; the game's cities "
      .. "lie within a few hundred metres of height)", label, shown(y), x, z, PHRASE, limit), 0)
  end
end

--- True for a message of a `checked` function: no repair of a road is the answer to it
-- (psdl.city.repair raises it as it is).
-- @tparam string msg
-- @treturn boolean
function M.is_error(msg)
  return type(msg) == "string" and msg:find(PHRASE, 1, true) ~= nil
end

--- Node and via point heights: given, else the city's height function, else 0 (sets each
-- node's `y` and fills the via points' missing heights).
-- @tparam table city a `psdl.city` City
-- @treturn boolean whether any height is not 0 (or a height function is set)
function M.nodes(city)
  local fn = city.height_fn
  local any = fn ~= nil
  for _, n in ipairs(city.nodes) do
    local y = n.y0
    if y == nil and fn then y = fn(n.x, n.z) end
    n.y = y or 0
    if n.y ~= 0 then any = true end
  end
  for _, r in ipairs(city.roads) do
    for _, v in ipairs(r.via) do
      if v[3] == nil and fn then v[3] = fn(v[1], v[2]) end
      if v[3] and v[3] ~= 0 then any = true end
    end
  end
  return any
end

--- The steepest a road may climb between two points of known height (its nodes, its via
-- points with a height), as rise over plan length: 1, a 100 % grade (45 degrees). The
-- steepest streets that are driven are about 35 %, and the city's own ramps at most 40 %;
-- a road far steeper is a mistake of heights (a unit, a sign, a height function's scale),
-- and the city would build it as a wall its blocks cannot be cut around.
M.MAX_GRADE = 1

-- "node 3 (y = 65000)", or "via[2] (y = 40)", with "from the height function" when the city's
-- function gave it.
local function point_label(what, y, from_fn)
  return string_format("%s (y = %s%s)", what, shown(y), from_fn and ", from the height function" or "")
end

--- Refuse a road steeper than `MAX_GRADE` between two points of known height (after
-- `nodes`), naming the road (its script line), its length and rise there, the grade and the
-- fix; heights left to interpolation between such points share their grade.
-- @tparam table city a `psdl.city` City whose nodes have their `y` (`nodes`)
-- @tparam function road_label network.road_label
-- @raise "<script line>: road N: climbs R m over L m between ...: a grade of G %, ..."
function M.grades(city, road_label)
  local max, fn = M.MAX_GRADE, city.height_fn
  for _, r in ipairs(city.roads) do
    local a, b = r.a, r.b
    local px, pz, py = a.x, a.z, a.y
    local plabel = point_label("node " .. tostring(a.id), a.y, a.y0 == nil and fn ~= nil)
    local run, n = 0, #r.via
    for i = 1, n + 1 do
      local v = r.via[i]
      local x, z, y, label
      if v then
        x, z, y = v[1], v[2], v[3]
        label = y and point_label(string_format("via[%d]", i), y, false)
      else
        x, z, y = b.x, b.z, b.y
        label = point_label("node " .. tostring(b.id), b.y, b.y0 == nil and fn ~= nil)
      end
      local dx, dz = x - px, z - pz
      run = run + (dx * dx + dz * dz) ^ 0.5
      px, pz = x, z
      if y then
        local rise = y - py
        if rise < 0 then rise = -rise end
        if rise > max * run + 1e-6 then
          error(string_format("%s: climbs %.1f m over %.1f m of road between %s and %s: a grade of %.0f %%, steeper "
            .. "than any road is driven (at most %.0f %%, psdl.city.height.MAX_GRADE); give those points heights "
            .. "closer together, or make the road longer between them (via points)", road_label(r), rise, run, plabel,
            label, run > 0 and 100 * rise / run or huge, 100 * max), 0)
        end
        py, plabel, run = y, label, 0
      end
    end
  end
end

--- A height function for the blocks: the city's, else inverse-distance weighting of the
-- nearest nodes (a grid hash of 100 m cells).
-- @tparam table city a `psdl.city` City whose nodes have their `y` (`nodes`)
-- @treturn function (x, z) → y, or nil where no three nodes are within 400 m
function M.blocks(city)
  if city.height_fn then return city.height_fn end
  local cell = 100
  local grid = {}
  for _, n in ipairs(city.nodes) do
    local k = floor(n.x / cell) * 1000003 + floor(n.z / cell)
    local g = grid[k]
    if not g then g = {}; grid[k] = g end
    g[#g + 1] = n
  end
  return function(x, z)
    local cx, cz = floor(x / cell), floor(z / cell)
    for ring = 1, 4 do
      local sw, sy = 0, 0
      local count = 0
      for i = cx - ring, cx + ring do
        for j = cz - ring, cz + ring do
          local g = grid[i * 1000003 + j]
          if g then
            for _, n in ipairs(g) do
              local dx, dz = n.x - x, n.z - z
              local d2 = dx * dx + dz * dz
              if d2 < 1e-6 then return n.y end
              local w = 1 / (d2 * d2)
              sw, sy, count = sw + w, sy + w * n.y, count + 1
            end
          end
        end
      end
      if count >= 3 then return sy / sw end
    end
    return nil
  end
end

return M
