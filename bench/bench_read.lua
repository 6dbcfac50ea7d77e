-- bench_read.lua -- psdl.read of one file, measured the way the PSDL.NET comparison in
-- bench/README.md ("psdl.read and PSDL.NET") measures the C# reader, so the two can be set
-- side by side on the same machine.
--
--   lua5.4 bench/bench_read.lua [--psdl-heap] [--traverse] [file.psdl] [N]
--
-- --psdl-heap: the Lua heap in mimalloc first, as `psdl` sets it up (psdl.control.heap_allocator;
-- docs/heap.md).
-- --traverse: also N reads each followed by a full traversal of the document (every vertex,
-- room, perimeter point, attribute and vertex reference read once), the figure to set beside
-- a reader that defers work to the first access (bench/README.md, round 4).
--
-- Run from the repository root (modules from ./lua, the C module from
-- $PSDL_BUILD_DIR/psdl/core.so, default ./build). Default file: the London-scale fixture
-- spec/fixtures/grid_n20.psdl; default N = 50. Prints:
--   * the first read in this process (wall and CPU, milliseconds);
--   * N reads, each after a full collection: best and median wall and CPU time per read;
--   * a batch of N reads without forced collections: wall and CPU per read (the collector's
--     work on the documents the batch drops is billed to the batch);
--   * the floor: as many empty Lua tables as the document has tables, made by Lua's own
--     constructor `{}` with the collector stopped (best of N): no reader that returns plain
--     Lua tables can make the document in less.
-- Wall clock: luasystem's monotime (os.clock's CPU time when it is not installed); CPU time:
-- os.clock (the process's user + system time).

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = build_dir .. "/?.so;" .. package.cpath

local psdl = require "psdl"

local args = {}
for _, a in ipairs(arg) do
  if a == "--psdl-heap" then assert(require("psdl.control").heap_allocator())
  elseif a == "--traverse" then args.traverse = true
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
  io.stderr:write("usage: lua5.4 bench/bench_read.lua [--psdl-heap] [--traverse] [file.psdl] [N >= 1]\n")
  os.exit(2)
end

local function ms(s) return s * 1e3 end

local w0, c0 = wall(), cpu()
local doc = assert(psdl.read(path))
print(string.format("first read: wall %.2f ms, cpu %.2f ms; %d rooms %d vertices %d roads",
                    ms(wall() - w0), ms(cpu() - c0), #doc.rooms, #doc.vertices, #(doc.roads or {})))
doc = nil

-- Reads every vertex, room, perimeter point, attribute and vertex reference once; returns
-- a sum so that nothing is skipped.
local function traverse(d)
  local s = 0
  for _, v in ipairs(d.vertices) do s = s + v[1] + v[2] + v[3] end
  for _, r in ipairs(d.rooms) do
    s = s + r.flags
    for _, p in ipairs(r.perimeter) do s = s + p.vertex + p.neighbour end
    for _, a in ipairs(r.attributes) do
      s = s + #a.type
      local list = a.vertices or a.words
      if list then for _, v in ipairs(list) do s = s + v end end
    end
  end
  return s
end

-- n reads after a full collection each, then(d) after each read; prints best and median.
local function timed(label, after)
  local ws, cs = {}, {}
  for i = 1, n do
    collectgarbage("collect")
    w0, c0 = wall(), cpu()
    local d = psdl.read(path)
    if after then after(d) end
    ws[i], cs[i] = wall() - w0, cpu() - c0
    assert(d)
  end
  table.sort(ws)
  table.sort(cs)
  local mid = n // 2 + 1
  print(string.format("%d %s: wall best %.2f median %.2f ms; cpu best %.2f median %.2f ms",
                      n, label, ms(ws[1]), ms(ws[mid]), ms(cs[1]), ms(cs[mid])))
end

timed("reads")
if args.traverse then timed("reads + full traversal", traverse) end

collectgarbage("collect")
w0, c0 = wall(), cpu()
for _ = 1, n do doc = psdl.read(path) end
print(string.format("batch of %d: wall %.2f ms/read, cpu %.2f ms/read (collector included)",
                    n, ms(wall() - w0) / n, ms(cpu() - c0) / n))

-- The floors: no reader that returns plain Lua tables makes the document faster than Lua's
-- own table constructors. (1) the document's number of tables, made empty by `{}`; (2) the
-- whole document as one Lua chunk of nested constructors (`{magic = "PSD0", vertices =
-- {{x, y, z}, ...}, ...}`, compiled once), run with the collector stopped as psdl.read runs.
local function count_tables(t)
  local k = 1
  for _, v in pairs(t) do if type(v) == "table" then k = k + count_tables(v) end end
  return k
end

local function literal(v, out)
  local tv = type(v)
  if tv == "table" then
    out[#out + 1] = "{"
    local len = #v
    for i = 1, len do literal(v[i], out); out[#out + 1] = "," end
    for k, x in pairs(v) do
      if not (math.type(k) == "integer" and k >= 1 and k <= len) then
        out[#out + 1] = type(k) == "string" and k:match("^[%a_][%w_]*$") and k .. "=" or
                        "[" .. (type(k) == "string" and string.format("%q", k) or tostring(k)) .. "]="
        literal(x, out)
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}"
  elseif tv == "string" then out[#out + 1] = string.format("%q", v)
  elseif math.type(v) == "float" then out[#out + 1] = string.format("%.17g", v)
  else out[#out + 1] = tostring(v) end
end

local function floor(label, f)
  local best = math.huge
  for _ = 1, n do
    collectgarbage("collect")
    collectgarbage("stop")
    c0 = cpu()
    local keep = f()
    local dt = cpu() - c0
    keep = nil
    collectgarbage("restart")
    if dt < best then best = dt end
  end
  print(string.format("floor: %s: cpu best %.2f ms", label, ms(best)))
end

do
  local d = assert(psdl.read(path))
  local ntables = count_tables(d)
  floor(string.format("%d empty tables by {}", ntables), function()
    local keep = {}
    for i = 1, ntables do keep[i] = {} end
    return keep
  end)
  local out = {"return "}
  literal(d, out)
  d = nil
  local make = assert(load(table.concat(out), "=document", "t"))
  floor("the same document by Lua's constructors", make)
end
