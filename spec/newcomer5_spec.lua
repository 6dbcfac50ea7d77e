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

describe("builder and city limits (newcomer 5: F3, F10, F8)", function()
  it("a vertex budget above what a PSDL can reference is refused; a budget of one's own is not called the game's", function()
    local ok, e = pcall(function() return psdl.builder.new { vertex_budget = 200000 } end)
    assert.is_false(ok)
    assert.matches("vertex_budget: integer in 1..65536 expected, got 200000", e, 1, true)
    local b = psdl.builder.new { vertex_budget = 100 }
    ok, e = pcall(function() b:street { path = { { 0, 0, 0 }, { 0, 0, 400 } } } end)
    assert.is_false(ok)
    assert.matches("above this builder's vertex_budget of 100 (psdl.builder.new{vertex_budget}; the game's own limit "
      .. "is 65024", e, 1, true)
    assert.not_matches("collision vertices would overflow", e, 1, true)
  end)

  it("a budget lifted (VERTEX_BUDGET = math.huge) gives the format's limit in words when the city is validated", function()
    local saved = psdl.builder.VERTEX_BUDGET
    psdl.builder.VERTEX_BUDGET = math.huge
    local ok, e = pcall(function()
      local b = psdl.builder.new {}
      b:street { path = { { 0, 0, 0 }, { 0, 0, 20000 } }, spacing = 1 }
      return b:finish { strict = false }
    end)
    psdl.builder.VERTEX_BUDGET = saved
    assert.is_false(ok)
    assert.matches("vertices: a PSDL holds at most 65536 (16-bit references, §3.2)", e, 1, true)
    assert.not_matches("encodable", e, 1, true)
  end)

  it("buildings taller than 3,500 m are refused at city:blocks", function()
    local c = psdl.city.new {}
    local ok, e = pcall(function() c:blocks { buildings = { floors = 1000, floor_height = 1000 } } end)
    assert.is_false(ok)
    assert.matches("buildings.floors x floor_height: 1000 floors of 1000 m make 1000000 m, taller than any building "
      .. "(at most 3500 m, psdl.city.MAX_BUILDING_HEIGHT)", e, 1, true)
    assert.equal(psdl.city.MAX_BUILDING_HEIGHT, require("psdl.city.blocks.options").MAX_HEIGHT)
    assert.has_no_error(function() c:blocks { buildings = { floors = 1000 } } end) -- 3.5 km: the limit itself
  end)

  it("psdl.city.new shows NaN as nan and says spacing's real minimum", function()
    local ok, e = pcall(psdl.city.new, { spacing = -(0 / 0) })
    assert.is_false(ok)
    assert.matches("spacing: a number >= 0.5 expected, got nan", e, 1, true)
    ok, e = pcall(psdl.city.new, { radius = 0 / 0 })
    assert.matches("radius: a number >= 0 expected, got nan", e, 1, true)
    local c = psdl.city.new {}
    ok, e = pcall(function() c:road(c:node(0, 0), c:node(100, 0), { lanes = -(0 / 0) }) end)
    assert.matches("lanes: a whole number >= 1 expected, got nan", e, 1, true)
  end)

  it("Builder:overlaps says that ends are missing instead of 'integer in 1..0'", function()
    local b = psdl.builder.new {}
    local ok, e = pcall(function() return b:overlaps({ { 2, 3, 4 } }, { 5 }, {}) end)
    assert.is_false(ok)
    assert.matches("bad argument #3 to 'overlaps' (ends: two end-node owner numbers per owner expected", e, 1, true)
  end)
end)
