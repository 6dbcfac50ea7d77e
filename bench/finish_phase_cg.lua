--- The finish phase alone under callgrind: builds the grid bench city (bench/grid_city.lua)
-- once, with `Builder:finish` run inside a coroutine, so that callgrind's
-- `--toggle-collect=lua_resume` counts the instructions of `finish` only (perimeters,
-- T-junctions, links, attributes, records, height mismatches, validation), not the roads and
-- blocks phases around it.
--
--   valgrind --tool=callgrind --toggle-collect=lua_resume --callgrind-out-file=/tmp/fin.out \
--     lua5.4 bench/finish_phase_cg.lua TREE [N=19] [buildings]
--
-- TREE is the source tree to load (lua/ and build/psdl/core.so; `PSDL_BUILD_DIR` names
-- another build folder), so that two trees are measured by the same script. Prints rooms,
-- vertices and the finish phase's seconds (meaningless under callgrind; the instruction count
-- is the figure, `callgrind_annotate --inclusive=yes` splits it by C function).
local root = arg[1] or "."
local N = tonumber(arg[2] or 19)
local buildings = arg[3] == "buildings"
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or root .. "/build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local builder = require "psdl.builder"
local Builder = getmetatable(builder.new()).__index
local finish = Builder.finish
Builder.finish = function(...) return coroutine.wrap(finish)(...) end
local city = dofile(root .. "/bench/grid_city.lua")(psdl, N, buildings)
collectgarbage()
collectgarbage()
local _, report = city:build()
print(report.rooms, report.vertices, report.seconds.finish)
