--- A straight street: 120 m of two-lane road with 3 m sidewalks, split into two road rooms
-- that share a full cross-section, a block on each side, one road record with a prop rule.
--
--   scripts/psdl build examples/street.lua -o street.psdl
--   lua5.4 examples/street.lua OUT.psdl      (the same as a plain Lua program)
--
-- (The Lua modules come from ../lua beside this script and psdl/core.so from ../build,
-- or from $PSDL_BUILD_DIR.)
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/street.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local b = psdl.builder.new{ style = "london" }
local profile = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }

-- the street runs +Z; sections every 5 m, a room every 12 sections
local rooms, street = b:street{
  path = { { 0, 0, 0 }, { 0, 0, 120 } },
  profile = profile,
  textures = b.style.roads.lanes2,
  split = 12,
  room = { name = "High Street", prop_rule = 5 },
}
b:road_record{ rooms = rooms, lanes_left = { 0.5 }, lanes_right = { 0.5 } }

-- blocks on both sides: their inner edge is the street's outer sidewalk line, point for point
local function block(edge, outward)
  local outline = {}
  for i = 1, #edge do outline[i] = edge[i] end
  local last, first = edge[#edge], edge[1]
  outline[#outline + 1] = { last[1] + outward * 40, last[2], last[3] }
  outline[#outline + 1] = { first[1] + outward * 40, first[2], first[3] }
  return b:block{ outline = outline, texture = b.style.ground.grass[1] }
end
block(street.left, 1)   -- the left of travel (+Z) is +X (§4.2)
block(street.right, -1)

local doc, report = b:finish()
if standalone and arg and arg[1] then
  -- run as a command with an output name: write the city and print a line about it
  local out = arg[1]
  assert(psdl.write(doc, out, { strict = true }))
  print(string.format("%s: %d rooms, %d vertices, %d textures, %d road record", out, report.rooms,
    report.vertices, report.textures, #doc.roads))
end
return doc
