--- A bridge with railings: a street climbs to a deck 8 m up, crosses a road below and comes
-- down again. The deck rooms are warp rooms (flag 0x40, allowed to overlap the road below in
-- plan) carrying bridge railings (0x9 strip form, heights 1.5 / 1.0, flags 0x4003); the ramps
-- are ordinary road rooms with low walls. Ground blocks on both banks link the road below to
-- the ramps (every road room is reachable from every other through neighbour links).
--
--   scripts/psdl build examples/bridge.lua -o bridge.psdl
--   lua5.4 examples/bridge.lua OUT.psdl      (the same as a plain Lua program)
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/bridge.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local b = psdl.builder.new{ style = "london" }
local road = { kind = "road", left = 5, right = 5, sidewalk_left = 2, sidewalk_right = 2 }
local deck_y = 8

-- the road below, along X at ground level
b:road_record{ rooms = b:street{ path = { { -100, 0, 0 }, { 100, 0, 0 } }, profile = road,
                                 room = { name = "Riverside", prop_rule = 14 } } }

-- the bridge along +Z: ramp up, deck, ramp down, one road record
local rooms = {}
local function add(list) for _, r in ipairs(list) do rooms[#rooms + 1] = r end end
local wall = { textures = b.style.tunnels.railing, height = 1.0, height2 = 1.0, outer = true }
add(b:street{ path = { { 0, 0, -140 }, { 0, deck_y, -40 } }, profile = road, railing = wall,
              room = { name = "South Approach", prop_rule = 15 } })
local deck = b:street{ path = { { 0, deck_y, -40 }, { 0, deck_y, 40 } }, profile = road,
                       railing = { textures = b.style.tunnels.bridge_railing },   -- 1.5 / 1.0, 0x4003
                       room = { name = "Deck", bridge = true } }
add(deck)
add(b:street{ path = { { 0, deck_y, 40 }, { 0, 0, 140 } }, profile = road, railing = wall,
              room = { name = "North Approach" } })
b:road_record{ rooms = rooms }

-- the ground on both sides of the road below: it meets the road, climbs beside the ramps to
-- the deck's ends (an abutment under each end of the deck) and so links the two roads'
-- rooms (a car can drive from the road below across the ground onto the bridge); it meets the
-- rooms at the outer edge of the sidewalks (0.15 m up) and follows the ramp's top section
local function ground(s, name)
  local y, top = 0.15, deck_y + 0.15
  local pts = { { -100, y, 7 * s }, { 100, y, 7 * s }, { 100, y, 140 * s }, { 7, y, 140 * s }, { 7, top, 40 * s },
                { 5, deck_y, 40 * s }, { -5, deck_y, 40 * s }, { -7, top, 40 * s }, { -7, y, 140 * s }, { -100, y, 140 * s } }
  b:block{ outline = pts, texture = b.style.ground.grass[1], room = { name = name } }
end
ground(1, "North Bank")
ground(-1, "South Bank")

local doc, report = b:finish()
if standalone and arg and arg[1] then
  -- run as a command with an output name: write the city and print a line about it
  local out = arg[1]
  assert(psdl.write(doc, out, { strict = true }))
  print(string.format("%s: %d rooms, %d vertices, %d textures, deck flags 0x%02x", out, report.rooms,
    report.vertices, report.textures, doc.rooms[deck[1].id].flags))
end
return doc
