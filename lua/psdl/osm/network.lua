--- From an OSM extract (the reader's tables) to the road network of docs/network.md:
-- road selection, clipping, projection, splitting at shared nodes, the clean-up passes of
-- `psdl.osm.clean`, and the export to the network table with its report.
-- @module psdl.osm.network

local T = require "psdl.osm.tags"
local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local P = require "psdl.osm.projection"
local B = require "psdl.osm.buildings"
local fit = require "psdl.osm.fit"
local E = require "psdl.osm.extent"
local plan_box = require("psdl.plan").box
local R = require "psdl.osm.retrace"

local ipairs, pairs, type, tostring, error, next, require, setmetatable, pcall =
  ipairs, pairs, type, tostring, error, next, require, setmetatable, pcall
local math_floor, math_max, math_min, math_huge, math_abs, math_tointeger =
  math.floor, math.max, math.min, math.huge, math.abs, math.tointeger
local string_format, table_sort, table_concat = string.format, table.sort, table.concat
local os_clock = os.clock

local M = {}

--- Default options (see `psdl.osm.network` in the module `psdl.osm` for their meaning).
M.defaults = {
  bbox = false, clip = true, origin = false, scale = 1,
  walkways = false, driveways = false, profiles = false, buildings = true,
  cleanup = true,
  merge_distance = 2, snap_distance = 3, simplify = 0.5,
  min_angle = 25, min_road_length = 3,
  dual_carriageways = true, dual_max_separation = 40, dual_min_length = 30,
  roundabouts = "auto",
  elevated = true,
  dimensions = false,
  progress = false,
  max_extent = false,
}

--- Default cross-section dimensions (`psdl.osm.fit.dimensions`).
M.dimensions = fit.dimensions

--- Total width of a road in the clean-up's model (`psdl.osm.fit.footprint`).
M.footprint = fit.footprint

------------------------------------------------------------------------ report

local function new_report(data)
  return {
    input = { nodes = data.counts.nodes, ways = data.counts.ways, relations = data.counts.relations,
      deleted = data.counts.deleted },
    skipped = {}, changes = {}, change_list = {}, dropped = {}, warnings = {}, timings = {},
  }
end

--- Count one thing left out, by reason.
function M.skip(report, reason, n)
  report.skipped[reason] = (report.skipped[reason] or 0) + (n or 1)
end

--- Count one clean-up change, by kind; with `way` (a way of the reader), list it too
-- (`report.change_list`, stage "select": the way's id and name, and `lat`/`lon` of its
-- first node in `nodes` when given; the area is not projected yet).
function M.change(report, what, n, way, nodes)
  report.changes[what] = (report.changes[what] or 0) + (n or 1)
  if way then
    local l = report.change_list
    if l then
      local lat, lon
      for _, id in ipairs(nodes and way.nds or {}) do
        local p = nodes[id]
        if p then lat, lon = p[1], p[2]; break end
      end
      l[#l + 1] = { stage = "select", reason = what, count = n or 1, source = "way " .. tostring(way.id),
                    name = way.tags and way.tags.name, highway = way.tags and way.tags.highway, lat = lat, lon = lon }
    end
  end
end

------------------------------------------------------------------------ clipping

-- Liang-Barsky: parameters [t0, t1] of segment p->q inside the rectangle, or nil.
local function clip_segment(plat, plon, qlat, qlon, r)
  local t0, t1 = 0, 1
  local dlat, dlon = qlat - plat, qlon - plon
  local checks = {
    { -dlon, plon - r.minlon }, { dlon, r.maxlon - plon },
    { -dlat, plat - r.minlat }, { dlat, r.maxlat - plat },
  }
  for _, c in ipairs(checks) do
    local p, q = c[1], c[2]
    if p == 0 then
      if q < 0 then return nil end
    else
      local t = q / p
      if p < 0 then
        if t > t1 then return nil end
        if t > t0 then t0 = t end
      else
        if t < t0 then return nil end
        if t < t1 then t1 = t end
      end
    end
  end
  return t0, t1
end

local function inside(lat, lon, r)
  return lat >= r.minlat and lat <= r.maxlat and lon >= r.minlon and lon <= r.maxlon
end

-- Pieces of a way inside the rectangle: lists of entries, each an OSM node id or a
-- boundary point { lat, lon }.
local function clip_way(ids, nodes, r)
  local pieces, cur = {}, nil
  local function close()
    if cur and #cur >= 2 then pieces[#pieces + 1] = cur end
    cur = nil
  end
  for i = 1, #ids do
    local id = ids[i]
    local n = nodes[id]
    local lat, lon = n[1], n[2]
    if i == 1 then
      if inside(lat, lon, r) then cur = { id } end
    else
      local pid = ids[i - 1]
      local p = nodes[pid]
      local pin, qin = inside(p[1], p[2], r), inside(lat, lon, r)
      if pin and qin then
        cur[#cur + 1] = id
      else
        local t0, t1 = clip_segment(p[1], p[2], lat, lon, r)
        if t0 then
          if not pin then
            close()
            cur = { { p[1] + t0 * (lat - p[1]), p[2] + t0 * (lon - p[2]) } }
          end
          if qin then
            cur[#cur + 1] = id
          else
            cur[#cur + 1] = { p[1] + t1 * (lat - p[1]), p[2] + t1 * (lon - p[2]) }
            close()
          end
        end
      end
    end
  end
  close()
  return pieces
end

------------------------------------------------------------------------ build

local function resolve_options(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #2 to 'network' (table expected, got " .. type(opts) .. ")", 3)
  end
  opts = opts or {}
  local o = {}
  for k, v in pairs(M.defaults) do o[k] = v end
  for k, v in pairs(opts) do
    if M.defaults[k] == nil then
      error(string_format("bad argument #2 to 'network' (unknown option '%s')", tostring(k)), 3)
    end
    o[k] = v
  end
  local ok, dims = pcall(fit.resolve, o.dimensions or nil)
  if not ok then error("bad argument #2 to 'network' (" .. tostring(dims) .. ")", 3) end
  o.dimensions = dims
  if o.bbox then
    local b = o.bbox
    if type(b) ~= "table" or #b ~= 4 then
      error("bad argument #2 to 'network' (bbox: {minlon, minlat, maxlon, maxlat} expected)", 3)
    end
    for i = 1, 4 do
      if type(b[i]) ~= "number" or b[i] ~= b[i] then
        error("bad argument #2 to 'network' (bbox: four numbers expected)", 3)
      end
    end
    if not (b[1] < b[3] and b[2] < b[4]) or b[2] < -90 or b[4] > 90 or b[1] < -180 or b[3] > 180 then
      error("bad argument #2 to 'network' (bbox: minlon < maxlon and minlat < maxlat, in degrees, expected)", 3)
    end
  end
  if o.profiles then
    for k, v in pairs(o.profiles) do
      if v ~= false and not T.profiles[v] then
        error(string_format("bad argument #2 to 'network' (profiles.%s: unknown profile '%s')", tostring(k), tostring(v)), 3)
      end
    end
  end
  if o.roundabouts ~= "auto" and o.roundabouts ~= "keep" and o.roundabouts ~= "collapse" then
    error("bad argument #2 to 'network' (roundabouts: 'auto', 'keep' or 'collapse' expected)", 3)
  end
  if o.max_extent and (type(o.max_extent) ~= "number" or not (o.max_extent > 0)) then
    error("bad argument #2 to 'network' (max_extent: false or a positive number of metres expected)", 3)
  end
  if type(o.scale) ~= "number" or not (o.scale > 0) then
    error("bad argument #2 to 'network' (scale: a positive number expected)", 3)
  end
  return o
end

local function progress(opts, stage)
  if opts.progress then opts.progress(stage) end
end

--- Build the network of an extract.
-- @tparam table data the reader's result (`psdl.osm.reader`)
-- @tparam[opt] table opts see `M.defaults` and `psdl.osm.network`
-- @treturn table network (docs/network.md)
-- @treturn table report
-- @return[2] nil, message, "bad_input" when `opts.max_extent` (metres) is set and the area
--   (bbox, else `<bounds>` when clipping, else the drivable ways kept) is larger on one side
--   (`psdl.osm.extent.check`)
-- long: the import's stages in order (clip, roads, extent, projection, graph, buildings,
-- clean-up, export) over one shared state; the clean-up and the export live in modules of
-- their own, the rest is glue between them, each step commented
function M.build(data, opts)
  opts = resolve_options(opts)
  local t_start = os_clock()
  local report = new_report(data)
  local nodes = data.nodes

  -- the clip rectangle, in degrees
  local rect
  if opts.bbox then
    local b = opts.bbox
    rect = { minlon = b[1], minlat = b[2], maxlon = b[3], maxlat = b[4], from = "bbox" }
  elseif opts.clip and data.bounds then
    local b = data.bounds
    rect = { minlon = b.minlon, minlat = b.minlat, maxlon = b.maxlon, maxlat = b.maxlat, from = "bounds" }
  end

  -- 1. roads: which ways, their pieces (missing nodes and clipping)
  progress(opts, "roads")
  local selected = {}
  local building_ways = {}
  local mp_members = {} -- member ways of building multipolygons
  for _, r in ipairs(data.relations) do
    if r.tags.type == "multipolygon" and T.is_building(r.tags) then
      for _, m in ipairs(r.members) do
        if m.type == "way" then mp_members[m.ref] = true end
      end
    end
  end
  for _, w in ipairs(data.ways) do
    local attr, why = T.road(w.tags, opts)
    if attr then
      selected[#selected + 1] = { way = w, attr = attr }
    elseif T.is_building(w.tags) or mp_members[w.id] then
      building_ways[w.id] = true
    elseif why then
      M.skip(report, why)
    else
      M.skip(report, "not a road or building")
    end
  end

  local pieces = {} -- { refs = {...}, attr =, way = }
  for _, s in ipairs(selected) do
    local w = s.way
    local runs, cur, missing = {}, {}, 0
    for _, id in ipairs(w.nds) do
      if nodes[id] then
        if cur[#cur] ~= id then cur[#cur + 1] = id end
      else
        missing = missing + 1
        if #cur >= 2 then runs[#runs + 1] = cur end
        cur = {}
      end
    end
    if #cur >= 2 then runs[#runs + 1] = cur end
    if missing > 0 then
      if #runs == 0 then
        M.skip(report, "road with missing node references (nothing left)")
      else
        M.change(report, "roads cut at missing node references", 1, w, nodes)
      end
    end
    local kept = runs
    if rect and #runs > 0 then
      kept = {}
      local clipped = false
      for _, run in ipairs(runs) do
        local cut = clip_way(run, nodes, rect)
        local n = 0
        for _, c in ipairs(cut) do
          kept[#kept + 1] = c
          for _, r in ipairs(c) do if type(r) == "number" then n = n + 1 end end
        end
        if n ~= #run then clipped = true end
      end
      if #kept == 0 then
        M.skip(report, "road outside the clip area")
      elseif clipped then
        M.change(report, "roads clipped at the edge of the area", 1, w, nodes)
      end
    end
    for _, refs in ipairs(kept) do
      -- a way going back over itself (out and back, a lollipop's stem): once (psdl.osm.retrace)
      local runs = R.runs(refs, s.attr.oneway ~= 0)
      if runs then
        M.change(report, "ways going back over themselves: the way back left out", 1, w, nodes)
        for _, run in ipairs(runs) do
          local attr = s.attr
          if run.both and attr.oneway ~= 0 then -- driven out and back: a two-way road there
            local tags = {}
            for k, v in pairs(w.tags) do tags[k] = v end
            tags.oneway = "no"
            attr = T.road(tags, opts)
          end
          pieces[#pieces + 1] = { refs = run.refs, attr = attr, way = w }
        end
      else
        pieces[#pieces + 1] = { refs = refs, attr = s.attr, way = w }
      end
    end
  end

  -- the size of the area, before anything is projected or cleaned (psdl.osm.extent): a
  -- bbox, <bounds> or set of ways beyond `max_extent` is refused here, in milliseconds
  local ways_rect = E.of_pieces(pieces, nodes)
  if opts.max_extent then
    local r, what = rect, nil
    if rect then
      what = rect.from == "bbox" and "the bbox" or "the file's <bounds>"
    else
      r, what = ways_rect, "the extent of the drivable ways kept"
    end
    if r then
      local ok, msg = E.check(r, opts.max_extent, what)
      if not ok then return nil, msg, "bad_input" end
    end
  end
  if rect and rect.from == "bbox" and ways_rect then
    -- a bbox much larger than the data: the origin (its centre) may be far from the roads
    local bw, bh = E.size(rect.minlat, rect.minlon, rect.maxlat, rect.maxlon)
    local ww, wh = E.size(ways_rect.minlat, ways_rect.minlon, ways_rect.maxlat, ways_rect.maxlon)
    if ww * wh < 0.25 * bw * bh then
      report.area_note = string_format("the drivable ways cover %s by %s of the %s by %s bbox; the city's origin "
        .. "(the bbox's centre) is %s from their centre", E.km(ww), E.km(wh), E.km(bw), E.km(bh),
        E.km(E.centre_distance(rect, ways_rect)))
    end
  end

  -- 2. the origin and the projection
  local origin = opts.origin
  if origin then
    origin = { lat = origin.lat or origin[1], lon = origin.lon or origin[2] }
  elseif rect then
    origin = { lat = (rect.minlat + rect.maxlat) / 2, lon = (rect.minlon + rect.maxlon) / 2 }
  else
    local box = plan_box() -- lat, lon
    local function see(id)
      local n = nodes[id]
      if n then box:add(n[1], n[2]) end
    end
    for _, p in ipairs(pieces) do for _, r in ipairs(p.refs) do see(r) end end
    if opts.buildings then
      for _, w in ipairs(data.ways) do
        if building_ways[w.id] then for _, r in ipairs(w.nds) do see(r) end end
      end
    end
    if box.u0 == math_huge then
      for id in pairs(nodes) do see(id) end
    end
    if box.u0 == math_huge then
      origin = { lat = 0, lon = 0 }
    else
      origin = { lat = (box.u0 + box.u1) / 2, lon = (box.v0 + box.v1) / 2 }
    end
  end
  -- (the projection's limit: a user error naming the latitude, not the projection's argument error)
  if type(origin.lat) == "number" and not (origin.lat > -P.MAX_LATITUDE and origin.lat < P.MAX_LATITUDE) then
    return nil, string.format("the extract lies at latitude %.4f, beyond the +/-%d degrees the projection handles "
      .. "(docs/osm.md, \"Area limit\")", origin.lat, P.MAX_LATITUDE), "bad_input"
  end
  local proj = P.new(origin.lat, origin.lon)
  local scale = opts.scale
  local cache = {}
  local function project(lat, lon)
    local x, z = proj:forward(lat, lon)
    return x * scale, z * scale
  end
  local function xz(id)
    local c = cache[id]
    if not c then
      local n = nodes[id]
      local x, z = project(n[1], n[2])
      c = { x, z }
      cache[id] = c
    end
    return c
  end

  -- 3. the graph: nodes where ways meet or end, edges between them
  progress(opts, "graph")
  local use = {}
  for _, p in ipairs(pieces) do
    local refs = p.refs
    local n = #refs
    local closed = n > 2 and refs[1] == refs[n]
    for i = 1, n do
      local r = refs[i]
      if type(r) == "number" and not (closed and i == n) then use[r] = (use[r] or 0) + 1 end
    end
    for _, i in ipairs({ 1, n }) do
      local r = refs[i]
      if type(r) == "number" then use[r] = math_max(use[r], 2) end
    end
  end
  local g = Graph.new()
  local gnodes = {}
  local function gnode(r)
    if type(r) == "number" then
      local n = gnodes[r]
      if not n then
        local c = xz(r)
        n = g:node(c[1], c[2], tostring(r))
        n.osm = r
        local tg = data.node_tags and data.node_tags[r]
        if tg and (tg.highway == "turning_circle" or tg.highway == "turning_loop") then n.turning_circle = true end
        gnodes[r] = n
      end
      return n
    end
    if not r.node then
      local x, z = project(r[1], r[2])
      r.node = g:node(x, z, nil, "b")
      r.node.boundary = true
    end
    return r.node
  end
  for _, p in ipairs(pieces) do
    local attr = p.attr
    local refs = p.refs
    if attr.oneway == -1 then
      local rev = {}
      for i = #refs, 1, -1 do rev[#rev + 1] = refs[i] end
      refs = rev
    end
    local a = {}
    for k, v in pairs(attr) do a[k] = v end
    a.oneway = attr.oneway ~= 0
    if attr.oneway == -1 and (a.sidewalk == "left" or a.sidewalk == "right") then
      a.sidewalk = a.sidewalk == "left" and "right" or "left"
    end
    local src = { "way " .. p.way.id }
    local start = gnode(refs[1])
    local pts = { { start.x, start.z } }
    for i = 2, #refs do
      local r = refs[i]
      local c
      if type(r) == "number" then c = xz(r) else c = { project(r[1], r[2]) } end
      local last = pts[#pts]
      if G.dist(last[1], last[2], c[1], c[2]) > 1e-3 then pts[#pts + 1] = { c[1], c[2] } end
      local is_node = type(r) ~= "number" or use[r] >= 2
      if is_node then
        local finish = gnode(r)
        if #pts >= 2 and not (finish == start and #pts <= 2) then
          g:edge(start, finish, pts, a, src)
        end
        start = finish
        pts = { { finish.x, finish.z } }
      end
    end
  end
  -- nodes no edge uses (zero-length pieces)
  for _, n in ipairs(g:node_list()) do
    if #n.edges == 0 then g:remove_node(n) end
  end
  -- the selected roads as read (the input of the kept fraction, psdl.osm.kept)
  local input = {}
  for _, e in ipairs(g:edge_list()) do
    local pts = {}
    for i, p in ipairs(e.pts) do pts[i] = { p[1], p[2] } end
    input[#input + 1] = { pts = pts, source = Graph.source_text(e.src), name = e.attr.name, highway = e.attr.highway }
  end

  -- 4. buildings
  local buildings = {}
  if opts.buildings then
    progress(opts, "buildings")
    buildings = B.collect(data, project, rect, function(reason) M.skip(report, reason) end)
  else
    local n = 0
    for _ in pairs(building_ways) do n = n + 1 end
    if n > 0 then M.skip(report, "building (buildings option off)", n) end
  end
  for _, r in ipairs(data.relations) do
    if not (r.tags.type == "multipolygon" and T.is_building(r.tags)) then
      M.skip(report, "relation (not a building multipolygon)")
    end
  end
  report.timings.select = os_clock() - t_start

  -- 5. clean-up
  local t_clean = os_clock()
  if opts.cleanup then
    require("psdl.osm.clean").run(g, opts, report)
  end
  report.timings.cleanup = os_clock() - t_clean

  -- 6. export
  local network = M.export(g, buildings, opts, report)
  network.input = input
  network.origin = { lat = origin.lat, lon = origin.lon }
  network.projection = P.describe(proj)
  network.scale = scale
  network.attribution = "© OpenStreetMap contributors (ODbL 1.0, https://www.openstreetmap.org/copyright)"
  local b = network.bounds
  if rect then
    -- the clip area, grown to hold everything kept
    local corners = { { rect.minlat, rect.minlon }, { rect.minlat, rect.maxlon },
      { rect.maxlat, rect.minlon }, { rect.maxlat, rect.maxlon } }
    for _, c in ipairs(corners) do
      local x, z = project(c[1], c[2])
      if not b then b = { min_x = x, min_z = z, max_x = x, max_z = z } network.bounds = b end
      b.min_x, b.max_x = math_min(b.min_x, x), math_max(b.max_x, x)
      b.min_z, b.max_z = math_min(b.min_z, z), math_max(b.max_z, z)
    end
    for k, v in pairs(b) do b[k] = math_floor(v * 100 + 0.5) / 100 end
  end
  report.timings.total = os_clock() - t_start
  return network, report
end

------------------------------------------------------------------------ export

local function r2(v) return math_floor(v * 100 + 0.5) / 100 end

--- Turn a cleaned graph into the network table.
-- @tparam table g graph
-- @tparam table buildings
-- @tparam table opts resolved options
-- @tparam table report completed with `counts`
-- @treturn table network
-- Rounds the sharp corners of a road's shape (turns over FILLET_TURN at a via point) into
-- circular arcs of radius up to FILLET_RADIUS half-widths (less where the neighbouring
-- segments are short: each corner takes at most half of each segment beside it), a point
-- every FILLET_STEP of turn. City generation runs a smooth curve through the via points: at a
-- sharp corner that curve turns far tighter than the arc the clean-up left room for, and
-- the road's sides would fold (`cross-section points clamped`).
local FILLET_TURN, FILLET_RADIUS, FILLET_STEP = math.rad(20), 2, math.rad(10)

local function fillet(pts, hw)
  local n = #pts
  if n < 3 then return pts end
  local out = { pts[1] }
  local seg = {}
  for i = 1, n - 1 do seg[i] = G.dist(pts[i][1], pts[i][2], pts[i + 1][1], pts[i + 1][2]) end
  -- the length each corner wants along its segments (gentle corners keep what the
  -- clean-up's model reserves for them); a segment too short for both its ends is shared
  -- in proportion
  local want = { [1] = 0, [n] = 0 }
  for i = 2, n - 1 do
    local p, q, r = pts[i - 1], pts[i], pts[i + 1]
    local a1 = math.atan(q[2] - p[2], q[1] - p[1])
    local a2 = math.atan(r[2] - q[2], r[1] - q[1])
    local d = math_abs(G.wrap(a2 - a1))
    if d > math.rad(170) then d = math.rad(170) end
    want[i] = (d > FILLET_TURN and FILLET_RADIUS or fit.BEND_RADIUS) * hw * math.tan(d / 2)
  end
  local function share(i, j, l) -- of segment (i, j) of length l, what corner i may take
    local wi, wj = want[i], want[j]
    if wi + wj <= l then return wi end
    return l * wi / (wi + wj)
  end
  for i = 2, n - 1 do
    local p, q, r = pts[i - 1], pts[i], pts[i + 1]
    local l1, l2 = seg[i - 1], seg[i]
    local done = false
    if l1 > 1e-6 and l2 > 1e-6 then
      local ux, uz = (q[1] - p[1]) / l1, (q[2] - p[2]) / l1
      local vx, vz = (r[1] - q[1]) / l2, (r[2] - q[2]) / l2
      local d = math.atan(ux * vz - uz * vx, ux * vx + uz * vz) -- signed turn
      local ad = math_abs(d)
      if ad > FILLET_TURN and ad < math.rad(175) then
        local tn = math.tan(ad / 2)
        local t = math_min(FILLET_RADIUS * hw * tn, share(i, i - 1, l1), share(i, i + 1, l2))
        local R = t / tn
        -- arc from T1 = q - u t to T2 = q + v t about the centre on the inside of the turn
        local sgn = d > 0 and 1 or -1
        local cx, cz = q[1] - ux * t - sgn * uz * R, q[2] - uz * t + sgn * ux * R
        local a1 = math.atan(q[2] - uz * t - cz, q[1] - ux * t - cx)
        local k = math.max(2, math.ceil(ad / FILLET_STEP))
        for j = 0, k do
          local a = a1 + sgn * ad * j / k
          out[#out + 1] = { cx + R * math.cos(a), cz + R * math.sin(a) }
        end
        done = true
      end
    end
    if not done then out[#out + 1] = q end
  end
  out[#out + 1] = pts[n]
  return out
end
M.fillet = fillet

--- Shape points written closer than this to the point before them are left out (metres).
M.MIN_STEP = 0.1

function M.export(g, buildings, opts, report)
  local net = { nodes = {}, roads = {}, buildings = buildings }
  local box = plan_box()
  local by_profile, junctions, dead_ends = {}, 0, 0
  local ids = {}
  for _, n in ipairs(g:node_list()) do
    if #n.edges > 0 then
      local node = { x = r2(n.x), z = r2(n.z) }
      if n.osm and n.id == tostring(n.osm) then node.source = "node " .. n.id end
      if n.roundabout then node.roundabout = true end
      if n.elevated then
        node.bridge = true
        -- the deck height of the highest structure meeting here (psdl.city.tunnel.deck_height)
        local top = 1
        for _, e in ipairs(n.edges) do
          if e.attr.bridge and (e.attr.layer or 0) > top then top = e.attr.layer end
        end
        if top >= 2 then node.layer = top end
      end
      if #n.edges == 1 and n.edges[1].a ~= n.edges[1].b then
        -- a dead end: a turning circle where the map has one (highway=turning_circle or
        -- turning_loop on the node), an open end where the road was cut at the edge of the
        -- area (it goes on beyond the map); other dead ends get city generation's default
        if n.turning_circle then node.dead_end = "cul_de_sac" node.turning_circle = true
        elseif n.boundary then node.dead_end = "open" end
      end
      net.nodes[n.id] = node
      ids[#ids + 1] = n.id
      box:add(n.x, n.z)
      local d = Graph.degree(n)
      if d >= 3 then junctions = junctions + 1 elseif d == 1 then dead_ends = dead_ends + 1 end
    end
  end
  local total_length = 0
  for _, e in ipairs(g:edge_list()) do
    local a = e.attr
    local via
    if #e.pts > 2 then
      via = {}
      local pts = fillet(e.pts, fit.hw(e, opts.dimensions))
      -- rounded to centimetres, points of a tight arc or next to a moved node can fall on
      -- each other: only points at least MIN_STEP from the one before (and from the end) stay
      local px, pz = r2(e.a.x), r2(e.a.z)
      local bx, bz = r2(e.b.x), r2(e.b.z)
      for i = 2, #pts - 1 do
        local p = pts[i]
        local x, z = r2(p[1]), r2(p[2])
        if G.dist(x, z, px, pz) >= M.MIN_STEP and G.dist(x, z, bx, bz) >= M.MIN_STEP then
          via[#via + 1] = { x, z }
          px, pz = x, z
          box:add(p[1], p[2])
        end
      end
      if #via == 0 then via = nil end
    end
    local road = {
      from = e.a.id, to = e.b.id, via = via, profile = a.profile,
      lanes = a.lanes, width = a.width and r2(a.width),
      oneway = a.oneway or nil, sidewalk = a.sidewalk,
      bridge = a.bridge or nil, tunnel = a.tunnel or nil,
      layer = a.layer ~= 0 and a.layer or nil,
      name = a.name, ref = a.ref, highway = a.highway,
      divided = a.divided, median = a.median and r2(a.median),
      roundabout = a.roundabout, link = a.link, walkway = a.walkway,
      source = Graph.source_text(e.src),
    }
    net.roads[#net.roads + 1] = road
    by_profile[a.profile] = (by_profile[a.profile] or 0) + 1
    total_length = total_length + Graph.len(e)
  end
  for _, b in ipairs(buildings) do
    for _, p in ipairs(b.outline) do
      p[1], p[2] = r2(p[1]), r2(p[2])
      box:add(p[1], p[2])
    end
    if b.holes then
      for _, h in ipairs(b.holes) do for _, p in ipairs(h) do p[1], p[2] = r2(p[1]), r2(p[2]) end end
    end
  end
  if box.u0 <= box.u1 then
    net.bounds = { min_x = r2(box.u0), min_z = r2(box.v0), max_x = r2(box.u1), max_z = r2(box.v1) }
  end
  report.counts = {
    nodes = #ids, junctions = junctions, dead_ends = dead_ends, roads = #net.roads,
    by_profile = by_profile, buildings = #buildings, length = r2(total_length),
  }
  return net
end

return M
