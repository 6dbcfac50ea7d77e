--- A road tunnel: a street ramps down 7 m between retaining walls into a tunnel with a
-- curved ceiling (subterranean + warp rooms, flags 0x4A), meets an underground T-junction
-- whose walls and ceiling come from a junction tunnel (wall bits on the perimeter edges
-- that face no road), and climbs out again.
--
--   scripts/psdl build examples/tunnel.lua -o tunnel.psdl
--   lua5.4 examples/tunnel.lua OUT.psdl      (the same as a plain Lua program)
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/tunnel.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local b = psdl.builder.new{ style = "sf" }
local road = { kind = "road", left = 6, right = 6, sidewalk_left = 1.5, sidewalk_right = 1.5 }
local tunnel_tex = b.style.tunnels.road          -- s_tun_sw in all six slots
local walls = b.style.tunnels.retaining_wall     -- s_wall_veg
local depth = -7

-- the underground T-junction: the through tunnel runs +Z, a branch leaves to the east
local junction, x = b:intersection{
  center = { 0, depth, 150 }, radius = 3,
  arms = { { dir = { 0, -1 }, profile = road }, { dir = { 0, 1 }, profile = road },
           { dir = { 1, 0 }, profile = road } },
  room = { name = "Tunnel Junction", tunnel = true },
  tunnel = { textures = tunnel_tex, height = 9.5, height2 = 7.0, ceiling = true, walls = "outside" },
}

local function record(rooms) b:road_record{ rooms = rooms } end
local ramp = { textures = walls, left = true, right = true, height = 5.0, height2 = 2.0 }
local bore = { textures = tunnel_tex, ceiling = "curved", height = 9.5, height2 = 7.0 }

-- south: ramp down from the surface, then the bore to the junction
local south = {}
for _, r in ipairs(b:street{ path = { { 0, 0, 0 }, { 0, depth, 70 } }, profile = road, tunnel = ramp,
                             room = { name = "South Ramp", tunnel = false } }) do south[#south + 1] = r end
for _, r in ipairs(b:street{ path = { { 0, depth, 70 } }, to = { x, 1 }, profile = road, tunnel = bore,
                             room = { name = "South Bore" } }) do south[#south + 1] = r end
record(south)
-- north: bore from the junction, then the ramp up
local north = {}
for _, r in ipairs(b:street{ from = { x, 2 }, path = { { 0, depth, 230 } }, profile = road, tunnel = bore,
                             room = { name = "North Bore" } }) do north[#north + 1] = r end
for _, r in ipairs(b:street{ path = { { 0, depth, 230 }, { 0, 0, 300 } }, profile = road, tunnel = ramp,
                             room = { name = "North Ramp", tunnel = false } }) do north[#north + 1] = r end
record(north)
-- the branch: a curving bore to the east
record(b:street{ from = { x, 3 }, path = { { 60, depth, 170 }, { 110, depth, 210 } }, profile = road,
                 tunnel = bore, room = { name = "East Bore" } })

local doc, report = b:finish()
if standalone and arg and arg[1] then
  -- run as a command with an output name: write the city and print a line about it
  local out = arg[1]
  assert(psdl.write(doc, out, { strict = true }))
  print(string.format("%s: %d rooms, %d vertices, %d textures, %d road records", out, report.rooms,
    report.vertices, report.textures, #doc.roads))
end
return doc
