-- Specs for a command's outputs as a set and the options checked before any work (newcomer
-- round 6, #5 and #6): `psdl osm --scale` out of its range is a usage error; a scaled area
-- counts against the area limit; a city too large for a search grid says so (exit 2, not an
-- internal error); every package option of `osm --package` and `build --package` is checked
-- before anything is read or written; a failure after the city was made (package, preview)
-- leaves an existing -o file untouched and writes nothing new (psdl.cli.outputs).

local H = require "helper"

local SMALL = "spec/fixtures/osm/tee.osm"
local CORNER = "examples/street.lua"
local LONG_TITLE = string.rep("x", 100)

local function prior(path)
  H.write_bytes(path, "prior")
end

describe("psdl osm --scale and the size of the city", function()
  it("--scale outside 0.1-10 is a usage error (exit 1) giving the range; nothing is written", function()
    local dir = H.tmpdir(finally)
    for _, s in ipairs { "1000", "1e9", "0.05", "0", "-1", "nan", "inf" } do
      local code, out, err = H.cli("osm", SMALL, "-o", dir .. "/x.psdl", "--scale", s)
      assert.equal(1, code, err)
      assert.equal("", out)
      assert.matches("--scale: a number 0.1 to 10 expected (it multiplies every distance), got " .. s, err, 1, true)
      assert.is_false(H.exists(dir .. "/x.psdl"))
    end
  end)

  it("the area limit counts the scaled area: both sizes and the smaller scale are in the message (exit 2)", function()
    local dir = H.tmpdir(finally)
    -- leeds-potternewton is about 0.5 km across: 5 km scaled by 10
    local code, _, err = H.cli("osm", "spec/fixtures/osm/leeds-potternewton.osm", "-o", dir .. "/x.psdl",
      "--scale", "10", "--max-extent", "4")
    assert.equal(2, code, err)
    assert.matches("km north%-south, [%d.]+ km by [%d.]+ km at scale 10, more than the 4%.00 km a city can span", err)
    assert.matches("a smaller scale", err, 1, true)
    assert.is_false(H.exists(dir .. "/x.psdl"))
  end)

  it("an area past a search grid's reach is 'the city is too large', not an internal error", function()
    local osm = require "psdl.osm"
    -- the newcomer's 4-node extract (215 by 222 m); the library has no area limit by default,
    -- and a 1000-fold scale reaches the grids of the clean-up
    local path = H.tmp(finally, ".osm")
    H.write_bytes(path, '<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6">\n'
      .. '<node id="1" lat="50.0" lon="14.0"/><node id="2" lat="50.0" lon="14.003"/>\n'
      .. '<node id="3" lat="50.002" lon="14.003"/><node id="4" lat="50.002" lon="14.0"/>\n'
      .. '<way id="10"><nd ref="1"/><nd ref="2"/><nd ref="3"/><nd ref="4"/><nd ref="1"/>'
      .. '<tag k="highway" v="residential"/></way>\n'
      .. '<way id="11"><nd ref="1"/><nd ref="3"/><tag k="highway" v="residential"/></way>\n</osm>\n')
    local data = assert(osm.read(path))
    local ok, err = pcall(osm.network, data, { scale = 1000 })
    assert.is_false(ok)
    assert.matches("^the city is too large: a box [%d.]+ km by [%d.]+ km %(x from", tostring(err))
    assert.matches("the game's limit is a city about 5 km across", tostring(err), 1, true)
  end)
end)

