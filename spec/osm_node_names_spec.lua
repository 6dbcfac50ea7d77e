-- Specs for the node names of `psdl osm --strict`'s messages (newcomer round 6, #9): the
-- importer's own node ids (b2, d1, ...) appear in no OSM file, so a message gets their place
-- (x, z and lat, lon) at their first mention; and "too short for its ends" no longer says an
-- end "takes 0.0 m" of a road.

local H = require "helper"
local R = require "psdl.cli.osm_report"

describe("psdl osm's node names", function()
  local net = {
    origin = { lat = 50, lon = 14 }, scale = 1,
    nodes = { b2 = { x = 100, z = -50 }, d1 = { x = 0, z = 0 }, [4632330077] = { x = 5, z = 5 } },
  }

  it("places the importer's own node ids at their first mention, not inside nodes[...]", function()
    local m = R.place_nodes("nodes[b2]: node b2: the dead end at b2, near node d1 and node 4632330077; b7 too", net)
    assert.equal("nodes[b2]: node b2 (100, -50 m; 49.999550, 14.001395): the dead end at b2, near node d1 (0, 0 m; "
      .. "50.000000, 14.000000) and node 4632330077; b7 too", m)
  end)

  it("leaves a message without such ids as it is", function()
    local m = "roads[3] (way 12): road 3: too short"
    assert.equal(m, R.place_nodes(m, net))
  end)

  it("a road too short for its ends names only the ends that take some of it", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/short.lua"
    -- a 12 m road whose one end is a busy junction (wide avenues at a sharp angle), the other a dead end
    H.write_bytes(script, table.concat({
      "local city = psdl.city.new{ seed = 1 }",
      "local a, b = city:node(0, 0), city:node(12, 0)",
      "local c, d = city:node(-150, 40), city:node(-150, -40)",
      "city:road(c, a, { profile = 'boulevard' })", "city:road(a, d, { profile = 'boulevard' })",
      "city:road(a, b)", "return city", "" }, "\n"))
    local code, _, err = H.cli("build", script, "-o", dir .. "/s.psdl", "--strict")
    assert.equal(2, code, err)
    assert.matches("too short for its ends: [%d.]+ m long, the intersection at node 1 takes [%d.]+ m of it", err)
    assert.not_matches("takes 0.0 m", err, 1, true)
  end)
end)
