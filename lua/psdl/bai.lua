--- `city/<map>.bai`, the AI road network (docs/companion-formats.md §2; tables in
-- docs/companion.md): `psdl.bai.read/decode/encode/write/validate`.
--
-- Validation rules (severity): `intersection_count` (E, §2.9: at least 2),
-- `cruise_start` (E: an intersection at position >= 2 whose roads are neither freeway nor
-- alley), `sections` (E: >= 2 per road), `parallel_arrays` (E), `unit_axis` (E: x and w
-- axes unit length), `end_intersection` (E), `end_road_index` (E), `intersection_road` (E:
-- listed road's end does not name the intersection back), `rule` (E > 3; W 2 unsupported),
-- `room_range` (E with the PSDL: room id 0 or >= R), `cull_count` (E with the PSDL:
-- cull_rooms ~= R), `cull_road` (E: road position out of range), `lengths` (E: a length row
-- that does not start at 0 or is not the polyline's cumulative length, §2.5),
-- `centre_length` (E), `lane_count` (W: > 4 lanes on a side), `sidewalks` (W: not 1),
-- `two_way_lanes` (W: different lane counts on a two-way road, §2.4), `dead_end` (W: a
-- 1-road intersection), `cull_room0` (W: list 0 not empty), `near_superset` (W: an in-list
-- road missing from the near list), `road_id` / `intersection_id` (W: id ~= position - 1),
-- with the PSDL: `road_rooms` (W: a road room, flag 0x08, listed by no BAI road or by
-- several, §2.8 / §10 item 8), `junction_rooms` (W: an intersection room, flag 0x10, named
-- by no BAI intersection or by several),
-- `trams` (W: rails written), `trailing` (W).
--
-- With the PSDL, a start candidate must also lie in a room without the PSDL flags
-- `START_ROOM_FLAGS` (0x02 subterranean, which the game turns into its room-info flags
-- 0x02/0x08, and 0x40 warp as a precaution; the room is the intersection's `room` field, the
-- game looks the centre up with FindRoomId). Not checked: room-info 0x04 (deep water) and
-- 0x20 (rooms of `.inst` landmarks, flag 0x100), which come from files besides the BAI.
-- @module psdl.bai

local companion = require "psdl.companion"
local norm, dist = companion.norm, companion.dist

local ipairs, tostring, math_abs = ipairs, tostring, math.abs

-- Length tolerance for stored cumulative lengths (metres + relative).
local LEN_ABS, LEN_REL = 0.05, 1e-3
local UNIT_TOL = 1e-3

local function check_lengths(P, row, pts, path, rec)
  if #row == 0 then return end
  if row[1] ~= 0 then
    P.error("lengths", path .. "[1]", rec, "starts at %g, not 0", row[1])
    return
  end
  local acc = 0
  for k = 2, #pts do
    acc = acc + dist(pts[k - 1], pts[k])
    if row[k] and math_abs(row[k] - acc) > LEN_ABS + LEN_REL * acc then
      P.error("lengths", path .. "[" .. k .. "]", rec,
        "%g m, the polyline's cumulative length there is %.3f m (§2.5)", row[k], acc)
      return
    end
  end
end

--- PSDL room flags that keep an intersection from being the cruise start (§2.9; the
-- reasoning is in psdl.package.bai_gen, which uses the same value): 0x02 subterranean, 0x40 warp.
local START_ROOM_FLAGS = 0x42

-- The roads: ids, sections, unit axes, lengths, lanes and sides, and their ends (§2.3-§2.7).
local function check_roads(P, roads, xs, room_ok)
  local nx = #xs
  for i, r in ipairs(roads) do
    local rp = "roads[" .. i .. "]"
    if r.id ~= nil and r.id ~= i - 1 then
      P.warning("road_id", rp .. ".id", i, "id %d, position - 1 is %d", r.id, i - 1)
    end
    local ns = #r.origin
    if ns < 2 then P.error("sections", rp .. ".origin", i, "%d sections: at least 2 (§2.9)", ns) end
    for k, room in ipairs(r.rooms) do room_ok(room, rp .. ".rooms[" .. k .. "]", i) end
    for _, ax in ipairs({ "x_axis", "w_axis" }) do
      for k, v in ipairs(r[ax]) do
        local n = norm(v)
        if math_abs(n - 1) > UNIT_TOL then
          P.error("unit_axis", rp .. "." .. ax .. "[" .. k .. "]", i, "length %.4f, must be 1 (§2.3)", n)
          break
        end
      end
    end
    if #r.centre_length == ns then check_lengths(P, r.centre_length, r.origin, rp .. ".centre_length", i) end
    local lanes = {}
    for _, sn in ipairs({ "side_a", "side_b" }) do
      local s, sp = r[sn], rp .. "." .. sn
      lanes[sn] = #s.lanes
      if #s.lanes > 4 then
        P.warning("lane_count", sp .. ".lanes", i, "%d lanes: params describe at most 4 (§2.5)", #s.lanes)
      end
      if (s.sidewalks or 1) ~= 1 then
        P.warning("sidewalks", sp .. ".sidewalks", i, "%d sidewalks: every writer and retail file has 1", s.sidewalks)
      end
      if #(s.trams or {}) > 0 or #(s.trains or {}) > 0 then
        P.warning("trams", sp, i, "tram or train rails make the game spawn cable cars or subways (§2.7)")
      end
      for l, pts in ipairs(s.lanes) do
        if s.lengths[l] then check_lengths(P, s.lengths[l], pts, sp .. ".lengths[" .. l .. "]", i) end
      end
      local sw = s.lengths[#s.lanes + 1]
      if sw then check_lengths(P, sw, s.sidewalk, sp .. ".lengths[" .. (#s.lanes + 1) .. "]", i) end
    end
    local two_way = (r.side_a.flags or 0) & 1 == 0 and (r.side_b.flags or 0) & 1 == 0
      and lanes.side_a > 0 and lanes.side_b > 0
    if two_way and lanes.side_a ~= lanes.side_b then
      P.warning("two_way_lanes", rp, i, "%d and %d lanes on a two-way road: driving on the left overruns "
        .. "the game's arrays (§2.4)", lanes.side_a, lanes.side_b)
    end
    for _, en in ipairs({ "end_last", "end_first" }) do
      local e, ep = r[en], rp .. "." .. en
      if e.rule > 3 then
        P.error("rule", ep .. ".rule", i, "rule %d: 0 stop, 1 light, 3 none", e.rule)
      elseif e.rule == 2 then
        P.warning("rule", ep .. ".rule", i, "rule 2 (always stop) is not supported by the game (§2.7)")
      end
      local x = xs[e.intersection]
      if not x then
        P.error("end_intersection", ep .. ".intersection", i, "intersection %d of %d", e.intersection, nx)
      elseif x.roads[e.road_index] ~= i then
        P.error("end_road_index", ep .. ".road_index", i,
          "intersections[%d].roads[%d] is %s, not this road %d (§2.6)", e.intersection, e.road_index,
          tostring(x.roads[e.road_index]), i)
      end
    end
  end
end

-- The intersections: ids, rooms, the roads they list (and back), and the cruise start (§2.6,
-- §2.9).
local function check_intersections(P, roads, xs, doc, room_ok)
  local nr, nx = #roads, #xs
  local start_found = false
  for j, x in ipairs(xs) do
    local xp = "intersections[" .. j .. "]"
    if x.id ~= nil and x.id ~= j - 1 then
      P.warning("intersection_id", xp .. ".id", j, "id %d, position - 1 is %d", x.id, j - 1)
    end
    room_ok(x.room, xp .. ".room", j)
    if #x.roads == 1 then
      P.warning("dead_end", xp .. ".roads", j, "a single road ends here: dead ends are unverified in game (§2.9)")
    end
    local bad_road = false
    for k, ri in ipairs(x.roads) do
      local r = roads[ri]
      if not r then
        P.error("intersection_road", xp .. ".roads[" .. k .. "]", j, "road %d of %d", ri, nr)
        bad_road = true
      else
        local back = (r.end_last.intersection == j and r.end_last.road_index == k)
          or (r.end_first.intersection == j and r.end_first.road_index == k)
        if not back then
          P.error("intersection_road", xp .. ".roads[" .. k .. "]", j,
            "road %d has no end naming intersection %d at position %d (§2.6)", ri, j, k)
        end
        if (r.flags or 0) & 0x6 ~= 0 then bad_road = true end
      end
    end
    local room = doc and doc.rooms and doc.rooms[x.room]
    local bad_room = room ~= nil and (room.flags or 0) & START_ROOM_FLAGS ~= 0
    if j >= 2 and not bad_road and not bad_room and #x.roads > 0 then start_found = true end
  end
  if nx >= 2 and not start_found then
    P.error("cruise_start", "intersections", nil, "no intersection at position >= 2 without freeway or "
      .. "alley roads%s: the cruise start retries forever (§2.9)",
      doc and " in a room without PSDL flags 0x02 (subterranean) or 0x40 (warp)" or "")
  end
end

-- The culling lists: counts, roads they name, list 0, and the pedestrian lists inside the
-- near lists (§2.2, §2.10).
local function check_culling(P, t, roads, R)
  local nr = #roads
  local cr = t.cull_rooms or 0
  if R and cr ~= R then
    P.error("cull_count", "cull_rooms", nil, "%d culling rooms, the PSDL room count is %d (§2.2)", cr, R)
  end
  for _, ln in ipairs({ "near", "in" }) do
    local lists = t[ln] or {}
    for room = 0, cr - 1 do
      local list = lists[room] or {}
      for k, ri in ipairs(list) do
        if not roads[ri] then
          P.error("cull_road", ln .. "[" .. room .. "][" .. k .. "]", nil, "road %d of %d", ri, nr)
        end
      end
      if room == 0 and #list > 0 then
        P.warning("cull_room0", ln .. "[0]", nil, "list 0 has %d roads; the game never uses it (§2.10)", #list)
      end
    end
  end
  local near, inl = t.near or {}, t["in"] or {}
  for room = 1, cr - 1 do
    local set = {}
    for _, ri in ipairs(near[room] or {}) do set[ri] = true end
    for k, ri in ipairs(inl[room] or {}) do
      if not set[ri] then
        P.warning("near_superset", "in[" .. room .. "][" .. k .. "]", nil,
          "road %d is in the pedestrian list but not the near list of room %d (§2.10)", ri, room)
        break
      end
    end
  end
end

-- Junction and road rooms of the PSDL against the intersections and roads naming them (§2.8).
local function check_room_counts(P, roads, xs, doc)
  local by_road, by_x = {}, {}
  for _, r in ipairs(roads) do
    local seen = {}
    for _, room in ipairs(r.rooms) do
      if not seen[room] then by_road[room] = (by_road[room] or 0) + 1 end
      seen[room] = true
    end
  end
  for _, x in ipairs(xs) do by_x[x.room] = (by_x[x.room] or 0) + 1 end
  for id, room in ipairs(doc.rooms) do
    local f = room.flags or 0
    if f & 0x10 ~= 0 then
      if (by_x[id] or 0) ~= 1 then
        P.warning("junction_rooms", "intersections", nil, "junction room %d is the room of %d intersections, "
          .. "1 expected (§2.8)", id, by_x[id] or 0)
      end
    elseif f & 0x08 ~= 0 and (by_road[id] or 0) ~= 1 then
      P.warning("road_rooms", "roads", nil, "road room %d is listed by %d BAI roads, 1 expected: the game maps "
        .. "police and opponents by the room's first road (§2.8)", id, by_road[id] or 0)
    end
  end
end

local function validate(t, doc, opts)
  local P = companion.problems()
  local roads, xs = t.roads or {}, t.intersections or {}
  local nx = #xs
  local R = doc and companion.room_count(doc)

  if nx < 2 then
    P.error("intersection_count", "intersections", nil,
      "%d intersections: at least 2, or the cruise start divides by zero (§2.9)", nx)
  end
  if t.trailing then P.warning("trailing", "trailing", nil, "%d bytes after the in-lists", #t.trailing) end

  local function room_ok(id, path, rec)
    if id == 0 then
      P.error("room_range", path, rec, "room 0 is the reserved no-room id")
    elseif R and id >= R then
      P.error("room_range", path, rec, "room %d: the PSDL has rooms 1..%d", id, R - 1)
    end
  end

  check_roads(P, roads, xs, room_ok)
  check_intersections(P, roads, xs, doc, room_ok)
  check_culling(P, t, roads, R)
  if doc then check_room_counts(P, roads, xs, doc) end
  return P.result(opts.strict)
end

local M = companion.codec("bai", validate)
M.START_ROOM_FLAGS = START_ROOM_FLAGS
return M
