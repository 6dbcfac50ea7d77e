-- A city must fit a package's 2,047 rooms (CF §3.3: a visibility row describes room ids below
-- 2,048 only): an OSM extract is built in coarser rooms and then simplified (Philadelphia, 3,411
-- rooms as `psdl osm` builds it), anything else is refused naming the limit and the fix. And the
-- regressions of `psdl validate X.ar` and `psdl info X.ar` on hostile or damaged archives
-- (unpacking limits, duplicate names, unknown files, exit codes), and of long map names. Each
-- runs the command line as a user does (docs/package.md).
local psdl = require "psdl"
local pkg = require "psdl.package"
local pvalidate = require "psdl.package.validate"
local H = require "helper"

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- runs a shell command: stdout, stderr, exit code
local function run(cmd)
  local err = H.tmpname(".err")
  local p = assert(io.popen(cmd .. " 2>" .. q(err)))
  local out = p:read("a")
  local _, _, code = p:close()
  local f = io.open(err, "rb")
  local e = f and f:read("a") or ""
  if f then f:close() end
  os.remove(err)
  return out, e, code
end

local function psdl_cli(args)
  return run("PSDL_BUILD_DIR=" .. q(build_dir) .. " lua5.4 scripts/psdl " .. args)
end

local function python(script, ...)
  local file = H.tmpname(".py")
  H.write_bytes(file, script)
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = q(a) end
  local out, err, code = run("python3 " .. q(file) .. " " .. table.concat(args, " "))
  os.remove(file)
  assert.equal(0, code, out .. err)
end

-- a small package made by the command line (the tee junction fixture), once
local base_ar
local function base()
  if not base_ar then
    base_ar = H.tmpname(".ar")
    local out, err, code = psdl_cli("package spec/fixtures/osm/tee.osm -o " .. q(base_ar) .. " --name tee -q")
    assert.equal(0, code, out .. err)
  end
  return base_ar
end

