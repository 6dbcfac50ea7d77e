-- The perimeter set of Builder:finish (core.perimeters, store:perimeters; src/psdl_perims.c,
-- src/lpsdl_perims.c): the same links, T-junctions and height mismatches as the table
-- kernels (core.link, core.tjunctions, core.height_mismatches) over the same perimeters, the
-- store's strip ends, and misuse raising with the argument named, never a crash.
local core = require "psdl.core"

-- A 3 x 3 grid of points 10 m apart as a vertex pool (reference 3 * row + col + 1).
local function grid_pool()
  local pool = core.pool(3)
  for r = 0, 2 do for c = 0, 2 do pool:add(10 * c, 0, 10 * r) end end
  return pool
end

local SQUARES = { { 1, 4, 5, 2 }, { 2, 5, 6, 3 }, { 4, 7, 8, 5 }, { 5, 8, 9, 6 } }

describe("the perimeter set", function()
  it("holds, replaces and links perimeters as core.link does", function()
    local set = core.perimeters(SQUARES)
    assert.equal(4, set:rooms())
    assert.same({ 2, 5, 6, 3 }, set:get(2))
    set:link(9)
    local want = core.link(SQUARES, 9)
    for i = 1, 4 do assert.same(want[i], set:linked(i)) end
    -- a replaced perimeter moves the later ones and drops the links
    set:set(1, { 1, 4, 5, 2, 2 })
    assert.same({ 1, 4, 5, 2, 2 }, set:get(1))
    assert.same({ 5, 8, 9, 6 }, set:get(4))
    assert.error_matches(function() set:linked(1) end, "not linked")
    set:link(9)
    local per = { { 1, 4, 5, 2, 2 }, SQUARES[2], SQUARES[3], SQUARES[4] }
    assert.same(core.link(per, 9)[1], set:linked(1))
    assert.equal(0, core.perimeters():rooms())
  end)

  it("finds the T-junctions core.tjunctions finds", function()
    local pool = grid_pool()
    -- room 1 spans two squares' edge: vertices 2 and 5 lie inside its edges
    local per = { { 1, 4, 6, 3 }, { 1, 4, 5, 2 }, { 2, 5, 6, 3 } }
    local set = core.perimeters(per)
    local want = core.tjunctions(pool, per, 0.005)
    assert.is_true(#want > 0)
    assert.same(want, set:tjunctions(pool, 0.005))
    assert.same(core.tjunctions(pool, per), set:tjunctions(pool))
  end)

  it("reports blocks beside roads at another height as core.height_mismatches does", function()
    local pool = core.pool(3)
    for _, p in ipairs({ { 0, 0, 0 }, { 10, 0, 0 }, { 10, 0, 10 }, { 0, 0, 10 },
                         { 0, 0.15, 10 }, { 10, 0.15, 10 }, { 10, 0.15, 20 }, { 0, 0.15, 20 } }) do
      pool:add(p[1], p[2], p[3])
    end
    local per = { { 1, 4, 3, 2 }, { 5, 8, 7, 6 } }
    local set = core.perimeters(per)
    set:link(pool:count())
    local want = core.height_mismatches(pool, core.link(per, pool:count()), { 1, 2 }, 0.005, 1)
    assert.is_true(#want > 0)
    assert.same(want, set:height_mismatches(pool, { 1, 2 }, 0.005, 1))
  end)

  it("raises naming the argument on misuse", function()
    local set = core.perimeters(SQUARES)
    local pool = grid_pool()
    assert.error_matches(function() core.perimeters(7) end, "bad argument #1")
    assert.error_matches(function() core.perimeters({ { 1, 0 } }) end, "list%[i%]%[2%]")
    assert.error_matches(function() core.perimeters({ 5 }) end, "table expected")
    assert.error_matches(function() set:get(0) end, "no room 0")
    assert.error_matches(function() set:get(5) end, "no room 5")
    assert.error_matches(function() set:get("x") end, "bad argument #1 to 'get'")
    assert.error_matches(function() set:set(1, { 1, 2.5 }) end, "list%[2%]")
    assert.error_matches(function() set:set(1, "x") end, "bad argument #2 to 'set'")
    assert.error_matches(function() set:linked(1) end, "not linked")
    assert.error_matches(function() set:link(-1) end, "bad argument #1 to 'link'")
    assert.error_matches(function() set:link(8) end, "not below the point count")
    assert.error_matches(function() set:tjunctions({ 0, 0, 0 }) end, "bad argument #1 to 'tjunctions'")
    set:link(9)
    assert.error_matches(function() set:height_mismatches(pool, { 1, 2, 1 }, 0.1, 1) end, "kinds%[4%]")
    assert.error_matches(function() set:height_mismatches(pool, { 1, 2, 0, 9 }, 0.1, 1) end, "kinds%[4%]")
    assert.error_matches(function() set:height_mismatches(pool, {}, "x", 1) end, "bad argument #3")
    assert.error_matches(function() set.get(pool, 1) end, "bad argument #1")
    -- a closed set raises instead of reading freed memory
    getmetatable(set).__gc(set)
    assert.error_matches(function() set:rooms() end, "closed")
    assert.error_matches(function() set:linked(1) end, "closed")
    assert.matches("closed", tostring(set))
  end)

  it("is made by the store from outlines and floor triangles, with the builder's codes", function()
    local store, pool = core.store(), grid_pool()
    local a, b, c = store:room(), store:room(), store:room()
    store:push(a, { type = "fan", refs = { 1, 2, 5, 4 } })
    store:push(b, { type = "walkway", refs = { 2, 3, 5, 6 } })
    store:push(c, { type = "texture", value = 1 })
    local set = store:perimeters({ a, b, c }, { [3] = { 5, 6, 9, 8 } }, pool)
    assert.equal(3, set:rooms())
    assert.same(core.boundary(store:triangles(a), pool), set:get(1))
    assert.same(core.boundary(store:triangles(b), pool), set:get(2))
    assert.same({ 5, 6, 9, 8 }, set:get(3))
    -- no outline and no floor: the position of the room comes back
    local none, code, pos = store:perimeters({ a, c }, {}, pool)
    assert.is_nil(none)
    assert.same({ "no_geometry", 2 }, { code, pos })
    assert.error_matches(function() store:perimeters({ a, 9 }, {}, pool) end, "no room 9")
    assert.error_matches(function() store:perimeters({ a }, { { 1, 99 } }, pool) end, "outlines%[1%]%[2%]")
    assert.error_matches(function() store:perimeters({ a }, {}, core.pool(2)) end, "dimension 3")
    assert.error_matches(function() store:perimeters({ a }, "x", pool) end, "bad argument #2")
    assert.error_matches(function() store:assemble{ order = { a }, flags = { 0 }, props = { 0 }, perims = {},
                                                    gvalue = {}, masks = {} } end, "spec.perims")
  end)

  it("assembles texture references from the groups' values, raising only for a group a record uses", function()
    local store, pool = core.store(), grid_pool()
    local a, b = store:room(), store:room()
    store:push(a, { type = "fan", refs = { 1, 2, 5, 4 }, group = 1 })
    store:push(a, { type = "fan", refs = { 2, 3, 6, 5 }, group = 1 })
    store:push(b, { type = "fan", refs = { 4, 5, 8, 7 }, group = 3 })
    local function assemble(gvalue)
      local set = store:perimeters({ a, b }, {}, pool)
      set:link(pool:count())
      return store:assemble{ order = { a, b }, flags = { 0, 0 }, props = { 0, 0 }, perims = set, gvalue = gvalue,
                             masks = {} }
    end
    -- group 2 holds no value, but no record reads it
    local box = assemble({ 7, "x", 9 })
    local problems = store:validate(box, false, true)
    assert.is_table(problems)
    local doc = core.decode(select(4, store:validate(assemble({ 7, "x", 9 }), true, true)))
    -- one texture reference before the two fans of group 1, one before room 2's fan
    local r1, r2 = doc.rooms[1].attributes, doc.rooms[2].attributes
    assert.same({ "texture", 7, "fan", "fan" }, { r1[1].type, r1[1].value, r1[2].type, r1[3].type })
    assert.equal(3, #r1)
    assert.same({ "texture", 9, "fan" }, { r2[1].type, r2[1].value, r2[2].type })
    assert.error_matches(function() assemble({ 7, 8, 70000 }) end, "gvalue%[3%]: integer in 0%.%.65535 expected")
    assert.error_matches(function() assemble({ 7, 8, "x" }) end, "gvalue%[3%]: integer in 0%.%.65535 expected")
    assert.error_matches(function() assemble({ 7, 8 }) end, "gvalue%[3%]: no texture value for the group")
  end)

  it("gives the strip ends of a room's first and last road records", function()
    local store = core.store()
    local r, f = store:room(), store:room()
    store:push(r, { type = "road", refs = { 1, 2, 3, 4, 5, 6, 7, 8 } })
    store:push(r, { type = "walkway", refs = { 9, 10, 11, 12 } })
    store:push(f, { type = "fan", refs = { 1, 2, 3 } })
    assert.same({ "road", 1, 2, 3, 4 }, { store:strip_end(r, false) })
    assert.same({ "walkway", 11, 11, 12, 12 }, { store:strip_end(r, true) })
    assert.is_nil(store:strip_end(f, true))
    assert.error_matches(function() store:strip_end(3) end, "no room 3")
  end)
  it("survives finalizers that change or close the set inside its calls", function()
    -- a fresh process (a small heap: a collection step at nearly every allocation)
    local body = string.format([[
package.cpath = %q
local core = require "psdl.core"
local set, mode = nil, 0
local mt = { __gc = function()
  if not set then return end
  mode = mode + 1
  if mode %% 7 == 0 then getmetatable(set).__gc(set) -- closed under the call
  else pcall(set.set, set, 1, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3 }) end
end }
collectgarbage("incremental", 1, 1000)
local pool = core.pool(3)
for r = 0, 2 do for c = 0, 2 do pool:add(10 * c, 0, 10 * r) end end
local runs = 0
for _ = 1, 300 do
  set = core.perimeters({ { 1, 4, 5, 2 }, { 2, 5, 6, 3 }, { 4, 7, 8, 5 }, { 5, 8, 9, 6 } })
  pcall(set.link, set, 9)
  for _ = 1, 40 do setmetatable({}, mt) end
  pcall(set.linked, set, 1)
  pcall(set.get, set, 4)
  pcall(set.tjunctions, set, pool)
  pcall(set.height_mismatches, set, pool, { 1, 2, 1, 2 }, 0.01, 1)
  runs = runs + 1
end
set = nil
collectgarbage()
print("runs", runs)
]], package.cpath)
    local path = os.tmpname()
    local fh = assert(io.open(path, "w"))
    fh:write(body)
    fh:close()
    local p = assert(io.popen("lua5.4 " .. path .. " 2>&1"))
    local out = p:read("a")
    local ok = p:close()
    os.remove(path)
    assert.is_true(ok, out)
    assert.matches("runs%s+300", out)
  end)
end)
