-- Regressions from the fifth newcomer's report (status n5_*, the city and builder items): a
-- road of more rooms than a road record holds is named with its script line (F7),
-- from_network names a missing `from`/`to` and the repair warnings name each road by the
-- script's number (F5), and number checks show a string quoted.

local psdl = require "psdl"
local H = require "helper"

-- The text of a script written to dir/name.
local function script(dir, name, lines)
  local path = dir .. "/" .. name
  H.write_bytes(path, table.concat(lines, "\n"))
  return path
end

describe("psdl build messages (newcomer 5)", function()
  it("names the road and the fix when a road needs more rooms than a road record holds", function()
    local dir = H.tmpdir(finally)
    local s = script(dir, "long.lua", {
      "local c = psdl.city.new{ name = 'long', max_extent = false, blocks = false }",
      "local a, b = c:node(0, 0), c:node(30000, 0)",
      "c:road(a, b, { name = 'Long Road' })",
      "return c",
    })
    local code, _, err = H.cli("build", s, "-o", dir .. "/l.psdl")
    assert.equal(2, code)
    assert.matches("long.lua:3: road 1 (Long Road): its 300 rooms (30.0 km of road, rooms of about 100 m) are more than "
      .. "one road record holds (255: a one-byte count, psdl-format.md §1.7); raise room_length, or split the road "
      .. "with a node", err, 1, true)
    -- the builder refuses such a record at the call
    local b = psdl.builder.new()
    local rooms = b:street { path = { { 0, 0, 0 }, { 0, 0, 2600 } }, profile = { left = 3, right = 3 }, split = 2,
                             spacing = 10 }
    assert.is_true(#rooms > 255)
    local ok, e = pcall(function() b:road_record { rooms = rooms } end)
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'road_record' (rooms: " .. #rooms .. " rooms, a road record lists at most 255",
      e, 1, true)
  end)

  it("from_network names a road's missing or unknown end", function()
    local function net() return { nodes = { a = { x = 0, z = 0 }, b = { x = 200, z = 0 } }, roads = { { from = "a", to = "b" } } } end
    local n = net(); n.roads[1].from = nil
    local ok, e = pcall(psdl.city.from_network, n)
    assert.is_false(ok)
    assert.matches("roads[1]: from missing (a node id expected)", e, 1, true)
    n = net(); n.roads[1].to = "q"
    ok, e = pcall(psdl.city.from_network, n)
    assert.is_false(ok)
    assert.matches('roads[1]: to = "q": no such node in nodes', e, 1, true)
  end)

  it("the repair warnings name each road by its number, also in the layout's words", function()
    local n = { nodes = { a = { x = 0, z = 0 }, b = { x = 200, z = 0, bridge = true }, c = { x = 200, z = 150 } },
      roads = { { from = "a", to = "b" }, { from = "b", to = "c" }, { from = "a", to = "c" } } }
    local _, rep = psdl.city.from_network(n):build()
    assert.equal(2, #rep.repairs)
    for i, e in ipairs(rep.repairs) do
      assert.equal(string.format("road %d at roads[%d]", i, i), e.ref)
      assert.matches(string.format("but road %d at roads[%d] is no bridge", i, i), e.detail, 1, true)
    end
  end)

  it("number checks show a string quoted", function()
    local city = psdl.city.new {}
    local ok, e = pcall(function() city:road(city:node(0, 0), city:node(100, 0), { bridge = { height = "8" } }) end)
    assert.is_false(ok)
    assert.matches('bridge.height: non-negative number expected, got "8"', e, 1, true)
  end)
end)
