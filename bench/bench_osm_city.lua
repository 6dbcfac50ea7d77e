--- Benchmark of `psdl osm -o` end to end: read, network and clean-up, the city with its
-- repairs (`psdl.osm.city`), validation and encoding, on every real extract of the test data
-- and on synthetic towns of about 500, 2,500 and 10,000 ways (bench/osm_synth.lua), with the
-- growth exponent of the time over the number of ways (least squares of log time on log
-- ways).
--
--     PSDL_BUILD_DIR=build lua5.4 bench/bench_osm_city.lua [--towns-only | --extracts-only]
--
-- Run from the repository root. Times are CPU seconds (os.clock) of this process.

local BUILD = os.getenv("PSDL_BUILD_DIR") or "build"
if BUILD == "" then BUILD = "build" end
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = BUILD .. "/?.so;" .. package.cpath

local psdl = require "psdl"
local osm = require "psdl.osm"
local ocity = require "psdl.osm.city"
local synth = dofile("bench/osm_synth.lua")

local EXTRACTS = {
  "spec/fixtures/osm/leeds-potternewton.osm", "spec/fixtures/osm/houston-fourth-ward.osm",
  "spec/data/osm/prague-karlovo-namesti.osm", "spec/data/osm/taipei-xinyi.osm",
  "spec/data/osm/porto-fernao-magalhaes.osm", "spec/data/osm/rosemead-ca.osm",
  "spec/data/osm/cuenca-centro.osm", "spec/data/osm/suwon-ajou.osm", "spec/data/osm/nairobi-chiromo.osm",
  "spec/data/osm/orange-nsw.osm", "spec/data/osm/philadelphia-temple.osm",
  "spec/data/osm/ankara-bahcelievler.osm",
}

-- Import and build one extract; returns seconds and a summary line.
local function run(label, xml)
  collectgarbage("collect")
  local t0 = os.clock()
  local data = assert(osm.parse(xml, label))
  local t1 = os.clock()
  local net, report = osm.network(data)
  local t2 = os.clock()
  local ok, doc, crep, res = pcall(ocity.build, net, report, { seed = 1 })
  local t3 = os.clock()
  if not ok then -- over the game's limits even simplified: the time until it knew
    return t3 - t0, data.counts.ways, string.format("%-26s %6d ways %6.2f MB | read %5.2f  network %5.2f  city %5.2f "
      .. "(refused: %s)", label, data.counts.ways, #xml / 1e6, t1 - t0, t2 - t1, t3 - t2,
      tostring(doc):match("vertex pool reaches %d+ vertices") or tostring(doc):sub(1, 120)), t2 - t0, true
  end
  local bytes = assert(psdl.encode(doc))
  local t4 = os.clock()
  local line = string.format("%-26s %6d ways %6.2f MB | read %5.2f  network %5.2f  city %5.2f  encode %5.2f | "
    .. "total %6.2f s | kept %5.1f %%, %d repaired, %d dropped, %d rooms, %d vertices, %d errors%s",
    label, data.counts.ways, #xml / 1e6, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, 100 * res.kept.fraction,
    #res.repairs, #res.dropped, crep.rooms, crep.vertices, crep.counts.errors,
    #res.simplified > 0 and (", simplified: " .. table.concat(res.simplified, "; ")) or "")
  return t4 - t0, data.counts.ways, line, t2 - t0, false
end

local mode = arg[1]
if mode ~= "--towns-only" then
  print("== real extracts (psdl osm FILE -o CITY, CPU seconds)")
  for _, f in ipairs(EXTRACTS) do
    local fh = assert(io.open(f, "rb"))
    local xml = fh:read("a")
    fh:close()
    local _, _, line = run(f:match("([^/]+)%.osm$"), xml)
    print(line)
  end
end

if mode ~= "--extracts-only" then
  print()
  print("== synthetic towns (bench/osm_synth.lua)")
  local xs, ys, xn, ns = {}, {}, {}, {}
  for _, n in ipairs({ 9, 20, 41 }) do
    local xml = synth.generate { cols = n, rows = n }
    local t, ways, line, t_net, refused = run(string.format("town %dx%d", n, n), xml)
    print(line)
    if not refused then xs[#xs + 1], ys[#ys + 1] = math.log(ways), math.log(t) end
    xn[#xn + 1], ns[#ns + 1] = math.log(ways), math.log(t_net)
  end
  local function slope(x, y)
    local n, sx, sy, sxx, sxy = #x, 0, 0, 0, 0
    for i = 1, n do sx, sy, sxx, sxy = sx + x[i], sy + y[i], sxx + x[i] * x[i], sxy + x[i] * y[i] end
    return (n * sxy - sx * sy) / (n * sxx - sx * sx)
  end
  print(string.format("growth exponent of the time over the number of ways: %.2f read + network (all towns), "
    .. "%.2f end to end (towns that fit the game's limits)", slope(xn, ns), #xs >= 2 and slope(xs, ys) or 0 / 0))
end
