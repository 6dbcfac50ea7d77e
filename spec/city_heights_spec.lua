-- A city's `height` and `terrain` functions are checked where psdl.city calls them
-- (psdl.city.height): a NaN, an infinity or a height beyond 65,536 m names the function's
-- script line, the point and the value, wherever it is asked for (node, via point, a road's
-- centre line on a terrain, block ground, terrain ground); before, such a value surfaced as
-- `bad argument #1 to 'intersection'` or `vertices_flat`, as a vertex-budget error, or built
-- a city at y = 1e9 (newcomer finding F14).

local psdl = require "psdl"
local H = require "helper"

-- The triangle city of psdl.city's usage, its height (or terrain) function `fn`.
local function triangle(opt, fn, blocks)
  local city = psdl.city.new { [opt] = fn }
  local a, b, c = city:node(0, 0), city:node(240, 0), city:node(240, 180)
  city:road(a, b); city:road(b, c); city:road(c, a)
  if blocks ~= false then city:blocks {} end
  return city
end

local LINE = debug.getinfo(1, "S").short_src

describe("psdl.city height functions", function()
  it("refuse NaN, infinities and huge heights at a node, naming the function's line, the point and the value", function()
    for _, opt in ipairs { "height", "terrain" } do
      for _, c in ipairs { { 0 / 0, "nan" }, { math.huge, "inf" }, { -math.huge, "-inf" }, { 1e9, "1000000000" },
                           { -1e30, "-1e+30" }, { "5", '"5"' } } do
        local fline = debug.getinfo(1, "l").currentline + 1
        local fn = function(x) return x > 100 and c[1] or 0 end
        local city = triangle(opt, fn)
        local ok, err = pcall(city.build, city)
        assert.is_false(ok)
        assert.matches(string.format("%s:%d: the %s function gave %s at (x, z) = (240.00, 0.00): a height must be a "
          .. "finite number within +-65536 m", LINE, fline, opt, c[2]), err, 1, true)
        assert.not_matches("intersection", err)
        assert.not_matches("vertices", err)
      end
    end
  end)

  it("refuse a bad height away from the nodes: block ground, a road on a terrain, terrain ground", function()
    -- inside the triangle only: the nodes are fine, the blocks (or the terrain) ask there
    local function inside(x, z) return (x > 60 and x < 200 and z > 20 and z < 100) and 0 / 0 or 0 end
    for _, opt in ipairs { "height", "terrain" } do
      local ok, err = pcall(function() return triangle(opt, inside):build() end)
      assert.is_false(ok)
      assert.matches("the " .. opt .. " function gave nan at (x, z) = (", err, 1, true)
      assert.not_matches("^blocks: ", err)
      assert.not_matches("^terrain: ", err)
    end
    -- on a road's centre line between the nodes (a terrain drapes the roads on the ground)
    local ok, err = pcall(function()
      return triangle("terrain", function(x, z) return (x > 100 and x < 140 and z < 1) and 1e6 or 0 end, false):build()
    end)
    assert.is_false(ok)
    assert.matches("the terrain function gave 1000000 at (x, z) = (1", err, 1, true)
    -- at a via point without a height
    local city = psdl.city.new { height = function(x) return x == 120 and -1e7 or 0 end, blocks = false }
    local a, b = city:node(0, 0), city:node(240, 0)
    city:road(a, b, { via = { { 120, -10 } } })
    ok, err = pcall(city.build, city)
    assert.is_false(ok)
    assert.matches("gave -10000000 at (x, z) = (120.00, -10.00)", err, 1, true)
  end)

  it("name the script line of psdl.city.new for a Terrain, whose height method is the library's", function()
    local hs = {}
    for i = 1, 50 * 50 do hs[i] = 0 end
    hs[25 * 50 + 25] = 1e9
    local T = psdl.terrain.from_grid({ rows = 50, cols = 50, heights = hs }, { cell_size = 10 })
    local line = debug.getinfo(1, "l").currentline + 1
    local city = psdl.city.new { terrain = T }
    local a, b, c = city:node(0, 0), city:node(240, 0), city:node(240, 180)
    city:road(a, b); city:road(b, c); city:road(c, a)
    local ok, err = pcall(city.build, city)
    assert.is_false(ok)
    assert.matches(string.format("%s:%d: the terrain's height gave 1000000000 at (x, z) = (240.00, 250.00)", LINE, line),
      err, 1, true)
  end)

  it("keep nil (no height here) and heights within the limit", function()
    local _, rep0 = triangle("height", function() return nil end):build()
    assert.equal(0, rep0.counts.errors)
    local hill = triangle("height", function(x, z) return (x + z) * 0.02 + 65000 end)
    local _, rep = hill:build()
    assert.equal(0, rep.counts.errors)
  end)

  it("psdl build names the script line in a sandboxed script, for a function and for a Terrain", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/h.lua", table.concat({
      "local city = psdl.city.new{ height = function(x, z)",
      "  return x > 100 and 0 / 0 or 0",
      "end }",
      "local a, b, c = city:node(0, 0), city:node(240, 0), city:node(240, 180)",
      "city:road(a, b); city:road(b, c); city:road(c, a)",
      "return city",
    }, "\n"))
    local code, _, err = H.cli("build", dir .. "/h.lua", "-o", dir .. "/h.psdl")
    assert.equal(2, code)
    assert.matches("h.lua:1: the height function gave nan at (x, z) = (240.00, 0.00)", err, 1, true)
    H.write_bytes(dir .. "/t.lua", table.concat({
      "local hs = {}",
      "for i = 1, 2500 do hs[i] = 0 end",
      "hs[1275] = 1e9",
      "local T = psdl.terrain.from_grid({ rows = 50, cols = 50, heights = hs }, { cell_size = 10 })",
      "local city = psdl.city.new{ terrain = T }",
      "local a, b, c = city:node(0, 0), city:node(240, 0), city:node(240, 180)",
      "city:road(a, b); city:road(b, c); city:road(c, a)",
      "return city",
    }, "\n"))
    code, _, err = H.cli("build", dir .. "/t.lua", "-o", dir .. "/t.psdl")
    assert.equal(2, code)
    assert.matches("t.lua:5: the terrain's height gave 1000000000", err, 1, true)
    assert.is_nil(io.open(dir .. "/t.psdl"))
  end)
