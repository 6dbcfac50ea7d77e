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
local control = require "psdl.control" -- (heap_keep: the process's heap switch, not in psdl.core)
local styles = require "psdl.styles"
local geom = require "psdl.geom"
local check = require "psdl.check"
local lazy_table = require("psdl.lazy").table

local type, error, ipairs, pairs, tostring = type, error, ipairs, pairs, tostring
local setmetatable, getmetatable, require, pcall = setmetatable, getmetatable, require, pcall
local table_insert = table.insert
local floor, max, min, abs, sqrt, huge = math.floor, math.max, math.min, math.abs, math.sqrt, math.huge
local string_format, table_concat, table_sort = string.format, table.concat, table.sort
local os_clock = os.clock
local math_type = math.type
local MAX_COORD, argerr, shown, num_problem = check.MAX_COORDINATE, check.argerr, check.shown, check.num_problem
local opt_problem, point_problem = check.opt_problem, check.point_problem
local flat_check = core.flat_check
check.own(debug.getinfo(1, "S").source)

local M = {}

-- The first key of option table t that `known` lacks, as "unknown option 'k'" (after
-- "name: " for a nested table), or nil. One scan per public call: the builder refuses a
-- misspelt key (`hoels`, `flors`) as psdl.city does, instead of building without it.
local function unknown_key(t, known, name)
  for k in next, t do
    if not known[k] then
      return string_format("%sunknown option '%s'", name and (name .. ": ") or "", tostring(k))
    end
  end
end
M.unknown_key = unknown_key

local NEW_KEYS = { style = true, eps = true, snap = true, name = true, vertex_budget = true }

--- Largest vertex pool the game takes safely (§3.2).
M.VERTEX_BUDGET = core.limits.vertex_budget
--- Perimeter points per room (§3.2).
M.MAX_PERIMETER = core.limits.perimeter
--- Largest texture value (§2.3).
M.MAX_TEXTURE = core.limits.texture_value
--- Largest divider texture value (one byte, §2.4 0x8).
M.MAX_DIVIDER_TEXTURE = core.limits.divider_texture
--- How far (m) a building outline may stray outside its room's outline before
-- `Builder:building` raises (footprints computed against curved streets stray a few cm).
M.BUILDING_SLACK = 0.25

--- The largest |x|, |y| or |z| of a point the builder takes, metres (65,536 = 2^16,
-- `psdl.city.MAX_COORDINATE` too): positions are 32-bit floats (psdl-format.md §1.2), whose
-- steps are 4 mm just below it and grow beyond (64 m at 1e9 m), so a point further out is a
-- mistake; `psdl validate` warns (`far_vertex`) about files from elsewhere that have one.
M.MAX_COORDINATE = check.MAX_COORDINATE

--- The widest a profile's carriageway (`left + right`), `median` or sidewalk may be, metres
-- (100, `psdl.city.profiles.MAX_WIDTH` too).
M.MAX_WIDTH = check.MAX_WIDTH

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

--- Reverse a list (a copy).
function M.reverse(list)
  local r = {}
  for i = #list, 1, -1 do r[#r + 1] = list[i] end
  return r
end

local SWAPPED = { left = true, right = true, sidewalk_left = true, sidewalk_right = true }

--- A profile seen from the other end of its road: left and right swapped.
function M.mirror_profile(p)
  -- (a profile's usual keys in the constructor: the copy is made at its size, not grown)
  local q = { kind = p.kind, left = p.right, right = p.left, sidewalk_left = p.sidewalk_right,
              sidewalk_right = p.sidewalk_left, median = p.median }
  for k, v in pairs(p) do
    if not SWAPPED[k] and q[k] == nil then q[k] = v end
  end
  return q
end

-- ============================================================== construction

--- Start an empty document.
-- @tparam[opt] table opts `style`: "london", "sf" or a style table (psdl.styles); the
-- defaults for textures not given. `eps`: T-junction tolerance in metres (0.005).
-- `snap`: round coordinates to this grid (metres) before pooling (default: exact).
-- `name`: the city name, checked by validation (§3.4). `vertex_budget`: the vertex count
-- that raises (65,024 by default, §3.2: the game adds 512 collision vertices to the file's;
-- at most 65,536, what a file can reference; `false` for none: only for timing documents
-- too big for the game, which `finish` then refuses unless `validate = false`).
-- @treturn Builder
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "new", "table expected, got " .. type(opts)) end
  local bad = unknown_key(opts, NEW_KEYS)
  if bad then argerr(1, "new", bad) end
  local style, serr = styles.load(opts.style or "london")
  if not style then argerr(1, "new", serr) end
  local m = opt_problem(opts.eps, "eps", "nonneg") or opt_problem(opts.snap, "snap", "positive")
  if not m and opts.vertex_budget ~= nil and opts.vertex_budget ~= false then
    -- (at most what a PSDL can reference, 16-bit references 1..65,536, §3.2)
    m = num_problem(opts.vertex_budget, "vertex_budget", "int", 1, 65536)
  end
  if m then argerr(1, "new", m) end
  -- the C heap keeps what a build frees for the next one (glibc: no mapping, unmapping and
  -- faulting in again of the document's and the validator's buffers; docs/heap.md)
  control.heap_keep()
  local b = setmetatable({
    style = style,
    eps = opts.eps or 0.005,
    snap = opts.snap,
    name = opts.name,
    vpool = core.pool(3, true),
    hpool = core.pool(1, false),
    groups = {}, group_by_key = {},
    rooms = {},
    store = core.store(), -- the rooms' attributes (src/psdl_store.c), by room serial
    records = {},
    clamped = 0,
    budget = opts.vertex_budget == nil and M.VERTEX_BUDGET or opts.vertex_budget,
    atomic_depth = 0, -- 1 inside an atomic call (builder/atomic.lua)
    -- groups found before (Builder:textures): by kind and name, by style table and kind
    group_of_name = {}, group_of_table = setmetatable({}, { __mode = "k" }),
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
  self:settle()
  local x, y, z = p[1], p[2] or 0, p[3]
  local s = self.snap
  if s then x, y, z = floor(x / s + 0.5) * s, floor(y / s + 0.5) * s, floor(z / s + 0.5) * s end
  return self.vpool:add(x, y, z)
end

-- Vertex references of a flat `{x1, y1, z1, ...}` array of numbers already checked.
local function pool_flat(b, flat)
  if b.pending_doc then b.pending_doc() end -- a finished document not yet made is made now
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
  local i = flat_check(flat) -- (in C: the first number outside +-65,536 m, PSDL_MAX_COORDINATE)
  if i then
    argerr(1, "vertices_flat", string_format("flat[%d]: a coordinate within +-%d m expected (psdl.builder.MAX_COORDINATE), "
      .. "got %s", i, MAX_COORD, shown(flat[i])))
  end
  return pool_flat(self, flat)
end

-- Raise "calling 'fname' on bad self (Builder expected, got <type>)" at the script's line:
-- a method called with a dot (`b.finish()`) or on another table.
local function self_error(b, fname)
  check.raise(string_format("calling '%s' on bad self (Builder expected, got %s)", fname, type(b)))
end

--- Height-pool reference (1-based) of a height in metres (within ±65,536 m, `MAX_COORDINATE`, as
-- every coordinate; a script line names a bad one here, not `finish`), added if new.
function Builder:height(h)
  local m = num_problem(h, "h", "number", -MAX_COORD, MAX_COORD)
  if m then argerr(1, "height", m .. " (psdl.builder.MAX_COORDINATE, as every coordinate)") end
  self:settle()
  return self.hpool:add(h)
end

--- The point of a vertex reference `{x, y, z}` (read API).
-- @tparam integer ref a vertex reference of this builder (1 .. the pool's count; 1 is the
-- reserved dummy vertex); anything else raises `bad argument #1 to 'point' (ref: ...)`
function Builder:point(ref)
  if getmetatable(self) ~= Builder then self_error(self, "point") end
  local pool = self.vpool
  if math_type(ref) ~= "integer" or ref < 1 or ref > pool:count() then -- the common case first: cheap
    argerr(1, "point", num_problem(ref, "ref", "int", 1, pool:count()) or "ref: vertex reference expected")
  end
  local x, y, z = pool:get(ref)
  return { x, y, z }
end

--- Make the document of the last `finish` now if it was not made yet (it reads the pools
-- and the rooms' records, which any further emitter call changes). Called by every call
-- that adds to the builder.
function Builder:settle()
  local f = self.pending_doc
  if f then f() end
end

--- A document table made by `make()` when a caller first reads, writes, iterates or measures
-- it (through its metatable, which is then removed: afterwards it is a plain table). Until
-- then `Builder:settle` (any further building) makes it. `rawget` and `next` see an empty
-- table before the first access. A field written with `rawset` before then is kept: the
-- document made fills only the fields the table does not hold, so `psdl.encode`/`psdl.write`
-- encode what the table holds.
-- @tparam function make returns the document
-- @treturn table the document
function Builder:lazy_document(make)
  local proxy, fill
  proxy, fill = lazy_table(function(t)
    for k, v in pairs(make()) do
      if rawget(t, k) == nil then rawset(t, k, v) end
    end
  end)
  local function force()
    if self.pending_doc == force then self.pending_doc = nil end
    fill()
  end
  self.pending_doc = force
  return proxy
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
    -- a group found before for this kind and name (and not undone by a failed call since)
    local per = self.group_of_name[kind]
    local g = per and per[names]
    if g and self.groups[g.index] == g then return g end
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
  if type(names) == "string" then
    local per = self.group_of_name[kind]
    if not per then per = {}; self.group_of_name[kind] = per end
    per[names] = g
  end
  return g
end

-- Builder:textures(kind, t) for a table t of names (a style entry), remembered per table:
-- the group found before when t still gives the same names and the group is still the
-- builder's (not undone by a failed call, builder/atomic.lua).
local function table_group(b, kind, t)
  local per = b.group_of_table[t]
  local g = per and per[kind]
  if g and b.groups[g.index] == g then
    local names = g.names
    if kind == "single" then
      if (t.name or t[1]) == names[1] then return g end
    else
      local slots, same = M.GROUPS[kind], true
      for i = 1, #slots do
        if (t[slots[i]] or t[i]) ~= names[i] then same = false; break end
      end
      if same then return g end
    end
  end
  g = b:textures(kind, t)
  if not per then per = {}; b.group_of_table[t] = per end
  per[kind] = g
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
  return table_group(b, kind, g)
end

-- ============================================================== the other files

-- Checks a room argument of the read API: raises `bad argument #n to 'fname' (Room of this
-- builder expected, got ...)` at the script's line unless r is a room of builder b (not one
-- of another builder, nor one a failed call made and undid, builder/atomic.lua).
local function room_arg(b, r, n, fname)
  if getmetatable(b) ~= Builder then
    check.raise(string_format("calling '%s' on bad self (Builder expected, got %s)", fname, type(b)))
  end
  if getmetatable(r) == Room and r.builder == b and b.rooms[r.serial] == r then return r end
  local got = type(r)
  if getmetatable(r) == Room then
    got = r.builder == b and "a Room undone by a failed call" or "a Room of another builder"
  end
  argerr(n, fname, "Room of this builder expected, got " .. got)
end

--- The attribute records of a room, in order, as op tables (`type`, `group` (the texture
-- group), `refs` (vertex references) and the type's own fields, as the emitters describe
-- them): copies, changing them changes nothing. The builder's read API for modules that
-- look at what was emitted (psdl.city.blocks, psdl.city.terrain).
-- @tparam Room r a room of this builder
-- @tparam[opt] integer from the first record wanted (1-based; default 1)
-- @treturn table list of op tables
function Builder:attributes(r, from)
  room_arg(self, r, 1, "attributes")
  local m = opt_problem(from, "from", "int", 1)
  if m then argerr(2, "attributes", m) end
  return self.store:ops(r.serial, self.groups, from)
end

--- Number of attribute records of a room so far.
-- @tparam Room r a room of this builder
function Builder:attribute_count(r)
  room_arg(self, r, 1, "attribute_count")
  return self.store:count(r.serial)
end

-- Appends to a room records of the types without parameters (road, sidewalk strip, walkway,
-- crosswalk, road fan, fan), all in group g, given as one flat list or string of 32-bit
-- words (store:push_flat, src/lpsdl_store.c): what Room:push of their op tables one by one
-- adds (builder/intersection.lua, builder/street.lua).
local function push_flat(room, g, list)
  local b = room.builder
  if b.pending_doc then b.pending_doc() end -- a finished document not yet made is made now
  b.store:push_flat(room.serial, g.index, list)
  room:check_budget()
  return room
end

--- For psdl.city only (not part of the API): `street`, `junction` (an intersection) and
-- `road_record` as `trusted.street(b, ...)` etc., the builder's calls on options psdl.city
-- made itself from values it has checked, so that only what could still be wrong is checked
-- again (each function says what), with the public calls' messages; `phase` and `attempt`
-- (builder/atomic.lua) make the city's roads phase one atomic unit and undo a failed node or
-- run in it.
M.trusted = {}

-- Private helpers shared between the builder's files (never part of the API).
-- (ROOM_KEYS: the keys of `Builder:room`; `outline_refs`, an outline already pooled, comes
-- from the builder's own files and psdl.city)
local P = { self_error = self_error, as_group = as_group, pool_flat = pool_flat, trusted_refs = trusted_refs, room_arg = room_arg,
            push_flat = push_flat,
            unknown_key = unknown_key, ROOM_KEYS = { kind = true, tunnel = true, bridge = true, flags = true,
              prop_rule = true, name = true, outline = true, holes = true, outline_refs = true },
            STRIDE = STRIDE, STRIP = STRIP, SURFACE = SURFACE }
for _, part in ipairs({ "room", "street", "intersection", "building", "road_record", "finish", "atomic" }) do
  local exports = require("psdl.builder." .. part)(M, Builder, Room, P)
  for k, v in pairs(exports or {}) do P[k] = v end
end

-- For psdl.city.blocks only (not part of the API), on values it made itself: `block_room(b,
-- opts)` is `Builder:room(opts)` for an outline already pooled (`kind`, `name`,
-- `outline_refs`) without the option scan and the atomic guard (a failed blocks step fails
-- the whole build, which drops the builder); `outline_refs(b, r)` is `Builder:room_outline(r)`
-- without the argument check and the copy (the caller only reads the list).
function M.trusted.block_room(b, opts) return P.new_room(b, opts, true) end
function M.trusted.outline_refs(b, r)
  local own = r.outline
  if own then return own end
  return core.room_outline(b.store, r.serial, b.vpool) -- the store's triangles' boundary, in C
end

M.Builder = Builder
M.Room = Room

return M
