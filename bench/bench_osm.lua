--- Benchmark of the OpenStreetMap importer (`psdl.osm`) on synthetic towns from
-- bench/osm_synth.lua and on the shared extracts: read (lua-expat), network building and
-- clean-up, per stage, and how the cost grows with the size of the town.
--
--     lua5.4 bench/bench_osm.lua [N ...]      towns of N x N blocks (default 10 20 40)
--
-- Run from the repository root. Prints, per town: ways, nodes, XML size, the time to parse
-- the XML, to build the cleaned network, the clean-up passes, and the network's size.

package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path

local osm = require "psdl.osm"
local clean = require "psdl.osm.clean"
local synth = dofile("bench/osm_synth.lua")

-- time each clean-up pass (wrapped once; the wrappers add a few microseconds)
local pass_time = {}
for name, fn in pairs(clean) do
  if type(fn) == "function" and name ~= "run" then
    clean[name] = function(...)
      local t0 = os.clock()
      local a, b, c = fn(...)
      pass_time[name] = (pass_time[name] or 0) + os.clock() - t0
      return a, b, c
    end
  end
end

local function run(label, xml)
  for k in pairs(pass_time) do pass_time[k] = nil end
  collectgarbage("collect")
  local t0 = os.clock()
  local data = assert(osm.parse(xml, label))
  local t_read = os.clock() - t0
  local t1 = os.clock()
  local net, report = osm.network(data)
  local t_net = os.clock() - t1
  local c = report.counts
  print(string.format("%-22s %6d ways %7d nodes %6.1f MB | read %6.3f s, network %6.3f s (clean-up %6.3f s), total %6.3f s | %5d roads, %5d junctions, %5d buildings, %d problems",
    label, data.counts.ways, data.counts.nodes, #xml / 1e6, t_read, t_net, report.timings.cleanup,
    t_read + t_net, c.roads, c.junctions, c.buildings, #report.warnings))
  local passes = {}
  for k, v in pairs(pass_time) do passes[#passes + 1] = { k, v } end
  table.sort(passes, function(a, b) return a[2] > b[2] end)
  local parts = {}
  for i = 1, math.min(6, #passes) do parts[#parts + 1] = string.format("%s %.3f", passes[i][1], passes[i][2]) end
  print("    passes (s): " .. table.concat(parts, ", "))
  return t_read + t_net, data.counts.ways
end

local sizes = {}
for i = 1, #arg do sizes[#sizes + 1] = tonumber(arg[i]) end
if #sizes == 0 then sizes = { 10, 20, 40 } end

for _, f in ipairs({ "spec/fixtures/osm/houston-fourth-ward.osm", "spec/fixtures/osm/leeds-potternewton.osm" }) do
  local fh = assert(io.open(f, "rb"))
  local xml = fh:read("a")
  fh:close()
  run(f:match("([^/]+)%.osm$"), xml)
end

local first
for _, n in ipairs(sizes) do
  local xml = synth.generate { cols = n, rows = n }
  local t, ways = run(string.format("synthetic %dx%d", n, n), xml)
  if not first then first = { t = t, ways = ways }
  else
    print(string.format("    %.1fx the ways of the first town: %.1fx the time", ways / first.ways, t / first.t))
  end
end
