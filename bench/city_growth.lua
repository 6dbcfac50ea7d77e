--- Growth of city build time and memory with the number of rooms (issue 13): the N x N
-- downtown of bench/bench_city.lua (bench/grid_city.lua) at several N, the vertex budget
-- and the 5 km extent guard lifted and validation skipped (a PSDL cannot address the
-- vertices of the large ones, so these builds are compared with each other only).
--
--   lua5.4 bench/city_growth.lua [--no-buildings] [--runs R] [N...]   (default N: 6 10 19 35 60)
--       best of R (default 3; 1 for N > 40) CPU seconds (os.clock) of `city:build` per N, and
--       the exponent k of time ~ rooms^k fitted by least squares on the logarithms
--   lua5.4 bench/city_growth.lua --once N [--no-buildings]
--       one build in this process, then prints its rooms (for /usr/bin/time -f %M: peak RSS
--       of a fresh process, bench/city_rss.sh)
--   --psdl-heap (either form): first set the process's heap up as `psdl` does (scripts/psdl:
--       core.heap_reserve(256), then core.heap_allocator(): the Lua heap in mimalloc)
local here = (arg and arg[0] or "bench/city_growth.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local grid_city = dofile(here .. "/grid_city.lua")

local buildings, runs, once, psdl_heap = true, 3, nil, false
local sizes = {}
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--no-buildings" then buildings = false
    elseif a == "--psdl-heap" then psdl_heap = true
    elseif a == "--runs" then runs = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--once" then once = tonumber(arg[i + 1]); i = i + 1
    else sizes[#sizes + 1] = assert(tonumber(a), "N expected, got " .. a) end
    i = i + 1
  end
  if #sizes == 0 then sizes = { 6, 10, 19, 35, 60 } end
end

if psdl_heap then
  local core = require "psdl.core"
  core.heap_reserve(256)
  assert(core.heap_allocator())
end

psdl.builder.VERTEX_BUDGET = math.huge
psdl.city.MAX_EXTENT = false -- N = 60 spans 6.5 km, over the 5 km guard of real cities

local function build(n)
  local city = grid_city(psdl, n, buildings)
  collectgarbage()
  collectgarbage()
  local t0 = os.clock()
  local _, rep = city:build{ validate = false }
  return os.clock() - t0, rep.rooms
end

if once then
  local _, rooms = build(once)
  print(rooms)
  return
end

print(string.format("city build time by size (%s), best of %d runs (1 above N = 40), CPU s", buildings
  and "with buildings" or "ground only", runs))
local xs, ys = {}, {}
for _, n in ipairs(sizes) do
  local best, rooms = math.huge, 0
  for _ = 1, (n > 40 and 1 or runs) do
    local t, r = build(n)
    if t < best then best, rooms = t, r end
  end
  print(string.format("N = %3d: %6d rooms, %7.3f s, %6.1f us/room", n, rooms, best, best / rooms * 1e6))
  xs[#xs + 1], ys[#ys + 1] = math.log(rooms), math.log(best)
end
if #xs >= 2 then
  local mx, my = 0, 0
  for i = 1, #xs do mx, my = mx + xs[i] / #xs, my + ys[i] / #xs end
  local sxy, sxx = 0, 0
  for i = 1, #xs do sxy, sxx = sxy + (xs[i] - mx) * (ys[i] - my), sxx + (xs[i] - mx) ^ 2 end
  print(string.format("growth exponent (least squares on logs): %.3f (target <= 1.05)", sxy / sxx))
end
