--- A 4-way intersection and a T-junction joined by a street, with an alley (walkway) mouth
-- on the 4-way: flat road fans, corner sidewalks with rounded curbs, sidewalk caps where the
-- street's sidewalks stop at the alley, a crosswalk across every street, and the road rooms
-- starting exactly on the intersections' end sections.
--
--   scripts/psdl build examples/junctions.lua -o junctions.psdl
--   lua5.4 examples/junctions.lua OUT.psdl      (the same as a plain Lua program)
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/junctions.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local b = psdl.builder.new{ style = "sf" }
local street = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
local alley = { kind = "walkway", left = 2.5, right = 2.5 }

-- 4-way at the origin: east, north (+Z), west, and the alley to the south (-Z)
local cross, x4 = b:intersection{
  center = { 0, 0, 0 }, radius = 5,
  arms = { { dir = { 1, 0 }, profile = street }, { dir = { 0, 1 }, profile = street },
           { dir = { -1, 0 }, profile = street }, { dir = { 0, -1 }, profile = alley } },
  room = { name = "Market Cross" },
}
-- T-junction 150 m east: the stem comes in from the west, the through road runs north-south
local tee, xt = b:intersection{
  center = { 150, 0, 0 }, radius = 5,
  arms = { { dir = { -1, 0 }, profile = street }, { dir = { 0, 1 }, profile = street },
           { dir = { 0, -1 }, profile = street } },
  room = { name = "Bridge End" },
}

local function road(o)
  local rooms = b:street(o)
  b:road_record{ rooms = rooms }
  return rooms
end
-- the street between them starts on the 4-way's east arm and ends on the T's west arm
road{ from = { x4, 1 }, to = { xt, 1 }, profile = street, room = { name = "Long Lane", prop_rule = 3 } }
-- dead-end stubs on the other arms
road{ from = { x4, 2 }, path = { { 0, 0, 80 } }, profile = street, room = { prop_rule = 4 } }
road{ from = { x4, 3 }, path = { { -80, 0, 0 } }, profile = street, room = { prop_rule = 4 } }
road{ from = { x4, 4 }, path = { { 0, 0, -60 } }, profile = alley, textures = b.style.alley.surface }
road{ from = { xt, 2 }, path = { { 150, 0, 80 } }, profile = street }
road{ from = { xt, 3 }, path = { { 150, 0, -80 } }, profile = street }

local doc, report = b:finish()
if standalone and arg and arg[1] then
  -- run as a command with an output name: write the city and print a line about it
  local out = arg[1]
  assert(psdl.write(doc, out, { strict = true }))
  print(string.format("%s: %d rooms, %d vertices, %d textures, %d road records", out, report.rooms,
    report.vertices, report.textures, #doc.roads))
end
return doc
