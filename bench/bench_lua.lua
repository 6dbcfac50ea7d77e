-- bench_lua.lua -- Lua-level figures for psdlkit (docs/design.md, "Performance targets").
--
--   lua5.4 bench/bench_lua.lua [file.psdl] [--iterations N] [--save10x PATH]
--
-- Run from the repository root. Modules come from ./lua and the C module from
-- $PSDL_BUILD_DIR/psdl/core.so (default ./build). Measures, on the file (default the
-- London-scale fixture spec/fixtures/grid_n20.psdl):
--   * psdl.read (file -> document) and psdl.write (document -> temp file; it validates
--     first, as write does by default) -- target: under 15 ms each;
--   * psdl.decode and psdl.encode alone, and psdl.validate;
--   * memory of a document: peak = everything allocated while psdl.read runs with the
--     collector stopped (an upper bound of the peak), kept = what the document holds after a
--     full collection -- target: peak under 30x the file size;
--   * scaling: a document 10x larger (the input tiled 10 times, see tile()) is encoded, then
--     decode+encode of the 1x and 10x bytes are timed -- target: about 10x (verdict "ok" up to
--     12x), and again with the collector stopped, to tell codec cost from GC cost.
-- Times are wall-clock (luasystem's monotime when installed, else os.clock CPU time; the
-- environment variable BENCH_CLOCK=cpu forces CPU time), the median of the iterations.

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = build_dir .. "/?.so;" .. package.cpath

local psdl = require "psdl"

local clock, clock_name = os.clock, "os.clock (CPU time)"
if os.getenv("BENCH_CLOCK") ~= "cpu" then -- BENCH_CLOCK=cpu: CPU time (a loaded machine)
  local ok, system = pcall(require, "system")
  if ok and type(system) == "table" and system.monotime then
    clock, clock_name = system.monotime, "system.monotime (wall clock)"
  elseif ok and type(system) == "table" and system.gettime then
    clock, clock_name = system.gettime, "system.gettime (wall clock)"
  end
end

-- ------------------------------------------------------------------ arguments

local path, iterations, save10x = "spec/fixtures/grid_n20.psdl", 20, nil
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--iterations" then
      iterations = assert(tonumber(arg[i + 1]), "--iterations needs a number")
      i = i + 1
    elseif a == "--save10x" then
      save10x = assert(arg[i + 1], "--save10x needs a path")
      i = i + 1
    elseif a:sub(1, 2) == "--" then
      io.stderr:write("usage: lua5.4 bench/bench_lua.lua [file.psdl] [--iterations N] [--save10x PATH]\n")
      os.exit(2)
    else
      path = a
    end
    i = i + 1
  end
end

-- ------------------------------------------------------------------ helpers

