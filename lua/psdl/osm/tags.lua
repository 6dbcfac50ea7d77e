--- What OSM tags mean for a road network: highway classes to profiles, lanes, widths,
-- one-way rules, bridges, tunnels, layers, building heights.
--
-- Profiles (docs/network.md): `street`, `one_sided`, `alley`, `avenue`, `boulevard`,
-- `freeway`. The default mapping (override per class with the `profiles` option):
--
-- | highway | profile | note |
-- | --- | --- | --- |
-- | motorway | freeway | one carriageway alone: alley (a strip without sidewalks) |
-- | trunk, primary, secondary | avenue | a one-way carriageway alone: street |
-- | tertiary, residential, unclassified, road | street | dual carriageways: boulevard |
-- | motorway_link, trunk_link | alley | slip roads, no sidewalks |
-- | primary_link, secondary_link, tertiary_link | street | slip roads |
-- | living_street, service | alley | `service=driveway/parking_aisle/drive-through` skipped unless `driveways` |
-- | footway, path, steps, cycleway, pedestrian, bridleway, corridor | skipped | `walkways` option: alley with `walkway = true` |
-- | track, bus_guideway, raceway, construction, proposed, ... | skipped | |
-- @module psdl.osm.tags

local MAX_WIDTH = require("psdl.city.profiles").MAX_WIDTH

local tonumber, type = tonumber, type
local math_floor, math_tointeger = math.floor, math.tointeger

local M = {}

--- Road classes: `profile` (two-way way), `oneway_profile` (a one-way way not paired into a
-- dual carriageway), `dual_profile` (two one-way ways merged into one divided road),
-- `rank` (importance: the higher class wins merges and keeps its place in conflicts),
-- `lanes`, `oneway_lanes` (the real lanes assumed when a way has no `lanes` tag: only used
-- to estimate the real median of a merged dual carriageway, never written out),
-- `implied_oneway` (one-way unless tagged otherwise), `link` (a slip road), `walkway`.
M.classes = {
  motorway       = { profile = "freeway", oneway_profile = "alley", dual_profile = "freeway", rank = 10, lanes = 4, oneway_lanes = 2, implied_oneway = true },
  trunk          = { profile = "avenue", oneway_profile = "street", dual_profile = "avenue", rank = 9, lanes = 4, oneway_lanes = 2 },
  primary        = { profile = "avenue", oneway_profile = "street", dual_profile = "avenue", rank = 8, lanes = 4, oneway_lanes = 2 },
  secondary      = { profile = "avenue", oneway_profile = "street", dual_profile = "avenue", rank = 7, lanes = 2, oneway_lanes = 1 },
  tertiary       = { profile = "street", oneway_profile = "street", dual_profile = "boulevard", rank = 6, lanes = 2, oneway_lanes = 1 },
  unclassified   = { profile = "street", oneway_profile = "street", dual_profile = "boulevard", rank = 5, lanes = 2, oneway_lanes = 1 },
  residential    = { profile = "street", oneway_profile = "street", dual_profile = "boulevard", rank = 5, lanes = 2, oneway_lanes = 1 },
  road           = { profile = "street", oneway_profile = "street", dual_profile = "boulevard", rank = 5, lanes = 2, oneway_lanes = 1 },
  motorway_link  = { profile = "alley", rank = 4, lanes = 1, link = true, implied_oneway = true },
  trunk_link     = { profile = "alley", rank = 4, lanes = 1, link = true },
  primary_link   = { profile = "street", rank = 4, lanes = 1, link = true },
  secondary_link = { profile = "street", rank = 4, lanes = 1, link = true },
  tertiary_link  = { profile = "street", rank = 4, lanes = 1, link = true },
  living_street  = { profile = "alley", rank = 3, lanes = 1 },
  service        = { profile = "alley", rank = 2, lanes = 1 },
  footway        = { profile = "alley", rank = 1, lanes = 1, walkway = true },
  path           = { profile = "alley", rank = 1, lanes = 1, walkway = true },
  steps          = { profile = "alley", rank = 1, lanes = 1, walkway = true },
  cycleway       = { profile = "alley", rank = 1, lanes = 1, walkway = true },
  pedestrian     = { profile = "alley", rank = 1, lanes = 1, walkway = true },
  bridleway      = { profile = "alley", rank = 1, lanes = 1, walkway = true },
  corridor       = { profile = "alley", rank = 1, lanes = 1, walkway = true },
}

