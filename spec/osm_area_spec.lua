-- The area limit of the OSM import (psdl.osm.extent, docs/osm.md "Area limit"): an area
-- too large for a city is refused before anything is projected, with its size in km and
-- the --bbox remedy (exit 2, bad input, docs/cli.md). Hand-written snippets (issue 10/15).
local H = require "helper"
local osm = require "psdl.osm"

local function write_osm(finally, body, bounds)
  local path = H.tmpname(".osm")
  finally(function() os.remove(path) end)
  H.write_bytes(path, '<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6">\n'
    .. (bounds and ('<bounds minlat="%s" minlon="%s" maxlat="%s" maxlon="%s"/>\n'):format(table.unpack(bounds)) or "")
    .. body .. "</osm>\n")
  return path
end

-- a straight road between two points (lat, lon degrees)
local function road(lat1, lon1, lat2, lon2, highway)
  return ('<node id="1" lat="%s" lon="%s"/>\n<node id="2" lat="%s" lon="%s"/>\n'
    .. '<way id="10"><nd ref="1"/><nd ref="2"/><tag k="highway" v="%s"/></way>\n')
    :format(lat1, lon1, lat2, lon2, highway or "residential")
end

-- the tester's file: a primary road from near the north pole through 0,0 to near the south pole
local GLOBE = '<node id="1" lat="89.9999" lon="179.9999"/>\n<node id="2" lat="0" lon="0"/>\n'
  .. '<node id="3" lat="-89.9" lon="-179.9"/>\n'
  .. '<way id="1"><nd ref="1"/><nd ref="2"/><nd ref="3"/><tag k="highway" v="primary"/></way>\n'

