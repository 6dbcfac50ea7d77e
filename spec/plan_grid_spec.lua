-- psdl.plan.grid: the one bucket grid of the city, OSM and bench modules (box inserts and
-- queries each item once, segments, the cell of a point, nearest point items), and the C
-- region of psdl.city.blocks' hole joining (core.region).
local plan = require "psdl.plan"
local core = require "psdl.core"

describe("psdl.plan.grid", function()
  it("finds every item whose box meets a query box, each once, in cell order", function()
    local g = plan.grid(10)
    local a, b, c = { "a" }, { "b" }, { "c" }
    g:insert(a, 0, 0, 25, 5)      -- cells (0..2, 0)
    g:insert(b, 12, 12, 14, 14)   -- cell (1, 1)
    g:insert(c, -30, -30, -25, -25)
    local got = {}
    g:query(5, 5, 15, 15, function(it) got[#got + 1] = it[1] end)
    assert.same({ "a", "b" }, got)
    got = {}
    g:query(-100, -100, 100, 100, function(it) got[#got + 1] = it[1]; return it == c end)
    assert.same({ "c" }, got) -- a true return stops the query
    local seen = { [a] = true }
    assert.same({ b }, g:collect(0, 0, 20, 20, {}, seen))
    assert.is_nil(g:cell(55, 55))
    assert.same({ b }, g:cell(15, 15))
    assert.same({ a }, g:cell(25, 5))
  end)

  it("inserts a long diagonal segment into the cells along it, not its whole box", function()
    local g = plan.grid(10)
    g:insert_segment("s", 0, 0, 100, 100, 0)
    local n = 0
    for _ in pairs(g.cells) do n = n + 1 end
    assert.is_true(n < 40, n .. " cells") -- the box would be 121
    local hits = 0
    g:query_segment(50, 0, 50, 100, 0, function() hits = hits + 1 end)
    assert.equal(1, hits)
    hits = 0
    g:query_segment(90, 0, 100, 5, 0, function() hits = hits + 1 end)
    assert.equal(0, hits)
  end)

  it("finds the nearest point item in growing squares, the first of equals", function()
    local g = plan.grid(20)
    local p1, p2, p3 = { 0, 1, 0 }, { 100, 2, 0 }, { 0, 3, 100 }
    for _, p in ipairs({ p1, p2, p3 }) do g:insert_point(p) end
    assert.equal(p2, (g:nearest(90, 5, 10)))
    local p, d2 = g:nearest(10, 48, 10)
    assert.equal(p1, p)
    assert.near(10 * 10 + 48 * 48, d2, 1e-9)
    assert.equal(p3, (g:nearest(0, 52, 10)))
    assert.is_nil(g:nearest(5000, 5000, 3)) -- nothing within the span
    local q = { 0, 4, 100 }
    g:insert_point(q)
    assert.equal(p3, (g:nearest(0, 100, 2)))
  end)
end)

describe("psdl.core.region", function()
  local sq = { { 0, 0, 0 }, { 0, 0, 100 }, { 100, 0, 100 }, { 100, 0, 0 } }
  local hole = { { 40, 0, 40 }, { 60, 0, 40 }, { 60, 0, 60 }, { 40, 0, 60 } }
  it("tells whether a chord between two ring points is clear of the rings", function()
    local R = core.region({ sq, hole })
    assert.is_true(R:clear(sq[1], hole[1]))
    assert.is_false(R:clear(sq[1], hole[3]))         -- through the hole
    assert.is_false(R:clear({ 0, 0, 0 }, hole[1]))   -- another table: its edges are tested
    assert.is_true(R:clear(sq[2], hole[4]))
  end)
  it("names a bad point", function()
    local ok, err = pcall(core.region, { sq, { { 1, 0, 1 }, { 2, 0 } } })
    assert.is_false(ok)
    assert.matches("rings%[2%]%[2%]%[3%]: finite number expected", err)
    ok, err = pcall(core.region, {})
    assert.is_false(ok)
    assert.matches("outer ring", err)
  end)
end)
