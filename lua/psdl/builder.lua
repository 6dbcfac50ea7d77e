--- Build PSDL documents from shapes: textures by name, rooms filled through one call per
-- attribute type (0x0–0xC), streets, intersections, blocks and buildings, and `finish()`,
-- which computes perimeters, repairs T-junctions, links neighbours, sets room flags and
-- bounds, validates and returns a document for `psdl.write`.
--
-- Nothing here counts vertices, picks subtypes or winds a fan by hand: points go into a
-- deduplicating vertex pool (exact float32 equality; vertex 1, file vertex 0, is a reserved
-- dummy, psdl-format.md §3.2), heights into a height pool, texture names into groups that
-- `finish` lays out in the texture table (§2.3), and the encoder picks forms and sets LAST
-- on each room's final attribute.
--
-- Errors: misuse (a wrong argument, a limit of the format: the vertex budget of 65,024,
-- 255 perimeter points, texture values above 2047, divider textures above 255, ...) raises
-- with a message naming the room, e.g. `room 12 ("Main St"): 256 perimeter points; the game
-- keeps the count in one byte, 255 at most (§3.2)`. Arguments are checked before anything
-- is built (coordinates finite and within float32, widths not negative, polygons simple,
-- ...; README "Building cities from shapes"): a bad one raises `bad argument #1 to 'street'
-- (path[2]: x is not a finite number)` at the script's line.
--
-- Sides: a profile's `left` / `right` (and `sidewalk_left` / `sidewalk_right`) are the
-- format's L and R columns (§2.4): L is the first column of a cross-section, on the side
-- (tz, −tx) of the direction of travel (tx, tz), travelling +Z at +X (§4.2). With x east and
-- z north (docs/network.md) that is the driver's right-hand side on a north-up map.
--
-- @module psdl.builder
-- @usage
-- local psdl = require "psdl"
-- local b = psdl.builder.new{ style = "london" }
-- local rooms = b:street{ path = { {0, 0, 0}, {0, 0, 60} },
--                         profile = { kind = "road", left = 5, right = 5,
--                                     sidewalk_left = 3, sidewalk_right = 3 } }
-- local doc = b:finish()
-- assert(psdl.write(doc, "street.psdl"))

local core = require "psdl.core"
local geom = require "psdl.geom"

local type, error, ipairs, pairs, tostring = type, error, ipairs, pairs, tostring
local setmetatable, getmetatable, require, pcall = setmetatable, getmetatable, require, pcall
local table_insert = table.insert
local floor, max, min, abs, sqrt, huge = math.floor, math.max, math.min, math.abs, math.sqrt, math.huge
local string_format, table_concat, table_sort = string.format, table.concat, table.sort
local os_clock = os.clock

local M = {}

--- Largest vertex pool the game takes safely (§3.2).
M.VERTEX_BUDGET = 65024
--- Perimeter points per room (§3.2).
M.MAX_PERIMETER = 255
--- Largest texture value (§2.3).
M.MAX_TEXTURE = 2047
--- Largest divider texture value (one byte, §2.4 0x8).
M.MAX_DIVIDER_TEXTURE = 255
--- How far (m) a building outline may stray outside its room's outline before
-- `Builder:building` raises (footprints computed against curved streets stray a few cm).
M.BUILDING_SLACK = 0.25

--- Room flag bits (§1.6).
M.FLAGS = { subterranean = 0x02, standard = 0x04, road = 0x08, intersection = 0x10,
            special_bound = 0x20, warp = 0x40, instance = 0x80 }

--- Texture group kinds and their slot names, in slot order (§2.3).
M.GROUPS = {
  road = { "surface", "sidewalk", "lod" },
  intersection = { "surface", "sidewalk", "crosswalk", "lod" },
  divider = { "side", "strip", "top", "cap" },
  tunnel = { "wall_l", "wall_r", "ceiling", "rail_r", "rail_l", "underside" },
  single = { "name" },
}

--- Divider types (§2.4 0x8): names to the type number.
M.DIVIDERS = { none = 0, invisible = 0, flat = 1, elevated = 2, wedge = 3 }

--- Tunnel / railing flag bits (§2.4 0x9).
M.TUNNEL = { left = 0x0001, right = 0x0002, wall = 0x0004, flat_ceiling = 0x0008,
             closed_start_left = 0x0010, closed_end_left = 0x0020, closed_start_right = 0x0040,
             closed_end_right = 0x0080, curved_ceiling = 0x0100, offset_start_left = 0x0200,
             offset_end_left = 0x0400, offset_start_right = 0x0800, offset_end_right = 0x1000,
             curved_sides = 0x2000, outer = 0x4000 }

local STRIDE = { road = 4, divided_road = 6, walkway = 2, sidewalk_strip = 2 }
local STRIP = { road = true, divided_road = true, walkway = true }
local SURFACE = { road = true, divided_road = true, walkway = true, sidewalk_strip = true,
                  crosswalk = true, road_fan = true, fan = true }

local Builder = {}
Builder.__index = Builder
local Room = {}
Room.__index = Room

-- ============================================================== helpers

local THIS_FILE = debug.getinfo(1, "S").source
local debug_getinfo = debug.getinfo

-- Raises msg at the first caller outside this file, so that an argument error points at the
-- script's line however deep in the builder the check sits.
local function raise(msg)
  local level = 2 -- as error counts: 1 is this function, 2 its caller, ...
  while true do
    local info = debug_getinfo(level, "S")
    if not info then level = level - 1; break end
    if info.source ~= THIS_FILE then break end
    level = level + 1
  end
  error(msg, level)
end

local function argerr(n, fname, msg)
  raise(string_format("bad argument #%d to '%s' (%s)", n, fname, msg))
end

-- ---------------------------------------------------------------- argument checks
-- Each returns nil when the value is fine, else what is wrong with it (for argerr).

local FLT_MAX = 3.4028234663852886e38 -- coordinates are stored as float32 (§1.2)

-- A value as messages show it.
local function shown(v)
  if type(v) == "number" then
    if v ~= v then return "nan" end
    return string_format("%.14g", v)
  end
  if type(v) == "string" then return string_format("%q", v) end
  return type(v)
end

local RULE_TEXT = { number = "finite number", positive = "positive number", nonneg = "non-negative number",
                    int = "integer" }

-- A number: rule "number" (any finite), "positive" (> 0), "nonneg" (>= 0) or "int" (a
-- whole number); lo / hi: optional bounds.
local function num_problem(v, name, rule, lo, hi)
  rule = rule or "number"
  if type(v) == "number" and v > -huge and v < huge -- the usual case, passing: no message to build
     and (rule == "number" or (rule == "positive" and v > 0) or (rule == "nonneg" and v >= 0)
          or (rule == "int" and v % 1 == 0))
     and (not lo or v >= lo) and (not hi or v <= hi) then
    return nil
  end
  if type(v) ~= "number" then
    return string_format("%s: %s expected, got %s", name, RULE_TEXT[rule], type(v))
  end
  if v ~= v or v == huge or v == -huge then
    return string_format("%s: finite number expected, got %s", name, shown(v))
  end
  if (rule == "positive" and not (v > 0)) or (rule == "nonneg" and v < 0) or (rule == "int" and v % 1 ~= 0) then
    return string_format("%s: %s expected, got %s", name, RULE_TEXT[rule], shown(v))
  end
  if (lo and v < lo) or (hi and v > hi) then
    return string_format("%s: %s in %s..%s expected, got %s", name, RULE_TEXT[rule], lo and shown(lo) or "",
      hi and shown(hi) or "", shown(v))
  end
end

-- An optional number (nil is fine).
local function opt_problem(v, name, rule, lo, hi)
  if v == nil then return nil end
  return num_problem(v, name, rule, lo, hi)
end

local AXES = { "x", "y", "z" }

-- A point {x, y, z} of finite numbers within float32 (y may be nil: 0).
local function point_problem(p, name)
  if type(p) ~= "table" then
    return string_format("%s: 3-D point {x, y, z} expected, got %s", name, type(p))
  end
  local x, y, z = p[1], p[2], p[3]
  if type(x) ~= "number" or type(z) ~= "number" or (y ~= nil and type(y) ~= "number") then
    local got = "a malformed table"
    if #p == 0 then got = "an empty table"
    elseif #p == 2 and type(x) == "number" and type(y) == "number" then
      got = string_format("a 2-D point {%s, %s}", shown(x), shown(y))
    end
    return string_format("%s: 3-D point {x, y, z} expected, got %s", name, got)
  end
  for k = 1, 3 do
    local v = p[k]
    if v ~= nil and not (v > -FLT_MAX and v < FLT_MAX) then
      if v ~= v or v == huge or v == -huge then return string_format("%s: %s is not a finite number", name, AXES[k]) end
      return string_format("%s: %s = %s is beyond the float32 range of the file", name, AXES[k], shown(v))
    end
  end
end

local flatten_points = core.flatten_points

