--- A row of buildings on sloping ground: a street climbs 6 m over 120 m; the block beside
-- it slopes with it (its outline given only by its corners: finish() finds the street's
-- sidewalk points on the block's edge and inserts them, T-junction repair). Five buildings
-- stand in a row: facade bounds per wall run with light indices from the walls' directions,
-- ground-floor and upper facades, slivers under the downhill walls, flat roofs.
--
--   scripts/psdl build examples/facades.lua -o facades.psdl
--   lua5.4 examples/facades.lua OUT.psdl      (the same as a plain Lua program)
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/facades.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local b = psdl.builder.new{ style = "london" }
local rise, length = 6, 120
local function ground(z) return 0.15 + rise * z / length end   -- sidewalk level along the street

local rooms, street = b:street{ path = { { 0, 0, 0 }, { 0, rise, length } },
                                profile = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 },
                                room = { name = "Hill Street", prop_rule = 4 } }
-- one road record (a lane each way): traffic and pedestrians in a package come from it
b:road_record{ rooms = rooms, lanes_left = { 0.5 }, lanes_right = { 0.5 } }

-- the block on the left of the street (+X), 40 m deep, sloping with the street
local x0 = street.left[1][1]
local block = b:block{
  outline = { { x0, ground(0), 0 }, { x0, ground(length), length }, { x0 + 40, ground(length), length },
              { x0 + 40, ground(0), 0 } },
  texture = b.style.ground.paving[2],
  room = { name = "Hill Block" },
}

-- five buildings 2 m behind the sidewalk: 18 m wide, 15 m deep, 4 m apart
local facades = b.style.facades
for i = 0, 4 do
  local z0, z1 = 4 + i * 22, 22 + i * 22
  local xa, xb = x0 + 2, x0 + 17
  local stats = b:building(block, {
    outline = { { xa, ground(z0), z0 }, { xa, ground(z1), z1 }, { xb, ground(z1), z1 }, { xb, ground(z0), z0 } },
    floors = 3 + i % 3, floor_height = 3, bay_width = 4.5,
    ground_height = 4, ground = facades.ground[1 + i % #facades.ground],
    facade = facades.upper[1 + i % #facades.upper],
    roof = b.style.roofs[1], sliver = b.style.slivers[1], sliver_density = 0.25,
  })
end

local doc, report = b:finish()
if standalone and arg and arg[1] then
  -- run as a command with an output name: write the city and print a line about it
  local out = arg[1]
  assert(psdl.write(doc, out, { strict = true }))
  print(string.format("%s: %d rooms, %d vertices, %d heights, %d textures; %d T-junctions repaired", out,
    report.rooms, report.vertices, report.heights, report.textures, report.tjunctions.repaired))
end
return doc