--- The six profiles of docs/network.md.
M.profiles = { street = true, one_sided = true, alley = true, avenue = true, boulevard = true, freeway = true }

--- Divided profiles (a divider between the two directions).
M.divided = { avenue = true, boulevard = true, freeway = true }

local SERVICE_SKIPPED = { driveway = true, parking_aisle = true, ["drive-through"] = true, emergency_access = true }

--- Parse a length in metres from an OSM value: `"12"`, `"12.5 m"`, `"12m"`, `"40'"`,
-- `"40 ft"`, `"12'6\""`, `"3.5 km"` (OSM's default unit is the metre).
-- @tparam string s
-- @treturn number|nil metres (nil when the value cannot be read or is not positive)
function M.length(s)
  if type(s) ~= "string" then return nil end
  s = s:gsub(",", "."):match("^%s*(.-)%s*$")
  local n = tonumber(s)
  if not n then
    local v, unit = s:match("^([%d%.]+)%s*(%a+)$")
    if v then
      v = tonumber(v)
      if not v then return nil end
      if unit == "m" then n = v
      elseif unit == "km" then n = v * 1000
      elseif unit == "ft" then n = v * 0.3048
      elseif unit == "mi" then n = v * 1609.344
      else return nil end
    else
      local ft, inch = s:match("^([%d%.]+)'%s*([%d%.]*)\"?$")
      if not ft then return nil end
      n = (tonumber(ft) or 0) * 0.3048 + (tonumber(inch) or 0) * 0.0254
    end
  end
  if not n or n ~= n or n <= 0 or n == 1 / 0 then return nil end
  return n
end

--- Parse a count (`lanes`, `building:levels`): the first number of `"2"`, `"2;3"`,
-- `"2.5"` (rounded up).
-- @tparam string s
-- @treturn integer|nil
function M.count(s)
  if type(s) ~= "string" then return nil end
  local v = tonumber(s:match("^%s*([%d%.]+)"))
  if not v or v ~= v or v <= 0 or v > 1000 then return nil end
  local c = math_floor(v)
  if c < v then c = c + 1 end
  return math_tointeger(c)
end

local function yes(v)
  return v ~= nil and v ~= "no" and v ~= "false" and v ~= "0"
end

--- `oneway` direction of a way: 1 along the way, -1 against it, 0 both ways.
-- @tparam table tags
-- @tparam[opt] table class entry of `classes`
-- @treturn integer
function M.oneway(tags, class)
  local v = tags.oneway
  if v == "yes" or v == "true" or v == "1" then return 1 end
  if v == "-1" or v == "reverse" then return -1 end
  if v == "no" or v == "false" or v == "0" or v == "reversible" or v == "alternating" then return 0 end
  if tags.junction == "roundabout" or tags.junction == "circular" then return 1 end
  if class and class.implied_oneway then return 1 end
  return 0
end

--- The level a way is on: its `layer` tag, else 1 for a bridge, -1 for a tunnel, else 0.
-- Two ways cross at grade only when their levels, bridge and tunnel flags are the same. A
-- positive layer without a bridge or tunnel tag counts as a bridge.
-- @tparam table tags
-- @treturn integer layer
-- @treturn boolean bridge
-- @treturn boolean tunnel
function M.level(tags)
  local bridge = yes(tags.bridge)
  local t = tags.tunnel
  local tunnel = yes(t) and t ~= "building_passage"
  local layer = tonumber(tags.layer)
  layer = layer and math_tointeger(math_floor(layer + 0.5))
  if not layer then layer = bridge and 1 or tunnel and -1 or 0 end
  -- a way above the ground (a positive layer) without a bridge tag is on a structure all
  -- the same (a viaduct, an overpass on an embankment): where it crosses a road it gets a
  -- deck with ramps, elsewhere the clean-up makes it an ordinary road
  -- (`psdl.osm.clean.bridges`). (A negative layer without a tunnel tag is mostly a cutting
  -- whose tunnel part is tagged: it stays as it is.)
  if layer > 0 and not bridge and not tunnel then bridge = true end
  return layer, bridge, tunnel
end

--- Which sides of a road have a sidewalk (`sidewalk=both|left|right|no|none|separate`,
-- or `sidewalk:both`, `sidewalk:left`, `sidewalk:right` = `yes|no|separate`), relative to
-- the way's direction. `separate` (drawn as its own footway) counts as a sidewalk.
-- @tparam table tags
-- @treturn string|nil "both", "left", "right", "none", or nil when not tagged
function M.sidewalk(tags)
  local v = tags.sidewalk
  if v == "both" or v == "yes" or v == "separate" then return "both" end
  if v == "left" or v == "right" then return v end
  if v == "no" or v == "none" then return "none" end
  local function side(x)
    if x == "yes" or x == "separate" then return true end
    if x == "no" or x == "none" then return false end
    return nil
  end
  local b = side(tags["sidewalk:both"])
  if b ~= nil then return b and "both" or "none" end
  local l, r = side(tags["sidewalk:left"]), side(tags["sidewalk:right"])
  if l == nil and r == nil then return nil end
  if l and r then return "both" end
  if l then return "left" end
  if r then return "right" end
  if l == false and r == false then return "none" end
  return nil
end

--- Interpret a way's tags as a road.
-- @tparam table tags
-- @tparam table opts `walkways` (keep footways etc. as alleys), `driveways` (keep
--   `service=driveway|parking_aisle|drive-through`), `profiles` (`{ [highway] = profile |
--   false }` overrides; false skips the class)
-- @treturn table|nil `{ highway, class, profile, oneway (-1|0|1), lanes, width, sidewalk,
--   layer, bridge, tunnel, name, ref, roundabout, link, walkway }`
-- @treturn[2] string why the way is not a road (a report key), or nil when it is not a
--   highway at all
function M.road(tags, opts)
  local hw = tags.highway
  if not hw then return nil, nil end
  if tags.area == "yes" then return nil, "highway area" end
  local class = M.classes[hw]
  if not class then return nil, "highway=" .. hw end
  local override
  if opts.profiles then override = opts.profiles[hw] end
  if override == false then return nil, "highway=" .. hw .. " (profiles option)" end
  if class.walkway and not opts.walkways then return nil, "walkway (highway=" .. hw .. ")" end
  if class.walkway and (tags.footway == "sidewalk" or tags.footway == "crossing" or tags.cycleway == "crossing") then
    return nil, "footway=" .. (tags.footway or "crossing") .. " (part of a street)"
  end
  if hw == "service" and SERVICE_SKIPPED[tags.service] and not opts.driveways then
    return nil, "service=" .. tags.service
  end
  local layer, bridge, tunnel = M.level(tags)
  local oneway = M.oneway(tags, class)
  local r = {
    highway = hw, class = class, rank = class.rank,
    profile = override or (oneway ~= 0 and class.oneway_profile) or class.profile,
    oneway = oneway, lanes = M.count(tags.lanes), width = M.length(tags.width),
    layer = layer, bridge = bridge, tunnel = tunnel,
    name = tags.name, ref = tags.ref,
    roundabout = tags.junction == "roundabout" or tags.junction == "circular" or nil,
    link = class.link or nil, walkway = class.walkway or nil,
  }
  -- sidewalks: a street with one becomes one-sided; none on a road that has them by
  -- profile, or some on an alley, override the profile
  local sw = M.sidewalk(tags)
  if sw == "left" or sw == "right" then
    if r.profile == "street" then r.profile = "one_sided" end
    r.sidewalk = sw
  elseif sw == "none" then
    if r.profile ~= "alley" and r.profile ~= "freeway" then r.sidewalk = "none" end
  elseif sw == "both" and r.profile == "alley" and not r.walkway then
    r.sidewalk = "both"
  end
  -- a width no road has (psdl.city.profiles would refuse it) is a tagging error: the class's
  -- profile width serves instead
  if r.width and r.width > MAX_WIDTH then r.width = nil end
  if r.lanes and r.lanes > 16 then r.lanes = nil end
  return r
end

--- A building's height and levels from its tags.
-- @tparam table tags
-- @treturn number|nil height in metres (`height`, else `building:height`)
-- @treturn integer|nil levels (`building:levels`)
-- @treturn number|nil min_height in metres (`min_height`: a building part on stilts)
function M.building(tags)
  local height = M.length(tags.height) or M.length(tags["building:height"])
  local levels = M.count(tags["building:levels"])
  return height, levels, M.length(tags.min_height)
end

--- Whether a way or relation's tags make it a building.
-- @tparam table tags
-- @treturn boolean
function M.is_building(tags)
  local b = tags.building
  return b ~= nil and b ~= "no"
end

return M
