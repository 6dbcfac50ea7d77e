--- Streets of psdl.builder: `Builder:street`, a road, divided road or walkway along a centre
-- line in one or more road rooms, and the profile checks it shares with intersections.
local core = require "psdl.core"
local styles = require "psdl.styles"
local geom = require "psdl.geom"
local check = require "psdl.check"


local type, error, ipairs, pairs, tostring = type, error, ipairs, pairs, tostring
local getmetatable, pcall = getmetatable, pcall
local max, min, huge = math.max, math.min, math.huge
local string_format = string.format
local argerr, shown, opt_problem = check.argerr, check.shown, check.opt_problem
local MAX_COORD, point_problem = check.MAX_COORDINATE, check.point_problem
local flat_check = core.flat_check
local points_problem, dir_problem = check.points_problem, check.dir_problem
check.own(debug.getinfo(1, "S").source)

-- Installed by psdl.builder (builder/init.lua): M is the module table, Builder and Room the
-- classes, P the builder's private helpers shared between its files.
-- long: installs the street calls (public and psdl.city's trusted ones) and the checks they
-- share; its own lines are key tables and doc comments (each function's body is counted apart)
return function(M, Builder, Room, P)
  local as_group, pool_flat = P.as_group, P.pool_flat

  -- Spline options for a profile.
  local function half_width(p)
    local m = (p.median or 0) / 2
    return m + max((p.left or 0) + (p.sidewalk_left or 0), (p.right or 0) + (p.sidewalk_right or 0))
  end

  local function kind_of_profile(p)
    local k = p.kind or "road"
    if k == "road" then return "road", 4 end
    if k == "divided" then return "divided_road", 6 end
    if k == "walkway" then return "walkway", 2 end
    check.raise("bad profile kind '" .. tostring(k) .. "' (road, divided or walkway)")
  end

  -- A street's `from` / `to`: {info, arm} with info from Builder:intersection.
  local function end_problem(e, name)
    if e == nil then return nil end
    if type(e) ~= "table" then return string_format("%s: {info, arm} expected, got %s", name, type(e)) end
    local info, i = e[1], e[2]
    if type(info) ~= "table" or type(info.centers) ~= "table" or type(info.dirs) ~= "table"
       or type(info.sections) ~= "table" then
      return string_format("%s[1]: the info table of Builder:intersection expected, got %s", name,
        type(info) == "table" and "another table" or type(info))
    end
    local n = #info.sections
    if type(i) ~= "number" or i % 1 ~= 0 or i < 1 or i > n then
      return string_format("%s[2]: arm number 1..%d expected (the junction has %d arm%s), got %s", name, n, n,
        n == 1 and "" or "s", shown(i))
    end
  end

  -- A street's `center`: a list of 2 or more points, or the same as a flat x, y, z array (what
  -- psdl.city passes: its centre lines come flat from core.spline). When it passes: nil and
  -- the flat array (a copy of a list of points; a flat array itself).
  local function center_problem(c)
    if type(c) ~= "table" or type(c[1]) ~= "number" then return points_problem(c, "center", 2) end
    local n = #c
    local i = flat_check(c) -- (in C: every number within +-65,536 m, PSDL_MAX_COORDINATE)
    if i then
      local k = (i - 1) // 3 + 1
      local q = 3 * k
      return point_problem({ c[q - 2], c[q - 1], c[q] }, string_format("center[%d]", k))
        or string_format("center[%d]: bad point", k)
    end
    if n % 3 ~= 0 then return string_format("center: a flat array of x, y, z expected, got %d numbers", n) end
    if n < 6 then return string_format("center: %d or more points expected, got %d", 2, n // 3) end
    return nil, c
  end

  -- A section: `stride` points.
  local function section_problem(row, name, stride)
    if row == nil then return nil end
    if type(row) ~= "table" then return string_format("%s: %d points expected, got %s", name, stride, type(row)) end
    if #row ~= stride then return string_format("%s: %d points expected (the profile's section), got %d", name, stride, #row) end
    for c = 1, stride do -- the points as points_problem takes them, without the flat copy it makes
      local p = row[c]
      if type(p) ~= "table" then return points_problem(row, name) end
      local x, y, z = p[1], p[2], p[3]
      if not (type(x) == "number" and x >= -MAX_COORD and x <= MAX_COORD and type(z) == "number" and z >= -MAX_COORD
              and z <= MAX_COORD and (not y or (type(y) == "number" and y >= -MAX_COORD and y <= MAX_COORD))) then
        return points_problem(row, name)
      end
    end
  end

  -- Plan length of a polyline of points.
  local function plan_length(pts)
    local len = 0
    for i = 2, #pts do len = len + geom.dist2(pts[i - 1], pts[i]) end
    return len
  end

  local WIDTHS = { "left", "right", "sidewalk_left", "sidewalk_right", "median" }
  -- The widest a profile's carriageway (left + right), median or sidewalk may be, metres
  -- (psdl.builder.MAX_WIDTH; psdl.city.profiles.MAX_WIDTH is the same): the widest retail road
  -- is about 40 m across, and a typo of 1e6 m would make a street of one enormous quad.
  local MAX_WIDTH = check.MAX_WIDTH
  local STREET_TABLES = { "room", "tunnel", "railing", "divider" }
  -- The first problem of a street's option tables (`room`, `tunnel`, `railing`, `divider`:
  -- tables, their heights, value and repeats numbers), or nil.
  local function tables_problem(o)
    for _, f in ipairs(STREET_TABLES) do
      local t = o[f]
      if t ~= nil and type(t) ~= "table" then return string_format("%s: table expected, got %s", f, type(t)) end
      if t ~= nil and f ~= "room" then
        local m = opt_problem(t.height, f .. ".height") or opt_problem(t.height2, f .. ".height2")
          or opt_problem(t.value, f .. ".value") or opt_problem(t.repeats, f .. ".repeats")
        if m then return m end
      end
    end
    return nil
  end
  local unknown_key = P.unknown_key
  -- the keys of a profile and of `Builder:street` (others are refused: a misspelt one)
  local PROFILE_KEYS = { kind = true, left = true, right = true, sidewalk_left = true, sidewalk_right = true,
                         median = true, curb = true, miter_limit = true }
  local STREET_KEYS = { path = true, center = true, from = true, to = true, via = true, profile = true,
                        textures = true, divider = true, tunnel = true, railing = true, room = true, split = true,
                        spacing = true, max_angle = true, planar_tol = true, start_dir = true, end_dir = true,
                        start_section = true, end_section = true, allow_clamp = true }

  -- Quick tests that pass exactly the values the *_problem checks pass, without building the
  -- field names their messages need (checks run once per street, arm and building).
  local function finite(v) return type(v) == "number" and v > -huge and v < huge end
  local function nonneg(v) return type(v) == "number" and v >= 0 and v < huge end

  -- (the widths of WIDTHS written out: this runs for every street and every arm)
  local function profile_ok(p)
    if type(p) ~= "table" then return false end
    local k = p.kind or "road"
    if k ~= "road" and k ~= "divided" and k ~= "walkway" then return false end
    local l, r, sl, sr, md = p.left, p.right, p.sidewalk_left, p.sidewalk_right, p.median
    if (l ~= nil and not (type(l) == "number" and l >= 0 and l < huge))
       or (r ~= nil and not (type(r) == "number" and r >= 0 and r < huge))
       or (sl ~= nil and not (type(sl) == "number" and sl >= 0 and sl < huge))
       or (sr ~= nil and not (type(sr) == "number" and sr >= 0 and sr < huge))
       or (md ~= nil and not (type(md) == "number" and md >= 0 and md < huge)) then
      return false
    end
    local c, ml = p.curb, p.miter_limit
    if (c ~= nil and not finite(c)) or (ml ~= nil and not finite(ml)) then return false end
    l, r = l or 0, r or 0
    if k == "divided" and not (l > 0 and r > 0) then return false end
    if l + r > MAX_WIDTH or (sl or 0) > MAX_WIDTH or (sr or 0) > MAX_WIDTH or (md or 0) > MAX_WIDTH then return false end
    return l + r > 0
  end

  -- A street or arm profile: a known kind, widths finite and not negative, some carriageway.
  local function profile_problem(p, name)
    if type(p) == "table" then
      local bad = unknown_key(p, PROFILE_KEYS, name)
      if bad then return bad end
    end
    if profile_ok(p) then return nil end
    if type(p) ~= "table" then return string_format("%s: table expected, got %s", name, type(p)) end
    local k = p.kind or "road"
    if k ~= "road" and k ~= "divided" and k ~= "walkway" then
      return string_format("%s.kind: \"road\", \"divided\" or \"walkway\" expected, got %s", name, shown(k))
    end
    for _, f in ipairs(WIDTHS) do
      local m = opt_problem(p[f], name .. "." .. f, "nonneg")
      if m then return m end
    end
    local m = opt_problem(p.curb, name .. ".curb") or opt_problem(p.miter_limit, name .. ".miter_limit")
    if m then return m end
    if k == "divided" and not ((p.left or 0) > 0 and (p.right or 0) > 0) then
      return string_format("%s: a divided road needs positive left and right widths, got %s and %s", name,
        shown(p.left or 0), shown(p.right or 0))
    end
    if not ((p.left or 0) + (p.right or 0) > 0) then
      return string_format("%s: left + right must be positive (the carriageway has no width)", name)
    end
    if (p.left or 0) + (p.right or 0) > MAX_WIDTH then
      return string_format("%s: left + right = %s m: wider than any road (at most %d m, psdl.builder.MAX_WIDTH)", name,
        shown((p.left or 0) + (p.right or 0)), MAX_WIDTH)
    end
    for _, f in ipairs { "sidewalk_left", "sidewalk_right", "median" } do
      if (p[f] or 0) > MAX_WIDTH then
        return string_format("%s.%s = %s m: wider than any road has (at most %d m, psdl.builder.MAX_WIDTH)", name, f,
          shown(p[f]), MAX_WIDTH)
      end
    end
  end

  -- The rest of a street's info (the points of its sections and rails, `Builder:street`),
  -- made when first asked for: the same core.street_rooms call again (every point is pooled
  -- already, so the pool does not change), from the state kept per info table.
  local STREET_STATE = setmetatable({}, { __mode = "k" }) -- info -> {builder, cflat, profile, sopts, nsec, stride}
  local STREET_LAZY = { center = true, flat = true, refs = true, left = true, right = true, first = true, last = true }
  local STREET_INFO = { __index = function(t, key)
    local st = STREET_LAZY[key] and STREET_STATE[t]
    if not st then return nil end
    local self, cflat, profile, sopts, nsec, stride = st[1], st[2], st[3], st[4], st[5], st[6]
    sopts.flat = true
    local all = core.street_rooms(self.vpool, cflat, profile, sopts)
    local sf = all.flat
    local left, right = {}, {}
    for k = 1, nsec do
      local i, j = 3 * (k - 1) * stride, 3 * (k * stride - 1)
      left[k] = { sf[i + 1], sf[i + 2], sf[i + 3] }
      right[k] = { sf[j + 1], sf[j + 2], sf[j + 3] }
    end
    local function row(k)
      local r = {}
      for c = 1, stride do
        local i = 3 * ((k - 1) * stride + c - 1)
        r[c] = { sf[i + 1], sf[i + 2], sf[i + 3] }
      end
      return r
    end
    rawset(t, "center", geom.unflatten(cflat))
    rawset(t, "flat", sf)
    rawset(t, "refs", all.refs)
    rawset(t, "left", left)
    rawset(t, "right", right)
    rawset(t, "first", row(1))
    rawset(t, "last", row(nsec))
    return rawget(t, key)
  end }

  -- The checks of `Builder:street`'s options; raises `bad argument #1 to 'street' (...)`.
  -- Returns the profile, its attribute kind and stride, and the centre line as a flat array
  -- when `center` was given.
  local function street_args(o)
    if type(o) ~= "table" then argerr(1, "street", "table expected, got " .. type(o)) end
    local profile = o.profile or { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
    local m = unknown_key(o, STREET_KEYS) or profile_problem(profile, "profile")
    if m then argerr(1, "street", m) end
    local akind, stride = kind_of_profile(profile)
    m = opt_problem(o.spacing, "spacing", "positive") or opt_problem(o.max_angle, "max_angle", "positive")
      or opt_problem(o.planar_tol, "planar_tol", "positive") or opt_problem(o.split, "split", "int", 2)
      or (o.start_dir ~= nil and dir_problem(o.start_dir, "start_dir")) or (o.end_dir ~= nil and dir_problem(o.end_dir, "end_dir"))
      or (o.path ~= nil and points_problem(o.path, "path")) or (o.via ~= nil and points_problem(o.via, "via"))
    local center_flat -- the centre line checked and flattened in one pass (points_problem)
    if not m and o.center ~= nil then m, center_flat = center_problem(o.center) end
    m = m or end_problem(o.from, "from") or end_problem(o.to, "to")
      or section_problem(o.start_section, "start_section", stride) or section_problem(o.end_section, "end_section", stride)
    if not m then
      m = tables_problem(o)
    end
    if m then argerr(1, "street", m) end
    return profile, akind, stride, center_flat
  end

  -- A plan direction that dir_problem passes (the quick test; dir_problem names the fault).
  local function dir_ok(d)
    if type(d) ~= "table" then return false end
    local x, z = d[1], d[2]
    return finite(x) and finite(z) and x * x + z * z >= 1e-24
  end

  -- The rooms of a street from core.street_rooms' result `res` (`Builder:street`, the
  -- trusted street): per room a road Room (its name, tunnel, bridge and flags; prop_rule to
  -- the first), the clamp refused unless allowed, the tunnel (or railing) attribute, its
  -- record (a road's or walkway's in the street's group; a divided road's with the divider
  -- table, closed at the first room when cap_start, at the last when cap_end) and outline.
  local road_room, push_flat, divided = P.road_room, P.push_flat, P.divided
  local NO_DIVIDER = {} -- (never written to)
  local function rooms_of(self, res, akind, name, is_tunnel, bridge, flags, prop_rule, allow_clamp, tunnel, textures,
                          divider, cap_start, cap_end)
    local clamped = res.clamped
    local list, records, outlines = res.rooms, res.records, res.outlines -- (divided; road or walkway)
    local nrooms = records and #records or #list
    local rooms, group = {}, nil
    -- a refused clamp is named before the vertex budget: a centre line that zigzags tighter
    -- than the road is wide pools enough sections to pass the budget by itself, and the bend
    -- is this street's fault (psdl.city.repair eases it), the budget the whole city's
    local refused = clamped > 0 and not allow_clamp
    for k = 1, nrooms do
      local pr = k == 1 and prop_rule or 0
      -- (every key known: Builder:room without its option table, or with it for the flags)
      local r = flags == nil and road_room(self, "road", name, is_tunnel, bridge, pr, refused)
        or P.new_room(self, { kind = "road", name = name, tunnel = is_tunnel, bridge = bridge, flags = flags,
                              prop_rule = pr }, true)
      if refused then
        r:fail("the centre line bends tighter than the road is wide (%d cross-section points clamped); widen the "
          .. "curve or pass allow_clamp", clamped)
      end
      if tunnel then r:tunnel(tunnel) end
      if akind == "road" then
        -- (the group once a street, after the first room's tunnel group as before)
        group = group or as_group(self, textures, "road", "street")
        push_flat(r, group, records[k])
        r.outline = outlines[k]
      elseif akind == "walkway" then
        group = group or as_group(self, textures, "single", "street")
        push_flat(r, group, records[k])
        r.outline = outlines[k]
      else
        divided(r, list[k].refs, textures, divider or NO_DIVIDER, k == 1 and cap_start, k == nrooms and cap_end)
        r.outline = list[k].outline
      end
      rooms[k] = r
    end
    return rooms
  end

  -- The street itself, its options checked (`street_args`).
  local function street_build(self, o, profile, akind, stride, center_flat)
    local ctrl, start_dir, end_dir = {}, o.start_dir, o.end_dir
    local start_section, end_section = o.start_section, o.end_section
    if o.from then
      local info, i = o.from[1], o.from[2]
      ctrl[1] = info.centers[i]
      start_dir = start_dir or info.dirs[i]
      start_section = start_section or info.sections[i]
    end
    for _, p in ipairs(o.path or o.via or {}) do ctrl[#ctrl + 1] = p end
    if o.to then
      local info, i = o.to[1], o.to[2]
      ctrl[#ctrl + 1] = info.centers[i]
      local d = info.dirs[i]
      end_dir = end_dir or { -d[1], -d[2] }
      end_section = end_section or M.reverse(info.sections[i])
    end
    local cflat
    if o.center then
      cflat = center_flat
    else
      if #ctrl < 2 then argerr(1, "street", "path: 2 or more points expected (or from / to)") end
      if plan_length(ctrl) < 1e-6 then
        argerr(1, "street", "path has zero horizontal length" .. ((o.from or o.to) and " (with from / to)" or ""))
      end
      cflat = core.spline(geom.flatten(ctrl), {
        spacing = o.spacing, max_angle = o.max_angle, half_width = half_width(profile),
        planar_tol = o.planar_tol, start_dir = start_dir, end_dir = end_dir })
      if #cflat < 6 then argerr(1, "street", "path has zero horizontal length") end
    end
    -- the end sections an intersection gives (those of the options are checked above)
    if start_section and not o.start_section then
      local pm = section_problem(start_section, "from: the arm's end section", stride)
      if pm then argerr(1, "street", pm) end
    end
    if end_section and not o.end_section then
      local pm = section_problem(end_section, "to: the arm's end section", stride)
      if pm then argerr(1, "street", pm) end
    end
    -- sections, end rows, pooling, rooms and their outlines in one call (psdl_street_rooms)
    local sopts = { start_dir = start_dir, end_dir = end_dir, start_section = start_section, end_section = end_section,
                    split = o.split or 64, snap = self.snap, min_length = o.center and 1e-6 or nil,
                    records = akind ~= "divided_road" } -- (a road or walkway: its records as strings)
    local res = core.street_rooms(self.vpool, cflat, profile, sopts)
    if not res then argerr(1, "street", "center has zero horizontal length") end
    local clamped, nsec = res.clamped, res.sections
    self.clamped = self.clamped + clamped
    local ropts = o.room or {}
    local tunnel = o.tunnel
    if o.railing then
      tunnel = {}
      for k, v in pairs(o.railing) do tunnel[k] = v end
      if tunnel.height == nil then tunnel.height = 1.5 end
      if tunnel.height2 == nil then tunnel.height2 = 1.0 end
      if tunnel.outer == nil and not tunnel.flags then tunnel.outer = true end
      tunnel.textures = tunnel.textures or styles.tunnel(self.style, "railing")
    end
    local textures = o.textures
    if not textures then textures = akind == "walkway" and self.style.alley.surface or self.style.road end
    local is_tunnel = ropts.tunnel
    if is_tunnel == nil then is_tunnel = o.tunnel ~= nil end
    local dv = o.divider or NO_DIVIDER
    local rooms = rooms_of(self, res, akind, ropts.name, is_tunnel, ropts.bridge, ropts.flags, ropts.prop_rule,
      o.allow_clamp, tunnel, textures, o.divider, dv.cap_start, dv.cap_end)
    -- the rest of the info (points of the sections and rails) is made when asked for: the
    -- same call again (every point is pooled already, so the pool does not change)
    local info = setmetatable({ stride = stride, sections = nsec }, STREET_INFO)
    STREET_STATE[info] = { self, cflat, profile, sopts, nsec, stride }
    return rooms, info
  end

  --- A street: a road, divided road or walkway along a centre line, in one or more road rooms.
  -- @tparam table o fields:
  --
  -- * `path`: control points `{ {x, y, z}, ... }` of a smooth centre line (psdl.geom.spline),
  --   or `center`: an already sampled centre line (points, or a flat `{x1, y1, z1, x2, ...}`
  --   array of them);
  -- * `from`, `to`: `{junction_info, arm}` (from `Builder:intersection`): the street starts
  --   (ends) on that arm's end section, square to the arm, and `path` only needs the via
  --   points between (or nothing);
  -- * `profile`: `{kind = "road"|"divided"|"walkway", left, right, sidewalk_left,
  --   sidewalk_right, median}` (metres, seen in the direction of travel); default
  --   `{kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3}`;
  -- * `textures`: road group (default the style's road, or its alley for walkways);
  --   `divider`: options of `Room:divided_road`;
  -- * `spacing` (5 m), `max_angle` (7.5°), `planar_tol` (0.02 m): sampling;
  -- * `start_section`, `end_section`: rows of points that replace the first / last section
  --   (in the direction of travel); `start_dir`, `end_dir`: end tangents `{x, z}`;
  -- * `split`: most sections per room (default 64; the road is cut at full sections);
  -- * `tunnel` or `railing`: options of `Room:tunnel` for every room (a railing defaults to
  --   `{height = 1.5, height2 = 1.0, outer = true}` and the style's railing textures);
  -- * `room`: options of `Builder:room` for every room (`prop_rule` goes to the first only);
  -- * `allow_clamp`: accept sections clamped on curves tighter than the road.
  -- @treturn table the rooms in order
  -- @treturn table info `{center = points, sections = n, stride = points per section, flat =
  -- every section's points as a flat x, y, z array, refs = their vertex references, first,
  -- last = the end sections (points), left, right = the outer-left / outer-right points of
  -- every section}` (the rails are what a block beside the street shares)
  function Builder:street(o)
    return street_build(self, o, street_args(o))
  end

  -- `Builder:street` for psdl.city (`M.trusted.street`, psdl.city.road) on a sampled centre
  -- line, its options as arguments (no option tables): the centre line (a flat x, y, z array
  -- or points), the resolved profile, textures (nil: the style's), start_dir, end_dir ({x,
  -- z}), start_section, end_section (rows of points or flat rows), split, the divider table
  -- of a divided profile with cap_start, cap_end, the rooms' name, the first room's
  -- prop_rule, room_tunnel, room_bridge (as `room.tunnel`, `room.bridge`), tunnel and
  -- railing (as the options of the same names). These are the city's own, made from what it
  -- has checked (a resolved profile, the sections and directions of its intersections, a
  -- split), so only what could still be wrong is checked: the centre line's numbers (within
  -- float32, in C), the end directions, and tunnel and railing options (taken from the
  -- script's tables); with the public call's messages. Returns the rooms only (no info).
  local street_rooms = core.street_rooms
  local function trusted_street(self, center, profile, textures, start_dir, end_dir, start_section, end_section,
                                split, divider, cap_start, cap_end, name, prop_rule, room_tunnel, room_bridge, tunnel,
                                railing)
    local akind, stride = kind_of_profile(profile)
    local m, cflat = center_problem(center)
    if not m and start_dir ~= nil and not dir_ok(start_dir) then m = dir_problem(start_dir, "start_dir") end
    if not m and end_dir ~= nil and not dir_ok(end_dir) then m = dir_problem(end_dir, "end_dir") end
    if not m and (tunnel ~= nil or railing ~= nil) then
      m = tables_problem({ tunnel = tunnel, railing = railing, divider = divider })
    end
    if m then argerr(1, "street", m) end
    -- sections, end rows, pooling, rooms and their outlines in one call (psdl_street_rooms)
    local res = street_rooms(self.vpool, cflat, profile, {
      start_dir = start_dir, end_dir = end_dir, start_section = start_section, end_section = end_section,
      split = split or 64, snap = self.snap, min_length = 1e-6,
      records = akind ~= "divided_road" }) -- (a road or walkway: its records as strings)
    if not res then argerr(1, "street", "center has zero horizontal length") end
    local clamped = res.clamped
    self.clamped = self.clamped + clamped
    local is_tunnel = room_tunnel
    if is_tunnel == nil then is_tunnel = tunnel ~= nil end
    if railing then
      local t = {}
      for k, v in pairs(railing) do t[k] = v end
      if t.height == nil then t.height = 1.5 end
      if t.height2 == nil then t.height2 = 1.0 end
      if t.outer == nil and not t.flags then t.outer = true end
      t.textures = t.textures or styles.tunnel(self.style, "railing")
      tunnel = t
    end
    if not textures then textures = akind == "walkway" and self.style.alley.surface or self.style.road end
    return rooms_of(self, res, akind, name, is_tunnel, room_bridge, nil, prop_rule, false, tunnel, textures, divider,
      divider and cap_start, divider and cap_end)
  end
  M.trusted.street = trusted_street

  -- `M.trusted.run_street`, psdl.city.road's usual run (one piece on the ground) in one C
  -- call (core.run_street: centre line, sections, rooms of about room_length, records into
  -- the store): what core.spline, `trusted.street` and its rooms do for it, without a table
  -- per sample, per option or per record. Takes the control points (flat x, y, z), the
  -- profile, textures, the divider table of a divided profile, the end directions and rows
  -- of the run's intersections, the spline's spacing, max_angle and half_width, the city's
  -- room_length, the rooms' name, the first room's prop_rule and whether end_section is
  -- outward from the intersection at the end (as Builder:intersection gives it; read in
  -- reverse). Returns the rooms, or nil (the builder unchanged) when the run needs the
  -- general way (`core.spline` and `trusted.street`), which raises the message for what is
  -- unusual about it.
  local run_street = core.run_street
  local RUN = {} -- (core.run_street's numbers, refilled each call: no table per run)
  local math_type = math.type
  local Room = Room
  local function trusted_run_street(self, ctrl, profile, textures, divider, start_dir, end_dir, start_section,
                                    end_section, spacing, max_angle, half_width, room_length, name, prop_rule,
                                    end_outward)
    local akind = kind_of_profile(profile)
    if prop_rule ~= nil and prop_rule ~= 0
       and opt_problem(prop_rule, "prop_rule", "int", 0, core.limits.prop_rule) then
      return nil
    end
    if not textures then textures = akind == "walkway" and self.style.alley.surface or self.style.road end
    local ngroups = #self.groups
    local g, dg, dt, value, aux, caps = nil, nil, 0, 0, 0, 0
    if akind == "divided_road" then
      -- what P.divided does at the first room: the road group, the divider's type and value
      -- (a bad one: the general way), the divider group
      g = as_group(self, textures, "road", "divided_road")
      local d = divider or NO_DIVIDER
      dt = d.divider or "elevated"
      if type(dt) == "string" then dt = M.DIVIDERS[dt] end
      value = d.value
      if value == nil and type(dt) == "number" then
        if dt == 1 then value = d.repeats or 5.0
        elseif dt == 3 then value = d.height or 1.0
        else value = d.height or 0.15 end
      end
      if not (type(dt) == "number" and dt >= 0 and dt <= 63 and dt % 1 == 0 and type(value) == "number"
              and value >= 0 and value < 256) then
        return nil
      end
      dg = as_group(self, d.divider_textures or self.style.divider, "divider", "divided_road")
      aux = (math_type(dt) == "integer" and 1 or 0) | (math_type(value) == "integer" and 8 or 0)
      caps = divider and 3 or 0
    else
      g = as_group(self, textures, akind == "road" and "road" or "single", "street")
    end
    if self.pending_doc then self.pending_doc() end -- a finished document not yet made is made now
    RUN[1], RUN[2], RUN[3], RUN[4], RUN[5] = spacing, max_angle or 0, half_width, room_length, self.snap or 0
    RUN[6], RUN[7], RUN[8], RUN[9], RUN[10], RUN[11] = g.index, dg and dg.index or 0, dt, value, aux, caps
    local first, nrooms, outlines = run_street(self.vpool, self.store, ctrl, profile, start_dir, end_dir, start_section,
      end_section, RUN, end_outward)
    if not first then
      -- (the general way makes the groups again, in its own order)
      local groups, by_key = self.groups, self.group_by_key
      for i = #groups, ngroups + 1, -1 do
        by_key[groups[i].key] = nil
        groups[i] = nil
      end
      return nil
    end
    local rooms, all = { nil, nil }, self.rooms -- (the usual run's one or two rooms: no growth)
    for k = 1, nrooms do
      -- (the outline in the constructor: the room is made at the size psdl.city's fields fill)
      local r = setmetatable({
        builder = self, kind = "road", name = name, is_tunnel = false, is_bridge = false, flags = nil,
        prop_rule = k == 1 and prop_rule or 0, serial = first + k - 1, outline = outlines[k],
      }, Room)
      all[#all + 1] = r
      rooms[k] = r
    end
    rooms[1]:check_budget()
    return rooms
  end
  M.trusted.run_street = trusted_run_street

  --- A room outline in plan for overlap tests (read API; psdl.city.network's `overlaps`): the
  -- points of vertex references as `{x, z}`, a point within `eps` metres (in x and z) of the
  -- last one kept left out, with the box of all of them, in one call (`core.plan_outline`).
  -- @tparam table refs vertex references (a room's `outline`)
  -- @tparam[opt] number eps metres (1e-6)
  -- @treturn table `{ {x, z}, ..., x0 =, z0 =, x1 =, z1 = }`
  -- A bad argument raises `bad argument #n to 'plan_outline' (...)` at the caller's line.
  function Builder:plan_outline(refs, eps)
    if getmetatable(self) ~= Builder then
      check.raise(string_format("calling 'plan_outline' on bad self (Builder expected, got %s)", type(self)))
    end
    if type(refs) ~= "table" or getmetatable(refs) ~= nil then
      argerr(1, "plan_outline", "refs: list of vertex references expected, got "
        .. (getmetatable(refs) == Room and "a Room (its outline is room.outline)" or type(refs)))
    end
    local m = opt_problem(eps, "eps", "nonneg")
    if m then argerr(2, "plan_outline", m) end
    local ok, res = pcall(core.plan_outline, self.vpool, refs, eps)
    if not ok then
      -- the references are checked in C (core.plan_outline's argument 2)
      local what = type(res) == "string" and res:match("bad argument #2 to '[^']*plan_outline' %((.*)%)$")
      if what then argerr(1, "plan_outline", what) end
      error(res, 0)
    end
    return res
  end

  --- Rooms that overlap in plan, of owners that are not related (read API; psdl.city.network's
  -- `overlaps`, core.room_overlaps): each outline is taken in plan as `plan_outline` takes
  -- it; two outlines are tested when their owners are not the same, two roads sharing a
  -- node, a road and one of its nodes, or two nodes a road joins; each pair of owners once.
  -- @tparam table outlines the rooms' outlines (vertex references of this builder)
  -- @tparam table owners per outline, its owner's number (1-based)
  -- @tparam table ends per owner two numbers: a road's end nodes (owner numbers), or 0, 0 for
  -- a node
  -- @tparam[opt] number eps metres (0.05): how far rooms must overlap
  -- @treturn table `{a1, b1, x1, z1, a2, ...}`: the owners of each pair and a point of the
  -- overlap (metres)
  -- A bad argument raises `bad argument #n to 'overlaps' (...)` at the caller's line.
  function Builder:overlaps(outlines, owners, ends, eps)
    if getmetatable(self) ~= Builder then
      check.raise(string_format("calling 'overlaps' on bad self (Builder expected, got %s)", type(self)))
    end
    for i, t in ipairs({ outlines, owners, ends }) do
      if type(t) ~= "table" then argerr(i, "overlaps", "table expected, got " .. type(t)) end
    end
    local m = opt_problem(eps, "eps", "positive")
    if m then argerr(4, "overlaps", m) end
    -- (an owner number must name a pair of `ends`: with none, say so rather than "1..0")
    if #outlines > 0 and #ends < 2 then
      argerr(3, "overlaps", string_format("ends: two end-node owner numbers per owner expected, got %d numbers for the "
        .. "owners of %d outlines", #ends, #outlines))
    end
    local ok, res = pcall(core.room_overlaps, self.vpool, outlines, owners, ends, eps)
    if not ok then
      -- the lists are checked in C (core.room_overlaps's arguments 2..4)
      local n, what = tostring(res):match("bad argument #(%d) to '[^']*room_overlaps' %((.*)%)$")
      if n and n ~= "1" then argerr(tonumber(n) - 1, "overlaps", what) end
      error(res, 0)
    end
    return res
  end

  return {
    finite = finite,
    nonneg = nonneg,
    profile_ok = profile_ok,
    profile_problem = profile_problem,
    half_width = half_width,
    kind_of_profile = kind_of_profile,
    end_problem = end_problem,
    section_problem = section_problem,
    plan_length = plan_length,
    WIDTHS = WIDTHS,
    STREET_TABLES = STREET_TABLES,
  }
end
