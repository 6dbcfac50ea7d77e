--- A curved divided avenue: four lanes each way around a sweeping bend that climbs 4 m,
-- an elevated planted divider capped at both ends of the run, 4 m sidewalks, split into
-- road rooms at full sections, one road record (divided, with sidewalks).
--
--   scripts/psdl build examples/avenue.lua -o avenue.psdl
--   lua5.4 examples/avenue.lua OUT.psdl      (the same as a plain Lua program)
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
if standalone then
  local here = (arg and arg[0] or "examples/avenue.lua"):match("^(.*)/[^/]*$") or "."
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local b = psdl.builder.new{ style = "sf" }
local rooms, avenue = b:street{
  -- control points of the centre line; the spline adds sections where it bends and, on the
  -- climbing bend, where level sections would twist the quads by more than 2 cm
  path = { { 0, 0, 0 }, { 20, 0.5, 90 }, { 90, 2.5, 160 }, { 200, 4, 180 } },
  profile = { kind = "divided", left = 10, right = 10, median = 3, sidewalk_left = 4, sidewalk_right = 4 },
  textures = b.style.roads.lanes4,
  divider = { divider = "elevated", height = 0.15, divider_textures = b.style.dividers.planted,
              cap_start = true, cap_end = true },
  spacing = 6, split = 24,
  room = { name = "Embarcadero", prop_rule = 6 },
}
b:road_record{ rooms = rooms, lanes_left = { 0.5, 0.5 }, lanes_right = { 0.5, 0.5 } }

local doc, report = b:finish()
if standalone and arg and arg[1] then
  -- run as a command with an output name: write the city and print a line about it
  local out = arg[1]
  assert(psdl.write(doc, out, { strict = true }))
  print(string.format("%s: %d rooms, %d sections, %d vertices, quads planar within %.3f m", out, report.rooms,
    avenue.sections, report.vertices, psdl.geom.strip_deviation_flat(avenue.flat, avenue.stride)))
end
return doc