describe("psdl osm area limit", function()
  it("refuses a road around the globe at once, with and without -o, and writes nothing", function()
    local file = write_osm(finally, GLOBE)
    local out = H.tmpname(".psdl")
    finally(function() os.remove(out) end)
    local code, stdout, stderr = H.cli("osm", file, "-o", out)
    assert.are.equal(2, code)
    assert.are.equal("", stdout)
    assert.matches("the extent of the drivable ways kept", stderr, 1, true)
    assert.matches("40019 km east%-west by 20004 km north%-south, more than the 5%.00 km", stderr)
    assert.matches("--bbox minlon,minlat,maxlon,maxlat", stderr, 1, true)
    assert.is_nil(io.open(out, "rb"))
    code, stdout, stderr = H.cli("osm", file)
    assert.are.equal(2, code)
    assert.matches("40019 km east%-west", stderr)
  end)

  it("refuses a single 7.85 km road (no <bounds>) instead of filling 5.6 km square with blocks", function()
    local file = write_osm(finally, road(0, 0, 0.05, 0.05))
    local code, _, stderr = H.cli("osm", file, "-o", H.tmpname(".psdl"))
    assert.are.equal(2, code)
    assert.matches("5%.56 km east%-west by 5%.56 km north%-south", stderr)
    -- a --bbox within the limit imports the part of it inside
    local out = H.tmpname(".psdl")
    finally(function() os.remove(out) end)
    code, _, stderr = H.cli("osm", file, "-o", out, "--bbox", "0,0,0.008,0.008", "-q")
    assert.are.equal(0, code, stderr)
    assert.is_truthy(io.open(out, "rb"))
  end)

  it("refuses <bounds> or a --bbox over the limit, names which, and --max-extent raises it", function()
    local file = write_osm(finally, road(0, 0, 0.001, 0.001), { -0.05, -0.05, 0.05, 0.05 })
    local code, _, stderr = H.cli("osm", file, "-q")
    assert.are.equal(2, code)
    assert.matches("(the file's <bounds>, -0.05000,-0.05000,0.05000,0.05000) is 11.1 km east-west", stderr, 1, true)
    -- not clipped to the <bounds>: the ways' own extent counts
    assert.are.equal(0, (H.cli("osm", file, "--no-clip", "-q")))
    code, _, stderr = H.cli("osm", file, "--bbox", "0,0,0.06,0.01", "-q")
    assert.are.equal(2, code)
    assert.matches("(--bbox, 0.00000,0.00000,0.06000,0.01000) is 6.67 km east-west by 1.11 km", stderr, 1, true)
    assert.are.equal(0, (H.cli("osm", file, "--bbox", "0,0,0.06,0.01", "--max-extent", "7", "-q")))
    assert.are.equal(0, (H.cli("osm", file, "--max-extent", "12", "-q")))
  end)

  it("warns when the --bbox is much larger than the data (the city's origin is the box's centre)", function()
    local file = write_osm(finally, road(0, 0, 0.002, 0.002))
    local code, _, stderr = H.cli("osm", file, "--bbox", "-0.01,-0.01,0.01,0.01")
    assert.are.equal(0, code)
    assert.matches("warning: the drivable ways cover 0.22 km by 0.22 km of the 2.22 km by 2.22 km bbox; "
      .. "the city's origin (the bbox's centre) is 0.16 km from their centre", stderr, 1, true)
    -- a box fitting the data: no warning
    code, _, stderr = H.cli("osm", file, "--bbox", "0,0,0.002,0.002")
    assert.are.equal(0, code)
    assert.are.equal("", stderr)
  end)

  it("psdl.osm.network: max_extent returns nil, message, 'bad_input'; bad values are argument errors", function()
    local data = assert(osm.parse('<osm version="0.6">' .. GLOBE .. "</osm>", "snippet"))
    local net, msg, code = osm.network(data, { max_extent = 5000 })
    assert.is_nil(net)
    assert.matches("is 40019 km east%-west", msg)
    assert.are.equal("bad_input", code)
    assert.has_error(function() osm.network(data, { max_extent = -1 }) end,
      "bad argument #2 to 'network' (max_extent: false or a positive number of metres expected)")
    -- within the limit: the network as before
    local small = assert(osm.parse('<osm version="0.6">' .. road(0, 0, 0.002, 0.002) .. "</osm>", "snippet"))
    local n2 = assert(osm.network(small, { max_extent = 5000 }))
    assert.are.equal(1, #n2.roads)
  end)
end)

describe("psdl.city area limit", function()
  it("psdl build refuses a script whose network spans over 5 km, naming the line of the far road", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/far.lua"
    H.write_bytes(script, table.concat({
      'local city = require("psdl.city").new()',
      "local a, b, c = city:node(0, 0), city:node(200, 0), city:node(200, 200)",
      "city:road(a, b)",
      "city:road(b, c)",
      'city:road(c, city:node(200, 9000), { name = "Long Rd" })',
      "return city", "" }, "\n"))
    local out = dir .. "/far.psdl"
    local code, _, stderr = H.cli("build", script, "-o", out)
    assert.are.equal(2, code)
    assert.matches("far.lua:5: the road network spans 0.20 km east-west by 9.00 km north-south, more than the "
      .. "5.00 km a city can span", stderr, 1, true)
    assert.matches("roads[3] (Long Rd) reaches x = 200, z = 9000 m", stderr, 1, true)
    assert.is_nil(io.open(out, "rb"))
  end)

  it("max_extent raises or lifts the limit and is checked", function()
    local pc = require "psdl.city"
    local function long(opts)
      local city = pc.new(opts)
      city:road(city:node(0, 0), city:node(0, 5200), { via = { { 30, 2600 } } })
      return city
    end
    local ok, err = pcall(long().build, long())
    assert.is_false(ok)
    assert.matches("spans 0.03 km east-west by 5.20 km north-south", err, 1, true)
    -- the limit applies before any room is made; a raised one lets the check pass
    local city = long({ max_extent = 6000, blocks = false })
    assert.has_no_error(function() city:build() end)
    assert.has_error(function() pc.new({ max_extent = 0 }) end)
  end)
end)
