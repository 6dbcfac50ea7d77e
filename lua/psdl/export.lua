--- Export a city as triangles, the way the game draws it at full detail (LOD 3, the
-- closest level: psdl-format.md §4.4), to OBJ (+ .mtl), glTF 2.0 (.gltf) or GLB.
--
-- `build(doc, opts)` turns a document into meshes: per room (or merged), one primitive per
-- material, each a list of positions, texture coordinates and triangles. The writers
-- (`obj`, `gltf`, `glb`) turn a mesh into files; `export(doc, path, opts)` does both.
--
-- What is drawn, per attribute, with `s` sections (strips) or `k` vertices (fans), and
-- the triangle count at full detail (the count the specs check):
--
-- | attribute | geometry (texture slot from the current group base n) | triangles |
-- | --- | --- | --- |
-- | road | two road halves meeting at the curbs' midpoint (n); per side with a sidewalk (outer ≠ curb in the first section) the sidewalk from the curb raised 0.15 m to the outer edge, and the curb face (n+1) | 4(s-1) + 4(s-1) per sidewalk side |
-- | divided_road | road halves curb→median (n), sidewalks and curb faces as a road, and the divider (slots D..D+3 of `divider_texture` D): flat (D+1), elevated (side walls D, bevels D+1, top D+2), wedge 1.0 m high, 0.4 m in (sides D+1, top D+2); caps D+3 (end cap D+2 without a start cap, as the game does); other types: none | as road + flat 2(s-1), elevated 10(s-1), wedge 6(s-1), + 2 per cap |
-- | sidewalk_strip | curb face and walk from the raised curb to the outer edge (n+1); an end cap is one triangle | 4(p-1) for p pairs; cap 1 |
-- | walkway | quad strip (n) | 2(p-1) |
-- | crosswalk | one quad (n+2) | 2 |
-- | road_fan, fan | fan as stored (n) | k-2 |
-- | roof | fan at `heights[height]` (n) | k-2 |
-- | facade | vertical quad at the base vertices' x, z from `heights[bottom]` to `heights[top]` (n) | 2 |
-- | sliver | wall from each base vertex up to `heights[top]` (n); a base at the top gives a triangle | 2 (1, or 0) |
-- | tunnel | walls `height1` high along the outer edges of the next road, divided road or walkway (skipping one texture attribute): left (n, flag 0x1), right (n+1, flag 0x2), each bulging out `height1`·0.333 at ¼ and ¾ height with 0x2000 (three faces); 0x4000 draws the walls from both sides; with 0x4 (and not 0x2000) a thick wall: the outer line `height1`·0.333 further out, its outer face from `height1`/4 below the road to the top and the top (n+4 left, n+3 right), end caps 0x10/0x20 (left), 0x40/0x80 (right) back to the road edge, and the deck under the road between the outer lines (n+5); ceiling (n+2): curved with 0x100 (rising 1.5 m at the quarters, 2 m in the middle), else flat with 0x8 | per side: 2(s-1) (sloped 6(s-1)), doubled with 0x4000; thick: 4(s-1) per side + 2 per cap, deck 2(s-1); ceiling curved 8(s-1), flat 2(s-1) |
-- | junction_tunnel | a wall `height1` high (n) on each perimeter edge j-1 → j whose bit (j & 31) is set in `wall_mask`, from both sides with 0x4000 unless 0x4; with 0x8 a ceiling fan (n+2) from perimeter point `ceiling_start` backwards at the highest corner + `height1` | 2 per wall (4 from both sides); ceiling (points - 2) |
-- | texture, facade_bound, unknown | nothing | 0 |
--
-- Strips are drawn only under a texture value other than 0 (and not before the room's first
-- texture attribute); facades, slivers and roofs are drawn untextured there. Tunnels draw
-- nothing when `height1` is 0. (The game's own drawing of tunnels is not documented in the
-- format notes; the geometry above follows the collision code and the flag table of §2.4.)
--
-- UVs follow §4.3: `ArcMap` lengthwise for strips, planar 4 m for sidewalk strips, 8 m for
-- fans and roofs, the stored repeats for facades, crosswalk and sliver rules of §2.4; tunnel
-- walls and ceilings repeat once per `height1` along the strip.
--
-- Coordinates: the game is left-handed (Direct3D); glTF and OBJ are right-handed, Y up. By
-- default the writers mirror z (x, y, -z) and reverse each triangle's winding, so the city
-- is not mirrored and the faces the game draws are front faces (counter-clockwise). With
-- `keep_axes` the file's coordinates are written unchanged (the city comes out mirrored).
-- @module psdl.export

local string, table, math, io, os = string, table, math, io, os
local type, ipairs, tostring, tonumber, error, require, pcall, setmetatable, utf8 =
  type, ipairs, tostring, tonumber, error, require, pcall, setmetatable, utf8
local floor, sqrt, huge = math.floor, math.sqrt, math.huge
local string_format, pack = string.format, string.pack

local M = {}

--- Height of the curb line above the road (§2.4 0x0).
M.CURB_RISE = 0.15
--- Wedge divider: top height and inset (§2.4 0x8).
M.WEDGE_HEIGHT, M.WEDGE_INSET = 1.0, 0.4
--- Tunnel railing offset per metre of height (§2.4 0x9).
M.RAILING_OFFSET = 0.333

------------------------------------------------------------------------ room lists

