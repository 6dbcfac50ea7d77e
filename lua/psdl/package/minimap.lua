--- The minimap of an add-on city (companion-formats.md §7, "CF"): `geometry/hudmap_<map>.pkg`,
-- a flat mesh in world XZ that covers the city and a margin, one textured quad per tile, and
-- the tiles `texture/hudmap_<map>_NN.tex` (RGB888, 256 x 256, full mip chain, clamped).
--
-- The picture comes from the map renderer's scene (`psdl.render.scene`: the triangles the
-- game draws, classed by what they are), painted on the C canvas at `metres_per_pixel`
-- (2 m, raised until the city fits 8 x 8 tiles): blocks, roads, sidewalks, walkways,
-- crosswalks, dividers, buildings (roofs) and tunnels in distinct colours; everything the
-- city does not cover is painted in the game's ocean colour (CF §7.1), so it reads as water.
--
-- Orientation (CF §7.3): u = (x - x0) / (x1 - x0), v = (z - z0) / (z1 - z0) per tile, and
-- texel row 0 of each tile is its row at z0 (TEX row 0 is sampled at v = 0), so no guess
-- about "up" is involved. Triangles wind like up-facing PSDL ground (signed area < 0 in raw
-- x, z). The mesh lies at y = min(0, lowest vertex of the city) - 1.
-- @module psdl.package.minimap

local string, table, math = string, table, math
local ipairs, pairs, require, error = ipairs, pairs, require, error
local floor, ceil, max, min, huge = math.floor, math.ceil, math.max, math.min, math.huge
local string_format, concat = string.format, table.concat

local M = {}

--- Tile side in texels.
M.TILE = 256
--- Most tiles along each axis (sections of the model stay far below the 127 of CF §7.2).
M.MAX_TILES = 8
--- Colours (0xRRGGBBAA) by scene class, drawn in this order; `water` is the background.
M.PALETTE = {
  { "ground", 0xD9D4C7FF }, { "walkway", 0xC8B08AFF }, { "sidewalk", 0xB9B6AEFF },
  { "road", 0x3F4247FF }, { "intersection", 0x3F4247FF }, { "tunnel", 0x2A2F38FF },
  { "crosswalk", 0xF4F4F0FF }, { "divider", 0xE0B43CFF }, { "wall", 0x6E655CFF }, { "roof", 0x8E8579FF },
}
M.WATER = 0x15ADEBFF -- (0.084, 0.68, 0.92): the game's ocean colour for cities other than London

--- Build the minimap files of a document.
-- @tparam table doc PSDL document
-- @tparam string map map name
-- @tparam[opt] table opts `metres_per_pixel` (2), `margin` (m, 60)
-- @treturn table files `{pkg = pkg table, textures = {{name =, tex = tex table}...}}`
-- @treturn table info `{tiles = {nx, nz}, metres_per_pixel =, rect = {x0, z0, x1, z1}, y =}`
function M.generate(doc, map, opts)
  opts = opts or {}
  local psdl = require "psdl"
  local core = require "psdl.core"
  local scene = require("psdl.render").scene(doc)
  local b = scene.bounds or {}
  local minx, minz, maxx, maxz = b[1] or b.minx, b[2] or b.minz, b[3] or b.maxx, b[4] or b.maxz
  if not minx or minx == huge then
    minx, minz, maxx, maxz = -100, -100, 100, 100
  end
  local margin = opts.margin or 60
  minx, minz, maxx, maxz = minx - margin, minz - margin, maxx + margin, maxz + margin
  local T = M.TILE
  local mpp = opts.metres_per_pixel or 2
  while max(maxx - minx, maxz - minz) / (T * mpp) > M.MAX_TILES do mpp = mpp * 1.25 end
  local span = T * mpp
  local nx, nz = max(1, ceil((maxx - minx) / span)), max(1, ceil((maxz - minz) / span))
  -- centre the tile grid on the city
  local x0 = (minx + maxx) / 2 - nx * span / 2
  local z0 = (minz + maxz) / 2 - nz * span / 2
  local W, H = nx * T, nz * T
  local canvas = assert(core.canvas_new(W, H, M.WATER))
  for _, pc in ipairs(M.PALETTE) do
    local byroom = scene.fills[pc[1]]
    if byroom then
      local rooms = {}
      for r in pairs(byroom) do rooms[#rooms + 1] = r end
      table.sort(rooms)
      for _, r in ipairs(rooms) do
        local xz = byroom[r]
        local xy = {}
        for i = 1, #xz, 2 do
          xy[i] = (xz[i] - x0) / mpp
          xy[i + 1] = (xz[i + 1] - z0) / mpp
        end
        canvas:triangles(xy, pc[2])
      end
    end
  end
  local rgb = canvas:rgb()
  canvas:close()
  local y = 0
  for _, v in ipairs(doc.vertices) do
    if v[2] < y then y = v[2] end
  end
  y = y - 1
  local textures, sections, shaders = {}, {}, {}
  local stride = W * 3
  for tz = 0, nz - 1 do
    for tx = 0, nx - 1 do
      local rows = {}
      for row = 0, T - 1 do
        local off = (tz * T + row) * stride + tx * T * 3
        rows[row + 1] = rgb:sub(off + 1, off + T * 3)
      end
      local k = #textures + 1
      local name = string_format("hudmap_%s_%02d", map, k - 1)
      local tex = psdl.tex.from_pixels{ width = T, height = T, format = 17, pixels = concat(rows), flags = 0x10001,
                                        mips = true }
      textures[k] = { name = name, tex = tex }
      local ax, az = x0 + tx * span, z0 + tz * span
      local bx, bz = ax + span, az + span
      local up = { 0, 1, 0 }
      sections[k] = { shader = k, packets = { {
        primitive = 3,
        vertices = {
          { position = { ax, y, az }, normal = up, uv = { 0, 0 } },
          { position = { bx, y, az }, normal = up, uv = { 1, 0 } },
          { position = { bx, y, bz }, normal = up, uv = { 1, 1 } },
          { position = { ax, y, bz }, normal = up, uv = { 0, 1 } },
        },
        indices = { 1, 3, 2, 1, 4, 3 }, -- signed area < 0 in (x, z), like PSDL ground (CF §7.3)
      } } }
      shaders[k] = { texture = name, diffuse = { 255, 255, 255, 255 }, second = { 255, 255, 255, 255 },
                     emissive = { 0, 0, 0, 255 }, power = 0.0 }
    end
  end
  local pkg = { magic = "PKG3", chunks = {
    { name = "H", geometry = { fvf = 0x112, sections = sections } },
    { name = "shaders", shaders = { compact = true, paint_jobs = { shaders } } },
  } }
  return { pkg = pkg, textures = textures }, {
    tiles = { nx, nz }, metres_per_pixel = mpp, rect = { x0, z0, x0 + nx * span, z0 + nz * span }, y = y,
  }
end

return M
