--- `psdl terrain info|export|import`: The Sims 2 neighbourhood terrain (NHTG) in
-- `.package` files and as `.nhtg` resources, and grayscale heightmaps (PNG, PGM).
--
--     psdl terrain info FILE... [--json]
--     psdl terrain export SOURCE -o OUT.png|OUT.pgm|OUT.nhtg [--bits 8|16] [--offset H]
--                         [--scale S] [--cell-size C]
--     psdl terrain export CITY.psdl -o OUT.png|OUT.pgm|OUT.nhtg [--cell-size C] [...]
--     psdl terrain import SOURCE -o TARGET.package|TARGET.nhtg [--offset H] [--scale S]
--                         [--type NAME] [--water H] [--compress|--no-compress] [--resize]
--
-- SOURCE and FILE may be a package, an NHTG resource, a PNG or a PGM (told apart by their
-- first bytes); `export` also takes a PSDL city, whose ground (roads, sidewalks, block and
-- terrain ground; no roofs or facades) becomes a height grid of `--cell-size` metres (10).
-- `import` writes into an existing package (its NHTG replaced, every other
-- resource byte-identical, the original kept as TARGET.bak) or into an `.nhtg` file
-- (an existing one keeps its type, water level and second array). Writes are atomic.
-- @module psdl.cli.terrain

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local string, math, io = string, math, io
local ipairs, tonumber, pcall = ipairs, tonumber, pcall

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "The Sims 2 hood terrain (NHTG) and heightmaps: info, export, import."

--- Longer description shown by `psdl terrain --help`.
M.description = "Read and write the neighbourhood terrain (NHTG) of The Sims 2 packages, and "
  .. "convert it to and from 16- or 8-bit grayscale heightmaps (PNG, PGM). Axis convention: "
  .. "image row i = NHTG slow index (W + 1 rows, z), image column j = fast index (H + 1 "
  .. "columns, x); height = offset + scale * sample."

local function terrain_lib()
  local psdl = common.psdl()
  return psdl.terrain
end

local function number(s)
  local n = tonumber(s)
  if not n or n ~= n or n == math.huge or n == -math.huge then return nil, "a finite number expected" end
  return n
end

local function positive(s)
  local n = number(s)
  if not n or n <= 0 then return nil, "a positive number expected" end
  return n
end

--- Declare the command's sub-commands and their arguments.
-- @tparam table cmd the argparse command
-- @tparam[opt] function help_flag adds psdl's `-h --help` handling to a (sub)command
function M.configure(cmd, help_flag)
  cmd:command_target("terrain_command")
  local function sub(name, summary)
    local c = cmd:command(name, summary)
    if help_flag then help_flag(c) end
    return c
  end

  local info = sub("info", "Describe terrain files: grid, water level, type, height range, package layout.")
  info:argument("files", "Packages, NHTG resources, PNG or PGM heightmaps."):args("+")
  info:flag("--json", "Write the description as JSON.")

  local export = sub("export", "Write the terrain of a package or NHTG, or a city's ground, as a heightmap "
    .. "(or as an NHTG).")
  export:argument("source", "Package, NHTG resource, PNG, PGM, or a PSDL city (its ground).")
  export:option("-o --output", "Output file: .png, .pgm or .nhtg (or use --format)."):argname("<path>"):count(1)
  export:option("--format", "Output format."):choices({ "png", "pgm", "nhtg" })
  export:option("--bits", "Bits per sample of a heightmap (default 16)."):choices({ "8", "16" })
  export:option("--offset", "Height of sample 0 (default: the lowest height, rounded down)."):convert(number)
  export:option("--scale", "Height per sample step (default 0.01, more if the range needs it)."):convert(positive)
  export:option("--cell-size", "Horizontal size of a cell, written as metadata (default 10 for a hood); for a "
    .. "PSDL city the grid spacing in metres (default 10)."):convert(positive)

  local import = sub("import", "Write a heightmap (or NHTG) into a package's NHTG or an .nhtg file.")
  import:argument("source", "PNG, PGM, NHTG resource or package.")
  import:option("-o --output", "Target: an existing .package, or an .nhtg file."):argname("<path>"):count(1)
  import:option("--offset", "Height of sample 0 (default: from the file's metadata, else 0)."):convert(number)
  import:option("--scale", "Height per sample step (default: metadata, else 0.01; 1 for 8-bit)."):convert(positive)
  import:option("--type", "Terrain type of a new NHTG, or a new type (Temperate, Desert, Dirt, Concrete).")
    :argname("<name>")
  import:option("--water", "Water level (default: the target's, or 312.5)."):convert(number)
  import:flag("--compress", "Store the NHTG QFS-compressed in the package.")
  import:flag("--no-compress", "Store the NHTG uncompressed in the package.")
  import:flag("--resize", "Allow a grid size other than the package's current one.")
