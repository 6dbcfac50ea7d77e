--- Hilly streets, San Francisco style: a grid laid over a hill 28 m high, every node at the
-- height of the ground under it, streets climbing between flat intersections (level
-- cross-sections, planar quads), and rows of houses whose facades stand on the high side of
-- their footprint with slivers filling the sloping ground under them.
--
--   scripts/psdl build examples/hills.lua -o hills.psdl --preview hills.png
local psdl = require "psdl"

-- the ground: a round hill north-east of the centre and a gentle slope towards the bay (-z)
local function ground(x, z)
  local dx, dz = x - 260, z - 200
  return 28 * math.exp(-(dx * dx + dz * dz) / (2 * 170 * 170)) + 0.02 * z
end

local city = psdl.city.new{ style = "sf", seed = 11, name = "hilltown", height = ground }

local xs, zs = { 0, 100, 200, 300, 400, 500 }, { 0, 85, 170, 255, 340 }
local node = {}
for i, x in ipairs(xs) do
  node[i] = {}
  for j, z in ipairs(zs) do node[i][j] = city:node(x, z) end -- y = ground(x, z)
end
for i = 1, #xs do
  for j = 1, #zs do
    if i < #xs then city:road(node[i][j], node[i + 1][j], { profile = j == 3 and "avenue" or "street", sidewalk_width = 3 }) end
    if j < #zs then city:road(node[i][j], node[i][j + 1], { profile = "street", sidewalk_width = 3 }) end
  end
end

city:blocks{
  buildings = { floors = { 2, 4 }, floor_height = 3.2, setback = 0, gap = { 0, 2 }, depth = { 10, 14 } },
  overrides = { { point = { 250, 212 }, park = true } },   -- the hilltop
}

return city
