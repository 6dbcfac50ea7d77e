-- Specs for elevated roads in the OpenStreetMap import (`psdl.osm.elevated`): a viaduct
-- running along the road below it becomes bridge roads on elevated nodes, with a ramp where
-- it comes down to the ground, and the city builds it as bridge decks over that road.

local BUILD = os.getenv("PSDL_BUILD_DIR") or "build"
if BUILD == "" then BUILD = "build" end
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = (BUILD:sub(1, 1) == "/" and BUILD or "./" .. BUILD) .. "/?.so;" .. package.cpath

local psdl = require "psdl"
local osm = require "psdl.osm"
local city_mod = require "psdl.city"

local FILE = "spec/fixtures/osm/elevated.osm"

local function roads_named(net, name)
  local out = {}
  for _, r in ipairs(net.roads) do if r.name == name then out[#out + 1] = r end end
  return out
end

describe("psdl.osm elevated roads", function()
  it("lifts a viaduct running along a road into bridge roads on elevated nodes", function()
    local net, report = assert(osm.import(FILE))
    local high = roads_named(net, "High Way")
    assert.is_true(#high >= 2, "the viaduct, split at the slip road's elevated junction")
    for _, r in ipairs(high) do
      assert.is_true(r.bridge)
      assert.is_true(net.nodes[r.from].bridge, "High Way starts on a deck")
      assert.is_true(net.nodes[r.to].bridge, "High Way ends on a deck")
    end
    -- the slip road leaves the viaduct at an elevated junction and comes down at node 11
    local ramp = roads_named(net, "Up Ramp")
    assert.are.equal(1, #ramp)
    assert.is_true(ramp[1].bridge)
    local ends = { net.nodes[ramp[1].from], net.nodes[ramp[1].to] }
    local up, down = ends[1].bridge and ends[1] or ends[2], ends[1].bridge and ends[2] or ends[1]
    assert.is_true(up.bridge)
    assert.is_nil(down.bridge)
    assert.is_true(ramp[1].from == "11" or ramp[1].to == "11", "the ramp's foot is the side street's node")
    -- the road below is untouched: one road at grade along the whole viaduct
    local low = roads_named(net, "Low Road")
    assert.is_true(#low >= 1)
    for _, r in ipairs(low) do assert.is_nil(r.bridge) end
    assert.are.equal(3, report.changes["elevated roads (bridge decks along the roads below)"])
    assert.are.equal(0, report.problems)
  end)

  it("builds bridge decks above the road below, with 0 validation problems", function()
    local net = assert(osm.import(FILE))
    local c = city_mod.from_network(net, { style = "london", seed = 1 })
    c:blocks { buildings = false }
    local doc, report = c:build { validate = false }
    local _, problems = psdl.validate(doc)
    assert.are.same({}, problems)
    assert.is_true(report.kinds.bridge >= 3, "deck rooms: " .. tostring(report.kinds.bridge))
    -- the elevated junction stands at deck height
    local n22 = c.node_by_id["22"]
    assert.is_true(n22.opts.bridge)
    assert.are.equal(require("psdl.city.layout").BRIDGE.height, n22.y)
    -- every metre of the extract appears as road (the viaduct over the road below)
    local kept = require "psdl.osm.kept"
    local m = kept.measure(net.input, kept.city_roads(c))
    assert.is_true(m.fraction > 0.999, "kept " .. m.fraction)
  end)

  it("keeps the old model with elevated = false: the viaduct flattened, the road below lost", function()
    local net, report = assert(osm.import(FILE, { elevated = false }))
    for _, n in pairs(net.nodes) do assert.is_nil(n.bridge) end
    for _, r in ipairs(net.roads) do assert.is_nil(r.bridge) end
    assert.are.same({}, roads_named(net, "Low Road"))
    assert.is_nil(report.changes["elevated roads (bridge decks along the roads below)"])
  end)
end)
