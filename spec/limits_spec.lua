-- Specs for bounded memory and time on hostile inputs: heightmaps refused from their
-- header before any pixel is decoded, terrain export of a city with far or NaN vertices,
-- the OSM input-size and memory guard, the peak memory with --verbose.

local lfs = require "lfs"
local psdl = require "psdl"
local cli = require "psdl.cli"
local common = require "psdl.cli.common"
local H = require "helper"

local function run(...)
  local out, err = common.sink(), common.sink()
  local code = cli.main({ ... }, { stdout = out, stderr = err })
  return code, out.text(), err.text()
end

local function tmpdir()
  local dir, tries = nil, 0
  repeat -- a fresh name (an old run's folder may linger)
    dir, tries = H.tmpname("_dir"), tries + 1
  until lfs.mkdir(dir) or tries > 50
  assert(lfs.attributes(dir, "mode") == "directory", dir)
  finally(function() os.execute("rm -rf '" .. dir .. "'") end)
  return dir
end

-- CRC-32 (PNG chunks).
local CRC = {}
for n = 0, 255 do
  local c = n
  for _ = 1, 8 do
    if c & 1 == 1 then c = 0xEDB88320 ~ (c >> 1) else c = c >> 1 end
  end
  CRC[n] = c
end
local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = CRC[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end
local function chunk(kind, data)
  return string.pack(">I4", #data) .. kind .. data .. string.pack(">I4", crc32(kind .. data))
end

-- A small PNG whose header claims w x h 16-bit grey pixels (the pixel data is a stub).
local function huge_png(w, h)
  return "\137PNG\r\n\26\n" .. chunk("IHDR", string.pack(">I4I4BBBBB", w, h, 16, 0, 0, 0, 0))
    .. chunk("IDAT", string.rep("\0", 65000)) .. chunk("IEND", "")
end

describe("heightmaps over the size limit", function()
  it("are refused from the header by terrain info and import, naming the size and the limit", function()
    local dir = tmpdir()
    local png = dir .. "/huge.png"
    H.write_bytes(png, huge_png(5792, 5792))
    local before = collectgarbage("count")
    local code, _, err = run("terrain", "info", png)
    assert.equal(2, code)
    assert.matches("5792 x 5792 pixels is over the limit of 4194304 pixels", err, 1, true)
    code, _, err = run("terrain", "import", png, "-o", dir .. "/hood.nhtg")
    assert.equal(2, code)
    assert.matches("over the limit", err, 1, true)
    assert.is_nil(lfs.attributes(dir .. "/hood.nhtg"))
    -- nothing the size of the image was allocated on the Lua side
    assert.is_true(collectgarbage("count") - before < 64 * 1024)
  end)
end)

describe("psdl terrain export of a damaged city", function()
  it("gives a clean error for a vertex 9.8e20 m away, and exports NaN heights as ground", function()
    local dir = tmpdir()
    local doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    doc.vertices[5][3] = 9.8e20
    assert(psdl.write(doc, dir .. "/far.psdl", { force = true }))
    local code, _, err = run("terrain", "export", dir .. "/far.psdl", "-o", dir .. "/far.png")
    assert.equal(2, code)
    assert.matches("is too big (at most 4,194,304 points", err, 1, true)
    assert.not_matches("internal error", err)
    doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    for i = 7, #doc.vertices, 7 do doc.vertices[i][2] = 0 / 0 end
    doc.heights[1] = 0 / 0
    assert(psdl.write(doc, dir .. "/nan.psdl", { force = true }))
    for _, ext in ipairs { "png", "pgm", "nhtg" } do
      code, _, err = run("terrain", "export", dir .. "/nan.psdl", "-o", dir .. "/nan." .. ext)
      assert.equal(0, code, ext .. ": " .. err)
    end
  end)
end)

describe("psdl osm input-size and memory guard", function()
  local OSM = "spec/fixtures/osm/houston-fourth-ward.osm"

  it("refuses an extract over --max-input before reading it", function()
    local code, _, err = run("osm", OSM, "--max-input", "0.05")
    assert.equal(2, code)
    assert.matches("is over --max-input 0.05 MB", err, 1, true)
  end)

  it("stops an import over --max-memory, writes nothing, and lifts the limit afterwards", function()
    local dir = tmpdir()
    local code, _, err = run("osm", OSM, "--max-memory", "1", "-o", dir .. "/city.psdl")
    assert.equal(2, code)
    assert.matches("the import used more than --max-memory 1 MB", err, 1, true)
    assert.is_nil(lfs.attributes(dir .. "/city.psdl"))
    assert.equal(8 * 1024 * 1024, #string.rep("x", 8 * 1024 * 1024))
  end)

  it("states the peak memory with --verbose", function()
    local code, out = run("osm", OSM, "--verbose")
    assert.equal(0, code)
    local mb = tonumber(out:match("\npeak memory: (%d+) MB %(Lua heap%)\n"))
    assert.is_truthy(mb)
    assert.is_true(mb >= 1 and mb < 1024)
    code, out = run("osm", OSM)
    assert.not_matches("peak memory", out)
  end)
end)
