-- psdl.city.from_network checks a network table's nodes and roads as the table gives them
-- and names each by its place (`nodes[2]`, `roads[1] (way 7)`) at the script line: a node's
-- coordinates, unknown keys of nodes and roads, a `layer` that is no whole number, values shown
-- as given (`lanes = "4"` is `got "4"`) (newcomer finding F12).

local psdl = require "psdl"
local H = require "helper"

local function nodes() return { [1] = { x = 0, z = 0 }, [2] = { x = 200, z = 0 } } end

-- The message from_network raises for the network.
local function refused(net)
  local ok, err = pcall(psdl.city.from_network, net)
  assert.is_false(ok, "accepted")
  return err
end

describe("psdl.city.from_network", function()
  it("names the node whose coordinates or height City:node refuses", function()
    assert.equal("nodes[2]: (1e+09, 0) lies too far out: x and z within +-65536 m (psdl.city.MAX_COORDINATE: 32-bit "
      .. "float positions lose their centimetres further out)",
      refused { nodes = { [1] = { x = 0, z = 0 }, [2] = { x = 1e9, z = 0 } }, roads = { { from = 1, to = 2 } } })
    assert.equal("nodes[b]: finite numbers x and z expected, got nan x",
      refused { nodes = { a = { x = 0, z = 0 }, b = { x = 0 / 0, z = 0 } }, roads = { { from = "a", to = "b" } } })
    assert.equal("nodes[1]: y: finite number expected, got nan",
      refused { nodes = { [1] = { x = 0, z = 0, y = 0 / 0 }, [2] = { x = 100, z = 0 } }, roads = { { from = 1, to = 2 } } })
  end)

  it("refuses unknown keys of nodes and roads, like the builder's options", function()
    assert.equal("nodes[1]: unknown option 'dead_ned'",
      refused { nodes = { [1] = { x = 0, z = 0, dead_ned = "open" }, [2] = { x = 100, z = 0 } },
                roads = { { from = 1, to = 2 } } })
    assert.equal("roads[1] (way 7): unknown option 'lanse'",
      refused { nodes = nodes(), roads = { { from = 1, to = 2, lanse = 4, source = "way 7" } } })
    -- what psdl.osm adds for its own reports is no typo
    local city = psdl.city.from_network { nodes = { [1] = { x = 0, z = 0, source = "node 1", roundabout = true },
      [2] = { x = 200, z = 0, dead_end = "cul_de_sac", turning_circle = true } },
      roads = { { from = 1, to = 2, ref = "A1", highway = "primary", divided = false, median = 0, roundabout = false,
                  link = false, walkway = false, name = "High St", source = "way 1" } } }
    assert.equal(2, #city.nodes)
  end)

  it("refuses a layer that is no whole number, at nodes and roads", function()
    for _, c in ipairs { { "x", '"x"' }, { 0 / 0, "nan" }, { 2.5, "2.5" }, { math.huge, "inf" } } do
      assert.equal("roads[1]: layer: a whole number expected (OSM's layer: 1 and up on bridges, below 0 in tunnels), got "
        .. c[2], refused { nodes = nodes(), roads = { { from = 1, to = 2, bridge = true, layer = c[1] } } })
      assert.matches("^nodes%[1%]: layer: a whole number expected",
        refused { nodes = { [1] = { x = 0, z = 0, bridge = true, layer = c[1] }, [2] = { x = 200, z = 0 } },
                  roads = { { from = 1, to = 2, bridge = true } } })
    end
    -- whole layers stay as they were: 3 is a deck of 8 + 7 * 2 m
    local city = psdl.city.from_network { nodes = nodes(), roads = { { from = 1, to = 2, bridge = true, layer = 3 } } }
    assert.equal(22, city.roads[1].bridge.height)
  end)

  it("shows strings quoted and checks flags, names and sources", function()
    assert.equal('roads[1]: lanes: a whole number >= 1 expected, got "4"',
      refused { nodes = nodes(), roads = { { from = 1, to = 2, lanes = "4" } } })
    assert.equal('roads[1]: width: a number >= 0 (metres) expected, got "12"',
      refused { nodes = nodes(), roads = { { from = 1, to = 2, width = "12" } } })
    assert.equal('roads[1]: sidewalk: "both", "left", "right" or "none" expected, got "bot"',
      refused { nodes = nodes(), roads = { { from = 1, to = 2, sidewalk = "bot" } } })
    assert.equal('roads[1]: oneway: true or false expected, got "yes"',
      refused { nodes = nodes(), roads = { { from = 1, to = 2, oneway = "yes" } } })
    assert.equal("roads[1]: source: a string expected, got table",
      refused { nodes = nodes(), roads = { { from = 1, to = 2, source = {} } } })
    assert.equal("roads[1]: profile: a profile name or table expected, got 7",
      refused { nodes = nodes(), roads = { { from = 1, to = 2, profile = 7 } } })
  end)

  it("raises at the script line in psdl build", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/n.lua", table.concat({
      "local net = { nodes = { [1] = { x = 0, z = 0 }, [2] = { x = 200, z = 0 } },",
      "  roads = { { from = 1, to = 2, lanse = 4 } } }",
      "local city = psdl.city.from_network(net)",
      "return city",
    }, "\n"))
    for _, trust in ipairs { false, true } do
      local code, _, err = H.cli("build", dir .. "/n.lua", "-o", dir .. "/n.psdl", trust and "--trust" or nil)
      assert.equal(2, code)
      assert.matches("n.lua:3: roads[1]: unknown option 'lanse'", err, 1, true)
      assert.not_matches("lua/psdl/", err)
    end
  end)
end)
