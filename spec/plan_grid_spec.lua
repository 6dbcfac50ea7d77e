-- psdl.plan.grid: the one bucket grid of the city, OSM and bench modules (box inserts and
-- queries each item once, segments, the cell of a point, nearest point items), the C
-- region of psdl.city.blocks' hole joining (core.region), and psdl.plan.box, the one growing
-- bounding box.
local plan = require "psdl.plan"
local core = require "psdl.core"

describe("psdl.plan.box", function()
  it("grows to take points in, empty until one is added, NaN leaving its axis as it was", function()
    local b = plan.box()
    assert.is_true(b:empty())
    assert.same({ math.huge, math.huge, -math.huge, -math.huge }, { b.u0, b.v0, b.u1, b.v1 })
    b:add(3, -2)
    assert.is_false(b:empty())
    assert.same({ 3, -2, 3, -2 }, { b.u0, b.v0, b.u1, b.v1 })
    b:add(-1, 5); b:add(0 / 0, 7); b:add(10, 0 / 0)
    assert.same({ -1, -2, 10, 7 }, { b.u0, b.v0, b.u1, b.v1 })
    local nan = plan.box()
    nan:add(0 / 0, 1)
    assert.is_true(nan:empty()) -- no u seen
    assert.same({ -1, 10, 0, 4 }, plan.bbox({ { 0, 9, 0 }, { -1, 9, 4 }, { 10, -9, 1 } }))
  end)
end)

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
    for i = 0, 10 do
      for j = 0, 10 do
        if g:cell(i * 10 + 5, j * 10 + 5) then n = n + 1 end
      end
    end
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

