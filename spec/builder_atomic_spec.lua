-- Atomic builder calls (lua/psdl/builder/atomic.lua): a call that raises part-way leaves the
-- builder as it was (rooms, store records, vertex and height pools, texture groups, road
-- records) and re-raises its error unchanged, so that the calls after it and `finish` work
-- as on a builder that never saw it (newcomer finding F4).
local psdl = require "psdl"
local builder = require "psdl.builder"

local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
local VALID = { path = { { 0, 0, 50 }, { 100, 0, 50 } }, profile = STREET }

-- The bytes of a builder's finished document.
local function bytes_of(b)
  local doc = b:finish{ strict = false }
  return assert(psdl.encode(doc))
end

-- The bytes of a fresh builder with only the valid street (and what `setup` adds first).
local function reference(setup)
  local b = builder.new{ style = "sf" }
  if setup then setup(b) end
  b:street(VALID)
  return bytes_of(b)
end

-- The builder's counts that a failed call must leave alone.
local function state(b)
  local sr, sc, sf = b.store:mark()
  return { #b.rooms, #b.groups, #b.records, b.clamped, b.vpool:count(), b.hpool:count(), sr, sc, sf }
end

describe("atomic builder calls", function()
  it("a street over the vertex budget leaves nothing behind", function()
    local b = builder.new{ style = "sf" }
    local before = state(b)
    local ok, e = pcall(b.street, b, { path = { { 60000, 0, 0 }, { -60000, 0, 0 } }, profile = STREET, spacing = 0.5 })
    assert.is_false(ok)
    assert.truthy(tostring(e):find("vertex pool reaches", 1, true), e)
    assert.same(before, state(b))
    b:street(VALID)
    assert.equal(reference(), bytes_of(b))
  end)

  it("the error is re-raised unchanged, at the script's line", function()
    local b = builder.new{ style = "sf" }
    local line
    local ok, e = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local r = b:street{ path = { { 0, 0, 0 }, { 0 / 0, 0, 0 } }, profile = STREET }
      return r
    end)
    assert.is_false(ok)
    assert.equal(string.format("spec/builder_atomic_spec.lua:%d: bad argument #1 to 'street' (path[2]: x is not a finite number)", line), e)
    -- a check deep in an intersection still names the script's line
    ok, e = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local r = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = { kind = "x" } } } }
      return r
    end)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("builder_atomic_spec.lua:" .. line .. ":", 1, true), e)
  end)

  it("a failure after some rooms of a street were made undoes them all", function()
    local setup = function(b)
      b:block{ outline = { { 300, 0, 300 }, { 300, 0, 340 }, { 340, 0, 340 }, { 340, 0, 300 } }, texture = "g_setup" }
    end
    local b = builder.new{ style = "sf" }
    setup(b)
    local before = state(b)
    -- 3e38 coordinates: checked late (the vertex budget / float range in the street's kernel)
    assert.is_false(pcall(b.street, b, { path = { { 3e38, 0, 0 }, { -3e38, 0, 0 } }, profile = STREET }))
    assert.same(before, state(b))
    -- a vertex budget reached in the middle of the rooms of a split street
    local small = builder.new{ style = "sf", vertex_budget = 200 }
    local sb = state(small)
    assert.is_false(pcall(small.street, small, { path = { { 0, 0, 0 }, { 1000, 0, 0 } }, profile = STREET, split = 4 }))
    assert.same(sb, state(small))
    b:street(VALID)
    assert.equal(reference(setup), bytes_of(b))
  end)

  it("a failed building leaves its block room's records and the pools as they were", function()
    local outline = { { 0, 0, 0 }, { 0, 0, 40 }, { 40, 0, 40 }, { 40, 0, 0 } }
    local function setup(b)
      local blk = b:block{ outline = outline }
      b:building(blk, { outline = { { 5, 0, 5 }, { 5, 0, 15 }, { 15, 0, 15 }, { 15, 0, 5 } }, floors = 3 })
      return blk
    end
    local b = builder.new{ style = "sf", vertex_budget = false }
    local blk = setup(b)
    local before = state(b)
    local n = b:attribute_count(blk)
    -- a texture group and heights are added before the facade repeats are refused
    assert.is_false(pcall(b.building, b, blk, { outline = { { 20, 0, 20 }, { 20, 0, 30 }, { 30, 0, 30 }, { 30, 0, 20 } },
      floors = 1e6, facade = "f_new_facade" }))
    assert.same(before, state(b))
    assert.equal(n, b:attribute_count(blk))
    b:street(VALID)
    local r = builder.new{ style = "sf", vertex_budget = false }
    setup(r)
    r:street(VALID)
    assert.equal(bytes_of(r), bytes_of(b))
  end)

  it("a failed Room method undoes its vertices and groups; the room keeps its earlier records", function()
    local b = builder.new{ style = "sf" }
    local room = b:room{ kind = "block" }
    room:fan({ { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 10 }, { 10, 0, 0 } }, "g_one")
    local before = state(b)
    -- the first sidewalk points are pooled before the bad row is found
    assert.is_false(pcall(room.sidewalk, room, { { { 1, 0, 1 }, { 2, 0, 2 } }, { { 3, 0, 3 } } }, "s_new"))
    assert.is_false(pcall(room.roof, room, { { 50, 0, 50 }, { 50, 0, 50 } }, 10, "r_new"))
    assert.same(before, state(b))
    assert.equal(1, b:attribute_count(room))
  end)

  -- a square with two points inside each side: its one fan needs an added hub point, whose
  -- height the hub_height callback gives
  local RIM = { { 0, 0, 0 }, { 0, 0, 3 }, { 0, 0, 6 }, { 0, 0, 10 }, { 3, 0, 10 }, { 6, 0, 10 }, { 10, 0, 10 },
                { 10, 0, 6 }, { 10, 0, 3 }, { 10, 0, 0 }, { 6, 0, 0 }, { 3, 0, 0 } }

  it("calls made inside a failed call are undone with it; its rooms are refused afterwards", function()
    local b = builder.new{ style = "sf" }
    local room = b:room{ kind = "block" }
    local before = state(b)
    local kept, called
    local ok, e = pcall(room.fan, room, RIM, "g_two", { hub_height = function()
      called = true
      b:vertex{ 999, 9, 999 }
      b:texture("t_inside")
      kept = b:room{ kind = "road", outline = { { 50, 0, 50 }, { 50, 0, 60 }, { 60, 0, 60 } } }
      error("callback failed")
    end })
    assert.is_true(called)
    assert.is_false(ok)
    assert.truthy(tostring(e):find("callback failed", 1, true), e)
    assert.same(before, state(b))
    assert.is_nil(b.group_by_key["single\0t_inside"])
    local e2 = select(2, pcall(b.attribute_count, b, kept))
    assert.truthy(tostring(e2):find("Room of this builder expected, got a Room undone by a failed call", 1, true), e2)
    -- the same call without the failure works and adds one fan
    room:fan(RIM, "g_two", { hub_height = function() return 0 end })
    assert.equal(1, b:attribute_count(room))
  end)

  it("street without a profile uses the documented default", function()
    local a = builder.new{ style = "sf" }
    a:street{ path = VALID.path }
    local c = builder.new{ style = "sf" }
    c:street{ path = VALID.path, profile = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 } }
    assert.equal(bytes_of(c), bytes_of(a))
  end)
end)
