-- Argument errors (lua/psdl/check.lua): misuse raises naming the script's line and the bad
-- field, however deep in the library the check sits; library code that words an error itself
-- (a road, a node, a stage) catches it with `check.pcall`, which leaves no `file.lua:N:`
-- position to strip.
local psdl = require "psdl"
local builder = require "psdl.builder"
local check = require "psdl.check"
local city_mod = require "psdl.city"
local retexture = require "psdl.retexture"

local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
local BAD_STREET = { path = { { 0, 0, 0 }, { 0, 0, 0 / 0 } }, profile = STREET }

-- a chunk as a user's script: its messages name "scripts/mine.lua:N"
local function script(src)
  return assert(load(src, "=scripts/mine.lua"))
end

-- true when msg names a line of a library file (lua/psdl/...)
local function names_library(msg)
  return msg:find("psdl/[%w_/]+%.lua:%d+") ~= nil
end

describe("psdl.check", function()
  it("check.pcall: the builder's argument errors carry no position there, and do again after it", function()
    local b = builder.new()
    local ok, err = check.pcall(b.street, b, BAD_STREET)
    assert.is_false(ok)
    assert.matches("^bad argument #1 to 'street' %(path%[2%]: z is not a finite number%)$", err)
    -- plain pcall: the first caller outside the library is pcall itself (no line)
    ok, err = pcall(b.street, b, BAD_STREET)
    assert.is_false(ok)
    assert.matches("^bad argument #1 to 'street' %(path%[2%]", err)
    -- after a caught error the count is back: a script's call names its line again
    ok, err = pcall(script("local b, o = ...\nb:street(o)"), b, BAD_STREET)
    assert.is_false(ok)
    assert.matches("^scripts/mine%.lua:2: bad argument #1 to 'street' %(path%[2%]: z is not a finite number%)$", err)
    -- results pass through
    assert.same({ true, 1, 2 }, { check.pcall(function() return 1, 2 end) })
  end)

  it("check.pcall in one coroutine leaves the errors of another with their position", function()
    local b = builder.new()
    local co = coroutine.wrap(function()
      return check.pcall(function()
        coroutine.yield()
        return 1
      end)
    end)
    co() -- suspended inside check.pcall
    local ok, err = pcall(script("local b, o = ...\nb:street(o)"), b, BAD_STREET)
    assert.is_false(ok)
    assert.matches("^scripts/mine%.lua:2: bad argument #1 to 'street'", err)
    assert.same({ true, 1 }, { co() })
  end)

  it("city misuse names the script line and the field; nodes and roads remember their line", function()
    local city = city_mod.new{ blocks = false }
    local a = script("local c = ...\n\nlocal n = c:node(0, 0)\nreturn n")(city)
    assert.equal("scripts/mine.lua:3", a.where)
    local ok, err = pcall(script("local c = ...\nc:node(1, 2, { y = 'x' })"), city)
    assert.is_false(ok)
    assert.equal("scripts/mine.lua:2: bad argument #3 to 'node' (y: finite number expected, got \"x\")", err)
    -- the check sits two functions deep (City:road, City:resolve_node): still the script's line
    ok, err = pcall(script("local c = ...\n\nc:road(1, 99)"), city)
    assert.is_false(ok)
    assert.equal("scripts/mine.lua:3: bad argument #2 to 'road' (a node of this city (or its id) expected, got 99)", err)
    ok, err = pcall(script("local c = ...\nc:road(1, c:node(50, 0), { via = { { 10, 0 / 0 } } })"), city)
    assert.is_false(ok)
    assert.equal("scripts/mine.lua:2: bad argument #3 to 'road' (via[1][2]: finite number expected, got nan)", err)
  end)

  it("a road the builder refuses is named with its script line, no library line in the message", function()
    local city = city_mod.new{ blocks = false, strict = true }
    script([[
local c = ...
local a, b = c:node(0, 0), c:node(300, 0)
c:road(a, b, { profile = "freeway", via = { { 150, 60 }, { 152, 0 }, { 154, 60 } } })
]])(city)
    local ok, err = pcall(city.build, city)
    assert.is_false(ok)
    assert.matches("^scripts/mine%.lua:3: road 1: room %d+ %(\"road 1\"%): the centre line bends tighter than the "
      .. "road is wide %(%d+ cross%-section points clamped%); widen the curve %(via points further apart%) or "
      .. "narrow the road$", err)
    assert.is_false(names_library(err))
  end)

  it("retexture: misuse names the script line, or inside apply no library line", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local ok, err = pcall(script("local r, d = ...\nr.rename(d, 1, 'x')"), retexture, doc)
    assert.is_false(ok)
    assert.equal("scripts/mine.lua:2: bad argument #2 to 'rename' (string expected, got number)", err)
    ok, err = pcall(script("local r, d = ...\nr.remap(d, 1, 2, 5)"), retexture, doc)
    assert.is_false(ok)
    assert.equal("scripts/mine.lua:2: bad argument #4 to 'remap' (table expected)", err)
    ok, err = pcall(retexture.apply, doc, { { op = "rename", from = 1, to = "x" } })
    assert.is_false(ok)
    assert.equal("bad argument #2 to 'rename' (string expected, got number)", err)
  end)

  it("a document the core cannot encode is one problem naming the field, no position", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    doc.rooms[1].flags = "x"
    local ok, problems = psdl.validate(doc)
    assert.is_false(ok)
    assert.equal(1, #problems)
    assert.same({ "encodable", "rooms[1].flags", "integer expected, got string" },
      { problems[1].rule, problems[1].path, problems[1].message })
  end)
end)
