--- Visibility miss rate (issue 11): the room pairs a dense reference sampling finds that the
-- default setting of `psdl.package.cpvs_gen` does not, and the processor time of both.
--
--   lua5.4 bench/bench_cpvs_miss.lua CITY [ref_rays=30720] [ref_eyes=64] [ref_aimed=128]
--
-- CITY is a city script (examples/downtown.lua, bench/london_city.lua) or an .osm extract
-- (imported with `psdl.osm`, blocks without buildings, as the package spec does).
local here = (arg and arg[0] or "bench/bench_cpvs_miss.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local gen = require "psdl.package.cpvs_gen"

local path = assert(arg[1], "usage: bench_cpvs_miss.lua CITY [ref_rays] [ref_eyes] [ref_aimed]")
local doc
if path:match("%.osm$") then
  local osm = require "psdl.osm"
  local city = psdl.city.from_network(osm.network(assert(osm.read(path)), {}), { seed = 1 })
  city:blocks { buildings = false }
  doc = city:build()
else
  local env = setmetatable({ psdl = psdl, arg = { [0] = path } }, { __index = _G })
  doc = assert(loadfile(path, "t", env))():build()
end
local ref_opts = { rays = tonumber(arg[2]) or 30720, eyes = tonumber(arg[3]) or 64, targeted = tonumber(arg[4]) or 128,
                   seed = 7, dilate = 0 }

local c0 = os.clock()
local def, dinfo = gen.generate(doc, {})
local c1 = os.clock()
local ref, rinfo = gen.generate(doc, ref_opts)
local c2 = os.clock()
local miss, total, extra = gen.compare(def, ref)
print(string.format("%s: %d rooms; default %.2f s CPU, mean row %.1f; reference (%d/%d/%d) %.2f s CPU, mean row %.1f",
  path, #doc.rooms, c1 - c0, dinfo.mean, ref_opts.rays, ref_opts.eyes, ref_opts.targeted, c2 - c1, rinfo.mean))
print(string.format("missed %d of %d reference pairs (%.2f %%); %d pairs only in the default", miss, total,
  100 * miss / math.max(total, 1), extra))
