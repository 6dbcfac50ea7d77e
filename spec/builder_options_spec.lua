-- Option tables of psdl.builder and of City:build / City:save: a misspelt key is refused at
-- the caller's line (`bad argument #1 to 'block' (unknown option 'hoels')`), as psdl.city's
-- own calls do, instead of being ignored (newcomer findings F9 and F3).

local builder = require "psdl.builder"
local city_mod = require "psdl.city"

local THIS = "spec/builder_options_spec.lua"
local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
local SQUARE = { { 0, 0, 0 }, { 0, 0, 40 }, { 40, 0, 40 }, { 40, 0, 0 } }

-- The error of f() called from this file, and the line it was called on.
local err_of = require("helper").err_of

local function expect(e, line, method, what, n)
  assert.equal(string.format("%s:%d: bad argument #%d to '%s' (%s)", THIS, line, n or 1, method, what), e)
end

describe("psdl.builder option keys", function()
  it("refuses a misspelt key of new, street, block, intersection, building, room and road_record", function()
    local e, line = err_of(function() local x = builder.new{ stlye = "london" }; return x end)
    expect(e, line, "new", "unknown option 'stlye'")
    local b = builder.new{ style = "sf" }
    e, line = err_of(function() local x = b:street{ path = { { 0, 0, 0 }, { 100, 0, 0 } }, spacng = 1 }; return x end)
    expect(e, line, "street", "unknown option 'spacng'")
    e, line = err_of(function() local x = b:block{ outline = SQUARE, hoels = { { { 10, 0, 10 }, { 20, 0, 10 }, { 20, 0, 20 } } } }; return x end)
    expect(e, line, "block", "unknown option 'hoels'")
    e, line = err_of(function() local x = b:block{ outline = SQUARE, room = { knd = "road" } }; return x end)
    expect(e, line, "block", "room: unknown option 'knd'")
    e, line = err_of(function()
      local x = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, { dir = { -1, 0 } } }, raduis = 50 }; return x
    end)
    expect(e, line + 1, "intersection", "unknown option 'raduis'")
    e, line = err_of(function()
      local x = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, { dir = { -1, 0 }, crosswlak = 2 } } }; return x
    end)
    expect(e, line + 1, "intersection", "arms[2]: unknown option 'crosswlak'")
    e, line = err_of(function() local x = b:room{ knd = "block" }; return x end)
    expect(e, line, "room", "unknown option 'knd'")
    local r = b:block{ outline = SQUARE }
    e, line = err_of(function()
      local x = b:building(r, { outline = { { 10, 0, 10 }, { 10, 0, 20 }, { 20, 0, 20 }, { 20, 0, 10 } }, flors = 9 }); return x
    end)
    expect(e, line + 1, "building", "unknown option 'flors'", 2)
    local rooms = b:street{ path = { { 100, 0, 0 }, { 200, 0, 0 } }, profile = STREET }
    e, line = err_of(function() local x = b:road_record{ rooms = rooms, lanes_lfet = { 0.5 } }; return x end)
    expect(e, line, "road_record", "unknown option 'lanes_lfet'")
  end)

  it("refuses a misspelt profile key, in a street and in an arm", function()
    local b = builder.new{ style = "sf" }
    local p = { kind = "road", left = 5, right = 5, sidewalk_lfet = 3 }
    local e, line = err_of(function() local x = b:street{ path = { { 0, 0, 0 }, { 100, 0, 0 } }, profile = p }; return x end)
    expect(e, line, "street", "profile: unknown option 'sidewalk_lfet'")
    e, line = err_of(function()
      local x = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = p }, { dir = { -1, 0 } } } }; return x
    end)
    expect(e, line + 1, "intersection", "arms[1].profile: unknown option 'sidewalk_lfet'")
  end)

  it("a refused call builds nothing: the bytes equal a builder that never saw it", function()
    local psdl = require "psdl"
    local a = builder.new{ style = "sf" }
    a:block{ outline = SQUARE }
    local b = builder.new{ style = "sf" }
    assert.is_false((pcall(b.block, b, { outline = SQUARE, hoels = {} })))
    b:block{ outline = SQUARE }
    assert.equal(psdl.encode(a:finish()), psdl.encode(b:finish()))
  end)

  it("checks finish's options", function()
    local b = builder.new{ style = "sf" }
    b:block{ outline = SQUARE }
    local e, line = err_of(function() local x = b:finish{ order = "whatever" }; return x end)
    expect(e, line, "finish", "order: \"blocks_first\" or nil expected, got \"whatever\"")
    e, line = err_of(function() local x = b:finish{ strcit = false }; return x end)
    expect(e, line, "finish", "unknown option 'strcit'")
    e, line = err_of(function() local x = b:finish("x"); return x end)
    expect(e, line, "finish", "table expected, got string")
    assert.is_table((b:finish{ order = "blocks_first", strict = true }))
  end)
end)

describe("City:build and City:save options", function()
  local function city()
    local c = city_mod.new{ style = "sf" }
    local a, b = c:node(0, 0), c:node(100, 0)
    c:road(a, b)
    return c
  end

  it("refuses unknown keys and a bad seed at the script line", function()
    local c = city()
    local e, line = err_of(function() local x = c:build{ sede = 3 }; return x end)
    expect(e, line, "build", "unknown option 'sede'")
    e, line = err_of(function() local x = c:build{ seed = 0 / 0 }; return x end)
    assert.truthy(e:find(THIS .. ":" .. line .. ": bad argument #1 to 'build' (seed: ", 1, true), e)
    e, line = err_of(function() local x = c:build{ seed = {} }; return x end)
    expect(e, line, "build", "seed: an integer, a finite number or a string expected, got table")
    e, line = err_of(function() local x = c:save("/nonexistent/x.psdl", { strcit = true }); return x end)
    expect(e, line, "save", "unknown option 'strcit'", 2)
    e, line = err_of(function() local x = c:save("/nonexistent/x.psdl", { seed = {} }); return x end)
    expect(e, line, "save", "seed: an integer, a finite number or a string expected, got table", 2)
    assert.is_table((c:build{ seed = 3, strict = false, gc_pause = false }))
  end)
end)
