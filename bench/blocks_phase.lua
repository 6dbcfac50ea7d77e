--- The blocks phase (`psdl.city.blocks.fill`) of the 19 x 19 bench city alone: its best
-- time over several builds, its Lua allocation with the collector stopped, or one fill run
-- inside a coroutine for callgrind's instruction count (bench/README.md "The blocks phase,
-- round 5").
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
local psdl = require "psdl"
local grid_city = dofile(here .. "/grid_city.lua")

local N, runs, buildings, mode = 19, 5, true, "time"
do
  local pos = {}
  for _, a in ipairs(arg or {}) do
    if a == "--no-buildings" then buildings = false
    elseif a == "--alloc" then mode = "alloc"
    elseif a == "--callgrind" then mode = "callgrind"
    else pos[#pos + 1] = tonumber(a) end
  end
  N, runs = pos[1] or N, pos[2] or runs
end

local blocks = require "psdl.city.blocks"
local fill = blocks.fill
local best, kb, wrap = math.huge, nil, false
blocks.fill = function(...)
  if wrap then return coroutine.wrap(fill)(...) end
  local m0
  if mode == "alloc" then collectgarbage("stop"); m0 = collectgarbage("count") end
  local t0 = os.clock()
  local report = fill(...)
  local t = os.clock() - t0
  if mode == "alloc" then kb = collectgarbage("count") - m0; collectgarbage("restart") end
  if t < best then best = t end
  return report
end

local function build()
  local city = grid_city(psdl, N, buildings)
  collectgarbage()
  collectgarbage()
  city:build()
end

if mode == "callgrind" then
  build()
  wrap = true
  build()
  print("blocks.fill ran once in a coroutine (callgrind: --toggle-collect=lua_resume)")
else
  for _ = 1, mode == "alloc" and 2 or runs do build() end
  print(string.format("city %d x %d nodes, %s: blocks.fill best %.4f s%s", N, N,
    buildings and "with buildings" or "ground only", best,
    kb and string.format(", %.0f KB allocated (collector stopped)", kb) or ""))
end
