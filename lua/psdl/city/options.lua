--- The option values of `psdl.city`'s calls (`new`, `City:node`, `City:road` and the profile
-- tables) that only the build would otherwise read: checked at the call, so a typo raises
-- at the script line naming the field and what it takes, rather than failing inside the
-- build, where `psdl.city.repair` would take it for a geometric limit and narrow or drop
-- the road (docs/city.md, "Limits refused at the call"). Each function returns nil when the
-- value is fine, else the problem without the "bad argument" frame (the caller adds it).
-- @module psdl.city.options

local check = require "psdl.check"
local builder_groups = require("psdl.builder").GROUPS
local builder_dividers = require("psdl.builder").DIVIDERS
local PROP_MAX = require("psdl.core").limits.prop_rule

local type, pairs, ipairs, tostring, next = type, pairs, ipairs, tostring, next
local string_format, table_concat, table_sort = string.format, table.concat, table.sort
local shown, num_problem = check.shown, check.num_problem

local M = {}

--- The longest texture name a PSDL holds (psdl-format.md §1.3), characters.
M.MAX_TEXTURE_NAME = 31

--- The largest curb radius of an intersection corner, metres (100, as wide as the widest
-- road, `psdl.city.profiles.MAX_WIDTH`): the corner arcs of a larger one reach past any
-- road the city builds.
M.MAX_RADIUS = 100

--- The values of `dead_end` (`new` and `City:node`).
M.DEAD_ENDS = { cul_de_sac = true, open = true }

