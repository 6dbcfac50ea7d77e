--- Checks of the block options a script gives `City:blocks` (docs/city.md, "Limits refused
-- at the call"): every key known, every number finite and within its bounds, every override a
-- point the city can hold. Each function returns nil when the value is fine, else what is
-- wrong with it, naming the field ("buildings.setback: ...", "overrides[2].point: ..."), for
-- `psdl.check.argerr`; `City:blocks` raises it at the script's line, before anything is built.
-- (`psdl.city.blocks.fill` keeps its own checks for callers that use it directly.)
--
-- Internal to `psdl.city`.
-- @module psdl.city.blocks.options
local check = require "psdl.check"

local type, pairs, ipairs, tostring = type, pairs, ipairs, tostring
local string_format = string.format
local num_problem, opt_problem = check.num_problem, check.opt_problem

local M = {}

--- Most floors of a generated building: 1,000 floors of the default 3.5 m are 3.5 km, far
-- above anything a game city holds, and well inside the facade repeat count a room stores
-- (1..32,767) and the +-65,536 m coordinate range (`psdl.city.MAX_COORDINATE`).
M.MAX_FLOORS = 1000

--- Most metres of one floor, of a setback, a gap, a depth or a width of a building: beyond
-- this a "building" is no longer one (a block is at most a few hundred metres across).
M.MAX_SIZE = 1000

--- Tallest generated building, metres: 1,000 floors of 3.5 m (`psdl.city.MAX_BUILDING_HEIGHT`,
-- the same for a network's footprints). `floors` x `floor_height` beyond it is refused: a
-- million-metre tower has lost its centimetres in the file's 32-bit floats (the +-65,536 m
-- limit of every position) and is no building.
M.MAX_HEIGHT = 3500

--- Smallest `step` of the splitting limits (m): chords get a point every `step` metres, and
-- finer steps only multiply vertices (the same 0.5 m as the city's `spacing`).
M.MIN_STEP = 0.5

-- The keys of `buildings` (`psdl.city.blocks.DEFAULTS.buildings` and the texture choices).
local BUILDING_KEYS = { floors = true, floor_height = true, bay_width = true, setback = true, gap = true, depth = true,
                        width = true, ground_floor = true, sliver_density = true, facades = true, roofs = true,
                        sliver = true }

local LIMIT_KEYS = { max_area = true, max_points = true, max_length = true, step = true }

local OVERRIDE_KEYS = { point = true, park = true, plaza = true, buildings = true, texture = true }

--- The keys `City:blocks` takes.
M.KEYS = { buildings = true, margin = true, overrides = true, room = true, apron = true }

-- A key of table t that `known` lacks, as "name: unknown option 'k'", or nil.
local function unknown(t, known, name)
  for k in pairs(t) do
    if not known[k] then return string_format("%sunknown option '%s'", name, tostring(k)) end
  end
end

-- A number or {min, max} of numbers within lo..hi with min <= max; `lo_open`: min > lo.
local function range_problem(v, name, lo, hi, lo_open)
  local a, b
  if type(v) == "number" then a, b = v, v
  elseif type(v) == "table" then
    a, b = v[1], v[2]
    if b == nil then b = a end
    if type(a) ~= "number" or type(b) ~= "number" then
      return string_format("%s: a number or {min, max} of numbers expected", name)
    end
  else
    return string_format("%s: a number or {min, max} expected, got %s", name, type(v))
  end
  local m = num_problem(a, name .. " min", "number") or num_problem(b, name .. " max", "number")
  if m then return m end
  if (lo_open and not (a > lo)) or a < lo or b < a or b > hi then
    return string_format("%s: %s %s min <= max <= %s expected, got {%s, %s}", name, check.shown(lo),
      lo_open and "<" or "<=", check.shown(hi), check.shown(a), check.shown(b))
  end
end

-- A texture (or set) name of 1..31 characters (psdl-format.md §1.3).
local function length_problem(s, name)
  if #s == 0 or #s > 31 then
    return string_format("%s: texture name %q has %d characters; texture names have 1..31 (psdl-format.md §1.3)", name,
      s, #s)
  end
end

-- A facade / roof choice: a set name or texture name, or a non-empty list of names.
local function names_problem(v, name)
  if v == nil then return nil end
  if type(v) == "string" then return length_problem(v, name) end
  if type(v) == "table" and #v > 0 then
    for i, s in ipairs(v) do
      if type(s) ~= "string" then return string_format("%s[%d]: texture name expected, got %s", name, i, type(s)) end
      local m = length_problem(s, string_format("%s[%d]", name, i))
      if m then return m end
    end
    return nil
  end
  return string_format("%s: a set name, a texture name or a list of names expected", name)
end

--- What is wrong with a `buildings` table, or nil (`true`, `false` and nil are fine).
-- @param v the value @tparam string name its name in messages ("buildings")
-- @treturn string|nil
function M.buildings_problem(v, name)
  if v == nil or v == true or v == false then return nil end
  if type(v) ~= "table" then return string_format("%s: false, true or a table expected, got %s", name, type(v)) end
  local m = unknown(v, BUILDING_KEYS, name .. ": ")
  if m then return m end
  local p = name .. "."
  if v.floors ~= nil then m = range_problem(v.floors, p .. "floors", 1, M.MAX_FLOORS) end
  m = m or (v.gap ~= nil and range_problem(v.gap, p .. "gap", 0, M.MAX_SIZE)) or nil
  m = m or (v.depth ~= nil and range_problem(v.depth, p .. "depth", 0, M.MAX_SIZE, true)) or nil
  m = m or (v.width ~= nil and range_problem(v.width, p .. "width", 0, M.MAX_SIZE, true)) or nil
  m = m or opt_problem(v.floor_height, p .. "floor_height", "positive", nil, M.MAX_SIZE)
    or opt_problem(v.bay_width, p .. "bay_width", "positive", nil, M.MAX_SIZE)
    or opt_problem(v.setback, p .. "setback", "nonneg", 0, M.MAX_SIZE)
    or opt_problem(v.sliver_density, p .. "sliver_density", "nonneg", 0, 1)
    or names_problem(v.facades, p .. "facades") or names_problem(v.roofs, p .. "roofs")
  if m then return m end
  local top = type(v.floors) == "table" and v.floors[#v.floors] or v.floors or 6 -- (the default {2, 6})
  local fh = v.floor_height or 3.5
  if type(top) == "number" and top * fh > M.MAX_HEIGHT then
    return string_format("%sfloors x floor_height: %s floors of %s m make %s m, taller than any building (at most %d m, "
      .. "psdl.city.MAX_BUILDING_HEIGHT)", p, check.shown(top), check.shown(fh), check.shown(top * fh), M.MAX_HEIGHT)
  end
  if v.ground_floor ~= nil and v.ground_floor ~= true and v.ground_floor ~= false then
    m = names_problem(v.ground_floor, p .. "ground_floor")
    if m then return m end
  end
  if v.sliver ~= nil and type(v.sliver) ~= "string" then
    return string_format("%ssliver: texture name expected, got %s", p, type(v.sliver))
  end
  if v.sliver ~= nil then return length_problem(v.sliver, p .. "sliver") end
end

--- What is wrong with splitting limits (`room`, `apron`), or nil.
-- @param v the value @tparam string name its name in messages
-- @treturn string|nil
function M.limits_problem(v, name)
  if v == nil then return nil end
  if type(v) ~= "table" then return string_format("%s: table expected, got %s", name, type(v)) end
  local p = name .. "."
  return unknown(v, LIMIT_KEYS, name .. ": ")
    or opt_problem(v.max_area, p .. "max_area", "positive")
    or opt_problem(v.max_points, p .. "max_points", "int", 3)
    or opt_problem(v.max_length, p .. "max_length", "positive")
    or opt_problem(v.step, p .. "step", "positive", M.MIN_STEP)
end

--- What is wrong with one override, or nil.
-- @param o the override @tparam string name its name ("overrides[2]")
-- @tparam number max_coordinate the largest |x| or |z| (`psdl.city.MAX_COORDINATE`)
-- @treturn string|nil
function M.override_problem(o, name, max_coordinate)
  if type(o) ~= "table" then return string_format("%s: table expected, got %s", name, type(o)) end
  local m = unknown(o, OVERRIDE_KEYS, name .. ": ")
  if m then return m end
  local p = o.point
  if type(p) ~= "table" or type(p[1]) ~= "number" or type(p[2]) ~= "number" or #p > 3
     or (#p == 3 and type(p[3]) ~= "number") then
    return string_format("%s.point: {x, z} expected", name)
  end
  local x, z = p[1], p[#p == 3 and 3 or 2]
  m = num_problem(x, name .. ".point x", "number", -max_coordinate, max_coordinate)
    or num_problem(z, name .. ".point z", "number", -max_coordinate, max_coordinate)
    or (#p == 3 and num_problem(p[2], name .. ".point y", "number")) or nil
  if m then return m end
  if o.texture ~= nil and type(o.texture) ~= "string" then
    return string_format("%s.texture: texture name expected, got %s", name, type(o.texture))
  end
  m = o.texture ~= nil and length_problem(o.texture, name .. ".texture")
  if m then return m end
  if o.buildings ~= nil then return M.buildings_problem(o.buildings, name .. ".buildings") end
end

--- What is wrong with the options table of `City:blocks`, or nil.
-- @tparam table opts @tparam number max_coordinate (`psdl.city.MAX_COORDINATE`)
-- @treturn string|nil
function M.problem(opts, max_coordinate)
  local m = unknown(opts, M.KEYS, "")
    or M.buildings_problem(opts.buildings, "buildings")
    or M.limits_problem(opts.room, "room") or M.limits_problem(opts.apron, "apron")
  if m then return m end
  if opts.margin ~= nil and opts.margin ~= false then
    m = num_problem(opts.margin, "margin", "nonneg", 0, max_coordinate)
    if m then return m end
  end
  local ov = opts.overrides
  if ov ~= nil then
    if type(ov) ~= "table" then return "overrides: a list of {point = {x, z}, ...} expected, got " .. type(ov) end
    for k in pairs(ov) do
      if math.type(k) ~= "integer" or k < 1 or k > #ov then
        return string_format("overrides: a list expected (key %s)", tostring(k))
      end
    end
    for i, o in ipairs(ov) do
      m = M.override_problem(o, string_format("overrides[%d]", i), max_coordinate)
      if m then return m end
    end
  end
end

return M
