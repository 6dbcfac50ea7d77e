-- Road runs of a city (lua/psdl/city/road.lua): centre lines cut into road rooms, as
-- `psdl.city` builds them.
local H = require "helper"
local city_mod = require "psdl.city"
local perimeter_poly, bbox, road_attrs = H.perimeter_poly, H.bbox, H.road_attrs

describe("psdl.city.road", function()
  it("splits long roads into rooms of about room_length at full cross-sections", function()
    local city = city_mod.new{ blocks = false, dead_end = "open", room_length = 100 }
    city:road(city:node(0, 0), city:node(520, 0))
    local doc = city:build()
    assert.equal(1, #doc.roads)
    local rooms = doc.roads[1].rooms
    assert.equal(5, #rooms)
    for k, id in ipairs(rooms) do
      local poly = perimeter_poly(doc, doc.rooms[id])
      local x0, _, x1 = bbox(poly)
      assert.is_true(x1 - x0 > 80 and x1 - x0 < 130, "room " .. k .. " is " .. (x1 - x0) .. " m long")
      if k > 1 then -- consecutive rooms share the full section
        local prev = road_attrs(doc.rooms[rooms[k - 1]])[1].vertices
        local cur = road_attrs(doc.rooms[id])[1].vertices
        assert.same({ prev[#prev - 3], prev[#prev - 2], prev[#prev - 1], prev[#prev] }, { cur[1], cur[2], cur[3], cur[4] })
      end
    end
  end)
end)
