-- The room store of psdl.builder (src/lpsdl_store.c, core.store): records kept in C read back
-- as the op tables the emitters gave, misuse raises naming the field, and the builder's read
-- API (Builder:attributes, attribute_count) goes through it.
local core = require "psdl.core"
local builder = require "psdl.builder"

describe("core.store", function()
  it("gives back each record as it was pushed, in order, with integers kept integers", function()
    local s = core.store()
    local r1, r2 = s:room(), s:room()
    assert.equal(1, r1)
    assert.equal(2, r2)
    local groups = { { index = 1 }, { index = 2 }, { index = 3 } }
    local walls = function() return true end
    s:push(r2, { type = "road", group = groups[3], refs = { 1, 2, 3, 4, 5, 6, 7, 8 } })
    s:push(r1, { type = "sidewalk_strip", group = groups[2], cap = "end", refs = { 4, 5 } })
    s:push(r2, { type = "divided_road", group = groups[1], divider_group = groups[2], divider_type = 2,
                 cap_start = true, cap_end = false, divider_value = 0.15, refs = { 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6 } })
    s:push(r2, { type = "junction_tunnel", group = groups[1], flags = 3, height1 = 5.5, height2 = 7,
                 walls = walls, ceiling_start = 1 })
    s:push(r2, { type = "facade", group = groups[2], bottom = 3, top = 4, u = 5, v = 2, refs = { 9, 10 } })
    s:push(r2, { type = "texture", value = 300 })
    assert.equal(1, s:count(r1))
    assert.equal(5, s:count(r2))
    local ops = s:ops(r2, groups)
    assert.same({ type = "road", group = groups[3], refs = { 1, 2, 3, 4, 5, 6, 7, 8 } }, ops[1])
    assert.equal(groups[3], ops[1].group)
    assert.same({ type = "divided_road", group = groups[1], divider_group = groups[2], divider_type = 2,
                  cap_start = true, cap_end = false, divider_value = 0.15,
                  refs = { 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6 } }, ops[2])
    assert.equal(walls, ops[3].walls)
    assert.is_nil(ops[3].refs)
    assert.equal("integer", math.type(ops[3].height2))
    assert.equal("float", math.type(ops[3].height1))
    assert.same({ type = "facade", group = groups[2], bottom = 3, top = 4, u = 5, v = 2, refs = { 9, 10 } }, ops[4])
    assert.same({ type = "texture", value = 300 }, ops[5])
    assert.same({ { type = "sidewalk_strip", group = 2, cap = "end", refs = { 4, 5 } } }, s:ops(r1))
    assert.same({ type = "texture", value = 300 }, s:ops(r2, groups, 5)[1])
    assert.equal(0, #s:ops(r2, groups, 6))
  end)

  it("gives the floor triangles of a room, caps and walls left out", function()
    local s = core.store()
    local r = s:room()
    s:push(r, { type = "road", group = 1, refs = { 1, 2, 3, 4, 5, 6, 7, 8 } })
    s:push(r, { type = "sidewalk_strip", group = 1, cap = "start", refs = { 1, 2 } })
    s:push(r, { type = "facade", group = 1, bottom = 1, top = 2, u = 1, v = 1, refs = { 1, 2 } })
    assert.same({ 1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 4, 8, 3, 8, 7 }, s:triangles(r))
  end)

  it("raises on misuse, naming the argument and field, and keeps the room as it was", function()
    local s = core.store()
    local r = s:room()
    s:push(r, { type = "fan", group = 1, refs = { 1, 2, 3 } })
    local function err(f, ...)
      local ok, e = pcall(f, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("no room 2 in the store", err(s.push, s, 2, { type = "fan", refs = { 1 } }))
    assert.matches("no room 0", err(s.ops, s, 0))
    assert.matches("op table expected, got string", err(s.push, s, r, "fan"))
    assert.matches("op.type: an attribute type name expected, got bogus", err(s.push, s, r, { type = "bogus" }))
    assert.matches("op.type: an attribute type name expected, got nil", err(s.push, s, r, {}))
    assert.matches("op.refs%[2%]: a vertex reference", err(s.push, s, r, { type = "fan", refs = { 1, 0 } }))
    assert.matches("op.refs%[1%]: a vertex reference", err(s.push, s, r, { type = "fan", refs = { 1.5 } }))
    assert.matches("op.refs: table expected, got number", err(s.push, s, r, { type = "fan", refs = 3 }))
    assert.matches("op.group: a texture group", err(s.push, s, r, { type = "fan", group = "x", refs = { 1 } }))
    assert.matches("op.group: a texture group", err(s.push, s, r, { type = "fan", group = {}, refs = { 1 } }))
    assert.matches("op.cap:", err(s.push, s, r, { type = "sidewalk_strip", cap = "middle", refs = { 1, 2 } }))
    assert.matches("op.top: number expected, got string",
      err(s.push, s, r, { type = "sliver", top = "high", refs = { 1, 2 } }))
    assert.matches("bad argument #2", err(s.count, s, "x"))
    assert.matches("bad argument #3", err(s.ops, s, r, 5))
    -- set_ops reads every op first: a bad one leaves the room unchanged
    assert.matches("op.type", err(s.set_ops, s, r, { { type = "fan", refs = { 4, 5, 6 } }, { type = "nope" } }))
    assert.same({ { type = "fan", group = 1, refs = { 1, 2, 3 } } }, s:ops(r))
    s:set_ops(r, { { type = "road_fan", refs = { 7, 8, 9 } } })
    assert.same({ { type = "road_fan", refs = { 7, 8, 9 } } }, s:ops(r))
    assert.matches("bad argument", err(s.group_uses, s, { 3 }))
    assert.matches("psdl.Store %(1 rooms%)", tostring(s))
    assert.has_error(function() s.room(io.stdout) end)
  end)

  it("push_flat adds the records push adds, one flat list for many, and refuses a bad list whole", function()
    local a, b = core.store(), core.store()
    local ra, rb = a:room(), b:room()
    local g = { index = 2 }
    local ops = {
      { type = "road_fan", group = g, refs = { 5, 6, 7, 8 } },
      { type = "sidewalk_strip", group = g, cap = "start", refs = { 1, 2 } },
      { type = "sidewalk_strip", group = g, refs = { 1, 2, 3, 4 } },
      { type = "sidewalk_strip", group = g, cap = "end", refs = { 3, 4 } },
      { type = "crosswalk", group = g, refs = { 9, 10, 11, 12 } },
      { type = "road", group = g, refs = { 1, 2, 3, 4, 5, 6, 7, 8 } },
      { type = "walkway", group = g, refs = { 1, 2, 3, 4 } },
      { type = "fan", group = g, refs = {} },
    }
    for _, op in ipairs(ops) do a:push(ra, op) end
    b:push_flat(rb, 2, { 5, 0, 4, 5, 6, 7, 8, 1, 1, 2, 1, 2, 1, 0, 4, 1, 2, 3, 4, 1, 2, 2, 3, 4, 4, 0, 4, 9, 10, 11, 12,
                         0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 2, 0, 4, 1, 2, 3, 4, 6, 0, 0 })
    local groups = { { index = 1 }, g }
    assert.same(a:ops(ra, groups), b:ops(rb, groups))
    assert.same({ a:mark() }, { b:mark() })
    -- the same list as a string of native 32-bit words
    local c = core.store()
    local rc = c:room()
    c:push_flat(rc, 2, string.pack("=" .. string.rep("I4", 15), 5, 0, 4, 5, 6, 7, 8, 1, 1, 2, 1, 2, 4, 0, 0))
    assert.same({ ops[1], ops[2], { type = "crosswalk", group = g, refs = {} } }, c:ops(rc, groups))
    assert.has_error(function() c:push_flat(rc, 2, "abc") end)
    assert.has_error(function() c:push_flat(rc, 2, string.pack("=I4I4I4", 9, 0, 0)) end)
    assert.equal(3, c:count(rc))
    local function fails(msg, ...)
      local ok, err = pcall(b.push_flat, b, ...)
      assert.is_false(ok)
      assert.matches(msg, err, 1, true)
      assert.equal(8, b:count(rb)) -- nothing added
    end
    fails("list[1]: a type without parameters expected, got 8", rb, 2, { 8, 0, 0 })
    fails("list[5]: cap 0 (or 1, 2 for a sidewalk strip) expected", rb, 2, { 5, 0, 0, 0, 1, 0 })
    fails("list[3]: 4 references expected after it, 2 left", rb, 2, { 0, 0, 4, 1, 2 })
    fails("list[5]: a vertex reference (1-based) expected", rb, 2, { 5, 0, 3, 1, 0, 2 })
    fails("list[2]: a non-negative integer expected", rb, 2, { 5, -1, 0 })
    fails("list[1]: type, cap and count expected", rb, 2, { 5, 0 })
    fails("a texture group index", rb, 0, {})
    fails("no room 9", 9, 2, {})
  end)

  it("lists texture groups in order of first use over the rooms in the given order", function()
    local s = core.store()
    local a, b = s:room(), s:room()
    s:push(a, { type = "fan", group = 4, refs = { 1, 2, 3 } })
    s:push(b, { type = "divided_road", group = 2, divider_group = 3, divider_type = 1, divider_value = 5,
                refs = { 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6 } })
    s:push(b, { type = "fan", group = 4, refs = { 1, 2, 3 } })
    local o, u, d, du = s:group_uses({ b, a })
    assert.same({ 2, 4 }, o)
    assert.same({ b, b }, u)
    assert.same({ 3 }, d)
    assert.same({ b }, du)
  end)
end)

describe("Builder read API over the store", function()
  it("lists a room's attributes with their texture groups", function()
    local bld = builder.new()
    local r = bld:room({ kind = "block" })
    r:fan({ { 0, 0, 0 }, { 10, 0, 0 }, { 10, 0, 10 }, { 0, 0, 10 } }, "grass")
    r:facade({ 0, 0, 0 }, { 10, 0, 0 }, { bottom = 0, top = 6 })
    assert.equal(2, bld:attribute_count(r))
    local ops = bld:attributes(r)
    assert.equal("fan", ops[1].type)
    assert.same({ "grass" }, ops[1].group.names)
    assert.equal("facade", ops[2].type)
    assert.equal(3, ops[2].u)
    assert.same({ "facade" }, { bld:attributes(r, 2)[1].type })
  end)
end)

describe("Builder:finish from the store", function()
  local psdl = require "psdl"

  -- Runs fn with Builder:finish recording what it returns; returns the list of {doc, report}.
  local function recording(fn)
    local seen, orig = {}, builder.Builder.finish
    builder.Builder.finish = function(self, opts)
      local doc, rep = orig(self, opts)
      seen[#seen + 1] = { doc, rep }
      return doc, rep
    end
    local ok, err = pcall(fn)
    builder.Builder.finish = orig
    assert(ok, err)
    return seen
  end

  it("validates bytes assembled in C that equal the encoding of the document made on request", function()
    local runs = recording(function()
      for _, name in ipairs({ "tunnel", "junctions", "facades", "bridge", "facade_rows", "ring", "avenue", "street" }) do
        local env = setmetatable({ psdl = psdl }, { __index = _G })
        local out = assert(loadfile("examples/" .. name .. ".lua", "t", env))()
        if type(out) == "table" and out.build then out:build() end -- a script may return its city
      end
      dofile("bench/grid_city.lua")(psdl, 4, true):build()
    end)
    assert.equal(9, #runs)
    for _, run in ipairs(runs) do
      local doc, rep = run[1], run[2]
      assert.is_string(rep.checked.bytes)
      assert.equal(rep.rooms, #doc.rooms)
      assert.equal(rep.roads, #doc.roads)
      assert.equal(psdl.encode(doc), rep.checked.bytes)
    end
  end)

  it("makes the document when it is first read, or before the builder changes", function()
    local b = builder.new()
    local r = b:room({ kind = "block" })
    r:fan({ { 0, 0, 0 }, { 10, 0, 0 }, { 10, 0, 10 }, { 0, 0, 10 } }, "grass")
    local doc = b:finish{ drivable = false }
    assert.is_nil(rawget(doc, "rooms")) -- not made yet
    r:fan({ { 20, 0, 0 }, { 30, 0, 0 }, { 30, 0, 10 }, { 20, 0, 10 } }, "grass")
    assert.is_nil(getmetatable(doc)) -- made before the second fan went in
    assert.equal(1, #rawget(doc, "rooms"))
    assert.equal(2, #doc.rooms[1].attributes) -- texture + the first fan only
    local doc2 = b:finish{ drivable = false }
    assert.equal(3, #doc2.rooms[1].attributes)
  end)

  it("keeps a field written with rawset before the document is made: encode writes what the table holds", function()
    local psdl = require "psdl"
    local function finished()
      local b = builder.new()
      for x = 0, 10, 10 do
        local r = b:room({ kind = "block" })
        r:fan({ { x, 0, 0 }, { x + 10, 0, 0 }, { x + 10, 0, 10 }, { x, 0, 10 } }, "grass")
      end
      return b:finish{ drivable = false }
    end
    local doc = finished()
    rawset(doc, "textures", { "mytex" })
    assert.equal("mytex", psdl.decode(psdl.encode(doc)).textures[1])
    assert.equal(2, #doc.rooms) -- the other fields are made as before
    doc = finished()
    rawset(doc, "rooms", { })
    assert.equal(0, #doc.rooms)
    assert.equal(0, #psdl.decode(psdl.encode(doc)).rooms)
  end)
end)
