--- Visibility miss rate (issue 11): the room pairs a dense reference sampling finds that the
-- default setting of `psdl.package.cpvs_gen` does not, and the processor time of both.
--
--   lua5.4 bench/bench_cpvs_miss.lua CITY [ref_rays=30720] [ref_eyes=64] [ref_aimed=128]
--
-- CITY is a city script (examples/downtown.lua, bench/london_city.lua) or an .osm extract
-- (imported with `psdl.osm`, blocks without buildings, as the package spec does). The
-- reference samples eye heights at random (1-15 m, as CF §3.5's PVSGEN does); the default
-- puts its eyes at the top of that range.
local here = (arg and arg[0] or "bench/bench_cpvs_miss.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local gen = require "psdl.package.cpvs_gen"

local path = assert(arg[1], "usage: bench_cpvs_miss.lua CITY [ref_rays] [ref_eyes] [ref_aimed]")
local doc
if path:match("%.osm$") then
  local osm = require "psdl.osm"
  local city = psdl.city.from_network(osm.network(assert(osm.read(path)), {}), { seed = 1 })
  city:blocks { buildings = false }
  doc = city:build()
else
  local env = setmetatable({ psdl = psdl, arg = { [0] = path } }, { __index = _G })
  doc = assert(loadfile(path, "t", env))():build()
end
local ref_opts = { rays = tonumber(arg[2]) or 30720, eyes = tonumber(arg[3]) or 64, targeted = tonumber(arg[4]) or 128,
                   seed = 7, dilate = 0, symmetric = false, random_height = true }

local c0 = os.clock()
-- PSDL_VIS_OPTS="targeted=24,dilate=1" overrides the defaults under test
local dopts = {}
for k, v in (os.getenv("PSDL_VIS_OPTS") or ""):gmatch("([%w_]+)=(%d+)") do dopts[k] = tonumber(v) end
local def, dinfo = gen.generate(doc, dopts)
local c1 = os.clock()
-- PSDL_REF_CACHE=file keeps the reference rows between runs (one line per room)
local cache = os.getenv("PSDL_REF_CACHE")
local ref, rinfo
local f = cache and io.open(cache)
if f then
  ref, rinfo = { rows = {} }, { mean = 0 }
  local n, sum = 0, 0
  for line in f:lines() do
    n = n + 1
    local ids = {}
    for t in line:gmatch("%d+") do ids[#ids + 1] = tonumber(t) end
    ref.rows[n] = { visible = ids }
    sum = sum + #ids
  end
  f:close()
  rinfo.mean = sum / math.max(n, 1)
else
  ref, rinfo = gen.generate(doc, ref_opts)
  if cache then
    local out = assert(io.open(cache, "w"))
    for r = 1, #doc.rooms do out:write(table.concat(ref.rows[r].visible, " "), "\n") end
    out:close()
  end
end
local c2 = os.clock()
local miss, total, extra = gen.compare(def, ref)
print(string.format("%s: %d rooms; default %.2f s CPU, mean row %.1f, longest %d, %d rows cut; reference (%d/%d/%d) "
  .. "%.2f s CPU, mean row %.1f; load %s", path, #doc.rooms, c1 - c0, dinfo.mean, dinfo.longest, dinfo.cut, ref_opts.rays,
  ref_opts.eyes, ref_opts.targeted, c2 - c1, rinfo.mean,
  (io.open("/proc/loadavg") and io.open("/proc/loadavg"):read("l") or "?"):match("^(%S+)")))
print(string.format("missed %d of %d reference pairs (%.2f %%); %d pairs only in the default", miss, total,
  100 * miss / math.max(total, 1), extra))
-- where the misses are: by distance between the rooms' centres
local function centre(r)
  local x, z, n = 0, 0, 0
  for _, p in ipairs(doc.rooms[r].perimeter) do
    local v = doc.vertices[p.vertex]
    if v then x, z, n = x + v[1], z + v[3], n + 1 end
  end
  return x / math.max(n, 1), z / math.max(n, 1)
end
local hist, cnt = {}, {}
for r, row in pairs(ref.rows) do
  local have = {}
  for _, t in ipairs(def.rows[r].visible) do have[t] = true end
  local x, z = centre(r)
  for _, t in ipairs(row.visible) do
    local x2, z2 = centre(t)
    local b = math.min(math.floor(math.sqrt((x - x2) ^ 2 + (z - z2) ^ 2) / 100), 10)
    cnt[b] = (cnt[b] or 0) + 1
    if not have[t] then hist[b] = (hist[b] or 0) + 1 end
  end
end
local parts = {}
for b = 0, 10 do
  if cnt[b] then parts[#parts + 1] = string.format("%d-%d m: %d/%d", b * 100, b * 100 + 100, hist[b] or 0, cnt[b]) end
end
print("missed by centre distance: " .. table.concat(parts, ", "))
