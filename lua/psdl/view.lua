--- The data of the 3D viewer (`psdl view`): a city turned into one binary payload that the
-- browser side (viewer/src, bundled into the HTML template `viewer.html` next to
-- `psdl/core.so` by the build) draws with three.js, and the self-contained HTML page.
--
-- Geometry comes from `psdl.export` (the triangles the game draws at full detail, one
-- primitive per room, material and attribute part). All rooms are merged into one indexed
-- triangle list sorted by material, so the page draws the city in one call per material
-- (one call in all when coloured by role). Each vertex carries its room id and a byte pair
-- (role, attribute type): the page shows and hides attribute types and room kinds and
-- highlights rooms in its shader, without rebuilding buffers.
--
-- Roles (the colour of a triangle when the page is not given the game's textures):
--
-- | role | drawn from |
-- | --- | --- |
-- | ground | `fan`, `road_fan` in rooms without the road or intersection flag |
-- | road | road halves; fans in road rooms (flag 0x08) |
-- | intersection | fans in intersection rooms (flag 0x10) |
-- | walkway, sidewalk, crosswalk, divider | their attribute parts (`road#1`, `divider#0-3`, ...) |
-- | wall | tunnel and junction-tunnel walls, thick walls, tunnel decks |
-- | ceiling | tunnel and junction-tunnel ceilings |
-- | roof, facade, sliver | their attributes |
--
-- Coordinates: the page works in three.js's right-handed, y-up space; the payload holds
-- (x, y, -z) in metres, the game's z mirrored (as `psdl.export` does), so the city is not
-- mirrored and north (+z in the file) is -z on the page.
--
-- Each room's attribute list is JSON text in the buffer `room_attributes` (room r: bytes
-- `room_attributes_offsets[r] .. room_attributes_offsets[r + 1] - 1`, 0-based), read by the
-- page when the room is shown.
--
-- Payload layout (little-endian): `"PSDLVIEW"`, u32 format version (1), u32 byte length of
-- the JSON that follows, the JSON (UTF-8), zero padding to a multiple of 4, then the
-- buffers the JSON's `buffers` names by byte offset (from the start of the buffer area),
-- element type and count.
-- @module psdl.view

local export = require "psdl.export"
local render = require "psdl.render"

local string, table, math, io, os, package = string, table, math, io, os, package
local type, ipairs, pairs, tostring, tonumber, error, require, pcall, next =
  type, ipairs, pairs, tostring, tonumber, error, require, pcall, next
local floor, huge, abs = math.floor, math.huge, math.abs
local pack, concat, string_format = string.pack, table.concat, string.format

local M = {}

--- Payload format version (the page refuses others).
M.FORMAT = 1

--- Roles in the order of their codes: `name`, `label`, `color` (0xRRGGBB). The shared
-- ones use the colours of `psdl.render`'s map.
M.roles = {
  { name = "ground", label = "ground" },
  { name = "road", label = "road" },
  { name = "intersection", label = "intersection" },
  { name = "walkway", label = "walkway" },
  { name = "sidewalk", label = "sidewalk, curb" },
  { name = "crosswalk", label = "crosswalk" },
  { name = "divider", label = "divider" },
  { name = "wall", label = "tunnel wall" },
  { name = "ceiling", label = "tunnel ceiling", color = 0x4A5468 },
  { name = "roof", label = "roof" },
  { name = "facade", label = "facade", color = 0xCDB892 },
  { name = "sliver", label = "sliver", color = 0x9C8E78 },
}
do
  local map = {}
  for _, c in ipairs(render.classes) do map[c.name] = c.color >> 8 end
  map.tunnel = nil
  for _, r in ipairs(M.roles) do r.color = r.color or map[r.name] or 0xFF00FF end
end
local ROLE = {}
for i, r in ipairs(M.roles) do ROLE[r.name] = i - 1 end

