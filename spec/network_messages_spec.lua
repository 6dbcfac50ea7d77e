-- How the layout's messages name roads (lua/psdl/city/network.lua: road_label, road_ref,
-- fail) and how psdl.city.repair finds the road a failure is about (the record beside the
-- message, not a number read back from it): the number the script's City:road gave a road,
-- which stays when repair drops a road before it, and the nodes of a piece of a split road
-- (its pieces share that number). Stop 23's "network.lua messages number roads by their
-- position".

local city_mod = require "psdl.city"
local network = require "psdl.city.network"
local repair = require "psdl.city.repair"
local H = require "helper"

describe("road numbers in the layout's messages", function()
  it("name the road the script made third as road 3 after repair dropped one before it", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/five.lua", table.concat({
      "local city = psdl.city.new{ blocks = false }",
      "local n1 = city:node(0, 0)",
      "city:road(n1, city:node(200, 0), { name = 'R1' })",
      "city:road(n1, city:node(200, 1), { name = 'R2' }) -- the same direction as R1: dropped",
      "city:road(city:node(0, 300), city:node(200, 300), { name = 'R3' })",
      "city:road(city:node(0, 306), city:node(200, 306), { name = 'R4' }) -- too close to R3",
      "return city",
    }, "\n"))
    local code, _, err = H.cli("build", dir .. "/five.lua", "-o", dir .. "/five.psdl")
    assert.equal(2, code, err)
    -- (the places in the list were 2 and 3 after the drop)
    assert.matches("five.lua:5: road 3 (R3), its rooms would overlap those of road 4 (R4) at " .. dir .. "/five.lua:6",
      err, 1, true)
  end)

  -- two crossing roads split at their crossing (auto_junctions): four pieces, two numbers
  local function split_city()
    local c = city_mod.new { auto_junctions = true, blocks = false }
    local a = c:road(c:node(0, 0, { id = "w" }), c:node(300, 0, { id = "e" }), { name = "Main" })
    c:road(c:node(150, -100, { id = "s" }), c:node(150, 100, { id = "n" }), { name = "Cross" })
    network.resolve_conflicts(c)
    assert.equal(4, #c.roads)
    local pieces = {}
    for _, r in ipairs(c.roads) do if r.number == 1 then pieces[#pieces + 1] = r end end
    assert.equal(2, #pieces)
    assert.equal(a, pieces[1])
    return c, pieces[1], pieces[2]
  end

  it("tell the pieces of a split road apart by the nodes they run between", function()
    local c, p1, p2 = split_city()
    local l1, l2 = network.road_label(p1), network.road_label(p2)
    assert.matches("^.-network_messages_spec%.lua:%d+: road 1 %(Main%) between node w and node auto %d+$", l1)
    assert.matches("^.-network_messages_spec%.lua:%d+: road 1 %(Main%) between node auto %d+ and node e$", l2)
    assert.matches(" at .-network_messages_spec%.lua:%d+$", network.road_ref(p2))
    assert.are_not.equal(l1, l2)
    assert.equal("Main", p2.name) -- (the nodes are in the messages only)
  end)

  for _, recorded in ipairs { true, false } do
    it("lead repair to the piece a failure is about (" .. (recorded and "the layout's record" or "its label") .. ")",
      function()
      local c, p1, p2 = split_city()
      local log = repair.log(false)
      local failed = false
      local result = repair.run(c, log, function()
        if not failed then
          failed = true
          local msg = network.road_label(p2) .. ": it runs along " .. network.road_ref(c.roads[2]) .. " from node e"
          if recorded then network.fail(c, { road = p2, roads = { p2, c.roads[2] } }, msg) end
          error(msg, 0)
        end
        return "built"
      end)
      assert.equal("built", result)
      assert.is_true(p2.removed)
      assert.is_nil(p1.removed)
      assert.equal(1, #log.entries)
      assert.equal("runs along another road", log.entries[1].reason)
      assert.equal(1, log.entries[1].number)
      assert.matches("road 1 (Main) between node auto", log.entries[1].detail, 1, true)
      -- the record is only kept while repair runs the layout
      assert.is_nil(c.failure_about)
    end)
  end
end)
