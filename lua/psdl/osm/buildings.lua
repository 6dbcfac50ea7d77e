--- Building footprints from OSM: closed ways tagged `building=*` and multipolygon relations
-- tagged `building=*`, projected to metres, as `network.buildings` entries:
--
--     { outline = { {x, z}, ... },   -- clockwise seen from above (the retail winding,
--                                     -- docs/network.md), first point not repeated
--       holes = { { {x, z}, ... } },  -- only when the multipolygon has inner rings
--                                     -- (counter-clockwise)
--       levels = 3, height = 9.5,     -- when tagged (building:levels, height)
--       min_height = 3,               -- when tagged
--       kind = "house",               -- the building tag's value
--       source = "way 987" }
--
-- With a clip area, a building is kept when the centre of its outline's bounding box lies
-- inside the area (its outline is kept whole).
-- @module psdl.osm.buildings

local G = require "psdl.osm.geometry"
local T = require "psdl.osm.tags"

local ipairs, string_format, math_abs = ipairs, string.format, math.abs

local M = {}

-- Clean a projected ring: no closing repeat, no repeated or collinear points.
local function clean_ring(ring)
  local out = {}
  for _, p in ipairs(ring) do
    local q = out[#out]
    if not q or G.dist(p[1], p[2], q[1], q[2]) > 0.05 then out[#out + 1] = p end
  end
  if #out > 1 and G.dist(out[1][1], out[1][2], out[#out][1], out[#out][2]) <= 0.05 then out[#out] = nil end
  local changed = true
  while changed and #out >= 3 do
    changed = false
    for i = 1, #out do
      local a, b, c = out[(i - 2) % #out + 1], out[i], out[i % #out + 1]
      local d2 = G.seg_dist2(b[1], b[2], a[1], a[2], c[1], c[2])
      if d2 < 0.05 * 0.05 then
        table.remove(out, i)
        changed = true
        break
      end
    end
  end
  return out
end

local function oriented(ring, clockwise)
  local a = G.area(ring)
  if (clockwise and a > 0) or (not clockwise and a < 0) then return G.reversed(ring) end
  return ring
end

-- Join member ways (lists of node ids) into closed rings; nil when they do not close.
local function assemble(lists)
  local rings = {}
  local pending = {}
  for _, l in ipairs(lists) do pending[#pending + 1] = l end
  while #pending > 0 do
    local ring = {}
    for _, r in ipairs(table.remove(pending, 1)) do ring[#ring + 1] = r end
    local guard = 0
    while ring[1] ~= ring[#ring] do
      guard = guard + 1
      if guard > 10000 then return nil end
      local found = false
      for i, l in ipairs(pending) do
        if l[1] == ring[#ring] then
          for j = 2, #l do ring[#ring + 1] = l[j] end
          found = true
        elseif l[#l] == ring[#ring] then
          for j = #l - 1, 1, -1 do ring[#ring + 1] = l[j] end
          found = true
        end
        if found then table.remove(pending, i) break end
      end
      if not found then return nil end
    end
    rings[#rings + 1] = ring
  end
  return rings
end

--- Collect the buildings of an extract.
-- @tparam table data the reader's result
-- @tparam function project `(lat, lon) -> x, z`
-- @tparam[opt] table rect clip area `{minlat, minlon, maxlat, maxlon}`
-- @tparam function skip `skip(reason)` counts a building left out
-- @treturn table list of buildings
-- @treturn table set of way ids used as building members (not reported again)
function M.collect(data, project, rect, skip)
  local nodes = data.nodes
  local out = {}
  local members = {}

  -- ring of node ids -> projected points, or nil and a reason
  local function ring_points(ids)
    local pts = {}
    for i, id in ipairs(ids) do
      local n = nodes[id]
      if not n then return nil, "building: missing node references" end
      if i < #ids or id ~= ids[1] then
        local x, z = project(n[1], n[2])
        pts[#pts + 1] = { x, z, n[1], n[2] }
      end
    end
    return pts
  end

  local function inside(pts)
    if not rect then return true end
    local minlat, minlon, maxlat, maxlon = 90, 180, -90, -180
    for _, p in ipairs(pts) do
      if p[3] < minlat then minlat = p[3] end
      if p[3] > maxlat then maxlat = p[3] end
      if p[4] < minlon then minlon = p[4] end
      if p[4] > maxlon then maxlon = p[4] end
    end
    local clat, clon = (minlat + maxlat) / 2, (minlon + maxlon) / 2
    return clat >= rect.minlat and clat <= rect.maxlat and clon >= rect.minlon and clon <= rect.maxlon
  end

  local function add(tags, outer_ids, inner_ids, source)
    local pts, why = ring_points(outer_ids)
    if not pts then return skip(why) end
    if not inside(pts) then return skip("building outside the clip area") end
    local ring = clean_ring(pts)
    if #ring < 3 or math_abs(G.area(ring)) < 1 then return skip("building: degenerate outline") end
    local outline = {}
    for i, p in ipairs(oriented(ring, true)) do outline[i] = { p[1], p[2] } end
    local b = { outline = outline, kind = tags.building, source = source }
    local height, levels, min_height = T.building(tags)
    b.height, b.levels, b.min_height = height, levels, min_height
    if inner_ids and #inner_ids > 0 then
      local holes = {}
      for _, ids in ipairs(inner_ids) do
        local hp = ring_points(ids)
        if hp then
          local h = clean_ring(hp)
          if #h >= 3 and math_abs(G.area(h)) >= 1 and G.inside(outline, h[1][1], h[1][2]) then
            local hole = {}
            for i, p in ipairs(oriented(h, false)) do hole[i] = { p[1], p[2] } end
            holes[#holes + 1] = hole
          end
        end
      end
      if #holes > 0 then b.holes = holes end
    end
    out[#out + 1] = b
  end

  local ways_by_id = {}
  for _, w in ipairs(data.ways) do ways_by_id[w.id] = w end

  for _, w in ipairs(data.ways) do
    if T.is_building(w.tags) and not w.tags.highway then
      local nds = w.nds
      if #nds < 4 or nds[1] ~= nds[#nds] then
        skip("building: not a closed way")
      else
        add(w.tags, nds, nil, "way " .. w.id)
      end
    end
  end

  for _, r in ipairs(data.relations) do
    if r.tags.type == "multipolygon" and T.is_building(r.tags) then
      local outer, inner, missing = {}, {}, false
      for _, m in ipairs(r.members) do
        if m.type == "way" then
          local w = ways_by_id[m.ref]
          if not w then missing = true
          else
            members[w.id] = true
            if m.role == "inner" then inner[#inner + 1] = w.nds else outer[#outer + 1] = w.nds end
          end
        end
      end
      if missing then
        skip("building multipolygon: member ways missing")
      else
        local rings = #outer > 0 and assemble(outer)
        local holes = assemble(inner)
        if not rings or not holes then
          skip("building multipolygon: rings do not close")
        else
          for i, ring in ipairs(rings) do
            add(r.tags, ring, holes,
              #rings > 1 and string_format("relation %d (ring %d)", r.id, i) or "relation " .. r.id)
          end
        end
      end
    end
  end
  return out, members
end

return M
