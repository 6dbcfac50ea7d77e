--- Projection of latitude/longitude (WGS 84 degrees) to local metres around an origin.
--
-- A **transverse Mercator** projection on the WGS 84 ellipsoid whose central meridian is
-- the origin's longitude and whose false northing puts the origin's latitude at z = 0
-- (scale 1 on the central meridian; Snyder, "Map Projections: A Working Manual", USGS
-- Professional Paper 1395, 1987, §8, the series of formulas 8-9 to 8-11 and 8-17 to 8-25).
--
-- **Axes.** x east, z north, y up, in metres: the game's ground plane seen from above with
-- north up (docs/network.md). The origin (x = 0, z = 0) is the extract's centre.
--
-- **Error.** The projection is conformal (angles are exact, so junction angles come out
-- right) and its scale is `1 + x^2 / (2 R^2)` at a distance x east or west of the origin:
-- 1 + 1.2e-7 at 3 km, 1 + 3e-7 at 5 km, so lengths are off by less than a millimetre per
-- kilometre anywhere in a city-sized extract (the series' own truncation error is far
-- below that within a few degrees of the central meridian). For comparison, the simpler
-- equirectangular projection (`x = R cos(lat0) dlon`) is off by `tan(lat0) dlat` in x:
-- 2e-4 (20 cm per km) one kilometre north of the origin at Leeds' 53.8 N.
-- @module psdl.osm.projection

local math_sin, math_cos, math_tan, math_sqrt, math_rad, math_deg, math_pi =
  math.sin, math.cos, math.tan, math.sqrt, math.rad, math.deg, math.pi
local setmetatable, error, type = setmetatable, error, type

local M = {}

--- WGS 84 semi-major axis, metres.
M.A = 6378137.0
--- WGS 84 flattening.
M.F = 1 / 298.257223563

--- The origin's latitude must lie strictly between -89 and 89 degrees (nearer a pole the
-- projection's series do not hold): `psdl osm` refuses an extract centred beyond it.
M.MAX_LATITUDE = 89

local a = M.A
local e2 = M.F * (2 - M.F)           -- first eccentricity squared
local ep2 = e2 / (1 - e2)            -- second eccentricity squared
local e4, e6 = e2 * e2, e2 * e2 * e2
local M1 = 1 - e2 / 4 - 3 * e4 / 64 - 5 * e6 / 256
local M2 = 3 * e2 / 8 + 3 * e4 / 32 + 45 * e6 / 1024
local M3 = 15 * e4 / 256 + 45 * e6 / 1024
local M4 = 35 * e6 / 3072
local sq = math_sqrt(1 - e2)
local e1 = (1 - sq) / (1 + sq)

-- Meridian arc length from the equator to latitude phi (radians).
local function meridian(phi)
  return a * (M1 * phi - M2 * math_sin(2 * phi) + M3 * math_sin(4 * phi) - M4 * math_sin(6 * phi))
end

local Projection = {}
Projection.__index = Projection

--- Project a point.
-- @tparam number lat degrees north
-- @tparam number lon degrees east
-- @treturn number x metres east of the origin
-- @treturn number z metres north of the origin
function Projection:forward(lat, lon)
  local phi = math_rad(lat)
  local dl = math_rad(lon) - self.lam0
  if dl > math_pi then dl = dl - 2 * math_pi elseif dl < -math_pi then dl = dl + 2 * math_pi end
  local s, c = math_sin(phi), math_cos(phi)
  local t = math_tan(phi)
  local N = a / math_sqrt(1 - e2 * s * s)
  local T = t * t
  local C = ep2 * c * c
  local A = dl * c
  local A2 = A * A
  local x = N * (A + (1 - T + C) * A2 * A / 6 + (5 - 18 * T + T * T + 72 * C - 58 * ep2) * A2 * A2 * A / 120)
  local z = meridian(phi) - self.m0 + N * t * (A2 / 2 + (5 - T + 9 * C + 4 * C * C) * A2 * A2 / 24
    + (61 - 58 * T + T * T + 600 * C - 330 * ep2) * A2 * A2 * A2 / 720)
  return x, z
end

--- Inverse: local metres back to degrees.
-- @tparam number x metres east
-- @tparam number z metres north
-- @treturn number lat degrees
-- @treturn number lon degrees
function Projection:inverse(x, z)
  local m = self.m0 + z
  local mu = m / (a * M1)
  local phi1 = mu + (3 * e1 / 2 - 27 * e1 ^ 3 / 32) * math_sin(2 * mu)
    + (21 * e1 ^ 2 / 16 - 55 * e1 ^ 4 / 32) * math_sin(4 * mu)
    + (151 * e1 ^ 3 / 96) * math_sin(6 * mu) + (1097 * e1 ^ 4 / 512) * math_sin(8 * mu)
  local s, c = math_sin(phi1), math_cos(phi1)
  local t = math_tan(phi1)
  local C1 = ep2 * c * c
  local T1 = t * t
  local w = 1 - e2 * s * s
  local N1 = a / math_sqrt(w)
  local R1 = a * (1 - e2) / (w * math_sqrt(w))
  local D = x / N1
  local D2 = D * D
  local phi = phi1 - (N1 * t / R1) * (D2 / 2 - (5 + 3 * T1 + 10 * C1 - 4 * C1 * C1 - 9 * ep2) * D2 * D2 / 24
    + (61 + 90 * T1 + 298 * C1 + 45 * T1 * T1 - 252 * ep2 - 3 * C1 * C1) * D2 * D2 * D2 / 720)
  local lam = self.lam0 + (D - (1 + 2 * T1 + C1) * D2 * D / 6
    + (5 - 2 * C1 + 28 * T1 - 3 * C1 * C1 + 8 * ep2 + 24 * T1 * T1) * D2 * D2 * D / 120) / c
  return math_deg(phi), math_deg(lam)
end

--- A transverse Mercator projection centred on an origin.
-- @tparam number lat0 origin latitude, degrees (|lat0| < 89)
-- @tparam number lon0 origin longitude, degrees
-- @treturn table projection with `forward(lat, lon) -> x, z`, `inverse(x, z) -> lat, lon`,
--   and fields `lat0`, `lon0`, `name` (`"tmerc"`)
function M.new(lat0, lon0)
  if type(lat0) ~= "number" or lat0 ~= lat0 or lat0 <= -M.MAX_LATITUDE or lat0 >= M.MAX_LATITUDE then
    error("bad argument #1 to 'new' (latitude between -89 and 89 expected)", 2)
  end
  if type(lon0) ~= "number" or lon0 ~= lon0 or lon0 < -180 or lon0 > 180 then
    error("bad argument #2 to 'new' (longitude between -180 and 180 expected)", 2)
  end
  return setmetatable({
    lat0 = lat0, lon0 = lon0, name = "tmerc",
    lam0 = math_rad(lon0), m0 = meridian(math_rad(lat0)),
  }, Projection)
end

--- Description of the projection, for reports and JSON output.
-- @tparam table p a projection
-- @treturn string e.g. `"+proj=tmerc +lat_0=53.818 +lon_0=-1.526 +k=1 +datum=WGS84 +units=m"`
function M.describe(p)
  return ("+proj=tmerc +lat_0=%.7f +lon_0=%.7f +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m"):format(p.lat0, p.lon0)
end

return M
