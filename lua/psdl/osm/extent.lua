--- The size of an import's area, measured before any heavy work, and the limit on it.
--
-- **Why a limit.** A city must fit the game: at most 2,047 rooms and 65,024 vertices
-- (docs/psdl-format.md). The ground apron around the roads (`psdl.city.blocks`) fills the
-- whole area with block rooms, so the room count grows with the area, not with the roads:
-- a single straight road across a 2.2 km square gives 1,055 rooms, across a 3.3 km square
-- 2,156 (already over the 2,047), and every real extract of the project spans at most
-- 2.4 km. Anything much beyond 5 km across cannot be built, yet projecting, cleaning and
-- filling it can take minutes and gigabytes (a road from pole to pole is 20,000 km). So the
-- import refuses an area whose larger side is over `LIMIT` (5 km; `psdl osm --max-extent`
-- raises it) before it projects anything. docs/osm.md, "Area limit".
--
-- **Measure.** On a sphere of the mean Earth radius (6,371.0088 km): the north-south side
-- is the latitude span, the east-west side the longitude span at the latitude of the area
-- nearest the equator (where it is widest). Good to a fraction of a per cent at city
-- size; an area across the 180th meridian counts as going the long way round.
-- @module psdl.osm.extent

local math_cos, math_rad, math_huge, math_max, math_sqrt = math.cos, math.rad, math.huge, math.max, math.sqrt
local string_format, type, ipairs = string.format, type, ipairs
local plan_box = require("psdl.plan").box

local M = {}

--- The default limit on the larger side of the area, metres.
M.LIMIT = 5000

--- Metres per degree of latitude on the mean sphere.
M.METRES_PER_DEGREE = 6371008.8 * math.pi / 180

--- Width and height of a rectangle in degrees.
-- @tparam number minlat
-- @tparam number minlon
-- @tparam number maxlat
-- @tparam number maxlon
-- @treturn number width, metres east-west (at the latitude nearest the equator)
-- @treturn number height, metres north-south
function M.size(minlat, minlon, maxlat, maxlon)
  local lat = 0
  if minlat > 0 then lat = minlat elseif maxlat < 0 then lat = maxlat end
  local k = M.METRES_PER_DEGREE
  return (maxlon - minlon) * k * math_cos(math_rad(lat)), (maxlat - minlat) * k
end

--- The bounding rectangle of the nodes referenced by road pieces.
-- @tparam table pieces `{ {refs = {entry...}}, ... }`, each entry an OSM node id or a
--   point `{lat, lon}` (where a way was clipped)
-- @tparam table nodes `[id] = {lat, lon}`
-- @treturn table|nil `{minlat, minlon, maxlat, maxlon}` or nil when no node is known
function M.of_pieces(pieces, nodes)
  local box = plan_box() -- lat, lon
  for _, p in ipairs(pieces) do
    for _, r in ipairs(p.refs) do
      local n = r
      if type(r) == "number" then n = nodes[r] end
      if n then box:add(n[1], n[2]) end
    end
  end
  if box.u0 == math_huge then return nil end
  return { minlat = box.u0, minlon = box.v0, maxlat = box.u1, maxlon = box.v1 }
end

local function km(m)
  if m >= 100000 then return string_format("%.0f km", m / 1000) end
  if m >= 10000 then return string_format("%.1f km", m / 1000) end
  return string_format("%.2f km", m / 1000)
end
M.km = km

--- Check an area against a limit.
-- @tparam table r `{minlat, minlon, maxlat, maxlon}` degrees
-- @tparam number limit metres on the larger side of the city (the area times `scale`)
-- @tparam string what what the area is ("the --bbox", "the file's <bounds>", ...)
-- @tparam[opt] number scale the import's scale (`psdl.osm.network`'s `scale`, default 1): the
--   city spans the area times it, so a small area scaled up can be over the limit too
-- @treturn boolean true when it is within the limit
-- @treturn string|nil otherwise the message: the size in km (and scaled), the limit and the remedy
-- @treturn number width, metres (unscaled)
-- @treturn number height, metres (unscaled)
function M.check(r, limit, what, scale)
  scale = scale or 1
  local w, h = M.size(r.minlat, r.minlon, r.maxlat, r.maxlon)
  if math_max(w, h) * scale <= limit then return true, nil, w, h end
  local scaled, remedy = "", ""
  if scale ~= 1 then
    scaled = string_format(", %s by %s at scale %.6g", km(w * scale), km(h * scale), scale)
    remedy = ", a smaller scale"
  end
  return false, string_format("the area to import (%s, %.5f,%.5f,%.5f,%.5f) is %s east-west by %s north-south%s, "
    .. "more than the %s a city can span (the game's 2,047 rooms; docs/osm.md, \"Area limit\"): import a "
    .. "smaller area with --bbox minlon,minlat,maxlon,maxlat%s (or raise --max-extent)", what, r.minlon, r.minlat,
    r.maxlon, r.maxlat, km(w), km(h), scaled, km(limit), remedy), w, h
end

--- Distance in metres between the centres of two rectangles (same sphere as `size`).
-- @tparam table a `{minlat, minlon, maxlat, maxlon}`
-- @tparam table b `{minlat, minlon, maxlat, maxlon}`
-- @treturn number metres
function M.centre_distance(a, b)
  local la, lb = (a.minlat + a.maxlat) / 2, (b.minlat + b.maxlat) / 2
  local oa, ob = (a.minlon + a.maxlon) / 2, (b.minlon + b.maxlon) / 2
  local k = M.METRES_PER_DEGREE
  local dx, dz = (ob - oa) * k * math_cos(math_rad((la + lb) / 2)), (lb - la) * k
  return math_sqrt(dx * dx + dz * dz)
end

return M
