--- Block rooms of a generated city (city-layout.md §1.2, §2.3, §5): every bounded face of
-- the road network becomes one or more block rooms (ground fans, optional rows of buildings
-- along the block edge, parks and plazas), and a ground apron surrounds the whole network out
-- to a margin.
--
-- `fill(b, opts)` runs on a `psdl.builder` Builder after every road and intersection room
-- has been placed and before `b:finish()`:
--
-- 1. **Faces.** The outlines of the ordinary (non-warp) rooms are taken as they stand (a
--    vertex of one room lying inside another's edge splits that edge first). Edges used by
--    exactly one room are the network's boundary; chained into loops (at a vertex with
--    several ways on, the sharpest turn towards the rooms), a loop wound opposite to the
--    rooms (S > 0) bounds a face, a loop wound like them is an outline of the network. An
--    outline inside a face is a hole of that face (an island); the others are holes of the
--    apron. Edges shared with a tunnel room are portals: the face takes their points lifted
--    to the ground above (no ground lid over the ramp, §4.2); edges shared with a bridge
--    deck get theirs lowered to the ground, which runs on under the deck.
--    Damaged networks: loose chain ends within 12 m are joined, small folds of an outline
--    (edges a few points apart crossing) are cut off, and a face whose outline still
--    crosses itself is left without ground; each is a warning in the report.
-- 2. **Rooms.** A face (holes joined to the outer ring by two chords each) is cut by
--    straight chords between its own boundary vertices, across its dominant direction (a
--    street grid's; else its major axis) near the half-area line, until every piece is
--    within `room.max_area`, `room.max_points` and `room.max_length`. Chords get points every
--    `room.step` metres (heights from `opts.height`, else along the chord), so no new point
--    ever lands on a road room's edge: block rooms share the road rooms' boundary vertices
--    exactly and `finish()` links them. Chords go round given footprints. When that fails,
--    the kernel's convex pieces (`split = "convex"` asks for them).
-- 3. **Ground.** Fans over each room (convex pieces, retail winding); with a height function
--    the room's ground is cut again into smaller pieces whose inner points (and added fan
--    hubs) follow it.
-- 4. **Buildings.** Given footprints (`footprints`, a network table's `buildings`) first,
--    in the room holding them. Then, along each run of street edges of a room: a corner
--    building wrapping every bend sharper than 25 degrees, the straight runs between cut
--    into buildings of whole bays with random gaps, set back by `setback`, `depth` deep
--    (walls square to the street; on curves the walls meet the offset line at its bends, so
--    they never cross). Each is a `Builder:building` on the room's ground (a facade bound
--    per wall run with the light index of its direction, one facade per wall segment,
--    slivers where the ground under a facade falls below its base, a flat roof). Footprints
--    stay inside their room and never overlap; the ground under them is the room's ground.
--
-- Randomness comes only from `opts.rng`: the same sequence gives the same rooms.
--
-- @module psdl.city.blocks
-- @usage
-- local blocks = require "psdl.city.blocks"
-- local report = blocks.fill(b, { style = b.style, rng = rng, margin = 30,
--                                 buildings = { floors = { 2, 6 } } })
-- local doc = b:finish()

local core = require "psdl.core"
local styles = require "psdl.styles"
local plan = require "psdl.plan"

local type, error, ipairs, pairs, tostring, setmetatable = type, error, ipairs, pairs, tostring, setmetatable
local abs, sqrt, floor, ceil, max, min, huge = math.abs, math.sqrt, math.floor, math.ceil, math.max, math.min, math.huge
local atan, pi, acos = math.atan, math.pi, math.acos
local table_sort, table_insert, table_move, string_format = table.sort, table.insert, table.move, string.format
local table_unpack = table.unpack
local os_clock = os.clock
local block_room = require("psdl.builder").trusted.block_room

local M = {}

--- Defaults of `fill`'s options.
M.DEFAULTS = {
  margin = 30,
  --- room splitting: most area (m²), perimeter points and major-axis length per block
  -- room; points on chords every `step` m
  room = { max_area = 8000, max_points = 120, max_length = 150, step = 10 },
  --- ground pieces inside a room when a height function is given
  ground = { max_area = 1200, max_points = 60, max_length = 45, step = 8 },
  --- apron: points on its outer edge every `step` m (also the spacing of the grid that edge is
  -- found on, at most half the margin)
  apron = { max_area = 8000, max_points = 120, max_length = 150, step = 12 },
  buildings = {
    floors = { 2, 6 }, floor_height = 3.5, bay_width = 4, setback = 0, gap = { 0, 3 },
    depth = { 10, 18 }, width = { 10, 24 }, ground_floor = false, sliver_density = 0.25,
  },
}

