-- An atomic `Builder:finish` (lua/psdl/builder/finish.lua): a finish that fails in any of its
-- stages (a room without geometry, a `walls` function's error, a road record without a strip,
-- the vertex budget, a room over 255 perimeter points, validation) leaves the builder as it
-- was before the call: the rooms' geometry and outlines that T-junction repair changed, their
-- ids, the vertex and height pools, the dummy vertex, the store's records. Fixing what the
-- error names and finishing again gives the bytes of a builder that never failed.
local psdl = require "psdl"
local builder = require "psdl.builder"

local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
local SPEC = "spec/builder_finish_atomic_spec.lua"

-- Two T-junctions for finish to repair: a block given by its corners beside a street (the
-- street's sidewalk points go into the block's outline and fans), and a block with a point
-- in the middle of a street's long side (the street's strip takes a new section, with new
-- vertices across it).
local function scene(b)
  local _, info = b:street{ path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = STREET, spacing = 10 }
  local x = info.left[1][1]
  b:block{ outline = { { x, 0.15, 0 }, { x, 0.15, 60 }, { x + 30, 0.15, 60 }, { x + 30, 0.15, 0 } } }
  local _, info2 = b:street{ path = { { 200, 0, 0 }, { 200, 0, 40 } }, profile = STREET, spacing = 40 }
  local x2 = info2.left[1][1]
  b:block{ outline = { { x2, 0.15, 0 }, { x2, 0.15, 25 }, { x2, 0.15, 40 }, { x2 + 20, 0.15, 40 }, { x2 + 20, 0.15, 0 } } }
end

-- A square fan room of side 10 m at (x, z).
local function square(x, z)
  return { { x, 0, z }, { x, 0, z + 10 }, { x + 10, 0, z + 10 }, { x + 10, 0, z } }
end

-- Everything a failed finish must leave as it was.
local function state(b)
  local s = { mark = { b.store:mark() }, nv = b.vpool:count(), nh = b.hpool:count(), dummy = b:point(1), rooms = {} }
  for i, r in ipairs(b.rooms) do
    s.rooms[i] = { id = r.id, outline = r.outline and { table.unpack(r.outline) }, ops = b:attributes(r),
                   perimeter = b:room_outline(r) }
  end
  return s
end

local OPTS = { strict = false, drivable = false }

local function bytes_of(b, opts)
  local doc, report = b:finish(opts or OPTS)
  return assert(psdl.encode(doc)), report
end

-- finish(opts) on b must fail with an error containing `want` (and, when `line` is given,
-- at that line of this file), and leave b's state as it was.
local function fails(b, opts, want, line)
  local before = state(b)
  local ok, e = pcall(b.finish, b, opts)
  assert.is_false(ok)
  assert.truthy(tostring(e):find(want, 1, true), e)
  if line then assert.equal(SPEC .. ":" .. line .. ":", tostring(e):match("^[^:]*:%d+:"), e) end
  assert.same(before, state(b))
  assert.is_nil(b.pending_doc) -- (no document of the failed finish is made later)
  return e
end