describe("a package holds at most 2,047 rooms", function()
  teardown(function() if base_ar then os.remove(base_ar) end end)

  it("an OSM extract with more rooms is built coarser, then simplified, and packages with 0 errors (Philadelphia)",
    function()
      local osm = require "psdl.osm"
      local data = assert(osm.read("spec/data/osm/philadelphia-temple.osm"))
      local net, report = osm.network(data, {})
      local notes = {}
      local doc, _, res = require("psdl.osm.city").build(net, report, { seed = 1, max_rooms = pkg.MAX_ROOMS,
        progress = function(msg) notes[#notes + 1] = msg end })
      assert.is_true(#doc.rooms <= 2047, #doc.rooms .. " rooms")
      -- the service-road search's builds read as steps of one search, not as separate actions
      local steps = 0
      for _, msg in ipairs(notes) do
        assert.is_nil(msg:match("^simplifying: %d+ of %d+ service roads left out$"), msg)
        if msg:match("^simplifying: searching how many service roads to leave out: trying %d+ of %d+ %(build %d of at most %d%)$") then
          steps = steps + 1
        end
      end
      assert.is_true(steps >= 1, table.concat(notes, "\n"))
      -- coarser rooms first (the full city has more than 2,047), then service roads; what was
      -- done is listed with the rooms each step left
      local before = tonumber(res.simplified[1]:match("^coarser rooms %((%d+) rooms, 2047 at most%)"))
      assert.is_true(before and before > 2047, res.simplified[1])
      assert.matches(": (%d+) rooms$", res.simplified[1])
      local after = tonumber(res.simplified[1]:match(": (%d+) rooms$"))
      assert.is_true(after < before)
      assert.matches("^service roads", res.simplified[2])
      -- service roads go a few at a time, least length per room first: some stay, and more of
      -- the length than when the whole step ran (86.2 %, bench/README.md)
      local k, n = res.simplified[2]:match("left out: (%d+) of (%d+)")
      assert.truthy(k, res.simplified[2])
      assert.is_true(tonumber(k) < tonumber(n), res.simplified[2])
      assert.is_true(res.kept.fraction > 0.862, "kept " .. res.kept.fraction)
      assert.equal(#doc.rooms, tonumber(res.simplified[#res.simplified]:match(": (%d+) rooms$")))
      -- the coarser rooms lose no road: most of the drivable length stays
      assert.is_true(res.kept.fraction >= 0.85, "kept " .. res.kept.fraction)
      local _, _, counts = psdl.validate(doc)
      assert.equal(0, counts.errors)
      -- the package validates (light visibility sampling: the rows' quality is not the point here)
      local files = pkg.generate(doc, { name = "philadelphia", cpvs = { rays = 16, eyes = 2, targeted = 1, dilate = 0 } })
      local problems, pc = pvalidate.check(assert(pkg.ar_bytes(files)))
      assert.equal(0, pc.errors, problems[1] and (problems[1].path .. ": " .. problems[1].message))
    end)

  it("service_order: least length per estimated room first, other roads not listed", function()
    local ocity = require "psdl.osm.city"
    local net = {
      nodes = { a = { x = 0, z = 0 }, b = { x = 100, z = 0 }, c = { x = 200, z = 0 }, d = { x = 100, z = 100 },
                e = { x = 200, z = 100 }, f = { x = 100, z = -30 }, g = { x = 300, z = 0 } },
      roads = {
        { from = "a", to = "b", highway = "residential" },
        { from = "b", to = "c", highway = "residential" },
        { from = "c", to = "g", highway = "residential" },
        { from = "e", to = "d", highway = "residential" },
        { from = "b", to = "d", highway = "service" },                        -- 100 m
        { from = "c", to = "e", highway = "service", via = { { 250, 50 } } }, -- 141.4 m
        { from = "b", to = "f", highway = "living_street" },                  -- 30 m
      },
    }
    local order = ocity.service_order(net)
    assert.equal(3, #order)
    -- b-f: a dead end, 1 room (30 m a room); c-e: its own room, c has degree 3 (the junction
    -- and the split of b-c-g go with it: 2), joined at both ends (a block room): 4 rooms,
    -- 35.4 m a room; b-d: b has degree 4 (its junction stays), joined at both ends: 2 rooms, 50 m
    assert.equal("f", order[1].road.to)
    assert.near(30, order[1].length, 1e-9)
    assert.equal(1, order[1].rooms)
    assert.equal("e", order[2].road.to)
    assert.near(100 * math.sqrt(2), order[2].length, 1e-9)
    assert.equal(4, order[2].rooms)
    assert.equal("d", order[3].road.to)
    assert.equal(2, order[3].rooms)
  end)

  it("run_rooms: one room spans a through node, the road and its record stay the same", function()
    local function make(run_rooms)
      local city = psdl.city.new { seed = 1, room_length = 1e6, run_rooms = run_rooms }
      local a, b, c, d = city:node(0, 0), city:node(120, 0), city:node(240, 10), city:node(120, 120)
      city:road(a, b, { profile = "street" })
      city:road(b, c, { profile = "street" })
      city:road(b, d, { profile = "street" })
      local e = city:node(360, 10)
      city:road(c, e, { profile = "street" }) -- c is a through node: b-c and c-e continue each other
      city:blocks(false)
      return (city:build())
    end
    local split, joined = make(false), make(true)
    local function road_rooms(doc)
      local n = 0
      for _, r in ipairs(doc.rooms) do if r.flags & 0x18 == 0x08 then n = n + 1 end end
      return n
    end
    assert.equal(#split.roads, #joined.roads)
    assert.equal(road_rooms(split) - 1, road_rooms(joined))
    local _, _, counts = psdl.validate(joined)
    assert.equal(0, counts.errors)
  end)

  it("a PSDL with more rooms is refused naming the limit and the fix (exit 2, nothing written)", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    local n = #doc.rooms
    for i = n + 1, 2048 do doc.rooms[i] = doc.rooms[(i - 1) % n + 1] end
    local big, ar = H.tmpname(".psdl"), H.tmpname(".ar")
    finally(function() os.remove(big); os.remove(ar) end)
    assert(psdl.write(doc, big, { force = true }))
    os.remove(ar)
    local _, err, code = psdl_cli("package " .. q(big) .. " -o " .. q(ar) .. " --name big -q")
    assert.equal(2, code)
    assert.matches("the city has 2048 rooms; a package holds at most 2047", err, 1, true)
    assert.matches("room_length", err, 1, true)
    assert.matches("split into smaller cities", err, 1, true)
    assert.is_nil(io.open(ar, "rb"))
  end)

  it("a long map name taken from the input is cut with a warning naming --name", function()
    local dir = H.tmpname("")
    local long = dir .. "_a_very_long_extract_name_of_a_town.osm"
    local ar = H.tmpname(".ar")
    finally(function() os.remove(long); os.remove(ar) end)
    H.write_bytes(long, H.read_bytes("spec/fixtures/osm/tee.osm"))
    local _, err, code = psdl_cli("package " .. q(long) .. " -o " .. q(ar) .. " -q")
    assert.equal(0, code, err)
    assert.matches("longer than the 21 characters", err, 1, true)
    assert.matches("--name", err, 1, true)
    local cut = err:match("the package uses ([%w_]+)")
    assert.is_true(#cut <= 21)
    local out = psdl_cli("info " .. q(ar))
    assert.matches("tune/" .. cut .. ".cinfo", out, 1, true)
    -- a --name that long is a usage error, before anything is built
    local _, err2, code2 = psdl_cli("package " .. q(long) .. " -o " .. q(ar) .. " --name a_very_long_extract_name_x")
    assert.equal(1, code2)
    assert.matches("--name: map name \"a_very_long_extract_name_x\": 1-21", err2, 1, true)
  end)
end)

describe("psdl validate X.ar on damaged and hostile archives", function()
  it("refuses a zip bomb from its declared sizes before unpacking anything (exit 2)", function()
    local ar = H.tmpname(".ar")
    finally(function() os.remove(ar) end)
    -- 65 MiB of zeros in one entry (over the 64 MiB a file may have) and 3 x 45 MiB (over the
    -- 128 MiB in all), streamed by python so that neither side holds them
    python([[
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)
z.writestr('tune/bomb.cinfo', 'x')
chunk = b'\0' * (1 << 20)
for name, mib in (('city/bomb.psdl', 65), ('texture/a.tex', 45), ('texture/b.tex', 45), ('texture/c.tex', 45)):
    with z.open(name, 'w', force_zip64=False) as f:
        for _ in range(mib): f.write(chunk)
z.close()
]], ar)
    local out, err, code = psdl_cli("validate " .. q(ar))
    assert.equal(2, code, out .. err)
    assert.matches("error zip_too_large city/bomb.psdl: declares 68157440 bytes unpacked, more than the "
      .. "67108864 (64 MiB)", out, 1, true)
    assert.matches("more than the 134217728 (128 MiB) psdl validate unpacks", out, 1, true)
  end)

  it("refuses a deflated entry whose declared size deflate cannot reach (a false size, exit 2)", function()
    local ar = H.tmpname(".ar")
    finally(function() os.remove(ar) end)
    -- a 2 MiB entry of zeros, then its declared size (local and central header) set to 40 MiB
    python([[
import sys, zipfile, struct
z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)
z.writestr('tune/lie.cinfo', 'x')
z.writestr('city/lie.psdl', b'\0' * (2 << 20))
z.close()
b = bytearray(open(sys.argv[1], 'rb').read())
name = b'city/lie.psdl'
c = b.find(b'PK\x01\x02')
while b[c + 46:c + 46 + len(name)] != name: c = b.find(b'PK\x01\x02', c + 1)
struct.pack_into('<I', b, c + 24, 40 << 20)
loff = struct.unpack_from('<I', b, c + 42)[0]
struct.pack_into('<I', b, loff + 22, 40 << 20)
open(sys.argv[1], 'wb').write(b)
]], ar)
    local out, err, code = psdl_cli("validate " .. q(ar))
    assert.equal(2, code, out .. err)
    assert.matches("error zip_ratio city/lie.psdl: declares 41943040 bytes unpacked from", out, 1, true)
  end)

  it("names a duplicate entry instead of libzip's 'File already exists' (exit 2)", function()
    local ar = H.tmpname(".ar")
    finally(function() os.remove(ar) end)
    python([[
import sys, zipfile, warnings
warnings.simplefilter('ignore')
src = zipfile.ZipFile(sys.argv[1])
z = zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED)
for i in src.infolist(): z.writestr(i.filename, src.read(i.filename))
z.writestr('city/tee.bai', b'x')
z.close()
]], base(), ar)
    local out, err, code = psdl_cli("validate " .. q(ar))
    assert.equal(2, code, out .. err)
    assert.matches("error zip_duplicate city/tee.bai: a second entry of the same name", out, 1, true)
    assert.matches("the name city/tee.bai occurs twice", out, 1, true)
    assert.is_nil(out:find("File already exists", 1, true))
  end)

  it("warns about a file the game does not read for the city, naming it (exit 0)", function()
    local ar = H.tmpname(".ar")
    finally(function() os.remove(ar) end)
    python([[
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
z = zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED)
for i in src.infolist(): z.writestr(i.filename, src.read(i.filename))
z.writestr('city/big.bin', b'x' * 1000)
z.writestr('city/tee.lt03', b'type: a\r\n')
z.close()
]], base(), ar)
    local out, err, code = psdl_cli("validate " .. q(ar))
    assert.equal(0, code, out .. err)
    assert.matches("warning unknown_file city/big.bin: not a file the game reads for this city", out, 1, true)
    assert.is_nil(out:find("unknown_file city/tee.lt03", 1, true)) -- lighting is read (CF §8.4)
    -- the package as written has none
    out = psdl_cli("validate " .. q(base()))
    assert.is_nil(out:find("unknown_file", 1, true))
  end)

  it("exits 2 for an archive that is not a zip or is cut short, as docs/cli.md says", function()
    local bad, cut = H.tmpname(".ar"), H.tmpname(".ar")
    finally(function() os.remove(bad); os.remove(cut) end)
    H.write_bytes(bad, "PK\3\4" .. string.rep("garbage", 100))
    local bytes = H.read_bytes(base())
    H.write_bytes(cut, bytes:sub(1, #bytes // 2))
    for _, f in ipairs({ bad, cut }) do
      local out, err, code = psdl_cli("validate " .. q(f))
      assert.equal(2, code, out .. err)
      assert.matches("error zip_", out)
    end
    -- the package as written: 0
    local _, _, code = psdl_cli("validate " .. q(base()))
    assert.equal(0, code)
  end)
end)

describe("psdl validate X.ar reuses the format checks", function()
  it("reads the prop CSVs with psdl.propcsv and the minimap with psdl.pkg's hudmap checks", function()
    local ar = H.tmpname(".ar")
    finally(function() os.remove(ar) end)
    -- a rule row naming a propdef that does not exist
    python([[
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
z = zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED)
for i in src.infolist():
    data = src.read(i.filename)
    if i.filename.endswith('proprules.csv'):
        lines = data.split(b'\r\n')
        lines[1] = lines[1].split(b',')[0] + b',no_such_prop'
        data = b'\r\n'.join(lines)
    z.writestr(i.filename, data)
z.close()
]], base(), ar)
    local out, err, code = psdl_cli("validate " .. q(ar))
    assert.equal(1, code, out .. err)
    assert.matches("error propcsv_missing_propdef city/tee/proprules.csv:2: rule n%d%dleft names propdef \"no_such_prop\"", out)
    -- a minimap model whose geometry chunk is not H (the LOD the game looks the map up at)
    local files = {}
    for _, e in ipairs(assert(require("psdl.core").zip_read(H.read_bytes(base())))) do
      local data = e.data
      if e.name == "geometry/hudmap_tee.pkg" then
        local t = assert(psdl.pkg.decode(data))
        for _, c in ipairs(t.chunks) do if c.name == "H" then c.name = "M" end end
        data = assert(psdl.pkg.encode(t))
      end
      files[#files + 1] = { e.name, data }
    end
    H.write_bytes(ar, assert(pkg.ar_bytes(files)))
    out, err, code = psdl_cli("validate " .. q(ar))
    assert.equal(1, code, out .. err)
    assert.matches("error pkg_hudmap_lod geometry/hudmap_tee.pkg: chunks: no geometry chunk \"H\"", out, 1, true)
  end)
end)

describe("psdl info X.ar", function()
  it("lists the entries of a package and what each is for (text and JSON)", function()
    local out, err, code = psdl_cli("info " .. q(base()))
    assert.equal(0, code, err)
    assert.matches("MM2 add%-on package %(zip%), %d+ files", out)
    assert.matches("map: tee", out, 1, true)
    assert.matches("tune/tee.cinfo%s+[%d,]+%s+deflate%s+registers the city", out)
    assert.matches("city/tee.bai%s+[%d,]+%s+deflate%s+AI roads", out)
    assert.matches("texture/hudmap_tee_00.tex%s+[%d,]+%s+deflate%s+minimap texture tile", out)
    local json = require("cjson").decode((psdl_cli("info --json " .. q(base()))))
    local f = json.files[1]
    assert.equal("package", f.kind)
    assert.same({ "tee" }, f.maps)
    assert.equal(f.files, #f.entries)
    -- not a zip: exit 2 with a message, no bad_magic
    local bad = H.tmpname(".ar")
    finally(function() os.remove(bad) end)
    H.write_bytes(bad, "not a zip at all")
    local _, err2, code2 = psdl_cli("info " .. q(bad))
    assert.equal(2, code2)
    assert.matches("not a readable zip archive", err2, 1, true)
    assert.is_nil(err2:find("bad_magic", 1, true))
  end)
end)
