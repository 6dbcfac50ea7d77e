-- The building rows of psdl.city.blocks placed in C (core.row_buildings, src/lpsdl_rows.c,
-- src/psdl_row_buildings.c): the city generator run in C gives the bytes and the building
-- list of the same generator called from C as a Lua function; the report's lazy building
-- list; a building that fails part-way (the vertex budget) is undone; hostile arguments to
-- the bindings raise naming the argument.
local psdl = require "psdl"
local core = require "psdl.core"
local builder = require "psdl.builder"
local blocks = require "psdl.city.blocks"
local random = require "psdl.city.random"

-- A 4 x 3 grid city with building rows (a curved street, an avenue: corner buildings, bends).
local function grid_city(opts)
  local city = psdl.city.new{ style = "london", seed = opts and opts.seed or 7 }
  local node = {}
  for i = 0, 3 do
    node[i] = {}
    for j = 0, 2 do node[i][j] = city:node(i * 110, j * 90, opts and opts.height and { y = opts.height(i, j) } or nil) end
  end
  for i = 0, 3 do
    for j = 0, 2 do
      if i < 3 then city:road(node[i][j], node[i + 1][j], { profile = j == 1 and "avenue" or "street" }) end
      if j < 2 then
        if i == 1 then city:road(node[i][j], node[i][j + 1], { via = { { i * 110 + 12, j * 90 + 45 } } })
        else city:road(node[i][j], node[i][j + 1]) end
      end
    end
  end
  city:blocks{ buildings = { floors = { 2, 8 }, ground_floor = true } }
  return city
end

-- Builds the city with the generator in C, or (lua = true) called back as a Lua function.
local function build(lua, opts)
  local saved = random.generator
  if lua then random.generator = function() return nil end end
  local ok, doc, rep = pcall(function() return grid_city(opts):build() end)
  random.generator = saved
  assert(ok, doc)
  return doc, rep
end