--- Parse a list of rooms: `"1-20,35"` -> `{1, 2, ..., 20, 35}` (sorted, no duplicates).
-- @tparam string text items `N` or `A-B`, separated by commas (spaces allowed)
-- @tparam[opt] integer nrooms the highest room id; ids past it are an error when given
-- @treturn table list of room ids
-- @return[2] nil, message
function M.parse_rooms(text, nrooms)
  if type(text) ~= "string" then error("bad argument #1 to 'parse_rooms' (string expected)", 2) end
  local set, list = {}, {}
  local any = false
  for item in (text .. ","):gmatch("([^,]*),") do
    item = item:gsub("%s", "")
    if item ~= "" then
      any = true
      local a, b = item:match("^(%d+)%-(%d+)$")
      if not a then a = item:match("^(%d+)$"); b = a end
      a, b = math.tointeger(tonumber(a)), math.tointeger(tonumber(b))
      if not a or not b then return nil, string_format("bad room list item %q (use N or A-B)", item) end
      if a < 1 or b < a then return nil, string_format("bad room range %q", item) end
      if nrooms and b > nrooms then
        return nil, string_format("room %d does not exist (the city has rooms 1-%d)", b, nrooms)
      end
      if b - a > 1000000 then return nil, string_format("room range %q is too large", item) end
      for r = a, b do
        if not set[r] then set[r] = true; list[#list + 1] = r end
      end
    end
  end
  if not any then return nil, "empty room list" end
  table.sort(list)
  return list
end

------------------------------------------------------------------------ materials

-- FNV-1a over the bytes of a string.
local function fnv1a(s)
  local h = 2166136261
  for i = 1, #s do
    h = ((h ~ s:byte(i)) * 16777619) & 0xFFFFFFFF
  end
  return h
end

local function hsv(h, s, v)
  local i = floor(h * 6)
  local f = h * 6 - i
  local p, q, t = v * (1 - s), v * (1 - f * s), v * (1 - (1 - f) * s)
  i = i % 6
  if i == 0 then return v, t, p elseif i == 1 then return q, v, p elseif i == 2 then return p, v, t
  elseif i == 3 then return p, q, v elseif i == 4 then return t, p, v else return v, p, q end
end

--- A plain colour for a texture name, the same for the same name everywhere.
-- @tparam string name
-- @treturn table `{r, g, b}` in 0..1
function M.color(name)
  local h = fnv1a(name)
  local r, g, b = hsv((h % 3600) / 3600, 0.35 + ((h >> 12) % 40) / 100, 0.55 + ((h >> 20) % 40) / 100)
  local function round(x) return floor(x * 1000 + 0.5) / 1000 end
  return { round(r), round(g), round(b) }
end

------------------------------------------------------------------------ geometry helpers

local ZERO = { 0, 0, 0 }

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return sqrt(dx * dx + dy * dy + dz * dz)
end

local function flat_dist(a, b)
  local dx, dz = a[1] - b[1], a[3] - b[3]
  return sqrt(dx * dx + dz * dz)
end

local function up(p, h) return { p[1], p[2] + h, p[3] } end

local function mid(a, b)
  return { (b[1] - a[1]) * 0.5 + a[1], (b[2] - a[2]) * 0.5 + a[2], (b[3] - a[3]) * 0.5 + a[3] }
end

local function normalized(x, y, z)
  local m = x * x + y * y + z * z
  if m == 0 then return 0, 0, 0 end
  m = 1 / sqrt(m)
  return x * m, y * m, z * m
end

------------------------------------------------------------------------ the builder

local Builder = {}
Builder.__index = Builder

-- Material index for a key (texture name, or a special key), created on first use.
function Builder:material(key, display, name)
  local m = self.mat_by_key[key]
  if m then return m end
  local list = self.materials
  m = #list + 1
  local color = name and M.color(name) or (key == "#none" and { 0.6, 0.6, 0.6 } or { 1, 0, 1 })
  list[m] = { name = display, texture = name, color = color, key = key }
  self.mat_by_key[key] = m
  return m
end

-- Material for texture slot `slot` (1-based).
function Builder:slot_material(slot)
  local cache = self.slot_cache
  local m = cache[slot]
  if m then return m end
  local tex = self.doc.textures
  local name = slot >= 1 and tex[slot] or nil
  if type(name) == "string" then
    m = self:material(name, name, name)
  elseif name == false then
    m = self:material("#empty:" .. slot, string_format("(empty slot %d)", slot))
  else
    m = self:material("#missing:" .. slot, string_format("(missing slot %d)", slot))
  end
  cache[slot] = m
  return m
end

-- Material of the current group at offset (untextured when the value is 0).
function Builder:tex(offset)
  if self.parts then self.part = self.atype .. "#" .. offset end
  if self.value == 0 then return self:material("#none", "(untextured)") end
  return self:slot_material(self.value + offset)
end

-- Start a primitive of material m: vertices go to the current group's bucket (one per
-- material, or per material and part with the `parts` option).
function Builder:begin(m)
  local group = self.group
  local key = m
  if self.parts then key = m .. "|" .. self.part end
  local prim = group.by_mat[key]
  if not prim then
    prim = { material = m, part = self.parts and self.part or nil, pos = {}, uv = {}, idx = {}, nv = 0 }
    group.by_mat[key] = prim
    group.prims[#group.prims + 1] = prim
  end
  self.prim = prim
  self.first = prim.nv
end

-- Largest finite 32-bit float: positions and UVs are written as such, so a larger double
-- (a height added to a coordinate near the limit) would become infinity in the file.
local F32_MAX = 3.4028234663852886e38

-- A non-finite number (NaN, infinity: a corrupt file), or one beyond the 32-bit float range,
-- becomes 0, which JSON, OBJ and glTF can hold.
local function finite(x)
  if x - x ~= 0 or x > F32_MAX or x < -F32_MAX then return 0 end
  return x
end

local function out_of_range(x)
  return x - x ~= 0 or x > F32_MAX or x < -F32_MAX
end

function Builder:vertex(p, s, t)
  local prim = self.prim
  local n = prim.nv
  local pos, uv = prim.pos, prim.uv
  local x, y, z = p[1], p[2], p[3]
  if out_of_range(x) or out_of_range(y) or out_of_range(z) or out_of_range(s) or out_of_range(t) then
    x, y, z, s, t = finite(x), finite(y), finite(z), finite(s), finite(t)
    self.nonfinite = (self.nonfinite or 0) + 1
  end
  pos[3 * n + 1], pos[3 * n + 2], pos[3 * n + 3] = x, y, z
  uv[2 * n + 1], uv[2 * n + 2] = s, t
  prim.nv = n + 1
end

function Builder:count(n)
  self.tris = self.tris + n
end

-- Triangle strip over the vertices since begin: (i, i+1, i+2), odd ones (i+1, i, i+2).
function Builder:end_strip()
  local prim = self.prim
  local first, n = self.first, prim.nv - self.first
  local idx = prim.idx
  local k = #idx
  for i = 0, n - 3 do
    local a = first + i
    if i % 2 == 1 then
      idx[k + 1], idx[k + 2], idx[k + 3] = a + 1, a, a + 2
    else
      idx[k + 1], idx[k + 2], idx[k + 3] = a, a + 1, a + 2
    end
    k = k + 3
  end
  if n >= 3 then self:count(n - 2) end
end

-- Triangle fan: (0, i, i+1).
function Builder:end_fan()
  local prim = self.prim
  local first, n = self.first, prim.nv - self.first
  local idx = prim.idx
  local k = #idx
  for i = 1, n - 2 do
    idx[k + 1], idx[k + 2], idx[k + 3] = first, first + i, first + i + 1
    k = k + 3
  end
  if n >= 3 then self:count(n - 2) end
end

-- Triangle list.
function Builder:end_list()
  local prim = self.prim
  local first, n = self.first, prim.nv - self.first
  local idx = prim.idx
  local k = #idx
  for i = 0, n - 3, 3 do
    idx[k + 1], idx[k + 2], idx[k + 3] = first + i, first + i + 1, first + i + 2
    k = k + 3
  end
  self:count(n // 3)
end

-- A planar polygon (fan of pts with uvs), turned to face `want` (a direction), and also
-- its back when `both`.
function Builder:face(m, pts, uvs, want, both)
  local a, b, c = pts[1], pts[2], pts[3]
  local ux, uy, uz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
  local vx, vy, vz = c[1] - a[1], c[2] - a[2], c[3] - a[3]
  local nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
  if nx == 0 and ny == 0 and nz == 0 and pts[4] then
    c = pts[4]
    vx, vy, vz = c[1] - a[1], c[2] - a[2], c[3] - a[3]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
  end
  local flip = nx * want[1] + ny * want[2] + nz * want[3] < 0
  local n = #pts
  for pass = 1, both and 2 or 1 do
    self:begin(m)
    local reverse = (flip and pass == 1) or (not flip and pass == 2)
    self:vertex(pts[1], uvs[1][1], uvs[1][2])
    if reverse then
      for i = n, 2, -1 do self:vertex(pts[i], uvs[i][1], uvs[i][2]) end
    else
      for i = 2, n do self:vertex(pts[i], uvs[i][1], uvs[i][2]) end
    end
    self:end_fan()
  end
end

function Builder:v(i)
  return self.verts[i] or ZERO
end

function Builder:h(i)
  return self.heights[i] or 0
end

-- §4.3 ArcMap over list entries base + (i-1)*stride (0-based base), width to base+column.
function Builder:arcmap(list, base, stride, count, column)
  local V = self.verts
  local s = { 0 }
  local width, length, longest = 0, 0, 1
  for i = 2, count do
    local a = V[list[(i - 2) * stride + base + 1]] or ZERO
    local c = V[list[(i - 2) * stride + base + column + 1]] or ZERO
    local b = V[list[(i - 1) * stride + base + 1]] or ZERO
    width = width + dist(a, c)
    local seg = dist(a, b)
    s[i] = seg
    length = length + seg
    if longest <= seg then longest = seg end
  end
  if count > 1 and width ~= 0 and length >= 0.1 then
    local repeats = floor(length / (width / count) + 0.5)
    if repeats < 1 then repeats = 1 end
    local scale = repeats / length
    if scale * longest > 128 then scale = 127 / longest end
    local run = 0
    for i = 2, count do
      if run > 0 then run = run - s[i] else run = run + s[i] end
      s[i] = run * scale
    end
  else
    for i = 2, count do s[i] = 0 end
  end
  return s
end

------------------------------------------------------------------------ attributes

local H = {} -- handlers by attribute type: H[type](builder, attr, room, index)

-- Sidewalk (n+1) from outer to the raised curb, and the curb face (§2.4 0x0, LOD 3).
function Builder:sidewalk_side(list, stride, n, outer, curb, left, s)
  local rise = M.CURB_RISE
  local m = self:tex(1)
  self:begin(m)
  for i = 0, n - 1 do
    local o, c = self:v(list[i * stride + outer + 1]), self:v(list[i * stride + curb + 1])
    if left then
      self:vertex(o, s[i + 1], 1); self:vertex(up(c, rise), s[i + 1], 0)
    else
      self:vertex(up(c, rise), s[i + 1], 0); self:vertex(o, s[i + 1], 1)
    end
  end
  self:end_strip()
  self:begin(m)
  for i = 0, n - 1 do
    local c = self:v(list[i * stride + curb + 1])
    if left then
      self:vertex(up(c, rise), s[i + 1], 0); self:vertex(c, s[i + 1], 0)
    else
      self:vertex(c, s[i + 1], 0); self:vertex(up(c, rise), s[i + 1], 0)
    end
  end
  self:end_strip()
end

-- The two road halves (n): l -> lm and rm -> r, meeting at the midpoint when split.
function Builder:road_halves(list, stride, n, l, lm, rm, r, split)
  local s = self:arcmap(list, l, stride, n, 1)
  local m = self:tex(0)
  local function P(i, col) return self:v(list[i * stride + col + 1]) end
  self:begin(m)
  for i = 0, n - 1 do
    local a = P(i, l)
    local b = split and mid(a, P(i, r)) or P(i, lm)
    self:vertex(a, s[i + 1], 1); self:vertex(b, s[i + 1], 0)
  end
  self:end_strip()
  self:begin(m)
  for i = 0, n - 1 do
    local b = P(i, r)
    local a = split and mid(P(i, l), b) or P(i, rm)
    self:vertex(a, s[i + 1], 0); self:vertex(b, s[i + 1], 1)
  end
  self:end_strip()
end

H.road = function(B, attr)
  if B.value == 0 then return end
  local list = attr.vertices
  local n = #list // 4
  if n <= 0 then return end
  if list[1] ~= list[2] then B:sidewalk_side(list, 4, n, 0, 1, true, B:arcmap(list, 0, 4, n, 1)) end
  if list[3] ~= list[4] then B:sidewalk_side(list, 4, n, 3, 2, false, B:arcmap(list, 2, 4, n, 1)) end
  B:road_halves(list, 4, n, 1, 2, 2, 2, true)
end

function Builder:divider(attr, list, n)
  local kind = (attr.divider_type or 0) & 0x3F
  local D = attr.divider_texture or 0
  local h = attr.divider_value or 0
  local s = self:arcmap(list, 2, 6, n, 1)
  local function ml(i) return self:v(list[i * 6 + 3]) end
  local function mr(i) return self:v(list[i * 6 + 4]) end
  local function dtex(off)
    if self.parts then self.part = "divider#" .. off end
    return self:slot_material(D + off)
  end
  local last = n - 1
  if kind == 1 then
    self:begin(dtex(1))
    for i = 0, n - 1 do self:vertex(ml(i), s[i + 1], 0); self:vertex(mr(i), s[i + 1], h) end
    self:end_strip()
  elseif kind == 2 then
    self:begin(dtex(0))
    for i = 0, n - 1 do self:vertex(ml(i), s[i + 1], 0); self:vertex(up(ml(i), h), s[i + 1], h) end
    self:end_strip()
    self:begin(dtex(0))
    for i = 0, n - 1 do self:vertex(up(mr(i), h), s[i + 1], 0); self:vertex(mr(i), s[i + 1], 1) end
    self:end_strip()
    local function dir(i)
      local l, r = ml(i), mr(i)
      return normalized(l[1] - r[1], l[2] - r[2], l[3] - r[3])
    end
    self:begin(dtex(1))
    for i = 0, n - 1 do
      local dx, dy, dz = dir(i)
      local p = ml(i)
      self:vertex(up(p, h), s[i + 1], 0)
      self:vertex({ p[1] - h * dx, p[2] + h - h * dy, p[3] - h * dz }, s[i + 1], 1)
    end
    self:end_strip()
    self:begin(dtex(1))
    for i = 0, n - 1 do
      local dx, dy, dz = dir(i)
      local p = mr(i)
      self:vertex({ p[1] + h * dx, p[2] + h + h * dy, p[3] + h * dz }, s[i + 1], 1)
      self:vertex(up(p, h), s[i + 1], 0)
    end
    self:end_strip()
    self:begin(dtex(2))
    for i = 0, n - 1 do
      local dx, dy, dz = dir(i)
      local l, r = ml(i), mr(i)
      self:vertex({ l[1] - h * dx, l[2] + h - h * dy, l[3] - h * dz }, s[i + 1], 0)
      self:vertex({ r[1] + h * dx, r[2] + h - h * dy, r[3] + h * dz }, s[i + 1], 1)
    end
    self:end_strip()
    if attr.cap_start then
      self:begin(dtex(3))
      self:vertex(ml(0), 0, 0); self:vertex(mr(0), 1, 0)
      self:vertex(up(ml(0), h), 1, 1); self:vertex(up(mr(0), h), 0, 1)
      self:end_strip()
    end
    if attr.cap_end then
      self:begin(dtex(attr.cap_start and 3 or 2))
      self:vertex(mr(last), 0, 0); self:vertex(ml(last), 1, 0)
      self:vertex(up(mr(last), h), 1, 1); self:vertex(up(ml(last), h), 0, 1)
      self:end_strip()
    end
  elseif kind == 3 then
    local WH, WI = M.WEDGE_HEIGHT, M.WEDGE_INSET
    -- normalize(from - to) * k, raised by the wedge height
    local function inset(from, to, k)
      local dx, dy, dz = normalized(from[1] - to[1], from[2] - to[2], from[3] - to[3])
      return { dx * k, dy * k + WH, dz * k }
    end
    local function add(p, d) return { p[1] + d[1], p[2] + d[2], p[3] + d[3] } end
    local function mirrored(d) return { -d[1], d[2], -d[3] } end
    self:begin(dtex(1))
    for i = 0, n - 1 do
      self:vertex(ml(i), s[i + 1], 0); self:vertex(add(ml(i), inset(ml(i), mr(i), -WI)), s[i + 1], 1)
    end
    self:end_strip()
    self:begin(dtex(1))
    for i = 0, n - 1 do
      self:vertex(add(mr(i), inset(ml(i), mr(i), WI)), s[i + 1], 1); self:vertex(mr(i), s[i + 1], 0)
    end
    self:end_strip()
    self:begin(dtex(2))
    for i = 0, n - 1 do
      local d = inset(ml(i), mr(i), -WI)
      self:vertex(add(ml(i), d), s[i + 1], 0); self:vertex(add(mr(i), mirrored(d)), s[i + 1], 1)
    end
    self:end_strip()
    if attr.cap_start then
      local d = inset(ml(0), mr(0), -WI)
      self:begin(dtex(3))
      self:vertex(ml(0), 0, 0); self:vertex(mr(0), 1, 0)
      self:vertex(add(ml(0), d), 1, 1); self:vertex(add(mr(0), mirrored(d)), 0, 1)
      self:end_strip()
    end
    if attr.cap_end then
      local d = inset(mr(last), ml(last), -WI)
      self:begin(dtex(attr.cap_start and 3 or 2))
      self:vertex(mr(last), 0, 0); self:vertex(ml(last), 1, 0)
      self:vertex(add(mr(last), d), 1, 1); self:vertex(add(ml(last), mirrored(d)), 0, 1)
      self:end_strip()
    end
  end
  -- any other type: "Bad Median Type", nothing drawn
end

H.divided_road = function(B, attr)
  if B.value == 0 then return end
  local list = attr.vertices
  local n = #list // 6
  if n <= 0 then return end
  if list[1] ~= list[2] then B:sidewalk_side(list, 6, n, 0, 1, true, B:arcmap(list, 0, 6, n, 1)) end
  if list[5] ~= list[6] then B:sidewalk_side(list, 6, n, 5, 4, false, B:arcmap(list, 4, 6, n, 1)) end
  B:road_halves(list, 6, n, 1, 2, 3, 4, false)
  B:divider(attr, list, n)
end

H.sidewalk_strip = function(B, attr)
  if B.value == 0 then return end
  local list = attr.vertices
  local rise = M.CURB_RISE
  local m = B:tex(1)
  if attr.cap then
    local c, o = B:v(list[1]), B:v(list[2])
    local fx, fz = floor(c[1] * 0.25), floor(c[3] * 0.25)
    local cu, cv, ou, ov = c[1] * 0.25 - fx, c[3] * 0.25 - fz, o[1] * 0.25 - fx, o[3] * 0.25 - fz
    B:begin(m)
    if attr.cap == "start" then
      B:vertex(up(c, rise), cu, cv); B:vertex(o, ou, ov); B:vertex(c, cu, cv)
    else
      B:vertex(c, cu, cv); B:vertex(o, ou, ov); B:vertex(up(c, rise), cu, cv)
    end
    B:end_list()
    return
  end
  local n = #list // 2
  if n <= 0 then return end
  local c0 = B:v(list[1])
  local fx, fz = floor(c0[1] * 0.25), floor(c0[3] * 0.25)
  B:begin(m)
  for i = 0, n - 1 do
    local c = B:v(list[2 * i + 1])
    local u, v = c[1] * 0.25 - fx, c[3] * 0.25 - fz
    B:vertex(c, u, v); B:vertex(up(c, rise), u, v)
  end
  B:end_strip()
  B:begin(m)
  for i = 0, n - 1 do
    local c, o = B:v(list[2 * i + 1]), B:v(list[2 * i + 2])
    B:vertex(up(c, rise), c[1] * 0.25 - fx, c[3] * 0.25 - fz)
    B:vertex(o, o[1] * 0.25 - fx, o[3] * 0.25 - fz)
  end
  B:end_strip()
end

H.walkway = function(B, attr)
  if B.value == 0 then return end
  local list = attr.vertices
  local n = #list // 2
  if n <= 0 then return end
  local s = B:arcmap(list, 0, 2, n, 1)
  B:begin(B:tex(0))
  for i = 0, n - 1 do
    B:vertex(B:v(list[2 * i + 1]), s[i + 1], 0); B:vertex(B:v(list[2 * i + 2]), s[i + 1], 1)
  end
  B:end_strip()
end

H.sliver = function(B, attr)
  local list = attr.vertices
  local p0, p1 = B:v(list[1]), B:v(list[2])
  local top, density = B:h(attr.top), B:h(attr.density)
  local u = floor(flat_dist(p1, p0) * density + 0.5)
  local v0, v1 = (p0[2] - top) * density, (p1[2] - top) * density
  B:begin(B:tex(0))
  if v0 == 0 then
    if v1 == 0 then return end
    B:vertex(p0, 0, 0); B:vertex(p1, u, v1); B:vertex({ p1[1], top, p1[3] }, u, 0)
  elseif v1 ~= 0 then
    B:vertex(p0, 0, v0); B:vertex(p1, u, v1)
    B:vertex({ p1[1], top, p1[3] }, u, 0); B:vertex({ p0[1], top, p0[3] }, 0, 0)
  else
    B:vertex(p0, 0, v0); B:vertex(p1, u, 0); B:vertex({ p0[1], top, p0[3] }, 0, 0)
  end
  B:end_fan()
end

H.crosswalk = function(B, attr)
  if B.value == 0 then return end
  local list = attr.vertices
  if #list < 4 then return end
  local c0, c1, c2, c3 = B:v(list[1]), B:v(list[2]), B:v(list[3]), B:v(list[4])
  local width = list[1] == list[2] and dist(c2, c3) or dist(c0, c1)
  local r = width ~= 0 and dist(c0, c2) / width or 0
  B:begin(B:tex(2))
  B:vertex(c1, 0, 0); B:vertex(c0, 1, 0); B:vertex(c3, 0, r); B:vertex(c2, 1, r)
  B:end_strip()
end

local function fan(B, attr, y)
  local list = attr.vertices
  if #list < 3 then return end
  local first = B:v(list[1])
  local fx, fz = floor(first[1] * 0.125), floor(first[3] * 0.125)
  B:begin(B:tex(0))
  for i = 1, #list do
    local p = B:v(list[i])
    if y then p = { p[1], y, p[3] } end
    B:vertex(p, p[1] * 0.125 - fx, p[3] * 0.125 - fz)
  end
  B:end_fan()
end

H.road_fan = function(B, attr) if B.value ~= 0 then fan(B, attr) end end
H.fan = H.road_fan
H.roof = function(B, attr) fan(B, attr, B:h(attr.height)) end

H.facade = function(B, attr)
  local list = attr.vertices
  local p0, p1 = B:v(list[1]), B:v(list[2])
  local bottom, top = B:h(attr.bottom), B:h(attr.top)
  local u, v = attr.u_repeat or 1, attr.v_repeat or 1
  B:begin(B:tex(0))
  B:vertex({ p0[1], bottom, p0[3] }, 0, 0)
  B:vertex({ p1[1], bottom, p1[3] }, u, 0)
  B:vertex({ p1[1], top, p1[3] }, u, v)
  B:vertex({ p0[1], top, p0[3] }, 0, v)
  B:end_fan()
end

-- Strip tunnels: walls along the next strip's outer edges (see the module table).
local STRIDE = { road = 4, divided_road = 6, walkway = 2 }

H.tunnel = function(B, attr, room, index)
  if B.value == 0 then return end
  local h = attr.height1
  if type(h) ~= "number" or not (h > 0) then return end
  local flags = attr.flags or 0
  local attrs = room.attributes
  local k = index + 1
  if attrs[k] and attrs[k].type == "texture" then k = k + 1 end
  local strip = attrs[k]
  local stride = strip and STRIDE[strip.type]
  if not stride then return end
  local list = strip.vertices
  local n = #list // stride
  if n < 2 then return end
  local function P(i, col) return B:v(list[i * stride + col + 1]) end

  local E, F, C, OL, OR = {}, {}, {}, {}, {}
  local off = h * M.RAILING_OFFSET
  local function outward(p, q, other)
    local dx, dz = p[1] - q[1], p[3] - q[3]
    if dx == 0 and dz == 0 then dx, dz = p[1] - other[1], p[3] - other[3] end
    local m = sqrt(dx * dx + dz * dz)
    if m == 0 then return { p[1], p[2], p[3] }, 0, 0 end
    return { p[1] + dx / m * off, p[2], p[3] + dz / m * off }, dx / m, dz / m
  end
  local DL, DR = {}, {}
  for i = 0, n - 1 do
    local e, f = P(i, 0), P(i, stride - 1)
    E[i], F[i], C[i] = e, f, mid(e, f)
    local dlx, dlz, drx, drz
    OL[i], dlx, dlz = outward(e, P(i, 1), f)
    OR[i], drx, drz = outward(f, P(i, stride - 2), e)
    DL[i], DR[i] = { dlx, dlz }, { drx, drz }
  end
  -- length along the edge, for UVs
  local function runs(line)
    local s = { [0] = 0 }
    for i = 1, n - 1 do s[i] = s[i - 1] + flat_dist(line[i - 1], line[i]) / h end
    return s
  end
  local both = flags & 0x4000 ~= 0
  local sloped = flags & 0x2000 ~= 0
  local thick = flags & 0x4 ~= 0 and not sloped

  local function wall(line, D, m)
    local s = runs(line)
    for i = 0, n - 2 do
      local a, b = line[i], line[i + 1]
      local c = mid(C[i], C[i + 1])
      local want = { c[1] - (a[1] + b[1]) / 2, 0, c[3] - (a[3] + b[3]) / 2 }
      if sloped then
        -- base, out at 1/4 and 3/4 height, back in at the top
        local function at(p, d, frac, out)
          return { p[1] + d[1] * out, p[2] + h * frac, p[3] + d[2] * out }
        end
        local prof = { { 0, 0 }, { 0.25, off }, { 0.75, off }, { 1, 0 } }
        for j = 1, 3 do
          local f0, o0, f1, o1 = prof[j][1], prof[j][2], prof[j + 1][1], prof[j + 1][2]
          B:face(m, { at(a, D[i], f0, o0), at(b, D[i + 1], f0, o0), at(b, D[i + 1], f1, o1), at(a, D[i], f1, o1) },
            { { s[i], 1 - f0 }, { s[i + 1], 1 - f0 }, { s[i + 1], 1 - f1 }, { s[i], 1 - f1 } }, want, both)
        end
      else
        B:face(m, { a, b, up(b, h), up(a, h) }, { { s[i], 1 }, { s[i + 1], 1 }, { s[i + 1], 0 }, { s[i], 0 } },
          want, both)
      end
    end
  end
  local function thick_side(edge, outer, m, cap_start, cap_end)
    local s = runs(outer)
    local q = h * 0.25
    for i = 0, n - 2 do
      local a, b = outer[i], outer[i + 1]
      local want = { (a[1] + b[1]) / 2 - (C[i][1] + C[i + 1][1]) / 2, 0, (a[3] + b[3]) / 2 - (C[i][3] + C[i + 1][3]) / 2 }
      B:face(m, { up(a, -q), up(b, -q), up(b, h), up(a, h) },
        { { s[i], 1.25 }, { s[i + 1], 1.25 }, { s[i + 1], 0 }, { s[i], 0 } }, want)
      B:face(m, { up(edge[i], h), up(edge[i + 1], h), up(b, h), up(a, h) },
        { { s[i], 0 }, { s[i + 1], 0 }, { s[i + 1], 0.333 }, { s[i], 0.333 } }, { 0, 1, 0 })
    end
    local function cap(i, j)
      local e, o = edge[i], outer[i]
      local want = { e[1] - edge[j][1], 0, e[3] - edge[j][3] }
      B:face(m, { e, up(o, -q), up(o, h), up(e, h) }, { { 0, 1 }, { 0.333, 1.25 }, { 0.333, 0 }, { 0, 0 } }, want)
    end
    if cap_start then cap(0, 1) end
    if cap_end then cap(n - 1, n - 2) end
  end

  if flags & 0x1 ~= 0 then wall(E, DL, B:tex(0)) end
  if flags & 0x2 ~= 0 then wall(F, DR, B:tex(1)) end
  local left_line, right_line = E, F
  if thick then
    if flags & 0x1 ~= 0 then
      thick_side(E, OL, B:tex(4), flags & 0x10 ~= 0, flags & 0x20 ~= 0)
      left_line = OL
    end
    if flags & 0x2 ~= 0 then
      thick_side(F, OR, B:tex(3), flags & 0x40 ~= 0, flags & 0x80 ~= 0)
      right_line = OR
    end
    -- the deck under the road, between the outer lines
    local s = runs(C)
    local q = h * 0.25
    local m = B:tex(5)
    for i = 0, n - 2 do
      B:face(m, { up(left_line[i], -q), up(left_line[i + 1], -q), up(right_line[i + 1], -q), up(right_line[i], -q) },
        { { s[i], 0 }, { s[i + 1], 0 }, { s[i + 1], 1 }, { s[i], 1 } }, { 0, -1, 0 })
    end
  end
  if flags & 0x100 ~= 0 or flags & 0x8 ~= 0 then
    local s = runs(C)
    local m = B:tex(2)
    local fr, rise
    if flags & 0x100 ~= 0 then
      fr, rise = { 0, 0.25, 0.5, 0.75, 1 }, { 0, 1.5, 2, 1.5, 0 }
    else
      fr, rise = { 0, 1 }, { 0, 0 }
    end
    local function at(i, j)
      local e, f, t = E[i], F[i], fr[j]
      return { e[1] + (f[1] - e[1]) * t, e[2] + (f[2] - e[2]) * t + h + rise[j], e[3] + (f[3] - e[3]) * t }
    end
    for i = 0, n - 2 do
      for j = 1, #fr - 1 do
        B:face(m, { at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1) },
          { { s[i], fr[j] }, { s[i + 1], fr[j] }, { s[i + 1], fr[j + 1] }, { s[i], fr[j + 1] } }, { 0, -1, 0 })
      end
    end
  end
end

H.junction_tunnel = function(B, attr, room)
  if B.value == 0 then return end
  local h = attr.height1
  if type(h) ~= "number" or not (h > 0) then return end
  local flags = attr.flags or 0
  local per = room.perimeter or {}
  local n = #per
  if n < 2 then return end
  local P = {}
  local cx, cz, top = 0, 0, -huge
  for j = 1, n do
    local p = B:v(per[j].vertex)
    P[j] = p
    cx, cz = cx + p[1], cz + p[3]
    if p[2] > top then top = p[2] end
  end
  cx, cz = cx / n, cz / n
  local mask = attr.wall_mask or 0
  local both = flags & 0x4000 ~= 0 and flags & 0x4 == 0
  local m = B:tex(0)
  for j = 0, n - 1 do
    if mask & (1 << (j & 31)) ~= 0 then
      local a, b = P[(j - 1) % n + 1], P[j + 1]
      local want = { cx - (a[1] + b[1]) / 2, 0, cz - (a[3] + b[3]) / 2 }
      local len = flat_dist(a, b) / h
      B:face(m, { a, b, up(b, h), up(a, h) }, { { 0, 1 }, { len, 1 }, { len, 0 }, { 0, 0 } }, want, both)
    end
  end
  if flags & 0x8 ~= 0 and n >= 3 then
    local y = top + h
    local start = attr.ceiling_start or 1
    local pts, uvs = {}, {}
    local hub = P[(start - 1) % n + 1]
    local fx, fz = floor(hub[1] * 0.125), floor(hub[3] * 0.125)
    for t = 0, n - 1 do
      local p = P[(start - 1 - t) % n + 1]
      pts[#pts + 1] = { p[1], y, p[3] }
      uvs[#uvs + 1] = { p[1] * 0.125 - fx, p[3] * 0.125 - fz }
    end
    B:face(B:tex(2), pts, uvs, { 0, -1, 0 })
  end
end

------------------------------------------------------------------------ build

--- Build the meshes of a document.
-- @tparam table doc
-- @tparam[opt] table opts `rooms` (list of room ids, default all), `merge` (one mesh for
--   the whole city instead of one per room), `attribute_counts` (record triangles per
--   attribute in `stats.attributes[room][attribute]`), `parts` (one primitive per material
--   and attribute part instead of per material: each primitive gets `part`, the attribute
--   type and the texture offset that drew it, `"road#0"` road halves, `"road#1"` sidewalks
--   and curb faces, `"divider#2"` a divider top, ...; see the table above)
-- @treturn table mesh `{groups = {{name =, room =, prims = {{material =, pos =, uv =,
--   idx =, nv =}...}}...}, materials = {{name =, texture =, color =}...}, stats = {triangles
--   =, vertices =, by_type = {[type] = n}, rooms =, attributes =, nonfinite =}}` (`nonfinite`:
--   vertices with a NaN or infinite coordinate or UV, written as 0); `pos` holds x, y, z
--   per vertex in file coordinates, `uv` s, t (Direct3D/glTF convention, t down), `idx`
--   0-based triangle indices into the primitive's vertices, wound as the game draws (front
--   faces counter-clockwise in the file's coordinates read as right-handed)
-- @raise on a wrong argument
function M.build(doc, opts)
  if type(doc) ~= "table" or type(doc.rooms) ~= "table" then
    error("bad argument #1 to 'build' (document expected, got " .. type(doc) .. ")", 2)
  end
  opts = opts or {}
  local B = setmetatable({
    doc = doc, verts = doc.vertices or {}, heights = doc.heights or {},
    materials = {}, mat_by_key = {}, slot_cache = {}, tris = 0, parts = opts and opts.parts or nil,
  }, Builder)
  local stats = { triangles = 0, vertices = 0, by_type = {}, rooms = 0 }
  if opts.attribute_counts then stats.attributes = {} end
  local groups = {}
  local merged
  if opts.merge then
    merged = { name = opts.name or "city", prims = {}, by_mat = {} }
    groups[1] = merged
  end
  local ids = opts.rooms
  if not ids then
    ids = {}
    for r = 1, #doc.rooms do ids[r] = r end
  end
  for _, r in ipairs(ids) do
    local room = doc.rooms[r]
    if room then
      stats.rooms = stats.rooms + 1
      local group = merged or { name = "room " .. r, room = r, flags = room.flags, prims = {}, by_mat = {} }
      B.group = group
      B.value = 0
      local counts = stats.attributes and {} or nil
      if counts then stats.attributes[r] = counts end
      local attrs = room.attributes or {}
      for a, attr in ipairs(attrs) do
        local t = attr.type
        if t == "texture" then
          B.value = math.tointeger(attr.value) or 0
        else
          local fn = H[t]
          B.atype = t
          local before = B.tris
          if fn and (type(attr.vertices) == "table" or t == "tunnel" or t == "junction_tunnel") then
            fn(B, attr, room, a)
          end
          local made = B.tris - before
          if made > 0 then stats.by_type[t] = (stats.by_type[t] or 0) + made end
          if counts then counts[a] = made end
        end
      end
      if not merged and #group.prims > 0 then groups[#groups + 1] = group end
    end
  end
  if merged and #merged.prims == 0 then groups = {} end
  for _, g in ipairs(groups) do
    g.by_mat = nil
    for _, p in ipairs(g.prims) do stats.vertices = stats.vertices + p.nv end
  end
  stats.triangles = B.tris
  stats.materials = #B.materials
  stats.nonfinite = B.nonfinite or 0
  return { groups = groups, materials = B.materials, stats = stats }
end

------------------------------------------------------------------------ files and paths

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

local function basename(path)
  return path:match("([^/]*)$")
end

local function stem(path)
  return (basename(path):gsub("%.[^.]*$", ""))
end

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  local ok, lfs = pcall(require, "lfs")
  local cwd = ok and lfs.currentdir() or "."
  return cwd .. "/" .. path
end

local function split_path(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      if #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil else parts[#parts + 1] = part end
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return parts
end

--- The path of `target` relative to the folder `from` (both relative to the current folder
-- or absolute).
-- @tparam string from folder
-- @tparam string target file
-- @treturn string
function M.relative_path(from, target)
  local a, b = split_path(absolute(from)), split_path(absolute(target))
  local i = 1
  while i <= #a and i <= #b and a[i] == b[i] do i = i + 1 end
  local out = {}
  for _ = i, #a do out[#out + 1] = ".." end
  for j = i, #b do out[#out + 1] = b[j] end
  return table.concat(out, "/")
end

local IMAGE_EXTS = { "png", "PNG", "jpg", "JPG", "jpeg", "JPEG" }

-- The image file for a texture name in dir, or nil.
local function find_image(dir, name)
  for _, ext in ipairs(IMAGE_EXTS) do
    for _, n in ipairs { name, name:lower() } do
      local path = dir .. "/" .. n .. "." .. ext
      local f = io.open(path, "rb")
      if f then
        f:close()
        return path, (ext:lower() == "png") and "image/png" or "image/jpeg"
      end
    end
  end
  return nil
end

-- Whether the bytes of an image file are a whole, decodable image: a PNG must decode
-- (psdl.core's bounded PNG reader); a JPEG must start with SOI and an APPn/DQT/SOF marker
-- and end with EOI. Returns true or nil, reason.
local function check_image(data, mime)
  if mime == "image/png" then
    local canvas, err = require("psdl.core").canvas_png_decode(data)
    if not canvas then return nil, (tostring(err):gsub("^psdl: ", "")) end
    canvas:close()
    return true
  end
  if data:sub(1, 3) ~= "\255\216\255" then return nil, "not a JPEG image (no start-of-image marker)" end
  local tail = data:sub(-2)
  if tail ~= "\255\217" and not data:sub(-32):find("\255\217", 1, true) then
    return nil, "truncated JPEG image (no end-of-image marker)"
  end
  return true
end

-- Attach images to materials (when opts.textures names a folder). Returns true, or nil and
-- a message when the folder does not exist or an image in it is corrupt.
local function attach_images(mesh, dir)
  if not dir then return true end
  local ok, lfs = pcall(require, "lfs")
  if ok and lfs.attributes(dir, "mode") ~= "directory" then
    return nil, string_format("psdl: --textures %s: no such folder", dir), "io"
  end
  for _, mat in ipairs(mesh.materials) do
    if mat.texture then
      mat.image, mat.mime = find_image(dir, mat.texture)
      if mat.image then
        local f = io.open(mat.image, "rb")
        local data = f and f:read("a")
        if f then f:close() end
        if not data then return nil, string_format("psdl: %s: cannot be read", mat.image), "io" end
        local good, why = check_image(data, mat.mime)
        if not good then
          return nil, string_format("psdl: %s (texture %q): %s", mat.image, mat.texture, why), "bad_image"
        end
      end
    end
  end
  return true
end

-- A name usable in OBJ/MTL (no spaces) and JSON (valid UTF-8), unique among names.
local function clean_names(materials)
  local used = {}
  for _, mat in ipairs(materials) do
    local n = mat.name
    if not utf8.len(n) then n = n:gsub("[\128-\255]", "?") end
    n = n:gsub("[%c]", "?")
    local obj = n:gsub("%s", "_")
    if obj == "" then obj = "_" end
    local base, k = obj, 1
    while used[obj] do k = k + 1; obj = base .. "_" .. k end
    used[obj] = true
    mat.json_name, mat.obj_name = n, obj
  end
end

local function write_file(path, data)
  local psdl = require "psdl"
  local ok, err, code = psdl.write_file(path, data)
  if not ok then return nil, err, code end
  return true
end

local function f32(x) return (string.unpack("<f", pack("<f", x))) end

------------------------------------------------------------------------ OBJ

--- OBJ and MTL text of a mesh.
-- @tparam table mesh from `build`
-- @tparam[opt] table opts `mtl` (the .mtl file name to reference), `keep_axes`,
--   `image_base` (folder the image paths are made relative to), `comment`
-- @treturn string OBJ text
-- @treturn string MTL text
function M.obj(mesh, opts)
  opts = opts or {}
  clean_names(mesh.materials)
  local mirror = not opts.keep_axes
  local zs = mirror and -1 or 1
  local out = {}
  local s = mesh.stats
  out[#out + 1] = string_format("# psdlkit export%s: %d rooms, %d triangles, %d materials\n",
    opts.comment and (" of " .. opts.comment) or "", s.rooms, s.triangles, #mesh.materials)
  out[#out + 1] = "# full detail (LOD 3); " .. (mirror and "axes x, y, -z (the game's z mirrored: right-handed)\n"
    or "the file's axes (left-handed: the city is mirrored)\n")
  if opts.mtl then out[#out + 1] = "mtllib " .. opts.mtl .. "\n" end
  local base = 0
  local fmt_v, fmt_vt = "v %.4f %.4f %.4f\n", "vt %.5f %.5f\n"
  for _, g in ipairs(mesh.groups) do
    out[#out + 1] = "o " .. (g.room and ("room_" .. g.room) or g.name:gsub("%s", "_")) .. "\n"
    for _, p in ipairs(g.prims) do
      local pos, uv = p.pos, p.uv
      for i = 0, p.nv - 1 do
        out[#out + 1] = string_format(fmt_v, pos[3 * i + 1], pos[3 * i + 2], zs * pos[3 * i + 3])
      end
      for i = 0, p.nv - 1 do
        out[#out + 1] = string_format(fmt_vt, uv[2 * i + 1], 1 - uv[2 * i + 2])
      end
    end
    for _, p in ipairs(g.prims) do
      out[#out + 1] = "usemtl " .. mesh.materials[p.material].obj_name .. "\n"
      local idx = p.idx
      for k = 1, #idx, 3 do
        local a, b, c = idx[k] + base + 1, idx[k + 1] + base + 1, idx[k + 2] + base + 1
        if mirror then b, c = c, b end
        out[#out + 1] = string_format("f %d/%d %d/%d %d/%d\n", a, a, b, b, c, c)
      end
      base = base + p.nv
    end
  end
  local mtl = { "# psdlkit materials: one per texture name\n" }
  for _, mat in ipairs(mesh.materials) do
    local c = mat.image and { 1, 1, 1 } or mat.color
    mtl[#mtl + 1] = string_format("\nnewmtl %s\nKa 0 0 0\nKd %.3f %.3f %.3f\nKs 0 0 0\nd 1\nillum 1\n",
      mat.obj_name, c[1], c[2], c[3])
    if mat.image then
      local path = opts.image_base and M.relative_path(opts.image_base, mat.image) or mat.image
      mtl[#mtl + 1] = "map_Kd " .. path .. "\n"
    end
  end
  return table.concat(out), table.concat(mtl)
end

------------------------------------------------------------------------ glTF

local ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
local FLOAT, UNSIGNED_INT = 5126, 5125
local REPEAT, LINEAR, LINEAR_MIPMAP_LINEAR = 10497, 9729, 9987

local function pad4(n) return (4 - n % 4) % 4 end

--- glTF JSON document (as a Lua table) and binary buffer of a mesh.
-- @tparam table mesh from `build`
-- @tparam[opt] table opts `keep_axes`, `double_sided`, `embed_images` (images go into the
--   buffer, for GLB), `image_base` (folder image URIs are relative to), `source` (name of
--   the PSDL file, kept in `asset.extras`)
-- @treturn table the glTF JSON as Lua tables (to encode with cjson; no empty arrays)
-- @treturn string the binary buffer (length a multiple of 4)
function M.gltf(mesh, opts)
  opts = opts or {}
  clean_names(mesh.materials)
  local mirror = not opts.keep_axes
  local zs = mirror and -1 or 1
  local pos_parts, uv_parts, idx_parts = {}, {}, {}
  local pos_len, uv_len, idx_len = 0, 0, 0
  local accessors, meshes, nodes = {}, {}, {}

  for _, g in ipairs(mesh.groups) do
    local prims = {}
    for _, p in ipairs(g.prims) do
      -- an empty vertex set has no bounds (min +inf, max -inf), and glTF accessors need
      -- count >= 1: such a primitive is left out
      if p.nv > 0 and #p.idx > 0 then
      local pos, uv, idx = p.pos, p.uv, p.idx
      local minx, miny, minz, maxx, maxy, maxz = huge, huge, huge, -huge, -huge, -huge
      local pp, up_ = {}, {}
      for i = 0, p.nv - 1 do
        local x, y, z = pos[3 * i + 1], pos[3 * i + 2], zs * pos[3 * i + 3]
        if x < minx then minx = x end
        if x > maxx then maxx = x end
        if y < miny then miny = y end
        if y > maxy then maxy = y end
        if z < minz then minz = z end
        if z > maxz then maxz = z end
        pp[i + 1] = pack("<fff", x, y, z)
        up_[i + 1] = pack("<ff", uv[2 * i + 1], uv[2 * i + 2])
      end
      local ip = {}
      for k = 1, #idx, 3 do
        local a, b, c = idx[k], idx[k + 1], idx[k + 2]
        if mirror then b, c = c, b end
        ip[#ip + 1] = pack("<I4I4I4", a, b, c)
      end
      local pos_acc = #accessors
      accessors[#accessors + 1] = {
        bufferView = 0, byteOffset = pos_len, componentType = FLOAT, count = p.nv, type = "VEC3",
        min = { f32(minx), f32(miny), f32(minz) }, max = { f32(maxx), f32(maxy), f32(maxz) },
      }
      accessors[#accessors + 1] = {
        bufferView = 1, byteOffset = uv_len, componentType = FLOAT, count = p.nv, type = "VEC2",
      }
      accessors[#accessors + 1] = {
        bufferView = 2, byteOffset = idx_len, componentType = UNSIGNED_INT, count = #idx, type = "SCALAR",
      }
      pos_parts[#pos_parts + 1] = table.concat(pp)
      uv_parts[#uv_parts + 1] = table.concat(up_)
      idx_parts[#idx_parts + 1] = table.concat(ip)
      pos_len, uv_len, idx_len = pos_len + 12 * p.nv, uv_len + 8 * p.nv, idx_len + 4 * #idx
      prims[#prims + 1] = {
        attributes = { POSITION = pos_acc, TEXCOORD_0 = pos_acc + 1 },
        indices = pos_acc + 2, material = p.material - 1, mode = 4,
      }
      end
    end
    if #prims > 0 then
      meshes[#meshes + 1] = { name = g.name, primitives = prims }
      nodes[#nodes + 1] = {
        name = g.name, mesh = #meshes - 1,
        extras = g.room and { room = g.room, flags = g.flags } or nil,
      }
    end
  end

  local bin_parts = { table.concat(pos_parts), table.concat(uv_parts), table.concat(idx_parts) }
  local views = {}
  local offset = 0
  if #accessors > 0 then
    -- several accessors share each vertex view: a byteStride is then required
    views[1] = { buffer = 0, byteOffset = 0, byteLength = pos_len, byteStride = 12, target = ARRAY_BUFFER }
    views[2] = { buffer = 0, byteOffset = pos_len, byteLength = uv_len, byteStride = 8, target = ARRAY_BUFFER }
    views[3] = { buffer = 0, byteOffset = pos_len + uv_len, byteLength = idx_len, target = ELEMENT_ARRAY_BUFFER }
    offset = pos_len + uv_len + idx_len
  else
    bin_parts = {}
  end

  -- materials, and images for those that have one
  local materials, textures, images = {}, {}, {}
  local used = {}
  for _, g in ipairs(mesh.groups) do
    for _, p in ipairs(g.prims) do
      if p.nv > 0 and #p.idx > 0 then used[p.material] = true end
    end
  end
  for i, mat in ipairs(mesh.materials) do
    local c = mat.color
    local m = {
      name = mat.json_name,
      pbrMetallicRoughness = { baseColorFactor = { c[1], c[2], c[3], 1 }, metallicFactor = 0, roughnessFactor = 1 },
      doubleSided = opts.double_sided and true or nil,
      extras = mat.texture and { texture = mat.json_name } or nil,
    }
    if mat.image and used[i] then
      local image = { name = mat.json_name }
      if opts.embed_images then
        local f = io.open(mat.image, "rb")
        local data = f and f:read("a")
        if f then f:close() end
        if data then
          views[#views + 1] = { buffer = 0, byteOffset = offset, byteLength = #data }
          bin_parts[#bin_parts + 1] = data .. string.rep("\0", pad4(#data))
          offset = offset + #data + pad4(#data)
          image.bufferView, image.mimeType = #views - 1, mat.mime
        end
      else
        local path = opts.image_base and M.relative_path(opts.image_base, mat.image) or mat.image
        image.uri = path:gsub("[^%w%-%._~/]", function(ch) return string_format("%%%02X", ch:byte()) end)
      end
      if image.uri or image.bufferView then
        images[#images + 1] = image
        textures[#textures + 1] = { sampler = 0, source = #images - 1 }
        m.pbrMetallicRoughness.baseColorTexture = { index = #textures - 1 }
        m.pbrMetallicRoughness.baseColorFactor = { 1, 1, 1, 1 }
      end
    end
    materials[i] = m
  end

  local bin = table.concat(bin_parts)
  local doc = {
    asset = { version = "2.0", generator = "psdlkit export",
      extras = { source = opts.source, lod = 3, axes = mirror and "x, y, -z" or "file" } },
    scene = 0,
    scenes = { { name = opts.source and stem(opts.source) or "city", nodes = #nodes > 0 and {} or nil } },
  }
  for i = 1, #nodes do doc.scenes[1].nodes[i] = i - 1 end
  if #nodes > 0 then doc.nodes, doc.meshes = nodes, meshes end
  if #materials > 0 then doc.materials = materials end
  if #accessors > 0 then doc.accessors = accessors end
  if #views > 0 then doc.bufferViews = views end
  if #bin > 0 then doc.buffers = { { byteLength = #bin } } end
  if #images > 0 then
    doc.images, doc.textures = images, textures
    doc.samplers = { { magFilter = LINEAR, minFilter = LINEAR_MIPMAP_LINEAR, wrapS = REPEAT, wrapT = REPEAT } }
  end
  return doc, bin
end

local function json_encode(t)
  local cjson = require("cjson").new()
  cjson.encode_number_precision(14)
  return cjson.encode(t)
end

--- GLB bytes of a glTF document and its buffer.
-- @tparam table doc glTF JSON (its `buffers[1]` has no `uri`)
-- @tparam string bin the buffer
-- @treturn string
function M.glb(doc, bin)
  local json = json_encode(doc)
  json = json .. string.rep(" ", pad4(#json))
  local chunks = pack("<I4I4", #json, 0x4E4F534A) .. json
  if #bin > 0 then
    chunks = chunks .. pack("<I4I4", #bin + pad4(#bin), 0x004E4942) .. bin .. string.rep("\0", pad4(#bin))
  end
  return pack("<I4I4I4", 0x46546C67, 2, 12 + #chunks) .. chunks
end

------------------------------------------------------------------------ export

--- Export a document to a file.
-- @tparam table doc
-- @tparam string path `*.obj` (writes the `.mtl` next to it), `*.gltf` or `*.glb`
-- @tparam[opt] table opts `format` (`"obj"`, `"gltf"`, `"glb"`; default from the
--   extension), `rooms` (list of room ids), `merge`, `textures` (folder with `<name>.png`
--   or `.jpg` images), `bin` (.gltf: the buffer in a `.bin` file next to it instead of
--   embedded base64), `double_sided`, `keep_axes`, `source` (name recorded in the file)
-- @treturn table statistics (`triangles`, `vertices`, `rooms`, `materials`, `by_type`,
--   `files` = the files written)
-- @return[2] nil, message, code (`"io"`, or `"usage"` for an unknown format)
function M.export(doc, path, opts)
  if type(path) ~= "string" then error("bad argument #2 to 'export' (string expected)", 2) end
  opts = opts or {}
  local format = opts.format or (path:match("%.([^./]+)$") or ""):lower()
  if format ~= "obj" and format ~= "gltf" and format ~= "glb" then
    return nil, string_format("psdl: usage: %s: unknown export format %q (use .obj, .gltf or .glb)", path, format),
      "usage"
  end
  local mesh = M.build(doc, { rooms = opts.rooms, merge = opts.merge, name = opts.source and stem(opts.source) })
  local iok, ierr, icode = attach_images(mesh, opts.textures)
  if not iok then return nil, ierr, icode end
  local dir = dirname(path)
  local files = {}
  if format == "obj" then
    local mtl_path = dir .. "/" .. stem(path) .. ".mtl"
    local obj, mtl = M.obj(mesh, { mtl = basename(mtl_path), keep_axes = opts.keep_axes, image_base = dir,
      comment = opts.source })
    local ok, err, code = write_file(mtl_path, mtl)
    if not ok then return nil, err, code end
    ok, err, code = write_file(path, obj)
    if not ok then return nil, err, code end
    files = { path, mtl_path }
  else
    local gdoc, bin = M.gltf(mesh, {
      keep_axes = opts.keep_axes, double_sided = opts.double_sided, embed_images = format == "glb",
      image_base = dir, source = opts.source,
    })
    if format == "glb" then
      local ok, err, code = write_file(path, M.glb(gdoc, bin))
      if not ok then return nil, err, code end
      files = { path }
    else
      if gdoc.buffers then
        if opts.bin then
          local bin_path = dir .. "/" .. stem(path) .. ".bin"
          local ok, err, code = write_file(bin_path, bin)
          if not ok then return nil, err, code end
          gdoc.buffers[1].uri = basename(bin_path)
          files[#files + 1] = bin_path
        else
          gdoc.buffers[1].uri = "data:application/octet-stream;base64," .. require("mime").b64(bin)
        end
      end
      local ok, err, code = write_file(path, json_encode(gdoc))
      if not ok then return nil, err, code end
      table.insert(files, 1, path)
    end
  end
  local stats = mesh.stats
  stats.files = files
  stats.format = format
  return stats
end

return M
