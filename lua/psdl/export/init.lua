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

-- Private helpers shared between the files of psdl.export (never part of the API).
local private = {
}
for _, part in ipairs({ "mesh", "files" }) do
  local exports = require("psdl.export." .. part)(M, private)
  for k, v in pairs(exports) do private[k] = v end
end
local Builder, H, attach_images = private.Builder, private.H, private.attach_images
local basename, dirname, json_encode = private.basename, private.dirname, private.json_encode
local stem, write_file = private.stem, private.write_file

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


------------------------------------------------------------------------ build

--- Build the meshes of a document.
-- @tparam table doc
-- @tparam[opt] table opts `leave_far` (leave out the triangles using a vertex beyond 1e9 m
--   or not finite, as psdl export does; counted in `left_out`, `left_out_triangles`), `rooms`
--   (list of room ids, default all), `merge` (one mesh for
--   the whole city instead of one per room), `attribute_counts` (record triangles per
--   attribute in `stats.attributes[room][attribute]`), `parts` (one primitive per material
--   and attribute part instead of per material: each primitive gets `part`, the attribute
--   type and the texture offset that drew it, `"road#0"` road halves, `"road#1"` sidewalks
--   and curb faces, `"divider#2"` a divider top, ...; see the table above)
-- @treturn table mesh `{groups = {{name =, room =, prims = {{material =, pos =, uv =,
--   idx =, nv =}...}}...}, materials = {{name =, texture =, color =}...}, stats = {triangles
--   =, vertices =, by_type = {[type] = n}, rooms =, attributes =, nonfinite =, left_out =,
--   left_out_triangles =}}` (`nonfinite`: mesh vertices with a coordinate beyond 1e9 m or not
--   finite, or a UV beyond the 32-bit float range, written as 0; the triangles using such a
--   position are left out, `left_out_triangles` of them; `left_out`: the document's vertices
--   beyond 1e9 m or not finite, as `psdl render` counts them); `pos` holds x, y, z
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
    leave_far = opts.leave_far or nil,
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
  stats.left_out_triangles = B.left_tris or 0
  -- the document's vertices the export leaves out (as render leaves them out of the map)
  local far = 0
  for _, v in ipairs(B.leave_far and B.verts or {}) do
    local x, y, z = v[1], v[2], v[3]
    if not (x and y and z and x >= -1e9 and x <= 1e9 and y >= -1e9 and y <= 1e9 and z >= -1e9 and z <= 1e9) then
      far = far + 1
    end
  end
  stats.left_out = far
  return { groups = groups, materials = B.materials, stats = stats }
end


------------------------------------------------------------------------ export

--- The format of an export: `format`, else the extension of `path`.
-- @tparam string path
-- @tparam[opt] string format
-- @treturn string "obj", "gltf" or "glb"
-- @return[2] nil
-- @treturn[2] string `<path>: unknown export format "stl" (use .obj, .gltf or .glb)`
function M.format_of(path, format)
  format = format or (path:match("%.([^./]+)$") or ""):lower()
  if format ~= "obj" and format ~= "gltf" and format ~= "glb" then
    return nil, string_format("%s: unknown export format %q (use .obj, .gltf or .glb)", path, format)
  end
  return format
end

--- Export a document to a file.
-- @tparam table doc
-- @tparam string path `*.obj` (writes the `.mtl` next to it), `*.gltf` or `*.glb`
-- @tparam[opt] table opts `format` (`"obj"`, `"gltf"`, `"glb"`; default from the
--   extension), `rooms` (list of room ids), `merge`, `textures` (folder with `<name>.png`
--   or `.jpg` images), `bin` (.gltf: the buffer in a `.bin` file next to it instead of
--   embedded base64), `double_sided`, `keep_axes`, `source` (name recorded in the file)
-- @treturn table statistics (`triangles`, `vertices`, `rooms`, `materials`, `by_type`,
--   `files` = the files written)
-- @return[2] nil, message, code (`"io"`)
-- @raise on a bad argument, or an unknown format (`format_of`)
function M.export(doc, path, opts)
  if type(path) ~= "string" then error("bad argument #2 to 'export' (string expected)", 2) end
  opts = opts or {}
  local format, ferr = M.format_of(path, opts.format)
  if not format then error("bad argument #2 to 'export' (" .. ferr .. ")", 2) end
  local mesh = M.build(doc, { rooms = opts.rooms, merge = opts.merge, name = opts.source and stem(opts.source),
    leave_far = true })
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