local FRONTAGE = { street = true }

--- Metres kept between a building's roof and a bridge deck above it.
M.DECK_GAP = 1.0

local area2, dist, inside, locator = plan.area2, plan.dist, plan.inside, plan.locator
local segs_meet, inset, bbox, simple = plan.segs_meet, plan.inset, plan.bbox, plan.simple

-- ================================================================ polygons

-- A polygon: refs (vertex references), kinds (kind of edge i -> i+1: "street", "cut",
-- "margin", "portal", "deck") and pool (the builder's vertex pool); `simple` when unfold
-- found its ring simple (code that changes refs drops it). Its points `pts` (tables
-- {x, y, z}, the pool's exact points) are made from refs on first read and kept: code that
-- changes refs afterwards drops them (`rawset(P, "pts", nil)`). The hot steps (crossing
-- tests, chords, rows) read the points from the pool in C and never make them.
local POLY = {}
local function pts_of(pool, refs)
  local flat = pool:points(refs)
  local pts = {}
  for k = 1, #refs do
    local i = 3 * k
    pts[k] = { flat[i - 2], flat[i - 1], flat[i] }
  end
  return pts
end
POLY.__index = function(P, k)
  if k == "pts" then
    local pts = pts_of(rawget(P, "pool"), rawget(P, "refs"))
    rawset(P, "pts", pts)
    return pts
  end
end
local function poly(pool, refs, kinds)
  return setmetatable({ pool = pool, refs = refs or {}, kinds = kinds or {} }, POLY)
end

local function push(P, ref, kind)
  local refs = P.refs
  local n = #refs + 1
  refs[n], P.kinds[n] = ref, kind
end

-- A grid index of polygons ({pts, bb}) for box queries.
local function poly_index(list, cell)
  local grid = plan.grid(cell)
  for i, f in ipairs(list) do
    local bb = f.bb
    grid:insert(i, bb[1], bb[3], bb[2], bb[4])
  end
  local idx = {}
  -- the polygons whose boxes meet the box (x0, x1, z0, z1), each once, in list order
  function idx.query(x0, x1, z0, z1)
    local cand = grid:collect(x0, z0, x1, z1, {}, {})
    local out = {}
    for _, i in ipairs(cand) do
      local bb = list[i].bb
      if not (bb[2] < x0 or bb[1] > x1 or bb[4] < z0 or bb[3] > z1) then out[#out + 1] = i end
    end
    table_sort(out)
    return out
  end
  -- does the segment a-c cross or enter one of the polygons?
  function idx.hit(a, c)
    local ax, az, cx, cz = a[1], a[3], c[1], c[3]
    for _, i in ipairs(idx.query(min(ax, cx), max(ax, cx), min(az, cz), max(az, cz))) do
      local pts = list[i].pts
      local n = #pts
      local p = pts[n]
      for k = 1, n do
        local q = pts[k]
        if segs_meet(ax, az, cx, cz, p[1], p[3], q[1], q[3]) then return true end
        p = q
      end
      if inside(pts, (ax + cx) / 2, (az + cz) / 2) then return true end
    end
    return false
  end
  return idx
end

-- Does a ring (with holes: polygons) cross itself? (psdl_self_crossing over the pool's
-- points: psdl.core.refs_crossing)
local refs_crossing = core.refs_crossing
local function crosses(Q, holes)
  if holes and #holes > 0 then
    local rings = {}
    for k, H in ipairs(holes) do rings[k] = H.refs end
    return refs_crossing(Q.pool, Q.refs, rings) ~= nil
  end
  if Q.simple then return false end -- tested by unfold, unchanged since
  return refs_crossing(Q.pool, Q.refs) ~= nil
end

-- Removes small folds from a ring: where two edges at most three apart cross (an outline
-- that doubles back on itself for a few points, e.g. a junction corner), the points between
-- them are dropped; a warning names the ring as string_format(what, index) says. Returns the
-- number of folds removed.
local function unfold(Q, warnings, what, index)
  local removed = 0
  for _ = 1, 16 do
    local n = #Q.refs
    if n < 5 then break end
    local e1, e2 = refs_crossing(Q.pool, Q.refs)
    if not e1 then Q.simple = true; break end -- (crosses(Q) without holes needs no second test)
    local gap = e2 - e1
    local a, c -- keep point a, drop the points after it up to c
    if gap <= 3 then a, c = e1, e2
    elseif n - gap <= 3 then a, c = e2, e1 + n
    else break end
    local drop = {}
    for k = a + 1, c do drop[(k - 1) % n + 1] = true end
    local p = Q.pts[a]
    warnings[#warnings + 1] = string_format("%s: a fold of the network's outline near (%.1f, %.1f) was cut off "
      .. "(an outline doubling back on itself)", string_format(what, index), p[1], p[3])
    local refs, kinds = {}, {}
    for i = 1, n do
      if not drop[i] then
        -- the edge leaving a kept point ends at the next kept point: a cut when points were dropped
        local kind = Q.kinds[i]
        if drop[i % n + 1] then kind = "cut" end
        refs[#refs + 1], kinds[#kinds + 1] = Q.refs[i], kind
      end
    end
    Q.refs, Q.kinds, Q.simple = refs, kinds, nil
    rawset(Q, "pts", nil)
    removed = removed + 1
  end
  return removed
end

-- ================================================================ context

local Ctx = {}
Ctx.__index = Ctx


-- A new vertex: its reference and the pool's exact point.
function Ctx:new_point(x, y, z)
  local b = self.b
  local ref = b:vertex({ x, y, z })
  return b:point(ref), ref
end

-- Ground height at (x, z) for a new point: the height function, else `fallback`.
function Ctx:h(x, z, fallback)
  local f = self.height
  if f then
    local y = f(x, z)
    if type(y) == "number" then return y end
  end
  return fallback
end

-- References of new points strictly between vertices ra and rc every `step` m (heights from
-- the height function, else along the chord), pooled in one call, in order
-- (`Builder:vertices_flat`).
function Ctx:chord_refs(ra, rc, step)
  local pool = self.b.vpool
  local ax, ay, az = pool:get(ra)
  local cx, cy, cz = pool:get(rc)
  local dx, dz = cx - ax, cz - az
  local len = sqrt(dx * dx + dz * dz) -- plan distance (psdl.plan.dist)
  local n = max(1, ceil(len / step - 1e-9))
  if n < 2 then return {} end
  local flat = {}
  for k = 1, n - 1 do
    local t = k / n
    local x, z = ax + dx * t, az + dz * t
    flat[3 * k - 2], flat[3 * k - 1], flat[3 * k] = x, self:h(x, z, ay + (cy - ay) * t), z
  end
  return self.b:vertices_flat(flat)
end

-- ================================================================ the other files

-- Private helpers shared between the blocks files (never part of the API).
local private = { poly = poly, push = push, pts_of = pts_of, POLY = POLY, poly_index = poly_index,
                  crosses = crosses, unfold = unfold, FRONTAGE = FRONTAGE }
for _, part in ipairs({ "faces", "split", "ground", "buildings" }) do
  local exports = require("psdl.city.blocks." .. part)(M, Ctx, private)
  for k, v in pairs(exports or {}) do private[k] = v end
end
local room_outline, lift_portals = private.room_outline, private.lift_portals
local region_pieces, split, ground = private.region_pieces, private.split, private.ground
local rows, fits = private.rows, private.fits
local clip_footprint, building_spec = private.clip_footprint, private.building_spec
local FOOTPRINT_MARGIN = private.FOOTPRINT_MARGIN

-- ================================================================ rooms of a face

local function merge(dst, src)
  for k, v in pairs(src or {}) do dst[k] = v end
  return dst
end

-- One block room over polygon P: ground, and buildings when `bs` is given.
function Ctx:room(P, name, texture, bs, frontage_kinds)
  local b = self.b
  if crosses(P) then
    local p = P.pts[1]
    local w = self.report.warnings
    w[#w + 1] = string_format("%s near (%.1f, %.1f): its outline crosses itself; left out", name, p[1], p[3])
    return nil, nil
  end
  -- (the outline's copy made at its size: no table growth)
  local r = block_room(b, { kind = "block", name = name, outline_refs = { table_unpack(P.refs) } })
  local pieces = { P }
  if self.height and #P.refs > 3 then
    pieces = {}
    split(self, P, self.ground_lim, pieces)
  end
  local t0 = os_clock()
  -- one piece (P: tested by crosses above): level with the outline's one height, if any
  local one = #pieces == 1
  local tris, flat_y = ground(self, r, pieces, texture, one or nil, one)
  local t1 = os_clock()
  self.time.ground = self.time.ground + (t1 - t0)
  -- the ground as a plane (flat_y) or triangles (tris): the building rows sample it in C,
  -- `Ctx:building` through a sampler made on first use (city/blocks/buildings.lua)
  local R = { room = r, P = P, flat_y = flat_y, tris = tris, nbuildings = 0 }
  local fps = self.footprints
  if fps then -- given footprints standing wholly in this room, first
    local bb = bbox(P.pts)
    for _, i in ipairs(self.obstacles.query(bb[1], bb[2], bb[3], bb[4])) do
      local f = fps[i]
      if not f.used then
        local c = f.center
        if inside(P.pts, c[1], c[3]) then
          -- cut back to the room, a little off its edges (the sidewalks), when it reaches them
          local pts = f.pts
          local within = R.inside
          if not within then within = locator(P.pts); R.inside = within end
          local off = false
          for _, q in ipairs(inset(pts, -FOOTPRINT_MARGIN)) do
            if not within(q[1], q[3]) then off = true; break end
          end
          if off then pts = clip_footprint(pts, P.pts, FOOTPRINT_MARGIN) end
          if pts and fits(R, pts) then
            if self:building(R, pts, bs or self.footprint_bs, f) then
              f.used = true
              if off then f.clipped = true end
            end
          else
            f.why = pts and "overlaps another building or crosses the block's edge"
              or "mostly on a road or sidewalk (too little left inside the block)"
          end
        end
      end
    end
  end
  if bs then
    rows(self, R, P, bs, frontage_kinds or FRONTAGE)
  end
  self.time.buildings = self.time.buildings + (os_clock() - t1)
  self.report.rooms[#self.report.rooms + 1] = r
  return r, R
end

-- Texture name of a ground kind from the style.
local ground_texture = styles.ground

-- The context of one `fill` from its arguments (raises at fill's caller on a bad one).
local function fill_context(b, opts)
  if type(b) ~= "table" or type(b.rooms) ~= "table" or not b.vpool then
    error("bad argument #1 to 'fill' (a psdl.builder Builder expected)", 3)
  end
  if type(opts) ~= "table" then error("bad argument #2 to 'fill' (table expected)", 3) end
  local style = opts.style or b.style
  if type(style) == "string" then
    local err
    style, err = styles.load(style)
    if not style then error("bad argument #2 to 'fill' (" .. err .. ")", 3) end
  end
  local rng = opts.rng
  if rng == nil then
    local state = 0x2545F491
    rng = function()
      state = (state * 1103515245 + 12345) % 2147483648
      return state / 2147483648
    end
  elseif type(rng) ~= "function" then
    error("bad argument #2 to 'fill' (rng: function expected)", 3)
  end
  if opts.height ~= nil and type(opts.height) ~= "function" then
    error("bad argument #2 to 'fill' (height: function expected)", 3)
  end
  local report = { blocks = 0, buildings = 0, parks = 0, plazas = 0, apron = false, rooms = {}, faces = {},
                   apron_rooms = {}, building_list = {}, warnings = {} }
  local ctx = setmetatable({
    b = b, rng = rng, style = style, height = opts.height, report = report,
    room_lim = merge(merge({}, M.DEFAULTS.room), opts.room),
    ground_lim = merge(merge({}, M.DEFAULTS.ground), opts.ground_limits),
    apron_lim = merge(merge({}, M.DEFAULTS.apron), opts.apron),
    buildings_base = type(opts.buildings) == "table" and opts.buildings or nil,
    mode = opts.split,
  }, Ctx)
  if opts.split ~= nil and opts.split ~= "chords" and opts.split ~= "convex" then
    error("bad argument #2 to 'fill' (split: \"chords\" or \"convex\" expected)", 3)
  end
  -- the outlines of the rooms placed before the blocks, each asked of the builder once (they
  -- do not change while the blocks are added)
  local cache = {}
  function ctx.outline_of(r)
    local own = r.outline -- (the room's own: no cache needed)
    if own then return own end
    local out = cache[r]
    if out == nil then
      out = room_outline(b, r) or false
      cache[r] = out
    end
    return out or nil
  end
  return ctx, report
end

-- Bridge decks (warp rooms above the ground): buildings under them stay below.
local function bridge_decks(ctx)
  local b = ctx.b
  for _, r in ipairs(b.rooms) do
    if r.is_bridge and not r.is_tunnel then
      local out = ctx.outline_of(r)
      if out and #out >= 3 then
        local pts, low = {}, huge
        for k, v in ipairs(out) do
          local q = b:point(v)
          pts[k] = q
          if q[2] < low then low = q[2] end
        end
        ctx.decks = ctx.decks or {}
        ctx.decks[#ctx.decks + 1] = { pts = pts, bb = bbox(pts), low = low }
      end
    end
  end
end

-- Overrides: the face holding each override's point (the smallest); face index -> override.
local function face_overrides(ctx, net, opts)
  local report = ctx.report
  local face_over = {}
  for i, o in ipairs(opts.overrides or {}) do
    local p = o.point
    if type(p) ~= "table" or type(p[1]) ~= "number" then
      error("bad argument #2 to 'fill' (overrides: each needs point = {x, z})", 3)
    end
    local px, pz = p[1], p[3] or p[2]
    if #p >= 3 then pz = p[3] end
    local best
    for fi, F in ipairs(net.faces) do
      if inside(F.pts, px, pz) then
        local inhole = false
        for _, H in ipairs(F.holes) do if inside(H.pts, px, pz) then inhole = true end end
        if not inhole and (not best or F.area < net.faces[best].area) then best = fi end
      end
    end
    if best then face_over[best] = o
    else -- (psdl.city warns about each, naming the override and the script line)
      local missed = report.missed_overrides or {}
      missed[#missed + 1] = { index = i, x = px, z = pz }
      report.missed_overrides = missed
    end
  end
  return face_over
end

-- Given footprints (a network table's `buildings`, docs/network.md), checked and indexed in
-- ctx (ctx.footprints, ctx.obstacles, ctx.split_obstacles).
local function given_footprints(ctx, opts, default_bs)
  local report = ctx.report
  if opts.footprints ~= nil then
    if type(opts.footprints) ~= "table" then error("bad argument #2 to 'fill' (footprints: list expected)", 3) end
    local fps = {}
    for i, f in ipairs(opts.footprints) do
      local ol = type(f) == "table" and (f.outline or f) or nil
      local pts = {}
      for _, q in ipairs(type(ol) == "table" and ol or {}) do
        if type(q) == "table" and type(q[1]) == "number" then
          local z = q[3] or q[2]
          if type(z) == "number" then
            local last = pts[#pts]
            if not last or abs(last[1] - q[1]) + abs(last[3] - z) > 1e-6 then pts[#pts + 1] = { q[1], 0, z } end
          end
        end
      end
      if #pts > 1 and abs(pts[1][1] - pts[#pts][1]) + abs(pts[1][3] - pts[#pts][3]) <= 1e-6 then pts[#pts] = nil end
      if #pts >= 3 and abs(area2(pts)) > 1 and simple(pts) then
        if area2(pts) > 0 then
          local r_ = {}
          for k = #pts, 1, -1 do r_[#r_ + 1] = pts[k] end
          pts = r_
        end
        local sx, sz = 0, 0
        for _, q in ipairs(pts) do sx, sz = sx + q[1], sz + q[3] end
        fps[#fps + 1] = { pts = pts, bb = bbox(pts), center = { sx / #pts, 0, sz / #pts }, levels = f.levels,
                          height = f.height, index = i }
      else
        report.footprints_skipped = (report.footprints_skipped or 0) + 1
        report.footprints_why = report.footprints_why or {}
        local w = "not a simple polygon, or too small"
        report.footprints_why[w] = (report.footprints_why[w] or 0) + 1
      end
    end
    if #fps > 0 then
      ctx.footprints = fps
      ctx.obstacles = poly_index(fps, 40)
      local polys = {}
      for k, f in ipairs(fps) do polys[k] = f.pts end
      ctx.split_obstacles = core.split_obstacles(polys)
      ctx.footprint_bs = default_bs or building_spec(ctx, nil)
    end
  end
end

-- The report's faces: `outline` (the face's points) is made on first read from the face
-- it describes (face_of, weak keys).
local face_of = setmetatable({}, { __mode = "k" })
local FACE = { __index = function(face, k)
  if k == "outline" then
    local F = face_of[face]
    if F then
      local pts = F.pts
      rawset(face, "outline", pts)
      return pts
    end
  end
end }

-- Every bounded face of the network: its rooms (ground and buildings), parks and plazas.
local function fill_faces(ctx, net, opts, face_over, default_bs)
  local b, report, style = ctx.b, ctx.report, ctx.style
  local tex_block = opts.ground or ground_texture(style, "paving")
  local tex_park = opts.park or ground_texture(style, "grass")
  local tex_plaza = opts.plaza or ground_texture(style, "plaza")
  for fi, F in ipairs(net.faces) do
    lift_portals(ctx, F)
    for _, H in ipairs(F.holes) do lift_portals(ctx, H) end
    unfold(F, report.warnings, "face %d", fi)
    for _, H in ipairs(F.holes) do unfold(H, report.warnings, "face %d", fi) end
    if crosses(F, F.holes) then
      local p = F.pts[1]
      report.warnings[#report.warnings + 1] = string_format("face %d near (%.1f, %.1f): its outline crosses itself "
        .. "(rooms of the network overlap there); left without ground", fi, p[1], p[3])
      report.skipped_faces = (report.skipped_faces or 0) + 1
      goto continue
    end
    do
    local o = face_over[fi]
    local kind, bs, tex = "block", default_bs, tex_block
    if o then
      if o.park then kind, bs, tex = "park", nil, tex_park
      elseif o.plaza then kind, bs, tex = "plaza", nil, tex_plaza
      elseif o.buildings == false then bs = nil
      elseif type(o.buildings) == "table" then bs = building_spec(ctx, o.buildings) end
      if o.texture then tex = o.texture end
    end
    local polys = region_pieces(ctx, F, F.holes, ctx.room_lim, string_format("face %d", fi))
    local face = setmetatable({ kind = kind, area = F.area, rooms = {}, buildings = 0 }, FACE)
    face_of[face] = F
    for k, Pp in ipairs(polys) do
      local r, R = ctx:room(Pp, string_format("%s %d.%d", kind, fi, k), b:texture(tex), bs)
      if r then
        face.rooms[#face.rooms + 1] = r
        face.buildings = face.buildings + R.nbuildings
      end
    end
    report.faces[#report.faces + 1] = face
    if kind == "park" then report.parks = report.parks + 1
    elseif kind == "plaza" then report.plazas = report.plazas + 1 end
    report.blocks = report.blocks + 1
    end
    ::continue::
  end
  return tex_park
end

-- A polygon of "margin" edges through new points (flat x, y, z; pooled in one call, in order).
local function margin_ring(ctx, flat)
  local pool = ctx.b.vpool
  if #flat == 0 then return poly(pool) end
  local refs = ctx.b:vertices_flat(flat)
  local kinds = {}
  for k = 1, #refs do kinds[k] = "margin" end
  return poly(pool, refs, kinds)
end

-- The apron: the ground within `margin` of the network (its outer edge follows the roads,
-- psdl.city.blocks.apron), minus the network's outlines.
local function fill_apron(ctx, net, opts, existing, default_bs, tex_park)
  local b, report = ctx.b, ctx.report
  local margin = opts.margin
  if margin == nil then margin = M.DEFAULTS.margin end
  if margin and margin > 0 and #net.outlines > 0 then
    -- the box of the rooms placed before the blocks (in C: psdl.core.refs_box)
    local lists = {}
    for i = 1, existing do
      local out = ctx.outline_of(b.rooms[i])
      if out then lists[#lists + 1] = out end
    end
    local x0, x1, z0, z1 = core.refs_box(b.vpool, lists)
    if not x0 then x0, x1, z0, z1 = huge, -huge, huge, -huge end
    x0, x1, z0, z1 = x0 - margin, x1 + margin, z0 - margin, z1 + margin
    for _, H in ipairs(net.outlines) do
      lift_portals(ctx, H)
      unfold(H, report.warnings, "apron")
    end
    -- a new point's height without a height function: the nearest network outline point's
    -- (a bucket grid of the outline points, searched in growing rings; made on first use)
    local cell = max(margin, 20)
    local points
    local span = ceil(max(x1 - x0, z1 - z0) / cell) + 1
    local function ground_y(x, z)
      local y = ctx:h(x, z, nil)
      if y then return y end
      if not points then
        points = plan.grid(cell)
        for _, H in ipairs(net.outlines) do
          for _, p in ipairs(H.pts) do points:insert_point(p) end
        end
      end
      local p = points:nearest(x, z, span)
      return p and p[2] or 0
    end
    local step = ctx.apron_lim.step
    -- the outer rings with the network outlines inside each (holes of the apron)
    local regions = {}
    if opts.apron_ring then
      -- the caller's ring around the whole network (retail winding; psdl.city.terrain: the
      -- inner edge of its terrain grid, so the two share these points exactly)
      local flat = {}
      for k, q in ipairs(opts.apron_ring) do
        flat[3 * k - 2], flat[3 * k - 1], flat[3 * k] = q[1], q[2] or ground_y(q[1], q[3]), q[3]
      end
      regions[1] = { ring = margin_ring(ctx, flat), holes = net.outlines }
    else
      -- the line `margin` out from the network's outlines (psdl.city.blocks.apron): the apron
      -- follows the roads, its area grows with their length, not with their bounding box
      -- (bridge decks and tunnel bores count as network too: the ground runs under a deck
      -- and over a bore, and they join the ground of the roads at their ends)
      local lists, extra = {}, {}
      for k, H in ipairs(net.outlines) do lists[k] = H.refs end
      for i = 1, existing do
        local r = b.rooms[i]
        if r.is_tunnel or r.is_bridge or (r.flags and r.flags & 0x40 ~= 0) then
          local out = ctx.outline_of(r)
          if out and #out >= 3 then extra[#extra + 1] = out end
        end
      end
      if not ctx.height then
        -- in C: the rings, their points every `step` m and each point's height, the nearest
        -- outline point's (core.apron_edge, src/psdl_apron.c: the loop below and ground_y)
        for _, flat in ipairs(core.apron_edge(b.vpool, lists, extra, margin, min(step, margin / 2), step, cell, span)) do
          regions[#regions + 1] = { ring = margin_ring(ctx, flat), holes = {} }
        end
      end
      local lines = {}
      if ctx.height then
        for k, H in ipairs(net.outlines) do lines[k] = H.pts end
        for _, out in ipairs(extra) do
          local pts = {}
          for k, v in ipairs(out) do pts[k] = b:point(v) end
          lines[#lines + 1] = pts
        end
      end
      local rings = ctx.height and require("psdl.city.blocks.apron").rings(lines, margin, min(step, margin / 2)) or {}
      for _, ring in ipairs(rings) do
        local flat, w = {}, 0
        local n = #ring
        for k = 1, n do
          local a, c = ring[k], ring[k % n + 1]
          local len = sqrt((c[1] - a[1]) ^ 2 + (c[2] - a[2]) ^ 2)
          local m = max(1, ceil(len / step - 1e-9))
          for i = 0, m - 1 do
            local t = i / m
            local x, z = a[1] + (c[1] - a[1]) * t, a[2] + (c[2] - a[2]) * t
            flat[w + 1], flat[w + 2], flat[w + 3] = x, ground_y(x, z), z
            w = w + 3
          end
        end
        regions[#regions + 1] = { ring = margin_ring(ctx, flat), holes = {} }
      end
      local pool = b.vpool
      for _, H in ipairs(net.outlines) do
        local x, _, z = pool:get(H.refs[1]) -- (H.pts[1]: the pool's point)
        local host
        for _, R in ipairs(regions) do
          if core.refs_inside(pool, R.ring.refs, x, z) then host = R; break end
        end
        if not host then
          error(string_format("psdl.city.blocks: the apron's edge leaves out the network outline at (%.1f, %.1f)",
            x, z), 0)
        end
        host.holes[#host.holes + 1] = H
      end
    end
    local polys = {}
    for _, R in ipairs(regions) do
      for _, Pp in ipairs(region_pieces(ctx, R.ring, R.holes, ctx.apron_lim, "apron")) do polys[#polys + 1] = Pp end
    end
    local tex = opts.apron_texture or tex_park
    local abs_ = opts.apron_buildings and default_bs or nil
    local block_ground = ctx.ground_lim
    if opts.apron_ground then ctx.ground_lim = merge(merge({}, block_ground), opts.apron_ground) end
    for k, Pp in ipairs(polys) do
      local r = ctx:room(Pp, string_format("apron %d", k), b:texture(tex), abs_)
      if r then report.apron_rooms[#report.apron_rooms + 1] = r end
    end
    ctx.ground_lim = block_ground
    report.apron = #polys > 0
  end
end

-- The report's footprint figures: placed, skipped (and why), clipped.
local function footprint_report(ctx)
  local report = ctx.report
  if ctx.footprints then
    local placed = 0
    for _, f in ipairs(ctx.footprints) do if f.used then placed = placed + 1 end end
    report.footprints = placed
    report.footprints_skipped = (report.footprints_skipped or 0) + #ctx.footprints - placed
    local why, clipped = report.footprints_why or {}, 0
    for _, f in ipairs(ctx.footprints) do
      if f.clipped then clipped = clipped + 1 end
      if not f.used then
        local w = f.why or "on a road or outside every block"
        why[w] = (why[w] or 0) + 1
      end
    end
    report.footprints_why, report.footprints_clipped = why, clipped
  end
end

--- Fill a builder's road layout with block rooms (see the module comment).
-- @tparam Builder b a psdl.builder Builder holding the road and intersection rooms
-- @tparam[opt] table opts
--
-- * `style` (default the builder's), `rng` (function() -> [0, 1); default a fixed-seed
--   generator), `margin` (m, 30; 0 or false: no apron), `height` (function(x, z) -> y or
--   nil: the ground);
-- * `buildings`: false (default), or `{floors = {min, max}, floor_height (3.5), bay_width
--   (4), setback (0), gap = {min, max}, depth = {min, max}, width = {min, max}, facades =
--   style set name ("upper") | list of names, ground_floor = true | set name | list (a
--   ground floor of shop fronts), roofs = list, sliver = name, sliver_density}`;
-- * `overrides`: `{ {point = {x, z}, park = true | plaza = true | buildings = {...} |
--   buildings = false, texture = name}, ... }` for the face holding the point;
-- * `footprints`: `{ {outline = {{x, z}...}, levels, height}, ... }` (docs/network.md
--   `buildings`): placed where a room holds them wholly, before any generated row;
-- * `ground`, `park`, `plaza`, `apron_texture`: ground texture names (default the style's
--   first paving, grass, plaza and grass); `apron_buildings`: rows along the network's
--   outside too;
-- * `room`, `ground_limits`, `apron`: splitting limits (`M.DEFAULTS`); `apron_ground`:
--   ground limits of the apron's rooms (default `ground_limits`); `split`: "chords"
--   (default) or "convex";
-- * `apron_ring`: the apron's outer ring instead of the margin rectangle: points `{x, y, z}`
--   (y nil: the ground's) in retail winding around the whole network (psdl.city.terrain
--   passes the inner edge of its terrain grid).
-- @treturn table `{blocks (bounded faces filled), buildings, parks, plazas, apron = bool,
-- rooms = {Room...} (every block room made), faces = {{kind, area, rooms, outline,
-- buildings}...} (`outline`, the face's points, made on first read: `rawget` and `next` do
-- not see it before), apron_rooms = {Room...}, building_list = {{room, outline, base, top,
-- floors, facades, slivers, footprint}...} (kept in C and made tables on first read:
-- `rawget` and `next` see it empty before), footprints, footprints_skipped, skipped_faces,
-- warnings = {...}, missed_overrides = {{index, x, z}...} (overrides whose point lies in no
-- face: not applied; nil when none), seconds = {total, faces, split, ground, buildings, apron}}`
function M.fill(b, opts)
  opts = opts or {}
  local ctx, report = fill_context(b, opts)
  bridge_decks(ctx)
  local existing = #b.rooms
  local t_start = os_clock()
  ctx.time = { ground = 0, buildings = 0 }
  local net = M.faces(b, { outline_of = ctx.outline_of })
  ctx.time.faces = os_clock() - t_start
  for _, w in ipairs(net.warnings) do report.warnings[#report.warnings + 1] = w end
  local default_bs = opts.buildings and building_spec(ctx, nil) or nil
  local face_over = face_overrides(ctx, net, opts)
  given_footprints(ctx, opts, default_bs)
  local tex_park = fill_faces(ctx, net, opts, face_over, default_bs)
  local t_apron = os_clock()
  fill_apron(ctx, net, opts, existing, default_bs, tex_park)
  footprint_report(ctx)
  local t_end = os_clock()
  local tm = ctx.time
  report.seconds = { total = t_end - t_start, faces = tm.faces, apron = t_end - t_apron, ground = tm.ground,
                     buildings = tm.buildings }
  report.seconds.split = report.seconds.total - tm.faces - tm.ground - tm.buildings
  if ctx.unsplit then
    report.warnings[#report.warnings + 1] = string_format("%d pieces stayed above the room limits (no chord found)", ctx.unsplit)
  end
  return report
end

return M