end

------------------------------------------------------------------------ loading

local function read(path)
  local bytes, err = common.read_file(path)
  if not bytes then common.failure("io", err) end
  return bytes
end

local function cleaned(path, msg)
  msg = common.clean(msg)
  if not msg:find(path, 1, true) then msg = path .. ": " .. msg end
  return msg
end

-- Load a source into {kind, nhtg?, grid, pkg?, entry?}; raises a failure on bad input.
-- bytes: the file's contents when already read. The file's bytes are not kept: a full
-- collection afterwards returns them (a 2048 x 2048 NHTG is 21 MB).
local function load_source(T, path, opts, bytes)
  bytes = bytes or read(path)
  local kind = T.detect(bytes)
  local r = { kind = kind, path = path }
  if kind == "package" then
    local pkg, msg, code = T.decode_package(bytes)
    if not pkg then common.failure(common.exit_for(code), cleaned(path, msg)) end
    local nhtg, k, pcode = T.package_nhtg(pkg)
    if not nhtg then common.failure(common.exit_for(pcode), cleaned(path, k)) end
    r.pkg, r.entry, r.nhtg, r.grid = pkg, k, nhtg, nhtg
  elseif kind == "nhtg" then
    local nhtg, msg, code = T.decode_nhtg(bytes)
    if not nhtg then common.failure(common.exit_for(code), cleaned(path, msg)) end
    r.nhtg, r.grid = nhtg, nhtg
  elseif kind == "png" or kind == "pgm" then
    local grid, msg, code = T.decode_heightmap(bytes, opts)
    if not grid then common.failure(common.exit_for(code), cleaned(path, msg)) end
    r.grid = grid
  else
    common.failure("bad_input", path .. ": not a package, an NHTG resource, a PNG or a PGM")
  end
  return r
end

------------------------------------------------------------------------ info

local function hex(n) return string.format("0x%08X", n) end

