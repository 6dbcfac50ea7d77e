-- The C kernels of psdl.city.blocks called from Lua (src/lpsdl_blocks.c): the network's
-- boundary loops (core.face_loops, src/psdl_faces.c) and the chord a block is split along
-- (core.split_chord / core.split_obstacles, src/psdl_split.c; core.split_chord_refs and
-- core.refs_crossing read a vertex pool, core.room_outline the store): their answers on small shapes,
-- and a clear error naming the argument on hostile input (never a crash).
local core = require "psdl.core"

-- A 200 x 50 m block in retail winding, points every 10 m along its long sides.
local function long_block()
  local pts = { { 0, 0, 0 } }
  for x = 0, 200, 10 do pts[#pts + 1] = { x, 0, 50 } end
  for x = 200, 10, -10 do pts[#pts + 1] = { x, 0, 0 } end
  return pts
end

describe("core.split_chord", function()
  it("keeps a piece within the limits and cuts a long one square across, in the middle", function()
    local pts = long_block()
    assert.is_true(core.split_chord(pts, 20000, 120, 300, true))
    local i, j = core.split_chord(pts, 8000, 120, 300, true)
    assert.is_number(j)
    assert.equal(100, pts[i][1])
    assert.equal(100, pts[j][1])
    assert.equal(50, math.abs(pts[i][3] - pts[j][3]))
    -- too deep: kept; a 4-point rectangle has no usable chord
    assert.is_true(core.split_chord(pts, 8000, 120, 300, false))
    local rect = { { 0, 0, 0 }, { 0, 0, 50 }, { 200, 0, 50 }, { 200, 0, 0 } }
    assert.is_false(core.split_chord(rect, 8000, 120, 300, true))
  end)

  it("goes round a footprint on the middle line when it can", function()
    local pts = long_block()
    local obs = core.split_obstacles({ { { 95, 0, 20 }, { 95, 0, 30 }, { 105, 0, 30 }, { 105, 0, 20 } } })
    local i, j = core.split_chord(pts, 8000, 120, 300, true, obs)
    assert.is_number(j)
    assert.are_not.equal(100, pts[i][1])
    assert.equal(pts[i][1], pts[j][1])
  end)

  it("names the bad argument", function()
    local pts = long_block()
    local function err(...)
      local ok, e = pcall(core.split_chord, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #1.-table expected", err("x", 1, 1, 1, true))
    assert.matches("at least 3 points", err({ { 0, 0, 0 }, { 1, 0, 1 } }, 1, 1, 1, true))
    assert.matches("pts%[2%]: point table expected", err({ { 0, 0, 0 }, 5, { 1, 0, 1 } }, 1, 1, 1, true))
    assert.matches("pts%[3%]%[3%]: finite number expected", err({ { 0, 0, 0 }, { 1, 0, 1 }, { 1, 0, "z" } }, 1, 1, 1, true))
    assert.matches("finite number expected", err({ { 0, 0, 0 }, { 1, 0, 1 }, { 0 / 0, 0, 1 } }, 1, 1, 1, true))
    assert.matches("bad argument #3.-number expected", err(pts, 1, "many", 1, true))
    assert.matches("bad argument #6.-psdl.SplitObstacles expected", err(pts, 1, 1, 1, true, core.region({ pts })))
    assert.matches("bad argument #6", err(pts, 1, 1, 1, true, {}))
    local ok, e = pcall(core.split_obstacles, { { { 0, 0, 0 }, "p" } })
    assert.is_false(ok)
    assert.matches("polygons%[1%]%[2%]: point table expected", e)
    ok, e = pcall(core.split_obstacles, { 7 })
    assert.is_false(ok)
    assert.matches("polygons%[1%]: table expected", e)
    -- hostile limits are compared, not trusted: NaN and huge numbers give an answer
    assert.is_not_nil(core.split_chord(pts, 0 / 0, 1e308, -1e308, true))
  end)
end)

describe("core.face_loops", function()
  -- two 10 m squares sharing an edge: vertices 1..6
  local flat = { 0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0, 20, 0, 10, 20, 0, 0 }
  it("chains the edges used once into one loop round both rooms", function()
    local loops, gaps, open = core.face_loops(flat, { { 1, 2, 3, 4 }, { 4, 3, 5, 6 } })
    assert.same({ { 1, 2, 3, 5, 6, 4 } }, loops)
    assert.same({}, gaps)
    assert.same({}, open)
    -- the same from a vertex pool
    local pool = core.pool(3)
    for i = 1, #flat, 3 do pool:add(flat[i], flat[i + 1], flat[i + 2]) end
    assert.same(loops, (core.face_loops(pool, { { 1, 2, 3, 4 }, { 4, 3, 5, 6 } })))
  end)

  it("reports the gaps it closes (distance, end, start) and the chains it leaves open", function()
    -- both rooms use the edge 1 -> 2 in the same direction: it drops out
    local pts = { 0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0, 5, 0, 8, 5, 0, 2 }
    local _, gaps = core.face_loops(pts, { { 1, 2, 3, 4 }, { 1, 2, 5, 6 } })
    assert.same({ 10, 1, 2, 10, 1, 2 }, gaps)
    pts[6], pts[9] = 20, 20 -- now 20 m apart: left open
    local loops, gaps2, open = core.face_loops(pts, { { 1, 2, 3, 4 }, { 1, 2, 5, 6 } })
    assert.same({}, gaps2)
    assert.equal(4, #open)
    assert.is_table(loops)
  end)

  it("names the bad argument", function()
    local function err(...)
      local ok, e = pcall(core.face_loops, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #2", err(flat, { { 1, 2, 7 } }))
    assert.matches("bad argument #2", err(flat, { { 1, 2, 0 } }))
    assert.matches("bad argument #2", err(flat, { { 1, 2, "3" .. "x" } }))
    assert.matches("bad argument #2", err(flat, "rooms"))
    assert.matches("bad argument #1", err({ 0, 0 }, { { 1 } }))
    assert.matches("bad argument #1", err("points", { { 1 } }))
  end)
end)

describe("core.network_faces", function()
  -- four rooms round a 10 m square: outer 0..30 (points 1..4), inner 10..20 (5..8), and a
  -- deck room over the inner square
  local flat = { 0, 0, 0, 0, 0, 30, 30, 0, 30, 30, 0, 0, 10, 0, 10, 10, 0, 20, 20, 0, 20, 20, 0, 10 }
  local rooms = { { 1, 2, 6, 5 }, { 2, 3, 7, 6 }, { 3, 4, 8, 7 }, { 4, 1, 5, 8 } }
  it("gives the faces in retail winding with their kinds, and the outline of the apron", function()
    local faces, apron, gaps, open = core.network_faces(flat, rooms, { 0, 0, 0, 0 })
    assert.equal(1, #faces)
    local F = faces[1]
    assert.equal(100, F.area)
    assert.same({ 7, 8, 5, 6 }, F.refs) -- retail winding (S < 0)
    assert.same({ { 20, 0, 20 }, { 20, 0, 10 }, { 10, 0, 10 }, { 10, 0, 20 } }, F.pts)
    assert.same({ "street", "street", "street", "street" }, F.kinds)
    assert.same({}, F.holes)
    assert.equal(1, #apron)
    assert.equal(900, apron[1].area)
    assert.is_nil(apron[1].holes)
    assert.same({}, gaps)
    assert.same({}, open)
    assert.same({ 4, 3, 2, 1 }, apron[1].refs) -- a hole: S > 0
    -- from a vertex pool; a deck room, then a tunnel room, over the face
    local pool = core.pool(3)
    for i = 1, #flat, 3 do pool:add(flat[i], flat[i + 1], flat[i + 2]) end
    local rooms2 = { rooms[1], rooms[2], rooms[3], rooms[4], { 5, 6, 7, 8 } }
    faces = core.network_faces(pool, rooms2, { 0, 0, 0, 0, 2 }, 0.005)
    assert.same({ "deck", "deck", "deck", "deck" }, faces[1].kinds)
    faces = core.network_faces(pool, rooms2, { 0, 0, 0, 0, 1 })
    assert.same({ "portal", "portal", "portal", "portal" }, faces[1].kinds)
    assert.is_true(faces[1].warp)
    -- without point tables (points = false): the same rings, no pts
    local with = core.network_faces(pool, rooms, { 0, 0, 0, 0 })
    local without, apron2 = core.network_faces(pool, rooms, { 0, 0, 0, 0 }, nil, false)
    assert.is_nil(without[1].pts)
    assert.is_nil(apron2[1].pts)
    assert.same(with[1].refs, without[1].refs)
    assert.same(with[1].kinds, without[1].kinds)
    assert.equal(with[1].area, without[1].area)
    assert.is_false(without[1].warp)
    assert.same(apron[1].refs, apron2[1].refs)
    local ok, e = pcall(core.network_faces, pool, { { 1, 2, 99 } }, { 0 }, nil, false)
    assert.is_false(ok)
    assert.matches("bad argument #2", e)
    -- an island room inside the face: a hole of the face
    local flat2 = { table.unpack(flat) }
    for _, q in ipairs({ { 13, 13 }, { 13, 17 }, { 17, 17 }, { 17, 13 } }) do
      flat2[#flat2 + 1], flat2[#flat2 + 2], flat2[#flat2 + 3] = q[1], 0, q[2]
    end
    local rooms3 = { rooms[1], rooms[2], rooms[3], rooms[4], { 9, 10, 11, 12 } }
    faces = core.network_faces(flat2, rooms3, { 0, 0, 0, 0, 0 })
    assert.equal(1, #faces[1].holes)
    assert.equal(16, faces[1].holes[1].area)
  end)

  it("names the bad argument", function()
    local function err(...)
      local ok, e = pcall(core.network_faces, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #2", err(flat, { { 1, 2, 9 } }, { 0 }))
    assert.matches("bad argument #2", err(flat, "rooms", {}))
    assert.matches("bad argument #3.*warp%[1%]", err(flat, { { 1, 2, 3 } }, { 3 }))
    assert.matches("bad argument #3.*warp%[2%]", err(flat, { { 1, 2, 3 }, { 1, 2, 3 } }, { 0 }))
    assert.matches("bad argument #3", err(flat, { { 1, 2, 3 } }, nil))
    assert.matches("bad argument #4", err(flat, { { 1, 2, 3 } }, { 0 }, "eps"))
    assert.matches("bad argument #1", err("points", { { 1 } }, { 0 }))
    local far = { -1e308, 0, 0, 0, 0, 10, 1e308, 0, 10, 10, 0, 0, 1, 0, 1, 2, 0, 2 }
    assert.matches("bad argument #1.*not finite", err(far, { { 1, 2, 3, 4 }, { 5, 6, 3 } }, { 0, 0 }))
  end)
end)

describe("core.refs_level", function()
  it("gives the one height of the points named, nil for none, false when they differ", function()
    local pool = core.pool(3)
    local a, b, c = pool:add(0, 2, 0), pool:add(5, 2, 0), pool:add(0, 3, 5)
    assert.equal(2, core.refs_level(pool, { { a, b }, { b } }))
    assert.is_false(core.refs_level(pool, { { a, b }, { c } }))
    assert.is_nil(core.refs_level(pool, { {}, {} }))
    assert.is_nil(core.refs_level(pool, {}))
    local function err(...)
      local ok, e = pcall(core.refs_level, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("lists%[2%]%[1%]", err(pool, { { a }, { 99 } }))
    assert.matches("lists%[1%]%[2%]", err(pool, { { a, "x" } }))
    assert.matches("lists%[1%]: table expected", err(pool, { 5 }))
    assert.matches("bad argument #1", err({ 0, 0, 0 }, { { 1 } }))
    assert.matches("bad argument #2", err(pool, "lists"))
  end)
end)

describe("core.grid's point items", function()
  it("finds the nearest point, the one cell's items, and refuses hostile input", function()
    local g = core.grid(20)
    g:insert_point(1, 0, 0)
    g:insert_point(2, 100, 0)
    local id, d2 = g:nearest(90, 5, 10)
    assert.equal(2, id)
    assert.equal(125, d2)
    assert.is_nil(g:nearest(5000, 5000, 3))
    assert.same({ 1 }, g:cell(1, 1))
    assert.is_nil(g:cell(500, 1))
    assert.has_error(function() g:insert_point(0, 1, 1) end)
    assert.has_error(function() g:insert_point(3, 0 / 0, 1) end)
    assert.has_error(function() g:insert_point(3, "x", 1) end)
    assert.has_error(function() g:nearest(0 / 0, 1, 3) end)
    assert.has_error(function() g:nearest(1, 1, "far") end)
    assert.is_nil(g:nearest(1, 1, 0 / 0))
    g:close()
    assert.has_error(function() g:nearest(1, 1, 3) end)
  end)
end)

describe("core.rings_crossing", function()
  local square = { { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 10 }, { 10, 0, 0 } }
  it("answers as core.self_crossing does on the flattened points", function()
    assert.is_nil(core.rings_crossing(square))
    local bow = { { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 0 }, { 10, 0, 10 } }
    assert.same({ core.self_crossing({ 0, 0, 0, 0, 0, 10, 10, 0, 0, 10, 0, 10 }) }, { core.rings_crossing(bow) })
    local hole = { { 2, 0, 2 }, { 8, 0, 2 }, { 8, 0, 8 }, { 2, 0, 8 } }
    assert.is_nil(core.rings_crossing(square, { hole }))
    local out = { { 5, 0, 5 }, { 15, 0, 5 }, { 15, 0, 6 }, { 5, 0, 6 } } -- a hole poking out
    local e1, e2 = core.rings_crossing(square, { out })
    assert.same({ core.self_crossing({ 0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0, 5, 0, 5, 15, 0, 5, 15, 0, 6, 5, 0, 6 }, { 5 }) },
      { e1, e2 })
    assert.is_nil(core.rings_crossing({}))
  end)

  it("names the bad argument", function()
    local function err(...)
      local ok, e = pcall(core.rings_crossing, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #1", err("ring"))
    assert.matches("ring%[2%]: point table expected", err({ { 0, 0, 0 }, 1 }))
    assert.matches("ring%[1%]%[1%]: finite number expected", err({ { 1 / 0, 0, 0 } }))
    assert.matches("holes%[1%]: points expected", err(square, { {} }))
    assert.matches("holes%[1%]: table expected", err(square, { 3 }))
    assert.matches("bad argument #2", err(square, 3))
  end)
end)

describe("core.refs_box", function()
  it("gives the plan box of the points the lists name, nil for none, and names a bad reference", function()
    local flat = { 0, 5, 0, 10, 1, -3, -2, 9, 7, 100, 100, 100 }
    assert.same({ -2, 10, -3, 7 }, { core.refs_box(flat, { { 1, 2 }, { 3 } }) })
    assert.is_nil(core.refs_box(flat, {}))
    assert.is_nil(core.refs_box(flat, { {} }))
    local ok, err = pcall(core.refs_box, flat, { { 1, 5 } })
    assert.is_false(ok)
    assert.matches("bad argument #2", err)
    ok, err = pcall(core.refs_box, "pool", { { 1 } })
    assert.is_false(ok)
    assert.matches("bad argument #1", err)
  end)
end)

describe("Region:target", function()
  local outer = { { 0, 0, 0 }, { 0, 0, 100 }, { 100, 0, 100 }, { 100, 0, 0 } }
  local hole = { { 40, 0, 40 }, { 40, 0, 60 }, { 60, 0, 60 }, { 60, 0, 40 } }
  it("joins a hole's point to the nearest outer point it sees, the second chord clear of the first", function()
    local region = core.region({ outer, hole })
    assert.equal(1, region:target(1, 1))
    assert.equal(3, region:target(1, 3, 1, 1))
  end)

  it("names the bad argument", function()
    local region = core.region({ outer, hole })
    local function err(...)
      local ok, e = pcall(region.target, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("no such hole", err(region, 2, 1))
    assert.matches("no such hole", err(region, 0, 1))
    assert.matches("bad argument #3.-index out of range", err(region, 1, 5))
    assert.matches("bad argument #4.-index out of range", err(region, 1, 1, 9, 1))
    assert.matches("avoid and other go together", err(region, 1, 1, 1))
    assert.matches("psdl.Region expected", err({}, 1, 1))
    assert.matches("number expected", err(region, "1x", 1))
  end)
end)

-- A vertex pool holding points (tables {x, y, z}), and their references, in order.
local function pooled(pts)
  local pool, refs = core.pool(3), {}
  pool:add(0, 0, 0) -- a reserved dummy first, as the builder's pool has
  for k, p in ipairs(pts) do refs[k] = pool:add(p[1], p[2], p[3]) end
  return pool, refs
end

describe("core.split_chord_refs", function()
  it("answers as core.split_chord does on the pool's points", function()
    local pts = long_block()
    local pool, refs = pooled(pts)
    assert.same({ core.split_chord(pts, 8000, 120, 300, true) }, { core.split_chord_refs(pool, refs, 8000, 120, 300, true) })
    assert.is_true(core.split_chord_refs(pool, refs, 20000, 120, 300, true))
    assert.is_true(core.split_chord_refs(pool, refs, 8000, 120, 300, false))
    local obs = core.split_obstacles({ { { 95, 0, 20 }, { 95, 0, 30 }, { 105, 0, 30 }, { 105, 0, 20 } } })
    assert.same({ core.split_chord(pts, 8000, 120, 300, true, obs) },
      { core.split_chord_refs(pool, refs, 8000, 120, 300, true, obs) })
    local rpool, rrefs = pooled({ { 0, 0, 0 }, { 0, 0, 50 }, { 200, 0, 50 }, { 200, 0, 0 } })
    assert.is_false(core.split_chord_refs(rpool, rrefs, 8000, 120, 300, true))
  end)

  it("names the bad argument", function()
    local pool, refs = pooled(long_block())
    local function err(...)
      local ok, e = pcall(core.split_chord_refs, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #1", err({ 0, 0, 0 }, refs, 1, 1, 1, true))
    assert.matches("bad argument #1", err(core.pool(2), refs, 1, 1, 1, true))
    assert.matches("bad argument #2.-table expected", err(pool, "refs", 1, 1, 1, true))
    assert.matches("at least 3 references", err(pool, { 2, 3 }, 1, 1, 1, true))
    assert.matches("refs%[2%]: vertex reference", err(pool, { 2, 999, 4 }, 1, 1, 1, true))
    assert.matches("refs%[3%]: vertex reference", err(pool, { 2, 3, "x" }, 1, 1, 1, true))
    assert.matches("refs%[1%]: vertex reference", err(pool, { 0, 3, 4 }, 1, 1, 1, true))
    assert.matches("refs%[1%]: vertex reference", err(pool, { 2.5, 3, 4 }, 1, 1, 1, true))
    assert.matches("bad argument #4.-number expected", err(pool, refs, 1, "many", 1, true))
    assert.matches("bad argument #7.-psdl.SplitObstacles expected", err(pool, refs, 1, 1, 1, true, {}))
    local closed = core.pool(3)
    closed:close()
    assert.matches("closed psdl.Pool", err(closed, refs, 1, 1, 1, true))
    -- a metatable on the list is not consulted (raw reads)
    local proxy = setmetatable({}, { __index = function() error("consulted") end, __len = function() return 5 end })
    assert.matches("at least 3 references", err(pool, proxy, 1, 1, 1, true))
    assert.is_not_nil(core.split_chord_refs(pool, refs, 0 / 0, 1e308, -1e308, true))
  end)
end)

describe("core.refs_crossing", function()
  local square = { { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 10 }, { 10, 0, 0 } }
  local hole = { { 2, 0, 2 }, { 8, 0, 2 }, { 8, 0, 8 }, { 2, 0, 8 } }
  local out = { { 5, 0, 5 }, { 15, 0, 5 }, { 15, 0, 6 }, { 5, 0, 6 } }
  local bow = { { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 0 }, { 10, 0, 10 } }
  it("answers as core.rings_crossing does on the pool's points", function()
    local all = {}
    for _, r in ipairs({ square, hole, out, bow }) do for _, p in ipairs(r) do all[#all + 1] = p end end
    local pool, refs = pooled(all)
    local function ring(k) return { refs[4 * k - 3], refs[4 * k - 2], refs[4 * k - 1], refs[4 * k] } end
    assert.is_nil(core.refs_crossing(pool, ring(1)))
    assert.same({ core.rings_crossing(bow) }, { core.refs_crossing(pool, ring(4)) })
    assert.is_nil(core.refs_crossing(pool, ring(1), { ring(2) }))
    assert.same({ core.rings_crossing(square, { out }) }, { core.refs_crossing(pool, ring(1), { ring(3) }) })
    assert.is_nil(core.refs_crossing(pool, {}))
  end)

  it("names the bad argument", function()
    local pool, refs = pooled(square)
    local function err(...)
      local ok, e = pcall(core.refs_crossing, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #1", err("pool", refs))
    assert.matches("bad argument #2", err(pool, "refs"))
    assert.matches("refs%[2%]: vertex reference", err(pool, { refs[1], 77 }))
    assert.matches("holes%[1%]: references expected", err(pool, refs, { {} }))
    assert.matches("holes%[1%]: table expected", err(pool, refs, { 3 }))
    assert.matches("holes%[1%]%[2%]: vertex reference", err(pool, refs, { { refs[1], -4 } }))
    assert.matches("bad argument #3", err(pool, refs, 3))
  end)
end)

describe("core.room_outline", function()
  it("gives what core.boundary gives of the store's triangles, nil for a room without ground", function()
    local psdl = require "psdl"
    local b = psdl.builder.new()
    local r = b:room{ kind = "block" }
    r:fan({ { 0, 0, 0 }, { 0, 0, 10 }, { 10, 0, 10 }, { 10, 0, 0 } })
    local e = b:room{ kind = "block" }
    local tris = b.store:triangles(r.serial)
    assert.same(core.boundary(tris, b.vpool), core.room_outline(b.store, r.serial, b.vpool))
    assert.equal(4, #core.room_outline(b.store, r.serial, b.vpool))
    assert.is_nil(core.room_outline(b.store, e.serial, b.vpool))
    local function err(...)
      local ok, m = pcall(core.room_outline, ...)
      assert.is_false(ok)
      return m
    end
    assert.matches("no such room", err(b.store, 99, b.vpool))
    assert.matches("no such room", err(b.store, 0, b.vpool))
    assert.matches("bad argument #2", err(b.store, "r", b.vpool))
    assert.matches("bad argument #1", err({}, r.serial, b.vpool))
    assert.matches("bad argument #3", err(b.store, r.serial, core.pool(2)))
    assert.matches("bad argument #3", err(b.store, r.serial, {}))
    -- a pool that does not hold the store's references: an error, not a read outside it
    assert.matches("outside the pool", err(b.store, r.serial, core.pool(3)))
  end)
end)

describe("core.block_ground", function()
  local psdl = require "psdl"
  local function square(b, y, x0)
    x0 = x0 or 0
    return { b:vertex{ x0, y, 0 }, b:vertex{ x0, y, 10 }, b:vertex{ x0 + 10, y, 10 }, b:vertex{ x0 + 10, y, 0 } }
  end

  -- A 10 m square with two points inside each side: every boundary hub sees a side's run
  -- edge-on, so psdl_fans adds a hub in the middle.
  local function hub_square(b)
    local refs = {}
    local function add(x, z) refs[#refs + 1] = b:vertex{ x, 0, z } end
    for _, z in ipairs{ 0, 3, 6 } do add(0, z) end
    for _, x in ipairs{ 0, 3, 6 } do add(x, 10) end
    for _, z in ipairs{ 10, 7, 4 } do add(10, z) end
    for _, x in ipairs{ 10, 7, 4 } do add(x, 0) end
    return refs
  end

  it("pushes the fans Room:fan_refs makes, and gives the level or the triangles", function()
    local b = psdl.builder.new()
    local g = b:texture("s_grass")
    local r1, r2 = b:room{ kind = "block" }, b:room{ kind = "block" }
    local L = { b:vertex{ 0, 1, 0 }, b:vertex{ 0, 1, 20 }, b:vertex{ 10, 1, 20 }, b:vertex{ 10, 1, 10 },
                b:vertex{ 20, 1, 10 }, b:vertex{ 20, 1, 0 } }
    r1:fan_refs(L, g)
    assert.equal(1, core.block_ground(b.store, r2.serial, g.index, b.vpool, { L }, true, nil, nil, false))
    assert.same(b:attributes(r1), b:attributes(r2))
    -- two pieces at different heights: no level, their triangles (hub first)
    local r3 = b:room{ kind = "block" }
    local tris = core.block_ground(b.store, r3.serial, g.index, b.vpool, { square(b, 0), square(b, 2, 10) }, true)
    assert.equal(4, #tris)
    for _, t in ipairs(tris) do assert.equal(9, #t) end
    -- each the hub and two rim points of a fan record, in order
    local ops = b:attributes(r3)
    local f = ops[1].refs
    local function xyz(ref) return table.unpack(b:point(ref)) end
    local want = {}
    for _, ref in ipairs{ f[1], f[2], f[3] } do
      local x, y, z = xyz(ref)
      want[#want + 1], want[#want + 2], want[#want + 3] = x, y, z
    end
    assert.same(want, tris[1])
    -- a level given that the points are not at
    local r4 = b:room{ kind = "block" }
    assert.equal(2, #core.block_ground(b.store, r4.serial, g.index, b.vpool, { square(b, 5) }, 4))
    -- no level asked for: the triangles
    local r5 = b:room{ kind = "block" }
    assert.equal(2, #core.block_ground(b.store, r5.serial, g.index, b.vpool, { square(b, 5) }))
  end)

  it("asks hub_height for each hub added, and stops past the vertex budget", function()
    local b = psdl.builder.new()
    local g = b:texture("s_grass")
    local r = b:room{ kind = "block" }
    local refs = hub_square(b)
    local asked = 0
    local res = core.block_ground(b.store, r.serial, g.index, b.vpool, { refs }, true, function(x, z)
      asked = asked + 1
      assert.equal(5, x)
      assert.equal(5, z)
      return 3
    end)
    assert.equal(1, asked)
    assert.is_table(res) -- the hub at 3 m: not level
    -- a hub_height that calls back in (its own scratch, the outer call's left alone)
    local ra, rb = b:room{ kind = "block" }, b:room{ kind = "block" }
    local inner
    local res2 = core.block_ground(b.store, ra.serial, g.index, b.vpool, { hub_square(b) }, true, function()
      inner = core.block_ground(b.store, rb.serial, g.index, b.vpool, { square(b, 0, 200), square(b, 0, 300) }, true)
      return 3
    end)
    assert.equal(0, inner)
    assert.same(res, res2)
    assert.same(b:attributes(r), b:attributes(ra))
    assert.equal(3, b:point(#refs + 2)[2]) -- (vertex 1 is the dummy)
    local n = b.vpool:count()
    local r2 = b:room{ kind = "block" }
    local sq = square(b, 0, 50)
    local ok, k = core.block_ground(b.store, r2.serial, g.index, b.vpool, { sq }, true, nil, nil, true, 1)
    assert.is_false(ok)
    assert.equal(1, k)
    assert.is_true(n >= 1)
  end)

  it("leaves a piece it cannot make to Room:fan_refs (nil, k), and names a bad argument", function()
    local b = psdl.builder.new()
    local g = b:texture("s_grass")
    local r = b:room{ kind = "block" }
    local bow = { b:vertex{ 0, 0, 0 }, b:vertex{ 10, 0, 10 }, b:vertex{ 10, 0, 0 }, b:vertex{ 0, 0, 10 } }
    local count = b:attribute_count(r)
    local function refused(pieces, ...)
      local res, k = core.block_ground(b.store, r.serial, g.index, b.vpool, pieces, ...)
      assert.is_nil(res)
      return k
    end
    assert.equal(2, refused({ square(b, 0), bow }))
    assert.equal(1, refused({ { 1, 2 } }))
    assert.equal(1, refused({ { 2, 3, 99999 } }))
    assert.equal(1, refused({ { 2, 3, "x" } }))
    assert.equal(1, refused({ { 2, 3, 1.5 } }))
    local hs = hub_square(b)
    local nv = b.vpool:count()
    assert.equal(1, refused({ hs }, nil, function() return 1e9 end)) -- a hub out of range
    assert.equal(nv, b.vpool:count()) -- (no hub added)
    assert.equal(count + 1, b:attribute_count(r)) -- the first piece of the first call was made
    local function err(...)
      local ok, m = pcall(core.block_ground, ...)
      assert.is_false(ok)
      return m
    end
    assert.matches("bad argument #1", err(nil, r.serial, g.index, b.vpool, {}))
    assert.matches("bad argument #2", err(b.store, "x", g.index, b.vpool, {}))
    assert.matches("no such room", err(b.store, 999, g.index, b.vpool, { square(b, 0) }))
    assert.matches("bad argument #3", err(b.store, r.serial, 0, b.vpool, {}))
    assert.matches("bad argument #4", err(b.store, r.serial, g.index, core.pool(1), {}))
    assert.matches("bad argument #5", err(b.store, r.serial, g.index, b.vpool, 7))
    assert.matches("pieces%[1%]", err(b.store, r.serial, g.index, b.vpool, { 7 }))
    assert.matches("bad argument #6", err(b.store, r.serial, g.index, b.vpool, {}, "x"))
    assert.matches("bad argument #7", err(b.store, r.serial, g.index, b.vpool, {}, nil, 5))
    assert.matches("bad argument #10", err(b.store, r.serial, g.index, b.vpool, {}, nil, nil, nil, nil, "x"))
  end)
end)
