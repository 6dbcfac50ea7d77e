-- Terrain: NHTG (psdl.core + psdl.terrain), DBPF packages, QFS, heightmaps, the Terrain
-- sampler and `psdl terrain info|export|import`. Fixtures: spec/fixtures/terrain (built by
-- make_fixtures.lua with string.pack only; see its README).

local psdl = require "psdl"
local T = require "psdl.terrain"
local core = require "psdl.core"
local cjson = require "cjson"

local pack, unpack = string.pack, string.unpack
local DIR = "spec/fixtures/terrain/"

local H = require "helper"
local slurp, spit = H.read_bytes, H.write_bytes

local exists = H.exists

local function cleanup(...) H.cleanup(finally, ...) end

-- A fresh temporary path, removed (with the .bak an import may leave) when the test ends.
local function tmpname(suffix)
  local p = H.tmpname(suffix)
  cleanup(p, p .. ".bak")
  return p
end

-- A copy of a fixture in a temporary file.
local function copy_fixture(name, suffix)
  local p = tmpname(suffix or ("." .. name:match("%.(%w+)$")))
  spit(p, slurp(DIR .. name))
  return p
end

local run = H.cli

-- h(i, j) of a grid, i and j from 0 (the documented layout).
-- fn() must raise an error whose message contains text.
local function raises(fn, text)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert.matches(text, tostring(err), 1, true)
end

local function h(grid, i, j) return grid.heights[i * grid.cols + j + 1] end

-- The gradient fixture runs along the slow index only (400 + i); ramp_4x6 is
-- 300 + 10 i + j on 5 rows x 7 columns.
local function assert_gradient(grid)
  assert.equal(9, grid.rows)
  assert.equal(9, grid.cols)
  for i = 0, 8 do
    for j = 0, 8 do assert.near(400 + i, h(grid, i, j), 1e-9) end
  end
end

local function assert_ramp(grid)
  assert.equal(5, grid.rows)
  assert.equal(7, grid.cols)
  for i = 0, 4 do
    for j = 0, 6 do assert.near(300 + 10 * i + j, h(grid, i, j), 1e-9) end
  end
end

-- Stored bytes of every entry by TGI.
local function stored(pkg)
  local t = {}
  for _, e in ipairs(pkg.entries) do
    local key = string.format("%08X/%08X/%08X/%08X", e.type, e.group, e.instance, e.instance_hi)
    t[key] = { bytes = pkg.bytes:sub(e.offset + 1, e.offset + e.size), compressed = e.compressed, usize = e.usize }
  end
  return t
end

local NHTG_KEY = "ABCB5DA4/FFFFFFFF/00000000/00000000"
local DIR_KEY = "E86B1EEF/E86B1EEF/286B1F03/00000000"

