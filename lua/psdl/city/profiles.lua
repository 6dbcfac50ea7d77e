--- Road profiles of `psdl.city`: named cross-sections (street, one-sided street, alley,
-- walkway, avenue, boulevard, freeway), per-road overrides of widths, lanes, sidewalks,
-- dividers and textures, and their resolution into what `psdl.builder` takes: a builder
-- profile, a texture group, divider options, lane lists and road-record flags.
--
-- Widths are metres. A profile's `left` / `right` are seen in the road's direction of
-- travel (from its `from` node to its `to` node); the left of a direction (tx, tz) is
-- (tz, −tx) (psdl-format.md §4.2). Lanes are 5 m wide by default, as the retail texture
-- names `rN` (N = total lanes, 5 m each; the texture holds half the road) and the km2cb
-- presets use (city-layout.md §7).
-- @module psdl.city.profiles

local styles = require "psdl.styles"
local LIMITS = require("psdl.core").limits
local shown = require("psdl.check").shown -- (a string quoted: `lanes = "4"` is no number)
local options = require "psdl.city.options"

local type, error, pairs, ipairs, tostring, require, pcall = type, error, pairs, ipairs, tostring, require, pcall
local floor, max, abs = math.floor, math.max, math.abs
local string_format, table_concat = string.format, table.concat

local M = {}