-- The grid as psdl.plan kept it in Lua before it became a wrapper over the C grid: the
-- reference the wrapper must match candidate for candidate.
local function reference_grid(size)
  local floor, sqrt, huge, max, min = math.floor, math.sqrt, math.huge, math.max, math.min
  local cells = {}
  local function key(i, j) return i * 1048576 + j end
  local R = {}
  function R.insert(item, minx, minz, maxx, maxz)
    for i = floor(minx / size), floor(maxx / size) do
      for j = floor(minz / size), floor(maxz / size) do
        local c = cells[key(i, j)]
        if not c then c = {}; cells[key(i, j)] = c end
        c[#c + 1] = item
      end
    end
  end
  function R.insert_point(p)
    local k = key(floor(p[1] / size), floor(p[3] / size))
    local c = cells[k]
    if not c then c = {}; cells[k] = c end
    c[#c + 1] = p
  end
  local function walk(i0, i1, j0, j1, seen, fn)
    for i = i0, i1 do
      for j = j0, j1 do
        local c = cells[key(i, j)]
        if c then
          for n = 1, #c do
            local it = c[n]
            if not seen[it] then
              seen[it] = true
              if fn(it) then return true end
            end
          end
        end
      end
    end
    return false
  end
  function R.query(minx, minz, maxx, maxz, fn)
    local i0, i1, j0, j1 = floor(minx / size), floor(maxx / size), floor(minz / size), floor(maxz / size)
    if i1 > i0 or j1 > j0 then walk(i0, i1, j0, j1, {}, fn) return end
    local c = cells[key(i0, j0)]
    if c then for n = 1, #c do if fn(c[n]) then return end end end
  end
  function R.collect(minx, minz, maxx, maxz, out, seen)
    walk(floor(minx / size), floor(maxx / size), floor(minz / size), floor(maxz / size), seen,
      function(it) out[#out + 1] = it end)
    return out
  end
  function R.insert_segment(item, ax, az, bx, bz, pad)
    local dx, dz = bx - ax, bz - az
    local n = max(1, floor(sqrt(dx * dx + dz * dz) / size) + 1)
    for k = 0, n - 1 do
      local t0, t1 = k / n, (k + 1) / n
      local x0, z0, x1, z1 = ax + t0 * dx, az + t0 * dz, ax + t1 * dx, az + t1 * dz
      R.insert(item, min(x0, x1) - pad, min(z0, z1) - pad, max(x0, x1) + pad, max(z0, z1) + pad)
    end
  end
  function R.query_segment(ax, az, bx, bz, pad, fn)
    local seen = {}
    local dx, dz = bx - ax, bz - az
    local n = max(1, floor(sqrt(dx * dx + dz * dz) / size) + 1)
    for k = 0, n - 1 do
      local t0, t1 = k / n, (k + 1) / n
      local x0, z0, x1, z1 = ax + t0 * dx, az + t0 * dz, ax + t1 * dx, az + t1 * dz
      if walk(floor((min(x0, x1) - pad) / size), floor((max(x0, x1) + pad) / size),
              floor((min(z0, z1) - pad) / size), floor((max(z0, z1) + pad) / size), seen, fn) then
        return
      end
    end
  end
  function R.nearest(x, z, span)
    local gx, gz = floor(x / size), floor(z / size)
    local bd, best = huge, nil
    for r = 0, span do
      for i = gx - r, gx + r do
        local edge = i == gx - r or i == gx + r
        for j = gz - r, gz + r, edge and 1 or (r > 0 and 2 * r or 1) do
          local c = cells[key(i, j)]
          if c then
            for n = 1, #c do
              local p = c[n]
              local dx, dz = p[1] - x, p[3] - z
              local d = dx * dx + dz * dz
              if d < bd then bd, best = d, p end
            end
          end
        end
      end
      if best and sqrt(bd) <= r * size then break end
    end
    return best, bd
  end
  return R
end

describe("psdl.plan.grid over the C grid", function()
  it("gives the candidates of the Lua grid it replaced, in the same order", function()
    local state = 12345
    local function rnd() state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648 end
    for _, size in ipairs({ 7, 20, 50 }) do
      local g, R = plan.grid(size), reference_grid(size)
      local gp, Rp = plan.grid(size), reference_grid(size) -- point items only
      local items = {}
      for k = 1, 300 do
        local x, z = rnd() * 600 - 300, rnd() * 600 - 300
        local w, h = rnd() * 40, rnd() * 40
        local it = { k }
        items[k] = it
        local kind = k % 3
        if kind == 0 then g:insert(it, x, z, x + w, z + h); R.insert(it, x, z, x + w, z + h)
        elseif kind == 1 then g:insert_segment(it, x, z, x + w * 3, z - h * 3, 0.5); R.insert_segment(it, x, z, x + w * 3, z - h * 3, 0.5)
        else
          local p = { x, k, z }
          gp:insert_point(p); Rp.insert_point(p)
          g:insert(it, x, z, x + 1, z + 1); R.insert(it, x, z, x + 1, z + 1) -- an item in two ways
        end
      end
      g:insert(items[1], -10, -10, 10, 10); R.insert(items[1], -10, -10, 10, 10) -- again: one id
      for _ = 1, 200 do
        local x, z = rnd() * 700 - 350, rnd() * 700 - 350
        local w, h = rnd() * (rnd() < 0.5 and 5 or 80), rnd() * 30
        local a, b = {}, {}
        g:query(x, z, x + w, z + h, function(it) a[#a + 1] = it end)
        R.query(x, z, x + w, z + h, function(it) b[#b + 1] = it end)
        assert.equal(#b, #a)
        for k = 1, #b do assert.equal(b[k], a[k]) end
        a, b = {}, {}
        g:query_segment(x, z, x + w * 4, z + h, 1, function(it) a[#a + 1] = it; return #a == 25 end)
        R.query_segment(x, z, x + w * 4, z + h, 1, function(it) b[#b + 1] = it; return #b == 25 end)
        assert.equal(#b, #a)
        for k = 1, #b do assert.equal(b[k], a[k]) end
        a = g:collect(x, z, x + w, z + h, { "x" }, { [items[5]] = true })
        b = R.collect(x, z, x + w, z + h, { "x" }, { [items[5]] = true })
        assert.equal(#b, #a)
        for k = 1, #b do assert.equal(b[k], a[k]) end
        local p, d = gp:nearest(x, z, 6)
        local q, e = Rp.nearest(x, z, 6)
        assert.equal(q, p)
        assert.equal(e, d)
      end
    end
  end)

  it("inserts nothing for a NaN box and raises on an infinite one", function()
    local g = plan.grid(10)
    g:insert("a", 0 / 0, 0, 5, 5)
    assert.is_nil(g:cell(0, 0))
    assert.has_error(function() g:insert("b", 0, 0, math.huge, 5) end)
    assert.has_error(function() g:insert_point({ 0 / 0, 0, 0 }) end)
  end)

  it("lets a query's callback query again", function()
    local g = plan.grid(10)
    for k = 1, 5 do g:insert(k, k * 10, 0, k * 10 + 5, 5) end
    local pairs_ = {}
    g:query(0, 0, 100, 5, function(a)
      g:query(0, 0, 100, 5, function(b) if b > a then pairs_[#pairs_ + 1] = a * 10 + b end end)
    end)
    assert.same({ 12, 13, 14, 15, 23, 24, 25, 34, 35, 45 }, pairs_)
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
