--- How much of an extract's road length appears as road in the result: the **kept
-- fraction** that `psdl osm` prints and reports.
--
-- The input is every highway way the import selects (motorway … service, living_street;
-- footway, path, cycleway, steps and pedestrian only with `walkways`; driveways and parking
-- aisles only with `driveways`), cut at missing nodes and clipped to the area (a stretch a
-- way travels out and back counted once, `psdl.osm.retrace`), projected to metres
-- (`network.input`, recorded before the clean-up). Each input polyline is sampled
-- every `STEP` metres; a sample is *kept* when it lies on a built road: within the road's
-- half width (carriageway, median and sidewalks, as built) plus `TOLERANCE` metres of the
-- road's centre line from node to node (so junction areas count for the roads that meet
-- there, and both carriageways of a merged dual carriageway count for the divided road).
-- The fraction is kept length / input length; a fraction of 1 means nothing was lost.
--
-- The island of a roundabout kept as a ring counts as kept too (`islands`): a ring grown to
-- the game's widths leaves the mapped ring inside it.
--
-- The measure is geometric, not an account of the clean-up's decisions: a road dropped
-- because it ran on top of another counts as kept (the place is road in the city), a dead end
-- cut back loses what was cut.
-- @module psdl.osm.kept

local sqrt, floor, max, min = math.sqrt, math.floor, math.max, math.min
local ipairs, pairs = ipairs, pairs

local M = {}

--- Sample spacing along the input, metres.
M.STEP = 2
--- Slack beyond a road's half width, metres (node merging, snapping, simplification move
-- centre lines by up to this much).
M.TOLERANCE = 3
local CELL = 32

-- squared distance from (x, z) to segment (ax, az)-(bx, bz) (and the parameter, unused here)
local seg_d2 = require("psdl.osm.geometry").seg_dist2