local function median(t)
  table.sort(t)
  local n = #t
  if n % 2 == 1 then return t[(n + 1) // 2] end
  return (t[n // 2] + t[n // 2 + 1]) / 2
end

-- Median seconds of fn() over n runs (after one warm-up run), with a full collection
-- before each run so one run's garbage is not billed to the next.
local function time(n, fn)
  fn()
  local samples = {}
  for i = 1, n do
    collectgarbage("collect")
    local t0 = clock()
    fn()
    samples[i] = clock() - t0
  end
  return median(samples), samples
end

local function ms(s) return string.format("%8.2f ms", s * 1e3) end

local function verdict(ok) return ok and "ok" or "MISSED" end

local function read_bytes(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- ------------------------------------------------------------------ tiling

local function copy_list(t)
  local c = {}
  for i = 1, #t do c[i] = t[i] end
  return c
end

local function shift_refs(t, off)
  local c = {}
  for i = 1, #t do c[i] = t[i] + off end
  return c
end

-- A document n times the size of doc: its rooms, roads and vertices repeated n times, copy
-- k of the vertex pool moved dx metres along x, room ids and road room ids renumbered (the
-- sign of a road room id kept), textures and heights shared. Vertex references are 16-bit in
-- the file, so only floor(65536 / #vertices) copies are addressable: tile k's geometry uses
-- copy (k mod that), and the other copies are present but unreferenced. The file therefore
-- holds n times the vertices, rooms, roads and bytes, and every reference stays in range
-- (tiles beyond the addressable ones overlap earlier tiles, which the codec does not mind).
local function tile(doc, n, dx)
  local V, R = #doc.vertices, #doc.rooms
  local copies = math.max(1, math.min(n, 65536 // V))
  local out = {
    magic = doc.magic, target_size = doc.target_size, heights = doc.heights,
    textures = doc.textures, materials = doc.materials, first_road_room = doc.first_road_room,
    room0 = doc.room0, vertices = {}, rooms = {}, roads = {},
  }
  if doc.bounds then
    local b = doc.bounds
    out.bounds = { min = copy_list(b.min), max = copy_list(b.max), center = copy_list(b.center),
                   radius = b.radius }
    out.bounds.max[1] = out.bounds.max[1] + (n - 1) * dx
  end
  local verts = out.vertices
  for k = 0, n - 1 do
    local x0, base = k * dx, k * V
    for i, v in ipairs(doc.vertices) do verts[base + i] = { v[1] + x0, v[2], v[3] } end
  end
  for k = 0, n - 1 do
    local voff, roff = (k % copies) * V, k * R
    for r, room in ipairs(doc.rooms) do
      local per = {}
      for i, p in ipairs(room.perimeter) do
        per[i] = { vertex = p.vertex + voff, neighbour = p.neighbour ~= 0 and p.neighbour + roff or 0 }
      end
      local attrs = {}
      for i, a in ipairs(room.attributes) do
        local c = {}
        for key, value in pairs(a) do c[key] = value end
        if a.vertices then c.vertices = shift_refs(a.vertices, voff) end
        attrs[i] = c
      end
      out.rooms[roff + r] = { flags = room.flags, prop_rule = room.prop_rule, perimeter = per,
                              attributes = attrs }
    end
    for _, road in ipairs(doc.roads or {}) do
      local rooms = {}
      for i, id in ipairs(road.rooms) do rooms[i] = id < 0 and id - roff or id + roff end
      out.roads[#out.roads + 1] = {
        flags = road.flags, lanes_left = road.lanes_left, lanes_right = road.lanes_right,
        stop_lights = road.stop_lights, rooms = rooms,
        start_crossroads = shift_refs(road.start_crossroads, voff),
        end_crossroads = shift_refs(road.end_crossroads, voff),
      }
    end
  end
  return out
end

-- ------------------------------------------------------------------ run

local bytes = read_bytes(path)
local size = #bytes
local doc = assert(psdl.read(path))
assert(psdl.encode(doc) == bytes, "the file does not re-encode byte for byte")
local tmp = os.tmpname()

print(string.format("bench_lua: %s, %d bytes, %d rooms, %d vertices, %d roads", path, size,
                    #doc.rooms, #doc.vertices, #(doc.roads or {})))
print(string.format("psdl %s, %s, core from %s/psdl/core.so, %s, median of %d runs",
                    psdl._VERSION or "?", _VERSION, build_dir, clock_name, iterations))

local t_read = time(iterations, function() assert(psdl.read(path)) end)
-- format rules only: the fixture's synthetic geometry fails the drivability rules (holes at
-- every corner, bench/README.md "Validation with the drivability rules"), so a full check
-- would refuse to write it
local t_write = time(iterations, function() assert(psdl.write(doc, tmp, { drivable = false })) end)
local t_write_nv = time(iterations, function() assert(psdl.write(doc, tmp, { validate = false })) end)
local t_decode = time(iterations, function() assert(psdl.decode(bytes)) end)
local t_encode = time(iterations, function() assert(psdl.encode(doc)) end)
local t_validate = time(iterations, function() psdl.validate(doc) end)
assert(read_bytes(tmp) == bytes, "psdl.write wrote other bytes")
os.remove(tmp)

print(string.format("psdl.read      %s   target < 15 ms: %s", ms(t_read), verdict(t_read < 0.015)))
print(string.format("psdl.write     %s   target < 15 ms: %s  (validates the format's rules, encodes, writes a temp file, renames)",
                    ms(t_write), verdict(t_write < 0.015)))
print(string.format("  write, no validation %s", ms(t_write_nv)))
print(string.format("psdl.decode    %s   (%.0f MB/s)", ms(t_decode), size / t_decode / 1e6))
print(string.format("psdl.encode    %s   (%.0f MB/s)", ms(t_encode), size / t_encode / 1e6))
print(string.format("psdl.validate  %s", ms(t_validate)))

-- memory
doc = nil
collectgarbage("collect")
collectgarbage("collect")
local base = collectgarbage("count")
collectgarbage("stop")
local d = assert(psdl.read(path))
local peak_kb = collectgarbage("count") - base
collectgarbage("restart")
collectgarbage("collect")
collectgarbage("collect")
local kept_kb = collectgarbage("count") - base
local peak_x, kept_x = peak_kb * 1024 / size, kept_kb * 1024 / size
print(string.format("memory: peak %.1f MB (%.1fx the file) target < 30x: %s; document keeps %.1f MB (%.1fx)",
                    peak_kb / 1024, peak_x, verdict(peak_x < 30), kept_kb / 1024, kept_x))

-- scaling
local n = 10
local t0 = clock()
local big_doc = tile(d, n, 2000)
local t_tile = clock() - t0
t0 = clock()
local big = psdl.encode(big_doc)
local t_big_encode1 = clock() - t0
big_doc = nil
d = nil
collectgarbage("collect")
if save10x then
  local f = assert(io.open(save10x, "wb"))
  f:write(big)
  f:close()
end
local big_check = assert(psdl.decode(big))
print(string.format("scaling: tiled %dx in %s: %d bytes (%.2fx), %d rooms, %d vertices, %d roads",
                    n, ms(t_tile), #big, #big / size, #big_check.rooms, #big_check.vertices,
                    #(big_check.roads or {})))
big_check = nil
local function roundtrip(s)
  return function()
    local x = assert(psdl.decode(s))
    assert(#psdl.encode(x) == #s)
  end
end
local small_iters = iterations
local big_iters = math.max(3, iterations // 4)
local t1 = time(small_iters, roundtrip(bytes))
local t10 = time(big_iters, roundtrip(big))
local ratio = t10 / t1
print(string.format("  decode+encode 1x %s, %dx %s: ratio %.2f (target about %d: %s)", ms(t1), n, ms(t10),
                    ratio, n, verdict(ratio <= n * 1.2)))
-- the same with the collector stopped during each run: separates the codec's own cost from
-- the garbage collector's, whose work per run grows with the live heap
local function no_gc(fn)
  return function()
    collectgarbage("stop")
    fn()
    collectgarbage("restart")
  end
end
local s1 = time(small_iters, no_gc(roundtrip(bytes)))
local s10 = time(big_iters, no_gc(roundtrip(big)))
print(string.format("  collector stopped: 1x %s, %dx %s: ratio %.2f", ms(s1), n, ms(s10), s10 / s1))
print(string.format("  (first encode of the %dx document: %s)", n, ms(t_big_encode1)))
