-- Regressions from a newcomer's first try of the command line: a hint instead of a
-- traceback before anything is built, one --size range for PNG maps everywhere, messages
-- that name the user's file and field rather than psdlkit's internals, a NaN via point
-- reported at its city:road line, and the texture table in `psdl info`.

local lfs = require "lfs"
local psdl = require "psdl"
local H = require "helper"
local run, sh, q = H.cli, H.sh, H.q

local ROOT = assert(psdl.real_path("."))

describe("before psdl/core.so is built", function()
  it("osm, info, build and terrain print a hint to build and exit 3, without a traceback", function()
    for _, args in ipairs { "osm spec/fixtures/osm/tee.osm", "info spec/fixtures/grid_n2.psdl",
      "build examples/street.lua -o /dev/null", "terrain info x.png", "render spec/fixtures/grid_n2.psdl -o x.png" } do
      local out = sh(string.format("cd %s && PSDL_BUILD_DIR=/nonexistent/build scripts/psdl %s", q(ROOT), args))
      assert.matches("exit=3", out, 1, true)
      assert.matches("psdl/core.so is not built yet", out, 1, true)
      assert.matches("cmake -S ", out, 1, true)
      assert.not_matches("traceback", out)
      assert.not_matches("internal error", out)
    end
    -- --help works without it
    assert.matches("exit=0", sh(string.format("cd %s && PSDL_BUILD_DIR=/nonexistent scripts/psdl --help", q(ROOT))))
  end)
end)

describe("map sizes", function()
  it("agree between the option check and the PNG canvas: 64-8192 for PNG, up to 16384 for SVG", function()
    local dir = H.tmpdir(finally)
    local f = "spec/fixtures/grid_n2.psdl"
    local code, _, err = run("render", f, "-o", dir .. "/a.png", "--size", "8193")
    assert.equal(1, code)
    assert.matches("--size: integer 64-8192 expected for a PNG map", err, 1, true)
    code = run("render", f, "-o", dir .. "/a.svg", "--size", "16384")
    assert.equal(0, code)
    code, _, err = run("render", f, "-o", dir .. "/a.svg", "--size", "16385")
    assert.equal(1, code)
    assert.matches("64-16384", err, 1, true)
    -- build --preview and osm --preview apply the same ranges before anything runs
    code, _, err = run("build", "examples/street.lua", "-o", dir .. "/s.psdl", "--preview", dir .. "/s.png",
      "--size", "9000")
    assert.equal(1, code)
    assert.matches("64-8192", err, 1, true)
    assert.is_nil(lfs.attributes(dir .. "/s.psdl"))
    code = run("osm", "spec/fixtures/osm/tee.osm", "-o", dir .. "/t.psdl", "--preview", dir .. "/t.png", "--size", "9000")
    assert.equal(1, code)
    -- the library agrees
    local d = assert(psdl.read(f))
    local ok, msg = pcall(psdl.render, d, { size = 9000 })
    assert.is_false(ok)
    assert.matches("bad argument #2 to 'render' (size 9000: a PNG map is at most 8192 px", msg, 1, true)
  end)
end)

describe("error messages", function()
  it("name the script line and the function, not psdlkit's own files", function()
    local dir = H.tmpdir(finally)
    local cases = {
      { "return psdl.decode(psdl.encode({ rooms = 5, vertices = {} }))", ":1: bad argument #1 to 'encode' (rooms: " },
      { "local d = { rooms = {}, vertices = {} }\nassert(psdl.write(d, 5))", ":2: bad argument #2 to 'write'" },
    }
    for _, c in ipairs(cases) do
      H.write_bytes(dir .. "/s.lua", c[1])
      for _, trust in ipairs { false, true } do
        local code, _, err = run("build", dir .. "/s.lua", "-o", dir .. "/s.psdl", trust and "--trust" or nil)
        assert.equal(2, code)
        assert.matches(dir .. "/s.lua" .. c[2], err, 1, true)
        assert.not_matches("lua/psdl/", err)
        assert.not_matches("sandbox", err)
      end
    end
    -- undump of a document the encoder cannot write
    H.write_bytes(dir .. "/d.json", '{"format": "psdlkit-document", "version": 1, "document": {"rooms": 5}}')
    local _, _, err = run("undump", dir .. "/d.json", "-o", dir .. "/d.psdl")
    assert.not_matches("lua/psdl/", err)
  end)

  it("report a NaN via point at the script line of its city:road", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/via.lua", table.concat({
      "local city = psdl.city.new{ blocks = false }",
      "local a, b = city:node(0, 0), city:node(200, 0)",
      "city:road(a, b, { via = { { 100, 0 / 0 } } })",
      "return city",
    }, "\n"))
    local code, _, err = run("build", dir .. "/via.lua", "-o", dir .. "/via.psdl")
    assert.equal(2, code)
    assert.matches("via.lua:3: bad argument #3 to 'road' (via[1][2]: finite number expected, got nan)", err, 1, true)
    assert.not_matches("intersection", err)
  end)
end)