--- Measure the kept fraction.
-- @tparam table input `{ {pts = {{x, z}, ...}, source =, name =, highway =}, ... }` (`network.input`)
-- @tparam table roads `{ {pts = {{x, z}, ...}, hw = half width (m)}, ... }` the roads built
-- @treturn table `{ input = metres, kept = metres, fraction = 0..1, lost = { {source, name,
--   highway, length}, ... } }` (`lost`: per input way, the metres not kept, largest first;
--   pieces under 1 m left out)
function M.measure(input, roads)
  local grid = {}
  for ri, r in ipairs(roads) do
    local pts, reach = r.pts, r.hw + M.TOLERANCE
    for i = 2, #pts do
      local a, b = pts[i - 1], pts[i]
      local x0, x1 = min(a[1], b[1]) - reach, max(a[1], b[1]) + reach
      local z0, z1 = min(a[2], b[2]) - reach, max(a[2], b[2]) + reach
      for cx = floor(x0 / CELL), floor(x1 / CELL) do
        for cz = floor(z0 / CELL), floor(z1 / CELL) do
          local k = cx * 1048576 + cz
          local c = grid[k]
          if not c then c = {}; grid[k] = c end
          c[#c + 1] = { a[1], a[2], b[1], b[2], reach * reach }
        end
      end
    end
  end
  local function covered(x, z)
    local c = grid[floor(x / CELL) * 1048576 + floor(z / CELL)]
    if not c then return false end
    for _, s in ipairs(c) do
      if seg_d2(x, z, s[1], s[2], s[3], s[4]) <= s[5] then return true end
    end
    return false
  end
  local total, kept = 0, 0
  local lost_by = {}
  local order = {}
  for _, w in ipairs(input) do
    local pts = w.pts
    local lost = 0
    for i = 2, #pts do
      local a, b = pts[i - 1], pts[i]
      local dx, dz = b[1] - a[1], b[2] - a[2]
      local L = sqrt(dx * dx + dz * dz)
      if L > 0 then
        local n = max(1, floor(L / M.STEP + 0.5))
        local piece = L / n
        for k = 0, n - 1 do
          local t = (k + 0.5) / n
          if covered(a[1] + t * dx, a[2] + t * dz) then kept = kept + piece else lost = lost + piece end
        end
        total = total + L
      end
    end
    if lost >= 1 then
      local key = w.source or "?"
      local e = lost_by[key]
      if not e then
        e = { source = w.source, name = w.name, highway = w.highway, length = 0 }
        lost_by[key] = e
        order[#order + 1] = e
      end
      e.length = e.length + lost
    end
  end
  for _, e in ipairs(order) do e.length = floor(e.length * 10 + 0.5) / 10 end
  table.sort(order, function(p, q)
    if p.length ~= q.length then return p.length > q.length end
    return (p.source or "") < (q.source or "")
  end)
  return { input = total, kept = kept, fraction = total > 0 and kept / total or 1, lost = order }
end

--- The roads of a network (docs/network.md) as `measure` takes them, with the importer's
-- width model (`psdl.osm.fit.footprint`).
-- @tparam table net
-- @tparam[opt] table dims
-- @treturn table roads
function M.network_roads(net, dims)
  local fit = require "psdl.osm.fit"
  local list = {}
  for _, r in ipairs(net.roads) do
    local a, b = net.nodes[r.from], net.nodes[r.to]
    local pts = { { a.x, a.z } }
    for _, v in ipairs(r.via or {}) do pts[#pts + 1] = { v[1], v[2] } end
    pts[#pts + 1] = { b.x, b.z }
    list[#list + 1] = { pts = pts, hw = fit.footprint(r, dims) / 2 }
  end
  return list
end

--- The roads of a built `psdl.city` City as `measure` takes them (centre lines node to node,
-- half widths of the resolved profiles).
-- @tparam table city
-- @treturn table roads
function M.city_roads(city)
  local list = {}
  for _, r in ipairs(city.roads) do
    local pts = { { r.a.x, r.a.z } }
    for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2] } end
    pts[#pts + 1] = { r.b.x, r.b.z }
    list[#list + 1] = { pts = pts, hw = r.spec.half_width or 5 }
  end
  return list
end

--- The islands of the roundabouts a built city keeps, as `measure` takes roads: a disc
-- (`{pts = {c, c}, hw = r - TOLERANCE}`) of the ring's inner radius about its centre for
-- each ring of the network (its `roundabout` roads joined at their nodes, two or more of
-- them) whose roads all stand in the city. A ring grown to the game's widths
-- (`psdl.osm.clean`) leaves the mapped ring, and the approach roads' ends that ran to it,
-- inside its island: that place is the roundabout's, and counts as kept.
-- @tparam table net the network (`roads[i].roundabout`, `nodes`)
-- @tparam table city the built `psdl.city` City (its roads carry `opts.where = "roads[i] ..."`)
-- @treturn table roads (discs)
function M.islands(net, city)
  local alive = {}
  for _, r in ipairs(city.roads) do
    local i = r.opts and r.opts.where and tonumber(r.opts.where:match("^roads%[(%d+)%]"))
    if i then alive[i] = true end
  end
  -- components of ring roads through their nodes
  local parent = {}
  local function find(x)
    while parent[x] and parent[x] ~= x do x = parent[x] end
    return x
  end
  local rings = {}
  for i, r in ipairs(net.roads) do
    if r.roundabout then
      parent[r.from] = parent[r.from] or r.from
      parent[r.to] = parent[r.to] or r.to
      local a, b = find(r.from), find(r.to)
      if a ~= b then parent[a] = b end
      rings[#rings + 1] = i
    end
  end
  local comps, order = {}, {}
  for _, i in ipairs(rings) do
    local r = net.roads[i]
    local k = find(r.from)
    local c = comps[k]
    if not c then c = { roads = 0, whole = true, pts = {}, sx = 0, sz = 0, sl = 0 } comps[k] = c order[#order + 1] = c end
    c.roads = c.roads + 1
    if not alive[i] then c.whole = false end
    -- the ring's centre: the middle of its centre line, by length
    local a, b = net.nodes[r.from], net.nodes[r.to]
    local pts = { { a.x, a.z } }
    for _, v in ipairs(r.via or {}) do pts[#pts + 1] = { v[1], v[2] } end
    pts[#pts + 1] = { b.x, b.z }
    for j = 1, #pts do
      local p = pts[j]
      c.pts[#c.pts + 1] = p
      if j > 1 then
        local q = pts[j - 1]
        local l = sqrt((p[1] - q[1]) ^ 2 + (p[2] - q[2]) ^ 2)
        c.sx, c.sz, c.sl = c.sx + (p[1] + q[1]) / 2 * l, c.sz + (p[2] + q[2]) / 2 * l, c.sl + l
      end
    end
  end
  local out = {}
  for _, c in ipairs(order) do
    if c.whole and c.roads >= 2 and c.sl > 0 then
      local cx, cz = c.sx / c.sl, c.sz / c.sl
      local r = math.huge
      for _, p in ipairs(c.pts) do r = min(r, sqrt((p[1] - cx) ^ 2 + (p[2] - cz) ^ 2)) end
      if r > M.TOLERANCE then out[#out + 1] = { pts = { { cx, cz }, { cx, cz } }, hw = r - M.TOLERANCE } end
    end
  end
  return out
end

return M
