--- The text files of an add-on city (companion-formats.md §6 and §7.4, "CF"): `tune/<map>.cinfo`,
-- `city/<map>.aimap`, `race/<map>/roam.aimap` and `roam.aimap_p`, `tune/<map>.mmhudmap`.
-- Every file uses CRLF line ends (CF §1: the `.cinfo` reader depends on them).
--
-- Settings (`settings` below; `psdl package` options and a city script's `package` table set
-- them): `name` (the map name: lower case letters, digits and `_`, 1-21 characters, so that
-- `hudmap_<map>_NN` stays within 31; not containing `london` or `sf`), `title` (the name shown
-- in the menus, at most 39 characters), `left_hand` (traffic drives on the left), `density`
-- (ambient traffic density 0-4 applied to every AI road through `[Exceptions]` of the cruise
-- file, and the pedestrian pool; 1 = the game's own), `speed` (city speed limit, m/s, 15),
-- `police` (number of police cars placed at intersections in cruise, 0-8, default 2),
-- `vehicles` (ambient roster: list of `{model, share}`), `peds` (pairs of pedestrian models),
-- `lights` (single and dual traffic-light models).
-- @module psdl.package.text

local string, table, math = string, table, math
local ipairs, pairs, type, tostring, error, tonumber = ipairs, pairs, type, tostring, error, tonumber
local string_format, concat, floor = string.format, table.concat, math.floor

local M = {}

--- Defaults of the settings (the roster names are retail files, CF §6.3).
M.DEFAULTS = {
  speed = 15, left_hand = false, density = 1, police = 2,
  vehicles = { { "va_compact_s", 0.40 }, { "va_minivan_s", 0.30 }, { "va_pickup_f", 0.20 }, { "va_bus_f", 0.10 } },
  peds = { { "pedmodel_man", "pedmodel_manw" }, { "pedmodel_woman", "pedmodel_womanw" } },
  lights = { "sp_traflitsingle_f", "sp_traflitdual_f" },
  ped_pool = 100, police_model = "vpcop",
}

--- Check a map name (CF §6.1, §1): returns it, or raises with the reason.
-- @tparam string name
-- @treturn string
function M.check_name(name)
  if type(name) ~= "string" or not name:match("^[a-z0-9_]+$") or #name > 21 then
    error(string_format("map name %q: 1-21 lower-case letters, digits or '_' expected (it names "
      .. "city/<map>.*, race/<map>/ and the 31-character texture hudmap_<map>_NN, CF §6.1)", tostring(name)), 0)
  end
  if name:find("london", 1, true) or name:find("sf", 1, true) then
    error(string_format("map name %q contains %q: the game special-cases such cities (PF §3.4); rename it",
      name, name:find("london", 1, true) and "london" or "sf"), 0)
  end
  return name
end

--- Check a menu title (CF §6.1: the `.cinfo` line the menus show): returns it, or raises
-- with the reason (at most 39 characters, one line).
-- @tparam string title
-- @treturn string
function M.check_title(title)
  if type(title) ~= "string" or #title > 39 or title:find("[\r\n]") then
    error(string_format("title %q: at most 39 characters on one line (CF §6.1)", tostring(title)), 0)
  end
  return title
end

--- A map name from any text (a file name, a title): lower case, `_` for the rest, at most 21
-- characters, `london`/`sf` removed.
-- @tparam string s
-- @treturn string the name
-- @treturn string|nil the whole name when it had to be cut to 21 characters (callers say so:
--   `psdl package` warns and names `--name`)
function M.name_from(s)
  local n = tostring(s):lower():gsub("%.[%w]+$", ""):gsub("[^a-z0-9_]+", "_")
  n = n:gsub("london", "ldn"):gsub("sf", "s_f"):gsub("^_+", ""):gsub("_+$", "")
  if n == "" then n = "city" end
  if #n > 21 then
    local cut = n:sub(1, 21):gsub("_+$", "")
    return cut, n
  end
  return n
end

--- A menu title from a map name: `_` as spaces, words capitalised (`old_town` -> `Old Town`).
-- @tparam string name
-- @treturn string
function M.title_from(name)
  return (tostring(name):gsub("_+", " "):gsub("(%a)(%w*)", function(a, b) return a:upper() .. b end))
end

local function lines(t) return concat(t, "\r\n") .. "\r\n" end

local function num(x)
  local s = string_format("%.2f", x)
  return s
end

--- `tune/<map>.cinfo` (CF §6.1): the nine lines the game reads, then the two it ignores.
-- Name lists are `None` (an empty value fails the whole file with CRLF).
-- @tparam table s settings (`name`, `title`)
-- @treturn string
function M.cinfo(s)
  local title = M.check_title(s.title or M.title_from(s.name))
  return lines{
    "LocalizedName=" .. title, "MapName=" .. s.name, "RaceDir=" .. s.name,
    "BlitzCount=0", "CircuitCount=0", "CheckpointCount=0",
    "BlitzNames=None", "CircuitNames=None", "CheckpointNames=None",
    "MustPlace=0", "UnlockGroup=0",
  }
end

--- `city/<map>.aimap` (CF §6.3).
-- @tparam table s settings
-- @treturn string
function M.city_aimap(s)
  local t = { "[Speed Limit]", num(s.speed), "", "[Ambients Drive On The Left]", s.left_hand and "1" or "0", "",
              "[Ambient Types/Density]", tostring(#s.vehicles) }
  local total = 0
  for _, v in ipairs(s.vehicles) do total = total + v[2] end
  local cum = 0
  for i, v in ipairs(s.vehicles) do
    cum = cum + v[2] / total
    if i == #s.vehicles then cum = 1 end
    t[#t + 1] = string_format("%s %s 0", v[1], num(cum))
  end
  t[#t + 1] = ""
  t[#t + 1] = "[GoodWeatherPedName / BadWeatherPedName]"
  t[#t + 1] = tostring(#s.peds)
  for _, p in ipairs(s.peds) do t[#t + 1] = p[1] .. " " .. p[2] end
  t[#t + 1] = ""
  t[#t + 1] = "[Traffic Lights]"
  t[#t + 1] = s.lights[1] .. " " .. s.lights[2]
  t[#t + 1] = ""
  t[#t + 1] = "[Ped Pool]"
  t[#t + 1] = tostring(floor(s.ped_pool * s.density + 0.5))
  return lines(t)
end

--- `race/<map>/roam.aimap` (CF §6.4): lane changes on, an `[Exceptions]` row per AI road when
-- the density is not 1, police cars at intersections (not the cruise start), no opponents.
-- @tparam table s settings
-- @tparam table bai the generated BAI table (roads and intersections)
-- @tparam integer start the cruise-start intersection (1-based)
-- @treturn string
function M.roam_aimap(s, bai, start)
  local t = { "[AmbientLaneChanges]", "1", "", "[Exceptions]" }
  if s.density ~= 1 then
    t[#t + 1] = tostring(#bai.roads)
    for k = 1, #bai.roads do t[#t + 1] = string_format("%d %s %s", k - 1, num(s.density), num(s.speed)) end
  else
    t[#t + 1] = "0"
  end
  t[#t + 1] = ""
  t[#t + 1] = "[Police]"
  -- spread the cars over the intersections that have roads, skipping the cruise start
  local cands = {}
  for i, it in ipairs(bai.intersections) do
    if i ~= start and #it.roads >= 3 then cands[#cands + 1] = it end
  end
  local n = math.min(s.police, #cands)
  t[#t + 1] = tostring(n)
  for k = 1, n do
    local it = cands[floor((k - 0.5) * #cands / n) + 1]
    local c = it.center
    -- heading 0 is treated specially by the game (CF §6.4): 90 degrees
    t[#t + 1] = string_format("%s\t%.2f %.2f %.2f 90.0 0 15 0.5 50.0", s.police_model, c[1], c[2] + 0.5, c[3])
  end
  t[#t + 1] = ""
  t[#t + 1] = "[Opponent]"
  t[#t + 1] = "0"
  t[#t + 1] = ""
  t[#t + 1] = "[Hookmen]"
  t[#t + 1] = "0"
  return lines(t)
end

--- `tune/<map>.mmhudmap` (CF §7.4): the retail SF values, zoom distances raised by the city's
-- mean street height when it is above 0 (the camera height is absolute).
-- @tparam number lift metres to add to the zoom distances
-- @treturn string
function M.mmhudmap(lift)
  lift = (lift and lift > 0) and lift or 0
  local function f(x) return string_format("%.6f", x) end
  return lines{
    "type: a", "mmHudMap {",
    "\tSize 0.210000 0.250000", "\tPos 0.780000 0.750000", "\tZoomIn 0", "\tApproach Rate 1.200000",
    "\tZoomInDist " .. f(577 + lift), "\tZoomOutDist " .. f(1195 + lift),
    "\tIconScaleMin 34.090019", "\tIconScaleMax 52.399994",
    "\tZoomInDistFS " .. f(786 + lift), "\tZoomOutDistFS " .. f(1581 + lift),
    "\tIconScaleMinFS 15.070000", "\tIconScaleMaxFS 18.000000",
    "\tOcean Color 0.084 0.7 0.94", "}",
  }
end

--- Fill a settings table from options and defaults, checking each value.
-- @tparam table opts user settings (see the module doc)
-- @treturn table settings
function M.settings(opts)
  local s = {}
  for k, v in pairs(M.DEFAULTS) do s[k] = v end
  for k, v in pairs(opts) do s[k] = v end
  s.name = M.check_name(s.name)
  if type(s.density) ~= "number" or not (s.density >= 0 and s.density <= 4) then
    error("density: a number 0-4 expected, got " .. tostring(s.density), 0)
  end
  if type(s.speed) ~= "number" or not (s.speed > 0 and s.speed <= 100) then
    error("speed: m/s 0-100 expected, got " .. tostring(s.speed), 0)
  end
  local p = tonumber(s.police)
  if s.police == false then p = 0 elseif s.police == true then p = M.DEFAULTS.police end
  if not p or p ~= floor(p) or p < 0 or p > 8 then error("police: 0-8 cars expected, got " .. tostring(s.police), 0) end
  s.police = p
  if type(s.vehicles) ~= "table" or #s.vehicles == 0 then error("vehicles: a list of {model, share} expected", 0) end
  for i, v in ipairs(s.vehicles) do
    if type(v) ~= "table" or type(v[1]) ~= "string" or not v[1]:match("^[%w_]+$") or type(v[2]) ~= "number" or v[2] <= 0 then
      error(string_format("vehicles[%d]: {model, share > 0} expected", i), 0)
    end
  end
  return s
end

return M
