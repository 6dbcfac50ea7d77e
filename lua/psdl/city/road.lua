--- The road side of city generation: from the network of a `psdl.city` (nodes, roads with
-- via points, resolved profiles) to builder rooms. The network is checked and classified
-- (`psdl.city.network`), intersection rooms built at its junctions, bends, transitions and
-- dead ends (`psdl.city.intersection`); road runs through the nodes where two matching roads
-- meet at a gentle angle get one smooth centre line each, cut into road rooms of about
-- `room_length` metres at full cross-sections, with tunnel and bridge pieces and their
-- ramps (`psdl.city.tunnel`); and one road record per run (city-layout.md §1.3–1.5, §3.3,
-- §4).
--
-- Internal to `psdl.city` (its `build` calls `build_roads`); the shapes it leaves on the
-- nodes and roads (`node.class`, `node.junction`, `road.rooms`, `run.rooms`) are what
-- `psdl.city` reports.
-- @module psdl.city.road

local core = require "psdl.core"
local geom = require "psdl.geom"
local builder = require "psdl.builder"
local profiles = require "psdl.city.profiles"
local network = require "psdl.city.network"
local intersection = require "psdl.city.intersection"
local tunnel = require "psdl.city.tunnel"
local check = require "psdl.check"
local trusted = builder.trusted -- (the builder's calls on options made here from checked values)
local run_street = trusted.run_street

local type, error, ipairs, pairs, tostring, pcall, next = type, error, ipairs, pairs, tostring, pcall, next
local table_unpack = table.unpack
local sqrt, abs, floor, ceil, max, min = math.sqrt, math.abs, math.floor, math.ceil, math.max, math.min
local string_format = string.format
local geom_unit = geom.unit
local unit, road_label, node_label, road_ref = network.unit, network.road_label, network.node_label, network.road_ref
-- The most rooms one road record lists (a one-byte count, psdl-format.md §1.7).
local ROAD_ROOMS = 255

local M = {}

local NONE = {} -- an empty list shared by the runs that have nothing to list (never written to)

-- Tables equal key by key, nested tables compared the same way (profiles, textures).
local function same_value(a, b2)
  if a == b2 then return true end
  if type(a) ~= "table" or type(b2) ~= "table" then return false end
  for k, v in pairs(a) do if not same_value(v, b2[k]) then return false end end
  for k in pairs(b2) do if a[k] == nil then return false end end
  return true
end

-- True when two pieces of a run (a through node between them) build the same street: the
-- same oriented profile, textures and divider, so one room may span the node.
local function same_street(p, q)
  local a, c = p.road.spec, q.road.spec
  if profiles.oriented_key(a, p.forward) ~= profiles.oriented_key(c, q.forward) then return false end
  local pa = p.forward and a.builder or builder.mirror_profile(a.builder)
  local pc = q.forward and c.builder or builder.mirror_profile(c.builder)
  return same_value(pa, pc) and same_value(a.textures, c.textures) and same_value(a.divider, c.divider)
end

-- Tangent at the sample shared by two consecutive sub-pieces (last of a, first of b).
local function tangent_cut(a, b2)
  -- (a sub-piece's points: a list of {x, y, z}, or flat x, y, z when `flat`)
  local pa, pb = a.pts, b2.pts
  local px, pz, kx, kz, qx, qz
  if pa then
    local n = #pa
    local p, k = pa[n - 1], pa[n]
    px, pz, kx, kz = p[1], p[3], k[1], k[3]
  else
    local f = a.flat
    local n = #f
    px, pz, kx, kz = f[n - 5], f[n - 3], f[n - 2], f[n]
  end
  if pb then
    local q = pb[2]
    qx, qz = q[1], q[3]
  else
    qx, qz = b2.flat[4], b2.flat[6]
  end
  local ax, az = unit(kx - px, kz - pz)
  local bx, bz = unit(qx - kx, qz - kz)
  if not ax then return { bx, bz } end
  if not bx then return { ax, az } end
  local tx, tz = unit(ax + bx, az + bz)
  return { tx or bx, tz or bz }
end

-- A via point v of road r left out at node n (`drop_at_end`: it is not past the end of the
-- intersection there, along the arm the road leaves by, d metres long, and the road has not
-- yet got ahead of that end). When it lies well away from the intersection (beyond twice d
-- plus the road's width, plus 1 m) the road is no longer the one the author drew: that is
-- recorded as a repair in the city's repair log (`psdl build` prints it as a warning naming
-- the script line; the `psdl osm` report lists it), once per road and point however often
-- the layout is tried; in strict mode it raises that message.
local function check_behind(r, n, v, d)
  local hw = r.spec.half_width or 0
  local dx, dz = v[1] - n.x, v[3] - n.z
  if dx * dx + dz * dz <= (2 * (d + 2 * hw) + 1) ^ 2 then return end
  local log = r.city and r.city.repair_log
  if not log then return end
  local seen = log.via_dropped
  if not seen then seen = {} log.via_dropped = seen end
  local key = string_format("%.3f %.3f", v[1], v[3])
  local per = seen[r]
  if not per then per = {} seen[r] = per end
  if per[key] then return end
  per[key] = true
  local at = string_format("node %s", tostring(n.id)) .. (n.where and (" at " .. n.where) or "")
  log:road(r, "repaired", "via point dropped", string_format("%s: via point (%.1f, %.1f) left out: it lies beside or "
    .. "behind the end of the road at %s, %.0f m from it, not ahead of it (the centre line leaves the "
    .. "intersection towards the points ahead and cannot come back beside it); move or remove the via point", road_label(r), v[1], v[3], at, sqrt(dx * dx + dz * dz)))
end

-- How far the intersection room at node n reaches from the node (metres): its longest arm
-- plus the half width of the widest road meeting there. A via point behind an arm's end and
-- within this reach lies inside (or on the edge of) the intersection.
local function reach(n)
  local j = n.junction
  local d = 0
  for _, v in ipairs(j.distance) do d = max(d, v) end
  local hw = 0
  for _, e in ipairs(n.ends) do hw = max(hw, e.road.spec.half_width or 0) end
  return d + hw
end

-- Which of the via points `pts` (in the road's order from node n, the run's end with the
-- intersection's arm `dir` of length `d`) are left out at that end: a point not ahead of the
-- arm's end (within `d` plus 1 m along `dir`) before the road has got ahead of it (the
-- centre line leaves the intersection along `dir` and cannot start behind it), and, after
-- that, only a point that comes back inside the intersection's reach; the bend of a road
-- turning more than 90 degrees beyond the intersection is kept. A left-out point well away
-- from the intersection is reported (`check_behind`). Sets `out[i] = true` for the points
-- left out.
local function drop_at_end(road, n, dir, d, pts, out)
  local r2 = (reach(n) + 1) ^ 2
  local ahead = false
  for i, v in ipairs(pts) do
    local dx, dz = v[1] - n.x, v[3] - n.z
    if dx * dir[1] + dz * dir[2] < d + 1 then
      if not ahead then
        out[i] = true
        check_behind(road, n, v, d)
      elseif dx * dx + dz * dz <= r2 then
        out[i] = true
      end
    else
      ahead = true
    end
  end
end

-- The outward unit direction of arm a of the intersection at node n (its road's end there).
local function arm_dir(n, a)
  local d = n.ends[a].dir
  return geom_unit(d[1], d[2])
end

-- A section as a flat x, y, z array in the other direction (its points reversed).
local function reverse_flat(f)
  -- (the copy made at its full size first, then overwritten in place: no table growth)
  local r, n = { table_unpack(f) }, #f
  for i = 1, n, 3 do
    local k = n - 2 - i
    r[i], r[i + 1], r[i + 2] = f[k + 1], f[k + 2], f[k + 3]
  end
  return r
end

-- The control points of a run's centre line: from the end of the intersection at its start
-- (or its start node), the via points and through nodes of its pieces (those inside an
-- intersection dropped, `drop_at_end`), to the end of the intersection at its finish.
-- Returns the points ({x, y, z}), `cuts` (piece k ends at control point cuts[k]) and the
-- ends `e`: `{start_dir, end_dir, start_section, end_outward, d0, d1}` (d0, d1: the
-- lengths the intersections take; `end_outward`: the end section as the intersection gives
-- it, outward from it: `end_section`, reversed, is made from it where it is needed).
local function control_points(run)
  local pieces = run.pieces
  local sn, fn = run.start, run.finish
  local se, fe = run.start_end, run.finish_end
  local sj = sn.junction
  local fj = fn.junction
  -- (points are read only: the roads' own point tables; both tables made at the size they
  -- usually reach, two points and every end field: no growth on the way)
  local ctrl = { nil, nil }
  local e = { d0 = 0, d1 = 0, start_dir = nil, start_section = nil, end_dir = nil, end_outward = nil,
              end_section = nil }
  if sj then
    local a = se.arm
    local d, dx, dz = sj.distance[a], arm_dir(sn, a)
    ctrl[1] = { sn.x + dx * d, sn.y or 0, sn.z + dz * d }
    e.start_dir = { dx, dz }
    e.start_section = sj.sections[a]
    e.d0 = d
  else
    ctrl[1] = { sn.x, sn.y, sn.z }
  end
  -- the via points of each piece in the run's order (none: a shared empty list)
  local vias = { nil }
  for k, p in ipairs(pieces) do
    local poly = p.road.poly
    local n = #poly
    local list = NONE
    if n > 2 then
      list = {}
      for i = 2, n - 1 do list[#list + 1] = p.forward and poly[i] or poly[n + 1 - i] end
    end
    vias[k] = list
  end
  local out_first, out_last = NONE, NONE
  if sj and #vias[1] > 0 then
    out_first = {}
    drop_at_end(pieces[1].road, sn, e.start_dir, e.d0, vias[1], out_first)
  end
  local fd, fdx, fdz -- the finish's arm: its length and outward direction
  if fj then
    fd, fdx, fdz = fj.distance[fe.arm], arm_dir(fn, fe.arm)
  end
  if fj and #vias[#pieces] > 0 then
    local list, back = vias[#pieces], {}
    local m = #list
    for i = 1, m do back[i] = list[m + 1 - i] end
    local out = {}
    drop_at_end(pieces[#pieces].road, fn, { fdx, fdz }, fd, back, out)
    out_last = {}
    for i in pairs(out) do out_last[m + 1 - i] = true end
  end
  local cuts = {}
  for k, p in ipairs(pieces) do
    for i, v in ipairs(vias[k]) do
      local keep = not ((k == 1 and out_first[i]) or (k == #pieces and out_last[i]))
      if keep then ctrl[#ctrl + 1] = v end
    end
    if k < #pieces then
      local t = p.to
      ctrl[#ctrl + 1] = { t.x, t.y, t.z }
      cuts[k] = #ctrl
    end
  end
  if fj then
    ctrl[#ctrl + 1] = { fn.x + fdx * fd, fn.y or 0, fn.z + fdz * fd }
    e.end_dir = { -fdx, -fdz }
    e.end_outward = fj.sections[fe.arm]
    e.d1 = fd
  else
    ctrl[#ctrl + 1] = { fn.x, fn.y, fn.z }
  end
  return ctrl, cuts, e
end

-- A shape point just past an intersection's end that the curve, leaving the end square
-- to the intersection, could only reach on a bend tighter than the road is wide (the
-- sides would fold): dropped, as those inside the intersection are (not the nodes
-- between pieces). Returns the control points kept (`cuts` renumbered in place).
local function drop_tight(pieces, ctrl, cuts, e)
  if #ctrl < 3 then return ctrl end -- (no shape point between the ends)
  local start_dir, end_dir = e.start_dir, e.end_dir
  local hw = 0
  for _, p in ipairs(pieces) do hw = max(hw, p.road.spec.half_width or 0) end
  local is_cut = {}
  for _, ci in pairs(cuts) do is_cut[ci] = true end
  -- the curve from end c (leaving along dir) to point p (going on towards q) turns from
  -- dir to the chord and from the chord to p -> q within the chord's length
  local function too_tight(c, dir, p, q)
    local vx, vz = p[1] - c[1], p[3] - c[3]
    local L = sqrt(vx * vx + vz * vz)
    if L < 1e-9 then return true end
    vx, vz = vx / L, vz / L
    local wx, wz = unit(q[1] - p[1], q[3] - p[3])
    local s1 = abs(dir[1] * vz - dir[2] * vx)
    local s2 = abs(vx * wz - vz * wx)
    if dir[1] * vx + dir[2] * vz < 0 then s1 = 1 end
    if vx * wx + vz * wz < 0 then s2 = 1 end
    local s = max(s1, s2)
    return s > 1e-9 and L / (2 * s) < 2 * hw
  end
  local drop = {}
  if start_dir then
    for i = 2, #ctrl - 1 do
      if is_cut[i] or not too_tight(ctrl[1], start_dir, ctrl[i], ctrl[i + 1]) then break end
      drop[i] = true
    end
  end
  if end_dir then
    local back = { -end_dir[1], -end_dir[2] }
    for i = #ctrl - 1, 2, -1 do
      if drop[i] or is_cut[i] or not too_tight(ctrl[#ctrl], back, ctrl[i], ctrl[i - 1]) then break end
      drop[i] = true
    end
  end
  if next(drop) then
    local kept, map = {}, {}
    for i, p in ipairs(ctrl) do
      if not drop[i] then kept[#kept + 1] = p; map[i] = #kept end
    end
    for k, ci in pairs(cuts) do cuts[k] = map[ci] end
    ctrl = kept
  end
  return ctrl
end

-- The ends must not pass each other (intersections taking more than the road's length).
local function check_ends(run, ctrl, e)
  local pieces = run.pieces
  local first = pieces[1]
  local sn, fn = run.start, run.finish
  local start_dir, end_dir, d0, d1 = e.start_dir, e.end_dir, e.d0, e.d1
  local a, z = ctrl[1], ctrl[#ctrl]
  local nx = ctrl[2]
  local dx, dz = nx[1] - a[1], nx[3] - a[3]
  local len = sqrt(dx * dx + dz * dz)
  local bad = len < 1
  if start_dir and not bad then bad = (dx * start_dir[1] + dz * start_dir[2]) <= 0 end
  local px = ctrl[#ctrl - 1]
  local ex, ez = z[1] - px[1], z[3] - px[3]
  if end_dir and not bad then bad = (ex * end_dir[1] + ez * end_dir[2]) <= 0 or sqrt(ex * ex + ez * ez) < 1 end
  if bad then
    local r = #pieces == 1 and first.road or nil
    local total = 0
    for _, p in ipairs(pieces) do total = total + p.road.length end
    error(string_format("%s: too short for its ends: %.1f m long, the intersection at %s takes %.1f m of it and "
      .. "the one at %s %.1f m (move the nodes apart, or make the roads there meet at wider angles)",
      road_label(r or first.road), total, tostring(sn.id), d0, tostring(fn.id), d1), 0)
  end
end

-- The samples of a run's centre line (`core.spline` through the control points, draped on
-- a terrain) and the sample where each piece ends (`bounds[k]` to `bounds[k + 1]`: piece k),
-- and the samples as the flat x, y, z array of the spline. `flat_only` (no terrain): no list
-- of samples is made (nil), only the flat array.
local function centre_line(city, pieces, ctrl, cuts, e, flat_only)
  local first = pieces[1]
  local start_dir, end_dir = e.start_dir, e.end_dir
  local flat = {}
  for i, p in ipairs(ctrl) do flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = p[1], p[2], p[3] end
  local half = 0
  for _, p in ipairs(pieces) do half = max(half, p.road.spec.half_width) end
  local ok, cflat = pcall(core.spline, flat, { spacing = city.spacing or 20, max_angle = city.max_angle,
                                              half_width = half, start_dir = start_dir, end_dir = end_dir })
  if not ok or #cflat < 6 then
    error(string_format("%s: its centre line cannot be built: %s", road_label(first.road), tostring(cflat)), 0)
  end
  local samples
  if not flat_only then
    samples = geom.unflatten(cflat)
    -- a city on a terrain: the centre line follows the ground between its ends (psdl.city.terrain)
    if city.drape then
      samples = city.drape(samples, ctrl, { spacing = city.spacing or 20, max_angle = city.max_angle, half_width = half,
                                            start_dir = start_dir, end_dir = end_dir })
    end
  end
  -- cut the samples at the through nodes (every control point is a sample)
  local bounds = { 1 }
  local ns = samples and #samples or #cflat // 3
  do
    local k = 1
    for pi_ = 1, #pieces - 1 do
      local c = ctrl[cuts[pi_]]
      local found
      for i = k + 1, ns do
        local x, z
        if samples then
          local s = samples[i]
          x, z = s[1], s[3]
        else
          x, z = cflat[3 * i - 2], cflat[3 * i]
        end
        if abs(x - c[1]) < 1e-6 and abs(z - c[3]) < 1e-6 then found = i; break end
      end
      if not found then error("internal: a through node is not a sample of the centre line", 0) end
      bounds[#bounds + 1] = found
      k = found
    end
    bounds[#bounds + 1] = ns
  end
  return samples, bounds, cflat
end

-- `run_rooms` (psdl.city.new): plain road pieces that continue each other through a node
-- build one street, so that its rooms may span the node (fewer rooms, the same road).
local function merge_streets(subs)
  local merged = {}
  for _, s in ipairs(subs) do
    local prev = merged[#merged]
    if prev and prev.kind == "road" and s.kind == "road" and same_street(prev.piece, s.piece) then
      if s.flat then
        local pf, sf = prev.flat, s.flat
        local n = #pf
        for i = 4, #sf do pf[n + i - 3] = sf[i] end
      else
        for i = 2, #s.pts do prev.pts[#prev.pts + 1] = s.pts[i] end
      end
      prev.length = prev.length + s.length
      prev.also[#prev.also + 1] = s.piece.road
    else
      s.also = {}
      merged[#merged + 1] = s
    end
  end
  return merged
end

-- The street rooms of a run's sub-pieces (`Builder:street`), listed on their roads; returns
-- the list of all of them in order.
local function build_streets(city, b, run, subs, e)
  local start_dir, end_dir, start_section, end_section = e.start_dir, e.end_dir, e.start_section, e.end_section
  local rooms = {}
  local style = city.style
  local room_length = city.room_length or 100
  local ns = #subs
  for k, s in ipairs(subs) do
    local p = s.piece
    local r = p.road
    local rs = r.spec
    local profile = p.forward and rs.builder or network.mirrored(rs.builder)
    local n = s.pts and #s.pts or #s.flat // 3
    local sd, ed = start_dir, end_dir
    if k > 1 then sd = tangent_cut(subs[k - 1], s) end
    if k < ns then ed = tangent_cut(s, subs[k + 1]) end
    local nrooms = max(1, floor(s.length / room_length + 0.5))
    -- at most 120 sections a room (240 perimeter points of the 255 a room may have): climbing
    -- curves get many sections to keep their quads planar
    local split = min(120, max(2, ceil((n - 1) / nrooms) + 1))
    local tun, rail, rtun, rbridge = tunnel.street_parts(s, style)
    local ok2, list = check.pcall(trusted.street, b, s.pts or s.flat, profile, rs.textures, sd, ed,
      k == 1 and start_section or nil, k == ns and end_section or nil, split, rs.divider, k == 1, k == ns,
      r.name or string_format("road %d", r.index), k == 1 and run.prop_rule or nil, rtun, rbridge, tun, rail)
    if not ok2 then
      local msg = tostring(list):gsub("; widen the curve or pass allow_clamp",
        "; widen the curve (via points further apart) or narrow the road")
      error(string_format("%s: %s", road_label(r), msg), 0)
    end
    for _, rm in ipairs(list) do
      rm.city_kind = s.kind
      rooms[#rooms + 1] = rm
      r.rooms[#r.rooms + 1] = rm
      for _, o2 in ipairs(s.also or NONE) do o2.rooms[#o2.rooms + 1] = rm end
    end
  end
  return rooms
end

-- The end of a run: its `nsubs` sub-pieces (`subs`, with their lengths; nil from
-- core.run_street, which leaves a run of more than 255 rooms to the general way) made
-- `rooms`; sets `run.rooms`, `run.subs` and `run.record` (the road record: lanes seen along
-- the run).
local function finish_run(city, b, run, rooms, nsubs, subs)
  local first = run.pieces[1]
  local spec = first.road.spec
  if #rooms > ROAD_ROOMS then
    -- a limit of the format, not of this road's shape: no repair (psdl.city.repair.is_limit)
    local len = 0
    for _, s in ipairs(subs) do len = len + (s.length or 0) end
    error(string_format("%s: its %d rooms (%.1f km of road, rooms of about %g m) are more than one road record holds "
      .. "(%d: a one-byte count, psdl-format.md §1.7); raise room_length, or split the road with a node",
      road_label(first.road), #rooms, len / 1000, city.room_length or 100, ROAD_ROOMS), 0)
  end
  run.rooms = rooms
  run.subs = nsubs
  local ll, lr = spec.lanes_left, spec.lanes_right
  if not first.forward then ll, lr = lr, ll end
  run.record = trusted.road_record(b, { rooms = rooms, lanes_left = ll, lanes_right = lr, flags = run.flags })
end

-- Builds one run: its centre line, its street rooms (tunnel and bridge parts with their
-- ramps) and its road record (`run.rooms`, `run.subs`, `run.record`).
local function build_run(city, b, run, rng)
  local pieces = run.pieces
  local first = pieces[1]
  local spec = first.road.spec
  local ctrl, cuts, e = control_points(run)
  ctrl = drop_tight(pieces, ctrl, cuts, e)
  check_ends(run, ctrl, e)
  -- no terrain, no tunnel or bridge: the pieces' centre lines stay flat arrays
  local flat_only = not city.drape
  for _, p in ipairs(pieces) do
    if p.road.tunnel or p.road.bridge then flat_only = false end
  end
  if flat_only and #pieces == 1 then
    -- the usual run: one piece on the ground, in one C call (or nil: the general way below)
    local p = first
    local r = p.road
    local rs = r.spec
    local flat
    if #ctrl == 2 then -- (the usual run: no via point; one table at its size)
      local q1, q2 = ctrl[1], ctrl[2]
      flat = { q1[1], q1[2], q1[3], q2[1], q2[2], q2[3] }
    else
      flat = {}
      for i, q in ipairs(ctrl) do flat[3 * i - 2], flat[3 * i - 1], flat[3 * i] = q[1], q[2], q[3] end
    end
    local rooms = run_street(b, flat, p.forward and rs.builder or network.mirrored(rs.builder), rs.textures,
      rs.divider, e.start_dir, e.end_dir, e.start_section, e.end_outward, city.spacing or 20, city.max_angle,
      rs.half_width, city.room_length or 100, r.name or string_format("road %d", r.index), run.prop_rule, true)
    if rooms then
      local list = r.rooms
      for _, rm in ipairs(rooms) do rm.city_kind = "road" end
      if #list == 0 then
        r.rooms = { table_unpack(rooms) } -- (its own list, made at its size)
      else
        for _, rm in ipairs(rooms) do list[#list + 1] = rm end
      end
      return finish_run(city, b, run, rooms, 1)
    end
  end
  if e.end_outward then e.end_section = reverse_flat(e.end_outward) end
  local samples, bounds, cflat = centre_line(city, pieces, ctrl, cuts, e, flat_only)
  -- sub-pieces: {points (pts, or flat x, y, z), kind, piece}
  local subs = {}
  for k, p in ipairs(pieces) do
    if flat_only then
      -- a piece without tunnel or bridge is one "road" (tunnel.sub_pieces), its length the
      -- sum of its segments' plan lengths in order
      -- (a run of one piece: the whole centre line, not copied)
      local whole = #pieces == 1
      local f, n, L, px, pz = whole and cflat or {}, 0, 0, nil, nil
      for i = bounds[k], bounds[k + 1] do
        local q = 3 * i
        local x, y, z = cflat[q - 2], cflat[q - 1], cflat[q]
        if not whole then f[n + 1], f[n + 2], f[n + 3] = x, y, z end
        n = n + 3
        if px then
          local dx, dz = x - px, z - pz
          L = L + sqrt(dx * dx + dz * dz)
        end
        px, pz = x, z
      end
      subs[#subs + 1] = { flat = f, kind = "road", piece = p, length = L }
    else
      local pts = {}
      for i = bounds[k], bounds[k + 1] do pts[#pts + 1] = samples[i] end
      tunnel.sub_pieces(city, p, pts, subs)
    end
  end
  if city.run_rooms and #subs > 1 then subs = merge_streets(subs) end
  return finish_run(city, b, run, build_streets(city, b, run, subs, e), #subs, subs)
end

-- Runs f(...) on builder b; when the city collects failures (`city.failures`, set by
-- psdl.city.repair), a failure is listed there, what f added to b is undone
-- (`builder.trusted.attempt`) and the build goes on with the next node or run.
local attempt = trusted.attempt
local function guarded(city, b, f, ...)
  local list = city.failures
  if not list then return f(...) end
  local ok, err = attempt(b, f, ...)
  if not ok then list[#list + 1] = tostring(err) end
end

-- The roads phase (`M.build_roads`), inside `builder.trusted.phase`.
local function roads_phase(city, b, rng)
  network.resolve_conflicts(city)
  network.classify(city)
  local runs = network.runs(city)
  local classes = {}
  for _, n in ipairs(city.nodes) do
    classes[n.class] = (classes[n.class] or 0) + 1
    n.room, n.junction, n.rooms = nil, nil, {}
  end
  for _, r in ipairs(city.roads) do r.rooms = {} end
  -- underground / elevated nodes: only tunnel / bridge roads may meet there
  for _, n in ipairs(city.nodes) do
    if n.underground or n.elevated then
      for _, e in ipairs(n.ends) do
        if (n.underground and not e.road.tunnel) or (n.elevated and not n.underground and not e.road.bridge) then
          error(string_format("%s: it is %s, but %s is no %s", node_label(n),
            n.underground and "underground (tunnel = ...)" or "on a bridge (bridge = ...)", road_ref(e.road),
            n.underground and "tunnel" or "bridge"), 0)
        end
      end
    end
  end
  if city.only then -- the nodes at the ends of the runs to build
    for _, run in ipairs(runs) do
      for _, p in ipairs(run.pieces) do
        if city.only.roads[p.road] then
          city.only.nodes[run.start], city.only.nodes[run.finish] = true, true
          break
        end
      end
    end
  end
  for _, n in ipairs(city.nodes) do
    local c = n.class
    if (c == "junction" or c == "bend" or c == "transition" or c == "dead_end")
      and (not city.only or city.only.nodes[n]) then
      guarded(city, b, intersection.build, city, b, n)
    end
  end
  if city.failures and #city.failures > 0 then return { runs = runs, classes = classes } end
  local prng = rng:derive("props")
  for _, run in ipairs(runs) do
    -- (psdl.city.repair checks its repairs on a part of the city: `city.only`)
    local wanted = not city.only
    if not wanted then
      for _, p in ipairs(run.pieces) do if city.only.roads[p.road] then wanted = true break end end
    end
    if not wanted then goto next_run end
    local first = run.pieces[1].road
    local spec = first.spec
    run.flags = spec.flags
    local rule = first.opts.prop_rule
    if rule == nil then
      local pv = city.props
      if pv == false then rule = 0
      elseif type(pv) == "table" and pv[spec.name] ~= nil then rule = pv[spec.name]
      elseif type(pv) == "function" then rule = pv(first)
      else rule = spec.props end
    end
    run.prop_rule = (spec.flags & profiles.RECORD.sidewalks) ~= 0 and profiles.prop_rule(rule, spec.style, prng) or 0
    guarded(city, b, build_run, city, b, run, rng)
    ::next_run::
  end
  -- (roads to repair first: psdl.city.repair runs the layout again; an importer's network,
  -- auto_junctions: the validator's room_overlap rule judges)
  if city.failures and #city.failures > 0 then return { runs = runs, classes = classes } end
  local ov = (city.auto_junctions or city.only) and {} or network.overlaps(city, b)
  if ov[1] then
    -- name two roads where there are, else a road and an intersection
    local c = ov[1]
    local function rank(x) return (x.a.a and 1 or 0) + (x.b.a and 1 or 0) end
    for _, o in ipairs(ov) do if rank(o) > rank(c) then c = o end end
    local what = function(x) return x.a and road_label(x) or node_label(x) end
    local ref = function(x) return x.a and road_ref(x) or ("the intersection of " .. node_label(x)) end
    -- a script's mistake, refused (not led by "<label>:", so not for psdl.city.repair)
    error(string_format("%s, its rooms would overlap those of %s at (%.1f, %.1f): roads side by side need their "
      .. "widths apart; move them apart, join them at a node, or make one a bridge or tunnel", what(c.a),
      ref(c.b), c.x, c.z), 0)
  end
  return { runs = runs, classes = classes }
end

--- Build the road and intersection rooms of a city into a builder: one atomic unit
-- (`builder.trusted.phase`): a node or run that fails while the city collects failures is
-- undone and listed; any other failure raises, and the builder is then thrown away (it
-- holds the rooms made before the failure).
-- @tparam table city a `psdl.city` City
-- @tparam table b a `psdl.builder` Builder
-- @param rng a `psdl.city.random` generator
-- @treturn table `{runs = {...}, classes = {junction = n, ...}}`
function M.build_roads(city, b, rng)
  return trusted.phase(b, roads_phase, city, b, rng)
end

return M
