--- The AI road network (`city/<map>.bai`) of a city, generated from its PSDL document
-- (companion-formats.md §2, "CF"): one AI road per PSDL road record in record order, one
-- intersection per junction room (flag 0x10), culling lists for every room. The result is
-- the table `psdl.bai.encode` takes (docs/companion.md).
--
-- Readings taken where CF marks [INFER] (also in docs/package.md):
--
-- * side A = the strip's vertex 0/1 side = the record's `lanes_left` (PF §1.7 "side 0/left");
--   side A traffic runs against the section order and arrives at the first section (CF §2.4);
-- * lanes evenly between the centre line (the divider's curb on divided roads) and the curb,
--   lane 1 next to the centre (CF §2.5); on a one-way undivided road (one side without
--   lanes) the lanes span the whole carriageway, curb to curb; params as CF §2.5's recommended fill; lateral = the
--   distance of each row from the centre line; half width = the curb distance;
-- * intersection road lists by decreasing atan2(z, x) of each arm (CF §2.6);
-- * rules, at junctions of three or more arms: traffic lights on every approach where three
--   or more arms are major roads (two or more lanes a side, divided or freeway: avenues and
--   bigger crossing); stop signs on the minor approaches where one or two major arms (a
--   major road passing) meet minor ones; an all-way stop where all arms are minor; no control
--   at bends and dead ends, nor on an approach that no lane arrives by;
-- * a road end with no junction room next to it gets a dead-end intersection in the
--   road's end room, not a new junction room: CF §2.8 says a dead end needs one too,
--   §2.6 that the intersection room is a junction room (flag 0x10) in >90 % of retail, i.e.
--   not always, and a built cap room would change the city's PSDL; its centre lies 1 m
--   inside the end room so that it can be the cruise start (CF §2.9: a city of one street has
--   two dead ends, the second is the start); how the game drives a dead end is open (CF §11 q4);
-- * culling: a road is in a room's near list when the rooms' bounding boxes (XZ) are within
--   `near` metres (200) of one of the road's rooms, in the in list within `in_range` (120) and
--   when the road has a walkable side (CF §2.10, PEDIT's rule with boxes).
-- @module psdl.package.bai_gen

local string, table, math = string, table, math
local ipairs, pairs, type, error, tostring = ipairs, pairs, type, error, tostring
local sqrt, abs, atan, max, min, huge = math.sqrt, math.abs, math.atan, math.max, math.min, math.huge
local string_format = string.format

local M = {}

--- PSDL road-record flags (PF §1.7) and BAI road flags (CF §2.7).
M.RECORD = { divided = 0x08, alley = 0x10, freeway = 0x20, sidewalks = 0x40 }
M.AIPATH = { divided = 0x1, alley = 0x2, freeway = 0x4, flat = 0x8 }
--- End rules (CF §2.3).
M.RULE = { stop = 0, light = 1, none = 3 }
--- Most lanes a side can describe (CF §2.9, §2.5).
M.MAX_LANES = 4
--- PSDL room flags that keep an intersection from being the cruise start (CF §2.9). The
-- game tests its own lvlRoomInfo flags 0x24 and 0x0A, which it derives at load and which are
-- not the PSDL's (PF §11 item 11): room-info 0x02/0x08 come from PSDL flag 0x02
-- (subterranean), 0x04 from deep water (no room of ours), 0x20 from `.inst` landmarks (flag
-- 0x100; our `_ai.inst` signs have flags 0). So PSDL road (0x08), junction (0x10) and block
-- (0x04) rooms all qualify; the generator keeps off subterranean rooms (0x02) and, as a
-- precaution of ours, warp rooms (0x40: a bridge deck or tunnel, where the point may be
-- claimed by the room above or below). Same value as `psdl.bai.START_ROOM_FLAGS`.
M.START_ROOM_FLAGS = require("psdl.bai").START_ROOM_FLAGS

local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
local function mid(a, b) return { (a[1] + b[1]) / 2, (a[2] + b[2]) / 2, (a[3] + b[3]) / 2 } end
local function lerp(a, b, t) return { a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t, a[3] + (b[3] - a[3]) * t } end
local function len3(v) return sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) end
local function dist(a, b) return len3(sub(a, b)) end
local function dist_xz(a, b) return sqrt((a[1] - b[1]) ^ 2 + (a[3] - b[3]) ^ 2) end
local function unit(v)
  local l = len3(v)
  if l < 1e-9 then return nil end
  return { v[1] / l, v[2] / l, v[3] / l }
end
local function cross(a, b)
  return { a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1] }
