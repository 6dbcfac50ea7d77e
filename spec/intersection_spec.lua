-- Intersection rooms of a city (lua/psdl/city/intersection.lua), as `psdl.city` builds them.
local H = require "helper"
local city_mod = require "psdl.city"
local FLAG, intersection_rooms = H.FLAG, H.intersection_rooms

describe("psdl.city.intersection", function()
  it("builds an intersection room where three or more roads meet, and roads between them", function()
    local city = city_mod.new{ blocks = false }
    local c = city:node(0, 0)
    local e, n, w, s = city:node(150, 0), city:node(0, 150), city:node(-150, 0), city:node(0, -150)
    for _, o in ipairs({ e, n, w, s }) do city:road(c, o) end
    local doc, rep = city:build()
    -- the centre is an intersection, the four ends turning circles (dead ends)
    assert.equal(1, rep.nodes.junction)
    assert.equal(4, rep.nodes.dead_end)
    assert.equal(5, rep.kinds.intersection)
    assert.equal(4, #doc.roads)
    local junctions = intersection_rooms(doc)
    -- the one with four crosswalks and four corner sidewalks is the centre
    local centre
    for _, id in ipairs(junctions) do
      local cw = 0
      for _, a in ipairs(doc.rooms[id].attributes) do if a.type == "crosswalk" then cw = cw + 1 end end
      if cw == 4 then centre = id end
    end
    assert.truthy(centre)
    -- every road starts on the centre's perimeter: its start crossroads are perimeter points there
    local on = {}
    for _, p in ipairs(doc.rooms[centre].perimeter) do on[p.vertex] = true end
    for _, road in ipairs(doc.roads) do
      for _, v in ipairs(road.start_crossroads) do assert.is_true(on[v], "crossroads vertex " .. v) end
      -- and ends on its dead end's turning circle, an intersection room too
      local last = doc.rooms[road.rooms[#road.rooms]]
      local linked = false
      for _, p in ipairs(last.perimeter) do
        local nb = p.neighbour > 0 and doc.rooms[p.neighbour]
        if nb and nb.flags & FLAG.intersection ~= 0 and p.neighbour ~= centre then linked = true end
      end
      assert.is_true(linked)
    end
  end)
end)
