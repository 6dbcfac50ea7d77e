-- bench_read.lua -- psdl.read of one file, measured the way the PSDL.NET comparison in
-- bench/README.md ("psdl.read and PSDL.NET") measures the C# reader, so the two can be set
-- side by side on the same machine.
--
--   lua5.4 bench/bench_read.lua [--psdl-heap] [file.psdl] [N]
--
-- --psdl-heap: the Lua heap in mimalloc first, as `psdl` sets it up (core.heap_allocator;
-- docs/heap.md).
--
-- Run from the repository root (modules from ./lua, the C module from
-- $PSDL_BUILD_DIR/psdl/core.so, default ./build). Default file: the London-scale fixture
-- spec/fixtures/grid_n20.psdl; default N = 50. Prints:
--   * the first read in this process (wall and CPU, milliseconds);
--   * N reads, each after a full collection: best and median wall and CPU time per read;
--   * a batch of N reads without forced collections: wall and CPU per read (the collector's
--     work on the documents the batch drops is billed to the batch).
-- Wall clock: luasystem's monotime (os.clock's CPU time when it is not installed); CPU time:
-- os.clock (the process's user + system time).

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = build_dir .. "/?.so;" .. package.cpath

local psdl = require "psdl"

local args = {}
for _, a in ipairs(arg) do
  if a == "--psdl-heap" then assert(require("psdl.core").heap_allocator())
  else args[#args + 1] = a end
end

local wall = os.clock
do
  local ok, system = pcall(require, "system")
  if ok and type(system) == "table" and system.monotime then wall = system.monotime end
end
local cpu = os.clock

local path = args[1] or "spec/fixtures/grid_n20.psdl"
local n = math.tointeger(tonumber(args[2] or "50"))
if not n or n < 1 then
  io.stderr:write("usage: lua5.4 bench/bench_read.lua [--psdl-heap] [file.psdl] [N >= 1]\n")
  os.exit(2)
end

local function ms(s) return s * 1e3 end

local w0, c0 = wall(), cpu()
local doc = assert(psdl.read(path))
print(string.format("first read: wall %.2f ms, cpu %.2f ms; %d rooms %d vertices %d roads",
                    ms(wall() - w0), ms(cpu() - c0), #doc.rooms, #doc.vertices, #(doc.roads or {})))
doc = nil

local ws, cs = {}, {}
for i = 1, n do
  collectgarbage("collect")
  w0, c0 = wall(), cpu()
  local d = psdl.read(path)
  ws[i], cs[i] = wall() - w0, cpu() - c0
  assert(d)
end
table.sort(ws)
table.sort(cs)
local mid = n // 2 + 1
print(string.format("%d reads: wall best %.2f median %.2f ms; cpu best %.2f median %.2f ms",
                    n, ms(ws[1]), ms(ws[mid]), ms(cs[1]), ms(cs[mid])))

collectgarbage("collect")
w0, c0 = wall(), cpu()
for _ = 1, n do doc = psdl.read(path) end
print(string.format("batch of %d: wall %.2f ms/read, cpu %.2f ms/read (collector included)",
                    n, ms(wall() - w0) / n, ms(cpu() - c0) / n))
