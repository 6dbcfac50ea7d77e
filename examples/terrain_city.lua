--- A small town on a heightmap: the ground of a 640 m hood (64 x 64 cells of 10 m) rising
-- 1 m per 10 m towards the north, with a hill in the north-east, goes through a 16-bit PNG
-- heightmap and `psdl.terrain.load` (as one exported from a Sims 2 hood would), and the
-- city lies on it with `terrain = t`: every node at the ground's height, road centre lines
-- following the ground between the flat intersections, block ground and buildings on the
-- slope (slivers under the facades where it falls away), a park on the hilltop, and terrain
-- ground rooms out to the edges of the heightmap.
--
--   scripts/psdl build examples/terrain_city.lua -o terrain_city.psdl --preview terrain_city.png
--   scripts/psdl terrain export terrain_city.psdl -o terrain_city_ground.png   # and back out
--
-- Run directly (`lua5.4 examples/terrain_city.lua OUT.psdl`) it also writes the city,
-- exports its ground and prints how far that lies from the heightmap.
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/terrain_city.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"
local terrain = psdl.terrain

-- the heightmap: x east (columns), z north (rows), heights above the hood's water (312.5)
local CELL, N = 10, 64
local function ground(x, z)
  local dx, dz = x - 430, z - 420
  return 320 + 0.1 * z + 16 * math.exp(-(dx * dx + dz * dz) / (2 * 85 * 85)) + 1.5 * math.sin(x / 60)
end
local grid = { rows = N + 1, cols = N + 1, heights = {} }
for i = 0, N do
  for j = 0, N do grid.heights[i * (N + 1) + j + 1] = ground(j * CELL, i * CELL) end
end
local png = assert(terrain.encode_heightmap(grid, { format = "png", cell_size = CELL }))
local t = assert(terrain.load(png, { bytes = true })) -- cell size and height mapping from the PNG

local city = psdl.city.new{ style = "sf", seed = 6, name = "hillside", terrain = t, spacing = 10 }

-- a 4 x 3 grid of blocks, 100 m by 90 m
local xs, zs = { 130, 230, 330, 430, 530 }, { 150, 240, 330, 420 }
local node = {}
for i, x in ipairs(xs) do
  node[i] = {}
  for j, z in ipairs(zs) do node[i][j] = city:node(x, z) end -- y: the ground's
end
for i = 1, #xs do
  for j = 1, #zs do
    if i < #xs then city:road(node[i][j], node[i + 1][j], { profile = j == 2 and "avenue" or "street" }) end
    if j < #zs then city:road(node[i][j], node[i][j + 1]) end
  end
end
-- a lane winding up from the north-west corner over the ridge, and a road out to the west
local top = city:node(300, 560)
city:road(node[1][4], top, { via = { { 160, 500 }, { 230, 560 } }, name = "Ridge Lane" })
city:road(node[1][2], city:node(20, 250), { name = "West Road" })

city:blocks{
  buildings = { floors = { 2, 4 }, floor_height = 3.2, gap = { 0, 3 }, depth = { 10, 14 } },
  overrides = { { point = { 480, 375 }, park = true } }, -- the hilltop
}

if standalone and arg and arg[1] then
  -- run as a script with an output name: build, write, and compare the city's ground with
  -- the heightmap
  local out = arg[1]
  local _, report = assert(city:save(out, { strict = true }))
  print(psdl.city.summary(report, out))
  local back = assert(terrain.from_city(city, { like = t }))
  local worst, n = 0, 0
  for k = 1, #back.heights do
    local d = math.abs(back.heights[k] - t.heights[k])
    if d > worst then worst = d end
    if d < 0.25 then n = n + 1 end
  end
  print(string.format("ground exported back: %d of %d points within 0.25 m of the heightmap (worst %.2f m, "
    .. "at the roads' flat intersections and level cross-sections)", n, #back.heights, worst))
end

return city