-- A texture name of 1..31 characters.
local function name_problem(n, what)
  if type(n) ~= "string" then
    return string_format("%s: a texture name expected, got %s", what, shown(n))
  end
  if #n == 0 or #n > M.MAX_TEXTURE_NAME then
    return string_format("%s: texture name %q has %d characters; texture names have 1..%d (psdl-format.md §1.3)",
      what, n, #n, M.MAX_TEXTURE_NAME)
  end
end

--- What is wrong with the textures of a group as `psdl.builder` would take them (a texture
-- name, a style entry with a name for each slot of `kind`, or a builder's group handle).
-- @param t the textures (after the style's keys are looked up: `psdl.styles`)
-- @tparam string kind "road", "intersection", "divider", "tunnel" or "single" (`psdl.builder.GROUPS`)
-- @tparam string what the field, for the message ("textures")
-- @treturn string|nil
function M.group_problem(t, kind, what)
  if type(t) == "string" then return name_problem(t, what) end
  if type(t) ~= "table" then
    return string_format("%s: a key of the style, a style entry or a texture name expected, got %s", what, shown(t))
  end
  if t.key and t.kind then return nil end -- (a builder's group handle: checked by that builder)
  if kind == "single" then -- (the builder reads the first of these a style entry has)
    return name_problem(t.surface or t.name or t.wall_l or t.side or t[1], what)
  end
  for i, slot in ipairs(builder_groups[kind]) do
    local m = name_problem(t[slot] or t[i], what .. "." .. slot)
    if m then return m end
  end
end

local DIVIDER_NAMES = {}
for k in pairs(builder_dividers) do DIVIDER_NAMES[#DIVIDER_NAMES + 1] = k end
table_sort(DIVIDER_NAMES)

--- What is wrong with a divided road's `divider` (a name of `psdl.builder.DIVIDERS` or a type
-- number 0..63, psdl-format.md §2.4 0x8), `divider_height` and `divider_repeats` (the 8.8
-- value the divider stores: 0 .. 255.99).
-- @treturn string|nil
function M.divider_problem(dt, height, repeats)
  if type(dt) == "string" then
    if not builder_dividers[dt] then
      return string_format("divider: unknown divider '%s' (%s, or a type number 0..63)", dt,
        table_concat(DIVIDER_NAMES, ", "))
    end
  else
    local m = num_problem(dt, "divider", "int", 0, 63)
    if m then return m .. " (or one of " .. table_concat(DIVIDER_NAMES, ", ") .. ")" end
  end
  for k, v in pairs({ divider_height = height, divider_repeats = repeats }) do
    local m = v ~= nil and num_problem(v, k, "nonneg", 0, 255.99)
    if m then return m .. " (the divider's 8.8 fixed-point value, psdl-format.md §2.4)" end
  end
end

-- A `dead_end` value.
local function dead_end_problem(v)
  if v ~= nil and not M.DEAD_ENDS[v] then
    return "dead_end: \"cul_de_sac\" or \"open\" expected, got " .. shown(v)
  end
end

-- A true/false flag.
local function flag_problem(opts, k)
  local v = opts[k]
  if v ~= nil and type(v) ~= "boolean" then return k .. ": true or false expected, got " .. shown(v) end
end

-- A `name`: a string.
local function string_problem(opts, k)
  local v = opts[k]
  if v ~= nil and type(v) ~= "string" then return k .. ": a string expected, got " .. shown(v) end
end

-- A corner radius, metres.
local function radius_problem(v)
  local m = v ~= nil and num_problem(v, "radius (m)", "nonneg", 0, M.MAX_RADIUS)
  if m then return m .. "; the curb radius of an intersection's corners (default 5, psdl.city.options.MAX_RADIUS)" end
end

-- The theme names of the shipped styles and of `style`.
local function theme_names(style)
  local names, seen = {}, {}
  local function add(s)
    local th = type(s) == "table" and s.proprules and s.proprules.themes
    if type(th) ~= "table" then return end
    for k in pairs(th) do
      if not seen[k] then seen[k] = true; names[#names + 1] = k end
    end
  end
  add(style)
  for _, n in ipairs(require("psdl.styles").NAMES) do add(require("psdl.styles." .. n)) end
  table_sort(names)
  return names, seen
end

--- What is wrong with a prop rule value (a road's `prop_rule`, a value of `new{props}`): a
-- number 0..255 (`psdl.core.limits.prop_rule`), a theme name of the style's
-- `proprules.themes` (or of a shipped style's: a road may take another style), a non-empty
-- list of those, or false.
-- @param v the value
-- @tparam table style the city's style
-- @tparam string what the field
-- @treturn string|nil
function M.prop_problem(v, style, what)
  if v == nil or v == false then return nil end
  if type(v) == "number" then
    if v >= 0 and v <= PROP_MAX and v % 1 == 0 then return nil end
    return string_format("%s: prop rule %s: a whole number 0..%d expected (the room's prop-rule byte, §1.6)", what,
      shown(v), PROP_MAX)
  end
  local list = type(v) == "table" and v or { v }
  if type(v) ~= "string" and (type(v) ~= "table" or #list == 0) then
    return string_format("%s: a rule number 0..255, a theme name, a list of theme names or false expected, got %s",
      what, shown(v))
  end
  local names, known = theme_names(style)
  for i, n in ipairs(list) do
    if type(n) == "number" then
      local m = M.prop_problem(n, style, what .. "[" .. i .. "]")
      if m then return m end
    elseif not known[n] then
      return string_format("%s%s: unknown prop theme %s (%s)", what, type(v) == "table" and ("[" .. i .. "]") or "",
        shown(n), table_concat(names, ", "))
    end
  end
end

--- What is wrong with a style table (`new{style}`, a road's `style`): it needs the road,
-- intersection and divider groups and the alley's surface the roads are built with.
-- @tparam table style
-- @treturn string|nil
function M.style_problem(style)
  local m = M.group_problem(style.road, "road", "style.road") or M.group_problem(style.intersection, "intersection",
    "style.intersection") or M.group_problem(style.divider, "divider", "style.divider")
    or (type(style.alley) ~= "table" and "style.alley: a table with the alley's surface expected, got "
      .. shown(style.alley)) or M.group_problem(style.alley.surface, "single", "style.alley.surface")
  if m then return m .. " (a style table as lua/psdl/styles/london.lua, or one extending it with __index)" end
end

--- What is wrong with the options of `psdl.city.new` that the other checks of `new` leave:
-- `name`, `dead_end`, `radius`, `props`, `package`, the flags `strict`, `auto_junctions`,
-- `run_rooms`, and `blocks` (only `false` or `true`: the options go to `City:blocks`).
-- @tparam table opts
-- @tparam table style the city's style, loaded
-- @treturn string|nil
function M.new_problem(opts, style)
  local m = string_problem(opts, "name") or dead_end_problem(opts.dead_end) or radius_problem(opts.radius)
    or flag_problem(opts, "strict") or flag_problem(opts, "auto_junctions") or flag_problem(opts, "run_rooms")
  if m then return m end
  if opts.blocks ~= nil and type(opts.blocks) ~= "boolean" then
    return "blocks: false (no blocks) or true expected, got " .. shown(opts.blocks)
      .. "; city:blocks{...} takes the options of the blocks"
  end
  if opts.package ~= nil and type(opts.package) ~= "table" then
    return "package: a table of psdl package settings expected, got " .. shown(opts.package)
  end
  local props = opts.props
  if props ~= nil and props ~= false and type(props) ~= "function" then
    if type(props) ~= "table" then
      return "props: false, a table (profile name -> rule number, theme name or list of theme names) or a "
        .. "function(road) expected, got " .. shown(props)
    end
    for k, v in next, props do
      if type(k) ~= "string" then return "props: profile names as keys expected, got " .. shown(k) end
      local pm = M.prop_problem(v, style, "props." .. k)
      if pm then return pm end
    end
  end
end

--- What is wrong with the options of `City:node` beyond its coordinates and `y`: `name` (a
-- string), `id` (a string or an integer), `junction` and `bridge` (true or false), `dead_end`,
-- `radius`, `min_distance` (m, >= 0), `textures` (an intersection group), `tunnel` (true,
-- false or a table).
-- @tparam table opts
-- @tparam table style the city's style
-- @treturn string|nil
function M.node_problem(opts, style)
  local id = opts.id
  if id ~= nil and type(id) ~= "string"
     and not (type(id) == "number" and id % 1 == 0 and id > -2 ^ 53 and id < 2 ^ 53) then
    return "id: a string or an integer expected, got " .. shown(id)
  end
  local m = string_problem(opts, "name") or flag_problem(opts, "junction") or flag_problem(opts, "bridge")
    or dead_end_problem(opts.dead_end) or radius_problem(opts.radius)
    or (opts.min_distance ~= nil and num_problem(opts.min_distance, "min_distance (m)", "nonneg", 0, 65536))
  if m then return m end
  local t = opts.tunnel
  if t ~= nil and type(t) ~= "boolean" and type(t) ~= "table" then
    return "tunnel: true, false or a table {height, height2, textures, walls} expected, got " .. shown(t)
  end
  if opts.textures ~= nil then
    local tex = require("psdl.styles").intersection(style, opts.textures)
    return M.group_problem(tex, "intersection", "textures")
  end
end

--- What is wrong with the options of `City:road` that its profile leaves: `name` (a string)
-- and `prop_rule` (`prop_problem`); `style`, when a table (`style_problem`).
-- @tparam table opts
-- @tparam table style the city's style
-- @treturn string|nil
function M.road_problem(opts, style)
  local m = string_problem(opts, "name")
  if m then return m end
  if opts.prop_rule ~= nil then
    m = M.prop_problem(opts.prop_rule, style, "prop_rule")
    if m then return m end
  end
  if type(opts.style) == "table" then return M.style_problem(opts.style) end
end

return M
