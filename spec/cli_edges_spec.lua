-- Specs for edges of the command line a newcomer ran into: `-o -` of build and osm, an OSM
-- extract near a pole, and the scale `render` prints for a map thousands of km across.

local lfs = require "lfs"
local psdl = require "psdl"
local H = require "helper"
local run = H.cli

describe("-o - (standard output)", function()
  it("build writes the PSDL to standard output, the summary to standard error, no file named -", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/city.lua"
    H.write_bytes(script, "local c = psdl.city.new{ blocks = false }\nc:road(c:node(0, 0), c:node(100, 0))\nreturn c\n")
    local code, out, err = run("build", script, "-o", "-")
    assert.equal(0, code, err)
    assert.equal("PSD0", out:sub(1, 4))
    assert.matches("^%-: %d+ rooms", err)
    assert.is_nil(lfs.attributes("-"))
    code = run("build", script, "-o", dir .. "/city.psdl", "-q")
    assert.equal(0, code)
    assert.equal(H.read_bytes(dir .. "/city.psdl"), out)
    code, _, err = run("build", script, "-o", "-", "--watch")
    assert.equal(1, code)
    assert.matches("-o - is not one", err, 1, true)
  end)

  it("osm refuses -o - (its summary uses standard output), writing nothing", function()
    local dir = H.tmpdir(finally)
    local osm = dir .. "/town.osm"
    H.write_bytes(osm, "<?xml version=\"1.0\"?>\n<osm version=\"0.6\"><node id=\"1\" lat=\"51.5\" lon=\"0\"/>"
      .. "<node id=\"2\" lat=\"51.5\" lon=\"0.001\"/><way id=\"1\"><nd ref=\"1\"/><nd ref=\"2\"/>"
      .. "<tag k=\"highway\" v=\"residential\"/></way></osm>\n")
    local code, out, err = run("osm", osm, "-o", "-")
    assert.equal(1, code)
    assert.equal("", out)
    assert.matches("-o -: psdl osm writes the city to a file", err, 1, true)
    assert.is_nil(lfs.attributes("-"))
  end)
end)

describe("an extract near a pole", function()
  it("is a user error naming the file and the latitude limit in osm, view and package (exit 2)", function()
    local dir = H.tmpdir(finally)
    local osm = dir .. "/pole.osm"
    H.write_bytes(osm, "<?xml version=\"1.0\"?>\n<osm version=\"0.6\">\n"
      .. "<node id=\"1\" lat=\"89.5\" lon=\"0\"/><node id=\"2\" lat=\"89.5\" lon=\"0.2\"/>"
      .. "<node id=\"3\" lat=\"89.501\" lon=\"0.1\"/>\n<way id=\"1\"><nd ref=\"1\"/><nd ref=\"3\"/><nd ref=\"2\"/>"
      .. "<tag k=\"highway\" v=\"residential\"/></way>\n</osm>\n")
    for _, c in ipairs { { "osm", osm, "-o", dir .. "/p.psdl" }, { "view", osm, "-o", dir .. "/p.html" },
      { "package", osm, "-o", dir .. "/p.ar" } } do
      local code, _, err = run(table.unpack(c))
      assert.equal(2, code, c[1] .. ": " .. err)
      assert.matches(osm .. ": the extract lies at latitude 89.5005, beyond the +/-89 degrees", err, 1, true)
      assert.not_matches("internal error", err, 1, true)
    end
    local files = {}
    for name in lfs.dir(dir) do if name:sub(1, 1) ~= "." then files[#files + 1] = name end end
    assert.same({ "pole.osm" }, files)
  end)
end)

describe("psdl render's scale", function()
  it("keeps the exponent of a small px/m", function()
    local render = require "psdl.cli.render"
    assert.equal("0.884", render.scale_text(0.8841))
    assert.equal("0.00884", render.scale_text(0.008841))
    assert.equal("8.84e-06", render.scale_text(8.841e-6))
    assert.equal("1898.125", render.scale_text(1898.125))
    local dir = H.tmpdir(finally)
    local b = psdl.builder.new { style = "sf" }
    -- (the builder stops at +-65,536 m: a 100 m block, then its file's vertices scaled up)
    b:block { outline = { { 0, 0, 0 }, { 0, 0, 100 }, { 100, 0, 0 } } }
    local doc = b:finish()
    for _, v in ipairs(doc.vertices) do v[1], v[3] = v[1] * 1e6, v[3] * 1e6 end
    assert(psdl.write(doc, dir .. "/big.psdl", { force = true }))
    local code, out, err = run("render", dir .. "/big.psdl", "-o", dir .. "/big.png", "--size", "1000")
    assert.equal(0, code, err)
    assert.matches(" 8%.8%de%-06 px/m", out)
  end)
end)

describe("an endless input", function()
  it("is read up to a cap when it is not a regular file, and refused naming the file", function()
    local common = require "psdl.cli.common"
    local bytes, err, code = common.read_file("/dev/zero", 1000)
    assert.is_nil(bytes)
    assert.equal("io", code)
    assert.matches("^/dev/zero: not a regular file, and longer than the 1,000 bytes", err)
    assert.equal("", (common.read_file("/dev/null", 1000)))
    -- a regular file is read whole, whatever the cap
    assert.equal(H.read_bytes("spec/fixtures/grid_n3.psdl"), (common.read_file("spec/fixtures/grid_n3.psdl", 10)))
    local c, _, e = run("info", "/dev/zero")
    assert.equal(3, c)
    assert.matches("psdl info: /dev/zero: not a regular file, and longer than the 67,108,864 bytes", e, 1, true)
  end)
end)

describe("messages of document methods and psdl.write_file", function()
  it("name the function the user called and count its arguments as the user wrote them", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    local ok, e = pcall(function() return doc:rename_textures("x") end)
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'rename_textures' (table expected, got string)", e, 1, true)
    ok, e = pcall(function() return doc:rename_texture("a", 3) end)
    assert.matches("bad argument #2 to 'rename_texture' (string expected, got number)", e, 1, true)
    for _ = 1, 3 do -- (the C function's own name depended on the order of package.loaded)
      ok, e = pcall(psdl.write_file, "/nonexistent/x", nil)
      assert.is_false(ok)
      assert.matches("bad argument #2 to 'write_file' (string expected, got nil)", e, 1, true)
    end
    assert.is_true(doc:rename_textures({}) ~= nil)
  end)
end)