local function describe(T, path)
  local bytes, err = common.read_file(path)
  if not bytes then return nil, err, "io" end
  local kind = T.detect(bytes)
  local d = { file = path, kind = kind or "unknown", size = #bytes }
  local nhtg, msg, code
  if kind == "package" then
    local pkg
    pkg, msg, code = T.decode_package(bytes)
    if not pkg then return nil, cleaned(path, msg), code end
    local ncompressed = 0
    for _, e in ipairs(pkg.entries) do if e.compressed then ncompressed = ncompressed + 1 end end
    d.package = {
      version = string.format("%d.%d", pkg.major, pkg.minor),
      index_version = string.format("%d.%d", pkg.index_major, pkg.index_minor),
      entry_size = pkg.entry_size, entries = #pkg.entries, compressed = ncompressed,
      dir = pkg.dir, holes = pkg.hole_count,
    }
    local k, count = T.find_nhtg(pkg)
    if not k then return nil, cleaned(path, count), "bad_input" end
    local e = pkg.entries[k]
    d.package.nhtg_entry = {
      index = k, count = count, type = hex(e.type), group = hex(e.group), instance = hex(e.instance),
      instance_hi = hex(e.instance_hi), offset = e.offset, stored_size = e.size, size = e.usize,
      compressed = e.compressed,
    }
    nhtg, msg, code = T.package_nhtg(pkg)
  elseif kind == "nhtg" then
    nhtg, msg, code = T.decode_nhtg(bytes)
  elseif kind == "png" or kind == "pgm" then
    local grid
    grid, msg, code = T.decode_heightmap(bytes)
    if not grid then return nil, cleaned(path, msg), code end
    local raw = grid.samples:stats()
    local lo, hi = raw.min, raw.max
    local s = T.stats(grid)
    d.heightmap = {
      format = kind, width = grid.cols, height = grid.rows, maxval = grid.maxval,
      bits = grid.maxval > 255 and 16 or 8, metadata = grid.text,
      offset = grid.offset, scale = grid.scale, cell_size = grid.cell_size,
      samples = { min = lo, max = hi },
      heights = { min = s.min, max = s.max, mean = s.mean },
      nhtg_tiles = (grid.rows >= 2 and grid.cols >= 2) and { grid.rows - 1, grid.cols - 1 } or nil,
    }
    return d
  else
    return nil, path .. ": not a package, an NHTG resource, a PNG or a PGM", "bad_magic"
  end
  if not nhtg then return nil, cleaned(path, msg), code end
  local s = T.stats(nhtg)
  d.nhtg = {
    version = nhtg.version, width = nhtg.width, height = nhtg.height, rows = nhtg.rows, cols = nhtg.cols,
    water_level = nhtg.water_level, terrain_type = nhtg.terrain_type,
    heights = { min = s.min, max = s.max, mean = s.mean, min_at = s.min_at, max_at = s.max_at },
    below_water = s.below_water, points = s.points, extra_nonzero = s.extra_nonzero,
    size = T.nhtg_size(nhtg.width, nhtg.height, #nhtg.terrain_type),
  }
  d.warnings = {}
  for _, w in ipairs(T.check_nhtg(nhtg)) do d.warnings[#d.warnings + 1] = w end
  return d
end

local function print_text(out, d)
  local function line(label, fmt, ...)
    out:write(string.format("  %-15s " .. fmt .. "\n", label, ...))
  end
  local num = common.num
  out:write(d.file, "\n")
  local p = d.package
  if p then
    line("package", "DBPF %s, index %s (%d-byte entries), %d entries, %d compressed%s%s", p.version,
      p.index_version, p.entry_size, p.entries, p.compressed, p.dir and ", DIR entry " .. p.dir or "",
      p.holes > 0 and string.format(", %d hole%s", p.holes, p.holes == 1 and "" or "s") or "")
    local e = p.nhtg_entry
    line("NHTG entry", "%d (group %s, instance %s%s), %s%s", e.index, e.group, e.instance,
      e.instance_hi ~= "0x00000000" and ", high " .. e.instance_hi or "",
      e.compressed and string.format("QFS-compressed, %s -> %s bytes", common.int(e.stored_size), common.int(e.size))
        or string.format("uncompressed, %s bytes", common.int(e.size)),
      e.count > 1 and string.format(" (%d NHTG entries)", e.count) or "")
  end
  local n = d.nhtg
  if n then
    line("version", "%d", n.version)
    line("grid", "%d x %d tiles: %d rows (W + 1, z) x %d columns (H + 1, x)", n.width, n.height, n.rows, n.cols)
    line("water level", "%s", num(n.water_level))
    line("terrain type", "%s", n.terrain_type)
    line("heights", "min %s (row %d, column %d), max %s (row %d, column %d), mean %s", num(n.heights.min),
      n.heights.min_at[1], n.heights.min_at[2], num(n.heights.max), n.heights.max_at[1], n.heights.max_at[2],
      string.format("%.6g", n.heights.mean))
    line("below water", "%s of %s points", common.int(n.below_water), common.int(n.points))
    line("second array", "%s bytes, %s non-zero", common.int(n.points), common.int(n.extra_nonzero))
    line("NHTG size", "%s bytes", common.int(n.size))
    for _, w in ipairs(d.warnings) do line("warning", "%s: %s", w.rule, w.message) end
  end
  local h = d.heightmap
  if h then
    line("heightmap", "%s, %d x %d pixels (columns x rows), %d-bit (maxval %d)", h.format:upper(), h.width,
      h.height, h.bits, h.maxval)
    line("mapping", "height = %s + %s * sample%s", num(h.offset), num(h.scale),
      h.metadata and " (from the file)" or " (defaults: no psdlkit metadata)")
    if h.cell_size then line("cell size", "%s", num(h.cell_size)) end
    line("samples", "min %d, max %d", h.samples.min, h.samples.max)
    line("heights", "min %s, max %s, mean %s", num(h.heights.min), num(h.heights.max),
      string.format("%.6g", h.heights.mean))
    if h.nhtg_tiles then line("as NHTG", "%d x %d tiles", h.nhtg_tiles[1], h.nhtg_tiles[2]) end
  end
end

local function run_info(args, ctx, T)
  local code = ctx.exit.ok
  local results, shown = {}, 0
  for _, file in ipairs(args.files) do
    local d, msg, fcode = describe(T, file)
    if not d then
      code = math.max(code, ctx:fail(common.exit_for(fcode), common.clean(msg)))
      results[#results + 1] = { file = file, error = { code = fcode, message = common.clean(msg) } }
    elseif args.json then
      if d.warnings then
        for i, w in ipairs(d.warnings) do d.warnings[i] = docjson.object(w) end
      end
      results[#results + 1] = d
    else
      if shown > 0 then ctx.stdout:write("\n") end
      shown = shown + 1
      print_text(ctx.stdout, d)
    end
  end
  if args.json then
    ctx.stdout:write(docjson.encode({ format = "psdlkit-terrain-info", version = 1, files = results }))
  end
  return code
end

------------------------------------------------------------------------ export

local function format_of(path, explicit)
  if explicit then return explicit end
  local ext = path:match("%.([%w]+)$")
  ext = ext and ext:lower()
  if ext == "png" or ext == "pgm" or ext == "nhtg" then return ext end
  return nil
end

local function run_export(args, ctx, T)
  common.refuse_overwrite({ args.source }, { { args.output, "-o" } })
  local fmt = format_of(args.output, args.format)
  if not fmt then
    common.failure("usage", args.output .. ": cannot tell the format from the name; use --format png|pgm|nhtg")
  end
  local src
  local head = read(args.source)
  if head:sub(1, 4) == "PSD0" then -- a city: its ground
    local doc, dmsg, dcode = common.psdl().decode(head)
    if not doc then common.failure(common.exit_for(dcode), cleaned(args.source, dmsg)) end
    local grid, info = T.from_city(doc, { cell = args.cell_size or 10 })
    if not grid then common.failure("bad_input", args.source .. ": " .. tostring(info)) end
    src = { kind = "psdl", path = args.source, grid = grid }
    ctx:note(string.format("%s: ground of %s triangles on %d x %d points (cell %s m, origin x %s, z %s), "
      .. "%s filled from their neighbours", args.source, common.int(info.triangles), grid.cols, grid.rows,
      common.num(grid.cell_size), common.num(grid.origin.x), common.num(grid.origin.z), common.int(info.filled)))
  else
    src = load_source(T, args.source, nil, head)
  end
  head = nil -- the file's bytes are garbage from here on
  collectgarbage()
  local bytes, mapping
  if fmt == "nhtg" then
    local nhtg = src.nhtg
    if not nhtg then
      local msg
      nhtg, msg = T.nhtg_from_grid(src.grid)
      if not nhtg then common.failure("bad_input", cleaned(args.source, msg)) end
    end
    local ok, res = pcall(T.encode_nhtg, nhtg)
    if not ok then common.failure("bad_input", args.source .. ": " .. common.clean(res)) end
    bytes = res
  else
    local msg
    bytes, msg = T.encode_heightmap(src.grid, {
      format = fmt, bits = args.bits and tonumber(args.bits) or 16, offset = args.offset, scale = args.scale,
      cell_size = args.cell_size,
    })
    if not bytes then common.failure("bad_input", cleaned(args.source, msg)) end
    mapping = msg
  end
  local ok, err, code = T.write_file(args.output, bytes)
  if not ok then common.failure(common.exit_for(code), common.clean(err)) end
  if mapping then
    ctx:note(string.format("%s: %d x %d pixels, height = %s + %s * sample", args.output, src.grid.cols,
      src.grid.rows, common.num(mapping.offset), common.num(mapping.scale)))
  end
  return ctx.exit.ok
end

------------------------------------------------------------------------ import

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

local function run_import(args, ctx, T)
  if args.compress and args.no_compress then
    common.failure("usage", "--compress and --no-compress exclude each other")
  end
  common.refuse_overwrite({ args.source }, { { args.output, "-o" } })
  local src = load_source(T, args.source, { offset = args.offset, scale = args.scale })
  collectgarbage() -- the source file's bytes
  local target = args.output
  local target_kind
  if exists(target) then
    local head = read(target)
    target_kind = T.detect(head)
    if target_kind ~= "package" and target_kind ~= "nhtg" then
      common.failure("bad_input", target .. ": the target exists and is neither a package nor an NHTG resource")
    end
  else
    if target:lower():match("%.package$") then
      common.failure("io", target .. ": no such package: import writes into an existing neighbourhood "
        .. "package (or give an .nhtg output)")
    end
    if not target:lower():match("%.nhtg$") then
      common.failure("usage", target .. ": a new target must be an .nhtg file (import writes an NHTG "
        .. "resource, or into an existing .package)")
    end
    target_kind = "new"
  end

  -- the template: the NHTG now in the target (kept: version, type, water, second array)
  local template
  if target_kind == "package" then
    local pkg, msg, code = T.read_package(target)
    if not pkg then common.failure(common.exit_for(code), common.clean(msg)) end
    template = T.package_nhtg(pkg)
  elseif target_kind == "nhtg" then
    local msg, code
    template, msg, code = T.decode_nhtg(read(target))
    if not template then common.failure(common.exit_for(code), cleaned(target, msg)) end
  end
  if not template and src.nhtg then template = src.nhtg end -- NHTG to NHTG: keep its header
  if template and args.resize and (template.rows ~= src.grid.rows or template.cols ~= src.grid.cols) then
    template = { terrain_type = template.terrain_type, water_level = template.water_level }
  end
  local nhtg, msg
  if template and template.rows then
    nhtg, msg = T.nhtg_from_grid(src.grid, { template = template, terrain_type = args.type, water_level = args.water })
  else
    nhtg, msg = T.nhtg_from_grid(src.grid, {
      terrain_type = args.type or (template and template.terrain_type),
      water_level = args.water or (template and template.water_level),
    })
  end
  if not nhtg then common.failure("bad_input", common.clean(msg) .. " (" .. target .. ")") end
  local eok, bytes = pcall(T.encode_nhtg, nhtg)
  if not eok then common.failure("bad_input", args.source .. ": " .. common.clean(bytes)) end

  if target_kind == "package" then
    bytes = nil -- write_package_nhtg encodes it again: let the collector have this copy
    local compress = nil
    if args.compress then compress = true elseif args.no_compress then compress = false end
    local ok, info, code = T.write_package_nhtg(target, nhtg, { compress = compress, resize = args.resize })
    if not ok then common.failure(common.exit_for(code), common.clean(info)) end
    ctx:note(string.format("%s: NHTG (entry %d, %d x %d tiles) replaced, %s; %s", target, info.entry,
      nhtg.width, nhtg.height, info.compressed and "QFS-compressed" or "uncompressed",
      info.backup_kept and ("backup " .. info.backup .. " already there, kept") or ("original saved as " .. info.backup)))
  else
    if target_kind == "nhtg" and not exists(target .. ".bak") then
      local ok, err, code = T.write_file(target .. ".bak", read(target))
      if not ok then common.failure(common.exit_for(code), common.clean(err)) end
    end
    local ok, err, code = T.write_file(target, bytes)
    if not ok then common.failure(common.exit_for(code), common.clean(err)) end
    ctx:note(string.format("%s: NHTG of %d x %d tiles written (%s bytes)", target, nhtg.width, nhtg.height,
      common.int(#bytes)))
  end
  for _, w in ipairs(T.check_nhtg(nhtg)) do
    ctx.stderr:write(string.format("psdl %s: warning: %s\n", ctx.verb, w.message))
  end
  return ctx.exit.ok
end

--- Run `psdl terrain <sub-command>`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local T = terrain_lib()
  local sub = args.terrain_command
  if sub == "info" then return run_info(args, ctx, T) end
  if sub == "export" then return run_export(args, ctx, T) end
  return run_import(args, ctx, T)
end

return M