--- The named profiles. Fields: `kind` ("road": road strip with sidewalks, 0x0; "walkway":
-- rectangle strip, 0x2; "divided": divided road, 0x8), `lanes` (total, both directions),
-- `lane_width` (m), `width` (carriageway, m, both directions; wins over lanes), `sidewalk`
-- (m per side), `sides` ("both", "left", "right", "none"), `median` (m, divided),
-- `divider` ("elevated", "flat", "wedge", "none"), `divider_textures` (a key of the style's
-- `dividers`), `textures` (a key of the style's `roads`, or "alley" / "walkway"),
-- `crosswalk` (m at intersections; 0 none), `props` (prop-rule themes of the style, first
-- found wins; false: none), `freeway` (record flag 0x20).
M.PROFILES = {
  street = { kind = "road", lanes = 2, lane_width = 5, sidewalk = 4, sides = "both", crosswalk = 3,
             props = { "residential" } },
  one_sided = { kind = "road", lanes = 2, lane_width = 5, sidewalk = 4, sides = "right", crosswalk = 3,
                props = { "residential" } },
  alley = { kind = "walkway", width = 5, textures = "alley", crosswalk = 0, props = false },
  walkway = { kind = "walkway", width = 4, textures = "walkway", crosswalk = 0, props = false },
  avenue = { kind = "divided", lanes = 4, lane_width = 5, median = 2, divider = "elevated", divider_textures = "kerb",
             sidewalk = 5, sides = "both", crosswalk = 3, props = { "high_street", "downtown" } },
  boulevard = { kind = "divided", lanes = 4, lane_width = 5, median = 8, divider = "flat", divider_textures = "planted",
                sidewalk = 5, sides = "both", crosswalk = 3, props = { "main_road", "banners", "downtown" } },
  freeway = { kind = "divided", lanes = 6, lane_width = 5, median = 3, divider = "wedge", divider_textures = "wedge",
              sidewalk = 0, sides = "none", crosswalk = 0, textures = "freeway", freeway = true, props = false },
}

--- The widest carriageway, median or sidewalk a road may have, metres (100): the widest
-- built-in profile is 39 m across (a freeway's 30 m of lanes and 3 m median, a boulevard's
-- 20 + 8 m and 10 m of sidewalks), and the OpenStreetMap importer ignores `width` tags above
-- this (`psdl.osm.tags`); a larger figure is a typo (`width = 5000` for 50), refused with the
-- script line rather than built as a disc of intersection kilometres across.
M.MAX_WIDTH = 100

--- Names `profile = ...` accepts besides the table keys (network importers' spellings).
M.ALIASES = { one_side = "one_sided", onesided = "one_sided", walk = "walkway", path = "walkway",
              footway = "walkway", service = "alley", motorway = "freeway" }

--- Record flag bits (psdl-format.md §1.7).
M.RECORD = { divided = 0x08, alley = 0x10, freeway = 0x20, sidewalks = 0x40 }

local FIELDS = { "kind", "lanes", "lane_width", "width", "sidewalk", "sides", "median", "divider", "divider_textures",
                 "textures", "crosswalk", "props", "freeway", "oneway", "sidewalk_left", "sidewalk_right",
                 "divider_height", "divider_repeats" }

--- A style table from a name or a table (`psdl.styles.load`).
-- @raise "unknown style 'x' (london or sf, or a style table)" at the caller `level` up
function M.style(style, level)
  local s, err = styles.load(style)
  if not s then error(err, (level or 1) + 1) end
  return s
end

-- Texture names of a group or style entry, for the compatibility key.
local function tex_key(t)
  if type(t) == "string" then return t end
  if type(t) ~= "table" then return tostring(t) end
  if t.names then return table_concat(t.names, "/") end
  return table_concat({ tostring(t.surface or t.name or t[1]), tostring(t.sidewalk), tostring(t.lod),
                        tostring(t.side), tostring(t.strip), tostring(t.top), tostring(t.cap) }, "/")
end

--- The keys a profile table may have (`FIELDS` and its `name`): a profile of `new{profiles}`
-- or a road's `profile = {...}`; any other key is a typo the road would silently ignore.
M.PROFILE_KEYS = { name = true }
for _, k in ipairs(FIELDS) do M.PROFILE_KEYS[k] = true end

--- What is wrong with the keys of a profile table, or nil: "unknown option 'x' (kind, lanes, ...)".
-- @tparam table t
-- @treturn string|nil
function M.keys_problem(t)
  for k in pairs(t) do
    if not M.PROFILE_KEYS[k] then
      return string_format("unknown option %s (a profile has %s, name)", type(k) == "string" and ("'" .. k .. "'")
        or shown(k), table_concat(FIELDS, ", "))
    end
  end
  if t.name ~= nil and type(t.name) ~= "string" then return "name: a string expected, got " .. shown(t.name) end
end

local function num(v, what, where)
  if v ~= nil and (type(v) ~= "number" or v ~= v or v < 0 or v == math.huge) then
    error(string_format("%s%s: a number >= 0 (metres) expected, got %s", where, what, shown(v)), 0)
  end
  return v
end

--- Resolve a road's profile and options into what the builder takes.
-- @tparam table style the city's style table
-- @tparam table profiles the city's profile table (name → definition)
-- @tparam table o the road's options: `profile` (name or table), and overrides `lanes`,
-- `lane_width`, `width`, `sidewalk` ("both" | "left" | "right" | "none", or metres on both
-- sides), `sidewalk_width`, `sidewalk_left`, `sidewalk_right`, `median`, `divider`,
-- `divider_textures`, `textures` (a key of `style.roads`, a style entry, a builder group or a
-- texture name), `style` (another style for this road's textures), `oneway`, `crosswalk`
-- @tparam string where prefix for messages ("script.lua:12: road 3: ")
-- @treturn table `{name, kind, builder = profile, textures, divider, lanes_left, lanes_right,
-- flags, props, crosswalk, key, half_width, sidewalks}`
function M.resolve(style, profiles, o, where)
  where = where or ""
  local pname = o.profile or "street"
  local base
  if type(pname) == "table" then
    local m = M.keys_problem(pname)
    if m then error(where .. "profile: " .. m, 0) end
    base = pname
    pname = pname.name or "custom"
  else
    pname = M.ALIASES[pname] or pname
    base = profiles[pname]
    if type(pname) ~= "string" then
      error(string_format("%sprofile: a profile name or table expected, got %s", where, shown(pname)), 0)
    end
    if not base then
      local names = {}
      for k in pairs(profiles) do names[#names + 1] = k end
      table.sort(names)
      error(string_format("%sunknown profile '%s' (%s)", where, tostring(pname), table_concat(names, ", ")), 0)
    end
  end
  local p = {}
  for _, k in ipairs(FIELDS) do p[k] = base[k] end
  for _, k in ipairs(FIELDS) do
    if o[k] ~= nil and k ~= "kind" then p[k] = o[k] end
  end
  local kind = p.kind or "road"
  if kind ~= "road" and kind ~= "walkway" and kind ~= "divided" then
    error(string_format("%sprofile '%s': kind \"road\", \"walkway\" or \"divided\" expected, got %s", where, pname,
      tostring(kind)), 0)
  end
  if p.oneway ~= nil and type(p.oneway) ~= "boolean" then
    error(string_format("%soneway: true or false expected, got %s", where, shown(p.oneway)), 0)
  end
  if o.road_style or o.style then style = M.style(o.road_style or o.style, 3) end
  -- sidewalks
  local sides, sw = p.sides or "both", p.sidewalk
  if type(p.sidewalk) == "string" then sides, sw = p.sidewalk, base.sidewalk end
  if type(sw) ~= "number" then sw = (kind == "walkway") and 0 or 4 end
  if o.sidewalk_width then sw = o.sidewalk_width end
  num(sw, "sidewalk width", where)
  if sides ~= "both" and sides ~= "left" and sides ~= "right" and sides ~= "none" then
    error(string_format("%ssidewalk: \"both\", \"left\", \"right\" or \"none\" expected, got %s", where, shown(sides)), 0)
  end
  local sl = (sides == "both" or sides == "left") and sw or 0
  local sr = (sides == "both" or sides == "right") and sw or 0
  if o.sidewalk_left then sl = num(o.sidewalk_left, "sidewalk_left", where) end
  if o.sidewalk_right then sr = num(o.sidewalk_right, "sidewalk_right", where) end
  if kind == "walkway" then sl, sr = 0, 0 end
  -- carriageway
  local lanes = p.lanes
  local lw = num(p.lane_width or 5, "lane_width", where)
  local width = num(p.width, "width", where)
  if kind == "walkway" then
    width = width or (lanes and lanes * lw) or 5
    lanes = lanes or 1
  else
    lanes = lanes or 2
    if type(lanes) ~= "number" or lanes < 1 or lanes % 1 ~= 0 then
      error(string_format("%slanes: a whole number >= 1 expected, got %s", where, shown(lanes)), 0)
    end
    -- a road record holds at most LIMITS.lane_values lane values per side (§1.7)
    local side = p.oneway and lanes or lanes - floor(lanes / 2)
    if side > LIMITS.lane_values then
      error(string_format("%slanes: %d lanes put %d on one side, at most %d per side fit the road record "
        .. "(psdl-format.md §1.7): at most %d lanes%s", where, lanes, side, LIMITS.lane_values,
        p.oneway and LIMITS.lane_values or 2 * LIMITS.lane_values, p.oneway and " on a one-way road" or ""), 0)
    end
    width = width or lanes * lw
  end
  if width <= 0.5 then error(string_format("%swidth %g m: too narrow for a road", where, width), 0) end
  local median = kind == "divided" and num(p.median or 2, "median", where) or nil
  if kind == "divided" and median <= 0 then error(string_format("%sa divided road needs a median wider than 0", where), 0) end
  -- (psdl.city.profiles.MAX_WIDTH: a figure no road has is a typo, not a road to build)
  local function wide(v, what)
    if v and v > M.MAX_WIDTH then
      error(string_format("%s%s %g m: wider than any road (at most %g m, psdl.city.profiles.MAX_WIDTH)", where, what,
        v, M.MAX_WIDTH), 0)
    end
  end
  wide(width, (p.width == nil and kind ~= "walkway") and string_format("width (%d lanes of %g m)", lanes, lw) or "width")
  wide(median, "median")
  wide(sl, "sidewalk_left")
  wide(sr, "sidewalk_right")
  local bp = { kind = kind, left = width / 2, right = width / 2, sidewalk_left = sl, sidewalk_right = sr,
               median = median }
  -- textures
  local textures, tkey = o.textures or p.textures, nil
  local oneway = p.oneway and true or false
  textures = styles.road(style, textures, kind, lanes, oneway) -- (a plain texture name stays)
  local tm = options.group_problem(textures, kind == "walkway" and "single" or "road", "textures")
  if tm then error(where .. tm, 0) end
  tkey = tex_key(textures)
  -- divider
  local divider
  if kind == "divided" then
    local dt = p.divider or "elevated"
    local dtex = p.divider_textures
    dtex = styles.divider(style, dtex)
    local dm = options.divider_problem(dt, p.divider_height, p.divider_repeats)
      or options.group_problem(dtex, "divider", "divider_textures")
    if dm then error(where .. dm, 0) end
    divider = { divider = dt, divider_textures = dtex, height = p.divider_height, repeats = p.divider_repeats }
    tkey = tkey .. "|" .. tostring(dt) .. "|" .. tex_key(dtex)
  end
  -- lanes and record flags (§1.7): lane values are the retail default 0.5 each
  local nl, nr
  if kind == "walkway" then nl, nr = 1, 1
  elseif oneway then nl, nr = 0, lanes
  else nl = floor(lanes / 2); nr = lanes - nl; if nl == 0 then nl = 1 end end
  local ll, lr = {}, {}
  for i = 1, nl do ll[i] = 0.5 end
  for i = 1, nr do lr[i] = 0.5 end
  local flags = 0
  if kind == "walkway" then flags = flags | M.RECORD.alley end
  if kind == "divided" then flags = flags | M.RECORD.divided end
  if kind ~= "walkway" and (sl > 0 or sr > 0) then flags = flags | M.RECORD.sidewalks end
  if p.freeway then flags = flags | M.RECORD.freeway end
  local crosswalk = p.crosswalk
  if crosswalk == nil then crosswalk = kind == "walkway" and 0 or 3 end
  if crosswalk == false then crosswalk = 0 end
  -- (refused here, at the road's script line, not by the intersection builder later)
  if type(crosswalk) ~= "number" or not (crosswalk >= 0 and crosswalk <= M.MAX_WIDTH) then
    error(string_format("%scrosswalk: false or a number in 0..%g (metres, the crosswalk's depth where the road meets "
      .. "an intersection; psdl.city.profiles.MAX_WIDTH) expected, got %s", where, M.MAX_WIDTH, shown(crosswalk)), 0)
  end
  local tail = tkey .. "|" .. tostring(oneway)
  return {
    name = pname, kind = kind, builder = bp, textures = textures, divider = divider,
    lanes = lanes, lanes_left = ll, lanes_right = lr, flags = flags, props = p.props, crosswalk = crosswalk,
    tail = tail, sidewalks = sl > 0 or sr > 0, oneway = oneway, style = style,
    half_width = (median or 0) / 2 + width / 2 + max(sl, sr),
  }
end

-- The road options `resolve` reads besides `profile` (FIELDS, which a road may override,
-- and the per-road extras).
local RESOLVE_KEYS = { "style", "road_style", "sidewalk_width" }
for _, k in ipairs(FIELDS) do RESOLVE_KEYS[#RESOLVE_KEYS + 1] = k end

--- A string equal for two roads' options exactly when `resolve` gives them equal results
-- (same style and profile table), or nil when the options hold a table (a profile, texture
-- or style table, which the script may change between roads): the key under which
-- psdl.city shares one resolved profile among the roads that ask for the same (`City:road`;
-- a city of 7,000 roads of a few profiles keeps a few of them, not 7,000).
-- @tparam table o the road's options (checked: only the keys `City:road` takes)
-- @treturn string|nil
function M.resolve_key(o)
  local pname = o.profile or "street"
  if type(pname) ~= "string" then return nil end
  local parts = { pname }
  for i, k in ipairs(RESOLVE_KEYS) do
    local v = o[k]
    local t = type(v)
    if t == "table" then return nil end
    -- (a float as its exact hexadecimal form: 0.1 and 0.1 + 1e-17 differ)
    if t == "number" and math.type(v) == "float" then v = string_format("%a", v) end
    parts[i + 1] = t == "nil" and "" or (t:sub(1, 1) .. tostring(v))
  end
  return table_concat(parts, "\0")
end

--- A key that is equal for two roads exactly when they have the same cross-section and
-- textures seen in the same direction of travel; `forward = false` sees the road from its
-- `to` end (left and right swapped, a one-way road reversed).
-- @tparam table spec a resolved profile
-- @tparam boolean forward
-- @treturn string
function M.oriented_key(spec, forward)
  local bp = spec.builder
  local l, r, sl, sr = bp.left, bp.right, bp.sidewalk_left, bp.sidewalk_right
  if not forward then l, r, sl, sr = r, l, sr, sl end
  return string_format("%s|%.4f|%.4f|%.4f|%.4f|%s|%s|%s", spec.kind, l, r, sl, sr, tostring(bp.median), spec.tail,
    spec.oneway and (forward and ">" or "<") or "=")
end

--- A prop rule for a road: a number (0..255, the room's prop-rule byte, §1.6) as it is; a theme name or a list of theme
-- names of the style's `proprules.themes` (the first present), one rule drawn from it with
-- the generator; false or nil: 0.
-- @param v number, string, list or false
-- @tparam table style
-- @param rng a `psdl.city.random` generator
-- @treturn integer
local NO_THEMES = {} -- (a style without themes; never written to)
function M.prop_rule(v, style, rng)
  if v == nil or v == false then return 0 end
  if type(v) == "number" then
    if v < 0 or v > LIMITS.prop_rule or v % 1 ~= 0 then
      error(string_format("prop rule %s: a whole number 0..%d expected (the room's prop-rule byte, §1.6)", shown(v),
        LIMITS.prop_rule), 0)
    end
    return v
  end
  local themes = style.proprules and style.proprules.themes or NO_THEMES
  if type(v) ~= "table" then -- one theme name (no list made for it)
    local t = themes[v]
    if t and #t > 0 then return rng:pick(t) end
    return 0
  end
  for _, name in ipairs(v) do
    if type(name) == "number" then return name end
    local t = themes[name]
    if t and #t > 0 then return rng:pick(t) end
  end
  return 0
end

return M
