--- The roads phase's layout (`psdl.city.road.build_roads`: the network, the intersections,
-- the road runs and their records) of the 19 x 19 bench city alone: its best time over
-- several builds, its Lua allocation with the collector stopped, or one layout run inside a
-- coroutine for callgrind's instruction count (bench/README.md "Issue 13, round 6: roads
-- phase"; the measuring is bench/phase_run.lua's).
--
--   lua5.4 bench/roads_phase.lua [N=19] [--buildings] [--alloc | --callgrind] [runs=5]
--
-- `--callgrind`: build once, then run the second build's layout in a coroutine, so that
--   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=lua_resume \
--     lua5.4 bench/roads_phase.lua 19 --callgrind
-- counts the layout's instructions only. Ground only unless `--buildings` (the layout is the
-- same; the blocks after it are not).
local here = (arg and arg[0] or "bench/roads_phase.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
dofile(here .. "/phase_run.lua")(require "psdl", here, "psdl.city.road", "build_roads", "road.build_roads", false, arg)
