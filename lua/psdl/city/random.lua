--- Seeded random numbers for city generation: the same seed gives the same sequence on
-- every machine and every run (64-bit integer arithmetic of Lua 5.4, no `math.random`, no
-- table-order dependence), so the same city script with the same seed gives the same bytes.
--
-- The generator is xoshiro256** seeded through splitmix64 (Blackman and Vigna); a value in
-- [0, 1) takes its top 53 bits.
-- @module psdl.city.random
-- @usage
-- local random = require "psdl.city.random"
-- local rng = random.new(42)
-- print(rng(), rng:int(1, 6), rng:pick({ "a", "b" }))

local setmetatable, type, error, floor = setmetatable, type, error, math.floor
local string_byte = string.byte

local M = {}

local R = {}
R.__index = R

-- The generator of each function `R:fn` made (weak: the functions come and go).
local made_by = setmetatable({}, { __mode = "k" })

local function rotl(x, k) return (x << k) | (x >> (64 - k)) end

local function splitmix(state)
  state = state + 0x9E3779B97F4A7C15
  local z = state
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return state, z ~ (z >> 31)
end

-- A 64-bit integer from a seed: an integer as it is, a float through its integer part and
-- fraction, a string through FNV-1a.
local function seed_int(seed)
  if seed == nil then return 1 end
  if type(seed) == "string" then
    local h = 0xCBF29CE484222325
    for i = 1, #seed do h = (h ~ string_byte(seed, i)) * 0x100000001B3 end
    return h
  end
  if type(seed) ~= "number" then error("seed: number or string expected, got " .. type(seed), 3) end
  if seed ~= seed or seed == math.huge or seed == -math.huge then error("seed: a finite number expected", 3) end
  local i = math.tointeger(seed)
  if i then return i end
  local ip = floor(seed)
  return (math.tointeger(ip) or 0) ~ floor((seed - ip) * 2 ^ 52)
end

--- A new generator.
-- @param[opt] seed integer, number or string (default 1)
-- @treturn table a generator: call it (`rng()`) for a number in [0, 1)
function M.new(seed)
  local st = seed_int(seed)
  local s = {}
  for i = 1, 4 do st, s[i] = splitmix(st) end
  return setmetatable({ s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4] }, R)
end

--- The next 64-bit integer (any bits).
function R:next64()
  local s1, s2, s3, s4 = self.s1, self.s2, self.s3, self.s4
  local result = rotl(s2 * 5, 7) * 9
  local t = s2 << 17
  s3 = s3 ~ s1
  s4 = s4 ~ s2
  s2 = s2 ~ s3
  s1 = s1 ~ s4
  s3 = s3 ~ t
  s4 = rotl(s4, 45)
  self.s1, self.s2, self.s3, self.s4 = s1, s2, s3, s4
  return result
end

--- A number in [0, 1) (53 random bits).
function R:float()
  return (self:next64() >> 11) * (1.0 / 9007199254740992.0)
end

R.__call = R.float

--- An integer in [lo, hi] (both included).
function R:int(lo, hi)
  if hi < lo then error("int: empty range", 2) end
  return lo + floor(self:float() * (hi - lo + 1))
end

--- A number in [lo, hi).
function R:uniform(lo, hi)
  return lo + (hi - lo) * self:float()
end

--- One element of a non-empty list (nil for an empty one).
function R:pick(list)
  if #list == 0 then return nil end
  return list[self:int(1, #list)]
end

--- A new generator whose sequence depends on this one's seed and a label, not on how many
-- numbers this one has given: parts of a city draw from their own stream, so adding a
-- road does not change every building.
-- @param label string or integer
function R:derive(label)
  local h = self.seed_key or 0
  return M.new((seed_int(label) * 0x9E3779B97F4A7C15) ~ h)
end

--- A function of no arguments returning [0, 1), for APIs that take `rng = function`. It
-- draws from this generator (the same sequence as `float`), with `next64` inlined: a city's
-- blocks draw hundreds of thousands of numbers through it.
function R:fn()
  local g = self
  local f = function()
    local s1, s2, s3, s4 = g.s1, g.s2, g.s3, g.s4
    local result = rotl(s2 * 5, 7) * 9
    local t = s2 << 17
    s3 = s3 ~ s1
    s4 = s4 ~ s2
    s2 = s2 ~ s3
    s1 = s1 ~ s4
    s3 = s3 ~ t
    g.s1, g.s2, g.s3, g.s4 = s1, s2, s3, rotl(s4, 45)
    return (result >> 11) * (1.0 / 9007199254740992.0)
  end
  made_by[f] = g
  return f
end

--- The generator whose `fn` made the function f, or nil (f made otherwise). C code that
-- draws many numbers (psdl.city.blocks' building rows, `core.row_buildings`) runs the same
-- generator on its state `s1` .. `s4` and writes the state back, instead of calling f.
-- @tparam function f
-- @treturn table|nil the generator
function M.generator(f)
  return made_by[f]
end

--- A generator for a seed whose `derive` streams are keyed by that seed.
function M.seeded(seed)
  local r = M.new(seed)
  r.seed_key = seed_int(seed)
  return r
end

return M
