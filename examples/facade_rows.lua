--- Facade rows: three long blocks along a high street, each filled with a different kind of
-- building row: terraced houses flush with the sidewalk (no gaps, few floors), offices set
-- back behind a forecourt with gaps between them, and towers. Every building gets a facade
-- bound per wall run (light index from its direction), one facade per wall segment with
-- repeats per bay and per floor, and a flat roof.
--
--   scripts/psdl build examples/facade_rows.lua -o facade_rows.psdl --preview facade_rows.png
local psdl = require "psdl"

local city = psdl.city.new{ style = "london", seed = 5, name = "rows" }
local S = psdl.styles and psdl.styles.london or require "psdl.styles.london"

-- a high street along x with three cross streets and a back lane: two rows of long blocks
local xs = { 0, 160, 320, 480 }
local south, mid, north = {}, {}, {}
for i, x in ipairs(xs) do
  south[i] = city:node(x, 0)
  mid[i] = city:node(x, 70)
  north[i] = city:node(x, 140)
end
for i = 1, #xs do
  if i < #xs then
    city:road(south[i], south[i + 1], { profile = "street" })
    city:road(mid[i], mid[i + 1], { profile = "avenue", name = "High Street" })
    city:road(north[i], north[i + 1], { profile = "street" })
  end
  city:road(south[i], mid[i], { profile = "street" })
  city:road(mid[i], north[i], { profile = "street" })
end

local terraces = { floors = { 2, 3 }, floor_height = 3, bay_width = 4, setback = 0, gap = { 0, 0 },
                   depth = { 10, 12 }, facades = S.facades.upper }
local offices = { floors = { 4, 7 }, floor_height = 3.5, bay_width = 4, setback = 6, gap = { 4, 10 },
                  depth = { 14, 20 }, facades = S.facades.upper }
local towers = { floors = { 10, 16 }, floor_height = 3.5, bay_width = 4, setback = 3, gap = { 8, 14 },
                 depth = { 18, 24 }, facades = S.facades.upper }

city:blocks{
  buildings = terraces,
  overrides = {
    { point = { 240, 35 }, buildings = offices },
    { point = { 400, 35 }, buildings = towers },
    { point = { 240, 105 }, buildings = offices },
    { point = { 400, 105 }, buildings = towers },
  },
}

return city