end)

describe("a road steeper than psdl.city.height.MAX_GRADE", function()
  -- before: a 100 m road climbing from y = 65,000 to -65,000 (both within the limit) failed
  -- in the blocks with "a block of 332 boundary points near (41.2, -15.7) cannot be cut into
  -- rooms of at most 255 perimeter points", naming neither the road nor the climb
  it("is refused before anything is built, naming the road's line, the rise, the length, the grade and the fix", function()
    local city = psdl.city.new { max_extent = false }
    local a, b = city:node(0, 0, { y = 65000 }), city:node(100, 0, { y = -65000 })
    local line = debug.getinfo(1, "l").currentline + 1
    city:road(a, b)
    local ok, err = pcall(city.build, city)
    assert.is_false(ok)
    assert.equal(string.format("%s:%d: road 1: climbs 130000.0 m over 100.0 m of road between node 1 (y = 65000) and "
      .. "node 2 (y = -65000): a grade of 130000 %%, steeper than any road is driven (at most 100 %%, "
      .. "psdl.city.height.MAX_GRADE); give those points heights closer together, or make the road longer between "
      .. "them (via points)", LINE, line), err)
    assert.not_matches("cannot be cut", err, 1, true)
  end)

  it("names the via point and a height the city's function gave; a 100 % grade still builds", function()
    local city = psdl.city.new { blocks = false, height = function(x) return x >= 300 and 250 or 0 end }
    local a, b = city:node(0, 0), city:node(400, 0)
    city:road(a, b, { via = { { 100, 0, 0 }, { 200, 0 } } })
    local ok, err = pcall(city.build, city)
    assert.is_false(ok)
    -- the via point without y lies below 300: the function gave it 0; 250 m over the last 200 m
    assert.matches("road 1: climbs 250.0 m over 200.0 m of road between via[2] (y = 0) and node 2 (y = 250, from the "
      .. "height function): a grade of 125 %", err, 1, true)
    local steep = psdl.city.new { blocks = false }
    steep:road(steep:node(0, 0, { y = 0 }), steep:node(200, 0, { y = 200 }))
    assert.is_true(#steep:build().rooms > 0)
  end)
end)