local function same_list(a, b)
  assert.are.equal(#a, #b)
  for i = 1, #a do
    local x, y = a[i], b[i]
    assert.are.equal(x.room.serial, y.room.serial)
    for _, k in ipairs({ "base", "top", "floors", "facades", "slivers" }) do
      assert.are.equal(x[k], y[k], k)
      assert.are.equal(math.type(x[k]), math.type(y[k]), k)
    end
    assert.are.same(x.outline, y.outline)
  end
end

describe("building rows in C", function()
  it("gives the same bytes and buildings with the generator in C as called back from C", function()
    for _, height in ipairs({ false, function(i, j) return (i * 3 + j * 2) % 5 end }) do
      local o = { height = height or nil }
      local _, rc = build(false, o)
      local _, rl = build(true, o)
      assert.is_string(rc.checked.bytes)
      assert.is_true(rc.checked.bytes == rl.checked.bytes, "the bytes differ")
      assert.is_true(rc.blocks.buildings > 20)
      assert.are.equal(rc.blocks.buildings, rl.blocks.buildings)
      same_list(rc.blocks.building_list, rl.blocks.building_list)
    end
  end)

  it("draws the numbers the generator draws in Lua, and writes its state back", function()
    local rl = core.row_list()
    local b = builder.new{ style = "london" }
    local r = b:room{ kind = "block", outline = { { 0, 0, 0 }, { 0, 0, 40 }, { 120, 0, 40 }, { 120, 0, 0 } } }
    local spec = core.row_spec{ setback = 0, depth = { 10, 18 }, width = { 10, 24 }, gap = { 0, 3 }, bay_width = 4,
      floors = { 2, 8 }, floor_height = 3.5, sliver_density = 0.25, facades = { b:texture("f1").index, b:texture("f2").index },
      roofs = { b:texture("r1").index, b:texture("r2").index }, sliver = b:texture("s").index }
    local flat = core.flatten_points({ { 0, 0, 0 }, { 0, 0, 40 }, { 120, 0, 40 }, { 120, 0, 0 } })
    local g, h = random.new(5), random.new(5)
    local n = 0
    local counting = function() n = n + 1; return h:float() end
    local built = core.row_buildings(core.row_room(flat), { false, false, false, true }, spec, g, 0, b.vpool, b.hpool,
      b.store, r.serial, nil, nil, rl)
    assert.is_true(built >= 4)
    assert.are.equal(built, rl:count())
    -- the same layout with the generator called back from C draws n numbers: g is n ahead
    local b2 = builder.new{ style = "london" }
    local r2 = b2:room{ kind = "block", outline = { { 0, 0, 0 }, { 0, 0, 40 }, { 120, 0, 40 }, { 120, 0, 0 } } }
    for _, nm in ipairs({ "f1", "f2", "r1", "r2", "s" }) do b2:texture(nm) end
    local built2 = core.row_buildings(core.row_room(flat), { false, false, false, true }, spec, counting, 0, b2.vpool,
      b2.hpool, b2.store, r2.serial, nil, nil, core.row_list())
    assert.are.equal(built, built2)
    assert.is_true(n > 3 * built)
    assert.are.equal(h:float(), g:float())
    assert.are.equal(b.vpool:count(), b2.vpool:count())
    assert.are.equal(b.store:count(r.serial), b2.store:count(r2.serial))
  end)

  it("fills the report's building list when it is read", function()
    local _, rep = build(false)
    local list = rep.blocks.building_list
    local n = #list
    assert.are.equal(rep.blocks.buildings, n)
    local rooms = {}
    for _, r in ipairs(rep.builder.rooms) do rooms[r] = true end
    for i, bl in ipairs(list) do
      assert.is_true(rooms[bl.room], "record " .. i)
      assert.are.equal("integer", math.type(bl.floors))
      assert.is_true(bl.top > bl.base)
      assert.is_true(#bl.outline >= 4 and bl.facades >= 4)
      local base = -math.huge
      for _, p in ipairs(bl.outline) do base = math.max(base, p[2]) end
      assert.are.equal(base, bl.base)
    end
    assert.is_nil(getmetatable(list)) -- a plain table once read
  end)

  it("undoes a building that goes over the vertex budget, and says so", function()
    -- one block between four streets: its ground first, then its rows
    local function network()
      local b = builder.new{ style = "london" }
      local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
      local n = {}
      for i = 0, 1 do
        for j = 0, 1 do
          local arms = { { dir = { i == 0 and 1 or -1, 0 }, profile = STREET }, { dir = { 0, j == 0 and 1 or -1 }, profile = STREET } }
          local _, inf = b:intersection{ center = { i * 120, 0, j * 100 }, radius = 5, arms = arms }
          n[i * 2 + j] = inf
        end
      end
      b:street{ from = { n[0], 1 }, to = { n[2], 1 }, profile = STREET }
      b:street{ from = { n[1], 1 }, to = { n[3], 1 }, profile = STREET }
      b:street{ from = { n[0], 2 }, to = { n[1], 2 }, profile = STREET }
      b:street{ from = { n[2], 2 }, to = { n[3], 2 }, profile = STREET }
      return b
    end
    local b0 = network()
    local rep0 = blocks.fill(b0, { rng = random.new(1):fn(), buildings = false, margin = false })
    local ground = b0.vpool:count()
    local b1 = network()
    local rep1 = blocks.fill(b1, { rng = random.new(1):fn(), buildings = { floors = { 2, 4 } }, margin = false })
    assert.is_true(rep1.buildings >= 6 and #rep0.rooms == #rep1.rooms)
    local b = network()
    b.budget = ground + 40
    local ok, err = pcall(blocks.fill, b, { rng = random.new(1):fn(), buildings = { floors = { 2, 4 } }, margin = false })
    assert.is_false(ok)
    -- (a budget other than the game's own is named as the builder's)
    assert.matches("the vertex pool reaches %d+ vertices, above this builder's vertex_budget of " .. (ground + 40), err)
    assert.is_true(b.vpool:count() <= ground + 40)
  end)

  it("raises naming the argument on hostile arguments", function()
    local b = builder.new{ style = "london" }
    local r = b:room{ kind = "block", outline = { { 0, 0, 0 }, { 0, 0, 40 }, { 120, 0, 40 }, { 120, 0, 0 } } }
    local flat = core.flatten_points({ { 0, 0, 0 }, { 0, 0, 40 }, { 120, 0, 40 }, { 120, 0, 0 } })
    local good = { setback = 0, depth = { 10, 18 }, width = { 10, 24 }, gap = { 0, 3 }, bay_width = 4, floors = { 2, 8 },
                   floor_height = 3.5, sliver_density = 0.25, facades = { 1 }, roofs = { 1 }, sliver = 1 }
    local function with(k, v)
      local o = {}
      for kk, vv in pairs(good) do o[kk] = vv end
      o[k] = v
      return o
    end
    for _, case in ipairs({ { "facades", {} }, { "roofs", "x" }, { "floors", { 3, 2 } }, { "depth", 5 },
                            { "floor_height", -1 }, { "sliver", 0 }, { "bay_width", 0 / 0 },
                            { "decks", { { pts = { 1, 2 }, low = 3 } } }, { "decks", { 5 } },
                            { "ground_facades", { 1.5 } } }) do
      local ok, err = pcall(core.row_spec, with(case[1], case[2]))
      assert.is_false(ok, case[1])
      assert.matches(case[1], err, nil, true)
    end
    assert.has_error(function() core.row_spec(nil) end)
    local spec = core.row_spec(good)
    local rr = core.row_room(flat)
    local front = { true, true, true, true }
    local args = { rr, front, spec, random.new(1), 0, b.vpool, b.hpool, b.store, r.serial, nil, nil, core.row_list() }
    local function call(i, v)
      local a = { table.unpack(args, 1, 12) }
      a[i] = v
      return pcall(core.row_buildings, table.unpack(a, 1, 12))
    end
    for _, case in ipairs({ { 1, {} }, { 2, 5 }, { 3, rr }, { 4, { s1 = 1.5, s2 = 0, s3 = 0, s4 = 0 } }, { 4, "x" },
                            { 5, { { 1, 2 } } }, { 5, { { 0, 0, 0, 1, 0, 0, 0, 0, 0 / 0 } } }, { 5, "flat" },
                            { 6, b.hpool }, { 7, b.vpool }, { 8, {} }, { 9, 99 }, { 9, 0 }, { 10, -1 }, { 11, 0 },
                            { 12, {} } }) do
      local ok, err = call(case[1], case[2])
      assert.is_false(ok, "argument " .. case[1])
      assert.matches("#" .. case[1], err, nil, true)
    end
    -- a generator that raises, or returns no number: an error, the builder unharmed
    local ok, err = call(4, function() error("boom") end)
    assert.is_false(ok)
    assert.matches("boom", err)
    ok, err = call(4, function() return "x" end)
    assert.is_false(ok)
    assert.matches("rng: number expected", err)
    for _, v in ipairs({ 1, 7.5, -0.25, 0 / 0 }) do
      ok, err = call(4, function() return v end)
      assert.is_false(ok)
      assert.matches("rng: a number in [0, 1) expected", err, nil, true)
    end
    -- a closed pool
    local b2 = builder.new{ style = "london" }
    local r2 = b2:room{ kind = "block", outline = { { 0, 0, 0 }, { 0, 0, 40 }, { 120, 0, 40 }, { 120, 0, 0 } } }
    b2.vpool:close()
    ok, err = pcall(core.row_buildings, core.row_room(flat), front, spec, random.new(1), 0, b2.vpool, b2.hpool, b2.store,
      r2.serial, nil, nil, core.row_list())
    assert.is_false(ok)
    assert.matches("closed", err)
    -- the list's methods check their arguments
    local rl = core.row_list()
    assert.has_error(function() rl:fill(nil, {}, {}) end)
    assert.has_error(function() rl.fill({}, {}, {}, {}) end)
    assert.are.equal(1, rl:add_lua())
    local t = {}
    rl:fill(t, {}, { "given" })
    assert.are.same({ "given" }, t)
    -- the metatables are not reachable: no script frees a room in mid-layout
    assert.are.equal("psdl.RowRoom", getmetatable(rr))
    assert.are.equal("psdl.RowList", getmetatable(rl))
  end)

  it("builds rows with the vertex budget lifted to math.huge (the benches' scaling runs)", function()
    local saved = builder.VERTEX_BUDGET
    builder.VERTEX_BUDGET = math.huge
    local ok, doc, rep = pcall(function() return grid_city():build{ validate = false } end)
    builder.VERTEX_BUDGET = saved
    assert(ok, doc)
    local _, rep0 = build(false)
    assert.are.equal(rep0.blocks.buildings, rep.blocks.buildings)
    assert.is_true(rep.blocks.buildings > 0)
  end)
end)
