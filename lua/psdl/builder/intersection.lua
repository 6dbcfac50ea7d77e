--- Intersections of psdl.builder: `Builder:intersection`, an intersection room where road ends
-- meet at a node (psdl.geom.junction).
local core = require "psdl.core"
local geom = require "psdl.geom"
local check = require "psdl.check"


local type, error, ipairs, pairs, tostring = type, error, ipairs, pairs, tostring
local pcall = pcall
local min, abs = math.min, math.abs
local string_format = string.format
local argerr, opt_problem, point_problem = check.argerr, check.opt_problem, check.point_problem
local dir_problem = check.dir_problem
check.own(debug.getinfo(1, "S").source)

-- Installed by psdl.builder (builder/init.lua): M is the module table, Builder and Room the
-- classes, P the builder's private helpers shared between its files.
return function(M, Builder, Room, P)
  local as_group, finite = P.as_group, P.finite
  local nonneg, profile_ok, profile_problem = P.nonneg, P.profile_ok, P.profile_problem
  local unknown_key = P.unknown_key
  -- the keys of `Builder:intersection` and of one of its arms (others are refused)
  local INTERSECTION_KEYS = { center = true, arms = true, radius = true, arc_step = true, room = true, tunnel = true,
                              textures = true }
  local ARM_KEYS = { dir = true, profile = true, crosswalk = true, min_distance = true }

  -- `junction` (the raw core.junction result) and `outline` (its points) of an
  -- intersection's info, made when asked for: the same kernel on the same arguments (kept per
  -- info table) gives the same geometry.
  local JUNCTION_STATE = setmetatable({}, { __mode = "k" }) -- info -> {center, arms, jopts}
  local JUNCTION_INFO = { __index = function(t, k)
    local st = (k == "junction" or k == "outline") and JUNCTION_STATE[t]
    if not st then return nil end
    local raw = core.junction(st[1], st[2], st[3])
    local jp, out = raw.points, {}
    for i, v in ipairs(raw.outline) do
      local q = 3 * (v - 1)
      out[i] = { jp[q + 1], jp[q + 2], jp[q + 3] }
    end
    rawset(t, "junction", raw)
    rawset(t, "outline", out)
    return rawget(t, k)
  end }

  -- The checks of `Builder:intersection`'s options; raises `bad argument #1 to
  -- 'intersection' (...)`.
  local function intersection_args(o)
    if type(o) ~= "table" then argerr(1, "intersection", "table expected, got " .. type(o)) end
    local c = o.center
    local m = unknown_key(o, INTERSECTION_KEYS) or point_problem(c, "center") or opt_problem(o.radius, "radius", "nonneg")
      or opt_problem(o.arc_step, "arc_step", "positive")
    if not m and (type(o.arms) ~= "table" or #o.arms == 0) then m = "arms: a list of arms expected" end
    if not m then
      for _, f in ipairs({ "room", "tunnel" }) do
        if o[f] ~= nil and type(o[f]) ~= "table" then m = string_format("%s: table expected, got %s", f, type(o[f])); break end
      end
    end
    local angles = {}
    for i = 1, m and 0 or #o.arms do
      local a = o.arms[i]
      local d = type(a) == "table" and a.dir
      if type(a) == "table" then
        m = unknown_key(a, ARM_KEYS, "arms[" .. i .. "]")
        if not m and type(a.profile) == "table" then m = profile_problem(a.profile, "arms[" .. i .. "].profile") end
        if m then break end
      end
      if not (type(d) == "table" and finite(d[1]) and finite(d[2]) and d[1] * d[1] + d[2] * d[2] >= 1e-24
              and (a.profile == nil or profile_ok(a.profile)) and (a.crosswalk == nil or nonneg(a.crosswalk))
              and (a.min_distance == nil or nonneg(a.min_distance))) then -- something is wrong: which
        local an = "arms[" .. i .. "]"
        if type(a) ~= "table" then m = string_format("%s: table expected, got %s", an, type(a)); break end
        m = dir_problem(a.dir, an .. ".dir") or (a.profile ~= nil and profile_problem(a.profile, an .. ".profile"))
          or opt_problem(a.crosswalk, an .. ".crosswalk", "nonneg") or opt_problem(a.min_distance, an .. ".min_distance", "nonneg")
        if m then break end
      end
      local ang = geom.angle(a.dir[1], a.dir[2])
      for k, other in ipairs(angles) do
        local d = abs(ang - other) % 360
        if min(d, 360 - d) < 1 then
          m = string_format("arms[%d] and arms[%d] are less than 1 degree apart", k, i)
          break
        end
      end
      if m then break end
      angles[i] = ang
    end
    if m then argerr(1, "intersection", m) end
  end

  -- The intersection itself, its options checked (`intersection_args`).
  local function intersection_build(self, o)
    local c = o.center
    local arms = {}
    for i, a in ipairs(o.arms) do
      local p = a.profile or { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
      local cw = a.crosswalk
      if cw == nil then cw = (p.kind or "road") == "walkway" and 0 or 3 end
      arms[i] = { dir = a.dir, profile = p, crosswalk = cw, min_distance = a.min_distance }
    end
    -- the kernel, the pooling of its points and the fans of its surface in one call
    local jopts = { radius = o.radius or 5, arc_step = o.arc_step, snap = self.snap, records = true }
    local center = { c[1], c[2] or 0, c[3] }
    local ok, j = pcall(core.junction_room, self.vpool, center, arms, jopts)
    if not ok then
      check.raise("intersection at (" .. c[1] .. ", " .. c[3] .. "): " .. tostring(j):gsub("^.-%(", "("))
    end
    local ropts = {}
    for k, v in pairs(o.room or {}) do ropts[k] = v end
    ropts.kind = "intersection"
    ropts.outline_refs = j.outline
    local r = self:room(ropts)
    local g = as_group(self, o.textures or self.style.intersection, "intersection", "intersection")
    if o.tunnel then r:junction_tunnel(o.tunnel) end
    -- road fans over the surface (flat at the node's height), the sidewalk strips with their
    -- caps and the crosswalks: one flat list of records from the kernel, one store call
    if j.fans == 0 then r:fail("%s: the polygon has no area", "road_fan") end
    P.push_flat(r, g, j.records)
    local info = { sections = j.sections, centers = {}, dirs = {}, distance = j.distance, room = r }
    for i, a in ipairs(arms) do
      local dx, dz = geom.unit(a.dir[1], a.dir[2])
      info.dirs[i] = { dx, dz }
      info.centers[i] = { c[1] + dx * j.distance[i], c[2] or 0, c[3] + dz * j.distance[i] }
    end
    JUNCTION_STATE[info] = { center, arms, jopts }
    return r, setmetatable(info, JUNCTION_INFO)
  end

  --- An intersection room where road ends meet at a node (psdl.geom.junction): flat road fans
  -- (0x5), corner sidewalk strips with rounded curbs and caps where a sidewalk stops (0x1),
  -- a crosswalk across each carriageway (0x4), one texture group, flag 0x10.
  -- @tparam table o `center` `{x, y, z}`; `arms`: `{ {dir = {x, z}, profile = {...},
  -- crosswalk = m (3 by default for roads, 0 for walkways), min_distance = m}, ... }`, each
  -- profile seen travelling outward; `radius` (curb corner radius, 5), `arc_step` (degrees,
  -- 15); `textures` (intersection group, default the style's); `room`: options of
  -- `Builder:room`; `tunnel`: options of `Room:junction_tunnel`
  -- @treturn Room
  -- @treturn table info `{sections = {rows...} (per arm, outward left to right), centers =
  -- {points} (per arm, where its road starts), dirs = {{x, z}...}, distance = {...},
  -- outline = points, junction = the raw psdl.geom.junction result}`; pass `{info, i}` as a
  -- street's `from` or `to`
  function Builder:intersection(o)
    intersection_args(o)
    return intersection_build(self, o)
  end

  -- `Builder:intersection` for psdl.city's nodes (`M.trusted.junction`,
  -- psdl.city.intersection) in one C call (core.junction_store: kernel, pooling and the
  -- records pushed into the store), without option tables and without the info a script
  -- gets: the node at (x, y, z); `arms` flat, 5 values an arm (dx, dz as psdl.city.network
  -- found them: unit, at least 2 degrees apart; the resolved profile; crosswalk;
  -- min_distance); `room_name`, `tunnel`, `bridge` of the room; `tunnel_opts` those of
  -- `Room:junction_tunnel`. Only the values taken from the script are checked, with the
  -- public call's messages (argument #1 to 'intersection'): the centre, the radius, the arc
  -- step, each arm's crosswalk and minimum distance, and the tunnel table. Returns the room,
  -- the arms' distances (m: where their roads start) and their end sections (per arm a flat
  -- x, y, z array, outward left to right).
  local junction_store = core.junction_store
  local MAX_COORD = check.MAX_COORDINATE
  local function trusted_junction(self, x, y, z, arms, radius, arc_step, textures, room_name, tunnel, bridge,
                                  tunnel_opts)
    local m
    if not (finite(x) and x >= -MAX_COORD and x <= MAX_COORD and finite(z) and z >= -MAX_COORD and z <= MAX_COORD
            and (y == nil or (finite(y) and y >= -MAX_COORD and y <= MAX_COORD))) then
      m = point_problem({ x, y, z }, "center")
    end
    m = m or opt_problem(radius, "radius", "nonneg") or opt_problem(arc_step, "arc_step", "positive")
    if not m and tunnel_opts ~= nil and type(tunnel_opts) ~= "table" then
      m = string_format("tunnel: table expected, got %s", type(tunnel_opts))
    end
    for i = 1, m and 0 or #arms // 5 do
      local cw, md = arms[5 * i - 1], arms[5 * i]
      if not (nonneg(cw) and nonneg(md)) then
        local an = "arms[" .. i .. "]"
        m = opt_problem(cw, an .. ".crosswalk", "nonneg") or opt_problem(md, an .. ".min_distance", "nonneg")
        break
      end
    end
    if m then argerr(1, "intersection", m) end
    if self.pending_doc then self.pending_doc() end -- a finished document not yet made is made now
    local r = P.road_room(self, "intersection", room_name, tunnel, bridge, 0)
    local g = as_group(self, textures or self.style.intersection, "intersection", "intersection")
    if tunnel_opts then r:junction_tunnel(tunnel_opts) end
    local ok, outline, dist, sections, fans = pcall(junction_store, self.vpool, self.store, r.serial, g.index, x,
      y or 0, z, arms, radius or 5, arc_step or 0, self.snap or 0)
    if not ok then
      check.raise("intersection at (" .. x .. ", " .. z .. "): " .. tostring(outline):gsub("^.-%(", "("))
    end
    if fans == 0 then r:fail("%s: the polygon has no area", "road_fan") end
    -- (what finish would refuse, found at the node: psdl.city.repair drops roads there)
    if #outline > M.MAX_PERIMETER then
      r:fail("%d perimeter points; the game keeps the count in one byte, %d at most (§3.2)", #outline, M.MAX_PERIMETER)
    end
    r.outline = outline
    r:check_budget()
    return r, dist, sections
  end
  M.trusted.junction = trusted_junction
end