end
local function copy3(p) return { p[1], p[2], p[3] } end

-- Cumulative 3D lengths of a polyline, starting at 0.
local function cumulative(pts)
  local out, s = { 0 }, 0
  for i = 2, #pts do
    s = s + dist(pts[i - 1], pts[i])
    out[i] = s
  end
  return out
end

local function reversed(t)
  local r = {}
  for i = #t, 1, -1 do r[#r + 1] = t[i] end
  return r
end

--- The cross-sections of a room's carriageway strip: a list of `{outer_a, curb_a, inner_a,
-- inner_b, curb_b, outer_b, origin}` (points), or nil when the room has no road, divided
-- road or walkway strip. Rooms with several strips give their sections in attribute order.
-- @tparam table doc PSDL document
-- @tparam integer room game room id
-- @treturn table|nil sections
-- @treturn string|nil kind "road", "divided_road" or "walkway" (of the first strip)
function M.room_sections(doc, room)
  local r = doc.rooms[room]
  if not r then return nil end
  local V = doc.vertices
  local out, kind = {}, nil
  for _, a in ipairs(r.attributes) do
    local t = a.type
    if t == "road" or t == "divided_road" or t == "walkway" then
      kind = kind or t
      local vs = a.vertices
      local stride = t == "road" and 4 or (t == "divided_road" and 6 or 2)
      for i = 1, #vs - stride + 1, stride do
        local p = {}
        for k = 0, stride - 1 do
          local v = V[vs[i + k]]
          if not v then return nil end
          p[k + 1] = v
        end
        local s
        if t == "road" then
          local c = mid(p[2], p[3])
          s = { p[1], p[2], c, c, p[3], p[4], c }
        elseif t == "divided_road" then
          s = { p[1], p[2], p[3], p[4], p[5], p[6], mid(p[3], p[4]) }
        else
          local c = mid(p[1], p[2])
          s = { p[1], p[1], c, c, p[2], p[2], c }
        end
        out[#out + 1] = s
      end
    end
  end
  if #out == 0 then return nil end
  return out, kind
end

-- a section seen from the other end: sides swapped
local function flip(s) return { s[6], s[5], s[4], s[3], s[2], s[1], s[7] } end

-- The sections of a road record, oriented and without repeats; rooms = absolute ids.
local function record_sections(doc, rec, k)
  local all, kinds = {}, {}
  local flipped = false -- the first room's strip runs against the record's room order
  for j, id in ipairs(rec.rooms) do
    local room = id < 0 and -id or id
    local secs, kind = M.room_sections(doc, room)
    if not secs then
      error(string_format("road record %d: room %d has no road, divided road or walkway strip "
        .. "(a road record lists carriageway rooms, PF §1.7)", k, room), 0)
    end
    kinds[kind] = true
    if #all > 0 then
      local last = all[#all][7]
      local d_first, d_last = dist(last, secs[1][7]), dist(last, secs[#secs][7])
      if d_last < d_first then
        local r = {}
        for i = #secs, 1, -1 do r[#r + 1] = flip(secs[i]) end
        secs = r
      end
      if dist(last, secs[1][7]) < 0.01 then table.remove(secs, 1) end
    elseif j == 1 and #rec.rooms > 1 then
      -- the first room's direction: towards the second room
      local nxt = M.room_sections(doc, rec.rooms[2] < 0 and -rec.rooms[2] or rec.rooms[2])
      if nxt then
        local a, b = secs[1][7], secs[#secs][7]
        local dn = min(dist(b, nxt[1][7]), dist(b, nxt[#nxt][7]))
        local dr = min(dist(a, nxt[1][7]), dist(a, nxt[#nxt][7]))
        if dr < dn then
          local r = {}
          for i = #secs, 1, -1 do r[#r + 1] = flip(secs[i]) end
          secs = r
          flipped = true
        end
      end
    end
    for _, s in ipairs(secs) do all[#all + 1] = s end
  end
  -- drop sections that repeat their predecessor (zero-length steps break the frames)
  local out = {}
  for _, s in ipairs(all) do
    if #out == 0 or dist(out[#out][7], s[7]) > 1e-3 then out[#out + 1] = s end
  end
  if #out < 2 then
    error(string_format("road record %d: fewer than two distinct cross-sections (a BAI road needs two, CF §2.9)", k), 0)
  end
  return out, kinds, flipped
end

-- Perimeter points (XZ polygon) of a room.
local function perimeter_points(doc, room)
  local pts = {}
  for _, p in ipairs(doc.rooms[room].perimeter) do
    local v = doc.vertices[p.vertex]
    if v then pts[#pts + 1] = v end
  end
  return pts
end

--- Whether the point (x, z) lies inside the polygon of points `{x, y, z}` (even-odd rule):
-- `psdl.plan.inside`.
-- @function inside
-- @treturn boolean
M.inside = require("psdl.plan").inside

--- Distance in XZ from a point to a polygon's boundary.
function M.distance_to_polygon(poly, x, z)
  local best = huge
  local n = #poly
  for i = 1, n do
    local a, b = poly[i], poly[i % n + 1]
    local dx, dz = b[1] - a[1], b[3] - a[3]
    local l2 = dx * dx + dz * dz
    local t = l2 > 0 and ((x - a[1]) * dx + (z - a[3]) * dz) / l2 or 0
    if t < 0 then t = 0 elseif t > 1 then t = 1 end
    local px, pz = a[1] + t * dx, a[3] + t * dz
    local d = sqrt((x - px) ^ 2 + (z - pz) ^ 2)
    if d < best then best = d end
  end
  return best
end

-- A point inside a room (XZ), with the room's mean height: the area centroid when inside,
-- else the vertex average, else the midpoint of a chord inside.
local function room_center(doc, room)
  local poly = perimeter_points(doc, room)
  if #poly == 0 then return nil end
  local sy, ax, az, a2 = 0, 0, 0, 0
  local vx, vz = 0, 0
  for i, p in ipairs(poly) do
    local q = poly[i % #poly + 1]
    local c = p[1] * q[3] - q[1] * p[3]
    a2 = a2 + c
    ax = ax + (p[1] + q[1]) * c
    az = az + (p[3] + q[3]) * c
    sy = sy + p[2]
    vx, vz = vx + p[1], vz + p[3]
  end
  local y = sy / #poly
  local cands = {}
  if abs(a2) > 1e-9 then cands[#cands + 1] = { ax / (3 * a2), az / (3 * a2) } end
  cands[#cands + 1] = { vx / #poly, vz / #poly }
  for i = 1, #poly do
    local a, b = poly[i], poly[(i + 1) % #poly + 1]
    cands[#cands + 1] = { (a[1] + b[1]) / 2, (a[3] + b[3]) / 2 }
  end
  for _, c in ipairs(cands) do
    if M.inside(poly, c[1], c[2]) and M.distance_to_polygon(poly, c[1], c[2]) > 0.05 then
      return { c[1], y, c[2] }, poly
    end
  end
  return { cands[1][1], y, cands[1][2] }, poly
end

-- One side of a road: lanes, sidewalk, curb, edge rows and the per-side numbers.
-- `which` is "a" or "b"; sections as record_sections gives them.
local function make_side(secs, which, nlanes, frames, opts)
  local n = #secs
  local oi, ci, ii = 1, 2, 3
  if which == "b" then oi, ci, ii = 6, 5, 4 end
  -- a one-way undivided road: its lanes span the whole carriageway, from the other curb
  if opts.full then ii = which == "a" and 5 or 2 end
  local lanes = {}
  for l = 1, nlanes do
    local row = {}
    local t = (l - 0.5) / nlanes
    for s = 1, n do row[s] = lerp(secs[s][ii], secs[s][ci], t) end
    if which == "a" then row = reversed(row) end -- side A travels against the section order
    lanes[l] = row
  end
  local sidewalk, curb, edge = {}, {}, {}
  for s = 1, n do
    local o, c = secs[s][oi], secs[s][ci]
    sidewalk[s] = mid(c, o)
    curb[s] = copy3(c)
    edge[s] = copy3(o)
  end
  local lengths = {}
  for l = 1, nlanes do lengths[l] = cumulative(lanes[l]) end
  lengths[nlanes + 1] = cumulative(sidewalk)
  -- distances from the centre line (mean over sections, measured along the section's x axis)
  local sign = which == "a" and 1 or -1
  local function off(p, s) -- signed: positive towards this side
    local o, x = frames.origin[s], frames.x[s]
    return sign * ((p[1] - o[1]) * x[1] + (p[3] - o[3]) * x[3])
  end
  local d_inner, d_curb, d_outer = 0, 0, 0
  for s = 1, n do
    d_inner = d_inner + off(secs[s][ii], s)
    d_curb = d_curb + off(secs[s][ci], s)
    d_outer = d_outer + off(secs[s][oi], s)
  end
  d_inner, d_curb, d_outer = d_inner / n, d_curb / n, d_outer / n
  local lateral = {}
  for l = 1, nlanes do lateral[l] = abs(d_inner + (d_curb - d_inner) * (l - 0.5) / nlanes) end
  lateral[nlanes + 1] = abs(d_curb + d_outer) / 2
  local params = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
  for l = 1, nlanes do
    params[2 * l - 1] = d_inner + (d_curb - d_inner) * (l - 1) / nlanes -- params[2i]: inner edge
    params[2 * l] = d_inner + (d_curb - d_inner) * l / nlanes           -- params[2i+1]: outer edge
  end
  params[2 * nlanes + 1] = d_curb
  params[2 * nlanes + 2] = d_outer
  local flags = 0
  if nlanes == 0 then flags = flags | 1 end
  if d_outer - d_curb < 0.5 and not opts.walkway then flags = flags | 2 end
  return {
    flags = flags, sidewalks = 1, lanes = lanes, lengths = lengths, lateral = lateral, params = params,
    sidewalk = sidewalk, trams = {}, trains = {}, curb = curb, edge = edge,
  }, d_curb
end

-- Section frames (CF §2.3, §2.11 step 2).
local function frames_of(secs)
  local n = #secs
  local origin, x, y, z, w = {}, {}, {}, {}, {}
  for s = 1, n do origin[s] = copy3(secs[s][7]) end
  for s = 1, n do
    local zb = s == 1 and sub(origin[1], origin[2]) or sub(origin[s - 1], origin[s])
    local zu = unit(zb) or { 0, 0, -1 }
    local wf = sub(origin[math.min(s + 1, n)], origin[math.max(s - 1, 1)])
    local wu = unit(wf) or { -zu[1], -zu[2], -zu[3] }
    -- x: horizontal, towards side A's curb
    local ca = secs[s][2]
    local xa = { ca[1] - origin[s][1], 0, ca[3] - origin[s][3] }
    local xu = unit(xa)
    local xr = unit({ -zu[3], 0, zu[1] }) or { 1, 0, 0 }
    if not xu or (xu[1] * xr[1] + xu[3] * xr[3]) < 0.5 then xu = xr end
    z[s], w[s], x[s] = zu, wu, xu
    y[s] = unit(cross(xu, zu)) or { 0, 1, 0 }
  end
  return { origin = origin, x = x, y = y, z = z, w = w }
end

local function bbox_of(points, box)
  box = box or { huge, huge, -huge, -huge }
  for _, p in ipairs(points) do
    if p[1] < box[1] then box[1] = p[1] end
    if p[3] < box[2] then box[2] = p[3] end
    if p[1] > box[3] then box[3] = p[1] end
    if p[3] > box[4] then box[4] = p[3] end
  end
  return box
end

local function box_distance(a, b)
  local dx = max(0, a[1] - b[3], b[1] - a[3])
  local dz = max(0, a[2] - b[4], b[2] - a[4])
  return sqrt(dx * dx + dz * dz)
end

--- Why a document cannot carry AI roads at all: it has no road records (CF §2.8, §2.9).
-- Checked by `generate`, and by `psdl package` before it validates the city (the fix named here
-- is the one a modder needs first).
-- @tparam table doc PSDL document
-- @treturn string|nil the message, nil when the document has road records
function M.no_records(doc)
  if #(doc.roads or {}) > 0 then return nil end
  local road_rooms = 0
  for _, r in ipairs(doc.rooms) do
    if r.flags & 0x08 ~= 0 then road_rooms = road_rooms + 1 end
  end
  return string_format("the city has no road records (%d room%s with the road flag 0x08): the AI roads, "
    .. "intersections and the cruise start are made from them (CF §2.8, §2.9); add one road record per "
    .. "street, listing its road rooms in order (a builder script: b:road_record{rooms = rooms, lanes_left = "
    .. "{0.5}, lanes_right = {0.5}} after b:street; psdl.city adds them itself)", road_rooms, road_rooms == 1 and "" or "s")
end

--- Generate the BAI table of a document.
-- @tparam table doc PSDL document with road records (`doc.roads`)
-- @tparam[opt] table opts `left_hand` (true: equal lane counts on two-way roads, CF §2.4),
--   `near` (m, 200), `in_range` (m, 120)
-- @treturn table bai (the shape `psdl.bai.encode` takes)
-- @treturn table info `{notes = {...}, start = intersection index of the first valid cruise
--   start, junctions = {[room] = intersection}, road_of_room = {[room] = road}}`
-- @raise with a message naming the road record or room when the city cannot carry a BAI
-- long: one pass per BAI table (roads, intersections, rules, cruise start, culling) over
-- the room and road indices built at its start; each pass is commented and reads the
-- previous ones' tables
function M.generate(doc, opts)
  opts = opts or {}
  local records = doc.roads or {}
  local R = #doc.rooms + 1
  local notes = {}
  local none = M.no_records(doc)
  if none then error(none, 0) end
  -- junction rooms: flag 0x10
  local junction_rooms = {}
  for id, r in ipairs(doc.rooms) do
    if r.flags & 0x10 ~= 0 then junction_rooms[#junction_rooms + 1] = id end
  end
  local jpoly, jcenter = {}, {}
  for _, id in ipairs(junction_rooms) do
    jcenter[id], jpoly[id] = room_center(doc, id)
  end
  local road_of_room = {}
  local roads, arms_at = {}, {} -- arms_at[key] = list of {road, end_name, dir}
  local road_info = {}
  local dead_ends = {}
  for k, rec in ipairs(records) do
    local secs, kinds, flipped = record_sections(doc, rec, k)
    local rooms = {}
    for j, id in ipairs(rec.rooms) do
      local room = id < 0 and -id or id
      if room < 1 or room >= R then
        error(string_format("road record %d: room %d does not exist (R = %d)", k, room, R), 0)
      end
      if road_of_room[room] then
        error(string_format("room %d is listed by road records %d and %d (every road room belongs to one AI road)",
          room, road_of_room[room], k), 0)
      end
      road_of_room[room] = k
      rooms[j] = room
    end
    local walkway = kinds.walkway and not kinds.road and not kinds.divided_road
    local fr = frames_of(secs)
    local na, nb = #rec.lanes_left, #rec.lanes_right
    -- lane counts are per strip side (PF §1.7): swap them when the strip was turned round
    if flipped then na, nb = nb, na end
    if walkway then
      -- a rectangle strip (alley, footpath): traffic only when a car fits in each half
      local hw = dist_xz(secs[1][1], secs[1][6]) / 2
      if hw < 2.4 then na, nb = 0, 0 end
    end
    if opts.left_hand and na > 0 and nb > 0 and na ~= nb then
      notes[#notes + 1] = string_format("road %d: %d and %d lanes made equal (%d) for left-hand traffic (CF §2.4)",
        k, na, nb, max(na, nb))
      na, nb = max(na, nb), max(na, nb)
    end
    if na > M.MAX_LANES or nb > M.MAX_LANES then
      notes[#notes + 1] = string_format("road %d: %d/%d lanes capped at %d a side (CF §2.9)", k, na, nb, M.MAX_LANES)
      na, nb = min(na, M.MAX_LANES), min(nb, M.MAX_LANES)
    end
    local divided = kinds.divided_road and true or false
    local side_a, curb_a = make_side(secs, "a", na, fr, { walkway = walkway, full = nb == 0 and na > 0 and not divided })
    local side_b, curb_b = make_side(secs, "b", nb, fr, { walkway = walkway, full = na == 0 and nb > 0 and not divided })
    local flags = 0
    if rec.flags & M.RECORD.divided ~= 0 then flags = flags | M.AIPATH.divided end
    if rec.flags & M.RECORD.alley ~= 0 then flags = flags | M.AIPATH.alley end
    if rec.flags & M.RECORD.freeway ~= 0 then flags = flags | M.AIPATH.freeway end
    local road = {
      flags = flags, rooms = rooms, half_width = max(curb_a, curb_b), speed_limit = 15.0,
      side_a = side_a, side_b = side_b, centre_length = cumulative(fr.origin),
      origin = fr.origin, x_axis = fr.x, y_axis = fr.y, z_axis = fr.z, w_axis = fr.w,
    }
    roads[k] = road
    local major = (na >= 2 or nb >= 2) or flags & (M.AIPATH.divided | M.AIPATH.freeway) ~= 0
    road_info[k] = { secs = secs, lanes_a = na, lanes_b = nb, major = major, walkway = walkway }
    -- the junction at each end: a junction room next to the end room whose outline passes
    -- within a metre of the end section's centre
    for _, e in ipairs({ "first", "last" }) do
      local room = e == "first" and rooms[1] or rooms[#rooms]
      local s = e == "first" and 1 or #secs
      local o = secs[s][7]
      local best, bd = nil, huge
      for _, p in ipairs(doc.rooms[room].perimeter) do
        local nbr = p.neighbour
        if nbr and nbr > 0 and jpoly[nbr] and not road_of_room[nbr] then
          local d = M.distance_to_polygon(jpoly[nbr], o[1], o[3])
          if d < bd then best, bd = nbr, d end
        end
      end
      -- direction of the arm away from the junction, along the road
      local inward = e == "first" and sub(secs[math.min(2, #secs)][7], o) or sub(secs[math.max(#secs - 1, 1)][7], o)
      local key
      if best and bd <= 1.0 then
        key = best
      else
        -- a dead end: its centre goes 1 m (at most half the end segment) into the end
        -- room along the road, so that the game's FindRoomId of the centre (the cruise start,
        -- CF §2.6, §2.9) lands in this room and not on its boundary
        key = "dead_end:" .. k .. ":" .. e
        local dir, seg = unit(inward), len3(inward)
        local c = copy3(o)
        if dir then c = { o[1] + dir[1] * min(1, seg / 2), o[2] + dir[2] * min(1, seg / 2), o[3] + dir[3] * min(1, seg / 2) } end
        dead_ends[#dead_ends + 1] = { key = key, room = room, center = c, road = k }
      end
      arms_at[key] = arms_at[key] or {}
      local arm = { road = k, ["end"] = e, angle = atan(inward[3], inward[1]) }
      table.insert(arms_at[key], arm)
      road_info[k][e] = { key = key, arm = arm }
    end
  end
  -- intersections: junction rooms in room order, then dead-end intersections in road order
  local inters, index_of = {}, {}
  local function add_inter(key, room, center)
    local arms = arms_at[key] or {}
    table.sort(arms, function(p, q)
      if p.angle ~= q.angle then return p.angle > q.angle end -- decreasing atan2(z, x), CF §2.6
      if p.road ~= q.road then return p.road < q.road end
      return p["end"] < q["end"]
    end)
    local list = {}
    for i, arm in ipairs(arms) do
      list[i] = arm.road
      arm.position = i
    end
    inters[#inters + 1] = { room = room, center = center, roads = list, arms = arms, key = key }
    index_of[key] = #inters
  end
  for _, id in ipairs(junction_rooms) do
    if not road_of_room[id] then
      if not arms_at[id] then
        notes[#notes + 1] = string_format("junction room %d: no road record ends at it; its intersection has no roads", id)
      end
      add_inter(id, id, jcenter[id] or { 0, 0, 0 })
    end
  end
  for _, s in ipairs(dead_ends) do
    notes[#notes + 1] = string_format("road %d: no junction room at its %s end; a dead-end intersection in room %d",
      s.road, s.key:match("(%a+)$"), s.room)
    add_inter(s.key, s.room, s.center)
  end
  -- rules per end (traffic arriving there) and light poles
  for _, it in ipairs(inters) do
    local n = #it.arms
    local majors = 0
    for _, arm in ipairs(it.arms) do
      if road_info[arm.road].major then majors = majors + 1 end
    end
    for _, arm in ipairs(it.arms) do
      local info = road_info[arm.road]
      local rule = M.RULE.none
      if n >= 3 then
        if majors >= 3 then rule = M.RULE.light          -- avenues and bigger cross: lights
        elseif majors >= 1 then                           -- a major road passes: stop the minor ones
          rule = info.major and M.RULE.none or M.RULE.stop
        else rule = M.RULE.stop end                       -- minor roads only: all-way stop
      end
      -- arriving lanes: side B at the last section, side A at the first
      local arriving = arm["end"] == "last" and info.lanes_b or info.lanes_a
      if arriving == 0 then rule = M.RULE.none end
      local road = roads[arm.road]
      local e = { intersection = index_of[it.key], light_index = 0xCDCD, rule = rule, flags = 0,
                  road_index = arm.position, light_pos = { 0, 0, 0 }, light_axis = { 0, 0, 0 } }
      if rule == M.RULE.light then
        local side = arm["end"] == "last" and road.side_b or road.side_a
        local s = arm["end"] == "last" and #road.origin or 1
        e.light_pos = copy3(side.sidewalk[s])
        e.light_axis = copy3(side.edge[s])
      end
      if arm["end"] == "last" then road.end_last = e else road.end_first = e end
    end
    it.arms, it.key = nil, nil
  end
  if #inters < 2 then
    error(string_format("the city has %d intersection%s: the game needs at least 2 (CF §2.9: the cruise start "
      .. "divides by nIntersections - 1)", #inters, #inters == 1 and "" or "s"), 0)
  end
  -- cruise start (CF §2.9): an intersection with index >= 2 (1-based) whose room has none of
  -- the flags 0x24 / 0x0A and none of whose roads is a freeway or an alley
  local function qualifies(i)
    local it = inters[i]
    local room = doc.rooms[it.room]
    if not room or room.flags & M.START_ROOM_FLAGS ~= 0 then return false end
    if #it.roads == 0 then return false end
    for _, k in ipairs(it.roads) do
      if roads[k].flags & (M.AIPATH.freeway | M.AIPATH.alley) ~= 0 then return false end
    end
    return true
  end
  local start
  for i = 2, #inters do
    if qualifies(i) then start = i; break end
  end
  if not start and qualifies(1) then
    -- move the only qualifying intersection to position 2
    local a, b = inters[1], inters[2]
    inters[1], inters[2] = b, a
    for _, road in ipairs(roads) do
      for _, e in ipairs({ road.end_first, road.end_last }) do
        if e.intersection == 1 then e.intersection = 2 elseif e.intersection == 2 then e.intersection = 1 end
      end
    end
    start = 2
  end
  if not start then
    error(string_format("no intersection qualifies as a cruise start (CF §2.9: the game retries forever and hangs "
      .. "at load): each of the %d intersections is in a subterranean or warp room (PSDL flags 0x02/0x40) or "
      .. "has a freeway or alley road; add an ordinary street (a road record without flags 0x10/0x20) whose "
      .. "junction or dead end lies in a surface room", #inters), 0)
  end
  -- culling lists (CF §2.10)
  local near_r, in_r = opts.near or 200, opts.in_range or 120
  local room_box = {}
  for id = 1, R - 1 do room_box[id] = bbox_of(perimeter_points(doc, id)) end
  local road_boxes = {}
  for k, road in ipairs(roads) do
    local boxes = {}
    for j, room in ipairs(road.rooms) do boxes[j] = room_box[room] end
    road_boxes[k] = boxes
  end
  -- road rooms bucketed on a grid of near_r cells: a room looks at the 3 x 3 cells around it
  -- (psdl.package.room_grid: walks bounded by the occupied cells, so a room with one far
  -- vertex cannot make it loop over ~1e18 cells)
  local grid = require("psdl.package.room_grid").new(near_r > 0 and near_r or 1)
  for k in ipairs(roads) do
    for _, b in ipairs(road_boxes[k]) do grid:add(b, k) end
  end
  local near, inl = { [0] = {} }, { [0] = {} }
  for id = 1, R - 1 do
    local rb = room_box[id]
    local nl, il = {}, {}
    if rb[1] <= rb[3] then
      local cand, seen = {}, {}
      grid:query(rb, 1, function(k)
        if not seen[k] then seen[k] = true; cand[#cand + 1] = k end
      end)
      table.sort(cand)
      for _, k in ipairs(cand) do
        local road = roads[k]
        local d = huge
        for _, b in ipairs(road_boxes[k]) do
          local dd = box_distance(rb, b)
          if dd < d then d = dd end
        end
        if d <= near_r then
          nl[#nl + 1] = k
          local walk = (road.side_a.flags & 2 == 0) or (road.side_b.flags & 2 == 0)
          if d <= in_r and walk then il[#il + 1] = k end
        end
      end
    end
    -- a road's own rooms always list it
    if road_of_room[id] then
      local k = road_of_room[id]
      local has = false
      for _, x in ipairs(nl) do if x == k then has = true end end
      if not has then nl[#nl + 1] = k; table.sort(nl) end
    end
    near[id], inl[id] = nl, il
  end
  local bai = { roads = roads, intersections = inters, cull_rooms = R, near = near, ["in"] = inl }
  return bai, { notes = notes, start = start, road_of_room = road_of_room, junction_rooms = junction_rooms }
end

return M