describe("package options checked before any work", function()
  for _, case in ipairs {
    { "--police", "99", "--police: a whole number of cars 0-8 expected, got 99" },
    { "--density", "9", "--density: a number 0-4 expected" },
    { "--title", LONG_TITLE, "--title: title \"" .. LONG_TITLE .. "\": at most 39 characters on one line" },
    { "--rays", "0", "--rays: a positive integer expected, got 0" },
  } do
    it("osm --package " .. case[1] .. " bad: exit 1, the existing -o untouched, no .ar", function()
      local dir = H.tmpdir(finally)
      prior(dir .. "/s.psdl")
      local code, out, err = H.cli("osm", SMALL, "-o", dir .. "/s.psdl", "--package", dir .. "/s.ar", case[1], case[2])
      assert.equal(1, code, err)
      assert.equal("", out)
      assert.matches("psdl osm: " .. case[3], err, 1, true)
      assert.equal("prior", H.read_bytes(dir .. "/s.psdl"))
      assert.is_false(H.exists(dir .. "/s.ar"))
    end)
  end

  it("build --package --title of 100 characters: exit 1 before the script runs, -o untouched", function()
    local dir = H.tmpdir(finally)
    prior(dir .. "/c.psdl")
    local code, out, err = H.cli("build", CORNER, "-o", dir .. "/c.psdl", "--package", dir .. "/c.ar",
      "--title", LONG_TITLE)
    assert.equal(1, code, err)
    assert.equal("", out)
    assert.matches("psdl build: --title: title", err, 1, true)
    assert.equal("prior", H.read_bytes(dir .. "/c.psdl"))
    assert.is_false(H.exists(dir .. "/c.ar"))
  end)

  it("osm --package without -o is a usage error", function()
    local dir = H.tmpdir(finally)
    local code, _, err = H.cli("osm", SMALL, "--package", dir .. "/s.ar")
    assert.equal(1, code, err)
    assert.matches("need -o CITY.psdl", err, 1, true)
    assert.is_false(H.exists(dir .. "/s.ar"))
  end)
end)

describe("a command's outputs as a set (psdl.cli.outputs)", function()
  it("a package that cannot be made leaves the existing -o as it was and writes no preview (build)", function()
    local dir = H.tmpdir(finally)
    -- a script whose own package table has a title the package refuses (found only when packaging)
    local script = dir .. "/t.lua"
    H.write_bytes(script, 'local city = psdl.city.new{ seed = 7, package = { title = "' .. LONG_TITLE .. '" } }\n'
      .. "local a, b, c = city:node(0, 0), city:node(200, 0), city:node(200, 150)\n"
      .. "city:road(a, b, { profile = 'avenue' })\ncity:road(b, c)\nreturn city\n")
    prior(dir .. "/t.psdl")
    local code, _, err = H.cli("build", script, "-o", dir .. "/t.psdl", "--package", dir .. "/t.ar",
      "--preview", dir .. "/t.svg")
    assert.equal(2, code, err)
    assert.matches("at most 39 characters", err, 1, true)
    assert.equal("prior", H.read_bytes(dir .. "/t.psdl"))
    assert.is_false(H.exists(dir .. "/t.ar"))
    assert.is_false(H.exists(dir .. "/t.svg"))
  end)

  it("osm -o with --package, --preview and the reports writes them all when all succeed", function()
    local dir = H.tmpdir(finally)
    prior(dir .. "/s.psdl")
    local code, _, err = H.cli("osm", SMALL, "-o", dir .. "/s.psdl", "--package", dir .. "/s.ar", "--preview",
      dir .. "/s.svg", "--report", dir .. "/r.json", "--network-json", dir .. "/n.json", "-q")
    assert.equal(0, code, err)
    assert.equal("PSD0", H.read_bytes(dir .. "/s.psdl"):sub(1, 4))
    for _, f in ipairs { "s.ar", "s.svg", "r.json", "n.json" } do assert.is_true(H.exists(dir .. "/" .. f), f) end
  end)

  it("commit: a write that fails puts back the files written before it (old bytes, or removed when new)", function()
    local outputs = require "psdl.cli.outputs"
    local common = require "psdl.cli.common"
    local dir = H.tmpdir(finally)
    prior(dir .. "/a.txt")
    local set = outputs.new()
    set:add(dir .. "/a.txt", "new a")
    set:add(dir .. "/b.txt", "new b")
    set:add(dir .. "/missing/c.txt", "new c")
    local ok, e = pcall(set.commit, set)
    assert.is_false(ok)
    assert.is_true(common.is_failure(e))
    assert.matches("missing/c.txt", e.msg, 1, true)
    assert.equal("prior", H.read_bytes(dir .. "/a.txt"))
    assert.is_false(H.exists(dir .. "/b.txt"))
    -- and all of them when nothing fails
    local set2 = outputs.new()
    set2:add(dir .. "/a.txt", "new a")
    set2:add(dir .. "/b.txt", "new b")
    set2:commit()
    assert.equal("new a", H.read_bytes(dir .. "/a.txt"))
    assert.equal("new b", H.read_bytes(dir .. "/b.txt"))
  end)
end)
