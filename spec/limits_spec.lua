-- Specs for bounded memory and time on hostile inputs: heightmaps refused from their
-- header before any pixel is decoded, heightmaps at the size limit read and written in
-- memory proportional to their samples, terrain export of a city with far or NaN vertices,
-- the OSM input-size and memory guard, the peak memory with --verbose.

local lfs = require "lfs"
local psdl = require "psdl"
local H = require "helper"
local run, q = H.cli, H.q

local function tmpdir() return H.tmpdir(finally) end

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

describe("a heightmap at the size limit (2048 x 2048)", function()
  it("terrain info and import run in under 128 MB of address space (heights in C arrays)", function()
    local dir = tmpdir()
    local T = psdl.terrain
    local function h(i, j) return 300 + (i * 7 + j * 13) % 1000 * 0.05 end
    local n = T.new_nhtg { width = 2047, heights = h }
    assert(T.write_file(dir .. "/big.nhtg", T.encode_nhtg(n)))
    assert(T.write_file(dir .. "/big.png", assert(T.encode_heightmap(n, { format = "png" }))))
    n = nil -- let the collector have the model
    collectgarbage()
    local function psdl_limited(args)
      return H.sh(string.format("cd %s && ulimit -v 131072 && scripts/psdl %s", q(lfs.currentdir()), args))
    end
    for _, src in ipairs { "big.png", "big.nhtg" } do
      local out = psdl_limited("terrain info " .. q(dir .. "/" .. src))
      assert.matches("exit=0", out, 1, true)
      assert.matches("min 300", out, 1, true)
      assert.matches("max 349.95", out, 1, true)
      out = psdl_limited(string.format("terrain import %s -o %s", q(dir .. "/" .. src), q(dir .. "/" .. src .. ".nhtg")))
      assert.matches("exit=0", out, 1, true)
      local back = assert(T.decode_nhtg(H.read_bytes(dir .. "/" .. src .. ".nhtg")))
      assert.same({ 2048, 2048 }, { back.rows, back.cols })
      for _, p in ipairs { { 0, 0 }, { 1, 2047 }, { 2047, 5 }, { 1234, 987 } } do
        local k = p[1] * 2048 + p[2] + 1
        assert.near(h(p[1], p[2]), back.heights[k], 0.006)
      end
    end
  end)
end)
