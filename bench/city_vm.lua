--- Lua VM instructions of `City:build` for the benchmark grid city (bench/grid_city.lua), in
-- millions (a count hook every 1,000 instructions on the building thread; C kernels count
-- nothing): load-independent, unlike CPU seconds. `bench/vm_count.lua` counts a `psdl`
-- command, but `psdl build` runs the script in a coroutine the hook does not see.
--
--   lua5.4 bench/city_vm.lua [TREE=.] [N=19]
--
-- Prints three figures: with buildings, ground only, and roads only (no blocks, no
-- validation: the road layout plus `Builder:finish`).
local root = arg[1] or "."
local N = tonumber(arg[2]) or 19
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/?.so;" .. package.cpath
local psdl = require "psdl"
local grid_city = dofile(root .. "/bench/grid_city.lua")

local function count(buildings, blocks)
  local city = grid_city(psdl, N, buildings)
  if not blocks then city.block_opts = false end
  collectgarbage()
  local n = 0
  debug.sethook(function() n = n + 1 end, "", 1000)
  city:build{ validate = blocks }
  debug.sethook()
  return n / 1000
end

print(string.format("%s: with buildings %.1f M, ground only %.1f M, roads only %.1f M VM instructions", root,
  count(true, true), count(false, true), count(false, false)))