-- A list of at least `min` points. When it passes: nil and the points as a flat x, y, z
-- array (one pass in C, for the caller to reuse).
local function points_problem(list, name, min)
  if type(list) ~= "table" then return string_format("%s: list of points expected, got %s", name, type(list)) end
  local flat, bad = flatten_points(list)
  if not flat then
    return point_problem(list[bad], name .. "[" .. bad .. "]") or string_format("%s[%d]: bad point", name, bad)
  end
  if min and #list < min then
    return string_format("%s: %d or more points expected, got %d", name, min, #list)
  end
  return nil, flat
end

-- A plan direction {x, z}, finite and not zero.
local function dir_problem(d, name)
  if type(d) ~= "table" or type(d[1]) ~= "number" or type(d[2]) ~= "number" then
    return string_format("%s: plan direction {x, z} expected, got %s", name, type(d) == "table" and "a malformed table" or type(d))
  end
  local m = num_problem(d[1], name .. "[1]") or num_problem(d[2], name .. "[2]")
  if m then return m end
  if d[1] * d[1] + d[2] * d[2] < 1e-24 then return name .. ": zero direction" end
end

-- A simple polygon (with holes): no two edges cross. flat: x, y, z of the outer ring then the
-- holes (starts: 1-based hole starts, or nil); names the edges as the caller's lists do.
local function crossing_problem(flat, starts, name, hole_name)
  local e1, e2 = core.self_crossing(flat, starts)
  if not e1 then return nil end
  local function where(e)
    if not starts or e < starts[1] then return nil, e end
    local h = #starts
    while starts[h] > e do h = h - 1 end
    return h, e - starts[h] + 1
  end
  local h1, k1 = where(e1)
  local h2, k2 = where(e2)
  if h1 == h2 then
    return string_format("%s: self-intersecting polygon (edges %d and %d cross)",
      h1 and string_format("%s[%d]", hole_name, h1) or name, k1, k2)
  end
  return string_format("%s edge %d crosses %s edge %d", h1 and string_format("%s[%d]", hole_name, h1) or name, k1,
    h2 and string_format("%s[%d]", hole_name, h2) or name, k2)
end

-- Checks a polygon with holes given as points (outline at least 3 points, finite, with
-- area; holes each 3 points or more, inside the outline; no edges crossing). Returns the
-- problem or nil; for a polygon without holes that passes, also nil, its flat x, y, z and
-- its signed area (for the caller to reuse).
local polygon_points = core.polygon_points
local function polygon_problem(outline, holes, name, hole_name)
  if type(outline) == "table" and (holes == nil or (type(holes) == "table" and #holes == 0)) then
    -- the usual case in one C pass (points checked and flattened, area, crossing); anything
    -- wrong goes the long way below, which names it
    local outer, area, e1 = polygon_points(outline)
    if outer and not e1 and #outline >= 3 and abs(area) > 1e-9 then return nil, outer, area end
  end
  local m, outer = points_problem(outline, name, 3)
  if m then return m end
  m = crossing_problem(outer, nil, name, hole_name)
  if m then return m end
  local area = core.signed_area(outer)
  if abs(area) <= 1e-9 then return name .. ": the polygon has no area" end
  if holes == nil or (type(holes) == "table" and #holes == 0) then return nil, outer, area end
  local flat, starts = {}, nil
  for i = 1, #outer do flat[i] = outer[i] end
  if holes ~= nil then
    if type(holes) ~= "table" then return string_format("%s: list of rings expected, got %s", hole_name, type(holes)) end
    for h, ring in ipairs(holes) do
      local hn = string_format("%s[%d]", hole_name, h)
      local hf
      m, hf = points_problem(ring, hn, 3)
      if m then return m end
      if abs(core.signed_area(hf)) <= 1e-9 then return hn .. ": the polygon has no area" end
      starts = starts or {}
      starts[#starts + 1] = #flat // 3 + 1
      for i = 1, #hf do flat[#flat + 1] = hf[i] end
    end
  end
  m = crossing_problem(flat, starts, name, hole_name)
  if m then return m end
  for h, ring in ipairs(starts and holes or {}) do -- no edges cross: a hole is inside or out
    local k = core.first_outside(outer, geom.flatten(ring), true, 0)
    if k then return string_format("%s[%d]: point %d lies outside %s", hole_name, h, k, name) end
  end
end

-- A private option key: `Builder:block` has checked the outline and holes it passes to
-- `Builder:room` and `Room:fan` (no script can set it).
local CHECKED = {}

--- Reverse a list (a copy).
function M.reverse(list)
  local r = {}
  for i = #list, 1, -1 do r[#r + 1] = list[i] end
  return r
end

--- A profile seen from the other end of its road: left and right swapped.
function M.mirror_profile(p)
  local q = {}
  for k, v in pairs(p) do q[k] = v end
  q.left, q.right = p.right, p.left
  q.sidewalk_left, q.sidewalk_right = p.sidewalk_right, p.sidewalk_left
  return q
end

-- ============================================================== construction

--- Start an empty document.
-- @tparam[opt] table opts `style`: "london", "sf" or a style table (psdl.styles); the
-- defaults for textures not given. `eps`: T-junction tolerance in metres (0.005).
-- `snap`: round coordinates to this grid (metres) before pooling (default: exact).
-- `name`: the city name, checked by validation (§3.4). `vertex_budget`: the vertex count
-- that raises (65,024 by default, §3.2; `false` for none: only for timing documents too big
-- for the game, which then fail validation).
-- @treturn Builder
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "new", "table expected, got " .. type(opts)) end
  local style = opts.style or "london"
  if type(style) == "string" then
    local ok, s = pcall(require, "psdl.styles." .. style)
    if not ok then argerr(1, "new", "unknown style '" .. style .. "' (london or sf)") end
    style = s
  elseif type(style) ~= "table" then
    argerr(1, "new", "style: name or table expected, got " .. type(style))
  end
  local m = opt_problem(opts.eps, "eps", "nonneg") or opt_problem(opts.snap, "snap", "positive")
  if not m and opts.vertex_budget ~= nil and opts.vertex_budget ~= false then
    m = num_problem(opts.vertex_budget, "vertex_budget", "int", 1)
  end
  if m then argerr(1, "new", m) end
  local b = setmetatable({
    style = style,
    eps = opts.eps or 0.005,
    snap = opts.snap,
    name = opts.name,
    vpool = core.pool(3, true),
    hpool = core.pool(1, false),
    groups = {}, group_by_key = {},
    rooms = {},
    records = {},
    clamped = 0,
    budget = opts.vertex_budget == nil and M.VERTEX_BUDGET or opts.vertex_budget,
  }, Builder)
  return b
end

-- ============================================================== pools

--- Vertex reference (1-based, as in the document) of a point, added if new.
-- @tparam table p `{x, y, z}`
-- @treturn integer
function Builder:vertex(p)
  local m = point_problem(p, "p")
  if m then argerr(1, "vertex", m) end
  local x, y, z = p[1], p[2] or 0, p[3]
  local s = self.snap
  if s then x, y, z = floor(x / s + 0.5) * s, floor(y / s + 0.5) * s, floor(z / s + 0.5) * s end
  return self.vpool:add(x, y, z)
end

-- Vertex references of a flat `{x1, y1, z1, ...}` array of numbers already checked.
local function pool_flat(b, flat)
  local s = b.snap
  if s then
    for i = 1, #flat do flat[i] = floor(flat[i] / s + 0.5) * s end
  end
  return b.vpool:add_flat(flat)
end

-- Vertex references of points already checked, added in one call.
local function trusted_refs(room, points)
  return pool_flat(room.builder, (core.flatten_points(points)))
end

--- Vertex references of a flat `{x1, y1, z1, ...}` array (one reference per point).
function Builder:vertices_flat(flat)
  if type(flat) ~= "table" then argerr(1, "vertices_flat", "table expected, got " .. type(flat)) end
  for i = 1, #flat do
    local v = flat[i]
    if type(v) ~= "number" or not (v > -FLT_MAX and v < FLT_MAX) then
      argerr(1, "vertices_flat", string_format("flat[%d]: finite number expected, got %s", i, shown(v)))
    end
  end
  return pool_flat(self, flat)
end

--- Height-pool reference (1-based) of a height in metres, added if new.
function Builder:height(h)
  local m = num_problem(h, "h")
  if m then argerr(1, "height", m) end
  return self.hpool:add(h)
end

--- The point of a vertex reference `{x, y, z}`.
function Builder:point(ref)
  local x, y, z = self.vpool:get(ref)
  return { x, y, z }
end

-- ============================================================== textures

local function group_key(kind, names)
  return kind .. "\0" .. table_concat(names, "\0")
end

--- A texture group: consecutive texture slots that attributes read as n, n+1, ... (§2.3).
-- The same kind and names give the same group. Slots are assigned by `finish` (divider
-- groups first, within the first 255 slots; a group is never split).
-- @tparam string kind "road" (surface, sidewalk, lod), "intersection" (surface, sidewalk,
-- crosswalk, lod), "divider" (side, strip, top, cap), "tunnel" (wall_l, wall_r, ceiling,
-- rail_r, rail_l, underside) or "single" (name)
-- @param names a table with those fields (a style entry), a list of names in slot order,
-- or one name (repeated in every slot)
-- @treturn table the group handle
function Builder:textures(kind, names)
  local slots = M.GROUPS[kind]
  if not slots then argerr(1, "textures", "unknown group kind '" .. tostring(kind) .. "'") end
  local list = {}
  if type(names) == "string" then
    for i = 1, #slots do list[i] = names end
  elseif type(names) == "table" then
    for i, slot in ipairs(slots) do
      local v = names[slot] or names[i]
      if kind == "single" then v = names.name or names[1] end
      if type(v) ~= "string" then
        argerr(2, "textures", string_format("%s group: texture name for slot '%s' expected, got %s", kind, slot, type(v)))
      end
      list[i] = v
    end
  else
    argerr(2, "textures", "names: table or string expected, got " .. type(names))
  end
  for i, n in ipairs(list) do
    if #n == 0 or #n > 31 then
      argerr(2, "textures", string_format("texture name %q (slot %d) has %d characters; texture names have 1..31 (§1.3)",
        n, i, #n))
    end
  end
  local key = group_key(kind, list)
  local g = self.group_by_key[key]
  if not g then
    g = { kind = kind, names = list, key = key, index = #self.groups + 1 }
    self.groups[#self.groups + 1] = g
    self.group_by_key[key] = g
  end
  return g
end

--- A one-slot group for a single texture name (ground, walkway, facade, roof, sliver).
function Builder:texture(name)
  if type(name) ~= "string" then argerr(1, "texture", "name: string expected, got " .. type(name)) end
  if #name == 0 or #name > 31 then
    argerr(1, "texture", string_format("name %q has %d characters; texture names have 1..31 (§1.3)", name, #name))
  end
  return self:textures("single", name)
end

-- A group from a handle, a style entry table or a name; `kind` is the kind the reader needs
-- ("sidewalk": a road or intersection group, whose slot 2 is the sidewalk). A name or a
-- single group is spread over every slot of that kind.
local function as_group(b, g, kind, fname)
  local wrap = kind == "sidewalk" and "road" or kind
  if type(g) == "string" then return b:textures(wrap, g) end
  if type(g) ~= "table" then argerr(2, fname, "texture group or name expected, got " .. type(g), 3) end
  if g.key and g.kind then
    if g.kind == kind or kind == "single" then return g end
    if kind == "sidewalk" and (g.kind == "road" or g.kind == "intersection") then return g end
    if g.kind == "single" then return b:textures(wrap, g.names[1]) end
    argerr(2, fname, string_format("a %s texture group expected, got a %s group", kind, g.kind), 3)
  end
  -- a style entry: guess the kind from its fields
  if kind == "sidewalk" then kind = g.crosswalk and "intersection" or "road" end
  if kind == "single" then
    local name = g.surface or g.name or g.wall_l or g.side or g[1]
    return b:textures("single", name)
  end
  return b:textures(kind, g)
end

-- ============================================================== rooms

--- Add a room.
-- @tparam[opt] table opts `kind`: "road" (flag 0x08), "intersection" (0x10) or "block"
-- (0x04, the default); `tunnel = true` adds subterranean and warp (0x02, 0x40), `bridge =
-- true` warp (0x40); `flags` replaces the computed byte; `prop_rule` (0..255); `name` (for
-- messages); `outline`: the room's perimeter as points (any winding; made retail; a simple
-- polygon), else `finish` takes the outline of its ground geometry; `holes`: rings inside
-- the outline, joined into the perimeter through zero-width keyhole cuts (psdl.core.keyhole),
-- so that the game's point-in-perimeter test leaves them out and a room inside a hole
-- becomes a neighbour
-- @treturn Room
function Builder:room(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "room", "table expected, got " .. type(opts)) end
  local kind = opts.kind or "block"
  if kind ~= "road" and kind ~= "intersection" and kind ~= "block" then
    argerr(1, "room", "kind: \"road\", \"intersection\" or \"block\" expected, got " .. tostring(kind))
  end
  local m = opt_problem(opts.prop_rule, "prop_rule", "int", 0, 255) or opt_problem(opts.flags, "flags", "int", 0, 255)
  if not m and opts.outline ~= nil and not opts.outline_refs and not opts[CHECKED] then
    m = polygon_problem(opts.outline, opts.holes, "outline", "holes")
  elseif not m and opts.outline == nil and opts.holes ~= nil and not opts.outline_refs then
    m = "holes: an outline is needed with holes"
  end
  if m then argerr(1, "room", m) end
  local r = setmetatable({
    builder = self, kind = kind, name = opts.name, is_tunnel = opts.tunnel and true or false,
    is_bridge = opts.bridge and true or false, flags = opts.flags, prop_rule = opts.prop_rule or 0,
    ops = {}, serial = #self.rooms + 1,
  }, Room)
  self.rooms[#self.rooms + 1] = r
  if opts.outline_refs then
    r.outline = opts.outline_refs
  elseif opts.outline and opts.holes and #opts.holes > 0 then
    local all, starts = {}, {}
    for i, p in ipairs(opts.outline) do all[i] = p end
    for _, h in ipairs(opts.holes) do
      starts[#starts + 1] = #all + 1
      for _, p in ipairs(h) do all[#all + 1] = p end
    end
    local refs = trusted_refs(r, all) -- checked above
    local ring = core.keyhole(self:flat_of(refs), starts)
    local out = {}
    for i, k in ipairs(ring) do out[i] = refs[k] end
    r.outline = out
  elseif opts.outline then
    local refs = trusted_refs(r, opts.outline) -- checked above
    if core.signed_area(self:flat_of(refs)) > 0 then refs = M.reverse(refs) end
    r.outline = refs
  end
  r:check_budget()
  return r
end

-- Flat x, y, z of vertex references.
function Builder:flat_of(refs)
  return self.vpool:points(refs)
end

--- "room 12 ("Main St")" for messages: the room's number in creation order and its name.
function Room:label()
  local id = self.id or self.serial
  if self.name then return string_format("room %d (%q)", id, self.name) end
  return string_format("room %d (%s)", id, self.kind)
end

function Room:fail(fmt, ...)
  error(self:label() .. ": " .. string_format(fmt, ...), 3)
end

function Room:check_budget()
  local n = self.builder.vpool:count()
  local budget = self.builder.budget
  if budget and n > budget then
    error(string_format("%s: the vertex pool reaches %d vertices, above the safe budget of %d: the game's "
      .. "512 generated collision vertices would overflow 16-bit indices (§3.2)", self:label(), n, budget), 3)
  end
end

-- Vertex references of a list of points (checked), added in one call.
-- A bad point raises "bad argument #argn to 'fname' (what[i]: ...)" (fname: what).
function Room:refs(points, what, fname, argn)
  if type(points) ~= "table" then
    argerr(argn or 1, fname or what, string_format("%s: list of points expected, got %s", what, type(points)))
  end
  local flat, bad = flatten_points(points) -- checked and flattened in one pass
  if not flat then
    argerr(argn or 1, fname or what, point_problem(points[bad], what .. "[" .. bad .. "]") or "bad point")
  end
  return pool_flat(self.builder, flat)
end

-- Vertex references of rows of `stride` points, row after row.
function Room:rows(rows, stride, what)
  if type(rows) ~= "table" or #rows < 2 then
    self:fail("%s: at least 2 sections expected", what)
  end
  local flat, n = {}, 0
  for k, row in ipairs(rows) do
    if type(row) ~= "table" or #row ~= stride then
      self:fail("%s: section %d has %s points, %d expected", what, k, type(row) == "table" and #row or "no", stride)
    end
    for j = 1, stride do
      local p = row[j]
      local x, y, z
      if type(p) == "table" then x, y, z = p[1], p[2] or 0, p[3] end
      if type(x) ~= "number" or type(y) ~= "number" or type(z) ~= "number"
         or not (x > -FLT_MAX and x < FLT_MAX and y > -FLT_MAX and y < FLT_MAX and z > -FLT_MAX and z < FLT_MAX) then
        argerr(1, what, point_problem(p, string_format("rows[%d][%d]", k, j)) or "bad point")
      end
      flat[n + 1], flat[n + 2], flat[n + 3] = x, y, z
      n = n + 3
    end
  end
  return pool_flat(self.builder, flat)
end

function Room:push(op)
  self.ops[#self.ops + 1] = op
  self:check_budget()
  return self
end

--- Road strip with sidewalks (0x0): sections of 4 points, outer L, curb L, curb R, outer R,
-- the curbs 0.15 m below the outer points; first point on the left of travel (§2.4, §4.2).
-- An outer point equal to its curb point means no sidewalk on that side.
-- @tparam table rows sections (as `geom.sections` returns them)
-- @param[opt] textures a road group (surface, sidewalk, lod) or a style entry; default the
-- style's road
function Room:road(rows, textures)
  local g = as_group(self.builder, textures or self.builder.style.road, "road", "road")
  return self:push({ type = "road", group = g, refs = self:rows(rows, 4, "road") })
end

--- Divided road (0x8): sections of 6 points (outer L, curb L, median L, median R, curb R,
-- outer R).
-- @tparam table rows sections
-- @param[opt] textures road group
-- @tparam[opt] table opts `divider`: "flat" (1), "elevated" (2, default), "wedge" (3), "none"
-- (0) or a number 0..63; `divider_textures`: divider group (side, strip, top, cap; default
-- the style's divider); `cap_start`, `cap_end`: close the divider at the first / last
-- section; `height` (elevated and wedge, m: 0.15 and 1.0 by default), `repeats` (flat:
-- texture repeats across, 5 by default) or `value` (the raw 8.8 value, metres)
function Room:divided_road(rows, textures, opts)
  return self:divided_refs(self:rows(rows, 6, "divided_road"), textures, opts)
end

-- Divided road from vertex references (6 per section).
function Room:divided_refs(refs, textures, opts)
  opts = opts or {}
  local b = self.builder
  local g = as_group(b, textures or b.style.road, "road", "divided_road")
  local dt = opts.divider or "elevated"
  if type(dt) == "string" then
    local v = M.DIVIDERS[dt]
    if not v then self:fail("divider type '%s' (flat, elevated, wedge or none expected)", dt) end
    dt = v
  end
  if type(dt) ~= "number" or dt < 0 or dt > 63 or dt % 1 ~= 0 then self:fail("divider type %s: 0..63 expected", tostring(dt)) end
  local value = opts.value
  if value == nil then
    if dt == 1 then value = opts.repeats or 5.0
    elseif dt == 3 then value = opts.height or 1.0
    else value = opts.height or 0.15 end
  end
  if type(value) ~= "number" or not (value >= 0 and value < 256) then
    self:fail("divider value %s is outside 8.8 fixed point (0..255.99)", shown(value))
  end
  local dg = as_group(b, opts.divider_textures or b.style.divider, "divider", "divided_road")
  return self:push({ type = "divided_road", group = g, divider_group = dg, divider_type = dt,
                     cap_start = opts.cap_start and true or false, cap_end = opts.cap_end and true or false,
                     divider_value = value, refs = refs })
end

--- Rectangle strip (0x2, walkway or alley): sections of 2 points, left and right.
-- @param textures a group or name; its first slot is drawn
function Room:walkway(rows, textures)
  local g = as_group(self.builder, textures or self.builder.style.alley.surface, "single", "walkway")
  return self:push({ type = "walkway", group = g, refs = self:rows(rows, 2, "walkway") })
end

--- Sidewalk strip (0x1): pairs (curb, outer), the curb at road level on the left of travel,
-- the outer point 0.15 m higher; the texture is slot n+1 of the group (§2.3).
-- @tparam table rows pairs `{ {curb, outer}, ... }` (2 or more)
-- @param[opt] textures intersection or road group, or a sidewalk name
-- @tparam[opt] table opts `start_cap`, `end_cap`: close the raised sidewalk at its first /
-- last pair with a cap triangle (§2.4 0x1)
function Room:sidewalk(rows, textures, opts)
  opts = opts or {}
  local b = self.builder
  local g = as_group(b, textures or b.style.intersection, "sidewalk", "sidewalk")
  local refs = self:rows(rows, 2, "sidewalk")
  if opts.start_cap then
    self:push({ type = "sidewalk_strip", group = g, cap = "start", refs = { refs[1], refs[2] } })
  end
  self:push({ type = "sidewalk_strip", group = g, refs = refs })
  if opts.end_cap then
    local n = #refs
    self:push({ type = "sidewalk_strip", group = g, cap = "end", refs = { refs[n - 1], refs[n] } })
  end
  return self
end

--- Sliver (0x3): a wall from the two base points (their own heights) up to `top`.
-- @tparam table left point
-- @tparam table right point
-- @tparam table opts `top` (m), `density` (texture repeats per metre, 0.25), `texture`
-- (default the style's first sliver)
function Room:sliver(left, right, opts)
  local b = self.builder
  if type(opts) ~= "table" or type(opts.top) ~= "number" then self:fail("sliver: opts.top (metres) expected") end
  local m = num_problem(opts.top, "opts.top") or opt_problem(opts.density, "opts.density", "positive")
  if m then argerr(3, "sliver", m) end
  local g = as_group(b, opts.texture or b.style.slivers[1], "single", "sliver")
  local refs = self:refs({ left, right }, "sliver")
  return self:push({ type = "sliver", group = g, top = b:height(opts.top), density = b:height(opts.density or 0.25),
                     refs = refs })
end

--- Crosswalk (0x4): 4 points c0, c1, c2, c3; (c0, c1) one short end along a curb, (c2, c3)
-- the other, c1 and c3 at the road end; drawn with slot n+2 of the group (§2.4 0x4).
-- @param[opt] textures intersection group or a crosswalk name
function Room:crosswalk(points, textures)
  local b = self.builder
  if type(points) ~= "table" or #points ~= 4 then self:fail("crosswalk: 4 points expected") end
  local g
  if type(textures) == "string" then g = b:textures("intersection", textures)
  else g = as_group(b, textures or b.style.intersection, "intersection", "crosswalk") end
  return self:push({ type = "crosswalk", group = g, refs = self:refs(points, "crosswalk") })
end

-- Adds fans (convex pieces, retail winding) covering the polygon of flat points `flat`
-- (with hole starts, 1-based) whose vertex references are `refs`, as `kind` attributes.
local function fans_of_flat(room, flat, refs, starts, kind, g, extra, hub_height)
  local idx, xpts = core.fans(flat, starts)
  if #idx == 0 then room:fail("%s: the polygon has no area", kind) end
  if hub_height then -- added hubs take the caller's ground height (e.g. terrain) when it gives one
    for i = 1, #xpts, 3 do
      local y = hub_height(xpts[i], xpts[i + 2])
      if type(y) == "number" then xpts[i + 1] = y end
    end
  end
  local n = #refs
  local xrefs = #xpts > 0 and room.builder:vertices_flat(xpts) or nil
  for _, f in ipairs(idx) do
    local rr = {}
    for j = 1, #f do
      local k = f[j]
      rr[j] = k <= n and refs[k] or xrefs[k - n]
    end
    local op = { type = kind, group = g, refs = rr }
    if extra then for k, v in pairs(extra) do op[k] = v end end
    room:push(op)
  end
  return room
end

-- Adds fans covering a polygon of points with holes as `kind` attributes.
local function add_fans(room, polygon, holes, kind, g, extra, hub_height, checked)
  local m = not checked and polygon_problem(polygon, holes, "polygon", "opts.holes")
  if m then argerr(m:sub(1, 10) == "opts.holes" and (kind == "roof" and 4 or 3) or 1, kind, m) end
  local all, starts = {}, nil
  for i = 1, #polygon do all[i] = polygon[i] end
  if holes and #holes > 0 then
    starts = {}
    for _, h in ipairs(holes) do
      starts[#starts + 1] = #all + 1
      for _, p in ipairs(h) do all[#all + 1] = p end
    end
  end
  local refs = trusted_refs(room, all) -- checked above (or by Builder:block)
  local flat = room.builder:flat_of(refs)
  return fans_of_flat(room, flat, refs, starts, kind, g, extra, hub_height)
end

--- Road triangle fans (0x5) covering a flat polygon (convex pieces; concave polygons and
-- holes allowed). The polygon must be flat: the game flattens a road fan to its hub (§2.4 0x5).
-- @tparam table polygon points
-- @param[opt] textures intersection group (slot n) or a name
-- @tparam[opt] table opts `holes`
function Room:road_fan(polygon, textures, opts)
  local b = self.builder
  local g = as_group(b, textures or b.style.intersection, "single", "road_fan")
  local m = points_problem(polygon, "polygon", 3)
  if m then argerr(1, "road_fan", m) end
  local y0 = polygon[1] and polygon[1][2] or 0
  for i, p in ipairs(polygon) do
    if abs((p[2] or 0) - y0) > 0.05 then
      self:fail("road_fan: point %d is %.3f m off the first point's height; road fans must be flat (§2.4 0x5)",
        i, (p[2] or 0) - y0)
    end
  end
  return add_fans(self, polygon, opts and opts.holes, "road_fan", g)
end

--- Triangle fans (0x6) covering a polygon (ground, parks, plazas; may slope).
-- @tparam table polygon points
-- @param[opt] textures a group or name (default the style's paving)
-- @tparam[opt] table opts `holes`; `hub_height`: function(x, z) -> y or nil, the height of
-- a hub point the decomposition adds inside a piece (default: on the piece's plane)
function Room:fan(polygon, textures, opts)
  local b = self.builder
  local g = as_group(b, textures or b.style.ground.paving[1], "single", "fan")
  return add_fans(self, polygon, opts and opts.holes, "fan", g, nil, opts and opts.hub_height, opts and opts[CHECKED])
end

--- Facade bound (0x7): an invisible collision wall from the two base points up to `top`,
-- whose light index lights the facades and slivers after it (§2.4 0x7).
-- @tparam table opts `top` (m), `light` (0..63; default from the wall's direction,
-- `geom.light_index`)
function Room:facade_bound(left, right, opts)
  local b = self.builder
  if type(opts) ~= "table" or type(opts.top) ~= "number" then self:fail("facade_bound: opts.top (metres) expected") end
  local m = point_problem(left, "left")
  if m then argerr(1, "facade_bound", m) end
  m = point_problem(right, "right")
  if m then argerr(2, "facade_bound", m) end
  m = num_problem(opts.top, "opts.top") or opt_problem(opts.light, "opts.light", "int", 0, 63)
  if m then argerr(3, "facade_bound", m) end
  local light = opts.light or core.light_index(right[1] - left[1], right[3] - left[3])
  return self:push({ type = "facade_bound", light = light, top = b:height(opts.top),
                     refs = self:refs({ left, right }, "facade_bound") })
end

--- Facade (0xB): a vertical quad over the base points' x, z from `bottom` to `top`, facing
-- (−dz, 0, dx) for a base running left → right (§2.4 0xB, §4.2).
-- @tparam table opts `bottom`, `top` (m), `u`, `v` (repeats, 1..32767; default from a 4 m
-- bay and a 3 m storey), `texture` (default the style's first upper-floor facade)
function Room:facade(left, right, opts)
  local b = self.builder
  if type(opts) ~= "table" or type(opts.bottom) ~= "number" or type(opts.top) ~= "number" then
    self:fail("facade: opts.bottom and opts.top (metres) expected")
  end
  local m = point_problem(left, "left")
  if m then argerr(1, "facade", m) end
  m = point_problem(right, "right")
  if m then argerr(2, "facade", m) end
  m = num_problem(opts.bottom, "opts.bottom") or num_problem(opts.top, "opts.top")
    or opt_problem(opts.u, "opts.u", "int") or opt_problem(opts.v, "opts.v", "int")
  if not m and not (opts.top > opts.bottom) then
    m = string_format("opts.top (%s) must be above opts.bottom (%s)", shown(opts.top), shown(opts.bottom))
  end
  if m then argerr(3, "facade", m) end
  local len = geom.dist2(left, right)
  local u = opts.u or max(1, floor(len / 4 + 0.5))
  local v = opts.v or max(1, floor((opts.top - opts.bottom) / 3 + 0.5))
  if u < 1 or u > 32767 or v < 1 or v > 32767 then self:fail("facade: repeats %s x %s outside 1..32767", u, v) end
  local g = as_group(b, opts.texture or b.style.facades.upper[1], "single", "facade")
  return self:push({ type = "facade", group = g, bottom = b:height(opts.bottom), top = b:height(opts.top),
                     u = u, v = v, refs = self:refs({ left, right }, "facade") })
end

--- Roof (0xC): fans over a polygon at a height (the points' own heights are replaced).
-- @tparam table polygon footprint points
-- @tparam number height metres
-- @param[opt] textures group or name (default the style's roof)
function Room:roof(polygon, height, textures, opts)
  local b = self.builder
  if type(height) ~= "number" then self:fail("roof: height (metres) expected") end
  local m = num_problem(height, "height")
  if m then argerr(2, "roof", m) end
  local g = as_group(b, textures or b.style.roofs[1], "single", "roof")
  return add_fans(self, polygon, opts and opts.holes, "roof", g, { height = b:height(height) })
end

-- Tunnel flag word from options.
local function tunnel_flags(o)
  if o.flags then return o.flags end
  local T, f = M.TUNNEL, 0
  if o.left ~= false then f = f | T.left end
  if o.right ~= false then f = f | T.right end
  if o.wall then f = f | T.wall end
  if o.ceiling == "flat" or o.ceiling == true then f = f | T.flat_ceiling
  elseif o.ceiling == "curved" then f = f | T.curved_ceiling end
  local function ends(v, l, r)
    if v == true or v == "both" then f = f | l | r
    elseif v == "left" then f = f | l
    elseif v == "right" then f = f | r end
  end
  ends(o.closed_start, T.closed_start_left, T.closed_start_right)
  ends(o.closed_end, T.closed_end_left, T.closed_end_right)
  ends(o.offset_start, T.offset_start_left, T.offset_start_right)
  ends(o.offset_end, T.offset_end_left, T.offset_end_right)
  if o.curved_sides then f = f | T.curved_sides end
  if o.outer then f = f | T.outer end
  return f
end

--- Road tunnel or railing (0x9, strip form): walls for the next strip attribute of the room
-- (road, walkway or divided road), which must follow (§2.4 0x9).
-- @tparam table opts `textures` (tunnel group: wall_l, wall_r, ceiling, rail_r, rail_l,
-- underside; default the style's tunnel), `left`, `right` (walls on each side, default
-- true), `ceiling` ("flat", "curved" or nil), `wall` (thick wall style 0x4), `closed_start`,
-- `closed_end`, `offset_start`, `offset_end` (true, "left" or "right"), `curved_sides`,
-- `outer` (0x4000), `flags` (the raw word instead), `height` (m, drawn height; 5.5),
-- `height2` (m, collision height; 7.0)
function Room:tunnel(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "tunnel", "table expected, got " .. type(opts)) end
  local m = opt_problem(opts.height, "height") or opt_problem(opts.height2, "height2")
    or opt_problem(opts.flags, "flags", "int", 0, 0xFFFF)
  if m then argerr(1, "tunnel", m) end
  local b = self.builder
  local g = as_group(b, opts.textures or b.style.tunnel, "tunnel", "tunnel")
  local h1, h2 = opts.height or 5.5, opts.height2 or 7.0
  if h1 < 0 or h1 >= 256 or h2 < 0 or h2 >= 256 then self:fail("tunnel: heights must be 0..255.99 m (8.8 fixed point)") end
  return self:push({ type = "tunnel", group = g, flags = tunnel_flags(opts), height1 = h1, height2 = h2 })
end

--- Junction tunnel (0x9, 10-word form) for an intersection room: walls on chosen perimeter
-- edges (the mask is computed by `finish` from the final perimeter, §2.4 0x9).
-- @tparam table opts `textures` (tunnel group), `height`, `height2` (m), `ceiling` (true: the
-- ceiling fan, flag 0x8), `flags` (raw word; default 0x0003 plus the ceiling bit), `walls`:
-- "outside" (default: edges with no neighbour or a block neighbour), "all", a list of
-- 1-based perimeter edge numbers, or a function(edge) -> boolean with edge = `{index,
-- neighbour (room id), room (Room or nil), from, to}`; `ceiling_start` (1-based perimeter
-- point, 1)
function Room:junction_tunnel(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "junction_tunnel", "table expected, got " .. type(opts)) end
  local m = opt_problem(opts.height, "height", "nonneg", 0, 255.99) or opt_problem(opts.height2, "height2", "nonneg", 0, 255.99)
    or opt_problem(opts.flags, "flags", "int", 0, 0xFFFF) or opt_problem(opts.ceiling_start, "ceiling_start", "int", 1)
  if m then argerr(1, "junction_tunnel", m) end
  local b = self.builder
  local g = as_group(b, opts.textures or b.style.tunnel, "tunnel", "junction_tunnel")
  local flags = opts.flags or (0x0003 | (opts.ceiling and M.TUNNEL.flat_ceiling or 0))
  return self:push({ type = "junction_tunnel", group = g, flags = flags, height1 = opts.height or 5.5,
                     height2 = opts.height2 or 7.0, walls = opts.walls or "outside",
                     ceiling_start = opts.ceiling_start or 1 })
end

--- A raw texture reference (0xA) with an explicit value (1..2047; values above 255 are
-- stored through the subtype, §2.3). The next textured attribute writes its own group's
-- reference again.
function Room:texture(value)
  if type(value) ~= "number" or value % 1 ~= 0 or value < 0 then self:fail("texture: integer value expected") end
  if value > M.MAX_TEXTURE then
    self:fail("texture value %d exceeds %d, the largest the format can store (§2.3)", value, M.MAX_TEXTURE)
  end
  return self:push({ type = "texture", value = value })
end

-- ============================================================== shapes

-- Spline options for a profile.
local function half_width(p)
  local m = (p.median or 0) / 2
  return m + max((p.left or 0) + (p.sidewalk_left or 0), (p.right or 0) + (p.sidewalk_right or 0))
end

local function kind_of_profile(p)
  local k = p.kind or "road"
  if k == "road" then return "road", 4 end
  if k == "divided" then return "divided_road", 6 end
  if k == "walkway" then return "walkway", 2 end
  error("bad profile kind '" .. tostring(k) .. "' (road, divided or walkway)", 3)
end

-- A street's `from` / `to`: {info, arm} with info from Builder:intersection.
local function end_problem(e, name)
  if e == nil then return nil end
  if type(e) ~= "table" then return string_format("%s: {info, arm} expected, got %s", name, type(e)) end
  local info, i = e[1], e[2]
  if type(info) ~= "table" or type(info.centers) ~= "table" or type(info.dirs) ~= "table"
     or type(info.sections) ~= "table" then
    return string_format("%s[1]: the info table of Builder:intersection expected, got %s", name,
      type(info) == "table" and "another table" or type(info))
  end
  local n = #info.sections
  if type(i) ~= "number" or i % 1 ~= 0 or i < 1 or i > n then
    return string_format("%s[2]: arm number 1..%d expected (the junction has %d arm%s), got %s", name, n, n,
      n == 1 and "" or "s", shown(i))
  end
end

-- A section: `stride` points.
local function section_problem(row, name, stride)
  if row == nil then return nil end
  if type(row) ~= "table" then return string_format("%s: %d points expected, got %s", name, stride, type(row)) end
  if #row ~= stride then return string_format("%s: %d points expected (the profile's section), got %d", name, stride, #row) end
  return points_problem(row, name)
end

-- Plan length of a polyline of points.
local function plan_length(pts)
  local len = 0
  for i = 2, #pts do len = len + geom.dist2(pts[i - 1], pts[i]) end
  return len
end

local WIDTHS = { "left", "right", "sidewalk_left", "sidewalk_right", "median" }
local STREET_TABLES = { "room", "tunnel", "railing", "divider" }

-- Quick tests that pass exactly the values the *_problem checks pass, without building the
-- field names their messages need (checks run once per street, arm and building).
local function finite(v) return type(v) == "number" and v > -huge and v < huge end
local function nonneg(v) return type(v) == "number" and v >= 0 and v < huge end

local function profile_ok(p)
  if type(p) ~= "table" then return false end
  local k = p.kind or "road"
  if k ~= "road" and k ~= "divided" and k ~= "walkway" then return false end
  for i = 1, #WIDTHS do
    local v = p[WIDTHS[i]]
    if v ~= nil and not nonneg(v) then return false end
  end
  if (p.curb ~= nil and not finite(p.curb)) or (p.miter_limit ~= nil and not finite(p.miter_limit)) then return false end
  if k == "divided" and not ((p.left or 0) > 0 and (p.right or 0) > 0) then return false end
  return (p.left or 0) + (p.right or 0) > 0
end

-- A street or arm profile: a known kind, widths finite and not negative, some carriageway.
local function profile_problem(p, name)
  if profile_ok(p) then return nil end
  if type(p) ~= "table" then return string_format("%s: table expected, got %s", name, type(p)) end
  local k = p.kind or "road"
  if k ~= "road" and k ~= "divided" and k ~= "walkway" then
    return string_format("%s.kind: \"road\", \"divided\" or \"walkway\" expected, got %s", name, shown(k))
  end
  for _, f in ipairs(WIDTHS) do
    local m = opt_problem(p[f], name .. "." .. f, "nonneg")
    if m then return m end
  end
  local m = opt_problem(p.curb, name .. ".curb") or opt_problem(p.miter_limit, name .. ".miter_limit")
  if m then return m end
  if k == "divided" and not ((p.left or 0) > 0 and (p.right or 0) > 0) then
    return string_format("%s: a divided road needs positive left and right widths, got %s and %s", name,
      shown(p.left or 0), shown(p.right or 0))
  end
  if not ((p.left or 0) + (p.right or 0) > 0) then
    return string_format("%s: left + right must be positive (the carriageway has no width)", name)
  end
end

--- A street: a road, divided road or walkway along a centre line, in one or more road rooms.
-- @tparam table o fields:
--
-- * `path`: control points `{ {x, y, z}, ... }` of a smooth centre line (psdl.geom.spline),
--   or `center`: an already sampled centre line;
-- * `from`, `to`: `{junction_info, arm}` (from `Builder:intersection`): the street starts
--   (ends) on that arm's end section, square to the arm, and `path` only needs the via
--   points between (or nothing);
-- * `profile`: `{kind = "road"|"divided"|"walkway", left, right, sidewalk_left,
--   sidewalk_right, median}` (metres, seen in the direction of travel);
-- * `textures`: road group (default the style's road, or its alley for walkways);
--   `divider`: options of `Room:divided_road`;
-- * `spacing` (5 m), `max_angle` (7.5°), `planar_tol` (0.02 m): sampling;
-- * `start_section`, `end_section`: rows of points that replace the first / last section
--   (in the direction of travel); `start_dir`, `end_dir`: end tangents `{x, z}`;
-- * `split`: most sections per room (default 64; the road is cut at full sections);
-- * `tunnel` or `railing`: options of `Room:tunnel` for every room (a railing defaults to
--   `{height = 1.5, height2 = 1.0, outer = true}` and the style's railing textures);
-- * `room`: options of `Builder:room` for every room (`prop_rule` goes to the first only);
-- * `allow_clamp`: accept sections clamped on curves tighter than the road.
-- @treturn table the rooms in order
-- @treturn table info `{center = points, sections = n, stride = points per section, flat =
-- every section's points as a flat x, y, z array, refs = their vertex references, first,
-- last = the end sections (points), left, right = the outer-left / outer-right points of
-- every section}` (the rails are what a block beside the street shares)
function Builder:street(o)
  if type(o) ~= "table" then argerr(1, "street", "table expected, got " .. type(o)) end
  local profile = o.profile or { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
  local m = profile_problem(profile, "profile")
  if m then argerr(1, "street", m) end
  local akind, stride = kind_of_profile(profile)
  m = opt_problem(o.spacing, "spacing", "positive") or opt_problem(o.max_angle, "max_angle", "positive")
    or opt_problem(o.planar_tol, "planar_tol", "positive") or opt_problem(o.split, "split", "int", 2)
    or (o.start_dir ~= nil and dir_problem(o.start_dir, "start_dir")) or (o.end_dir ~= nil and dir_problem(o.end_dir, "end_dir"))
    or (o.path ~= nil and points_problem(o.path, "path")) or (o.via ~= nil and points_problem(o.via, "via"))
    or (o.center ~= nil and points_problem(o.center, "center", 2))
    or end_problem(o.from, "from") or end_problem(o.to, "to")
    or section_problem(o.start_section, "start_section", stride) or section_problem(o.end_section, "end_section", stride)
  if not m then
    for _, f in ipairs(STREET_TABLES) do
      local t = o[f]
      if t ~= nil and type(t) ~= "table" then m = string_format("%s: table expected, got %s", f, type(t)); break end
      if t ~= nil and f ~= "room" then
        m = opt_problem(t.height, f .. ".height") or opt_problem(t.height2, f .. ".height2")
          or opt_problem(t.value, f .. ".value") or opt_problem(t.repeats, f .. ".repeats")
        if m then break end
      end
    end
  end
  if m then argerr(1, "street", m) end
  local ctrl, start_dir, end_dir = {}, o.start_dir, o.end_dir
  local start_section, end_section = o.start_section, o.end_section
  if o.from then
    local info, i = o.from[1], o.from[2]
    ctrl[1] = info.centers[i]
    start_dir = start_dir or info.dirs[i]
    start_section = start_section or info.sections[i]
  end
  for _, p in ipairs(o.path or o.via or {}) do ctrl[#ctrl + 1] = p end
  if o.to then
    local info, i = o.to[1], o.to[2]
    ctrl[#ctrl + 1] = info.centers[i]
    local d = info.dirs[i]
    end_dir = end_dir or { -d[1], -d[2] }
    end_section = end_section or M.reverse(info.sections[i])
  end
  local cflat
  if o.center then
    if plan_length(o.center) < 1e-6 then argerr(1, "street", "center has zero horizontal length") end
    cflat = geom.flatten(o.center)
  else
    if #ctrl < 2 then argerr(1, "street", "path: 2 or more points expected (or from / to)") end
    if plan_length(ctrl) < 1e-6 then
      argerr(1, "street", "path has zero horizontal length" .. ((o.from or o.to) and " (with from / to)" or ""))
    end
    cflat = core.spline(geom.flatten(ctrl), {
      spacing = o.spacing, max_angle = o.max_angle, half_width = half_width(profile),
      planar_tol = o.planar_tol, start_dir = start_dir, end_dir = end_dir })
    if #cflat < 6 then argerr(1, "street", "path has zero horizontal length") end
  end
  local prof = {}
  for k, v in pairs(profile) do prof[k] = v end
  prof.kind = profile.kind or "road"
  local sf, clamped = core.sections(cflat, prof, start_dir, end_dir)
  local nsec = #sf // (3 * stride)
  local function put_row(k, row, what)
    local pm = section_problem(row, what, stride)
    if pm then argerr(1, "street", pm) end
    for c = 1, stride do
      local p, i = row[c], 3 * ((k - 1) * stride + c - 1)
      sf[i + 1], sf[i + 2], sf[i + 3] = p[1], p[2] or 0, p[3]
    end
  end
  if start_section then put_row(1, start_section, o.start_section and "start_section" or "from: the arm's end section") end
  if end_section then put_row(nsec, end_section, o.end_section and "end_section" or "to: the arm's end section") end
  self.clamped = self.clamped + clamped
  local split = o.split or 64
  local ropts = o.room or {}
  local tunnel = o.tunnel
  if o.railing then
    tunnel = {}
    for k, v in pairs(o.railing) do tunnel[k] = v end
    if tunnel.height == nil then tunnel.height = 1.5 end
    if tunnel.height2 == nil then tunnel.height2 = 1.0 end
    if tunnel.outer == nil and not tunnel.flags then tunnel.outer = true end
    tunnel.textures = tunnel.textures or self.style.tunnels.railing
  end
  local textures = o.textures
  if not textures then textures = akind == "walkway" and self.style.alley.surface or self.style.road end
  if split < 2 then argerr(1, "street", "split: at least 2 sections per room") end
  local all = {}
  for i = 1, #sf do all[i] = sf[i] end
  local srefs = pool_flat(self, all) -- numbers checked: the sections of a checked line
  local rooms = {}
  local nrooms = (nsec - 2) // (split - 1) + 1 -- rooms of at most `split` sections, as even as can be
  local first = 1
  while first < nsec do
    local last = min(nsec, first + (nsec - first + (nrooms - #rooms) - 1) // (nrooms - #rooms))
    local refs = {}
    for i = (first - 1) * stride + 1, last * stride do refs[#refs + 1] = srefs[i] end
    local is_tunnel = ropts.tunnel
    if is_tunnel == nil then is_tunnel = o.tunnel ~= nil end
    local r = self:room{ kind = "road", name = ropts.name, tunnel = is_tunnel,
                         bridge = ropts.bridge, flags = ropts.flags,
                         prop_rule = #rooms == 0 and ropts.prop_rule or 0 }
    if clamped > 0 and not o.allow_clamp then
      r:fail("the centre line bends tighter than the road is wide (%d cross-section points clamped); widen the "
        .. "curve or pass allow_clamp", clamped)
    end
    if tunnel then r:tunnel(tunnel) end
    if akind == "road" then
      r:push({ type = "road", group = as_group(self, textures, "road", "street"), refs = refs })
    elseif akind == "walkway" then
      r:push({ type = "walkway", group = as_group(self, textures, "single", "street"), refs = refs })
    else
      local dv = {}
      for k, v in pairs(o.divider or {}) do dv[k] = v end
      dv.cap_start = first == 1 and (o.divider or {}).cap_start
      dv.cap_end = last == nsec and (o.divider or {}).cap_end
      r:divided_refs(refs, textures, dv)
    end
    -- the outline of the strip: first section left to right, the right rail, the last
    -- section right to left, the left rail back (retail winding, §4.2)
    local ns = #refs // stride
    local out = {}
    local function put(v) if out[#out] ~= v then out[#out + 1] = v end end
    for c = 1, stride do put(refs[c]) end
    for k = 2, ns do put(refs[k * stride]) end
    for c = stride - 1, 1, -1 do put(refs[(ns - 1) * stride + c]) end
    for k = ns - 1, 2, -1 do put(refs[(k - 1) * stride + 1]) end
    while #out > 1 and out[#out] == out[1] do out[#out] = nil end
    r.outline = out
    rooms[#rooms + 1] = r
    first = last
  end
  local left, right = {}, {}
  for k = 1, nsec do
    local i, j = 3 * (k - 1) * stride, 3 * (k * stride - 1)
    left[k] = { sf[i + 1], sf[i + 2], sf[i + 3] }
    right[k] = { sf[j + 1], sf[j + 2], sf[j + 3] }
  end
  local function row(k)
    local t = {}
    for c = 1, stride do
      local i = 3 * ((k - 1) * stride + c - 1)
      t[c] = { sf[i + 1], sf[i + 2], sf[i + 3] }
    end
    return t
  end
  return rooms, { center = geom.unflatten(cflat), flat = sf, stride = stride, refs = srefs, left = left,
                  right = right, first = row(1), last = row(nsec), sections = nsec }
end

--- An intersection room where road ends meet at a node (psdl.geom.junction): flat road fans
-- (0x5), corner sidewalk strips with rounded curbs and caps where a sidewalk stops (0x1),
-- a crosswalk across each carriageway (0x4), one texture group, flag 0x10.
-- @tparam table o `center` `{x, y, z}`; `arms`: `{ {dir = {x, z}, profile = {...},
-- crosswalk = m (3 by default for roads, 0 for walkways), min_distance = m}, ... }`, each
-- profile seen travelling outward; `radius` (curb corner radius, 5), `arc_step` (degrees,
-- 15); `textures` (intersection group, default the style's); `room`: options of
-- `Builder:room`; `tunnel`: options of `Room:junction_tunnel`
-- @treturn Room
-- @treturn table info `{sections = {rows...} (per arm, outward left to right), centers =
-- {points} (per arm, where its road starts), dirs = {{x, z}...}, distance = {...},
-- outline = points, junction = the raw psdl.geom.junction result}`; pass `{info, i}` as a
-- street's `from` or `to`
function Builder:intersection(o)
  if type(o) ~= "table" then argerr(1, "intersection", "table expected, got " .. type(o)) end
  local c = o.center
  local m = point_problem(c, "center") or opt_problem(o.radius, "radius", "nonneg")
    or opt_problem(o.arc_step, "arc_step", "positive")
  if not m and (type(o.arms) ~= "table" or #o.arms == 0) then m = "arms: a list of arms expected" end
  if not m then
    for _, f in ipairs({ "room", "tunnel" }) do
      if o[f] ~= nil and type(o[f]) ~= "table" then m = string_format("%s: table expected, got %s", f, type(o[f])); break end
    end
  end
  local angles = {}
  for i = 1, m and 0 or #o.arms do
    local a = o.arms[i]
    local d = type(a) == "table" and a.dir
    if not (type(d) == "table" and finite(d[1]) and finite(d[2]) and d[1] * d[1] + d[2] * d[2] >= 1e-24
            and (a.profile == nil or profile_ok(a.profile)) and (a.crosswalk == nil or nonneg(a.crosswalk))
            and (a.min_distance == nil or nonneg(a.min_distance))) then -- something is wrong: which
      local an = "arms[" .. i .. "]"
      if type(a) ~= "table" then m = string_format("%s: table expected, got %s", an, type(a)); break end
      m = dir_problem(a.dir, an .. ".dir") or (a.profile ~= nil and profile_problem(a.profile, an .. ".profile"))
        or opt_problem(a.crosswalk, an .. ".crosswalk", "nonneg") or opt_problem(a.min_distance, an .. ".min_distance", "nonneg")
      if m then break end
    end
    local ang = geom.angle(a.dir[1], a.dir[2])
    for k, other in ipairs(angles) do
      local d = abs(ang - other) % 360
      if min(d, 360 - d) < 1 then
        m = string_format("arms[%d] and arms[%d] are less than 1 degree apart", k, i)
        break
      end
    end
    if m then break end
    angles[i] = ang
  end
  if m then argerr(1, "intersection", m) end
  local arms = {}
  for i, a in ipairs(o.arms) do
    local p = a.profile or { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
    local cw = a.crosswalk
    if cw == nil then cw = (p.kind or "road") == "walkway" and 0 or 3 end
    arms[i] = { dir = a.dir, profile = p, crosswalk = cw, min_distance = a.min_distance }
  end
  local ok, j = pcall(core.junction, { c[1], c[2] or 0, c[3] }, arms, { radius = o.radius or 5, arc_step = o.arc_step })
  if not ok then error("intersection at (" .. c[1] .. ", " .. c[3] .. "): " .. tostring(j):gsub("^.-%(", "("), 2) end
  local jp = j.points
  local copy = {}
  for i = 1, #jp do copy[i] = jp[i] end
  local jrefs = pool_flat(self, copy)
  local function R(list)
    local out = {}
    for i = 1, #list do out[i] = jrefs[list[i]] end
    return out
  end
  local function P(list)
    local out = {}
    for i = 1, #list do
      local k = 3 * (list[i] - 1)
      out[i] = { jp[k + 1], jp[k + 2], jp[k + 3] }
    end
    return out
  end
  local ropts = {}
  for k, v in pairs(o.room or {}) do ropts[k] = v end
  ropts.kind = "intersection"
  ropts.outline_refs = R(j.outline)
  local r = self:room(ropts)
  local g = as_group(self, o.textures or self.style.intersection, "intersection", "intersection")
  if o.tunnel then r:junction_tunnel(o.tunnel) end
  -- road fans over the surface (flat at the node's height)
  local surf = j.surface
  local sflat = {}
  for i = 1, #surf do
    local k = 3 * (surf[i] - 1)
    sflat[3 * i - 2], sflat[3 * i - 1], sflat[3 * i] = jp[k + 1], jp[k + 2], jp[k + 3]
  end
  fans_of_flat(r, sflat, R(surf), nil, "road_fan", g)
  for _, s in ipairs(j.strips) do
    local refs = R(s.pairs)
    if s.start_cap then r:push({ type = "sidewalk_strip", group = g, cap = "start", refs = { refs[1], refs[2] } }) end
    r:push({ type = "sidewalk_strip", group = g, refs = refs })
    local n = #refs
    if s.end_cap then r:push({ type = "sidewalk_strip", group = g, cap = "end", refs = { refs[n - 1], refs[n] } }) end
  end
  for _, cw in ipairs(j.crosswalks) do r:push({ type = "crosswalk", group = g, refs = R(cw) }) end
  local info = { sections = {}, centers = {}, dirs = {}, distance = j.distance, outline = P(j.outline), junction = j,
                 room = r }
  for i, a in ipairs(arms) do
    info.sections[i] = P(j.sections[i])
    local dx, dz = geom.unit(a.dir[1], a.dir[2])
    info.dirs[i] = { dx, dz }
    info.centers[i] = { c[1] + dx * j.distance[i], c[2] or 0, c[3] + dz * j.distance[i] }
  end
  return r, info
end

--- A block room (flag 0x04) whose ground is fans over an outline (with holes).
-- @tparam table o `outline` (points, a simple polygon), `holes` (rings inside it: the
-- perimeter takes them in through keyhole cuts, see `Builder:room`), `texture` (group or
-- name; default the style's paving), `room`: options of `Builder:room`. Put the outline on a
-- road room's outer edge, at sidewalk height, where it meets one: rooms link only through
-- shared vertices (`finish` warns otherwise).
-- @treturn Room
function Builder:block(o)
  if type(o) ~= "table" or type(o.outline) ~= "table" then argerr(1, "block", "outline expected") end
  local m = polygon_problem(o.outline, o.holes, "outline", "holes")
  if not m and o.room ~= nil and type(o.room) ~= "table" then m = "room: table expected, got " .. type(o.room) end
  if m then argerr(1, "block", m) end
  local ropts = {}
  for k, v in pairs(o.room or {}) do ropts[k] = v end
  ropts.kind = ropts.kind or "block"
  ropts.outline = o.outline
  ropts.holes = o.holes
  ropts[CHECKED] = true -- checked above: the room and its fan need not check it again
  local r = self:room(ropts)
  r:fan(o.outline, o.texture or self.style.ground.paving[1], { holes = o.holes, [CHECKED] = true })
  return r
end

--- A building in a room: facade bounds per wall run, facades (a ground floor and upper
-- floors), slivers where the ground under a wall is lower than the facades' base, and a roof
-- (§2.4 0x3, 0x7, 0xB, 0xC). Facades face outward (the outline is put in retail winding).
-- @tparam Room room usually the block room the building stands in
-- @tparam table o `outline`: footprint points at ground level (a row of facades along an
-- open line with `closed = false`: no roof; its points must run so that (−dz, 0, dx) faces
-- out); `floors` (3), `floor_height` (3 m), `bay_width` (4 m); `base`: facade bottom height
-- (default the highest ground point); `ground_height` (m of ground floor, 0 = none) and
-- `ground` (its facade texture); `facade`, `roof`, `sliver` textures; `sliver_density`
-- (repeats per metre, 0.25). The footprint must lie inside the room's outline, when it has
-- one (to within `BUILDING_SLACK`), and the building must have some height (`floors = 0`
-- with a `ground_height` is a ground floor alone).
-- @treturn table `{base, top, runs, facades, slivers}`
function Builder:building(room, o)
  if getmetatable(room) ~= Room then argerr(1, "building", "Room expected") end
  if type(o) ~= "table" or type(o.outline) ~= "table" or #o.outline < 2 then argerr(2, "building", "outline expected") end
  local closed = o.closed ~= false
  -- every check here, once: the attributes below are made without Room's own checks
  local m, flat, area
  if closed then m, flat, area = polygon_problem(o.outline, nil, "outline")
  else m, flat = points_problem(o.outline, "outline", 2) end
  m = m or opt_problem(o.floors, "floors", "nonneg") or opt_problem(o.floor_height, "floor_height", "positive")
    or opt_problem(o.ground_height, "ground_height", "nonneg") or opt_problem(o.bay_width, "bay_width", "positive")
    or opt_problem(o.base, "base") or opt_problem(o.top, "top") or opt_problem(o.sliver_density, "sliver_density", "positive")
  if m then argerr(2, "building", m) end
  local outline = o.outline
  local n = #outline
  if closed and area > 0 then -- retail winding (geom.retail)
    local r, f = {}, {}
    for i = 1, n do
      local p = outline[n + 1 - i]
      r[i] = p
      f[3 * i - 2], f[3 * i - 1], f[3 * i] = p[1], p[2] or 0, p[3]
    end
    outline, flat = r, f
  end
  local base = o.base
  if not base then
    base = -huge
    for i = 2, 3 * n, 3 do base = max(base, flat[i]) end
  end
  local fh = o.floor_height or 3
  local floors = o.floors or 3
  local gh = o.ground_height or 0
  local top = o.top or (base + gh + floors * fh)
  m = num_problem(top, "top") or num_problem(base + gh, "base + ground_height")
  if m then argerr(2, "building", m) end
  if not (top > base) then
    argerr(2, "building", string_format("the building has no height: top %s, base %s (floors, floor_height, "
      .. "ground_height or top)", shown(top), shown(base)))
  end
  if top < base + gh then
    argerr(2, "building", string_format("top (%s) is below the ground floor's top (base + ground_height = %s)",
      shown(top), shown(base + gh)))
  end
  if gh > 0 and not (base + gh > base) then
    argerr(2, "building", string_format("ground_height %s vanishes at base %s", shown(gh), shown(base)))
  end
  if room.outline then
    -- the room's outline as doubles kept in C, made once per room (again when the outline
    -- is replaced or changes length), not once per building
    local rflat = room.outline_flat
    if not rflat or room.outline_flat_of ~= room.outline or #rflat ~= #room.outline then
      rflat = core.points(self.vpool:points(room.outline))
      room.outline_flat, room.outline_flat_of = rflat, room.outline
    end
    local k = core.first_outside(rflat, flat, closed, max(self.eps, M.BUILDING_SLACK))
    if k then
      local p = outline[k]
      argerr(2, "building", string_format("building outline leaves the outline of %s at point %d (x = %s, z = %s)",
        room:label(), k, shown(p[1]), shown(p[3])))
    end
  end
  local style = self.style
  local vup = max(1, floor((top - base - gh) / fh + 0.5))
  local vgh = max(1, floor(gh / fh + 0.5))
  if vup > 32767 or vgh > 32767 then
    room:fail("facade: repeats %s x %s outside 1..32767", 1, max(vup, vgh))
  end
  -- the geometry in C (psdl_building): psdl_facades' wall segments, a bound per run, a
  -- sliver, ground-floor and upper facade per segment, the roof's fans; points and heights
  -- pooled in the order one attribute call after another would add them. A: 6 numbers per
  -- attribute (kind, two vertex references, two height references, light or u); R: the
  -- roof's fans ({m, refs...} each) and its height reference last
  local A, R = core.building(self.vpool, self.hpool, flat, { base = base, top = top, floor_height = fh,
    ground_height = gh, bay_width = o.bay_width or 4, sliver_density = o.sliver_density or 0.25, snap = self.snap,
    closed = closed })
  room:check_budget()
  local ops = room.ops
  local no = #ops
  local gup, gground, gsliver
  local runs, facades, slivers = 0, 0, 0
  for q = 1, #A, 6 do
    local kind, refs = A[q], { A[q + 1], A[q + 2] }
    no = no + 1
    if kind == 1 then
      ops[no] = { type = "facade_bound", light = A[q + 5], top = A[q + 3], refs = refs }
      runs = runs + 1
    elseif kind == 2 then
      gsliver = gsliver or as_group(self, o.sliver or style.slivers[1], "single", "sliver")
      ops[no] = { type = "sliver", group = gsliver, top = A[q + 3], density = A[q + 4], refs = refs }
      slivers = slivers + 1
    elseif kind == 3 then
      gground = gground or as_group(self, o.ground or style.facades.ground[1], "single", "facade")
      ops[no] = { type = "facade", group = gground, bottom = A[q + 3], top = A[q + 4], u = A[q + 5], v = vgh,
                  refs = refs }
      facades = facades + 1
    else -- floors above the ground floor
      gup = gup or as_group(self, o.facade or style.facades.upper[1], "single", "facade")
      ops[no] = { type = "facade", group = gup, bottom = A[q + 3], top = A[q + 4], u = A[q + 5], v = vup, refs = refs }
      facades = facades + 1
    end
  end
  if closed then -- the roof (Room:roof): fans over the outline at the top
    local g = as_group(self, o.roof or style.roofs[1], "single", "roof")
    local nr = #R
    if nr <= 1 then room:fail("roof: the polygon has no area") end
    local hr = R[nr]
    local i = 1
    while i < nr do
      local m = R[i]
      local rr = {}
      for k = 1, m do rr[k] = R[i + k] end
      no = no + 1
      ops[no] = { type = "roof", group = g, refs = rr, height = hr }
      i = i + 1 + m
    end
  end
  return { base = base, top = top, runs = runs, facades = facades, slivers = slivers }
end

--- A road record (§1.7) for rooms of one road run, in order; `finish` fills the crossroads
-- from the first section of the first room's road attribute and the last section of the
-- last room's.
-- @tparam table o `rooms` (Room list), `flags` (default: 0x40 with sidewalks, 0x08 divided,
-- 0x10 walkway), `lanes_left`, `lanes_right` (lists of lane values, default `{0.5}`),
-- `stop_lights` (`{0, 0}`)
function Builder:road_record(o)
  if type(o) ~= "table" or type(o.rooms) ~= "table" or #o.rooms == 0 then argerr(1, "road_record", "rooms expected") end
  for i, r in ipairs(o.rooms) do
    if getmetatable(r) ~= Room then argerr(1, "road_record", "rooms[" .. i .. "]: Room expected") end
  end
  local m = opt_problem(o.flags, "flags", "int", 0, 255)
  for _, f in ipairs({ "lanes_left", "lanes_right", "stop_lights" }) do
    local list = o[f]
    if m then break end
    if list ~= nil then
      if type(list) ~= "table" then m = string_format("%s: list of numbers expected, got %s", f, type(list)); break end
      for i = 1, #list do
        m = num_problem(list[i], string_format("%s[%d]", f, i))
        if m then break end
      end
    end
  end
  if m then argerr(1, "road_record", m) end
  self.records[#self.records + 1] = o
  return o
end

-- ============================================================== finish

-- Surface triangles (flat refs) of a room's ground geometry.
local function room_triangles(r)
  local tris = {}
  for _, op in ipairs(r.ops) do
    if SURFACE[op.type] and op.cap == nil then
      local t = core.surface_triangles(op.type, op.refs)
      local n = #tris
      for i = 1, #t do tris[n + i] = t[i] end
    end
  end
  return tris
end

-- Texture layout: divider groups first, then the others in order of first use.
local function layout_textures(b, rooms)
  -- one pass: divider groups in order of first use, the other groups in order of first use
  local dividers, others, users, dusers = {}, {}, {}, {}
  local nd, no = 0, 0
  for _, r in ipairs(rooms) do
    local ops = r.ops
    for k = 1, #ops do
      local op = ops[k]
      local g = op.group
      if g and not users[g] then
        users[g] = r
        no = no + 1
        others[no] = g
      end
      g = op.divider_group
      if g and not dusers[g] then
        dusers[g] = r
        nd = nd + 1
        dividers[nd] = g
      end
    end
  end
  local order = {}
  for i = 1, nd do
    local g = dividers[i]
    order[i] = g
    users[g] = dusers[g]
  end
  for i = 1, no do
    local g = others[i]
    if not dusers[g] then order[#order + 1] = g end
  end
  local textures, value = {}, {}
  for _, g in ipairs(order) do
    value[g] = #textures + 1
    for _, name in ipairs(g.names) do textures[#textures + 1] = name end
    if #textures > M.MAX_TEXTURE then
      error(string_format("%s: its texture group (%s: %s) needs texture slots up to %d, above %d, the largest "
        .. "value the format can store (§2.3)", users[g]:label(), g.kind, table_concat(g.names, ", "), #textures,
        M.MAX_TEXTURE), 3)
    end
  end
  for _, g in ipairs(dividers) do
    if value[g] > M.MAX_DIVIDER_TEXTURE then
      error(string_format("%s: divider texture group (%s) lands at texture value %d, above %d: the divided "
        .. "road stores it in one byte (§2.4 0x8)", users[g]:label(), table_concat(g.names, ", "), value[g],
        M.MAX_DIVIDER_TEXTURE), 3)
    end
  end
  return textures, value
end

-- Is point p strictly inside segment a-b (3D distance <= eps)? Returns the parameter t.
local function on_segment(p, a, b, eps)
  local dx, dy, dz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
  local len2 = dx * dx + dy * dy + dz * dz
  if len2 <= 4 * eps * eps then return nil end
  local t = ((p[1] - a[1]) * dx + (p[2] - a[2]) * dy + (p[3] - a[3]) * dz) / len2
  local len = sqrt(len2)
  if t * len <= eps or (1 - t) * len <= eps then return nil end
  local ex, ey, ez = a[1] + t * dx - p[1], a[2] + t * dy - p[2], a[3] + t * dz - p[3]
  if ex * ex + ey * ey + ez * ez > eps * eps then return nil end
  return t
end

-- Edge key of two vertex references (direction kept).
local function ekey(a, c) return a * 4294967296 + c end

-- Index of the boundary edges of a room's ground geometry: key (a, c) -> entry describing
-- where the edge is: a fan's ring edge, a strip's rail edge between two sections, or a
-- fixed edge (crosswalk, strip end section) that cannot take a vertex.
local function edge_index(r)
  local idx = {}
  for _, op in ipairs(r.ops) do
    local t, refs = op.type, op.refs
    if t == "fan" or t == "road_fan" then
      local n = #refs
      if refs[n] == refs[2] then -- hub inside: ring = refs[2 .. n-1]
        for i = 2, n - 1 do idx[ekey(refs[i], refs[i + 1])] = { op = op, ring = i - 1 } end
      else
        for i = 1, n do idx[ekey(refs[i], refs[i % n + 1])] = { op = op, ring = i } end
      end
    elseif STRIDE[t] and op.cap == nil then
      local s = STRIDE[t]
      local ns = #refs // s
      for k = 1, ns - 1 do
        for _, col in ipairs({ 1, s }) do
          local a, c = refs[(k - 1) * s + col], refs[k * s + col]
          if a ~= c then idx[ekey(a, c)] = { op = op, k = k, col = col } end
        end
      end
      for _, k in ipairs({ 1, ns }) do
        for col = 1, s - 1 do
          local a, c = refs[(k - 1) * s + col], refs[(k - 1) * s + col + 1]
          if a ~= c and not idx[ekey(a, c)] then idx[ekey(a, c)] = { op = op, fixed = true } end
        end
      end
    elseif t == "crosswalk" then
      for _, e in ipairs({ { 1, 2 }, { 2, 4 }, { 4, 3 }, { 3, 1 } }) do
        idx[ekey(refs[e[1]], refs[e[2]])] = { op = op, fixed = true }
      end
    end
  end
  return idx
end

-- Looks up the geometry edge (a, c) or (c, a); returns the entry and whether reversed.
local function find_edge(idx, a, c)
  local e = idx[ekey(a, c)]
  if e then return e, false end
  e = idx[ekey(c, a)]
  if e then return e, true end
  return nil
end

-- Slow path: the geometry edge containing every vertex of vs (outline edges that are not
-- geometry edges). Returns the entry and the edge's end references, or nil.
local function search_edge(b, idx, vs)
  local p1 = b:point(vs[1])
  for key, e in pairs(idx) do
    local a, c = key // 4294967296, key % 4294967296
    if on_segment(p1, b:point(a), b:point(c), b.eps) then return e, a, c end
  end
  return nil
end

-- Applies the collected insertions to the room's geometry. ins[op] = list of
-- {ring = j | k = k, col = col, list = {{t = t, v = ref}, ...}} in the op's edge direction.
local function apply_insertions(b, r, ins)
  local new_ops = {}
  for _, op in ipairs(r.ops) do
    local list = ins[op]
    if not list then
      new_ops[#new_ops + 1] = op
    elseif op.type == "fan" or op.type == "road_fan" then
      local refs, n = op.refs, #op.refs
      local closed = refs[n] == refs[2]
      local ring = {}
      if closed then for i = 2, n - 1 do ring[#ring + 1] = refs[i] end
      else for i = 1, n do ring[#ring + 1] = refs[i] end end
      local at, hub_edge = {}, false
      for _, e in ipairs(list) do
        local slot = at[e.ring]
        if not slot then slot = {}; at[e.ring] = slot end
        for _, x in ipairs(e.list) do slot[#slot + 1] = x end
        if not closed and (e.ring == 1 or e.ring == n) then hub_edge = true end
      end
      local out = {}
      for j = 1, #ring do
        out[#out + 1] = ring[j]
        local slot = at[j]
        if slot then
          table_sort(slot, function(x, y) return x.t < y.t end)
          for _, x in ipairs(slot) do out[#out + 1] = x.v end
        end
      end
      if hub_edge then
        local pts = {}
        for k, ref in ipairs(out) do pts[k] = b:point(ref) end
        for _, f in ipairs(geom.fans(pts)) do
          local nop = {}
          for k, v in pairs(op) do nop[k] = v end
          nop.refs = r:refs(f, op.type)
          new_ops[#new_ops + 1] = nop
        end
      else
        if closed then
          out[#out + 1] = out[1]
          table_insert(out, 1, refs[1])
        end
        op.refs = out
        new_ops[#new_ops + 1] = op
      end
    else -- strip rails: one new section per vertex
      local s = STRIDE[op.type]
      local refs = op.refs
      local byk = {}
      for _, e in ipairs(list) do
        local slot = byk[e.k]
        if not slot then slot = {}; byk[e.k] = slot end
        for _, x in ipairs(e.list) do slot[#slot + 1] = { t = x.t, v = x.v, col = e.col } end
      end
      local nr = {}
      local ns = #refs // s
      for k = 1, ns do
        for c = 1, s do nr[#nr + 1] = refs[(k - 1) * s + c] end
        local slot = byk[k]
        if slot then
          table_sort(slot, function(x, y) return x.t < y.t end)
          for _, x in ipairs(slot) do
            local a, c0 = refs[(k - 1) * s + x.col], refs[k * s + x.col]
            for c = 1, s do
              local ra, rc = refs[(k - 1) * s + c], refs[k * s + c]
              if ra == a and rc == c0 then nr[#nr + 1] = x.v
              else nr[#nr + 1] = b:vertex(geom.lerp(b:point(ra), b:point(rc), x.t)) end
            end
          end
        end
      end
      op.refs = nr
      new_ops[#new_ops + 1] = op
    end
  end
  r.ops = new_ops
end

-- Detects T-junctions between room perimeters and repairs them: the vertex goes into the
-- perimeter of the room with the long edge and into that room's geometry (a fan takes it on
-- its rim, or is fanned again when the edge touches its hub; a strip takes it with a new
-- section, whose other end may be a new T-junction across the strip, so this repeats until
-- none is left). An edge of a crosswalk or of a strip's end section cannot take a vertex:
-- those are reported. Returns found, repaired, unrepaired (messages).
local function repair_tjunctions(b, rooms, perims)
  local found, repaired, unrepaired = 0, 0, {}
  local stuck = {}
  for _ = 1, 8 do
    local t = core.tjunctions(b.vpool, perims, b.eps)
    -- group by room and perimeter edge, skipping what could not be repaired before
    local by_room, any = {}, false
    for i = 1, #t, 3 do
      local ri, edge, v = t[i], t[i + 1], t[i + 2]
      local key = ri .. ":" .. v
      if not stuck[key] then
        local rm = by_room[ri]
        if not rm then rm = { edges = {}, order = {} }; by_room[ri] = rm end
        local g = rm.edges[edge]
        if not g then g = { edge = edge, vs = {}, keys = {} }; rm.edges[edge] = g; rm.order[#rm.order + 1] = edge end
        g.vs[#g.vs + 1] = v
        g.keys[#g.keys + 1] = key
        found = found + 1
        any = true
      end
    end
    if not any then break end
    for ri, rm in pairs(by_room) do
      local r, per = rooms[ri], perims[ri]
      local idx = edge_index(r)
      local ins = {}
      local accepted = {}
      for _, k in ipairs(rm.order) do
        local g = rm.edges[k]
        local a, c = per[k], per[k % #per + 1]
        local e, rev = find_edge(idx, a, c)
        local ea, ec = a, c
        if not e then
          local sa, sc
          e, sa, sc = search_edge(b, idx, g.vs)
          if e then ea, ec, rev = sa, sc, false end
        elseif rev then
          ea, ec = c, a
        end
        if e and e.fixed then
          for q, v in ipairs(g.vs) do
            stuck[g.keys[q]] = true
            unrepaired[#unrepaired + 1] = string_format("%s: vertex %d lies on its perimeter edge %d, which is an "
              .. "edge of a crosswalk or of a strip's end section and cannot take a vertex", r:label(), v, k)
          end
        else
          if e then
            local pa, pc = b:point(ea), b:point(ec)
            local lst = {}
            for _, v in ipairs(g.vs) do
              local tt = on_segment(b:point(v), pa, pc, b.eps)
              if tt then lst[#lst + 1] = { t = tt, v = v } end
            end
            local l = ins[e.op]
            if not l then l = {}; ins[e.op] = l end
            l[#l + 1] = { ring = e.ring, k = e.k, col = e.col, list = lst }
          end
          accepted[#accepted + 1] = g
        end
      end
      apply_insertions(b, r, ins)
      -- perimeter: from the last edge back so that positions stay valid
      table_sort(accepted, function(x, y) return x.edge > y.edge end)
      for _, g in ipairs(accepted) do
        for q = #g.vs, 1, -1 do table_insert(per, g.edge + 1, g.vs[q]) end
        repaired = repaired + #g.vs
      end
      if r.outline then r.outline = per end
    end
  end
  return found, repaired, unrepaired
end

-- Block perimeter edges left without a neighbour that run along a road or intersection
-- room's perimeter edge in plan (within eps) at another height (up to `HEIGHT_GAP` m away:
-- farther is a bridge or a tunnel): rooms link only through shared vertices (§1.5), so a
-- block at ground level beside a sidewalk 0.15 m up stays unlinked. One message per pair
-- of rooms.
local HEIGHT_GAP = 1.0
local function height_mismatches(b, rooms, linked)
  -- the edge loops run in C (psdl_height_mismatches): kinds 1 block, 2 road or
  -- intersection, 0 tunnels and bridges
  local kinds = {}
  for i = 1, #rooms do
    local r = rooms[i]
    kinds[i] = (r.is_tunnel or r.is_bridge) and 0 or r.kind == "block" and 1
      or (r.kind == "road" or r.kind == "intersection") and 2 or 0
  end
  local found = core.height_mismatches(b.vpool, linked, kinds, max(b.eps, 1e-4), HEIGHT_GAP)
  local out = {}
  for n = 1, #found // 4 do -- in room order
    local q = 4 * (n - 1)
    local dy = found[q + 4]
    out[n] = string_format("%s: perimeter edge %d runs along an edge of %s but %.3f m %s it, so the two rooms "
      .. "are not linked (§1.5); blocks meet roads at the road room's outer edge (sidewalk height)",
      rooms[found[q + 1]]:label(), found[q + 2], rooms[found[q + 3]]:label(), abs(dy), dy < 0 and "below" or "above")
  end
  return out
end

-- Crossroads of a road record end: the section of a road-type attribute (§1.7: road outer
-- L, curb L, curb R, outer R; divided columns 1, 2, 5, 6; walkway v1, v1, v2, v2).
local function crossroads(op, last)
  local s = STRIDE[op.type]
  local base = last and (#op.refs - s) or 0
  local r = op.refs
  if op.type == "road" then return { r[base + 1], r[base + 2], r[base + 3], r[base + 4] } end
  if op.type == "divided_road" then return { r[base + 1], r[base + 2], r[base + 5], r[base + 6] } end
  return { r[base + 1], r[base + 1], r[base + 2], r[base + 2] }
end

--- Finish the document.
--
-- Lays out the texture table (divider groups first), takes each room's perimeter (its
-- `outline`, or the outline of its ground geometry), repairs T-junctions between rooms
-- (the vertex goes into the perimeter and geometry of the room with the long edge), links
-- neighbours across shared edges (symmetric; a vertex shared with a room that is no edge
-- neighbour is repeated, §1.5), sets room flags, writes the attributes (a texture reference
-- before textured geometry, only when it changes), computes bounds, and validates.
-- @tparam[opt] table opts `strict` (default true: warnings are errors too, the builder's
-- own with validation's), `validate` (default true), `drivable` (false: validate the format's
-- rules only, for fragments that are no whole city; see `psdl.validate`), `order = "blocks_first"` (block rooms
-- get the low ids, as retail; `first_road_room` is then the first non-block id)
-- @treturn table document (docs/document-model.md)
-- @treturn table report `{rooms, vertices, heights, textures, tjunctions = {found, repaired,
-- unrepaired}, warnings, problems, counts, seconds}`; `warnings`: block perimeter edges that
-- run along a road or intersection room's edge at another height (a block at ground level
-- beside a sidewalk 0.15 m up), which therefore stay unlinked
-- @raise when a room breaks a limit of the format, or validation fails
function Builder:finish(opts)
  opts = opts or {}
  local t0 = os_clock()
  local rooms = {}
  for i, r in ipairs(self.rooms) do rooms[i] = r end
  local first_road_room = 0
  if opts.order == "blocks_first" then
    local blocks, others = {}, {}
    for _, r in ipairs(rooms) do
      if r.kind == "block" then blocks[#blocks + 1] = r else others[#others + 1] = r end
    end
    first_road_room = #others > 0 and #blocks + 1 or 0
    rooms = blocks
    for _, r in ipairs(others) do rooms[#rooms + 1] = r end
  end
  for i, r in ipairs(rooms) do r.id = i end
  local phases, tp = {}, t0
  local function phase(name)
    local t = os_clock()
    phases[#phases + 1] = { name, t - tp }
    tp = t
  end
  local textures, value = layout_textures(self, rooms)
  phase("textures")
  -- perimeters
  local perims = {}
  for i, r in ipairs(rooms) do
    local per = r.outline
    if not per then
      local tris = room_triangles(r)
      if #tris == 0 then
        error(r:label() .. ": no ground geometry to take a perimeter from, and no outline", 2)
      end
      per = core.boundary(tris, self.vpool)
      if #per < 3 then error(r:label() .. ": its ground geometry has no outline", 2) end
    else
      local c = {}
      for k, v in ipairs(per) do c[k] = v end
      per = c
    end
    perims[i] = per
  end
  phase("perimeters")
  local found, repaired, unrepaired = repair_tjunctions(self, rooms, perims)
  phase("tjunctions")
  local linked = core.link(perims, self.vpool:count())
  phase("links")
  -- attributes
  local doc_rooms = {}
  for i, r in ipairs(rooms) do
    local per = linked[i]
    if #per > M.MAX_PERIMETER then
      error(string_format("%s: %d perimeter points; the game keeps the count in one byte, %d at most (§3.2)",
        r:label(), #per, M.MAX_PERIMETER), 2)
    end
    if #per < 3 then error(r:label() .. ": its perimeter has fewer than 3 points", 2) end
    local attrs, cur = {}, nil
    local function tex(v)
      if v ~= cur then
        attrs[#attrs + 1] = { type = "texture", value = v }
        cur = v
      end
    end
    for k, op in ipairs(r.ops) do
      local t = op.type
      if t == "texture" then
        attrs[#attrs + 1] = { type = "texture", value = op.value }
        cur = op.value
      elseif t == "tunnel" then
        local nx = r.ops[k + 1]
        if not nx or not STRIP[nx.type] then
          error(r:label() .. ": a road tunnel must be followed by a road, walkway or divided road (§2.4 0x9)", 2)
        end
        tex(value[op.group])
        attrs[#attrs + 1] = { type = "tunnel", flags = op.flags, height1 = op.height1, height2 = op.height2 }
      elseif t == "junction_tunnel" then
        local n = #per
        if n > 32 then
          error(string_format("%s: a junction tunnel covers 32 perimeter edges, the room has %d (§3.2)", r:label(), n), 2)
        end
        local mask = 0
        for e = 1, n do
          local a, c = per[e], per[e % n + 1]
          if a.vertex ~= c.vertex then
            local nb = a.neighbour
            local nroom = nb > 0 and rooms[nb] or nil
            local wall
            local w = op.walls
            if w == "outside" then wall = nb == 0 or (nroom and nroom.kind == "block")
            elseif w == "all" then wall = true
            elseif type(w) == "function" then
              wall = w({ index = e, neighbour = nb, room = nroom, from = self:point(a.vertex), to = self:point(c.vertex) })
            elseif type(w) == "table" then
              for _, x in ipairs(w) do if x == e then wall = true end end
            end
            if wall then mask = mask | (1 << (e % n)) end -- bit j: edge j-1 -> j (0-based, §1.5)
          end
        end
        tex(value[op.group])
        attrs[#attrs + 1] = { type = "junction_tunnel", flags = op.flags, height1 = op.height1, height2 = op.height2,
                              ceiling_start = op.ceiling_start, wall_mask = mask, mask1 = 0, mask2 = 0 }
      else
        if op.group then tex(value[op.group]) end
        local a -- each made whole in one constructor (no growing of its hash part)
        if t == "facade" then
          a = { type = t, vertices = op.refs, bottom = op.bottom, top = op.top, u_repeat = op.u, v_repeat = op.v }
        elseif t == "facade_bound" then a = { type = t, vertices = op.refs, light = op.light, top = op.top }
        elseif t == "roof" then a = { type = t, vertices = op.refs, height = op.height }
        elseif t == "sidewalk_strip" then a = { type = t, vertices = op.refs, cap = op.cap }
        elseif t == "divided_road" then
          a = { type = t, vertices = op.refs, divider_type = op.divider_type, cap_start = op.cap_start,
                cap_end = op.cap_end, divider_texture = value[op.divider_group], divider_value = op.divider_value }
        elseif t == "sliver" then a = { type = t, vertices = op.refs, top = op.top, density = op.density }
        else a = { type = t, vertices = op.refs } end
        attrs[#attrs + 1] = a
      end
    end
    if #attrs == 0 then error(r:label() .. ": no attributes", 2) end
    local flags = r.flags
    if not flags then
      flags = r.kind == "road" and M.FLAGS.road or r.kind == "intersection" and M.FLAGS.intersection or M.FLAGS.standard
      if r.is_tunnel then flags = flags | M.FLAGS.subterranean | M.FLAGS.warp end
      if r.is_bridge then flags = flags | M.FLAGS.warp end
    end
    doc_rooms[i] = { flags = flags, prop_rule = r.prop_rule, perimeter = per, attributes = attrs }
  end
  phase("attributes")
  -- vertices, dummy, bounds
  local nv = self.vpool:count()
  if self.budget and nv > self.budget then
    error(string_format("the vertex pool has %d vertices after T-junction repair, above the safe budget of %d (§3.2)",
      nv, self.budget), 2)
  end
  local bounds = core.bounds(self.vpool, 2)
  if not bounds then error("the document has no vertices", 2) end
  self.vpool:set_dummy(bounds.center[1], bounds.center[2], bounds.center[3])
  if self.hpool:count() > 65536 then error("more than 65,536 heights (u16 references)", 2) end
  -- road records
  local roads = {}
  for k, rec in ipairs(self.records) do
    local ids, first_op, last_op = {}, nil, nil
    for j, r in ipairs(rec.rooms) do
      ids[j] = r.id
      for _, op in ipairs(r.ops) do
        if STRIP[op.type] then
          if j == 1 and not first_op then first_op = op end
          if j == #rec.rooms then last_op = op end
        end
      end
    end
    if not first_op or not last_op then
      error(string_format("road record %d: its first and last rooms need a road, walkway or divided road", k), 2)
    end
    local flags = rec.flags
    if not flags then
      flags = 0
      if first_op.type == "walkway" then flags = flags | 0x10 end
      if first_op.type == "divided_road" then flags = flags | 0x08 end
      if first_op.type ~= "walkway" and first_op.refs[1] ~= first_op.refs[2] then flags = flags | 0x40 end
    end
    roads[k] = { flags = flags, lanes_left = rec.lanes_left or { 0.5 }, lanes_right = rec.lanes_right or { 0.5 },
                 stop_lights = rec.stop_lights or { 0, 0 }, start_crossroads = crossroads(first_op, false),
                 end_crossroads = crossroads(last_op, true), rooms = ids }
  end
  local doc = {
    magic = "PSD0", target_size = 2,
    vertices = self.vpool:totable(),
    heights = self.hpool:totable(),
    textures = textures,
    first_road_room = first_road_room,
    room0 = { flags = 0, prop_rule = 0xCD },
    rooms = doc_rooms,
    bounds = bounds,
    roads = roads,
  }
  phase("document")
  local report = { rooms = #doc_rooms, vertices = nv, heights = self.hpool:count(), textures = #textures,
                   tjunctions = { found = found, repaired = repaired, unrepaired = unrepaired },
                   clamped = self.clamped, warnings = height_mismatches(self, rooms, linked) }
  phase("warnings")
  if opts.validate ~= false then
    local psdl = require "psdl"
    local strict = opts.strict ~= false
    local ok, problems, counts = psdl.validate(doc, { strict = strict, name = self.name, drivable = opts.drivable })
    report.problems, report.counts = problems, counts
    if strict and #report.warnings > 0 then ok = false end
    if not ok then
      local lines = {}
      for i, p in ipairs(problems) do
        if i > 8 then lines[#lines + 1] = string_format("(and %d more)", #problems - 8); break end
        lines[#lines + 1] = string_format("%s %s %s: %s", p.severity, p.rule, p.path, p.message)
      end
      if strict then
        for i, w in ipairs(report.warnings) do
          if i > 8 then lines[#lines + 1] = string_format("(and %d more)", #report.warnings - 8); break end
          lines[#lines + 1] = "warning builder " .. w
        end
      end
      error("the built document does not validate" .. (strict and " (strict)" or "") .. ":\n  "
        .. table_concat(lines, "\n  "), 2)
    end
  end
  phase("validate")
  report.phases = phases
  report.seconds = os_clock() - t0
  return doc, report
end

M.Builder = Builder
M.Room = Room

return M
