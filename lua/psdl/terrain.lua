--- Terrain: The Sims 2 neighbourhood terrain (NHTG) inside `.package` files, grayscale
-- heightmaps (16-bit PNG, PGM), and height sampling for laying things over a terrain.
--
-- Byte work is in C (`psdl.core`, src/psdl_nhtg.h); this module adds file handling, the
-- heightmap value mapping, checks and the `Terrain` sampler.
--
-- **Axis convention.** An NHTG stores `(W+1) x (H+1)` heights in one run. psdlkit reads it
-- as `rows = W + 1` (slow index `i`) by `cols = H + 1` (fast index `j`);
-- `heights[i * cols + j + 1]` is point `(i, j)` (both from 0), exactly the file order.
-- World: `x = origin.x + j * cell_size`, `z = origin.z + i * cell_size`. Heightmap images
-- hold row `i` as image row `i`, top row first (image width = `cols`, height = `rows`).
-- In hood terms the fast index pairs with the first NHTR coordinate and a lot's Top, the
-- slow index with the second NHTR coordinate and a lot's Left (nhtg-format.md §4), so
-- `terrain:lot_height(left, top)` is `point(left, top)` and `terrain:nhtr_height(a, b)`
-- samples `x = a, z = b` on the 10-unit hood grid.
--
-- **Height grids.** `heights` (of an NHTG, a decoded heightmap, a Terrain) is a
-- `psdl.Heightfield`: one C array (floats for an NHTG, the 16- or 8-bit samples of a
-- heightmap with its mapping, doubles for heights set from Lua), read like the flat table
-- it replaces (`heights[k]`, `#heights`, `ipairs`) and written with `heights[k] = h` (a
-- height reads back as it was set; the grid's size is fixed). Sampling, statistics and
-- conversions run in C (src/psdl_heightfield.c), so a 2048 x 2048 grid takes 8 or 16 MB.
-- Functions that take a grid also accept a plain table of numbers as `heights`.
--
-- **Heightmap values.** `height = offset + scale * sample`. Exports write the mapping
-- into the file (PNG tEXt `psdlkit:heightmap`, PGM comment `# psdlkit:heightmap ...`) as
-- `offset=.. scale=.. cell_size=..`; imports read it back, and options override it.
--
-- Errors follow the library's channels: bad data and I/O return `nil, message, code`
-- (`"psdl: <code>: <detail> at offset 0x.."`); misuse raises.
-- @module psdl.terrain

local core = require "psdl.core"

local function io_open(path, mode) return io.open(path, mode) end -- looked up per call: psdl.sandbox guards io.open
local math_floor, math_huge = math.floor, math.huge
local string_format, string_pack = string.format, string.pack
local type, error, tostring, tonumber, pairs, ipairs, setmetatable =
  type, error, tostring, tonumber, pairs, ipairs, setmetatable

local M = {}

--- NHTG resource type (and block id), 0xABCB5DA4.
M.NHTG_TYPE = core.NHTG_TYPE
--- The water level of every known hood.
M.WATER_LEVEL = 312.5
--- Terrain types as NHTG spells them (the UI calls Temperate "Lush").
M.TERRAIN_TYPES = { "Temperate", "Desert", "Dirt", "Concrete" }
--- World units per NHTG cell in hood coordinates (NHTR, lots).
M.HOOD_CELL_SIZE = 10
--- Where the game looks for the hood's NHTG: group and instance (nhtg-format.md §8).
M.NHTG_GROUP, M.NHTG_INSTANCE = 0xFFFFFFFF, 0

local NHTG_MAGIC = string_pack("<I4", core.NHTG_TYPE)
local PNG_MAGIC = "\137PNG\r\n\26\n"
local TEXT_KEY = "psdlkit:heightmap"

local function argcheck(cond, n, fname, msg)
  if not cond then error(string_format("bad argument #%d to '%s' (%s)", n, fname, msg), 3) end
end

local function check_options(opts, allowed, fname, argn)
  if opts == nil then return {} end
  argcheck(type(opts) == "table", argn, fname, "table expected, got " .. type(opts))
  for k in pairs(opts) do
    if not allowed[k] then
      error(string_format("bad argument #%d to '%s' (unknown option '%s')", argn, fname, tostring(k)), 3)
    end
  end
  return opts
end

local function fail(code, fmt, ...)
  return nil, "psdl: " .. code .. ": " .. string_format(fmt, ...), code
end

local is_field = core.is_heightfield

--- Whether a value is a height grid userdata (`psdl.Heightfield`, see the module comment).
-- @function is_heightfield
-- @param v
-- @treturn boolean
M.is_heightfield = is_field

-- The heights of a grid as a Heightfield: the grid's own, or one made from its table.
local function field_of(grid)
  local h = grid.heights
  if is_field(h) then return h end
  return core.heightfield(grid.rows, grid.cols, h)
end

local function has_heights(grid)
  if type(grid) ~= "table" or math.type(grid.rows) ~= "integer" or math.type(grid.cols) ~= "integer" then
    return false
  end
  local h = grid.heights
  return (type(h) == "table" or is_field(h)) and #h == grid.rows * grid.cols
end

------------------------------------------------------------------------ files

--- Read a whole file.
-- @tparam string path
-- @treturn string bytes, or `nil, "psdl: io: ...", "io"`
function M.read_file(path)
  argcheck(type(path) == "string", 1, "read_file", "string expected, got " .. type(path))
  local f, err = io_open(path, "rb")
  if not f then return nil, "psdl: io: " .. err, "io" end
  local bytes, rerr = f:read("a")
  f:close()
  if not bytes then return nil, "psdl: io: " .. path .. ": " .. tostring(rerr), "io" end
  return bytes
end

--- Replace a file atomically (temporary file in the same folder, then rename).
-- @function write_file
-- @tparam string path
-- @tparam string bytes
-- @treturn boolean true, or `nil, message, "io"`
M.write_file = core.write_file

--- What a byte string holds, from its first bytes.
-- @tparam string bytes
-- @treturn string|nil `"package"`, `"nhtg"`, `"png"`, `"pgm"`, or nil
function M.detect(bytes)
  if type(bytes) ~= "string" then return nil end
  if bytes:sub(1, 4) == "DBPF" then return "package" end
  if bytes:sub(1, 4) == NHTG_MAGIC then return "nhtg" end
  if bytes:sub(1, 8) == PNG_MAGIC then return "png" end
  if bytes:sub(1, 2) == "P5" then return "pgm" end
  return nil
end

------------------------------------------------------------------------ NHTG

--- Decode an NHTG resource.
-- @function decode_nhtg
-- @tparam string bytes
-- @treturn table `{version, width, height, water_level, terrain_type, rows, cols, heights, extra}`
--   or `nil, message, code`
M.decode_nhtg = core.nhtg_decode

--- Encode an NHTG model (byte-exact for a decoded, unchanged one).
-- @function encode_nhtg
-- @tparam table nhtg
-- @treturn string bytes
-- @raise on a model the format cannot hold (path-qualified message)
M.encode_nhtg = core.nhtg_encode

--- Size in bytes of an NHTG resource: `52 + L + 4 P + 28 + P`, `P = (W+1)(H+1)`.
-- @function nhtg_size
-- @tparam integer width tiles W
-- @tparam integer height tiles H
-- @tparam[opt=9] integer type_len L
M.nhtg_size = core.nhtg_size

--- A new NHTG model: version 4, second array all zero.
-- @tparam[opt] table opts `width` (tiles, default 128), `height` (default = width),
--   `terrain_type` ("Temperate"), `water_level` (312.5), `fill` (every height, default
--   the water level + 25), or `heights` (a flat array or Heightfield, copied, or a function
--   `(i, j) -> h`)
-- @treturn table nhtg (`heights`: a Heightfield of doubles, or a copy of the one given)
function M.new_nhtg(opts)
  opts = check_options(opts, { width = true, height = true, terrain_type = true, water_level = true,
    fill = true, heights = true }, "new_nhtg", 1)
  local w = opts.width or 128
  local h = opts.height or w
  argcheck(math.type(w) == "integer" and w >= 1, 1, "new_nhtg", "width: positive integer expected")
  argcheck(math.type(h) == "integer" and h >= 1, 1, "new_nhtg", "height: positive integer expected")
  local water = opts.water_level or M.WATER_LEVEL
  local rows, cols = w + 1, h + 1
  local heights
  local src = opts.heights
  if type(src) == "function" then
    heights = core.heightfield(rows, cols, src)
  elseif type(src) == "table" or is_field(src) then
    argcheck(#src == rows * cols, 1, "new_nhtg",
      string_format("heights: %d values for %d x %d points", #src, rows, cols))
    heights = is_field(src) and src:copy() or core.heightfield(rows, cols, src)
  else
    heights = core.heightfield(rows, cols, opts.fill or (water + 25))
  end
  return {
    version = 4, width = w, height = h, water_level = water,
    terrain_type = opts.terrain_type or "Temperate", rows = rows, cols = cols,
    heights = heights, extra = string.rep("\0", rows * cols),
  }
end

--- Statistics of a height grid (an NHTG or anything with `rows`, `cols`, `heights`),
-- computed in C.
-- @tparam table grid
-- @treturn table `{min, max, mean, min_at = {i, j}, max_at = {i, j} (the first lowest and
--   highest points), below_water = n, points = n, extra_nonzero = n (NHTG only)}`
function M.stats(grid)
  argcheck(has_heights(grid), 1, "stats", "a grid with rows, cols and rows * cols heights expected")
  local s = field_of(grid):stats(grid.water_level or M.WATER_LEVEL)
  if type(grid.extra) == "string" then s.extra_nonzero = core.nonzero_bytes(grid.extra) end
  return s
end

--- Things that load but are unusual or risky (nhtg-format.md §5, §7).
-- @tparam table nhtg
-- @treturn table list of `{rule = "...", message = "..."}` (empty when none)
function M.check_nhtg(nhtg)
  local w = {}
  local function warn(rule, fmt, ...) w[#w + 1] = { rule = rule, message = string_format(fmt, ...) } end
  if nhtg.water_level ~= M.WATER_LEVEL then
    warn("water_level", "water level %.9g is not the 312.5 of every known hood", nhtg.water_level)
  end
  if nhtg.width ~= nhtg.height then
    warn("grid_shape", "grid of %d x %d tiles is not square (every known hood is)", nhtg.width, nhtg.height)
  end
  if (nhtg.width ~= 128 and nhtg.width ~= 256) or (nhtg.height ~= 128 and nhtg.height ~= 256) then
    warn("grid_size", "grid of %d x %d tiles: hoods are 128 (or 256) tiles a side", nhtg.width, nhtg.height)
  end
  local known = false
  for _, t in ipairs(M.TERRAIN_TYPES) do if t == nhtg.terrain_type then known = true end end
  if not known then
    warn("terrain_type", "terrain type %q is not one of Temperate, Desert, Dirt, Concrete", nhtg.terrain_type)
  end
  local s = M.stats(nhtg)
  if s.min < 0 then
    warn("height_range", "lowest height %.9g (row %d, column %d) is below 0", s.min, s.min_at[1], s.min_at[2])
  end
  if s.max > 2000 then
    warn("height_range", "highest height %.9g (row %d, column %d) is above 2000", s.max, s.max_at[1], s.max_at[2])
  end
  return w
end

------------------------------------------------------------------------ packages

--- Decode a package's header and index.
-- @tparam string bytes
-- @treturn table package: header fields (`major`, `minor`, `index_minor`, `entry_size`, ...),
--   `entries` (`{type, group, instance, instance_hi, offset, size, compressed, usize}`),
--   `dir` (index of the DIR entry), and `bytes`; or `nil, message, code`
function M.decode_package(bytes)
  argcheck(type(bytes) == "string", 1, "decode_package", "string expected, got " .. type(bytes))
  local pkg, msg, code = core.dbpf_decode(bytes)
  if not pkg then return nil, msg, code end
  pkg.bytes = bytes
  return pkg
end

--- Read and decode a package file.
-- @tparam string path
-- @treturn table package (as `decode_package`, plus `path`), or `nil, message, code`
function M.read_package(path)
  local bytes, msg, code = M.read_file(path)
  if not bytes then return nil, msg, code end
  local pkg
  pkg, msg, code = M.decode_package(bytes)
  if not pkg then return nil, msg:gsub("^psdl: ([%w_]+): ", "psdl: %1: " .. path .. ": ", 1), code end
  pkg.path = path
  return pkg
end

--- The index entry of the hood's NHTG: the one at group 0xFFFFFFFF, instance 0 when there,
-- else the first of type 0xABCB5DA4.
-- @tparam table pkg
-- @treturn integer entry index (1-based), or `nil, message, "bad_index"`
-- @treturn integer number of NHTG entries in the package
function M.find_nhtg(pkg)
  local first, preferred, count = nil, nil, 0
  for k, e in ipairs(pkg.entries) do
    if e.type == M.NHTG_TYPE then
      count = count + 1
      first = first or k
      if not preferred and e.group == M.NHTG_GROUP and e.instance == M.NHTG_INSTANCE
        and e.instance_hi == 0 then
        preferred = k
      end
    end
  end
  if not first then
    return fail("bad_index", "no NHTG resource (type 0xABCB5DA4) in the package's %d entries", #pkg.entries)
  end
  return preferred or first, count
end

--- Extract (decompressing when needed) an entry's contents.
-- @tparam table pkg
-- @tparam integer k entry index
-- @treturn string contents, or `nil, message, code`
function M.extract(pkg, k)
  return core.dbpf_extract(pkg.bytes, k)
end

--- The hood's NHTG from a package.
-- @tparam table pkg
-- @treturn table nhtg, or `nil, message, code`
-- @treturn integer its entry index
function M.package_nhtg(pkg)
  local k, msg, code = M.find_nhtg(pkg)
  if not k then return nil, msg, code end
  local bytes
  bytes, msg, code = M.extract(pkg, k)
  if not bytes then return nil, msg, code end
  local nhtg
  nhtg, msg, code = M.decode_nhtg(bytes)
  if not nhtg then
    return nil, msg:gsub("^psdl: ([%w_]+): ", string_format("psdl: %%1: NHTG (entry %d): ", k), 1), code
  end
  return nhtg, k
end

--- Package bytes with the hood's NHTG replaced. Every other resource keeps its bytes; the
-- DIR follows the NHTG's compression; the grid size must stay the same unless `resize`.
-- @tparam table pkg
-- @tparam table nhtg
-- @tparam[opt] table opts `compress` (true/false; default: as the NHTG was stored),
--   `resize` (allow another grid size)
-- @treturn string package bytes, or `nil, message, code`
-- @treturn table `{entry = k, compressed = bool, old_size = {w, h}}`
function M.replace_nhtg(pkg, nhtg, opts)
  opts = check_options(opts, { compress = true, resize = true }, "replace_nhtg", 3)
  local k, msg, code = M.find_nhtg(pkg)
  if not k then return nil, msg, code end
  local old = M.package_nhtg(pkg) -- a broken old NHTG may be replaced as it is
  if old and not opts.resize and (old.width ~= nhtg.width or old.height ~= nhtg.height) then
    return fail("bad_count", "the new terrain has %d x %d tiles, the package's NHTG %d x %d "
      .. "(lots, roads and trees are placed on that grid; pass resize to replace it anyway)",
      nhtg.width, nhtg.height, old.width, old.height)
  end
  local data = M.encode_nhtg(nhtg)
  local compress = opts.compress
  if compress == nil then compress = pkg.entries[k].compressed end
  local out
  out, msg, code = core.dbpf_replace(pkg.bytes, k, data, compress)
  if not out then return nil, msg, code end
  -- read it back before anyone writes it: the NHTG must come out as it went in
  local check = core.dbpf_decode(out)
  local back = check and core.dbpf_extract(out, k)
  if back ~= data then
    return fail("invalid", "internal check failed: the rebuilt package does not give the NHTG back")
  end
  return out, { entry = k, compressed = compress and true or false,
    old_size = old and { old.width, old.height } or nil }
end

--- Replace the hood's NHTG in a package file. The original is copied to `<path>.bak` first
-- (an existing `.bak` is kept: it holds the oldest original); the package is then
-- replaced atomically.
-- @tparam string path package file
-- @tparam table nhtg
-- @tparam[opt] table opts as `replace_nhtg`, plus `backup` (default true)
-- @treturn boolean true, or `nil, message, code`
-- @treturn table `{entry, compressed, backup = path or nil, size}`
function M.write_package_nhtg(path, nhtg, opts)
  argcheck(type(path) == "string", 1, "write_package_nhtg", "string expected, got " .. type(path))
  opts = check_options(opts, { compress = true, resize = true, backup = true }, "write_package_nhtg", 3)
  local pkg, msg, code = M.read_package(path)
  if not pkg then return nil, msg, code end
  local out, info, rcode = M.replace_nhtg(pkg, nhtg, { compress = opts.compress, resize = opts.resize })
  if not out then return nil, info, rcode end
  info.size = #out
  if opts.backup ~= false then
    local bak = path .. ".bak"
    local f = io_open(bak, "rb")
    if f then
      f:close()
      info.backup_kept = true
    else
      local ok, berr, bcode = M.write_file(bak, pkg.bytes)
      if not ok then return nil, berr, bcode end
    end
    info.backup = bak
  end
  local ok, werr, wcode = M.write_file(path, out)
  if not ok then return nil, werr, wcode end
  return true, info
end

------------------------------------------------------------------------ heightmaps

local function parse_text(text)
  local m = {}
  if type(text) ~= "string" then return m end
  for k, v in text:gmatch("([%w_]+)=(%S+)") do
    local n = tonumber(v)
    if n and n == n and n ~= math_huge and n ~= -math_huge then m[k] = n end
  end
  return m
end

local function format_text(offset, scale, cell_size)
  local t = string_format("offset=%.17g scale=%.17g", offset, scale)
  if cell_size then t = t .. string_format(" cell_size=%.17g", cell_size) end
  return t
end

--- Encode a height grid as a heightmap image.
-- @tparam table grid anything with `rows`, `cols`, `heights` (an NHTG, a Terrain)
-- @tparam[opt] table opts `format` ("png" or "pgm", default "png"), `bits` (16 or 8,
--   default 16), `offset` (default: the lowest height, rounded down to a whole number),
--   `scale` (default 0.01, larger when the range needs it), `cell_size` (written as
--   metadata; default `grid.cell_size`, or 10 for an NHTG)
-- @treturn string image bytes, or `nil, message, code` (a height outside what the mapping
--   can store)
-- @treturn table the mapping `{offset, scale, cell_size, maxval}`
function M.encode_heightmap(grid, opts)
  opts = check_options(opts, { format = true, bits = true, offset = true, scale = true, cell_size = true },
    "encode_heightmap", 2)
  argcheck(has_heights(grid), 1, "encode_heightmap", "a grid with rows, cols and heights expected")
  local format = opts.format or "png"
  argcheck(format == "png" or format == "pgm", 2, "encode_heightmap", "format: \"png\" or \"pgm\" expected")
  local bits = opts.bits or 16
  argcheck(bits == 16 or bits == 8, 2, "encode_heightmap", "bits: 8 or 16 expected")
  local maxval = bits == 16 and 65535 or 255
  local hs = field_of(grid)
  local s = hs:stats()
  local offset = opts.offset or math_floor(s.min)
  local scale = opts.scale
  if not scale then
    scale = 0.01
    if (s.max - offset) / scale > maxval then scale = (s.max - offset) / maxval end
  end
  argcheck(type(scale) == "number" and scale > 0 and scale < math_huge, 2, "encode_heightmap",
    "scale: positive number expected")
  argcheck(type(offset) == "number" and offset == offset and math.abs(offset) < math_huge, 2,
    "encode_heightmap", "offset: finite number expected")
  local cell = opts.cell_size or grid.cell_size or (grid.terrain_type and M.HOOD_CELL_SIZE) or nil
  local cols = grid.cols
  local samples, k, v = hs:quantize(offset, scale, maxval)
  if not samples then
    return fail("bad_count", "height %.9g at row %d, column %d maps to sample %s, outside 0..%d "
      .. "(offset %.9g, scale %.9g)", hs[k], (k - 1) // cols, (k - 1) % cols,
      math.tointeger(v) and string_format("%d", v) or tostring(v), maxval, offset, scale)
  end
  local raster = {
    width = grid.cols, height = grid.rows, maxval = maxval, samples = samples,
    text = format_text(offset, scale, cell),
  }
  local bytes, msg, code
  if format == "png" then
    bytes, msg, code = core.png_encode(raster)
  else
    bytes, msg, code = core.pgm_encode(raster)
  end
  if not bytes then return nil, msg, code end
  return bytes, { offset = offset, scale = scale, cell_size = cell, maxval = maxval }
end

--- Decode a heightmap image (PNG or PGM, told apart by content) into a height grid.
-- The mapping comes from the options, else from the file's psdlkit metadata, else
-- offset 0 and scale 0.01 (maxval above 255) or 1 (8-bit).
-- @tparam string bytes
-- @tparam[opt] table opts `offset`, `scale`, `cell_size`
-- @treturn table grid `{rows, cols, heights, offset, scale, cell_size, maxval, format,
--   samples}` (`samples`: the file's integer samples, read-only; `heights`: a Heightfield
--   over them), or `nil, message, code`
function M.decode_heightmap(bytes, opts)
  argcheck(type(bytes) == "string", 1, "decode_heightmap", "string expected, got " .. type(bytes))
  opts = check_options(opts, { offset = true, scale = true, cell_size = true }, "decode_heightmap", 2)
  local kind = M.detect(bytes)
  local raster, msg, code
  if kind == "png" then
    raster, msg, code = core.png_decode(bytes)
  elseif kind == "pgm" then
    raster, msg, code = core.pgm_decode(bytes)
  else
    return fail("bad_magic", "not a PNG or binary PGM heightmap")
  end
  if not raster then return nil, msg, code end
  local meta = parse_text(raster.text)
  local offset = opts.offset or meta.offset or 0.0
  local scale = opts.scale or meta.scale or (raster.maxval > 255 and 0.01 or 1.0)
  local cell = opts.cell_size or meta.cell_size
  local samples = raster.samples
  local heights = samples:mapped(offset, scale)
  return {
    rows = raster.height, cols = raster.width, heights = heights, samples = samples,
    offset = offset, scale = scale, cell_size = cell, maxval = raster.maxval, format = kind,
    text = raster.text,
  }
end

--- An NHTG model from a height grid (a decoded heightmap): rows - 1 by cols - 1 tiles.
-- @tparam table grid
-- @tparam[opt] table opts `template` (an NHTG whose version, type, water level and second
--   array are kept; its size must match), `terrain_type`, `water_level`
-- @treturn table nhtg, or `nil, message, "bad_count"` (size mismatch with the template)
function M.nhtg_from_grid(grid, opts)
  opts = check_options(opts, { template = true, terrain_type = true, water_level = true }, "nhtg_from_grid", 2)
  local t = opts.template
  if t and (t.rows ~= grid.rows or t.cols ~= grid.cols) then
    return fail("bad_count", "heightmap of %d x %d pixels does not match the terrain's %d x %d points "
      .. "(%d x %d tiles; image width = H + 1, height = W + 1)", grid.cols, grid.rows, t.cols, t.rows,
      t.width, t.height)
  end
  if grid.rows < 2 or grid.cols < 2 then
    return fail("bad_count", "heightmap of %d x %d pixels: a terrain needs at least 2 x 2 points",
      grid.cols, grid.rows)
  end
  local n = M.new_nhtg {
    width = grid.rows - 1, height = grid.cols - 1,
    terrain_type = opts.terrain_type or (t and t.terrain_type) or "Temperate",
    water_level = opts.water_level or (t and t.water_level) or M.WATER_LEVEL,
    heights = grid.heights,
  }
  if t then
    n.version = t.version
    n.extra = t.extra
  end
  return n
end

------------------------------------------------------------------------ Terrain

--- A height field to sample: `rows`, `cols`, `heights` (a Heightfield: flat, 1-based,
-- row-major; sampled in C),
-- `cell_size`, `origin = {x, z}`, `water_level`, `nhtg` (when loaded from one), `source`.
-- @type Terrain
local Terrain = {}
Terrain.__index = Terrain
M.Terrain = Terrain

--- Height of grid point (i, j), both from 0 (i: row, z; j: column, x), clamped to the grid.
function Terrain:point(i, j)
  return self.heights:point(i, j)
end

--- Bilinear height at grid coordinates (u along columns/x, v along rows/z, in cells).
-- Outside the grid the nearest edge value is used; NaN for a NaN coordinate.
function Terrain:sample_grid(u, v)
  return self.heights:bilinear(u, v)
end

--- Bilinear height at world position (x, z). Outside the terrain the edge is extended.
function Terrain:height(x, z)
  return self.heights:bilinear((x - self.origin.x) / self.cell_size, (z - self.origin.z) / self.cell_size)
end

--- Whether (x, z) lies on the terrain (edges included).
function Terrain:contains(x, z)
  local u = (x - self.origin.x) / self.cell_size
  local v = (z - self.origin.z) / self.cell_size
  return u >= 0 and v >= 0 and u <= self.cols - 1 and v <= self.rows - 1
end

--- World extent: `{min = {x, z}, max = {x, z}}`.
function Terrain:extent()
  local o, c = self.origin, self.cell_size
  return { min = { o.x, o.z }, max = { o.x + (self.cols - 1) * c, o.z + (self.rows - 1) * c } }
end

--- Height under a hood lot: point (i = Left, j = Top) (nhtg-format.md §4).
function Terrain:lot_height(left, top)
  return self:point(left, top)
end

--- Height under an NHTR position (road, tree, bridge): the first coordinate runs along the
-- fast index (x), the second along the slow index (z), 10 units per cell.
function Terrain:nhtr_height(first, second)
  return self:sample_grid(first / M.HOOD_CELL_SIZE, second / M.HOOD_CELL_SIZE)
end

--- Statistics (see `psdl.terrain.stats`).
function Terrain:stats() return M.stats(self) end

--- The terrain as an NHTG model (the loaded NHTG's header when there is one).
function Terrain:to_nhtg(opts)
  opts = opts or {}
  return M.nhtg_from_grid(self, { template = opts.template or self.nhtg, terrain_type = opts.terrain_type,
    water_level = opts.water_level })
end

local function new_terrain(grid, opts, source)
  local cell = opts.cell_size or grid.cell_size or (grid.terrain_type and M.HOOD_CELL_SIZE) or 1
  argcheck(type(cell) == "number" and cell > 0, 2, "terrain", "cell_size: positive number expected")
  local origin = opts.origin or { x = 0, z = 0 }
  local heights = field_of(grid)
  local rows, cols = heights:size()
  if rows ~= grid.rows or cols ~= grid.cols then heights = core.heightfield(grid.rows, grid.cols, heights:to_table()) end
  return setmetatable({
    rows = grid.rows, cols = grid.cols, heights = heights, cell_size = cell,
    origin = { x = origin.x or origin[1] or 0, z = origin.z or origin[2] or 0 },
    water_level = grid.water_level, nhtg = grid.terrain_type and grid or nil, source = source,
    mapping = grid.scale and { offset = grid.offset, scale = grid.scale } or nil,
  }, Terrain)
end

--- A Terrain over a height grid (an NHTG, a decoded heightmap, or any `{rows, cols, heights}`).
-- A Heightfield is shared; a table of heights is copied into one.
-- @tparam table grid
-- @tparam[opt] table opts `cell_size` (default: the grid's, 10 for an NHTG, else 1),
--   `origin` (`{x =, z =}`, default 0, 0)
-- @treturn Terrain
function M.from_grid(grid, opts)
  argcheck(has_heights(grid) and grid.rows >= 1 and grid.cols >= 1, 1, "from_grid",
    "a grid with rows, cols and rows * cols heights expected")
  return new_terrain(grid, check_options(opts, { cell_size = true, origin = true }, "from_grid", 2), "grid")
end

--- A city's ground as a height grid: its walkable surfaces (roads, sidewalks, crosswalks,
-- block and terrain ground; no roofs, facades or slivers; tunnel and bridge rooms only with
-- `warp`) rasterised onto points `cell` metres apart, the highest surface at each point,
-- points nothing covers filled from their nearest covered neighbours
-- (`psdl.city.terrain.from_city`). Same axes as a loaded terrain: row i along z, column j
-- along x.
-- @param what a PSDL document, or a `psdl.city` City
-- @tparam[opt] table opts `cell` (m, 10), `origin` (`{x, z}`), `cols`, `rows`, `like` (a
--   Terrain whose grid to use), `warp`, `fill` ("nearest" or a height)
-- @treturn Terrain (with `covered`: one boolean per point), or `nil, message`
-- @treturn table `{triangles, covered, filled}`
function M.from_city(what, opts)
  return require("psdl.city.terrain").from_city(what, opts)
end

--- Load a terrain from bytes or a file: a package (its NHTG), an NHTG resource, or a PNG or
-- PGM heightmap (told apart by content).
-- @tparam string what a path, or the bytes themselves when `opts.bytes`
-- @tparam[opt] table opts `bytes` (what is the content, not a path), `cell_size`, `origin`,
--   and for heightmaps `offset`, `scale`
-- @treturn Terrain, or `nil, message, code`
function M.load(what, opts)
  argcheck(type(what) == "string", 1, "load", "string expected, got " .. type(what))
  opts = check_options(opts, { bytes = true, cell_size = true, origin = true, offset = true, scale = true },
    "load", 2)
  local bytes, msg, code = what, nil, nil
  local name = opts.bytes and "bytes" or what
  if not opts.bytes then
    bytes, msg, code = M.read_file(what)
    if not bytes then return nil, msg, code end
  end
  local kind = M.detect(bytes)
  local grid
  if kind == "package" then
    local pkg
    pkg, msg, code = M.decode_package(bytes)
    if pkg then grid, msg, code = M.package_nhtg(pkg) end
  elseif kind == "nhtg" then
    grid, msg, code = M.decode_nhtg(bytes)
  elseif kind == "png" or kind == "pgm" then
    grid, msg, code = M.decode_heightmap(bytes, { offset = opts.offset, scale = opts.scale,
      cell_size = opts.cell_size })
  else
    return fail("bad_magic", "%s: not a package, an NHTG resource, a PNG or a PGM", name)
  end
  if not grid then return nil, msg, code end
  return new_terrain(grid, opts, kind)
end

return M
