-- Specs for elevated roads in the OpenStreetMap import (`psdl.osm.elevated`): a viaduct
-- running along the road below it becomes bridge roads on elevated nodes, with a ramp where
-- it comes down to the ground, and the city builds it as bridge decks over that road.

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
    assert.are.equal(require("psdl.city.tunnel").BRIDGE.height, n22.y)
    -- every metre of the extract appears as road (the viaduct over the road below)
    local kept = require "psdl.osm.kept"
    local m = kept.measure(net.input, kept.city_roads(c))
    assert.is_true(m.fraction > 0.999, "kept " .. m.fraction)
  end)

  it("pairs a flyover's two ramp feet side by side: both ramps reach the ground and the road they come down to (Nairobi)", function()
    -- before: each foot road's end lay on the other road, one was cut back round after round
    -- and dropped with the overlap, and the Down ramp had no way up (259.5 m dropped, kept
    -- 90.4 %); the structures' top ends were joined away from North Road (a join through a
    -- node the ramps come down at)
    local net, report = assert(osm.import("spec/fixtures/osm/ramp_feet.osm"))
    local by = {}
    for _, r in ipairs(net.roads) do
      by[r.name] = by[r.name] or {}
      table.insert(by[r.name], r)
    end
    assert.are.equal(1, #by.Up)
    assert.are.equal(1, #by.Down)
    -- both come down at one ground node (the feet made one), which the two foot roads leave
    local up, down = by.Up[1], by.Down[1]
    assert.is_true(up.bridge and down.bridge)
    local foot = up.from
    assert.are.equal(foot, down.to)
    assert.is_nil(net.nodes[foot].bridge)
    local at_foot = 0
    for _, r in ipairs(net.roads) do
      if (r.from == foot or r.to == foot) and not r.bridge then at_foot = at_foot + 1 end
    end
    assert.are.equal(1, at_foot, "one two-way stretch leaves the feet")
    assert.are.equal(1, report.changes["opposite one-ways running side by side merged into a two-way road"])
    -- the top ends stay on North Road
    assert.are.equal("6", up.to)
    assert.are.equal("7", down.from)
    for _, d in ipairs(report.dropped) do
      assert.is_falsy(d.reason:match("no way up"), d.reason)
    end
    local c = city_mod.from_network(net, { style = "london", seed = 1 })
    c:blocks { buildings = false }
    local doc, creport = c:build { validate = false }
    local _, problems = psdl.validate(doc)
    assert.are.same({}, problems)
    assert.is_true(creport.kinds.bridge >= 4, "deck rooms: " .. tostring(creport.kinds.bridge))
    local kept = require "psdl.osm.kept"
    local m = kept.measure(net.input, kept.city_roads(c))
    -- (98.1 % before a 2-lane alley could drop a lane: the Up foot's stretch beside the Down
    -- foot past their shared two-way part was cut away; now it is narrowed to one lane)
    assert.is_true(m.fraction > 0.985, "kept " .. m.fraction)
    assert.are.equal(1, report.changes["roads narrowed to fit: fewer lanes"])
  end)

  it("stacks a layer-2 bridge above a layer-1 bridge it crosses: decks at different heights, no junction", function()
    -- both used to be decks at 8 m (warp rooms overlapping at one height), and the layer-2
    -- way, crossing no road at grade, was flattened into an ordinary road
    local tunnel = require "psdl.city.tunnel"
    local net = assert(osm.import("spec/fixtures/osm/layers.osm"))
    local layer_of = {}
    for _, r in ipairs(net.roads) do
      if r.name == "First Deck" or r.name == "Second Deck" then
        assert.is_true(r.bridge, r.name)
        layer_of[r.name] = r.layer
      end
    end
    assert.are.same({ ["First Deck"] = 1, ["Second Deck"] = 2 }, layer_of)
    local c = city_mod.from_network(net, { style = "london", seed = 1 })
    c:blocks { buildings = false }
    local doc, report = c:build { validate = false }
    local _, problems = psdl.validate(doc)
    assert.are.same({}, problems)
    -- the warp rooms over the decks' crossing at (0, 100): one at each deck height
    local render = require "psdl.render"
    local heights = {}
    for _, room in ipairs(doc.rooms) do
      local x, z = render.room_center(doc, room)
      if x and math.abs(x) < 12 and math.abs(z - 100) < 12 and room.flags & 0x40 ~= 0 then
        local lo = math.huge
        for _, p in ipairs(room.perimeter) do lo = math.min(lo, doc.vertices[p.vertex][2]) end
        heights[#heights + 1] = math.floor(lo + 0.5)
      end
    end
    table.sort(heights)
    assert.are.same({ tunnel.deck_height(1), tunnel.deck_height(2) }, heights)
    assert.are.equal(8, tunnel.deck_height(1))
    assert.are.equal(8 + tunnel.LAYER_STEP, tunnel.deck_height(2))
    assert.is_true(report.kinds.bridge >= 4)
  end)

  it("keeps the old model with elevated = false: the viaduct flattened, the road below lost", function()
    local net, report = assert(osm.import(FILE, { elevated = false }))
    for _, n in pairs(net.nodes) do assert.is_nil(n.bridge) end
    for _, r in ipairs(net.roads) do assert.is_nil(r.bridge) end
    assert.are.same({}, roads_named(net, "Low Road"))
    assert.is_nil(report.changes["elevated roads (bridge decks along the roads below)"])
  end)
end)