describe("psdl info", function()
  it("prints the texture table: slot numbers and names", function()
    local code, out = run("info", "spec/fixtures/grid_n3.psdl")
    assert.equal(0, code)
    assert.matches("texture table", out, 1, true)
    local doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    for slot, name in ipairs(doc.textures) do
      assert.matches(string.format("%%f[%%d]%d %s", slot, name:gsub("%p", "%%%0")), out)
    end
    code, out = run("info", "--json", "spec/fixtures/grid_n3.psdl")
    local j = require("cjson").decode(out)
    assert.equal(doc.textures[4], j.files[1].texture_table[4].name)
    assert.equal(4, j.files[1].texture_table[4].slot)
  end)
end)

describe("a second newcomer's findings (F5, F6)", function()
  it("psdl package --dir refuses a folder whose city file is the input", function()
    -- before: DIR/city/p.psdl was replaced by the package's copy of itself
    local dir = H.tmpdir(finally)
    lfs.mkdir(dir .. "/city")
    local input = dir .. "/city/p.psdl"
    H.write_bytes(dir .. "/c.lua", "local c = psdl.city.new{}\nlocal a, b, d = c:node(0, 0), c:node(200, 0), "
      .. "c:node(200, 150)\nc:road(a, b)\nc:road(b, d)\nc:road(d, a)\nreturn c\n")
    assert.equal(0, (run("build", dir .. "/c.lua", "-o", input)))
    os.remove(dir .. "/c.lua")
    local bytes = H.read_bytes(input)
    local ino = lfs.attributes(input, "ino")
    local code, out, err = run("package", input, "--dir", dir, "--name", "p")
    assert.equal(1, code)
    assert.equal("", out)
    assert.matches("--dir " .. dir .. ": the package's file city/p.psdl is the input file " .. input, err, 1, true)
    assert.equal(ino, lfs.attributes(input, "ino"))
    assert.equal(bytes, H.read_bytes(input))
    assert.same({ "city" }, H.files_in(dir)) -- nothing else written
    assert.same({ "p.psdl" }, H.files_in(dir .. "/city"))
    -- another map name in the same folder is fine
    code = run("package", input, "--dir", dir, "--name", "q", "-q")
    assert.equal(0, code)
    assert.equal(bytes, H.read_bytes(input))
  end)

  it("psdl package of an extract says each build as it starts (F8), and nothing with -q", function()
    local dir = H.tmpdir(finally)
    local code, _, err = run("package", "spec/fixtures/osm/tee.osm", "-o", dir .. "/t.ar", "--name", "tee")
    assert.equal(0, code)
    assert.equal("psdl package: note: building the city from spec/fixtures/osm/tee.osm\n", err)
    code, _, err = run("package", "spec/fixtures/osm/tee.osm", "-o", dir .. "/u.ar", "--name", "tee", "-q")
    assert.equal(0, code)
    assert.equal("", err)
  end)

  it("a script that replaces city.build gets a message, not an internal local", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/s.lua", "local c = psdl.city.new{}\nc.build = function() end\nreturn c\n")
    local code, _, err = run("build", dir .. "/s.lua", "-o", dir .. "/s.psdl")
    assert.equal(2, code)
    assert.matches("s.lua: the city's build() returned no document and report (nil, nil): a script must not "
      .. "replace city.build", err, 1, true)
    assert.not_matches("'rep'", err, 1, true)
  end)

  it("psdl.encode names itself 'encode' however it is called", function()
    local ok, err = pcall(psdl.encode, { rooms = 5 })
    assert.is_false(ok)
    assert.matches("^bad argument #1 to 'encode' %(", err)
    local line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() local b = psdl.encode({ rooms = 5 }); return b end)
    assert.matches("^spec/newcomer_spec.lua:" .. line .. ": bad argument #1 to 'encode' %(", err)
  end)

  it("psdl osm: a malformed --bbox is named with the prefix, a --bbox beside the extract says so", function()
    local code, _, err = run("osm", "spec/fixtures/osm/tee.osm", "--bbox", "1,2,3")
    assert.equal(1, code)
    local last = "\npsdl osm: --bbox: four numbers minlon,minlat,maxlon,maxlat expected\n"
    assert.equal(last, err:sub(-#last))
    assert.not_matches("\n\n", err, 1, true)
    code, _, err = run("osm", "spec/fixtures/osm/tee.osm", "--scale", "-1")
    assert.matches("psdl osm: --scale: a number 0.1 to 10 expected (it multiplies every distance), got -1", err, 1, true)
    -- before: "no drivable road to build a city from"
    local dir = H.tmpdir(finally)
    code, _, err = run("osm", "spec/fixtures/osm/tee.osm", "--bbox", "1,2,1.01,2.01", "-o", dir .. "/t.psdl")
    assert.equal(2, code)
    assert.matches("the --bbox 1,2,1.01,2.01 does not overlap the extract (its nodes' box is minlon,minlat,maxlon,"
      .. "maxlat -0.102165,51.498922,-0.097835,51.501078)", err, 1, true)
    assert.same({}, H.files_in(dir))
  end)
end)