describe("psdl.terrain", function()
  describe("NHTG", function()
    it("decodes the fixtures into the documented model and re-encodes them byte for byte", function()
      for _, name in ipairs { "gradient_8.nhtg", "ramp_4x6.nhtg" } do
        local bytes = slurp(DIR .. name)
        local n = assert(T.decode_nhtg(bytes))
        assert.equal(4, n.version)
        assert.equal(312.5, n.water_level)
        assert.equal(n.width + 1, n.rows)
        assert.equal(n.height + 1, n.cols)
        assert.equal(n.rows * n.cols, #n.heights)
        assert.equal(n.rows * n.cols, #n.extra)
        assert.equal(#bytes, T.nhtg_size(n.width, n.height, #n.terrain_type))
        assert.equal(bytes, T.encode_nhtg(n))
      end
      local g = assert(T.decode_nhtg(slurp(DIR .. "gradient_8.nhtg")))
      assert.same({ 8, 8, "Temperate" }, { g.width, g.height, g.terrain_type })
      assert_gradient(g)
      local r = assert(T.decode_nhtg(slurp(DIR .. "ramp_4x6.nhtg")))
      assert.same({ 4, 6, "Desert" }, { r.width, r.height, r.terrain_type })
      assert_ramp(r)
      assert.equal(string.char(0, 1, 2, 3, 4, 0, 1, 2), r.extra:sub(1, 8)) -- (i * 7 + j) % 5
    end)

    it("knows the size of a 128 hood for each terrain type and the bytes of 312.5", function()
      assert.equal(83294, T.nhtg_size(128, 128, #"Temperate"))
      assert.equal(83293, T.nhtg_size(128, 128, #"Concrete"))
      assert.equal(83291, T.nhtg_size(128, 128, #"Desert"))
      assert.equal(83289, T.nhtg_size(128, 128, #"Dirt"))
      local n = T.new_nhtg { width = 128 }
      local b = T.encode_nhtg(n)
      assert.equal(83294, #b)
      assert.equal("\x00\x40\x9C\x43", b:sub(17, 20))
      assert.equal(string.rep("\0", 129 * 129), b:sub(-129 * 129))
      assert.equal(337.5, n.heights[1]) -- the default fill: water + 25
    end)

    it("writes and reads a 256 grid", function()
      local n = T.new_nhtg { width = 256, terrain_type = "Concrete", heights = function(i, j) return 320 + i * 0.5 + j * 0.25 end }
      local b = T.encode_nhtg(n)
      assert.equal(52 + 8 + 4 * 257 * 257 + 28 + 257 * 257, #b)
      local back = assert(T.decode_nhtg(b))
      assert.equal(256, back.width)
      assert.equal(320 + 100 * 0.5 + 7 * 0.25, h(back, 100, 7))
    end)

    it("reads the wiki's typo water bytes as 312.59375 and warns about them", function()
      local b = slurp(DIR .. "gradient_8.nhtg")
      b = b:sub(1, 16) .. "\x00\x4C\x9C\x43" .. b:sub(21)
      local n = assert(T.decode_nhtg(b))
      assert.equal(312.59375, n.water_level)
      local rules = {}
      for _, w in ipairs(T.check_nhtg(n)) do rules[w.rule] = w.message end
      assert.matches("312.59375", rules.water_level, 1, true)
      assert.is_nil(rules.terrain_type)
      assert.same({}, T.check_nhtg(T.new_nhtg { width = 128 }))
    end)

    it("keeps a non-zero second array verbatim", function()
      local n = assert(T.decode_nhtg(slurp(DIR .. "ramp_4x6.nhtg")))
      n.extra = string.rep("\7", #n.extra)
      local back = assert(T.decode_nhtg(T.encode_nhtg(n)))
      assert.equal(n.extra, back.extra)
    end)

    describe("errors (nil, message, code) naming the byte offset", function()
      local good = slurp(DIR .. "ramp_4x6.nhtg") -- L = 6
      local function at(off, s) return good:sub(1, off) .. s .. good:sub(off + #s + 1) end

      it("wrong id", function()
        local n, msg, code = T.decode_nhtg(at(0, pack("<I4", 0x6B943B43)))
        assert.is_nil(n)
        assert.equal("bad_magic", code)
        assert.equal("psdl: bad_magic: block id 0x6B943B43 is not NHTG (0xABCB5DA4) at offset 0x0", msg)
      end)

      it("unknown version", function()
        local _, msg, code = T.decode_nhtg(at(4, pack("<I4", 5)))
        assert.equal("bad_magic", code)
        assert.equal("psdl: bad_magic: unknown NHTG version 5 (only 4 is known) at offset 0x4", msg)
      end)

      it("dimensions that do not match the grid", function()
        local _, msg, code = T.decode_nhtg(at(44 + 6, pack("<I4", 7)))
        assert.equal("bad_count", code)
        assert.equal("psdl: bad_count: height array: first dimension 7 does not match grid width W + 1 = 5"
          .. " at offset 0x32", msg)
      end)

      it("truncation, at every length", function()
        for k = 0, #good - 1 do
          local n, msg, code = T.decode_nhtg(good:sub(1, k))
          assert.is_nil(n)
          assert.equal("truncated", code)
          local off = tonumber(msg:match("at offset 0x(%x+)"), 16)
          assert.is_true(off <= k)
        end
      end)

      it("trailing bytes", function()
        local _, msg, code = T.decode_nhtg(good .. "\0\0")
        assert.equal("trailing_bytes", code)
        assert.equal(string.format("psdl: trailing_bytes: 2 bytes after the end of the NHTG resource at offset 0x%x",
          #good), msg)
      end)

      it("non-finite heights and water level", function()
        local off = 52 + 6 + 4 * 9 -- row 1, column 2
        local _, msg, code = T.decode_nhtg(at(off, pack("<f", 0 / 0)))
        assert.equal("invalid", code)
        assert.matches("height at row 1, column 2 is not a finite number", msg, 1, true)
        assert.matches(string.format("at offset 0x%x$", off), msg)
        _, msg, code = T.decode_nhtg(at(16, pack("<f", math.huge)))
        assert.equal("invalid", code)
        assert.matches("water level is not a finite number .* at offset 0x10$", msg)
      end)
    end)

    it("raises on a model it cannot encode, naming the field", function()
      local n = T.new_nhtg { width = 2 }
      n.heights[5] = 0 / 0
      raises(function() T.encode_nhtg(n) end, "(heights[5]: not a finite float (row 1, column 1))")
      n.heights[5] = 1e300
      assert.has_error(function() T.encode_nhtg(n) end)
      n.heights[5] = 1
      -- heights is a fixed-size C grid: a hole cannot be made in it
      assert.has_error(function() n.heights[9] = nil end, "heights[9]: number expected, got nil")
      assert.has_error(function() n.heights[10] = 1 end)
      -- a plain table of heights is still checked as before
      n.heights = { 1, 2, 3, 4, 5, 6, 7, 8 }
      raises(function() T.encode_nhtg(n) end, "(heights: 8 values for 3 x 3 points)")
      n.heights = { 1, 2, 3, 4, 5, 6, 7, 8, "x" }
      raises(function() T.encode_nhtg(n) end, "(heights[9]: number expected, got string)")
      n.heights = T.new_nhtg({ width = 2 }).heights
      n = T.new_nhtg { width = 2 }
      n.version = 5
      raises(function() T.encode_nhtg(n) end, "(version: 5 cannot be written (only 4 is known))")
      n.version, n.rows = 4, 4
      assert.has_error(function() T.encode_nhtg(n) end)
      n.rows, n.extra = 3, "short"
      raises(function() T.encode_nhtg(n) end, "(extra: 5 bytes for 9 points)")
      n.extra, n.terrain_type = nil, nil
      raises(function() T.encode_nhtg(n) end, "(terrain_type: string expected, got nil)")
    end)
  end)

  describe("QFS", function()
    it("decompresses a hand-written stream", function()
      -- "ab" + copy 4 from 2 back (3-byte op with 2 literals), then stop with "!"
      local body = string.char(0x80, 0x80, 0x01) .. "ab" .. string.char(0xFD) .. "!"
      local rec = pack("<I4", 9 + #body) .. "\x10\xFB\x00\x00\x07" .. body
      assert.equal("ababab!", core.qfs_decompress(rec))
      local n, msg, code = core.qfs_decompress(rec:sub(1, 5) .. "\x00" .. rec:sub(7))
      assert.is_nil(n)
      assert.equal("bad_magic", code)
      assert.matches("at offset 0x4$", msg)
    end)

    it("compresses so that decompression gives the input back", function()
      for _, s in ipairs {
        "", "a", "abc", string.rep("x", 5000), slurp(DIR .. "gradient_8.nhtg"),
        T.encode_nhtg(T.new_nhtg { width = 128, heights = function(i, j) return 300 + (i * 13 + j * 7) % 40 end }),
      } do
        local c = core.qfs_compress(s)
        assert.equal(#c, unpack("<I4", c))
        assert.equal(#s, (c:byte(7) << 16) | (c:byte(8) << 8) | c:byte(9))
        assert.equal(s, core.qfs_decompress(c))
      end
      assert.is_true(#core.qfs_compress(string.rep("x", 5000)) < 100)
    end)
  end)

  describe("packages", function()
    it("reads the fixtures: versions, index, DIR, the NHTG", function()
      local p = assert(T.read_package(DIR .. "hood_compressed.package"))
      assert.same({ 1, 1, 24, 5, 5, 1 }, { p.major, p.minor, p.entry_size, #p.entries, p.dir, p.hole_count })
      local k = assert(T.find_nhtg(p))
      assert.equal(3, k)
      assert.is_true(p.entries[k].compressed)
      assert.equal(494, p.entries[k].usize)
      assert.is_true(p.entries[2].compressed) -- NHTR
      assert.is_false(p.entries[1].compressed)
      local n = assert(T.package_nhtg(p))
      assert_gradient(n)
      assert.equal(slurp(DIR .. "gradient_8.nhtg"), T.extract(p, k))

      local v10 = assert(T.read_package(DIR .. "hood_v10.package"))
      assert.same({ 0, 20 }, { v10.minor, v10.entry_size })
      assert_ramp(assert(T.package_nhtg(v10)))
      local plain = assert(T.read_package(DIR .. "hood_plain.package"))
      assert.is_nil(plain.dir)
      assert_ramp(assert(T.package_nhtg(plain)))
    end)

    it("reports a package without an NHTG, and bad packages", function()
      local p = assert(T.read_package(DIR .. "hood_plain.package"))
      for _, e in ipairs(p.entries) do if e.type == T.NHTG_TYPE then e.type = 1 end end
      local k, msg, code = T.find_nhtg(p)
      assert.is_nil(k)
      assert.equal("bad_index", code)
      assert.equal("psdl: bad_index: no NHTG resource (type 0xABCB5DA4) in the package's 3 entries", msg)
      local _, m2, c2 = T.decode_package("DBPF" .. pack("<I4", 2) .. string.rep("\0", 88))
      assert.equal("bad_magic", c2)
      assert.matches("DBPF version 2.0 is not supported", m2, 1, true)
      local _, m3, c3 = T.read_package(DIR .. "ramp_4x6.png")
      assert.equal("bad_magic", c3)
      assert.matches("ramp_4x6.png: magic is not \"DBPF\"", m3, 1, true)
    end)

    for _, case in ipairs {
      { "hood_plain.package", nil }, { "hood_plain.package", true },
      { "hood_compressed.package", nil }, { "hood_compressed.package", false },
      { "hood_v10.package", nil }, { "hood_v10.package", false },
    } do
      local name, compress = case[1], case[2]
      it(string.format("replaces the NHTG of %s (compress = %s) keeping every other resource byte-identical",
        name, tostring(compress)), function()
        local p = assert(T.read_package(DIR .. name))
        local n = assert(T.package_nhtg(p))
        for k = 1, #n.heights do n.heights[k] = n.heights[k] + 2.25 end
        local out, info = assert(T.replace_nhtg(p, n, { compress = compress }))
        local q = assert(T.decode_package(out))
        local want_compressed = compress
        if want_compressed == nil then want_compressed = p.entries[T.find_nhtg(p)].compressed end
        assert.equal(want_compressed, info.compressed)
        local a, b = stored(p), stored(q)
        for key, v in pairs(a) do
          if key ~= NHTG_KEY and key ~= DIR_KEY then assert.same(v, b[key]) end
        end
        assert.equal(want_compressed, b[NHTG_KEY].compressed)
        assert.equal(T.encode_nhtg(n), T.extract(q, T.find_nhtg(q)))
        local any = false
        for _, e in ipairs(q.entries) do any = any or e.compressed end
        assert.equal(any, q.dir ~= nil) -- a DIR exactly when something is compressed
        assert.equal(0, q.hole_count)
        assert.equal(p.major, q.major)
        assert.equal(p.minor, q.minor)
        assert.equal(p.bytes:sub(1, 36), q.bytes:sub(1, 36))
      end)
    end

    it("refuses another grid size unless asked", function()
      local p = assert(T.read_package(DIR .. "hood_plain.package"))
      local n = T.new_nhtg { width = 8 }
      local out, msg, code = T.replace_nhtg(p, n)
      assert.is_nil(out)
      assert.equal("bad_count", code)
      assert.matches("the new terrain has 8 x 8 tiles, the package's NHTG 4 x 6", msg, 1, true)
      assert.truthy(T.replace_nhtg(p, n, { resize = true }))
    end)

    it("writes a package atomically, saving the original as .bak once", function()
      local path = copy_fixture("hood_compressed.package")
      local original = slurp(path)
      local n = assert(T.package_nhtg(assert(T.read_package(path))))
      n.heights[1] = 123.5
      local ok, info = T.write_package_nhtg(path, n)
      assert.is_true(ok)
      assert.equal(path .. ".bak", info.backup)
      assert.equal(original, slurp(path .. ".bak"))
      local back = assert(T.package_nhtg(assert(T.read_package(path))))
      assert.equal(123.5, back.heights[1])
      -- again: the .bak keeps the oldest original
      n.heights[1] = 99
      ok, info = T.write_package_nhtg(path, n, { compress = false })
      assert.is_true(ok)
      assert.is_true(info.backup_kept)
      assert.equal(original, slurp(path .. ".bak"))
      assert.equal(99, assert(T.package_nhtg(assert(T.read_package(path)))).heights[1])
      -- a failure leaves the package untouched
      local before = slurp(path)
      local bad = T.new_nhtg { width = 3 }
      local nok, msg, code = T.write_package_nhtg(path, bad)
      assert.is_nil(nok)
      assert.equal("bad_count", code)
      assert.truthy(msg)
      assert.equal(before, slurp(path))
    end)
  end)

  describe("heightmaps", function()
    it("reads the hand-written PNG and PGM fixtures with their metadata", function()
      local png = assert(T.decode_heightmap(slurp(DIR .. "ramp_4x6.png")))
      assert.same({ "png", 65535, 300, 0.25, 2 }, { png.format, png.maxval, png.offset, png.scale, png.cell_size })
      assert_ramp(png)
      local pgm = assert(T.decode_heightmap(slurp(DIR .. "gradient_8.pgm")))
      assert_gradient(pgm)
      assert.equal(10, pgm.cell_size)
      -- 8-bit without metadata: scale 1, offset 0, unless told
      local p8 = assert(T.decode_heightmap(slurp(DIR .. "ramp_4x6_8bit.pgm"), { offset = 300 }))
      assert.same({ 255, 1.0 }, { p8.maxval, p8.scale })
      assert_ramp(p8)
    end)

    it("writes PNG and PGM, 16 and 8 bits, with the mapping in the file", function()
      local n = assert(T.decode_nhtg(slurp(DIR .. "ramp_4x6.nhtg")))
      for _, fmt in ipairs { "png", "pgm" } do
        local bytes, m = assert(T.encode_heightmap(n, { format = fmt }))
        assert.same({ 300, 0.01, 10, 65535 }, { m.offset, m.scale, m.cell_size, m.maxval })
        local g = assert(T.decode_heightmap(bytes))
        assert.equal(fmt, g.format)
        assert_ramp(g)
        local b8, m8 = assert(T.encode_heightmap(n, { format = fmt, bits = 8 }))
        assert.equal(255, m8.maxval)
        assert.near(46 / 255, m8.scale, 1e-12)
        local g8 = assert(T.decode_heightmap(b8))
        for k = 1, #n.heights do assert.near(n.heights[k], g8.heights[k], m8.scale / 2 + 1e-9) end
      end
      assert.matches("^P5\n# psdlkit:heightmap offset=300 scale=0.01", (T.encode_heightmap(n, { format = "pgm" })))
    end)

    it("honours an explicit offset and scale, and refuses heights the mapping cannot hold", function()
      local n = assert(T.decode_nhtg(slurp(DIR .. "gradient_8.nhtg")))
      local b = assert(T.encode_heightmap(n, { offset = 390, scale = 0.5 }))
      local raster = assert(core.png_decode(b))
      assert.equal(20, raster.samples[1]) -- (400 - 390) / 0.5
      local none, msg, code = T.encode_heightmap(n, { offset = 401, scale = 0.5 })
      assert.is_nil(none)
      assert.equal("bad_count", code)
      assert.matches("height 400 at row 0, column 0 maps to sample %-2", msg)
      assert.has_error(function() T.encode_heightmap(n, { scale = -1 }) end)
      assert.has_error(function() T.encode_heightmap(n, { format = "bmp" }) end)
    end)

    it("turns a heightmap into an NHTG, against a template's size", function()
      local g = assert(T.decode_heightmap(slurp(DIR .. "ramp_4x6.png")))
      local n = assert(T.nhtg_from_grid(g, { terrain_type = "Dirt" }))
      assert.same({ 4, 6, "Dirt", 312.5 }, { n.width, n.height, n.terrain_type, n.water_level })
      local template = assert(T.decode_nhtg(slurp(DIR .. "gradient_8.nhtg")))
      local none, msg, code = T.nhtg_from_grid(g, { template = template })
      assert.is_nil(none)
      assert.equal("bad_count", code)
      assert.matches("heightmap of 7 x 5 pixels does not match the terrain's 9 x 9 points", msg, 1, true)
    end)
  end)

  describe("orientation (asymmetric fixtures)", function()
    it("a gradient along the slow axis survives NHTG -> PNG -> NHTG along the same axis", function()
      local n = assert(T.decode_nhtg(slurp(DIR .. "gradient_8.nhtg")))
      local png = assert(T.encode_heightmap(n))
      local raster = assert(core.png_decode(png))
      -- image row i holds slow index i: the first row is all 0, the first column climbs
      assert.equal(0, raster.samples[1])
      assert.equal(0, raster.samples[9])
      assert.equal(100, raster.samples[10])
      local back = assert(T.nhtg_from_grid(assert(T.decode_heightmap(png)), { template = n }))
      assert_gradient(back)
      assert.equal(slurp(DIR .. "gradient_8.nhtg"), T.encode_nhtg(back))
    end)

    it("a non-square ramp keeps its shape through PGM and PNG (no transposition)", function()
      local n = assert(T.decode_nhtg(slurp(DIR .. "ramp_4x6.nhtg")))
      for _, fmt in ipairs { "png", "pgm" } do
        local img = assert(T.encode_heightmap(n, { format = fmt }))
        local raster = assert(fmt == "png" and core.png_decode(img) or core.pgm_decode(img))
        assert.same({ 7, 5 }, { raster.width, raster.height }) -- width = cols = H + 1
        local back = assert(T.nhtg_from_grid(assert(T.decode_heightmap(img)), { template = n }))
        assert.equal(slurp(DIR .. "ramp_4x6.nhtg"), T.encode_nhtg(back))
      end
    end)

    it("survives package write -> read along the same axis", function()
      local path = copy_fixture("hood_plain.package")
      local g = assert(T.decode_heightmap(slurp(DIR .. "ramp_4x6.png")))
      local n = assert(T.nhtg_from_grid(g, { template = assert(T.package_nhtg(assert(T.read_package(path)))) }))
      for k = 1, #n.heights do n.heights[k] = n.heights[k] + 5 end
      assert.is_true(T.write_package_nhtg(path, n, { compress = true }))
      local back = assert(T.package_nhtg(assert(T.read_package(path))))
      assert.equal(5, back.rows)
      for i = 0, 4 do
        for j = 0, 6 do assert.equal(305 + 10 * i + j, h(back, i, j)) end
      end
    end)
  end)

  describe("Terrain sampler", function()
    it("loads every kind of source with sensible cell sizes", function()
      for name, want in pairs {
        ["gradient_8.nhtg"] = { "nhtg", 10 }, ["hood_v10.package"] = { "package", 10 },
        ["ramp_4x6.png"] = { "png", 2 }, ["gradient_8.pgm"] = { "pgm", 10 },
        ["ramp_4x6_8bit.pgm"] = { "pgm", 1 },
      } do
        local t = assert(T.load(DIR .. name))
        assert.same(want, { t.source, t.cell_size })
      end
      local t = assert(T.load(slurp(DIR .. "ramp_4x6.nhtg"), { bytes = true, cell_size = 4, origin = { x = 100, z = -8 } }))
      assert.equal(4, t.cell_size)
      assert.equal(300, t:height(100, -8))
      local none, msg, code = T.load(DIR .. "README.md")
      assert.is_nil(none)
      assert.equal("bad_magic", code)
      assert.truthy(msg)
      assert.equal("io", select(3, T.load("/nonexistent/x.png")))
    end)

    it("samples bilinearly: exact at points, linear between, clamped outside", function()
      local t = assert(T.load(DIR .. "ramp_4x6.nhtg", { cell_size = 2 })) -- 300 + 10 i + j
      assert.equal(300, t:height(0, 0))
      assert.equal(301, t:height(2, 0)) -- x = column 1
      assert.equal(310, t:height(0, 2)) -- z = row 1
      assert.near(300 + 10 * 1.25 + 2.5, t:height(5, 2.5), 1e-12)
      assert.equal(346, t:height(12, 8)) -- far corner
      assert.equal(346, t:height(100, 100)) -- clamped
      assert.equal(300, t:height(-5, -5))
      assert.is_true(t:contains(12, 8))
      assert.is_false(t:contains(12.1, 8))
      assert.same({ min = { 0, 0 }, max = { 12, 8 } }, t:extent())
      -- a bump in the middle: the sample between four points is their mean
      local bump = T.from_grid({ rows = 2, cols = 2, heights = { 0, 1, 2, 7 } })
      assert.equal(2.5, bump:sample_grid(0.5, 0.5))
    end)

    it("looks lots and NHTR positions up with the hood's axes", function()
      local t = assert(T.load(DIR .. "ramp_4x6.nhtg"))
      assert.equal(300 + 10 * 3 + 1, t:lot_height(3, 1)) -- Left = slow index, Top = fast index
      assert.equal(300 + 10 * 2 + 5, t:nhtr_height(50, 20)) -- first coordinate along the fast index
      assert.near(300 + 10 * 2.5 + 0.5, t:nhtr_height(5, 25), 1e-12)
      local n = assert(t:to_nhtg())
      assert.equal(slurp(DIR .. "ramp_4x6.nhtg"), T.encode_nhtg(n))
    end)
  end)

  it("is exported by require 'psdl'", function()
    assert.equal(T, psdl.terrain)
  end)
end)

describe("psdl terrain (command line)", function()
  it("has help for the command and each sub-command", function()
    local code, out = run("terrain", "--help")
    assert.equal(0, code)
    assert.matches("Usage: psdl terrain", out, 1, true)
    for _, sub in ipairs { "info", "export", "import" } do
      assert.matches("\n   " .. sub .. " ", out, 1, true)
      local c2, o2, e2 = run("terrain", sub, "--help")
      assert.equal(0, c2)
      assert.equal("", e2)
      assert.matches("Usage: psdl terrain " .. sub, o2, 1, true)
    end
    local c3, _, e3 = run("terrain")
    assert.equal(1, c3)
    assert.matches("a command is required", e3, 1, true)
  end)

  it("info describes a package, an NHTG and a heightmap", function()
    local code, out, err = run("terrain", "info", DIR .. "hood_compressed.package", DIR .. "ramp_4x6.nhtg",
      DIR .. "ramp_4x6.png")
    assert.equal(0, code)
    assert.equal("", err)
    assert.matches("DBPF 1.1, index 7.2 (24-byte entries), 5 entries, 2 compressed, DIR entry 5, 1 hole", out, 1, true)
    assert.matches("NHTG entry      3 (group 0xFFFFFFFF, instance 0x00000000), QFS-compressed, 141 -> 494 bytes",
      out, 1, true)
    assert.matches("grid            4 x 6 tiles: 5 rows (W + 1, z) x 7 columns (H + 1, x)", out, 1, true)
    assert.matches("terrain type    Desert", out, 1, true)
    assert.matches("heights         min 300 (row 0, column 0), max 346 (row 4, column 6)", out, 1, true)
    assert.matches("mapping         height = 300 + 0.25 * sample (from the file)", out, 1, true)
  end)

  it("info --json, and a failing file sets the exit code", function()
    local code, out, err = run("terrain", "info", "--json", DIR .. "gradient_8.nhtg", DIR .. "README.md")
    assert.equal(2, code)
    assert.matches("psdl terrain: .*README.md", err)
    local doc = cjson.decode(out)
    assert.equal("psdlkit-terrain-info", doc.format)
    assert.equal(8, doc.files[1].nhtg.width)
    assert.equal(408, doc.files[1].nhtg.heights.max)
    assert.equal("bad_magic", doc.files[2].error.code)
  end)

  it("export writes PNG, PGM and NHTG files", function()
    local png, pgm, nhtg = tmpname(".png"), tmpname(".pgm"), tmpname(".nhtg")
    local code, _, err = run("terrain", "export", DIR .. "hood_compressed.package", "-o", png)
    assert.equal(0, code)
    assert.matches("height = 400 %+ 0.01 %* sample", err)
    assert_gradient(assert(T.decode_heightmap(slurp(png))))
    assert.equal(0, (run("terrain", "export", DIR .. "hood_v10.package", "-o", pgm, "--bits", "8", "--offset", "290")))
    local g = assert(T.decode_heightmap(slurp(pgm)))
    assert.equal(255, g.maxval)
    assert.equal(290, g.offset)
    assert.equal(0, (run("terrain", "export", DIR .. "hood_v10.package", "-o", nhtg)))
    assert.equal(slurp(DIR .. "ramp_4x6.nhtg"), slurp(nhtg))
    local c2, _, e2 = run("terrain", "export", DIR .. "ramp_4x6.nhtg", "-o", tmpname(".bin"))
    assert.equal(1, c2)
    assert.matches("cannot tell the format", e2, 1, true)
    local c3 = run("terrain", "export", DIR .. "ramp_4x6.nhtg", "-o", tmpname(".png"), "--offset", "320")
    assert.equal(2, c3) -- heights below the offset
  end)

  it("import writes a heightmap into a package, keeping a .bak and the other resources", function()
    local path = copy_fixture("hood_v10.package")
    local original = slurp(path)
    local code, _, err = run("terrain", "import", DIR .. "ramp_4x6_8bit.pgm", "-o", path, "--offset", "250",
      "--no-compress")
    assert.equal(0, code)
    assert.matches("original saved as " .. path .. ".bak", err, 1, true)
    assert.equal(original, slurp(path .. ".bak"))
    local p = assert(T.read_package(path))
    local n = assert(T.package_nhtg(p))
    for i = 0, 4 do
      for j = 0, 6 do assert.equal(250 + 10 * i + j, h(n, i, j)) end
    end
    assert.equal("Desert", n.terrain_type) -- kept from the package's NHTG
    local a, b = stored(assert(T.decode_package(original))), stored(p)
    for key, v in pairs(a) do
      if key ~= NHTG_KEY and key ~= DIR_KEY then assert.same(v, b[key]) end
    end
    assert.is_false(b[NHTG_KEY].compressed)
    -- wrong size: bad input, package untouched
    local before = slurp(path)
    local c2, _, e2 = run("terrain", "import", DIR .. "gradient_8.pgm", "-o", path)
    assert.equal(2, c2)
    assert.matches("does not match", e2, 1, true)
    assert.equal(before, slurp(path))
    -- unless --resize
    assert.equal(0, (run("terrain", "import", DIR .. "gradient_8.pgm", "-o", path, "--resize", "--compress")))
    local p2 = assert(T.read_package(path))
    assert_gradient(assert(T.package_nhtg(p2)))
    assert.is_true(p2.entries[T.find_nhtg(p2)].compressed)
  end)

  it("import writes a new .nhtg, and refuses a package that does not exist", function()
    local out = tmpname(".nhtg")
    local code = run("terrain", "import", DIR .. "ramp_4x6.png", "-o", out, "--type", "Concrete", "--water", "305")
    assert.equal(0, code)
    local n = assert(T.decode_nhtg(slurp(out)))
    assert.same({ "Concrete", 305 }, { n.terrain_type, n.water_level })
    assert_ramp(n)
    local c2, _, e2 = run("terrain", "import", DIR .. "ramp_4x6.png", "-o", tmpname(".package"))
    assert.equal(3, c2)
    assert.matches("no such package", e2, 1, true)
    local c3 = run("terrain", "import", DIR .. "ramp_4x6.png", "-o", out, "--compress", "--no-compress")
    assert.equal(1, c3)
  end)

  it("import into an existing .nhtg keeps its type, water level and second array, with a .bak", function()
    local path = copy_fixture("ramp_4x6.nhtg")
    local original = slurp(path)
    local code = run("terrain", "import", DIR .. "ramp_4x6_8bit.pgm", "-o", path, "--offset", "100")
    assert.equal(0, code)
    assert.equal(original, slurp(path .. ".bak"))
    local n = assert(T.decode_nhtg(slurp(path)))
    local old = assert(T.decode_nhtg(original))
    assert.same({ "Desert", 312.5, old.extra }, { n.terrain_type, n.water_level, n.extra })
    assert.equal(100 + 10 * 4 + 6, h(n, 4, 6))
    -- an NHTG source into a new file keeps the source's header
    local out = tmpname(".nhtg")
    assert.equal(0, (run("terrain", "import", path, "-o", out)))
    assert.equal(slurp(path), slurp(out))
  end)

  it("runs as scripts/psdl terrain info", function()
    local cmd = "lua5.4 scripts/psdl terrain info " .. DIR .. "gradient_8.nhtg 2>&1"
    local f = assert(io.popen(cmd))
    local out = f:read("a")
    local ok, _, status = f:close()
    assert.is_true(ok, out)
    assert.equal(0, status)
    assert.matches("8 x 8 tiles", out, 1, true)
  end)
end)

describe("height grids in C (psdl.Heightfield)", function()
  -- the Lua code the C sampler and statistics replaced, kept as the reference: results
  -- must be the same to the last bit
  local function ref_bilinear(rows, cols, hs, u, v)
    if u < 0 then u = 0 elseif u > cols - 1 then u = cols - 1 end
    if v < 0 then v = 0 elseif v > rows - 1 then v = rows - 1 end
    local j0, i0 = math.floor(u), math.floor(v)
    if j0 > cols - 2 then j0 = math.max(cols - 2, 0) end
    if i0 > rows - 2 then i0 = math.max(rows - 2, 0) end
    local fu, fv = u - j0, v - i0
    local j1, i1 = math.min(j0 + 1, cols - 1), math.min(i0 + 1, rows - 1)
    local h00, h01 = hs[i0 * cols + j0 + 1], hs[i0 * cols + j1 + 1]
    local h10, h11 = hs[i1 * cols + j0 + 1], hs[i1 * cols + j1 + 1]
    local top = h00 + (h01 - h00) * fu
    local bottom = h10 + (h11 - h10) * fu
    return top + (bottom - top) * fv
  end
  local function ref_stats(n, hs, water)
    local lo, hi, sum, lo_at, hi_at, below = math.huge, -math.huge, 0, nil, nil, 0
    for k = 1, n do
      local v = hs[k]
      sum = sum + v
      if v < lo then lo, lo_at = v, k end
      if v > hi then hi, hi_at = v, k end
      if v < water then below = below + 1 end
    end
    return lo, hi, sum / n, lo_at, hi_at, below
  end

  it("holds decoded NHTG heights and heightmap samples, read like the tables they replace", function()
    local n = assert(T.decode_nhtg(slurp(DIR .. "ramp_4x6.nhtg")))
    assert.is_true(T.is_heightfield(n.heights))
    assert.equal("f32", n.heights:type())
    assert.equal(35, #n.heights)
    local count = 0
    for k, v in ipairs(n.heights) do
      count = count + 1
      assert.equal(v, n.heights[k])
    end
    assert.equal(35, count)
    assert.is_nil(n.heights[0])
    assert.is_nil(n.heights[36])
    local g = assert(T.decode_heightmap(slurp(DIR .. "ramp_4x6.png")))
    assert.equal("samples", g.samples:view())
    assert.equal(math.type(g.samples[3]), "integer")
    for k = 1, #g.samples do assert.equal(g.offset + g.scale * g.samples[k], g.heights[k]) end
    assert.has_error(function() g.samples[1] = 5 end, "the samples of a height grid are read-only")
    -- a write makes doubles that read back exactly; the samples stay as they were
    local s1 = g.samples[1]
    g.heights[1] = 0.1
    assert.equal(0.1, g.heights[1])
    assert.equal("f64", g.heights:type())
    assert.equal(s1, g.samples[1])
  end)

  it("copies are independent (copy-on-write), also through nhtg_from_grid and new_nhtg", function()
    local n = assert(T.decode_nhtg(slurp(DIR .. "gradient_8.nhtg")))
    local first = n.heights[1]
    local m = assert(T.nhtg_from_grid(n))
    m.heights[1] = 1234.5
    assert.equal(first, n.heights[1])
    n.heights[2] = -7
    assert.are_not.equal(-7, m.heights[2])
    local c = n.heights:copy()
    n = nil -- let the collector have the model
    collectgarbage()
    collectgarbage()
    assert.equal(first, c[1])
    assert.equal(-7, c[2])
    local fromtable = T.new_nhtg { width = 1, heights = { 1, 2, 3, 4 } }
    assert.same({ 1, 2, 3, 4 }, fromtable.heights:to_table())
  end)

  it("samples, sums and quantises exactly as the Lua code it replaced", function()
    local rows, cols = 17, 23
    local hs, seed = {}, 7
    for k = 1, rows * cols do
      seed = (seed * 1103515245 + 12345) % 2147483648
      hs[k] = 300 + seed / 2147483648 * 80
    end
    local t = T.from_grid({ rows = rows, cols = cols, heights = hs }, { cell_size = 3.5, origin = { x = -10, z = 4 } })
    local png = assert(T.encode_heightmap(t, { format = "png" }))
    local tp = assert(T.load(png, { bytes = true, cell_size = 3.5 }))
    for _ = 1, 2000 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      local u = seed / 2147483648 * (cols + 4) - 2
      seed = (seed * 1103515245 + 12345) % 2147483648
      local v = seed / 2147483648 * (rows + 4) - 2
      assert.equal(ref_bilinear(rows, cols, hs, u, v), t:sample_grid(u, v))
      assert.equal(ref_bilinear(rows, cols, tp.heights:to_table(), u, v), tp:sample_grid(u, v))
      local x, z = -10 + u * 3.5, 4 + v * 3.5
      assert.equal(ref_bilinear(rows, cols, hs, (x + 10) / 3.5, (z - 4) / 3.5), t:height(x, z))
    end
    assert.equal(hs[2 * cols + 5 + 1], t:point(2, 5))
    assert.equal(hs[(rows - 1) * cols + 1], t:point(99, -3))
    local s = T.stats(t)
    local lo, hi, mean, lo_at, hi_at, below = ref_stats(rows * cols, hs, 312.5)
    assert.same({ lo, hi, mean, below }, { s.min, s.max, s.mean, s.below_water })
    assert.same({ (lo_at - 1) // cols, (lo_at - 1) % cols }, s.min_at)
    assert.same({ (hi_at - 1) // cols, (hi_at - 1) % cols }, s.max_at)
    -- the PNG's samples are what the Lua quantiser gave
    local g = assert(T.decode_heightmap(png))
    for k = 1, rows * cols do assert.equal(math.floor((hs[k] - g.offset) / g.scale + 0.5), g.samples[k]) end
  end)

  it("a city's ground comes back with a mask of the points a surface covers", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local t, info = assert(T.from_city(doc, { cell = 10 }))
    assert.equal("mask", t.covered:view())
    local n = 0
    for k = 1, #t.covered do if t.covered[k] then n = n + 1 end end
    assert.equal(info.covered, n)
    assert.equal(#t.heights - n, info.filled)
    local flat = assert(T.from_city(doc, { cell = 10, fill = -5 }))
    for k = 1, #flat.covered do
      if not flat.covered[k] then assert.equal(-5, flat.heights[k]) else assert.equal(t.heights[k], flat.heights[k]) end
    end
  end)
end)
