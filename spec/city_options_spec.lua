-- City options checked at the call (a newcomer's findings F1-F3, F6): tunnel and bridge
-- tables of `city:road`, the whole options table of `city:blocks`, the seed of
-- `psdl.city.new` and the type of `city:node`'s coordinates; each refused with
-- "bad argument #n to 'fn' (field: ...)" at the script's line, before anything is built.

local psdl = require "psdl"
local H = require "helper"
local city_mod = psdl.city

-- The error of f, which must fail (spec/helper.lua err_of, its message only).
local function fails(f) return (H.err_of(f)) end

-- The corner city of the README (three roads), blocks not yet given.
local function corner()
  local city = city_mod.new{ style = "london", seed = 7, name = "corner" }
  local a, b, c = city:node(0, 0), city:node(200, 0), city:node(200, 150)
  city:road(a, b, { profile = "avenue" })
  city:road(b, c)
  city:road(a, c, { via = { { 60, 120 } } })
  return city
end

describe("city:road tunnel and bridge options", function()
  local city, a, b
  before_each(function()
    city = city_mod.new{ blocks = false }
    a, b = city:node(0, 0), city:node(400, 0)
  end)

  it("refuses negative, NaN and absurd heights, depths and ramps at the script line", function()
    -- before: 1e6 m decks and bores built and validated; NaN dropped the road later as
    -- "narrowed"; negative depths made a "tunnel" above the ground
    local cases = {
      { { bridge = { height = 1e6 } }, "bridge.height: non%-negative number in 0..100 expected, got 1000000" },
      { { bridge = { height = -8 } }, "bridge.height: non%-negative number expected, got %-8" },
      { { bridge = { height = 0 / 0 } }, "bridge.height: finite number expected, got nan" },
      { { tunnel = { depth = 1e6 } }, "tunnel.depth: non%-negative number in 0..100 expected" },
      { { tunnel = { depth = -9 } }, "tunnel.depth: non%-negative number expected, got %-9" },
      { { tunnel = { depth = 0 / 0 } }, "tunnel.depth: finite number expected, got nan" },
      { { tunnel = { ramp = 0 / 0 } }, "tunnel.ramp: finite number expected, got nan" },
      { { bridge = { ramp = -1 } }, "bridge.ramp: non%-negative number expected" },
      { { bridge = { ramp = 1e9 } }, "bridge.ramp: non%-negative number in 0..65536 expected" },
      { { bridge = { height = "8" } }, "bridge.height: non%-negative number expected, got \"8\"" },
      { { tunnel = { height = -1 } }, "tunnel.height: non%-negative number expected" },
      { { bridge = { railing_height = 1 / 0 } }, "bridge.railing_height: finite number expected, got inf" },
      { { tunnel = { dpeth = 9 } }, "tunnel: unknown option 'dpeth'" },
      { { bridge = { depth = 9 } }, "bridge: unknown option 'depth'" },
    }
    for _, c in ipairs(cases) do
      local line = debug.getinfo(1, "l").currentline + 1
      local err = fails(function() city:road(a, b, c[1]) end)
      assert.matches("city_options_spec.lua:" .. line .. ": bad argument #3 to 'road' %(" .. c[2], err)
    end
    assert.equal(0, #city.roads)
  end)

  it("still takes the documented values and the bounds themselves", function()
    city:road(a, b, { bridge = { height = 8, ramp = 60 } })
    city:road(city:node(0, 100), city:node(400, 100), { tunnel = { depth = 9, ramp = 60, ceiling = "curved" } })
    city:road(city:node(0, 200), city:node(400, 200), { bridge = { height = 0 } })
    city:road(city:node(0, 300), city:node(800, 300), { bridge = { height = city_mod.MAX_LEVEL, ramp = 250 } })
    assert.equal(4, #city.roads)
    assert.equal(100, city_mod.MAX_LEVEL)
    -- an OSM layer far up gets the highest deck, not a refused road
    assert.equal(100, require("psdl.city.tunnel").deck_height(40))
    assert.equal(15, require("psdl.city.tunnel").deck_height(2))
  end)

  it("bounds node and via heights like x and z", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local err = fails(function() city:node(5, 5, { y = 1e6 }) end)
    assert.matches("city_options_spec.lua:" .. line .. ": bad argument #3 to 'node' %(y: finite number in "
      .. "%-65536..65536 expected, got 1000000%)", err)
    err = fails(function() city:node(5, 5, { y = 1 / 0 }) end)
    assert.matches("y: finite number expected, got inf", err, 1, true)
    err = fails(function() city:road(a, b, { via = { { 100, 10, -1e5 } } }) end)
    assert.matches("via[1]: (100, 10, y -100000) lies too far out", err, 1, true)
  end)
end)

describe("a road's crosswalk and the city's max_angle and arc_step", function()
  it("are refused at the script line with the field and the allowed range", function()
    -- before: psdl.city passed them on and the builder refused them deep in the build, where
    -- the repairs dropped the road (crosswalk) or every road (arc_step) with the builder's words
    local city = city_mod.new{ blocks = false }
    local a, b = city:node(0, 0), city:node(400, 0)
    for _, cw in ipairs { -1, 101, 1e9, 0 / 0, "3", true } do
      local line = debug.getinfo(1, "l").currentline + 1
      local err = fails(function() city:road(a, b, { crosswalk = cw }) end)
      assert.matches("city_options_spec.lua:" .. line .. ": bad argument #3 to 'road' (crosswalk: false or a number in "
        .. "0..100 (metres, the crosswalk's depth", err, 1, true)
    end
    -- a profile's own crosswalk, too (refused by new, which checks each profile of its table)
    local err = fails(function() city_mod.new{ profiles = { wide = { kind = "road", crosswalk = -2 } } } end)
    assert.matches("bad argument #1 to 'new' (profiles.wide: crosswalk: false or a number in 0..100 (metres", err, 1,
      true)
    assert.matches("got -2)", err, 1, true)
    local cases = {
      { { max_angle = 0 }, "max_angle (degrees): finite number in 0.5..90 expected, got 0; max_angle is the most a road "
        .. "turns between two cross-sections (default 7.5)" },
      { { max_angle = 0 / 0 }, "max_angle (degrees): finite number expected, got nan;" },
      { { max_angle = 1e9 }, "max_angle (degrees): finite number in 0.5..90 expected, got 1000000000;" },
      { { arc_step = 0.5 }, "arc_step (degrees): finite number in 1..90 expected, got 0.5; arc_step is the step of an "
        .. "intersection's curb arcs (default 15)" },
      { { arc_step = -5 }, "arc_step (degrees): finite number in 1..90 expected, got -5;" },
      { { arc_step = "x" }, "arc_step (degrees): finite number expected, got \"x\";" },
    }
    for _, c in ipairs(cases) do
      local line = debug.getinfo(1, "l").currentline + 1
      err = fails(function() city_mod.new(c[1]) end)
      assert.matches("city_options_spec.lua:" .. line .. ": bad argument #1 to 'new' (" .. c[2], err, 1, true)
    end
  end)

  it("still take the documented values and the bounds", function()
    for _, o in ipairs { { max_angle = 0.5 }, { max_angle = 90 }, { arc_step = 1 }, { arc_step = 90 } } do
      local city = city_mod.new(o)
      local hub = city:node(0, 0)
      for i, p in ipairs { { 200, 0 }, { 0, 200 }, { -200, 0 } } do
        city:road(hub, city:node(p[1], p[2]), { crosswalk = ({ false, 0, 100 })[i] })
      end
      local doc = city:build()
      assert.is_true(#doc.rooms > 0)
    end
  end)
end)

describe("city:blocks options", function()
  it("refuses bad values, typos and far-out overrides at the script line", function()
    local cases = {
      -- before: 0 buildings, silently
      { { buildings = { setback = 0 / 0 } }, "buildings.setback: finite number expected, got nan" },
      { { buildings = { depth = 0 / 0 } }, "buildings.depth min: finite number expected, got nan" },
      -- before: ignored
      { { overides = {} }, "unknown option 'overides'" },
      { { bogus = 1 }, "unknown option 'bogus'" },
      { { buildings = { flors = 3 } }, "buildings: unknown option 'flors'" },
      -- before: the park silently not placed
      { { overrides = { { point = { 100, 40 }, park = true }, { point = { 1e9, 5 }, park = true } } },
        "overrides[2].point x: finite number in -65536..65536 expected, got 1000000000" },
      { { overrides = { { point = { 0 / 0, 5 }, park = true } } }, "overrides[1].point x: finite number expected, got nan" },
      { { overrides = { { park = true } } }, "overrides[1].point: {x, z} expected" },
      { { overrides = { { point = { 1, 2 }, prak = true } } }, "overrides[1]: unknown option 'prak'" },
      { { overrides = { { point = { 1, 2 }, buildings = { floors = { 9, 2 } } } } },
        "overrides[1].buildings.floors: 1 <= min <= max <= 1000 expected, got {9, 2}" },
      -- before: the apron silently dropped; 795 rooms
      { { margin = -5 }, "margin: non-negative number expected, got -5" },
      { { room = { max_area = -1 } }, "room.max_area: positive number expected, got -1" },
      { { apron = { step = 0.01 } }, "apron.step: positive number in 0.5.. expected, got 0.01" },
      { { room = { max_points = 2.5 } }, "room.max_points: integer expected, got 2.5" },
      -- before: errors only at build time, without the line
      { { buildings = { floors = { 9, 2 } } }, "buildings.floors: 1 <= min <= max <= 1000 expected, got {9, 2}" },
      { { buildings = { floors = { 1e6, 1e6 } } }, "buildings.floors: 1 <= min <= max <= 1000 expected" },
      { { buildings = { floor_height = 0 } }, "buildings.floor_height: positive number expected, got 0" },
      { { buildings = { facades = 7 } }, "buildings.facades: a set name, a texture name or a list of names expected" },
      { { buildings = "yes" }, "buildings: false, true or a table expected, got string" },
    }
    for _, c in ipairs(cases) do
      local city = corner()
      local line = debug.getinfo(1, "l").currentline + 1
      local err = fails(function() city:blocks(c[1]) end)
      assert.matches("city_options_spec.lua:" .. line .. ": bad argument #1 to 'blocks' (" .. c[2], err, 1, true)
      assert.is_nil(city.block_opts) -- nothing recorded
    end
  end)

  it("takes the README's and the documented options and builds them as before", function()
    local city = corner()
    city:blocks{ buildings = { floors = { 2, 6 }, setback = 2, gap = { 0, 3 }, depth = 12, facades = "upper",
                               ground_floor = true }, margin = 30,
                 overrides = { { point = { 150, 40 }, park = true } }, room = { max_area = 6000 }, apron = { step = 12 } }
    local doc, rep = city:build()
    assert.is_true(#doc.rooms > 0)
    assert.equal(1, rep.blocks.parks) -- (the corner city's one face)
    city = corner()
    city:blocks{ buildings = { floors = { 2, 6 }, setback = 2, depth = { 10, 18 } } }
    _, rep = city:build()
    assert.is_true(rep.blocks.buildings > 0)
    assert.has_no_error(function() corner():blocks{ buildings = true, margin = false } end)
    assert.has_no_error(function() corner():blocks(false) end)
  end)
end)

describe("psdl.city.new and city:node messages", function()
  it("refuses a NaN seed as bad argument #1 to 'new' at the line", function()
    -- before: "seed: a finite number expected" without a line, at build time
    local line = debug.getinfo(1, "l").currentline + 1
    local err = fails(function() city_mod.new{ seed = 0 / 0 } end)
    assert.matches("city_options_spec.lua:" .. line .. ": bad argument #1 to 'new' (seed: an integer, a finite "
      .. "number or a string expected, got nan)", err, 1, true)
    err = fails(function() city_mod.new{ seed = {} } end)
    assert.matches("seed: an integer, a finite number or a string expected, got table", err, 1, true)
    assert.has_no_error(function() city_mod.new{ seed = "abc" } end)
    assert.has_no_error(function() city_mod.new{ seed = 2.5 } end)
  end)

  it("says what city:node got instead of numbers", function()
    local city = city_mod.new{}
    local err = fails(function() city:node("0", 0) end)
    assert.matches("bad argument #1 to 'node' (finite numbers x and z expected, got \"0\" x)", err, 1, true)
    err = fails(function() city:node(0, 0 / 0) end)
    assert.matches("got nan z", err, 1, true)
  end)
end)
