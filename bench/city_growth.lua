--- Growth of city build time and memory with the number of rooms (issue 13): the N x N
-- downtown of bench/bench_city.lua (bench/grid_city.lua) at several N, the vertex budget
-- and the 5 km extent guard lifted and validation skipped (a PSDL cannot address the
-- vertices of the large ones, so these builds are compared with each other only).
--
--   lua5.4 bench/city_growth.lua [--no-buildings] [--rounds R] [--instructions] [N...]
--       (default N: 6 10 19 35 60, R: 5). Per N one build to warm the process up for that
--       size (printed as `first`), then R rounds; each round builds every N once, the sizes
--       alternating (small to large, then large to small), so that a change of the machine's
--       load during the run falls on every size alike. Per N: the median CPU seconds
--       (os.clock) of `city:build`, the fastest and slowest round. The exponent k of
--       time ~ rooms^k, fitted by least squares on the logarithms: of the medians, of the
--       best times, and of each round alone (median and range of those R exponents: the
--       spread). On this VM the warm 14,395-room build varies by +-20 % from run to run, so
--       one exponent from single runs cannot tell 1.05 from 1.15.
--       --instructions: also the instructions of each size's build, counted by valgrind's
--       callgrind in a child process (`--count N`: a warm-up build at N = 4, then the build
--       of N between two markers, os.difftime (counters zeroed) and os.getenv (counters
--       dumped)), and their exponent: noise-free, but blind to cache misses and page faults
--       (the part of the time that grows with the memory touched). Needs valgrind; about
--       50x slower than the builds themselves (N = 60: 1-3 minutes).
--       --runs R is the same as --rounds R.
--   lua5.4 bench/city_growth.lua --fresh [--no-buildings] [--rounds R] [N...]
--       every build in a fresh process (`--time N`; R per N, median and best), so that every
--       size pays its page faults as a one-shot `psdl build` does
--   lua5.4 bench/city_growth.lua --once N [--no-buildings]
--       one build in this process, then prints its rooms (for /usr/bin/time -f %M: peak RSS
--       of a fresh process, bench/city_rss.sh)
--   lua5.4 bench/city_growth.lua --time N [--no-buildings]
--       one build in this process, then prints its rooms and CPU seconds (for --fresh)
--   lua5.4 bench/city_growth.lua --count N [--no-buildings]
--       the child of --instructions (run under callgrind; prints the rooms)
--   lua5.4 bench/city_growth.lua --heap N [--holders K] [--no-buildings]
--       the live Lua heap (MiB, after two full collections) of one build of N: with the modules
--       loaded, the city described, at the end of each phase (roads, blocks, finish), with the
--       city, its document and its report held, and once all three are dropped (a leak shows
--       there); --holders K: at each phase end also the K largest holders (bench/lua_heap.lua:
--       paths from the build's locals and the registry, estimated bytes)
--   --psdl-heap (any form): first set the process's heap up as `psdl` does (scripts/psdl:
--       psdl.control.heap_reserve(256), then heap_allocator(): the Lua heap in mimalloc)
local here = (arg and arg[0] or "bench/city_growth.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local grid_city = dofile(here .. "/grid_city.lua")

local buildings, runs, once, psdl_heap, timed, fresh, count, instructions = true, 5, nil, false, nil, false, nil, false
local heap, holders
local sizes = {}
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--no-buildings" then buildings = false
    elseif a == "--psdl-heap" then psdl_heap = true
    elseif a == "--runs" or a == "--rounds" then
      runs = math.tointeger(tonumber(arg[i + 1]))
      assert(runs and runs >= 1, a .. ": a whole number >= 1 expected")
      i = i + 1
    elseif a == "--count" then count = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--instructions" then instructions = true
    elseif a == "--once" then once = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--time" then timed = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--fresh" then fresh = true
    elseif a == "--heap" then heap = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--holders" then holders = math.tointeger(tonumber(arg[i + 1])); i = i + 1
    else sizes[#sizes + 1] = assert(tonumber(a), "N expected, got " .. a) end
    i = i + 1
  end
  if #sizes == 0 then sizes = { 6, 10, 19, 35, 60 } end
end

if psdl_heap then
  local core = require "psdl.control" -- the process switches (not in psdl.core)
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

-- --heap N: the live Lua heap at the steps of one build (and what holds it, --holders K).
if heap then
  local walk = holders and dofile(here .. "/lua_heap.lua")
  local function live()
    collectgarbage()
    collectgarbage()
    return collectgarbage("count") / 1024
  end
  local function line(what, mib) print(string.format("  %-56s %8.2f MiB", what, mib)) end
  print(string.format("live Lua heap, N = %d (%s), after two full collections", heap,
    buildings and "with buildings" or "ground only"))
  line("modules loaded", live())
  local city = grid_city(psdl, heap, buildings)
  line("city described", live())
  local after = { ["city: blocks"] = "roads phase done", ["city: finish"] = "blocks phase done" }
  local function show(stage)
    line(stage, live())
    if walk then
      for _, h in ipairs(walk(4, holders, 4)) do
        print(string.format("      %9.2f MiB %8d objects  %s", h.bytes / 2 ^ 20, h.objects, h.path))
      end
    end
  end
  local doc, rep = city:build{ validate = false, progress = function(stage)
    if after[stage] then show(after[stage]) end
  end }
  line(string.format("built: %d rooms (city, document, report held)", rep.rooms), live())
  rep = nil
  line("report dropped (document unread: it holds the builder)", live())
  doc = nil
  line("document dropped (city holds its last build)", live())
  city = nil
  line("city dropped", live())
  return
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

-- The child of --instructions, under callgrind: modules loaded and the code warmed up by a
-- small build, then the measured build between the two markers.
if count then
  build(4)
  local city = grid_city(psdl, count, buildings)
  collectgarbage()
  collectgarbage()
  os.difftime(1, 0) -- marker: callgrind --zero-before=difftime
  local _, rep = city:build{ validate = false }
  os.getenv("PSDL_GROWTH_MARK") -- marker: callgrind --dump-before=getenv
  print(rep.rooms)
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

-- The instructions of one build of n (callgrind in a child process, `--count`), and its rooms;
-- nil and a reason when valgrind cannot be run.
local function build_instructions(n)
  local lua = arg[-1] or "lua5.4"
  local prefix = os.tmpname()
  local cmd = string.format("valgrind --tool=callgrind --zero-before=difftime --dump-before=getenv "
    .. "--callgrind-out-file=%s.cg %s %s/city_growth.lua --count %d%s%s 2>%s.err", prefix, lua, here, n,
    buildings and "" or " --no-buildings", psdl_heap and " --psdl-heap" or "", prefix)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  -- the last dump made by getenv is the marker's (the process's own getenv calls come first)
  local best_part, ir
  for part = 1, 1000 do
    local f = io.open(string.format("%s.cg.%d", prefix, part))
    if not f then break end
    local text = f:read("a")
    f:close()
    os.remove(string.format("%s.cg.%d", prefix, part))
    if text:match("Trigger: %-%-dump%-before=getenv") then
      best_part, ir = part, tonumber(text:match("\ntotals: (%d+)") or text:match("\nsummary: (%d+)"))
    end
  end
  local errf = io.open(prefix .. ".err")
  local err = errf and errf:read("a") or ""
  if errf then errf:close() end
  os.remove(prefix .. ".err")
  os.remove(prefix .. ".cg")
  os.remove(prefix)
  local rooms = tonumber(out:match("^(%d+)"))
  if not (best_part and ir and rooms) then
    return nil, "callgrind gave no count (" .. cmd .. "): " .. (err:match("[^\n]*\n?[^\n]*$") or "")
  end
  return ir, rooms
end

-- The exponent k of time ~ rooms^k, least squares on the logarithms.
local function exponent(xs, ys)
  local mx, my = 0, 0
  for i = 1, #xs do mx, my = mx + xs[i] / #xs, my + ys[i] / #xs end
  local sxy, sxx = 0, 0
  for i = 1, #xs do sxy, sxx = sxy + (xs[i] - mx) * (ys[i] - my), sxx + (xs[i] - mx) ^ 2 end
  return sxy / sxx
end

local function median(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  local m = #s
  if m % 2 == 1 then return s[(m + 1) // 2] end
  return (s[m // 2] + s[m // 2 + 1]) / 2
end

local function minmax(list)
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(list) do lo, hi = math.min(lo, v), math.max(hi, v) end
  return lo, hi
end

print(string.format("city build time by size (%s), %s, CPU s", buildings and "with buildings" or "ground only",
  fresh and string.format("%d fresh processes per size", runs)
  or string.format("a first build of each size, then %d rounds over the sizes (alternating order)", runs)))
local rooms_of, first_of, times_of = {}, {}, {}
for _, n in ipairs(sizes) do
  times_of[n] = {}
  if not fresh then first_of[n], rooms_of[n] = build(n) end
end
for round = 1, runs do
  local from, to, step = 1, #sizes, 1
  if round % 2 == 0 then from, to, step = #sizes, 1, -1 end
  for k = from, to, step do
    local n = sizes[k]
    local t, r
    if fresh then t, r = build_fresh(n) else t, r = build(n) end
    rooms_of[n] = r
    times_of[n][round] = t
  end
end
local xs, med, best, fs = {}, {}, {}, {}
for _, n in ipairs(sizes) do
  local rooms, ts = rooms_of[n], times_of[n]
  local m, lo, hi = median(ts), minmax(ts)
  local line = string.format("N = %3d: %6d rooms, median %7.3f s (%6.1f us/room), rounds %.3f-%.3f (%+.0f/%+.0f %%)",
    n, rooms, m, m / rooms * 1e6, lo, hi, (lo / m - 1) * 100, (hi / m - 1) * 100)
  if first_of[n] then line = line .. string.format(", first %.3f s", first_of[n]) end
  print(line)
  xs[#xs + 1], med[#med + 1], best[#best + 1] = math.log(rooms), math.log(m), math.log(lo)
  if first_of[n] then fs[#fs + 1] = math.log(first_of[n]) end
end
if #xs >= 2 then
  local per_round = {}
  for round = 1, runs do
    local ys = {}
    for _, n in ipairs(sizes) do ys[#ys + 1] = math.log(times_of[n][round]) end
    per_round[round] = exponent(xs, ys)
  end
  local lo, hi = minmax(per_round)
  print(string.format("time exponent (least squares on logs, %d -> %d rooms): medians %.3f, best %.3f; "
    .. "per round: median %.3f, range %.3f-%.3f (target <= 1.05)", rooms_of[sizes[1]], rooms_of[sizes[#sizes]],
    exponent(xs, med), exponent(xs, best), median(per_round), lo, hi))
  if #fs == #xs then print(string.format("first builds' exponent: %.3f", exponent(xs, fs))) end
  if instructions then
    local is, ixs = {}, {}
    for _, n in ipairs(sizes) do
      local ir, rooms = build_instructions(n)
      if not ir then
        print("instructions: " .. rooms)
        is = nil
        break
      end
      print(string.format("N = %3d: %6d rooms, %13.0f instructions (%.0f per room)", n, rooms, ir, ir / rooms))
      is[#is + 1], ixs[#ixs + 1] = math.log(ir), math.log(rooms)
    end
    if is then
      print(string.format("instruction exponent (callgrind, least squares on logs): %.3f", exponent(ixs, is)))
    end
  end
end
