--- Downtown: a grid of streets crossed by two avenues (elevated dividers) and a planted
-- boulevard (flat divider), a curved street that leaves the grid for a dead end, blocks with
-- building rows, a park and a plaza.
--
--   scripts/psdl build examples/downtown.lua -o downtown.psdl --preview downtown.png
local psdl = require "psdl"

local city = psdl.city.new{ style = "london", seed = 2024, name = "downtown" }

-- the grid: 6 x 5 nodes, blocks 110 m by 90 m
local xs, zs = { 0, 110, 220, 330, 440, 550 }, { 0, 90, 180, 270, 360 }
local node = {}
for i, x in ipairs(xs) do
  node[i] = {}
  for j, z in ipairs(zs) do node[i][j] = city:node(x, z) end
end
for i = 1, #xs do
  for j = 1, #zs do
    if i < #xs then -- east-west: avenues on the second and fourth rows
      city:road(node[i][j], node[i + 1][j], { profile = (j == 2 or j == 4) and "avenue" or "street" })
    end
    if j < #zs then -- north-south: the boulevard on the fourth column, six lanes
      local boulevard = i == 4
      city:road(node[i][j], node[i][j + 1], { profile = boulevard and "boulevard" or "street",
                                              lanes = boulevard and 6 or nil })
    end
  end
end

-- a curved street out of the north-east corner to a turning circle
local hill = city:node(700, 470)
city:road(node[6][5], hill, { via = { { 600, 430 }, { 650, 480 } }, name = "Crescent Rise" })

-- blocks: buildings of 2 to 9 floors; one park, one plaza
city:blocks{
  buildings = { floors = { 2, 9 }, setback = 2, gap = { 0, 6 } },
  overrides = { { point = { 165, 135 }, park = true }, { point = { 385, 225 }, plaza = true } },
}

return city
