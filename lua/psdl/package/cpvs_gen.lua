--- Potentially visible sets (`city/<map>.cpvs`) of a city, computed from its own geometry
-- (companion-formats.md §3, "CF"). The result is the table `psdl.cpvs.encode` takes
-- (docs/companion.md): `{rooms = R, rows = {[r] = {visible = {ids...}}}}`.
--
-- Per room, the C caster (src/psdl_visibility.c) casts rays from 48 eye points over the room's
-- walkable surfaces, 15 m up (the top of the camera's range: over ground and building prisms
-- the top eye sees all a lower one at the same spot sees), against every triangle the game
-- draws (ground, roads, facades, roofs, tunnel walls; `psdl.export` makes them), up to the view
-- range (CF §3.5: 1,000 m), then aims rays from every eye at each room in range that no random
-- ray hit. A row is then: the rooms its rays hit and the rooms whose rays hit it
-- (`symmetric`), `dilate` (2) rings of perimeter neighbours around those, the room itself,
-- its perimeter neighbours and every room whose bounding box is within `close` metres (40 m:
-- what a sampled ray cast can miss close by costs little to draw). The rings make the rows
-- conservative: a far room seen through a narrow gap from one eye point is usually seen from
-- others through the same gap together with the rooms next to it, and a missed room pops in
-- while an extra one only costs draw time (CF §3.5's recipe errs the same way). Against a
-- sampling with ten times the rays, eyes at random heights and more aimed rays, downtown
-- misses 0.2 % of the room pairs and the London-scale bench city 1.6 % (bench/README.md).
--
-- Limits (CF §3.3, §3.4): the game decompresses a row into a 512-byte buffer, so room ids
-- must stay below 2,048; a city with more rooms is refused here (a CPVS cannot describe it;
-- `psdl.package.generate` refuses it first with the fix, and an OSM extract packaged by the
-- command line is fitted to 2,047 rooms beforehand: docs/package.md). A row may list at most
-- 511 other rooms (`cityLevel::Draw` stops at 512, in id order, so the game itself would drop
-- the highest ids whatever their distance): a longer row keeps the room itself, its
-- neighbours, the rooms rays hit and then the rooms only the rings or `close` added (within
-- each, the rooms that look largest from here first: distance / extent), and the report's
-- `cut` says how many rows were cut.
-- @module psdl.package.cpvs_gen

local string, table, math = string, table, math
local ipairs, pairs, type, error, require = ipairs, pairs, type, error, require
local sqrt, max, huge, floor = math.sqrt, math.max, math.huge, math.floor
local string_format = string.format

local M = {}

--- Largest room id a row can hold (512 bytes of 2-bit pairs, CF §3.3).
M.MAX_ROOM_ID = 2047
--- Most rooms a row lists (the draw cap, CF §3.4).
M.MAX_VISIBLE = 511

--- Default options.
M.DEFAULTS = { range = 1000, rays = 1024, eyes = 48, targeted = 24, frontier = 0, close = 40, threads = 2, batch = 32, dilate = 2, symmetric = true }

local function room_boxes(doc)
  local V = doc.vertices
  local boxes = {}
  for id, r in ipairs(doc.rooms) do
    local b = { huge, huge, -huge, -huge }
    for _, p in ipairs(r.perimeter) do
      local v = V[p.vertex]
      if v then
        if v[1] < b[1] then b[1] = v[1] end
        if v[3] < b[2] then b[2] = v[3] end
        if v[1] > b[3] then b[3] = v[1] end
        if v[3] > b[4] then b[4] = v[3] end
      end
    end
    boxes[id] = b
  end
  return boxes
end

-- diagonal of a room's bounding box (m), 0 for a room without a perimeter
local function extent(b)
  if b[1] > b[3] then return 0 end
  return sqrt((b[3] - b[1]) ^ 2 + (b[4] - b[2]) ^ 2)
end

local function box_distance(a, b)
  if a[1] > a[3] or b[1] > b[3] then return huge end
  local dx = max(0, a[1] - b[3], b[1] - a[3])
  local dz = max(0, a[2] - b[4], b[2] - a[4])
  return sqrt(dx * dx + dz * dz)
end

--- The triangles of a document as the caster takes them.
-- @treturn table flat x, y, z per corner (9 per triangle)
-- @treturn table room id per triangle
function M.triangles(doc)
  local mesh = require("psdl.export").build(doc)
  local tris, rooms = {}, {}
  local nt, nr = 0, 0
  for _, g in ipairs(mesh.groups) do
    local room = g.room or 0
    for _, prim in ipairs(g.prims) do
      local pos, idx = prim.pos, prim.idx
      for k = 1, #idx, 3 do
        for c = 0, 2 do
          local v = idx[k + c]
          tris[nt + 1], tris[nt + 2], tris[nt + 3] = pos[3 * v + 1], pos[3 * v + 2], pos[3 * v + 3]
          nt = nt + 3
        end
        nr = nr + 1
        rooms[nr] = room
      end
    end
  end
  return tris, rooms
end

--- Compute the CPVS table of a document.
-- @tparam table doc PSDL document
-- @tparam[opt] table opts `range` (m, 1000), `rays` (random rays per room, 1024), `eyes`
--   (per room, 48: at the top of the camera's 15 m, or a random height with
--   `random_height = true` as PVSGEN samples), `targeted` (rays aimed at each room in range no
--   random ray hit, 24: one or more from every eye; fewer beyond 150 m, at least 2),
--   `frontier` (rays aimed at each perimeter neighbour of a room found visible, flooding
--   outwards; 0 = off, the default), `dilate` (rings of perimeter neighbours
--   added around every room a ray hit, 2; 0 for only what rays reach), `symmetric` (true:
--   a room sees every room whose rays hit it), `close` (m, 40),
--   `seed` (integer, 1), `threads` (2), `progress` (function(done, total) called after each
--   batch of rooms)
-- @treturn table cpvs `{rooms = R, rows = {...}}`
-- @treturn table info `{cut = rows shortened to the draw cap, triangles = n, seconds =,
--   mean = mean row length, longest = longest row}`
-- @raise when the city has more rooms than a CPVS can describe
function M.generate(doc, opts)
  opts = opts or {}
  local o = {}
  for k, v in pairs(M.DEFAULTS) do o[k] = opts[k] == nil and v or opts[k] end
  local seed = opts.seed or 1
  if type(seed) ~= "number" then
    local h = 5381
    for i = 1, #tostring(seed) do h = (h * 33 + tostring(seed):byte(i)) % 4294967296 end
    seed = h
  end
  local R = #doc.rooms + 1
  if R - 1 > M.MAX_ROOM_ID then
    error(string_format("%d rooms: a CPVS row holds room ids below 2,048 only (512 bytes, CF §3.3); "
      .. "the game cannot show rooms beyond that: split the city", R - 1), 0)
  end
  local t0 = os.clock()
  local core = require "psdl.core"
  local tris, rooms = M.triangles(doc)
  local sub = {}
  for id, r in ipairs(doc.rooms) do
    if r.flags & 0x02 ~= 0 then sub[#sub + 1] = id end
  end
  -- perimeter neighbours as pairs, for the caster's flood (`frontier`)
  local pairs_ = {}
  for id, r in ipairs(doc.rooms) do
    for _, p in ipairs(r.perimeter) do
      local nb = p.neighbour
      if nb and nb > id and nb < R then pairs_[#pairs_ + 1] = id; pairs_[#pairs_ + 1] = nb end
    end
  end
  local vis = core.visibility(tris, rooms, R, sub, pairs_)
  pairs_ = nil
  tris, rooms = nil, nil
  local boxes = room_boxes(doc)
  -- rooms bucketed on a grid of `close`-sized cells (a room looks at the cells around it)
  -- (psdl.package.room_grid: walks bounded by the occupied cells, not by a room's box)
  local grid = require("psdl.package.room_grid").new(o.close > 1 and o.close or 1)
  for t = 1, R - 1 do grid:add(boxes[t], t) end
  local rows = {}
  local cut, total, longest = 0, 0, 0
  local copts = { range = o.range, rays = o.rays, eyes = o.eyes, targeted = o.targeted, frontier = o.frontier, seed = floor(seed) % 9007199254740991,
                  threads = o.threads, random_height = opts.random_height and true or false }
  local done = 0
  -- the rays first (the progress bar follows them), then the rows: a room whose rays hit
  -- room t is seen from t as well when `symmetric` (eyes are 1-15 m above both rooms, and
  -- what one room's eyes reach the other's usually reach back: the union is conservative)
  local hits = {}
  for first = 1, R - 1, o.batch do
    local last = math.min(first + o.batch - 1, R - 1)
    local h = vis:rows(first, last, copts)
    for r = first, last do hits[r] = h[r] end
    done = last
    if opts.progress then opts.progress(done, R - 1) end
  end
  if o.symmetric then
    local extra = {}
    for r = 1, R - 1 do
      for _, t in ipairs(hits[r]) do
        if t > 0 and t < R and t ~= r then
          local e = extra[t]
          if not e then e = {}; extra[t] = e end
          e[#e + 1] = r
        end
      end
    end
    for t, e in pairs(extra) do
      local row = hits[t]
      for _, r in ipairs(e) do row[#row + 1] = r end
    end
  end
  do
    local first, last = 1, R - 1
    for r = first, last do
      local set, keep = {}, {}
      set[r], keep[r] = true, true
      for _, p in ipairs(doc.rooms[r].perimeter) do
        local nb = p.neighbour
        if nb and nb > 0 and nb < R then set[nb], keep[nb] = true, true end
      end
      local ring, hit = {}, {}
      for _, t in ipairs(hits[r]) do
        if t > 0 and t < R then
          hit[t] = true
          if not set[t] then set[t] = true; ring[#ring + 1] = t end
        end
      end
      -- a room seen through a gap: its perimeter neighbours (`dilate` rings of them) can show
      -- through the same gap from eye points the sampling did not try
      for _ = 1, o.dilate do
        local nextr = {}
        for _, t in ipairs(ring) do
          for _, p in ipairs(doc.rooms[t].perimeter) do
            local nb = p.neighbour
            if nb and nb > 0 and nb < R and not set[nb] then set[nb] = true; nextr[#nextr + 1] = nb end
          end
        end
        ring = nextr
      end
      local br = boxes[r]
      grid:query(br, 1, function(t)
        if not set[t] and box_distance(br, boxes[t]) <= o.close then set[t] = true end
      end)
      local ids = {}
      for t in pairs(set) do ids[#ids + 1] = t end
      if #ids > M.MAX_VISIBLE then
        -- the draw cap: the room, its neighbours, the rooms rays hit, then the rooms only the
        -- rings or the `close` distance added; within each, the rooms that look largest
        -- from here first (distance / extent: the reference's rays hit a room about as
        -- often as the angle it covers; plain nearest first missed 2.2 % of the London
        -- bench city's reference pairs, this 1.6 %, bench/README.md)
        local d = {}
        for _, t in ipairs(ids) do
          d[t] = keep[t] and -1 or (hit[t] and 0 or 1e7) + box_distance(br, boxes[t]) / (extent(boxes[t]) + 1)
        end
        table.sort(ids, function(a, b) if d[a] ~= d[b] then return d[a] < d[b] end return a < b end)
        for i = #ids, M.MAX_VISIBLE + 1, -1 do ids[i] = nil end
        cut = cut + 1
      end
      table.sort(ids)
      rows[r] = { visible = ids }
      total = total + #ids
      if #ids > longest then longest = #ids end
    end
  end
  local ntri = vis:triangles()
  vis:close()
  return { rooms = R, rows = rows }, {
    cut = cut, triangles = ntri, seconds = os.clock() - t0, mean = R > 1 and total / (R - 1) or 0, longest = longest,
  }
end

--- Compare two CPVS tables of the same city (a sampling against a denser reference).
-- @tparam table got `{rows = {[r] = {visible = {ids...}}}}`
-- @tparam table ref the same shape, the reference
-- @treturn integer pairs (r, t) in `ref` that `got` lacks (the misses)
-- @treturn integer pairs in `ref`
-- @treturn integer pairs in `got` that `ref` lacks
function M.compare(got, ref)
  local miss, total, extra = 0, 0, 0
  for r, row in pairs(ref.rows) do
    local have = {}
    local grow = got.rows[r]
    for _, t in ipairs(grow and grow.visible or {}) do have[t] = true end
    for _, t in ipairs(row.visible) do
      total = total + 1
      if have[t] then have[t] = nil else miss = miss + 1 end
    end
    for _ in pairs(have) do extra = extra + 1 end
  end
  return miss, total, extra
end

return M
