#!/usr/bin/env lua5.4
-- Re-skin a city from a script: rename textures, point the intersections at another
-- texture group, check what changed with the structural diff, write the city atomically
-- and export it to glTF to look at in Blender.
--
--     lua5.4 examples/reskin.lua [CITY.psdl] [OUT_DIR]
--     scripts/psdl build examples/reskin.lua -o reskinned.psdl
--
-- As a plain Lua program it runs from any folder (it finds the modules in ../lua and
-- ../build beside this script, or in the folder named by PSDL_BUILD_DIR) and writes
-- OUT_DIR/<name>_reskinned.psdl and .glb. Defaults: spec/fixtures/grid_n3.psdl of the
-- repository, /tmp. Under `psdl build` it re-skins the junctions example
-- (examples/junctions.lua, loaded with require) and returns the result, writing nothing
-- itself.
local standalone = rawget(_ENV, "psdl") == nil -- psdl build gives the script a psdl global
local here = (arg and arg[0] or "examples/reskin.lua"):match("^(.*)/[^/]*$") or "."
if standalone then
  package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
  package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
end
local psdl = rawget(_ENV, "psdl") or require "psdl"

local original, doc, name, out_dir
if standalone then
  local city = arg[1] or (here .. "/../spec/fixtures/grid_n3.psdl")
  out_dir = arg[2] or "/tmp"
  name = city:match("([^/]*)%.[Pp][Ss][Dd][Ll]$") or "city"
  original = assert(psdl.read(city))
  doc = assert(psdl.read(city))
else
  name = "junctions"
  original = psdl.decode(psdl.encode(require "junctions"))
  doc = psdl.decode(psdl.encode(original))
end

-- 1. Rename two textures (several at once: a mapping table).
local report = assert(doc:rename_textures { r4_f = "r6_f", swalk_f = "swalk_stone" })
print(report.summary)

-- 2. The intersections (texture group 4: surface, sidewalk, crosswalk) use the road group 1
--    instead, in every room that has them.
report = assert(doc:remap_texture(4, 1))
print(report.summary)

-- 3. Refused edits leave the document alone and say why.
local ok, msg = doc:move_texture_group(16, 2)
print("refused as expected:", ok == nil, msg)

-- 4. What changed, structurally.
local d = doc:diff(original)
print(#d.differences .. " differences, for example " .. d.differences[1].path)

if not standalone then return doc end -- psdl build writes it

-- 5. Write atomically (validates the format's rules first) and export. A reskin moves no
--    geometry, so the drivability rules (holes, overlaps, ...) are the source city's business,
--    not this script's: `drivable = false` (the default city, a synthetic codec fixture, has
--    holes by construction; `psdl validate` lists them).
local out = out_dir .. "/" .. name .. "_reskinned.psdl"
assert(psdl.write(doc, out, { drivable = false }))
local stats = assert(doc:export(out_dir .. "/" .. name .. "_reskinned.glb", { source = out }))
print(string.format("wrote %s and %s: %d triangles, %d materials", out, stats.files[1],
  stats.triangles, stats.materials))
