--- A ring road with a tunnel and a bridge: an avenue on a 280 m circle, four spokes to a
-- central junction, a street that dips under the ring in a tunnel (walled cuts, a bore with
-- a curved ceiling: subterranean + warp rooms) and a street that climbs over it on a bridge
-- (ramps with low railings, a deck of warp rooms with bridge railings).
--
--   scripts/psdl build examples/ring.lua -o ring.psdl --preview ring.png
local psdl = require "psdl"

local city = psdl.city.new{ style = "sf", seed = 7, name = "ringtown" }
local R = 280

local function polar(deg, r)
  local a = math.rad(deg)
  return r * math.cos(a), r * math.sin(a)
end

-- the ring: eight nodes, two via points on the circle between each pair
local ring = {}
for k = 0, 7 do ring[k] = city:node(polar(45 * k, R)) end
for k = 0, 7 do
  local v1x, v1z = polar(45 * k + 15, R)
  local v2x, v2z = polar(45 * k + 30, R)
  city:road(ring[k], ring[(k + 1) % 8], { profile = "avenue", via = { { v1x, v1z }, { v2x, v2z } },
                                          name = "Ring " .. k })
end

-- spokes: the hub to the ring at 0, 90, 180 and 270 degrees; the east and west spokes
-- have a node halfway, where the bridge and the tunnel start
local hub = city:node(0, 0, { name = "Hub" })
local west, east = city:node(-140, 0), city:node(140, 0)
city:road(hub, ring[2])
city:road(hub, ring[6])
city:road(hub, west)
city:road(west, ring[4])
city:road(hub, east)
city:road(east, ring[0])

-- under the ring between its nodes at 135 and 180 degrees
local far_west = city:node(-452, 282)
city:road(west, far_west, { tunnel = { depth = 9, ramp = 60 }, name = "Underpass" })

-- over the ring between 315 and 360 degrees, a deck 8 m up
local far_east = city:node(452, -282)
city:road(east, far_east, { bridge = { height = 8, ramp = 60 }, name = "Flyover" })

-- buildings in three quarters; the quarter the flyover crosses is a park
city:blocks{ buildings = { floors = { 2, 6 } }, overrides = { { point = { 100, -100 }, park = true } } }

return city
