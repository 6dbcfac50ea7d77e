--- Cities on terrain: what `psdl.city` does with its `terrain` option, and the way back
-- (a city's ground as a height grid).
--
-- With `psdl.city.new{terrain = T}` (a `psdl.terrain` Terrain, or a function (x, z) → y):
--
-- * **Nodes** and via points without `y` take the terrain's height (as with `height`).
-- * **Roads** follow the ground between their ends: the centre line of a road run is
--   sampled (one sample every `spacing` metres, more on curves), every sample takes the
--   terrain's height, and the samples are splined again so that climbing curves get sections
--   enough to keep each quad within `planar_tol` (5 cm) of planar. The ends stay where the
--   intersections hold them (intersections are flat at their node's height, so an arm's end
--   section sits off the slope by its distance from the node times the grade): the
--   difference fades linearly over `blend` metres (30, at most half the way to the next
--   fixed point), and so does the difference at a through node or via point given its own
--   `y`. Cross-sections stay level (straight across), as the builder makes them; tunnels and
--   bridges keep their own height profiles between their ends.
-- * **Blocks** take their ground from the terrain (`psdl.city.blocks`' `height`): ground
--   fans whose inner points and hubs lie on it, in pieces about two `apron_cell` across
--   (default the grid's cell), buildings standing on the highest point of their footprint,
--   slivers under facades where the ground falls away. Between a road's (level) edge and the
--   first inner points the ground ramps.
-- * **Terrain ground** covers everything outside the network out to the terrain's extent
--   (`extent = "terrain"`, the default for a Terrain), to a given rectangle, or to the city's
--   margin only (`extent = "margin"`, the default for a function): a ground grid of `cell`
--   metres (the terrain's cell size, coarser when the grid would pass `max_points`) aligned
--   with the terrain's grid. Around the network, out to `margin` metres (cut back to the
--   terrain's extent where that leaves a cell of room, snapped outwards to the grid), the
--   blocks' apron: rooms cut to the network's outline, sharing its outer vertices, their
--   ground following the terrain as the blocks' does. Beyond it, rooms of at most
--   `room_cells` x `room_cells` grid cells, one four-point fan per cell with its corners on
--   the terrain. The apron's outer ring is the grid's inner edge, point for point, so the
--   two share every vertex.
--
-- `from_city(doc or city, opts)` rasterises a city's walkable surfaces (road, sidewalk,
-- crosswalk, divider and ground geometry as the game draws it; no roofs, facades, slivers or
-- tunnel walls; warp rooms, i.e. tunnel bores and bridge decks, left out unless asked for)
-- onto a grid of points `cell` metres apart, keeping the highest surface at each point, and
-- fills points nothing covers from their nearest covered neighbours. The result is a
-- `psdl.terrain` Terrain (`:to_nhtg()`, `psdl.terrain.encode_heightmap`), in the terrain
-- module's axis convention: row i along z, column j along x.
--
-- @module psdl.city.terrain

local type, error, ipairs, pairs, tostring, getmetatable, require =
  type, error, ipairs, pairs, tostring, getmetatable, require
local abs, sqrt, floor, ceil, max, min, huge = math.abs, math.sqrt, math.floor, math.ceil, math.max, math.min, math.huge
local string_format = string.format

local core = require "psdl.core"
local plan_box = require("psdl.plan").box

local M = {}

--- Defaults of the `terrain_opts` table of `psdl.city.new`.
M.DEFAULTS = {
  blend = 30,         -- m over which a road's fixed end heights fade into the terrain's
  room_cells = 8,     -- terrain ground rooms: at most this many grid cells a side
  max_points = 20000, -- the ground grid is coarsened (whole multiples of the cell) to stay below
  planar_tol = 0.05,  -- m: road quads on climbing curves are kept this close to planar
}

local OPTS = { blend = true, extent = true, cell = true, room_cells = true, max_points = true, texture = true,
               apron_cell = true, ground = true, planar_tol = true }

local function finite(v) return type(v) == "number" and v == v and v ~= huge and v ~= -huge end

--- Check and complete the `terrain` and `terrain_opts` options of `psdl.city.new`.
-- @param terrain a Terrain (anything with `height(self, x, z)`) or a function (x, z) → y
-- @tparam[opt] table o `blend`, `extent` ("terrain", "margin" or `{x0, z0, x1, z1}`),
--   `cell`, `room_cells`, `max_points`, `texture`, `apron_cell`, `planar_tol`, `ground`
--   (false: no terrain ground, only the usual apron)
-- @treturn table `{height = fn, object = Terrain or nil, ...options}`
-- @raise a message (without position) on a bad option
function M.setup(terrain, o)
  local t = {}
  if type(terrain) == "table" and type(terrain.height) == "function" then
    t.object = terrain
    t.height = function(x, z) return terrain:height(x, z) end
  elseif type(terrain) == "function" then
    t.height = terrain
  else
    error("terrain: a psdl.terrain Terrain or a function(x, z) -> y expected, got " .. type(terrain), 0)
  end
  o = o or {}
  if type(o) ~= "table" then error("terrain_opts: table expected, got " .. type(o), 0) end
  for k in pairs(o) do
    if not OPTS[k] then error("terrain_opts: unknown option '" .. tostring(k) .. "'", 0) end
  end
  for k, v in pairs(M.DEFAULTS) do t[k] = v end
  for _, k in ipairs({ "blend", "cell", "room_cells", "max_points", "apron_cell", "planar_tol" }) do
    local v = o[k]
    if v ~= nil then
      if not finite(v) or v < 0 or (v == 0 and k ~= "blend") then
        error(string_format("terrain_opts.%s: a positive number expected, got %s", k, tostring(v)), 0)
      end
      t[k] = v
    end
  end
  t.room_cells = max(1, floor(t.room_cells))
  if t.room_cells > 60 then error("terrain_opts.room_cells: at most 60 (a room's 4 x 60 perimeter points)", 0) end
  local ext = o.extent
  if ext == nil then ext = t.object and t.object.extent and "terrain" or "margin" end
  if ext == "terrain" then
    if not (t.object and t.object.extent) then
      error("terrain_opts.extent: \"terrain\" needs a psdl.terrain Terrain (a function has no extent)", 0)
    end
    local e = t.object:extent()
    t.extent = { e.min[1], e.min[2], e.max[1], e.max[2] }
  elseif ext == "margin" then
    t.extent = nil
  elseif type(ext) == "table" and finite(ext[1]) and finite(ext[2]) and finite(ext[3]) and finite(ext[4])
         and ext[3] > ext[1] and ext[4] > ext[2] then
    t.extent = { ext[1], ext[2], ext[3], ext[4] }
  else
    error("terrain_opts.extent: \"terrain\", \"margin\" or {x0, z0, x1, z1} expected", 0)
  end
  if o.texture ~= nil and type(o.texture) ~= "string" then error("terrain_opts.texture: a texture name expected", 0) end
  t.texture = o.texture
  t.ground = o.ground ~= false
  local obj = t.object
  t.origin = obj and obj.origin and { obj.origin.x or 0, obj.origin.z or 0 } or { 0, 0 }
  if not o.cell then t.cell = obj and obj.cell_size or 10 end
  return t
end

-- ================================================================ roads

--- Lay a road run's centre line on the ground (see the module comment).
-- @tparam table samples the centre line, `{x, y, z}` points (their y is replaced in place)
-- @tparam table ctrl its control points `{x, y, z}` (first and last: the run's ends; between:
--   through nodes and via points, each a sample of the centre line)
-- @tparam function height (x, z) → y
-- @tparam number blend metres
-- @tparam[opt] table spline options of `psdl.core.spline` (`spacing`, `max_angle`,
--   `half_width`, `planar_tol`, `start_dir`, `end_dir`): then the centre line is sampled
--   again from `ctrl` without the planarity halving (the climbs it was made for are not the
--   ground's), draped, and splined again through those samples with it, which adds samples
--   where a climbing curve needs them to keep its quads within `planar_tol` of planar
--   (every sample and control point stays one)
-- @treturn table the samples (a new list with `spline`)
function M.drape(samples, ctrl, height, blend, spline)
  if spline then
    local flat = {}
    for i, p in ipairs(ctrl) do flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = p[1], p[2], p[3] end
    local plan = core.spline(flat, { spacing = spline.spacing, max_angle = spline.max_angle,
                                     start_dir = spline.start_dir, end_dir = spline.end_dir })
    samples = {}
    for i = 1, #plan, 3 do samples[#samples + 1] = { plan[i], plan[i + 1], plan[i + 2] } end
  end
  local n = #samples
  if n < 2 then return samples end
  local s, T = { 0 }, {}
  for i = 1, n do
    local p = samples[i]
    if i > 1 then
      local q = samples[i - 1]
      local dx, dz = p[1] - q[1], p[3] - q[3]
      s[i] = s[i - 1] + sqrt(dx * dx + dz * dz)
    end
    local y = height(p[1], p[3])
    if not finite(y) then y = p[2] end
    T[i] = y
  end
  -- fixed points: the ends, and control points whose height is not the ground's
  local pins = { { i = 1, e = samples[1][2] - T[1] } }
  local k = 1
  for c = 2, #ctrl - 1 do
    local q = ctrl[c]
    for i = k + 1, n - 1 do
      local p = samples[i]
      if abs(p[1] - q[1]) < 1e-6 and abs(p[3] - q[3]) < 1e-6 then
        local e = q[2] - T[i]
        if abs(e) > 1e-3 then pins[#pins + 1] = { i = i, e = e } end
        k = i
        break
      end
    end
  end
  pins[#pins + 1] = { i = n, e = samples[n][2] - T[n] }
  for m = 1, #pins - 1 do
    local p, q = pins[m], pins[m + 1]
    local sp, sq = s[p.i], s[q.i]
    local D = min(blend, (sq - sp) / 2)
    for i = p.i, q.i do
      local o = 0
      if D > 1e-9 then
        local wa, wb = 1 - (s[i] - sp) / D, 1 - (sq - s[i]) / D
        if wa > 0 then o = o + p.e * wa end
        if wb > 0 then o = o + q.e * wb end
      elseif i == p.i then
        o = p.e
      else
        o = q.e
      end
      samples[i][2] = T[i] + o
    end
  end
  if not spline then return samples end
  local flat = {}
  for i = 1, n do
    local p = samples[i]
    flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = p[1], p[2], p[3]
  end
  local out = core.spline(flat, { spacing = spline.spacing, max_angle = spline.max_angle,
    half_width = spline.half_width, planar_tol = spline.planar_tol, start_dir = spline.start_dir,
    end_dir = spline.end_dir })
  local res = {}
  for i = 1, #out, 3 do res[#res + 1] = { out[i], out[i + 1], out[i + 2] } end
  return res
end

-- ================================================================ terrain ground

-- Plan bounding box of every room built so far: x0, z0, x1, z1.
local function network_box(b)
  local box = plan_box()
  local function take(refs) -- grows the box by the referenced points
    for _, ref in ipairs(refs) do
      local p = b:point(ref)
      box:add(p[1], p[3])
    end
  end
  for _, r in ipairs(b.rooms) do
    for _, op in ipairs(b:attributes(r)) do take(op.refs or {}) end
    take(r.outline or {})
  end
  return box.u0, box.v0, box.u1, box.v1
end

-- Grid lines along one axis: the union [lo, hi] cut at origin + k * g, plus the inner
-- rectangle's edges r0, r1 (grid lines themselves). A first or last piece shorter than a
-- quarter cell is merged into its neighbour (unless that would drop r0 or r1).
local function lines(o, g, lo, hi, r0, r1)
  local xs = { lo }
  for k = floor((lo - o) / g) + 1, ceil((hi - o) / g) - 1 do
    local v = o + k * g
    if v > lo + 1e-9 and v < hi - 1e-9 then xs[#xs + 1] = v end
  end
  if hi > lo then xs[#xs + 1] = hi end
  if #xs > 2 and xs[2] - xs[1] < 0.25 * g and xs[2] ~= r0 and xs[2] ~= r1 then table.remove(xs, 2) end
  local n = #xs
  if n > 2 and xs[n] - xs[n - 1] < 0.25 * g and xs[n - 1] ~= r0 and xs[n - 1] ~= r1 then table.remove(xs, n - 1) end
  local i0, i1
  for i, v in ipairs(xs) do
    if v == r0 then i0 = i end
    if v == r1 then i1 = i end
  end
  return xs, i0, i1
end

--- Plan the terrain ground of a city whose road rooms stand in builder `b`: the ground grid
-- and the apron's ring.
-- @tparam table t what `setup` returned
-- @tparam Builder b
-- @tparam number margin metres around the network (at least 1)
-- @treturn table `{xs, zs, ix0, ix1, iz0, iz1 (the inner rectangle's grid lines), ring =
--   {{x, y, z}...} (retail winding), cell, box = {x0, z0, x1, z1} (the network)}`
function M.plan(t, b, margin)
  local bx0, bz0, bx1, bz1 = network_box(b)
  if bx0 > bx1 then return nil end
  margin = max(margin or 0, 1)
  local ox, oz = t.origin[1], t.origin[2]
  local e = t.extent or { bx0 - margin, bz0 - margin, bx1 + margin, bz1 + margin }
  local g = t.cell
  -- coarsen the grid until the whole of it stays within max_points
  local W, Hh = max(e[3], bx1 + margin) - min(e[1], bx0 - margin), max(e[4], bz1 + margin) - min(e[2], bz0 - margin)
  local base = g
  for k = 1, 4096 do
    g = base * k
    if (W / g + 3) * (Hh / g + 3) <= t.max_points then break end
  end
  -- the inner rectangle: the margin around the network, cut back to the terrain's extent
  -- where that leaves at least a cell (or the margin) of clearance, snapped out to the grid
  local clear = min(margin, g)
  local wx0, wz0, wx1, wz1 = bx0 - margin, bz0 - margin, bx1 + margin, bz1 + margin
  if t.extent and t.ground then
    wx0, wz0 = min(max(wx0, e[1]), bx0 - clear), min(max(wz0, e[2]), bz0 - clear)
    wx1, wz1 = max(min(wx1, e[3]), bx1 + clear), max(min(wz1, e[4]), bz1 + clear)
  end
  local rx0 = ox + floor((wx0 - ox) / g + 1e-9) * g
  local rx1 = ox + ceil((wx1 - ox) / g - 1e-9) * g
  local rz0 = oz + floor((wz0 - oz) / g + 1e-9) * g
  local rz1 = oz + ceil((wz1 - oz) / g - 1e-9) * g
  local ux0, uz0, ux1, uz1 = min(e[1], rx0), min(e[2], rz0), max(e[3], rx1), max(e[4], rz1)
  if not t.ground or not t.extent then ux0, uz0, ux1, uz1 = rx0, rz0, rx1, rz1 end
  local xs, ix0, ix1 = lines(ox, g, ux0, ux1, rx0, rx1)
  local zs, iz0, iz1 = lines(oz, g, uz0, uz1, rz0, rz1)
  local h = t.height
  local function pt(i, j) -- grid point at xs[i], zs[j]
    local x, z = xs[i], zs[j]
    local y = h(x, z)
    if not finite(y) then error(string_format("terrain: height at (%g, %g) is not a finite number", x, z), 0) end
    return { x, y, z }
  end
  -- the ring: the inner rectangle in retail winding, every grid point on it
  local ring = {}
  for j = iz0, iz1 - 1 do ring[#ring + 1] = pt(ix0, j) end -- west side, northwards
  for i = ix0, ix1 - 1 do ring[#ring + 1] = pt(i, iz1) end -- north side, eastwards
  for j = iz1, iz0 + 1, -1 do ring[#ring + 1] = pt(ix1, j) end -- east side, southwards
  for i = ix1, ix0 + 1, -1 do ring[#ring + 1] = pt(i, iz0) end -- south side, westwards
  return { xs = xs, zs = zs, ix0 = ix0, ix1 = ix1, iz0 = iz0, iz1 = iz1, ring = ring, cell = g, pt = pt,
           box = { bx0, bz0, bx1, bz1 }, rect = { rx0, rz0, rx1, rz1 }, extent = { ux0, uz0, ux1, uz1 } }
end

--- Ground limits of the apron's rooms (`psdl.city.blocks`' `apron_ground`): pieces about
-- `apron_cell` (default the grid's cell) across, points every half cell on their cuts.
function M.apron_limits(t, plan)
  local c = t.apron_cell or plan.cell
  return { max_area = 2 * c * c, max_length = 2 * c, step = c / 2, max_points = 60 }
end

-- Split [a, b) (cell indices) into runs of at most k, as even as can be.
local function runs(a, b, k)
  local n = b - a
  local out = {}
  if n <= 0 then return out end
  local m = ceil(n / k)
  local at = a
  for r = 1, m do
    local len = floor(n * r / m) - floor(n * (r - 1) / m)
    out[#out + 1] = { at, at + len }
    at = at + len
  end
  return out
end

--- Build the terrain ground rooms outside the plan's inner rectangle.
-- @tparam Builder b
-- @tparam table t what `setup` returned
-- @tparam table plan what `plan` returned
-- @param texture a texture group or name
-- @treturn table the rooms (block rooms, named "terrain N")
function M.ground(b, t, plan, texture)
  local rooms = {}
  if not t.ground or not t.extent then return rooms end
  local xs, zs = plan.xs, plan.zs
  local nx, nz = #xs, #zs
  local ix0, ix1, iz0, iz1 = plan.ix0, plan.ix1, plan.iz0, plan.iz1
  local g = type(texture) == "table" and texture or b:texture(texture)
  local refs = {}
  local pt = plan.pt
  local function ref(i, j)
    local key = i * 65536 + j
    local r = refs[key]
    if not r then
      r = b:vertex(pt(i, j))
      refs[key] = r
    end
    return r
  end
  -- bands of cells (indices of their south-west corners): south, north, west, east
  local bands = {
    { 1, nx, 1, iz0 },     -- [a0, a1) x [c0, c1)
    { 1, nx, iz1, nz },
    { 1, ix0, iz0, iz1 },
    { ix1, nx, iz0, iz1 },
  }
  local k = t.room_cells
  for _, band in ipairs(bands) do
    for _, ra in ipairs(runs(band[1], band[2], k)) do
      for _, rc in ipairs(runs(band[3], band[4], k)) do
        local a0, a1, c0, c1 = ra[1], ra[2], rc[1], rc[2]
        local outline = {}
        for j = c0, c1 - 1 do outline[#outline + 1] = ref(a0, j) end
        for i = a0, a1 - 1 do outline[#outline + 1] = ref(i, c1) end
        for j = c1, c0 + 1, -1 do outline[#outline + 1] = ref(a1, j) end
        for i = a1, a0 + 1, -1 do outline[#outline + 1] = ref(i, c0) end
        local r = b:room{ kind = "block", name = string_format("terrain %d", #rooms + 1), outline_refs = outline }
        for i = a0, a1 - 1 do
          for j = c0, c1 - 1 do
            r:push({ type = "fan", group = g, refs = { ref(i, j), ref(i, j + 1), ref(i + 1, j + 1), ref(i + 1, j) } })
          end
        end
        rooms[#rooms + 1] = r
      end
    end
  end
  return rooms
end

-- ================================================================ the way back

local WALKABLE = { road = true, divided_road = true, walkway = true, sidewalk_strip = true, crosswalk = true,
                   road_fan = true, fan = true }

-- A copy of the document holding only walkable surfaces (drawn with a texture; dividers
-- flat at their median points' heights).
local function ground_document(doc, warp)
  local rooms = {}
  for r, room in ipairs(doc.rooms) do
    local flags = room.flags or 0
    local out = { { type = "texture", value = 1 } }
    if warp or (flags & 0x40) == 0 then
      for _, attr in ipairs(room.attributes or {}) do
        if type(attr) == "table" and WALKABLE[attr.type] then
          if attr.type == "divided_road" then
            local c = {}
            for kk, v in pairs(attr) do c[kk] = v end
            c.divider_type, c.divider_value, c.cap_start, c.cap_end = 1, 0, false, false
            attr = c
          end
          out[#out + 1] = attr
        end
      end
    end
    rooms[r] = { flags = flags, perimeter = room.perimeter, attributes = out }
  end
  return { vertices = doc.vertices, heights = doc.heights, textures = {}, rooms = rooms }
end

--- A city's ground as a height grid (see the module comment).
-- @param what a document (`psdl.read`, `city:build()`), or a `psdl.city` City (built if it
--   has not been)
-- @tparam[opt] table opts `cell` (m, default 10), `origin` (`{x, z}`, default the ground's
--   lowest x and z rounded down to the cell), `cols`, `rows` (default: to the ground's far
--   edges), `like` (a Terrain whose grid to use: origin, cell size, rows, columns), `warp`
--   (true: tunnel and bridge rooms count too), `fill` ("nearest", the default, or a height
--   for the points nothing covers)
-- @treturn Terrain (from `psdl.terrain.from_grid`), with `covered` (a read-only Heightfield
--   mask: one boolean per point, true where a surface was found), or `nil, message`
-- @treturn table `{triangles, covered, filled}`
function M.from_city(what, opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("bad argument #2 to 'from_city' (table expected)", 2) end
  for kk in pairs(opts) do
    if not ({ cell = true, origin = true, cols = true, rows = true, like = true, warp = true, fill = true })[kk] then
      error("bad argument #2 to 'from_city' (unknown option '" .. tostring(kk) .. "')", 2)
    end
  end
  local doc = what
  if type(what) == "table" and getmetatable(what) and what.build and what.nodes then
    doc = what.built and what.built.doc or what:build()
  end
  if type(doc) ~= "table" or type(doc.rooms) ~= "table" or type(doc.vertices) ~= "table" then
    error("bad argument #1 to 'from_city' (a PSDL document or a psdl.city City expected)", 2)
  end
  local export = require "psdl.export"
  local mesh = export.build(ground_document(doc, opts.warp))
  -- triangles: x, y, z of three points each, flat
  local tris = {}
  local minx, minz, maxx, maxz = huge, huge, -huge, -huge
  for _, grp in ipairs(mesh.groups) do
    for _, prim in ipairs(grp.prims) do
      local pos, idx = prim.pos, prim.idx
      for q = 1, #idx, 3 do
        local a, bb, c = idx[q], idx[q + 1], idx[q + 2]
        local ax, ay, az = pos[3 * a + 1], pos[3 * a + 2], pos[3 * a + 3]
        local bx, by, bz = pos[3 * bb + 1], pos[3 * bb + 2], pos[3 * bb + 3]
        local cx, cy, cz = pos[3 * c + 1], pos[3 * c + 2], pos[3 * c + 3]
        local d = (bx - ax) * (cz - az) - (bz - az) * (cx - ax)
        if abs(d) > 1e-9 then
          local n = #tris
          tris[n + 1], tris[n + 2], tris[n + 3] = ax, ay, az
          tris[n + 4], tris[n + 5], tris[n + 6] = bx, by, bz
          tris[n + 7], tris[n + 8], tris[n + 9] = cx, cy, cz
          minx, maxx = min(minx, ax, bx, cx), max(maxx, ax, bx, cx)
          minz, maxz = min(minz, az, bz, cz), max(maxz, az, bz, cz)
        end
      end
    end
  end
  if #tris == 0 then return nil, "the city has no ground surfaces to rasterise" end
  local like = opts.like
  local cell, ox, oz, cols, rows
  if like then
    cell, ox, oz, cols, rows = like.cell_size, like.origin.x, like.origin.z, like.cols, like.rows
  else
    cell = opts.cell or 10
    if not finite(cell) or cell <= 0 then error("bad argument #2 to 'from_city' (cell: positive number expected)", 2) end
    local o = opts.origin
    ox = o and (o.x or o[1]) or floor(minx / cell) * cell
    oz = o and (o.z or o[2]) or floor(minz / cell) * cell
    cols = opts.cols or (floor((maxx - ox) / cell + 1e-9) + 1)
    rows = opts.rows or (floor((maxz - oz) / cell + 1e-9) + 1)
  end
  -- a far or corrupt vertex (x = 9.8e20) or a NaN makes the grid absurd: say so before
  -- anything is formatted or allocated as an integer
  -- (at most 2048 x 2048 points, the heightmap limit of src/psdl_nhtg.h)
  if not (cols >= 0 and rows >= 0 and cols <= 4194304 and rows <= 4194304) or cols * rows > 4194304 then
    return nil, string_format("the ground spans x %.6g..%.6g, z %.6g..%.6g: a grid of %.6g x %.6g points of %.6g m "
      .. "is too big (at most 4,194,304 points, 2048 x 2048; a larger --cell-size makes fewer; is a vertex far "
      .. "away or corrupt?)", minx, maxx, minz, maxz, cols, rows, cell)
  end
  cols, rows = math.tointeger(cols) or cols, math.tointeger(rows) or rows
  if cols < 2 or rows < 2 then return nil, string_format("a grid of %d x %d points: at least 2 x 2 needed", cols, rows) end
  -- per point, in C (src/psdl_heightfield.c): the highest triangle over each point, then
  -- the points nothing covers from the nearest covered one (breadth first), or a constant
  local best, covered, ncov = core.heightfield_rasterize(tris, ox, oz, cell, rows, cols,
    type(opts.fill) == "number" and opts.fill or nil)
  if ncov == 0 then return nil, "no grid point lies on the city's ground (is the grid over the city?)" end
  local filled = cols * rows - ncov
  local T = require("psdl.terrain").from_grid({ rows = rows, cols = cols, heights = best, cell_size = cell },
    { cell_size = cell, origin = { x = ox, z = oz } })
  T.covered = covered
  return T, { triangles = #tris // 9, covered = ncov, filled = filled }
end

return M