describe("an atomic finish", function()
  it("undoes the room ids of a finish that fails at the perimeters, and a retry after the fix works", function()
    local b = builder.new()
    scene(b)
    local lone = b:room{ name = "lone" }
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(function() local d = b:finish(OPTS); return d end)
    assert.is_false(ok)
    assert.equal(SPEC .. ":" .. line .. ": room " .. lone.serial .. " (\"lone\"): no ground geometry to take a "
      .. "perimeter from, and no outline", e)
    for _, r in ipairs(b.rooms) do assert.is_nil(r.id) end
    fails(b, OPTS, "no ground geometry")
    lone:fan(square(400, 0))
    local ref = builder.new()
    scene(ref)
    ref:room{ name = "lone" }:fan(square(400, 0))
    local bytes, report = bytes_of(b)
    assert.equal((bytes_of(ref)), bytes)
    assert.equal(6, report.tjunctions.repaired)
  end)

  it("undoes T-junction repair when a walls function raises, and a retry after the fix works", function()
    local broken = true
    local function build(bb)
      scene(bb)
      local x = bb:intersection{ center = { 400, 0, 0 }, arms = { { dir = { 1, 0 }, profile = STREET } } }
      x:junction_tunnel{ walls = function(edge)
        if broken then error("walls: no edge " .. edge.index .. " expected") end
        return edge.index == 1
      end }
    end
    local b = builder.new()
    build(b)
    fails(b, OPTS, "walls: no edge 1 expected")
    fails(b, OPTS, "walls: no edge 1 expected") -- (again: the same T-junctions, nothing half done)
    broken = false
    local bytes, report = bytes_of(b)
    local ref = builder.new()
    build(ref)
    assert.equal((bytes_of(ref)), bytes)
    assert.equal(6, report.tjunctions.found)
  end)

  it("undoes a finish whose road record has no strip, naming the caller's line; the fixed room finishes", function()
    local function build(bb)
      scene(bb)
      local rm = bb:room{ name = "record" }
      rm:fan(square(400, 0))
      bb:road_record{ rooms = { rm } }
      return rm
    end
    local b = builder.new()
    local rm = build(b)
    fails(b, OPTS, "road record 1: its first and last rooms need a road")
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(function() local d = b:finish(OPTS); return d end)
    assert.is_false(ok)
    assert.truthy(e:find(SPEC .. ":" .. line .. ": road record 1: its first and last rooms need a road", 1, true), e)
    local road = { { { 430, 0.15, 0 }, { 428, 0, 0 }, { 422, 0, 0 }, { 420, 0.15, 0 } }, -- (two sections, L to R)
                   { { 430, 0.15, 10 }, { 428, 0, 10 }, { 422, 0, 10 }, { 420, 0.15, 10 } } }
    rm:road(road)
    local bytes = bytes_of(b)
    local ref = builder.new()
    build(ref):road(road)
    assert.equal((bytes_of(ref)), bytes)
  end)

  it("undoes a finish over the vertex budget after T-junction repair added vertices", function()
    local probe = builder.new()
    scene(probe)
    local b = builder.new{ vertex_budget = probe.vpool:count() }
    scene(b)
    local e = fails(b, OPTS, "after T-junction repair, above the builder's vertex_budget")
    assert.equal(e, fails(b, OPTS, "vertex_budget")) -- (the same words: the same repair again)
    -- a budget with room for them finishes, as a builder that never failed
    local ok = builder.new{ vertex_budget = probe.vpool:count() + 10 }
    scene(ok)
    local _, report = bytes_of(ok)
    assert.equal(6, report.tjunctions.repaired)
  end)

  it("undoes a finish refused for a room over 255 perimeter points, at the caller's line", function()
    local b = builder.new()
    scene(b)
    local ring = {}
    for k = 1, 260 do
      local a = 2 * math.pi * (k - 1) / 260
      ring[k] = { 500 + 40 * math.cos(a), 0, 40 * math.sin(a) }
    end
    b:room{ name = "round", outline = ring }:fan(ring)
    local before = state(b)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(function() local d = b:finish(OPTS); return d end)
    assert.is_false(ok)
    assert.truthy(e:find(SPEC .. ":" .. line .. ": room ", 1, true), e)
    assert.truthy(e:find("260 perimeter points", 1, true), e)
    assert.same(before, state(b))
  end)

  it("undoes a finish that does not validate (strict); the same builder then finishes as one that never failed",
    function()
      local function build(bb)
        scene(bb)
        -- a block at ground level beside the second street's sidewalk (0.15 m up): unlinked, a
        -- warning, so a strict finish refuses the document
        local _, info = bb:street{ path = { { 300, 0, 0 }, { 300, 0, 60 } }, profile = STREET }
        local x = info.left[1][1]
        bb:block{ outline = { { x, 0, 0 }, { x, 0, 60 }, { x + 30, 0, 60 }, { x + 30, 0, 0 } } }
      end
      local b = builder.new()
      build(b)
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, e = pcall(function() local d = b:finish{ strict = true, drivable = false }; return d end)
      assert.is_false(ok)
      assert.truthy(e:find(SPEC .. ":" .. line .. ": the built document does not validate (strict)", 1, true), e)
      fails(b, { strict = true, drivable = false }, "does not validate (strict)")
      local bytes, report = bytes_of(b)
      local ref = builder.new()
      build(ref)
      assert.equal((bytes_of(ref)), bytes)
      assert.equal(6, report.tjunctions.repaired)
      assert.equal(1, #report.warnings)
    end)

  it("a finished builder's document survives a failed finish after more building", function()
    local b = builder.new()
    scene(b)
    local doc = b:finish(OPTS)
    local first = assert(psdl.encode(doc))
    local lone = b:room{ name = "lone" }
    fails(b, OPTS, "no ground geometry")
    assert.equal(first, assert(psdl.encode(doc)))
    lone:fan(square(400, 0))
    local again = b:finish(OPTS)
    assert.truthy(#assert(psdl.encode(again)) > #first)
  end)

  it("numbers rooms as document_rooms lists them (psdl.city.repair maps a failed finish's errors with it)", function()
    local city = psdl.city.new{}
    local a, b, c = city:node(0, 0), city:node(200, 0), city:node(200, 150)
    city:road(a, b)
    city:road(b, c)
    city:road(c, a)
    local _, report = city:build()
    local rooms, first = builder.trusted.document_rooms(report.builder, "blocks_first")
    assert.equal(#report.builder.rooms, #rooms)
    for i, r in ipairs(rooms) do assert.equal(i, r.id) end
    assert.is_true(first > 1 and rooms[first].kind ~= "block" and rooms[first - 1].kind == "block")
  end)
end)
