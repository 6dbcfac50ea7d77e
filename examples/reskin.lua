#!/usr/bin/env lua5.4
-- Re-skin a city from a script: rename textures, point the intersections at another
-- texture group, check what changed with the structural diff, write the city atomically
-- and export it to glTF to look at in Blender.
--
--     lua5.4 examples/reskin.lua [CITY.psdl] [OUT_DIR]
--
-- Run from the repository root (it finds the modules in ./lua and ./build, or in the
-- folder named by PSDL_BUILD_DIR). Defaults: spec/fixtures/grid_n3.psdl, /tmp.
local build = os.getenv("PSDL_BUILD_DIR") or "build"
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = build .. "/?.so;" .. package.cpath

local psdl = require "psdl"

local city = arg[1] or "spec/fixtures/grid_n3.psdl"
local out_dir = arg[2] or "/tmp"
local name = city:match("([^/]*)%.[Pp][Ss][Dd][Ll]$") or "city"

local original = assert(psdl.read(city))
local doc = assert(psdl.read(city))

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

-- 5. Write atomically (validates the format's rules first) and export. A reskin moves no
--    geometry, so the drivability rules (holes, overlaps, ...) are the source city's business,
--    not this script's: `drivable = false` (the default city, a synthetic codec fixture, has
--    holes by construction; `psdl validate` lists them).
local out = out_dir .. "/" .. name .. "_reskinned.psdl"
assert(psdl.write(doc, out, { drivable = false }))
local stats = assert(doc:export(out_dir .. "/" .. name .. "_reskinned.glb", { source = out }))
print(string.format("wrote %s and %s: %d triangles, %d materials", out, stats.files[1],
  stats.triangles, stats.materials))
