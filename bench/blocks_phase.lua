--- The blocks phase (`psdl.city.blocks.fill`) of the 19 x 19 bench city alone: its best
-- time over several builds, its Lua allocation with the collector stopped, or one fill run
-- inside a coroutine for callgrind's instruction count (bench/README.md "The blocks phase,
-- round 5"; the measuring is bench/phase_run.lua's).
--
--   lua5.4 bench/blocks_phase.lua [N=19] [--no-buildings] [--alloc | --callgrind] [runs=5]
--
-- `--callgrind`: build once, then run the second build's fill in a coroutine, so that
--   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=lua_resume \
--     lua5.4 bench/blocks_phase.lua 19 --callgrind
-- counts the fill's instructions only (nothing else in psdl resumes a coroutine).
local here = (arg and arg[0] or "bench/blocks_phase.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
dofile(here .. "/phase_run.lua")(require "psdl", here, "psdl.city.blocks", "fill", "blocks.fill", true, arg)
