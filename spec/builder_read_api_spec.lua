-- The builder's read API (attributes, attribute_count, room_outline, point, plan_outline)
-- checks its arguments: a bad one raises "bad argument #n to 'method' (...)" at the caller's
-- line, and a room of another builder (or one a failed call undid) is refused instead of
-- answering with this builder's data (newcomer finding F0).
local builder = require "psdl.builder"

local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
local THIS = "builder_read_api_spec.lua"

-- The error of f() called from this file, and the line it was called on.
local err_of = require("helper").err_of

describe("builder read API", function()
  local b, rooms, other, orooms
  before_each(function()
    b = builder.new{ style = "sf" }
    rooms = b:street{ path = { { 0, 0, 0 }, { 100, 0, 0 } }, profile = STREET }
    other = builder.new{ style = "sf" }
    orooms = other:street{ path = { { 0, 0, 0 }, { 50, 0, 0 } }, profile = STREET }
  end)

  for _, m in ipairs{ "attributes", "attribute_count", "room_outline" } do
    it(m .. " refuses what is not a room of this builder, at the caller's line", function()
      local cases = { { nil, "nil" }, { 1, "number" }, { -1, "number" }, { "x", "string" }, { {}, "table" } }
      for _, c in ipairs(cases) do
        local e, line = err_of(function() local r = b[m](b, c[1]); return r end)
        assert.equal(string.format("%s:%d: bad argument #1 to '%s' (Room of this builder expected, got %s)",
          "spec/" .. THIS, line, m, c[2]), e)
      end
      local e = err_of(function() local r = b[m](b, orooms[1]); return r end)
      assert.truthy(e:find("bad argument #1 to '" .. m .. "' (Room of this builder expected, got a Room of another builder)", 1, true), e)
      e = err_of(function() local r = other[m](other, rooms[1]); return r end)
      assert.truthy(e:find("got a Room of another builder", 1, true), e)
      e = err_of(function() local r = b[m](nil, rooms[1]); return r end)
      assert.truthy(e:find(THIS .. ":%d+: calling '" .. m .. "' on bad self %(Builder expected, got nil%)"), e)
      -- the valid calls still answer
      assert.is_not_nil(b[m](b, rooms[1]))
    end)
  end

  it("attributes checks from", function()
    local e, line = err_of(function() local r = b:attributes(rooms[1], 0.5); return r end)
    assert.truthy(e:find(THIS .. ":" .. line .. ": bad argument #2 to 'attributes' (from", 1, true), e)
    assert.equal(#b:attributes(rooms[1]), b:attribute_count(rooms[1]))
    assert.equal(b:attribute_count(rooms[1]) - 1, #b:attributes(rooms[1], 2))
  end)

  it("point takes only a vertex reference of this builder", function()
    local n = b.vpool:count()
    for _, v in ipairs{ "1", 0, n + 1, 0 / 0, 1.5, 1e300, {} } do
      local e, line = err_of(function() local r = b:point(v); return r end)
      assert.truthy(e:find(THIS .. ":" .. line .. ": bad argument #1 to 'point' (ref", 1, true), e)
    end
    local p = b:point(n)
    assert.equal(3, #p)
    assert.equal("number", type(p[1]))
  end)

  it("plan_outline takes a list of this builder's vertex references", function()
    local n = b.vpool:count()
    local bad = { { nil, "refs: list of vertex references expected, got nil" },
                  { rooms[1], "refs: list of vertex references expected, got a Room" },
                  { { 0 }, "refs[1]: integer in 1.." }, { { n + 1 }, "refs[1]: integer in 1.." },
                  { { 2, "x" }, "refs[2]: integer in 1.." } }
    for _, c in ipairs(bad) do
      local e, line = err_of(function() local r = b:plan_outline(c[1]); return r end)
      assert.truthy(e:find(THIS .. ":" .. line .. ": bad argument #1 to 'plan_outline' (" .. c[2], 1, true), e)
    end
    local e, line = err_of(function() local r = b:plan_outline({ 2 }, -1); return r end)
    assert.truthy(e:find(THIS .. ":" .. line .. ": bad argument #2 to 'plan_outline' (eps", 1, true), e)
    local o = b:plan_outline(b:room_outline(rooms[1]))
    assert.truthy(#o >= 4 and o.x1 > o.x0, "an outline in plan with its box")
  end)

  it("building and road_record refuse a room of another builder", function()
    local blk = other:block{ outline = { { 0, 0, 20 }, { 0, 0, 40 }, { 20, 0, 40 }, { 20, 0, 20 } } }
    local e = err_of(function()
      local r = b:building(blk, { outline = { { 5, 0, 25 }, { 5, 0, 30 }, { 10, 0, 30 }, { 10, 0, 25 } }, floors = 2 })
      return r
    end)
    assert.truthy(e:find("bad argument #1 to 'building' (Room of this builder expected, got a Room of another builder)", 1, true), e)
    e = err_of(function() local r = b:road_record{ rooms = { orooms[1] } }; return r end)
    assert.truthy(e:find("bad argument #1 to 'road_record' (rooms[1]: Room of this builder expected)", 1, true), e)
  end)
  it("room_outline gives a copy: editing it changes neither the room nor the city (newcomer F10)", function()
    local psdl = require "psdl"
    local function fresh()
      local c = builder.new{ style = "sf" }
      return c, c:block{ outline = { { 0, 0, 0 }, { 0, 0, 50 }, { 50, 0, 50 }, { 50, 0, 0 } } }
    end
    local c0 = fresh()
    local want = psdl.encode(c0:finish())
    local c, r = fresh()
    local a = c:room_outline(r)
    local keep = table.concat(a, ",")
    a[1] = 99999
    table.remove(a)
    assert.are_not.equal(a, c:room_outline(r))
    assert.equal(keep, table.concat(c:room_outline(r), ","))
    assert.equal(want, psdl.encode(c:finish()))
  end)
end)
