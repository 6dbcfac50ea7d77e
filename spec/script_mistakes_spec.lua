-- A script's mistakes refused at the call (newcomer findings 0b, 0c, 3, 4, 5 of 2026-12-02):
-- options only the build read (a road's divider and textures, new's dead_end, style, props,
-- radius, a node's name and id, `oneway`) raised inside the build, where psdl.city.repair took
-- them for geometric limits and narrowed or dropped the road (exit 0); now each raises
-- "bad argument #n to 'fn' (field: ...)" at the script line. Also: tiny bridge/tunnel ramps
-- (NaN heights before), `Builder:height` out of range, dot-calls and `psdl.city.summary`.

local psdl = require "psdl"
local H = require "helper"
local city_mod = psdl.city

-- The error of f, which must fail (spec/helper.lua err_of, its message only).
local function fails(f) return (H.err_of(f)) end

-- Runs each case {opts, text} through call(opts) and checks the message names the line of
-- `call` (where it calls fname), `fname`, argument n and the text.
local function refused(cases, n, fname, call)
  local line = debug.getinfo(call, "S").linedefined -- (the line that calls fname)
  for _, c in ipairs(cases) do
    local ok, err = pcall(call, c[1])
    assert.is_false(ok, "accepted: " .. c[2])
    err = tostring(err)
    local want = "script_mistakes_spec.lua:" .. line .. ": bad argument #" .. n .. " to '" .. fname .. "' (" .. c[2]
    assert.is_truthy(err:find(want, 1, true), "\nwanted: " .. want .. "\ngot:    " .. err)
  end
end

describe("city:road options checked at the call", function()
  it("refuses a bad divider, divider textures, textures, name, oneway, prop theme or profile key", function()
    local city = city_mod.new{ blocks = false }
    local a, b = city:node(0, 0), city:node(300, 0)
    refused({
      { { profile = "avenue", divider = "elevatd" },
        "divider: unknown divider 'elevatd' (elevated, flat, invisible, none, wedge, or a type number 0..63)" },
      { { profile = "avenue", divider = 64 }, "divider: integer in 0..63 expected, got 64" },
      { { profile = "avenue", divider_textures = { side = "a", strip = "b", top = "c" } },
        "divider_textures.cap: a texture name expected, got nil" },
      { { profile = "avenue", divider_height = 300 }, "divider_height: non-negative number in 0..255.99 expected" },
      { { textures = 12 }, "textures: a key of the style, a style entry or a texture name expected, got 12" },
      { { textures = "nonexistent_tex_name_that_is_way_too_long_xx" },
        "textures: texture name \"nonexistent_tex_name_that_is_way_too_long_xx\" has 44 characters; texture names "
        .. "have 1..31" },
      { { textures = { surface = "r4_l", sidewalk = "", lod = "r4_lo_l" } },
        "textures.sidewalk: texture name \"\" has 0 characters" },
      { { profile = "alley", textures = {} }, "textures: a texture name expected, got nil" },
      { { name = 12 }, "name: a string expected, got 12" },
      { { oneway = "no" }, "oneway: true or false expected, got \"no\"" },
      { { oneway = 1 }, "oneway: true or false expected, got 1" },
      { { prop_rule = "parkk" }, "prop_rule: unknown prop theme \"parkk\" (banners, " },
      { { prop_rule = { "park", 3.5 } }, "prop_rule[2]: prop rule 3.5: a whole number 0..255 expected" },
      { { profile = { kind = "road", lane = 3 } }, "profile: unknown option 'lane' (a profile has kind, lanes, " },
      { { style = {} }, "style.road: a key of the style, a style entry or a texture name expected, got nil" },
    }, 3, "road", function(o) city:road(a, b, o) end)
    assert.equal(0, #city.roads)
  end)

  it("still takes every documented form", function()
    local city = city_mod.new{ blocks = false, props = { street = "park", avenue = { "downtown", "high_street" } } }
    local n = {}
    for i = 1, 8 do n[i] = city:node(400 * i, 0, { name = "n" .. i, id = i == 1 and "first" or i }) end
    city:road("first", 2, { profile = "avenue", divider = "none", name = "Main" })
    city:road(2, 3, { profile = "avenue", divider = 1, divider_textures = "planted", divider_repeats = 4 })
    city:road(3, 4, { textures = "lanes4", oneway = false, prop_rule = "park" })
    city:road(4, 5, { textures = "r2_l", oneway = true, prop_rule = { "chinatown", 7 } })
    city:road(5, 6, { style = setmetatable({}, { __index = require "psdl.styles.sf" }) })
    city:road(6, 7, { profile = { kind = "divided", lanes = 4, median = 2, divider = "wedge", name = "mine" } })
    city:road(7, 8, { profile = "alley", textures = "r_alley" })
    assert.equal(7, #city.roads)
  end)

  it("is refused by psdl build with exit 2 and nothing written (before: the road dropped, exit 0)", function()
    local dir = H.tmpdir(finally)
    local s = dir .. "/typo.lua"
    H.write_bytes(s, table.concat({
      "local city = psdl.city.new{}",
      "local a, b, c = city:node(0, 0), city:node(300, 0), city:node(300, 300)",
      "city:road(a, b)",
      "city:road(b, c, { profile = 'avenue', divider = 'elevatd' })",
      "return city" }, "\n"))
    local code, _, err = H.cli("build", s, "-o", dir .. "/t.psdl")
    assert.equal(2, code)
    assert.matches("typo.lua:4: bad argument #3 to 'road' (divider: unknown divider 'elevatd'", err, 1, true)
    assert.is_nil(io.open(dir .. "/t.psdl"))
  end)
end)

describe("psdl.city.new options checked at the call", function()
  it("refuses dead_end, style, props, radius, name, flags, blocks, package and profile tables", function()
    refused({
      { { dead_end = "opne" }, "dead_end: \"cul_de_sac\" or \"open\" expected, got \"opne\"" },
      { { style = {} }, "style.road: a key of the style, a style entry or a texture name expected, got nil" },
      { { style = { road = "r2_l", intersection = "rinter_l", divider = "s_grass" } },
        "style.alley: a table with the alley's surface expected, got nil" },
      { { props = "zzz" }, "props: false, a table (profile name -> rule number, theme name or list of theme names)" },
      { { props = { street = "residental" } }, "props.street: unknown prop theme \"residental\" (" },
      { { props = { street = 300 } }, "props.street: prop rule 300: a whole number 0..255 expected" },
      { { radius = 1e5 }, "radius (m): non-negative number in 0..100 expected, got 100000" },
      { { radius = -1 }, "radius: a number >= 0 expected, got -1" },
      { { name = 5 }, "name: a string expected, got 5" },
      { { strict = "yes" }, "strict: true or false expected, got \"yes\"" },
      { { auto_junctions = 1 }, "auto_junctions: true or false expected, got 1" },
      { { run_rooms = "no" }, "run_rooms: true or false expected, got \"no\"" },
      { { blocks = { buildings = true } }, "blocks: false (no blocks) or true expected, got table" },
      { { package = "x" }, "package: a table of psdl package settings expected, got \"x\"" },
      { { profiles = 5 }, "profiles: a table of profile name -> profile table expected, got 5" },
      { { profiles = { wide = { kind = "road", lanse = 3 } } }, "profiles.wide: unknown option 'lanse'" },
      { { profiles = { wide = { kind = "divided", divider = "x" } } }, "profiles.wide: divider: unknown divider 'x'" },
      { { profiles = { wide = { kind = "road", props = "nope" } } }, "profiles.wide: props: unknown prop theme \"nope\"" },
      { { profiles = { wide = { kind = "road", oneway = "yes" } } }, "profiles.wide: oneway: true or false expected" },
    }, 1, "new", function(o) city_mod.new(o) end)
  end)

  it("still takes every documented form", function()
    local sf_like = setmetatable({ roofs = { "s_concrt" } }, { __index = require "psdl.styles.sf" })
    for _, o in ipairs({
      { dead_end = "open", radius = 100, name = "x", strict = false, auto_junctions = true, run_rooms = false },
      { style = sf_like, props = false, blocks = false, package = { name = "x" } },
      { props = function() return 3 end, blocks = true, profiles = { wide = { kind = "road", lanes = 4, name = "w" } } },
    }) do
      assert.equal(city_mod.City, getmetatable(city_mod.new(o)))
    end
  end)
end)

describe("city:blocks texture names checked at the call", function()
  it("refuses a name over 31 characters (before: the blocks failed in an internal call, naming no line)", function()
    local city = city_mod.new{}
    local long = "x_way_too_long_texture_name_over_31"
    refused({
      { { buildings = { roofs = { long } } }, "buildings.roofs[1]: texture name \"" .. long .. "\" has 35 characters" },
      { { buildings = { ground_floor = long } }, "buildings.ground_floor: texture name \"" .. long .. "\" has 35" },
      { { buildings = { sliver = "" } }, "buildings.sliver: texture name \"\" has 0 characters" },
      { { overrides = { { point = { 0, 0 }, texture = long } } }, "overrides[1].texture: texture name \"" .. long },
    }, 1, "blocks", function(o) city:blocks(o) end)
  end)
end)

describe("city:node options checked at the call", function()
  it("refuses a bad name, id, flag, dead_end, radius, min_distance, textures or tunnel", function()
    local city = city_mod.new{}
    refused({
      { { name = 5 }, "name: a string expected, got 5" },
      { { id = {} }, "id: a string or an integer expected, got table" },
      { { id = 1.5 }, "id: a string or an integer expected, got 1.5" },
      { { junction = "yes" }, "junction: true or false expected, got \"yes\"" },
      { { bridge = 1 }, "bridge: true or false expected, got 1" },
      { { dead_end = "x" }, "dead_end: \"cul_de_sac\" or \"open\" expected, got \"x\"" },
      { { radius = -1 }, "radius (m): non-negative number expected, got -1" },
      { { min_distance = 0 / 0 }, "min_distance (m): finite number expected, got nan" },
      { { textures = 5 }, "textures: a key of the style, a style entry or a texture name expected, got 5" },
      { { textures = { surface = "a", sidewalk = "b", lod = "c" } }, "textures.crosswalk: a texture name expected" },
      { { tunnel = "deep" }, "tunnel: true, false or a table {height, height2, textures, walls} expected" },
    }, 3, "node", function(o) city:node(10, 10, o) end)
    assert.equal(0, #city.nodes)
    city:node(0, 0, { id = "a", name = "A", junction = true, dead_end = "open", radius = 7, textures = "rinter_l" })
    city:node(9, 0, { id = 7, textures = "default", tunnel = { height = 6 } })
    assert.equal(2, #city.nodes)
  end)
end)

describe("tiny bridge and tunnel ramps", function()
  -- before: a ramp under half a metre snapped to the end point and divided 0 by 0: NaN
  -- heights, "bad argument #1 to 'street' (center[1]: y is not a finite number)"
  local function bytes(part)
    local city = city_mod.new{}
    local a, b = city:node(0, 0), city:node(300, 0)
    city:road(a, b, part)
    return psdl.encode((city:build()))
  end
  it("build as ramp = 0 does (the same bytes)", function()
    local zero_b, zero_t = bytes({ bridge = { ramp = 0 } }), bytes({ tunnel = { ramp = 0 } })
    for _, r in ipairs({ 1e-9, 0.001, 0.49 }) do
      assert.equal(zero_b, bytes({ bridge = { ramp = r } }))
      assert.equal(zero_t, bytes({ tunnel = { ramp = r } }))
    end
    assert.are_not.equal(zero_b, bytes({ bridge = { ramp = 30 } }))
  end)
end)

describe("builder and summary calls", function()
  it("Builder:height refuses a height beyond +-65,536 m at the call (before: only finish, without a line)", function()
    local b = psdl.builder.new()
    local line = debug.getinfo(1, "l").currentline + 1
    local err = fails(function() b:height(1e300) end)
    assert.matches("script_mistakes_spec.lua:" .. line .. ": bad argument #1 to 'height' (h: finite number in "
      .. "-65536..65536 expected, got 1e+300", err, 1, true)
    assert.equal(1, b:height(65536))
    assert.equal(2, b:height(-65536))
  end)

  it("dot-calls of finish, point and room name the script line, not psdlkit's files", function()
    local b = psdl.builder.new()
    for _, m in ipairs({ "finish", "point", "room" }) do
      local line = debug.getinfo(1, "l").currentline + 1
      local err = fails(function() b[m]() end)
      assert.equal(string.format("%s:%d: calling '%s' on bad self (Builder expected, got nil)",
        debug.getinfo(1, "S").short_src, line, m), err)
    end
  end)

  it("psdl.city.summary refuses what is no report", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local err = fails(function() city_mod.summary({}) end)
    assert.matches("script_mistakes_spec.lua:" .. line .. ": bad argument #1 to 'summary' (the report of City:build "
      .. "expected, got a table without its kinds)", err, 1, true)
    assert.matches("bad argument #1 to 'summary' (the report of City:build expected, got nil)",
      fails(function() city_mod.summary(nil) end), 1, true)
    assert.matches("bad argument #2 to 'summary' (string expected, got number)",
      fails(function() city_mod.summary({ kinds = {} }, 5) end), 1, true)
  end)
end)
