-- Zip archives that are readable but not what the game's reader takes (CF §8.2): an archive
-- comment, bytes after the end record, directory entries, data descriptors; and the plain
-- variants it takes (stored or deflated). `psdl info` lists what they hold and names the
-- problem; `psdl validate` reports each as an error naming the archive and the entry.
local psdl = require "psdl"
local pkg = require "psdl.package"
local pvalidate = require "psdl.package.validate"
local info = require "psdl.cli.info"
local H = require "helper"

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
local q, run = H.q, H.run

-- the package of examples/street.lua (5 rooms), once
local plain
local function street_ar()
  if not plain then
    local env = setmetatable({ psdl = psdl, arg = { [0] = "examples/street.lua" } }, { __index = _G })
    local doc = assert(loadfile("examples/street.lua", "t", env))()
    plain = assert(pkg.ar_bytes((pkg.generate(doc, { name = "street" }))))
  end
  return plain
end

-- rewrite the package with python3's zipfile: method, directory entries, a data descriptor
local function rewrite(mode)
  local src, out, pyfile = H.tmpname(".ar"), H.tmpname(".ar"), H.tmpname(".py")
  H.write_bytes(src, street_ar())
  H.write_bytes(pyfile, [[
import sys, zipfile
mode, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
z = zipfile.ZipFile(src)
items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
class Stream:  # not seekable: zipfile writes data descriptors
    def __init__(self, f): self.f = f
    def write(self, b): return self.f.write(b)
    def flush(self): self.f.flush()
f = open(out, "wb")
w = zipfile.ZipFile(Stream(f) if mode == "descriptor" else f, "w",
                    zipfile.ZIP_STORED if mode == "stored" else zipfile.ZIP_DEFLATED)
if mode == "dirs":
    w.writestr(zipfile.ZipInfo("city/"), b"")
for name, data in items:
    w.writestr(name, data)
w.close()
f.close()
]])
  local log, ok = run("python3 " .. q(pyfile) .. " " .. mode .. " " .. q(src) .. " " .. q(out))
  local bytes = ok and H.read_bytes(out)
  os.remove(src); os.remove(out); os.remove(pyfile)
  assert(ok, log)
  return bytes
end

local function rules(bytes)
  local problems, counts = pvalidate.check(bytes, "x.ar")
  local by = {}
  for _, p in ipairs(problems) do
    by[p.rule] = by[p.rule] or {}
    table.insert(by[p.rule], p)
  end
  return by, counts
end

-- an archive comment: the end-of-central-directory record's comment length field is the
-- record's last two bytes
local function with_comment(bytes, comment)
  return bytes:sub(1, -3) .. string.pack("<I2", #comment) .. comment
end

describe("odd but readable zip archives", function()
  it("the package as written: no problems in the directory", function()
    local s = assert(info.package_stats(street_ar()))
    assert.same({}, s.problems)
    local _, counts = rules(street_ar())
    assert.equal(0, counts.errors)
  end)

  it("an archive comment: info lists the files and names it; validate reports an error and reads the files", function()
    local bytes = with_comment(street_ar(), "made by hand")
    local s, err = info.package_stats(bytes)
    assert.truthy(s, err)
    assert.equal(12, s.files)
    assert.same({ "street" }, s.maps)
    assert.equal("zip_comment", s.problems[1].rule)
    assert.truthy(s.problems[1].message:find("an archive comment of 12 bytes", 1, true))
    local by, counts = rules(bytes)
    assert.equal(1, counts.errors)
    assert.truthy(by.zip_comment)
    assert.truthy(by.bai_dead_end) -- the files were read and checked
    -- the commands, by file name
    local ar = H.tmpname(".ar")
    finally(function() os.remove(ar) end)
    H.write_bytes(ar, bytes)
    local ilog, iok = run("PSDL_BUILD_DIR=" .. q(build_dir) .. " lua5.4 scripts/psdl info " .. q(ar))
    assert.is_true(iok, ilog)
    assert.truthy(ilog:find("city/street.psdl", 1, true), ilog)
    assert.truthy(ilog:find("error zip_comment: an archive comment of 12 bytes", 1, true), ilog)
    local vlog, vok = run("PSDL_BUILD_DIR=" .. q(build_dir) .. " lua5.4 scripts/psdl validate " .. q(ar))
    assert.falsy(vok)
    assert.truthy(vlog:find(ar .. ": error zip_comment: an archive comment of 12 bytes", 1, true), vlog)
  end)

  it("bytes after the end record: an error saying how many", function()
    local bytes = street_ar() .. "junk"
    local s = assert(info.package_stats(bytes))
    assert.equal(12, s.files)
    local by = rules(bytes)
    assert.truthy(by.zip_end_record)
    assert.truthy(by.zip_end_record[1].message:find("4 bytes after the end record", 1, true))
  end)

  it("stored entries validate; info says store", function()
    local bytes = rewrite("stored")
    local s = assert(info.package_stats(bytes))
    for _, e in ipairs(s.entries) do assert.equal("store", e.method) end
    local _, counts = rules(bytes)
    assert.equal(0, counts.errors)
  end)

  it("deflated entries rewritten by python validate", function()
    local bytes = rewrite("deflated")
    local _, counts = rules(bytes)
    assert.equal(0, counts.errors)
  end)

  it("a directory entry: an error, no unknown-file warning, info calls it a directory entry", function()
    local bytes = rewrite("dirs")
    local by, counts = rules(bytes)
    assert.equal(1, counts.errors)
    assert.equal("city/", by.zip_directory_entry[1].path)
    assert.is_nil(by.unknown_file)
    local s = assert(info.package_stats(bytes))
    assert.equal("city/", s.entries[1].name)
    assert.truthy(s.entries[1].what:find("directory entry", 1, true))
  end)

  it("data descriptors: one error per header, not a size mismatch", function()
    local bytes = rewrite("descriptor")
    local by, counts = rules(bytes)
    assert.equal(24, counts.errors) -- 12 entries, central and local flag
    assert.equal(24, #by.zip_data_descriptor)
    assert.is_nil(by.zip_local_header)
  end)

  it("not a zip: info refuses it naming the missing end record", function()
    local s, err = info.package_stats(("x"):rep(100))
    assert.is_nil(s)
    assert.truthy(err:find("no end-of-central-directory record", 1, true), err)
  end)
end)
