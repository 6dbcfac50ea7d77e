--- Growth of city build time and memory with the number of rooms (issue 13): the N x N
-- downtown of bench/bench_city.lua (bench/grid_city.lua) at several N, the vertex budget
-- and the 5 km extent guard lifted and validation skipped (a PSDL cannot address the
-- vertices of the large ones, so these builds are compared with each other only).
--
--   lua5.4 bench/city_growth.lua [--no-buildings] [--runs R] [N...]   (default N: 6 10 19 35 60)
--       per N, one build to warm the process up for that size, then the best of R (default 3)
--       CPU seconds (os.clock) of `city:build`; the exponent k of time ~ rooms^k fitted by
--       least squares on the logarithms, for the best times and for the first (warm-up)
--       builds. Every N is measured the same way: before, N > 40 took a single build, the
--       first of its size in the process, whose fresh heap pages (a page fault per 4 KiB
--       page: 10-40 us each on the bench machine) the smaller sizes had already paid in
--       their earlier runs; that first-build exponent is still printed (`first`).
--   lua5.4 bench/city_growth.lua --fresh [--no-buildings] [--runs R] [N...]
--       every build in a fresh process (`--time N`; R per N, best), so that every size pays
--       its page faults as a one-shot `psdl build` does
--   lua5.4 bench/city_growth.lua --once N [--no-buildings]
--       one build in this process, then prints its rooms (for /usr/bin/time -f %M: peak RSS
--       of a fresh process, bench/city_rss.sh)
--   lua5.4 bench/city_growth.lua --time N [--no-buildings]
--       one build in this process, then prints its rooms and CPU seconds (for --fresh)
--   --psdl-heap (any form): first set the process's heap up as `psdl` does (scripts/psdl:
--       core.heap_reserve(256), then core.heap_allocator(): the Lua heap in mimalloc)
local here = (arg and arg[0] or "bench/city_growth.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local grid_city = dofile(here .. "/grid_city.lua")

local buildings, runs, once, psdl_heap, timed, fresh = true, 3, nil, false, nil, false
local sizes = {}
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--no-buildings" then buildings = false
    elseif a == "--psdl-heap" then psdl_heap = true
    elseif a == "--runs" then runs = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--once" then once = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--time" then timed = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--fresh" then fresh = true
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
if timed then
  local t, rooms = build(timed)
  print(rooms, t)
  return
end

-- One build of n in a fresh process (--time): its CPU seconds and rooms.
local function build_fresh(n)
  local lua = arg[-1] or "lua5.4"
  local cmd = string.format("%s %s/city_growth.lua --time %d%s%s", lua, here, n, buildings and "" or " --no-buildings",
    psdl_heap and " --psdl-heap" or "")
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  local rooms, t = out:match("^(%d+)%s+(%S+)")
  assert(rooms, "no figures from: " .. cmd .. "\n" .. out)
  return tonumber(t), tonumber(rooms)
end

-- The exponent k of time ~ rooms^k, least squares on the logarithms.
local function exponent(xs, ys)
  local mx, my = 0, 0
  for i = 1, #xs do mx, my = mx + xs[i] / #xs, my + ys[i] / #xs end
  local sxy, sxx = 0, 0
  for i = 1, #xs do sxy, sxx = sxy + (xs[i] - mx) * (ys[i] - my), sxx + (xs[i] - mx) ^ 2 end
  return sxy / sxx
end

print(string.format("city build time by size (%s), %s, CPU s", buildings and "with buildings" or "ground only",
  fresh and string.format("best of %d fresh processes", runs)
  or string.format("first build of the size, then best of %d more in the same process", runs)))
local xs, ys, fs = {}, {}, {}
for _, n in ipairs(sizes) do
  local best, rooms, first = math.huge, 0, nil
  if not fresh then first, rooms = build(n) end
  for _ = 1, runs do
    local t, r
    if fresh then t, r = build_fresh(n) else t, r = build(n) end
    if t < best then best, rooms = t, r end
  end
  if first then
    print(string.format("N = %3d: %6d rooms, %7.3f s, %6.1f us/room (first %7.3f s, %6.1f us/room)", n, rooms, best,
      best / rooms * 1e6, first, first / rooms * 1e6))
  else
    print(string.format("N = %3d: %6d rooms, %7.3f s, %6.1f us/room", n, rooms, best, best / rooms * 1e6))
  end
  xs[#xs + 1], ys[#ys + 1] = math.log(rooms), math.log(best)
  if first then fs[#fs + 1] = math.log(first) end
end
if #xs >= 2 then
  print(string.format("growth exponent (least squares on logs): %.3f (target <= 1.05)", exponent(xs, ys)))
  if #fs == #xs then print(string.format("first builds' exponent: %.3f", exponent(xs, fs))) end
end