--- Attribute types in the order of their codes (the page's type layers).
M.types = { "road", "divided_road", "sidewalk_strip", "walkway", "crosswalk", "road_fan", "fan", "roof",
  "facade", "sliver", "tunnel", "junction_tunnel", "facade_bound" }
local TYPE = {}
for i, t in ipairs(M.types) do TYPE[t] = i - 1 end

--- Room kinds in the order of their codes (the page's kind layers).
M.kinds = { "road", "intersection", "block", "tunnel/warp" }

--- The kind of a room from its flags (§1.6): warp (0x40) or subterranean (0x02) rooms are
-- "tunnel/warp", then intersection (0x10), road (0x08), anything else "block".
-- @tparam integer flags
-- @treturn integer kind code (0-based index into `kinds`)
function M.kind(flags)
  flags = flags or 0
  if flags & 0x42 ~= 0 then return 3 end
  if flags & 0x10 ~= 0 then return 1 end
  if flags & 0x08 ~= 0 then return 0 end
  return 2
end

-- Attribute part (from psdl.export with `parts`) -> role; "surface": by the room's flags.
local PART = {
  ["road#0"] = "road", ["road#1"] = "sidewalk",
  ["divided_road#0"] = "road", ["divided_road#1"] = "sidewalk",
  ["divider#0"] = "divider", ["divider#1"] = "divider", ["divider#2"] = "divider", ["divider#3"] = "divider",
  ["sidewalk_strip#1"] = "sidewalk", ["walkway#0"] = "walkway", ["crosswalk#2"] = "crosswalk",
  ["road_fan#0"] = "surface", ["fan#0"] = "surface", ["roof#0"] = "roof", ["facade#0"] = "facade",
  ["sliver#0"] = "sliver",
  ["tunnel#0"] = "wall", ["tunnel#1"] = "wall", ["tunnel#2"] = "ceiling", ["tunnel#3"] = "wall",
  ["tunnel#4"] = "wall", ["tunnel#5"] = "wall",
  ["junction_tunnel#0"] = "wall", ["junction_tunnel#2"] = "ceiling",
}

local function finite(x) return type(x) == "number" and x - x == 0 end
local function num(x) if finite(x) then return x end return 0 end

------------------------------------------------------------------------ buffers

-- Pack a flat list of numbers with one format letter, in chunks (string.pack takes at most
-- a few thousand arguments at once).
local function pack_list(letter, list, n)
  local parts = {}
  local CH = 2048
  local fmt = "<" .. letter:rep(CH)
  local unpack = table.unpack
  local i = 1
  while i <= n do
    local j = i + CH - 1
    if j > n then
      j = n
      fmt = "<" .. letter:rep(j - i + 1)
    end
    parts[#parts + 1] = pack(fmt, unpack(list, i, j))
    i = j + 1
  end
  return concat(parts)
end

local ELEMENT = { f32 = { "f", 4 }, u32 = { "I4", 4 }, u16 = { "I2", 2 }, u8 = { "B", 1 } }

-- Collects buffers: add(name, kind, list, n) -> entry in `meta`.
local function buffer_set()
  local set = { parts = {}, meta = {}, size = 0 }
  function set.add_bytes(name, bytes)
    local pad = (-#bytes) % 4
    set.meta[name] = { offset = set.size, type = "u8", count = #bytes }
    set.parts[#set.parts + 1] = bytes
    if pad > 0 then set.parts[#set.parts + 1] = ("\0"):rep(pad) end
    set.size = set.size + #bytes + pad
  end
  function set.add(name, kind, list, n)
    local e = ELEMENT[kind]
    local bytes = pack_list(e[1], list, n)
    local pad = (-#bytes) % 4
    set.meta[name] = { offset = set.size, type = kind, count = n }
    set.parts[#set.parts + 1] = bytes
    if pad > 0 then set.parts[#set.parts + 1] = ("\0"):rep(pad) end
    set.size = set.size + #bytes + pad
  end
  return set
end

------------------------------------------------------------------------ scene

-- Where a validation problem is, in page coordinates: {x, y, -z}, or nil.
local function problem_at(doc, p, centers2, rooms_y)
  local x, z, r
  if finite(p.x) and finite(p.z) then
    x, z = p.x, p.z -- the validator's own position (drivability rules)
  else
    x, z, r = render.problem_place(doc, p, centers2)
  end
  if not x then return nil end
  local y
  local path = type(p.path) == "string" and p.path or ""
  local room = p.room or tonumber(path:match("^rooms%[(%d+)%]"))
  if room and rooms_y[room] then y = rooms_y[room] end
  if not y then
    -- the vertex nearest in plan
    local best = huge
    for _, v in ipairs(doc.vertices or {}) do
      if finite(v[1]) and finite(v[2]) and finite(v[3]) then
        local d = (v[1] - x) ^ 2 + (v[3] - z) ^ 2
        if d < best then best, y = d, v[2] end
      end
    end
  end
  return { num(x), num(y), -num(z) }, r
end

-- The city's drawn mesh merged over rooms, indices bucketed by material, into buf:
-- `position`, `room`, `info` (role, type codes), `uv` (with images), `index`. Returns the
-- draw groups and the number of drawn vertices.
local function mesh_buffers(buf, mesh, nrooms, want_uv)
  local pos, room_of, info, uv = {}, {}, {}, {}
  local nv = 0
  local by_mat = {}
  for _, g in ipairs(mesh.groups) do
    local r = g.room
    local flags = g.flags or 0
    for _, prim in ipairs(g.prims) do
      local part = prim.part or ""
      local role = PART[part]
      if role == "surface" then
        role = (flags & 0x10 ~= 0) and "intersection" or ((flags & 0x08 ~= 0) and "road" or "ground")
      end
      local rc = ROLE[role] or ROLE.wall
      local tc = TYPE[part:match("^([%w_]+)#")] or 0
      if part:sub(1, 8) == "divider#" then tc = TYPE.divided_road end
      local p, u = prim.pos, prim.uv
      -- one vertex per distinct point (and UV) of the primitive: strips and facades
      -- repeat the points they share (about 40% of them in a city)
      local remap, seen = {}, {}
      for i = 0, prim.nv - 1 do
        local x, y, z = p[3 * i + 1], p[3 * i + 2], p[3 * i + 3]
        local key = want_uv and pack("<fffff", x, y, z, u[2 * i + 1], u[2 * i + 2]) or pack("<fff", x, y, z)
        local at = seen[key]
        if not at then
          at = nv
          seen[key] = at
          local k = 3 * nv
          pos[k + 1], pos[k + 2], pos[k + 3] = x, y, -z
          room_of[nv + 1] = r
          info[2 * nv + 1], info[2 * nv + 2] = rc, tc
          if want_uv then uv[2 * nv + 1], uv[2 * nv + 2] = u[2 * i + 1], u[2 * i + 2] end
          nv = nv + 1
        end
        remap[i] = at
      end
      local list = by_mat[prim.material]
      if not list then list = {}; by_mat[prim.material] = list end
      local n = #list
      local idx = prim.idx
      for i = 1, #idx do list[n + i] = remap[idx[i]] end
    end
  end
  local index, groups = {}, {}
  for m = 1, #mesh.materials do
    local list = by_mat[m]
    if list and #list > 0 then
      local start = #index
      table.move(list, 1, #list, start + 1, index)
      groups[#groups + 1] = { material = m - 1, start = start, count = #list }
    end
  end
  buf.add("position", "f32", pos, 3 * nv)
  buf.add("room", nrooms < 65536 and "u16" or "u32", room_of, nv)
  buf.add("info", "u8", info, 2 * nv)
  if want_uv then buf.add("uv", "f32", uv, 2 * nv) end
  buf.add("index", nv < 65536 and "u16" or "u32", index, #index)
  return groups, nv
end

-- The description of one attribute as the page lists it (`value` is the texture value in
-- effect, 0 for none). A facade bound also adds its four corners (base left, base right,
-- top right, top left) to fb (flat page coordinates, fb.n of them) and room r to fb.rooms.
local function attribute_item(doc, attr, t, value, triangles, r, fb)
  local V, H = doc.vertices or {}, doc.heights or {}
  local tex = value ~= 0 and doc.textures and doc.textures[value] or nil
  local item = { type = t, triangles = triangles, vertices = type(attr.vertices) == "table" and #attr.vertices or 0 }
  if t == "texture" then item.value = value; item.texture = type(tex) == "string" and tex or nil
  elseif type(tex) == "string" and t ~= "facade_bound" then item.texture = tex end
  if t == "divided_road" then
    item.divider = { type = attr.divider_type, texture = attr.divider_texture,
      texture_name = doc.textures and type(doc.textures[attr.divider_texture or 0]) == "string"
        and doc.textures[attr.divider_texture] or nil, value = num(attr.divider_value) }
  elseif t == "tunnel" or t == "junction_tunnel" then
    item.flags = attr.flags; item.height = num(attr.height1)
  elseif t == "facade" then
    item.repeats = { attr.u_repeat, attr.v_repeat }
  elseif t == "facade_bound" and type(attr.vertices) == "table" then
    local a0, a1 = V[attr.vertices[1]], V[attr.vertices[2]]
    local top = H[attr.top]
    if a0 and a1 and finite(top) then
      local nfb = fb.n
      for _, q in ipairs { { a0, a0[2] }, { a1, a1[2] }, { a1, top }, { a0, top } } do
        fb[nfb + 1], fb[nfb + 2], fb[nfb + 3] = num(q[1][1]), num(q[2]), -num(q[1][3])
        nfb = nfb + 3
      end
      fb.n = nfb
      fb.rooms[#fb.rooms + 1] = r
    end
    item.light = attr.light
  end
  return item
end

-- The rooms as the page lists them, with their attributes as JSON text in one buffer
-- (room r: bytes offsets[r] + 1 .. offsets[r + 1]; the page parses a room's list when it is
-- shown, not all at the start: they are most of the description, 5 of 5.2 MB for a
-- London-scale city) and the facade bounds as line segments, into buf. Returns the rooms,
-- their plan centres and their mean heights (problem markers are placed with them).
local function room_records(buf, doc, mesh, cjson)
  local V = doc.vertices or {}
  local nrooms = #doc.rooms
  local fb = { n = 0, rooms = {} }
  local rooms, centers2, rooms_y = {}, {}, {}
  local road_of = {}
  for k, rec in ipairs(doc.roads or {}) do
    for _, id in ipairs(type(rec.rooms) == "table" and rec.rooms or {}) do
      local a = math.tointeger(id) and abs(id)
      if a then
        road_of[a] = road_of[a] or {}
        local l = road_of[a]
        if l[#l] ~= k - 1 then l[#l + 1] = k - 1 end
      end
    end
  end
  local stats_attr = mesh.stats.attributes or {}
  cjson.encode_sparse_array(true)
  local attr_json, attr_off = {}, { 0 }
  for r, room in ipairs(doc.rooms) do
    local per, nb = {}, {}
    local sy, ny = 0, 0
    for k, p in ipairs(room.perimeter or {}) do
      local vi = type(p) == "table" and math.tointeger(p.vertex) or nil
      per[k] = (vi and V[vi]) and vi - 1 or -1
      nb[k] = type(p) == "table" and math.tointeger(p.neighbour) or 0
      local v = vi and V[vi]
      if v and finite(v[2]) then sy, ny = sy + v[2], ny + 1 end
    end
    local cx, cz = render.room_center(doc, room)
    local cy = ny > 0 and sy / ny or 0
    rooms_y[r] = cy
    if cx and finite(cx) and finite(cz) then centers2[r] = { cx, cz } end
    local attrs = {}
    local value = 0
    local counts = stats_attr[r] or {}
    for a, attr in ipairs(room.attributes or {}) do
      local t = type(attr) == "table" and attr.type or "?"
      if t == "texture" then value = math.tointeger(attr.value) or 0 end
      attrs[a] = attribute_item(doc, attr, t, value, counts[a] or 0, r, fb)
    end
    rooms[r] = {
      id = r, flags = room.flags or 0, prop_rule = room.prop_rule or 0, kind = M.kind(room.flags),
      center = { num(cx or 0), cy, -num(cz or 0) }, perimeter = per, neighbours = nb,
      roads = road_of[r] or {},
    }
    attr_json[r] = cjson.encode(attrs)
    attr_off[r + 1] = attr_off[r] + #attr_json[r]
  end
  buf.add_bytes("room_attributes", concat(attr_json))
  buf.add("room_attributes_offsets", "u32", attr_off, nrooms + 1)
  buf.add("facade_bounds", "f32", fb, fb.n)
  buf.add("facade_bound_rooms", nrooms < 65536 and "u16" or "u32", fb.rooms, #fb.rooms)
  return rooms, centers2, rooms_y
end

-- The road records as the page lists them (vertex references 0-based, -1 for a bad one).
local function road_records(doc)
  local V = doc.vertices or {}
  local roads = {}
  for k, rec in ipairs(doc.roads or {}) do
    local function list(t) return type(t) == "table" and t or {} end
    local function vlist(t)
      local out = {}
      for i, v in ipairs(list(t)) do out[i] = (math.tointeger(v) and V[v]) and v - 1 or -1 end
      return out
    end
    local lanes_l, lanes_r = {}, {}
    for i, x in ipairs(list(rec.lanes_left)) do lanes_l[i] = num(x) end
    for i, x in ipairs(list(rec.lanes_right)) do lanes_r[i] = num(x) end
    roads[k] = { id = k, flags = rec.flags or 0, lanes_left = lanes_l, lanes_right = lanes_r,
      stop_lights = list(rec.stop_lights), rooms = list(rec.rooms),
      start_crossroads = vlist(rec.start_crossroads), end_crossroads = vlist(rec.end_crossroads) }
  end
  return roads
end

-- The validation problems as the page lists them, each placed (`at`) where it is.
local function problem_list(doc, opts, centers2, rooms_y)
  local problems = opts.problems
  if problems == nil then
    local _
    _, problems = require("psdl").validate(doc, { name = opts.name })
  end
  local plist = {}
  for _, p in ipairs(problems or {}) do
    if type(p) == "table" then
      local at, r = problem_at(doc, p, centers2, rooms_y)
      plist[#plist + 1] = { severity = p.severity == "error" and "error" or "warning", rule = tostring(p.rule or ""),
        path = tostring(p.path or ""), message = tostring(p.message or ""),
        room = math.tointeger(p.room) or r or (tonumber(tostring(p.path or ""):match("^rooms%[(%d+)%]"))), at = at }
    end
  end
  return plist
end

-- The package's AI road network (.bai) into buf: every lane centre line as segments, side
-- by side (`lanes`). Returns the description's `bai` entry.
local function bai_lanes(buf, bai)
  local seg, n = {}, 0
  local count = 0
  for _, road in ipairs(bai.roads or {}) do
    for _, side in ipairs { road.side_a, road.side_b } do
      for _, line in ipairs(type(side) == "table" and side.lanes or {}) do
        count = count + 1
        for k = 1, #line - 1 do
          local a, b = line[k], line[k + 1]
          seg[n + 1], seg[n + 2], seg[n + 3] = num(a[1]), num(a[2]), -num(a[3])
          seg[n + 4], seg[n + 5], seg[n + 6] = num(b[1]), num(b[2]), -num(b[3])
          n = n + 6
        end
      end
    end
  end
  buf.add("lanes", "f32", seg, n)
  return { roads = #(bai.roads or {}), lanes = count, intersections = #(bai.intersections or {}) }
end

-- The package's visibility sets (.cpvs) into buf: room r sees ids[offsets[r] + 1 ..
-- offsets[r + 1]]. Returns the description's `cpvs` entry.
local function cpvs_sets(buf, cpvs, nrooms)
  local ids, offsets = {}, { 0 }
  for r = 1, nrooms do
    local row = cpvs.rows and cpvs.rows[r]
    for _, id in ipairs(type(row) == "table" and row.visible or {}) do ids[#ids + 1] = id end
    offsets[r + 1] = #ids
  end
  buf.add("cpvs_ids", nrooms < 65536 and "u16" or "u32", ids, #ids)
  buf.add("cpvs_offsets", "u32", offsets, #offsets)
  return { rooms = cpvs.rooms, rows = nrooms }
end

-- The materials as the page lists them; the texels of a .tex image go into buf.
local function material_list(buf, mesh, images)
  local materials = {}
  for i, m in ipairs(mesh.materials) do
    materials[i] = { name = m.name, texture = m.texture }
    local img = m.texture and images and images[m.texture] or nil
    if type(img) == "string" then
      materials[i].image = img
    elseif type(img) == "table" then
      -- texels of a .tex level: the page turns them into RGBA
      local raw = { width = img.width, height = img.height, format = img.format, clamp_u = img.clamp_u,
        clamp_v = img.clamp_v, texels = "texels" .. i }
      buf.add_bytes(raw.texels, img.texels)
      if img.palette then raw.palette = "palette" .. i; buf.add_bytes(raw.palette, img.palette) end
      materials[i].raw = raw
    end
  end
  return materials
end

--- Build the viewer payload of a document.
-- @tparam table doc
-- @tparam[opt] table opts `name` (shown as the title), `problems` (a list as `psdl.validate`
--   returns it; default: validate `doc`), `images` (`{[texture name] = image}`: those
--   materials are drawn with the image, a data URL (PNG, JPEG) or the texels of one level
--   of a `.tex`, `{width, height, format (§9: 1, 6, 14, 15, 16, 17, 18), texels, palette
--   (BGRA), clamp_u, clamp_v}`), `watch` (the page polls the server that sent it
--   for new builds: `{interval = ms}`), `error` (a build error to show over the city:
--   `{message =, file =, line =}`), `bai` (the city's AI road network as `psdl.bai` reads
--   it: its lanes become a layer), `cpvs` (its visibility sets as `psdl.cpvs` reads them:
--   the page shows what the selected room sees)
-- @treturn string payload bytes (see the module description)
-- @treturn table stats `{rooms, vertices (drawn), triangles, materials, bytes, problems}`
function M.payload(doc, opts)
  if type(doc) ~= "table" or type(doc.rooms) ~= "table" then
    error("bad argument #1 to 'payload' (document expected, got " .. type(doc) .. ")", 2)
  end
  opts = opts or {}
  local cjson = require "cjson"
  local mesh = export.build(doc, { parts = true, attribute_counts = true })
  local V = doc.vertices or {}
  local nrooms = #doc.rooms

  local buf = buffer_set()
  local want_uv = type(opts.images) == "table" and next(opts.images) ~= nil
  local groups, nv = mesh_buffers(buf, mesh, nrooms, want_uv)
  -- the city's vertices (perimeters, links and road paths are drawn from them)
  local verts = {}
  for i, v in ipairs(V) do
    verts[3 * i - 2], verts[3 * i - 1], verts[3 * i] = num(v[1]), num(v[2]), -num(v[3])
  end
  buf.add("vertices", "f32", verts, 3 * #V)
  local rooms, centers2, rooms_y = room_records(buf, doc, mesh, cjson)
  local roads = road_records(doc)
  local plist = problem_list(doc, opts, centers2, rooms_y)
  local lanes_meta = type(opts.bai) == "table" and bai_lanes(buf, opts.bai) or nil
  local cpvs_meta = type(opts.cpvs) == "table" and cpvs_sets(buf, opts.cpvs, nrooms) or nil
  local materials = material_list(buf, mesh, opts.images)

  local roles = {}
  for i, r in ipairs(M.roles) do roles[i] = { name = r.name, label = r.label, color = r.color } end
  local b = doc.bounds
  local meta = {
    format = M.FORMAT, name = opts.name or "city", generator = "psdlkit " .. tostring(require("psdl")._VERSION),
    roles = roles, types = M.types, kinds = M.kinds, materials = materials, groups = groups,
    rooms = rooms, roads = roads, problems = plist, textures = doc.textures and #doc.textures or 0,
    stats = { rooms = nrooms, vertices = #V, drawn_vertices = nv, triangles = mesh.stats.triangles,
      materials = #mesh.materials, roads = #roads, nonfinite = mesh.stats.nonfinite },
    buffers = buf.meta, watch = opts.watch, error = opts.error, bai = lanes_meta, cpvs = cpvs_meta,
    bounds = b and b.min and b.max and { min = { num(b.min[1]), num(b.min[2]), -num(b.max[3]) },
      max = { num(b.max[1]), num(b.max[2]), -num(b.min[3]) } } or nil,
  }
  cjson.encode_sparse_array(true)
  local json = cjson.encode(meta)
  -- cjson writes empty tables as {}: the page reads every list with a fallback
  local head = "PSDLVIEW" .. pack("<I4I4", M.FORMAT, #json) .. json
  head = head .. ("\0"):rep((-#head) % 4)
  local bytes = head .. concat(buf.parts)
  return bytes, { rooms = nrooms, vertices = nv, triangles = mesh.stats.triangles, materials = #mesh.materials,
    bytes = #bytes, problems = #plist }
end

------------------------------------------------------------------------ the page

--- Where the bundled page template is: `viewer.html` next to `psdl/core.so` (the build
-- writes it there from viewer/ when node and npm are installed).
-- @treturn[1] string path
-- @return[2] nil
-- @treturn[2] string message
function M.template_path()
  local so = package.searchpath("psdl.core", package.cpath)
  if not so then return nil, "cannot find psdl/core.so (is psdlkit built?)" end
  local path = so:gsub("[^/]*$", "") .. "viewer.html"
  local f = io.open(path, "rb")
  if not f then
    return nil, path .. " is missing: the viewer is built with the project when node and npm are "
      .. "installed (scripts/deps.sh installs them; then rebuild: cmake --build build)"
  end
  f:close()
  return path
end

local template_cache = {}

--- The page template (cached).
-- @treturn[1] string HTML with the marker `<!--PSDL:DATA-->`
-- @return[2] nil
-- @treturn[2] string message
function M.template()
  local path, err = M.template_path()
  if not path then return nil, err end
  if template_cache[path] then return template_cache[path] end
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  if not text:find("<!--PSDL:DATA-->", 1, true) then return nil, path .. ": no <!--PSDL:DATA--> marker" end
  template_cache[path] = text
  return text
end

local function b64(bytes)
  local mime = require "mime" -- lua-socket's C base64
  return (mime.b64(bytes))
end

--- Compress a payload the way the page reads it (zlib format, lua-zlib; the page inflates
-- it with the browser's DecompressionStream).
-- @tparam string payload
-- @treturn string
function M.deflate(payload)
  local zlib = require "zlib"
  return (zlib.deflate(1)(payload, "finish"))
end

local function html_escape(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

--- The self-contained page for a payload.
-- @tparam string payload from `payload`
-- @tparam[opt] string title
-- @tparam[opt] boolean deflated `payload` is already compressed (`deflate`)
-- @treturn[1] string HTML
-- @return[2] nil
-- @treturn[2] string message (the template is missing)
function M.page(payload, title, deflated)
  local tpl, err = M.template()
  if not tpl then return nil, err end
  local data = '<script id="psdl-data" type="application/octet-stream">' .. b64(deflated and payload or M.deflate(payload)) .. "</script>"
  local s, e = tpl:find("<!--PSDL:DATA-->", 1, true)
  local out = tpl:sub(1, s - 1) .. data .. tpl:sub(e + 1)
  if title then
    out = out:gsub("<title>[^<]*</title>", function() return "<title>" .. html_escape(title) .. " - psdl view</title>" end, 1)
  end
  return out
end

--- Build the page of a document.
-- @tparam table doc
-- @tparam[opt] table opts as for `payload`
-- @treturn[1] string HTML
-- @treturn[1] table stats (as `payload`, `bytes` = the page's size)
-- @return[2] nil
-- @treturn[2] string message
function M.html(doc, opts)
  opts = opts or {}
  local bytes, stats = M.payload(doc, opts)
  local html, err = M.page(bytes, opts.name)
  if not html then return nil, err end
  stats.payload = stats.bytes
  stats.bytes = #html
  return html, stats
end

return M
