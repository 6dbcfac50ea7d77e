-- The network of a city (lua/psdl/city/network.lua): conflicts of the network, node classes
-- and road runs, as `psdl.city` builds them.
local H = require "helper"
local city_mod = require "psdl.city"
local perimeter_poly, bbox, intersection_rooms = H.perimeter_poly, H.bbox, H.intersection_rooms

describe("psdl.city.network", function()
  it("runs a road smoothly through a gentle node, puts a bend room at a sharp one and a transition "
    .. "room where the profile changes", function()
    local city = city_mod.new{ blocks = false, dead_end = "open" }
    local a, b, c, d, e = city:node(0, 0), city:node(200, 0), city:node(400, 40), city:node(400, 300),
      city:node(560, 300)
    city:road(a, b)
    city:road(b, c)                          -- 11 degrees: through
    city:road(c, d)                          -- 79 degrees: a bend room
    city:road(d, e, { profile = "avenue" })  -- another profile: a transition room
    local doc, rep = city:build()
    assert.equal(1, rep.nodes.through)
    assert.equal(1, rep.nodes.bend)
    assert.equal(1, rep.nodes.transition)
    assert.equal(2, rep.nodes.open)
    assert.equal(2, #intersection_rooms(doc))
    -- three runs: a-b-c (one record over both roads), c-d, d-e
    assert.equal(3, #doc.roads)
    local first = doc.roads[1]
    assert.equal(4, #first.rooms) -- about 400 m in rooms of about 100 m
    local len = 0
    for _, id in ipairs(first.rooms) do
      local poly = perimeter_poly(doc, doc.rooms[id])
      local x0, _, x1 = bbox(poly)
      len = len + (x1 - x0)
    end
    assert.near(400, len, 12) -- the run covers both roads from a to c
    -- the avenue is divided: flag 0x08 with sidewalks 0x40; the streets 0x40 only
    assert.equal(0x40, doc.roads[1].flags)
    assert.equal(0x48, doc.roads[3].flags)
    -- the divider is capped at both ends of its run only
    local caps = 0
    for _, id in ipairs(doc.roads[3].rooms) do
      for _, at in ipairs(doc.rooms[id].attributes) do
        if at.type == "divided_road" then
          caps = caps + (at.cap_start and 1 or 0) + (at.cap_end and 1 or 0)
        end
      end
    end
    assert.equal(2, caps)
  end)
end)

describe("psdl.city.network.conflicts after a repair", function()
  it("checks only the changed roads and nodes and finds what a full check finds", function()
    local pcity = require "psdl.city"
    local network = require "psdl.city.network"
    local c = pcity.new { auto_junctions = true }
    local a, b = c:node(0, 0), c:node(200, 0)
    local f, g = c:node(0, 150), c:node(200, 150)
    local d, e = c:node(100, 60), c:node(100, 110)
    c:road(a, b)
    c:road(f, g)
    local r = c:road(d, e)
    assert.are.same({}, network.conflicts(c))
    -- a repair moved r's shape: it now runs across road a-b twice
    r.via = { { 100, -20 }, { 120, 40 } }
    local full = network.conflicts(c)
    local part = network.conflicts(c, { roads = { [r] = true }, nodes = { [d] = true, [e] = true } })
    assert.is_true(#full >= 2, #full .. " conflicts")
    assert.are.equal(#full, #part)
    for i, x in ipairs(full) do
      local y = part[i]
      assert.are.equal(x.kind, y.kind)
      assert.are.equal(x.a, y.a)
      assert.are.equal(x.b, y.b)
      assert.is_true(math.abs(x.x - y.x) < 1e-9 and math.abs(x.z - y.z) < 1e-9)
    end
    -- an unchanged pair is not tested again: two roads crossing that nobody marked changed
    local h, k = c:node(50, -50), c:node(50, 100)
    c:road(h, k)
    local marked = network.conflicts(c, { roads = { [r] = true }, nodes = { [d] = true, [e] = true } })
    assert.are.equal(#part, #marked)
  end)
end)

describe("psdl.city.from_network refuses what an importer must repair first", function()
  it("names the network road that crosses itself or holds more lanes than a road record", function()
    local nodes = { [1] = { x = 0, z = 0 }, [2] = { x = 400, z = 0 } }
    local ok, err = pcall(city_mod.from_network, { nodes = nodes,
      roads = { { from = 1, to = 2, source = "way 7", via = { { 400, 200 }, { 200, 200 }, { 200, -200 } } } } })
    assert.is_false(ok)
    -- the road's place once, not "roads[1]: roads[1] (way 7): ..."
    assert.matches("^roads%[1%] %(way 7%): road 1 crosses itself at %(200%.0, 100%.0%): its centre line from node 1 "
      .. "to via%[1%] meets the one from via%[2%] to via%[3%]", err)
    ok, err = pcall(city_mod.from_network, { nodes = nodes, roads = { { from = 1, to = 2 }, { from = 2, to = 1, lanes = 600 } } })
    assert.is_false(ok)
    assert.matches("^roads%[2%]: lanes: 600 lanes put 300 on one side, at most " .. require("psdl.core").limits.lane_values, err)
  end)
end)
