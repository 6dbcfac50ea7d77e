--- The roads phase of the benchmark grid city (bench/grid_city.lua) on its own:
-- `psdl.city.road.build_roads` (network conflicts and classes, intersection rooms, runs with
-- their centre lines and street rooms, road records, room overlaps) into a fresh builder,
-- `runs` times on one city built once before (ground only), the collector as `City:build`
-- sets it (incremental, pause 400). Prints the best, median and mean seconds (CPU) and the
-- memory one build_roads allocates (KB, collector stopped for that one run).
--
--   lua5.4 bench/bench_roads.lua [N=19] [runs=30]
--
-- TREE=dir runs another checkout's lua/ and build/ (alternate old and new: the machine's
-- load varies).
local here = (os.getenv("TREE") or (arg[0]:match("^(.*)/bench/") or ".")) .. "/bench"
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local grid_city = dofile(here .. "/grid_city.lua")
local road = require "psdl.city.road"
local builder = require "psdl.builder"
local random = require "psdl.city.random"

local N = tonumber(arg[1]) or 19
local runs = tonumber(arg[2]) or 30
local city = grid_city(psdl, N, false)
city:build() -- the city's network resolved and its nodes' heights set, as a build leaves them
collectgarbage("incremental")
collectgarbage("setpause", 400)

local ts, sum = {}, 0
for i = 1, runs do
  local b = builder.new{ style = city.style }
  local t0 = os.clock()
  road.build_roads(city, b, random.seeded(1))
  ts[i] = os.clock() - t0
  sum = sum + ts[i]
end
table.sort(ts)

collectgarbage("collect")
collectgarbage("stop")
local b = builder.new{ style = city.style }
local m0 = collectgarbage("count")
road.build_roads(city, b, random.seeded(1))
local kb = collectgarbage("count") - m0
collectgarbage("restart")

print(string.format("roads phase of the %d x %d grid city (%d rooms), %d runs: best %.4f s, median %.4f s, "
  .. "mean %.4f s; %.0f KB allocated", N, N, #b.rooms, runs, ts[1], ts[(runs + 1) // 2], sum / runs, kb))
