--- bench/bench_companion.lua [runs] -- the companion codecs at London scale (Lua API):
-- a synthetic .bai of 540 roads x 20 sections (2 lanes a side), 328 intersections and
-- 1,342 culling rooms with 40 near / 25 in roads each; a .cpvs of 1,342 rooms each seeing
-- 400 rooms. decode, encode and validate, median of `runs` (default 10) after a full
-- collection. Run from the repository root after a build (PSDL_BUILD_DIR, default ./build).
local build = os.getenv("PSDL_BUILD_DIR") or "./build"
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = build .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local runs = tonumber(arg[1]) or 10
local clock = os.clock

local function median(f)
  local t = {}
  for i = 1, runs do
    collectgarbage("collect")
    local t0 = clock()
    f()
    t[i] = clock() - t0
  end
  table.sort(t)
  return t[(runs + 1) // 2] * 1000
end

local NS, NR, NX, R = 20, 540, 328, 1342
local function polyline(x0, dz, rev)
  local p = {}
  for k = 1, NS do p[k] = { x0, 0, (rev and (NS - k) or (k - 1)) * dz } end
  return p
end
local function lengths(dz)
  local l = {}
  for k = 1, NS do l[k] = (k - 1) * dz end
  return l
end
local function side(sign, rev)
  return {
    lanes = { polyline(sign * 2.5, 10, rev), polyline(sign * 7.5, 10, rev) },
    lengths = { lengths(10), lengths(10), lengths(10) }, lateral = { 2.5, 7.5, 12.5 },
    params = { 0, 5, 5, 10, 10, 15, 0, 0, 0, 0 }, sidewalk = polyline(sign * 12.5, 10),
    curb = polyline(sign * 10, 10), edge = polyline(sign * 15, 10),
  }
end
local bai = { roads = {}, intersections = {}, cull_rooms = R, near = {}, ["in"] = {} }
for i = 1, NR do
  local function rep(v) local t = {} for k = 1, NS do t[k] = v end return t end
  bai.roads[i] = {
    rooms = { i + 1, i + 2 }, half_width = 10, side_a = side(1, true), side_b = side(-1, false),
    centre_length = lengths(10), origin = polyline(0, 10), x_axis = rep { 1, 0, 0 }, y_axis = rep { 0, 1, 0 },
    z_axis = rep { 0, 0, -1 }, w_axis = rep { 0, 0, 1 },
    end_last = { intersection = (i % NX) + 1, rule = 1, road_index = 1 },
    end_first = { intersection = ((i + 1) % NX) + 1, rule = 0, road_index = 1 },
  }
end
for j = 1, NX do bai.intersections[j] = { room = j + 1, center = { 0, 0, 0 }, roads = { j, j + 1 } } end
for r = 0, R - 1 do
  local near, inl = {}, {}
  if r > 0 then
    for k = 1, 40 do near[k] = (r * 7 + k) % NR + 1 end
    for k = 1, 25 do inl[k] = near[k] end
  end
  bai.near[r], bai["in"][r] = near, inl
end
local cpvs = { rooms = R, rows = {} }
for r = 1, R - 1 do
  local v = {}
  for k = 1, 400 do v[k] = (r + k * 3) % (R - 1) + 1 end
  table.sort(v)
  cpvs.rows[r] = { visible = v }
end

for _, case in ipairs { { "bai", bai }, { "cpvs", cpvs } } do
  local name, t = case[1], case[2]
  local bytes
  local enc = median(function() bytes = psdl[name].encode(t) end)
  local d
  local dec = median(function() d = assert(psdl[name].decode(bytes)) end)
  assert(psdl[name].encode(d) == bytes)
  local val = median(function() psdl[name].validate(d) end)
  print(string.format("%-5s %9d bytes   encode %7.1f ms   decode %7.1f ms   validate %7.1f ms", name, #bytes,
    enc, dec, val))
end
