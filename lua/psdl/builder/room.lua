--- Rooms of psdl.builder: `Builder:room` and the Room methods, one per attribute type
-- 0x0–0xC (psdl-format.md §2.4): road, divided road, walkway, sidewalk, sliver, crosswalk,
-- road fans, fans, facade bounds, facades, roofs, tunnels and raw textures.
local core = require "psdl.core"
local styles = require "psdl.styles"
local geom = require "psdl.geom"
local check = require "psdl.check"


local type, error, ipairs, pairs, tostring = type, error, ipairs, pairs, tostring
local setmetatable = setmetatable
local floor, max, abs, math_type = math.floor, math.max, math.abs, math.type
local string_format, table_move = string.format, table.move
local MAX_COORD, argerr, shown, num_problem = check.MAX_COORDINATE, check.argerr, check.shown, check.num_problem
local opt_problem, point_problem = check.opt_problem, check.point_problem
local flatten_points, points_problem = check.flatten_points, check.points_problem
local polygon_problem, raise = check.polygon_problem, check.raise
check.own(debug.getinfo(1, "S").source)

-- Installed by psdl.builder (builder/init.lua): M is the module table, Builder and Room the
-- classes, P the builder's private helpers shared between its files.
-- long: installs one method per attribute type; its own lines are their doc comments (each
-- method's body is counted apart)
return function(M, Builder, Room, P)
  local as_group, pool_flat, trusted_refs, unknown_key = P.as_group, P.pool_flat, P.trusted_refs, P.unknown_key
  local new_room

  --- Add a room.
  -- @tparam[opt] table opts `kind`: "road" (flag 0x08), "intersection" (0x10) or "block"
  -- (0x04, the default); `tunnel = true` adds subterranean and warp (0x02, 0x40), `bridge =
  -- true` warp (0x40); `flags` replaces the computed byte; `prop_rule` (0..255); `name` (for
  -- messages); `outline`: the room's perimeter as points (any winding; made retail; a simple
  -- polygon), else `finish` takes the outline of its ground geometry; `holes`: rings inside
  -- the outline, joined into the perimeter through zero-width keyhole cuts (psdl.core.keyhole),
  -- so that the game's point-in-perimeter test leaves them out and a room inside a hole
  -- becomes a neighbour
  -- @treturn Room
  function Builder:room(opts)
    if getmetatable(self) ~= Builder then P.self_error(self, "room") end
    return new_room(self, opts, false)
  end

  -- Builder:room; `checked`: the outline and holes were checked by the caller
  -- (`Builder:block`), so they are not checked again.
  new_room = function(self, opts, checked)
    opts = opts or {}
    if type(opts) ~= "table" then argerr(1, "room", "table expected, got " .. type(opts)) end
    local bad = not checked and unknown_key(opts, P.ROOM_KEYS)
    if bad then argerr(1, "room", bad) end
    local kind = opts.kind or "block"
    if kind ~= "road" and kind ~= "intersection" and kind ~= "block" then
      argerr(1, "room", "kind: \"road\", \"intersection\" or \"block\" expected, got " .. tostring(kind))
    end
    local m = opt_problem(opts.prop_rule, "prop_rule", "int", 0, core.limits.prop_rule) or opt_problem(opts.flags, "flags", "int", 0, 255)
    if not m and opts.outline ~= nil and not opts.outline_refs and not checked then
      m = polygon_problem(opts.outline, opts.holes, "outline", "holes")
    elseif not m and opts.outline == nil and opts.holes ~= nil and not opts.outline_refs then
      m = "holes: an outline is needed with holes"
    end
    if m then argerr(1, "room", m) end
    local r = setmetatable({
      builder = self, kind = kind, name = opts.name, is_tunnel = opts.tunnel and true or false,
      is_bridge = opts.bridge and true or false, flags = opts.flags, prop_rule = opts.prop_rule or 0,
      serial = self.store:room(),
    }, Room)
    self.rooms[#self.rooms + 1] = r
    if opts.outline_refs then
      r.outline = opts.outline_refs
    elseif opts.outline and opts.holes and #opts.holes > 0 then
      local all, starts = {}, {}
      for i, p in ipairs(opts.outline) do all[i] = p end
      for _, h in ipairs(opts.holes) do
        starts[#starts + 1] = #all + 1
        for _, p in ipairs(h) do all[#all + 1] = p end
      end
      local refs = trusted_refs(r, all) -- checked above
      local ring = core.keyhole(self:flat_of(refs), starts)
      local out = {}
      for i, k in ipairs(ring) do out[i] = refs[k] end
      r.outline = out
    elseif opts.outline then
      local refs = trusted_refs(r, opts.outline) -- checked above
      if core.signed_area(self:flat_of(refs)) > 0 then refs = M.reverse(refs) end
      r.outline = refs
    end
    r:check_budget()
    return r
  end
  P.new_room = new_room

  -- A road or intersection room for psdl.builder's trusted calls (builder/street.lua,
  -- builder/intersection.lua): `Builder:room{kind = kind, name = name, tunnel = tunnel, bridge
  -- = bridge, prop_rule = prop_rule}` without its option table and key scan (the callers'
  -- keys are known); prop_rule is checked as there. With `no_budget` the vertex budget is
  -- left to the caller (builder/street.lua refuses a clamped street first: its sections
  -- alone can pass the budget, and the bend is what a repair of the road can act on).
  local PROP_LIMIT = core.limits.prop_rule
  function P.road_room(self, kind, name, tunnel, bridge, prop_rule, no_budget)
    if prop_rule ~= 0 and prop_rule ~= nil then
      local m = opt_problem(prop_rule, "prop_rule", "int", 0, PROP_LIMIT)
      if m then argerr(1, "room", m) end
    end
    local r = setmetatable({
      builder = self, kind = kind, name = name, is_tunnel = tunnel and true or false,
      is_bridge = bridge and true or false, flags = nil, prop_rule = prop_rule or 0,
      serial = self.store:room(),
    }, Room)
    local rooms = self.rooms
    rooms[#rooms + 1] = r
    if not no_budget then r:check_budget() end
    return r
  end

  -- Flat x, y, z of vertex references.
  function Builder:flat_of(refs)
    return self.vpool:points(refs)
  end

  --- "room 12 ("Main St")" for messages: the room's number in creation order and its name.
  function Room:label()
    local id = self.id or self.serial
    if self.name then return string_format("room %d (%q)", id, self.name) end
    return string_format("room %d (%s)", id, self.kind)
  end

  function Room:fail(fmt, ...)
    raise(self:label() .. ": " .. string_format(fmt, ...))
  end

  local SAFE_BUDGET = require("psdl.core").limits.vertex_budget
  function Room:check_budget()
    local n = self.builder.vpool:count()
    local budget = self.builder.budget
    if budget and n > budget then
      if budget == M.VERTEX_BUDGET then
        raise(string_format("%s: the vertex pool reaches %d vertices, above the safe budget of %d: the game's "
          .. "512 generated collision vertices would overflow 16-bit indices (§3.2)", self:label(), n, budget))
      end
      -- (a budget the script set itself: no claim about the game)
      raise(string_format("%s: the vertex pool reaches %d vertices, above this builder's vertex_budget of %d "
        .. "(psdl.builder.new{vertex_budget}; the game's own limit is %d, §3.2)", self:label(), n, budget,
        SAFE_BUDGET))
    end
  end

  -- Vertex references of a list of points (checked), added in one call.
  -- A bad point raises "bad argument #argn to 'fname' (what[i]: ...)" (fname: what).
  function Room:refs(points, what, fname, argn)
    if type(points) ~= "table" then
      argerr(argn or 1, fname or what, string_format("%s: list of points expected, got %s", what, type(points)))
    end
    local flat, bad = flatten_points(points) -- checked and flattened in one pass
    if not flat then
      argerr(argn or 1, fname or what, point_problem(points[bad], what .. "[" .. bad .. "]") or "bad point")
    end
    return pool_flat(self.builder, flat)
  end

  -- Vertex references of rows of `stride` points, row after row.
  function Room:rows(rows, stride, what)
    if type(rows) ~= "table" or #rows < 2 then
      self:fail("%s: at least 2 sections expected", what)
    end
    local flat, n = {}, 0
    for k, row in ipairs(rows) do
      if type(row) ~= "table" or #row ~= stride then
        self:fail("%s: section %d has %s points, %d expected", what, k, type(row) == "table" and #row or "no", stride)
      end
      for j = 1, stride do
        local p = row[j]
        local x, y, z
        if type(p) == "table" then x, y, z = p[1], p[2] or 0, p[3] end
        if type(x) ~= "number" or type(y) ~= "number" or type(z) ~= "number"
           or not (x >= -MAX_COORD and x <= MAX_COORD and y >= -MAX_COORD and y <= MAX_COORD and z >= -MAX_COORD
                   and z <= MAX_COORD) then
          argerr(1, what, point_problem(p, string_format("rows[%d][%d]", k, j)) or "bad point")
        end
        flat[n + 1], flat[n + 2], flat[n + 3] = x, y, z
        n = n + 3
      end
    end
    return pool_flat(self.builder, flat)
  end

  -- Appends an attribute record (an op table: `type`, `group`, `refs` and the type's fields,
  -- src/lpsdl_store.c) to the room's records in the builder's store.
  function Room:push(op)
    local b = self.builder
    if b.pending_doc then b.pending_doc() end -- a finished document not yet made is made now
    b.store:push(self.serial, op)
    if op.type == "junction_tunnel" then self.junction_tunnels = true end
    self:check_budget()
    return self
  end

  --- Road strip with sidewalks (0x0): sections of 4 points, outer L, curb L, curb R, outer R,
  -- the curbs 0.15 m below the outer points; first point on the left of travel (§2.4, §4.2).
  -- An outer point equal to its curb point means no sidewalk on that side.
  -- @tparam table rows sections (as `geom.sections` returns them)
  -- @param[opt] textures a road group (surface, sidewalk, lod) or a style entry; default the
  -- style's road
  function Room:road(rows, textures)
    local g = as_group(self.builder, textures or self.builder.style.road, "road", "road")
    return self:push({ type = "road", group = g, refs = self:rows(rows, 4, "road") })
  end

  --- Divided road (0x8): sections of 6 points (outer L, curb L, median L, median R, curb R,
  -- outer R).
  -- @tparam table rows sections
  -- @param[opt] textures road group
  -- @tparam[opt] table opts `divider`: "flat" (1), "elevated" (2, default), "wedge" (3), "none"
  -- (0) or a number 0..63; `divider_textures`: divider group (side, strip, top, cap; default
  -- the style's divider); `cap_start`, `cap_end`: close the divider at the first / last
  -- section; `height` (elevated and wedge, m: 0.15 and 1.0 by default), `repeats` (flat:
  -- texture repeats across, 5 by default) or `value` (the raw 8.8 value, metres)
  function Room:divided_road(rows, textures, opts)
    return self:divided_refs(self:rows(rows, 6, "divided_road"), textures, opts)
  end

  -- Divided road from vertex references (6 per section); `cap_start`, `cap_end`: those of
  -- opts (`Room:divided_refs`) or given apart (`P.divided`, the trusted street: opts is then
  -- the street's divider table, shared by its rooms).
  local function divided(self, refs, textures, opts, cap_start, cap_end)
    local b = self.builder
    local g = as_group(b, textures or b.style.road, "road", "divided_road")
    local dt = opts.divider or "elevated"
    if type(dt) == "string" then
      local v = M.DIVIDERS[dt]
      if not v then self:fail("divider type '%s' (flat, elevated, wedge or none expected)", dt) end
      dt = v
    end
    if type(dt) ~= "number" or dt < 0 or dt > 63 or dt % 1 ~= 0 then self:fail("divider type %s: 0..63 expected", tostring(dt)) end
    local value = opts.value
    if value == nil then
      if dt == 1 then value = opts.repeats or 5.0
      elseif dt == 3 then value = opts.height or 1.0
      else value = opts.height or 0.15 end
    end
    if type(value) ~= "number" or not (value >= 0 and value < 256) then
      self:fail("divider value %s is outside 8.8 fixed point (0..255.99)", shown(value))
    end
    local dg = as_group(b, opts.divider_textures or b.style.divider, "divider", "divided_road")
    return self:push({ type = "divided_road", group = g, divider_group = dg, divider_type = dt,
                       cap_start = cap_start and true or false, cap_end = cap_end and true or false,
                       divider_value = value, refs = refs })
  end
  P.divided = divided

  function Room:divided_refs(refs, textures, opts)
    opts = opts or {}
    return divided(self, refs, textures, opts, opts.cap_start, opts.cap_end)
  end

  --- Rectangle strip (0x2, walkway or alley): sections of 2 points, left and right.
  -- @param textures a group or name; its first slot is drawn
  function Room:walkway(rows, textures)
    local g = as_group(self.builder, textures or self.builder.style.alley.surface, "single", "walkway")
    return self:push({ type = "walkway", group = g, refs = self:rows(rows, 2, "walkway") })
  end

  --- Sidewalk strip (0x1): pairs (curb, outer), the curb at road level on the left of travel,
  -- the outer point 0.15 m higher; the texture is slot n+1 of the group (§2.3).
  -- @tparam table rows pairs `{ {curb, outer}, ... }` (2 or more)
  -- @param[opt] textures intersection or road group, or a sidewalk name
  -- @tparam[opt] table opts `start_cap`, `end_cap`: close the raised sidewalk at its first /
  -- last pair with a cap triangle (§2.4 0x1)
  function Room:sidewalk(rows, textures, opts)
    opts = opts or {}
    local b = self.builder
    local g = as_group(b, textures or b.style.intersection, "sidewalk", "sidewalk")
    local refs = self:rows(rows, 2, "sidewalk")
    if opts.start_cap then
      self:push({ type = "sidewalk_strip", group = g, cap = "start", refs = { refs[1], refs[2] } })
    end
    self:push({ type = "sidewalk_strip", group = g, refs = refs })
    if opts.end_cap then
      local n = #refs
      self:push({ type = "sidewalk_strip", group = g, cap = "end", refs = { refs[n - 1], refs[n] } })
    end
    return self
  end

  --- Sliver (0x3): a wall from the two base points (their own heights) up to `top`.
  -- @tparam table left point
  -- @tparam table right point
  -- @tparam table opts `top` (m), `density` (texture repeats per metre, 0.25), `texture`
  -- (default the style's first sliver)
  function Room:sliver(left, right, opts)
    local b = self.builder
    if type(opts) ~= "table" or type(opts.top) ~= "number" then self:fail("sliver: opts.top (metres) expected") end
    local m = num_problem(opts.top, "opts.top") or opt_problem(opts.density, "opts.density", "positive")
    if m then argerr(3, "sliver", m) end
    local g = as_group(b, opts.texture or styles.sliver(b.style), "single", "sliver")
    local refs = self:refs({ left, right }, "sliver")
    return self:push({ type = "sliver", group = g, top = b:height(opts.top), density = b:height(opts.density or 0.25),
                       refs = refs })
  end

  --- Crosswalk (0x4): 4 points c0, c1, c2, c3; (c0, c1) one short end along a curb, (c2, c3)
  -- the other, c1 and c3 at the road end; drawn with slot n+2 of the group (§2.4 0x4).
  -- @param[opt] textures intersection group or a crosswalk name
  function Room:crosswalk(points, textures)
    local b = self.builder
    if type(points) ~= "table" or #points ~= 4 then self:fail("crosswalk: 4 points expected") end
    local g
    if type(textures) == "string" then g = b:textures("intersection", textures)
    else g = as_group(b, textures or b.style.intersection, "intersection", "crosswalk") end
    return self:push({ type = "crosswalk", group = g, refs = self:refs(points, "crosswalk") })
  end

  -- Adds fans (convex pieces, retail winding) covering the polygon of flat points `flat`
  -- (with hole starts, 1-based) whose vertex references are `refs`, as `kind` attributes.
  local function fans_of_flat(room, flat, refs, starts, kind, g, extra, hub_height, out)
    local idx, xpts = core.fans(flat, starts)
    if #idx == 0 then room:fail("%s: the polygon has no area", kind) end
    if hub_height then -- added hubs take the caller's ground height (e.g. terrain) when it gives one
      for i = 1, #xpts, 3 do
        local y = hub_height(xpts[i], xpts[i + 2])
        if type(y) == "number" then xpts[i + 1] = y end
      end
    end
    local n = #refs
    local xrefs = #xpts > 0 and room.builder:vertices_flat(xpts) or nil
    -- with `out` (fans, no fields): the fans go to out and, as one flat list, to the store
    local list, w = out and {}, 0
    for _, f in ipairs(idx) do
      local rr = {}
      for j = 1, #f do
        local k = f[j]
        rr[j] = k <= n and refs[k] or xrefs[k - n]
      end
      if list then
        out[#out + 1] = rr
        list[w + 1], list[w + 2], list[w + 3] = 6, 0, #rr -- 0x6 fan, no cap
        table_move(rr, 1, #rr, w + 4, list)
        w = w + 3 + #rr
      else
        local op = { type = kind, group = g, refs = rr }
        if extra then for k, v in pairs(extra) do op[k] = v end end
        room:push(op)
      end
    end
    if list then
      P.push_flat(room, g, list)
      return room, out
    end
    return room
  end

  -- Adds fans covering a polygon of points with holes as `kind` attributes.
  local function add_fans(room, polygon, holes, kind, g, extra, hub_height, checked)
    local m = not checked and polygon_problem(polygon, holes, "polygon", "opts.holes")
    if m then argerr(m:sub(1, 10) == "opts.holes" and (kind == "roof" and 4 or 3) or 1, kind, m) end
    local all, starts = {}, nil
    for i = 1, #polygon do all[i] = polygon[i] end
    if holes and #holes > 0 then
      starts = {}
      for _, h in ipairs(holes) do
        starts[#starts + 1] = #all + 1
        for _, p in ipairs(h) do all[#all + 1] = p end
      end
    end
    local refs = trusted_refs(room, all) -- checked above (or by Builder:block)
    local flat = room.builder:flat_of(refs)
    return fans_of_flat(room, flat, refs, starts, kind, g, extra, hub_height)
  end

  --- Road triangle fans (0x5) covering a flat polygon (convex pieces; concave polygons and
  -- holes allowed). The polygon must be flat: the game flattens a road fan to its hub (§2.4 0x5).
  -- @tparam table polygon points
  -- @param[opt] textures intersection group (slot n) or a name
  -- @tparam[opt] table opts `holes`
  function Room:road_fan(polygon, textures, opts)
    local b = self.builder
    local g = as_group(b, textures or b.style.intersection, "single", "road_fan")
    local m = points_problem(polygon, "polygon", 3)
    if m then argerr(1, "road_fan", m) end
    local y0 = polygon[1] and polygon[1][2] or 0
    for i, p in ipairs(polygon) do
      if abs((p[2] or 0) - y0) > 0.05 then
        self:fail("road_fan: point %d is %.3f m off the first point's height; road fans must be flat (§2.4 0x5)",
          i, (p[2] or 0) - y0)
      end
    end
    return add_fans(self, polygon, opts and opts.holes, "road_fan", g)
  end

  --- Triangle fans (0x6) covering a polygon (ground, parks, plazas; may slope).
  -- @tparam table polygon points
  -- @param[opt] textures a group or name (default the style's paving)
  -- @tparam[opt] table opts `holes`; `hub_height`: function(x, z) -> y or nil, the height of
  -- a hub point the decomposition adds inside a piece (default: on the piece's plane)
  function Room:fan(polygon, textures, opts)
    local b = self.builder
    local g = as_group(b, textures or styles.ground(b.style, "paving"), "single", "fan")
    return add_fans(self, polygon, opts and opts.holes, "fan", g, nil, opts and opts.hub_height, false)
  end

  --- Fans (0x6) of a polygon given as vertex references (a simple polygon with area, no holes):
  -- `Room:fan` of those points without pooling them again; textures and opts as for `fan`.
  -- @treturn Room the room, and a table: the fans made (lists of references, hub first)
  function Room:fan_refs(refs, textures, opts)
    local b = self.builder
    local g = as_group(b, textures or styles.ground(b.style, "paving"), "single", "fan_refs")
    if type(refs) ~= "table" then argerr(1, "fan_refs", "refs: list of vertex references expected, got " .. type(refs)) end
    local n = #refs
    if n < 3 then argerr(1, "fan_refs", string_format("refs: 3 or more references expected, got %d", n)) end
    if opts ~= nil and (type(opts) ~= "table" or (opts.hub_height ~= nil and type(opts.hub_height) ~= "function")) then
      argerr(3, "fan_refs", "opts: table with hub_height = function expected")
    end
    if b.pending_doc then b.pending_doc() end -- a finished document not yet made is made now
    local ok, flat = pcall(b.flat_of, b, refs) -- the references checked in C
    if not ok then
      local count = b.vpool:count()
      for i = 1, n do
        local v = refs[i]
        if math_type(v) ~= "integer" or v < 1 or v > count then
          argerr(1, "fan_refs", num_problem(v, string_format("refs[%d]", i), "int", 1, count)
            or string_format("refs[%d]: vertex reference expected", i))
        end
      end
      error(flat, 0)
    end
    local e1, e2 = core.self_crossing(flat)
    if e1 then argerr(1, "fan_refs", string_format("refs: self-intersecting polygon (edges %d and %d cross)", e1, e2)) end
    if abs(core.signed_area(flat)) <= 1e-9 then argerr(1, "fan_refs", "refs: the polygon has no area") end
    return fans_of_flat(self, flat, refs, nil, "fan", g, nil, opts and opts.hub_height, {})
  end

  -- Room:fan of a polygon and holes the caller checked (`Builder:block`).
  P.checked_fan = function(room, polygon, textures, holes)
    local b = room.builder
    local g = as_group(b, textures or styles.ground(b.style, "paving"), "single", "fan")
    return add_fans(room, polygon, holes, "fan", g, nil, nil, true)
  end

  --- Facade bound (0x7): an invisible collision wall from the two base points up to `top`,
  -- whose light index lights the facades and slivers after it (§2.4 0x7).
  -- @tparam table opts `top` (m), `light` (0..63; default from the wall's direction,
  -- `geom.light_index`)
  function Room:facade_bound(left, right, opts)
    local b = self.builder
    if type(opts) ~= "table" or type(opts.top) ~= "number" then self:fail("facade_bound: opts.top (metres) expected") end
    local m = point_problem(left, "left")
    if m then argerr(1, "facade_bound", m) end
    m = point_problem(right, "right")
    if m then argerr(2, "facade_bound", m) end
    m = num_problem(opts.top, "opts.top") or opt_problem(opts.light, "opts.light", "int", 0, 63)
    if m then argerr(3, "facade_bound", m) end
    local light = opts.light or core.light_index(right[1] - left[1], right[3] - left[3])
    return self:push({ type = "facade_bound", light = light, top = b:height(opts.top),
                       refs = self:refs({ left, right }, "facade_bound") })
  end

  --- Facade (0xB): a vertical quad over the base points' x, z from `bottom` to `top`, facing
  -- (−dz, 0, dx) for a base running left → right (§2.4 0xB, §4.2).
  -- @tparam table opts `bottom`, `top` (m), `u`, `v` (repeats, 1..32767; default from a 4 m
  -- bay and a 3 m storey), `texture` (default the style's first upper-floor facade)
  function Room:facade(left, right, opts)
    local b = self.builder
    if type(opts) ~= "table" or type(opts.bottom) ~= "number" or type(opts.top) ~= "number" then
      self:fail("facade: opts.bottom and opts.top (metres) expected")
    end
    local m = point_problem(left, "left")
    if m then argerr(1, "facade", m) end
    m = point_problem(right, "right")
    if m then argerr(2, "facade", m) end
    m = num_problem(opts.bottom, "opts.bottom") or num_problem(opts.top, "opts.top")
      or opt_problem(opts.u, "opts.u", "int") or opt_problem(opts.v, "opts.v", "int")
    if not m and not (opts.top > opts.bottom) then
      m = string_format("opts.top (%s) must be above opts.bottom (%s)", shown(opts.top), shown(opts.bottom))
    end
    if m then argerr(3, "facade", m) end
    local len = geom.dist2(left, right)
    local u = opts.u or max(1, floor(len / 4 + 0.5))
    local v = opts.v or max(1, floor((opts.top - opts.bottom) / 3 + 0.5))
    if u < 1 or u > 32767 or v < 1 or v > 32767 then self:fail("facade: repeats %s x %s outside 1..32767", u, v) end
    local g = as_group(b, opts.texture or styles.facade(b.style, "upper"), "single", "facade")
    return self:push({ type = "facade", group = g, bottom = b:height(opts.bottom), top = b:height(opts.top),
                       u = u, v = v, refs = self:refs({ left, right }, "facade") })
  end

  --- Roof (0xC): fans over a polygon at a height (the points' own heights are replaced).
  -- @tparam table polygon footprint points
  -- @tparam number height metres
  -- @param[opt] textures group or name (default the style's roof)
  function Room:roof(polygon, height, textures, opts)
    local b = self.builder
    if type(height) ~= "number" then self:fail("roof: height (metres) expected") end
    local m = num_problem(height, "height")
    if m then argerr(2, "roof", m) end
    local g = as_group(b, textures or styles.roofs(b.style)[1], "single", "roof")
    return add_fans(self, polygon, opts and opts.holes, "roof", g, { height = b:height(height) })
  end

  -- Tunnel flag word from options.
  local function tunnel_flags(o)
    if o.flags then return o.flags end
    local T, f = M.TUNNEL, 0
    if o.left ~= false then f = f | T.left end
    if o.right ~= false then f = f | T.right end
    if o.wall then f = f | T.wall end
    if o.ceiling == "flat" or o.ceiling == true then f = f | T.flat_ceiling
    elseif o.ceiling == "curved" then f = f | T.curved_ceiling end
    local function ends(v, l, r)
      if v == true or v == "both" then f = f | l | r
      elseif v == "left" then f = f | l
      elseif v == "right" then f = f | r end
    end
    ends(o.closed_start, T.closed_start_left, T.closed_start_right)
    ends(o.closed_end, T.closed_end_left, T.closed_end_right)
    ends(o.offset_start, T.offset_start_left, T.offset_start_right)
    ends(o.offset_end, T.offset_end_left, T.offset_end_right)
    if o.curved_sides then f = f | T.curved_sides end
    if o.outer then f = f | T.outer end
    return f
  end

  --- Road tunnel or railing (0x9, strip form): walls for the next strip attribute of the room
  -- (road, walkway or divided road), which must follow (§2.4 0x9).
  -- @tparam table opts `textures` (tunnel group: wall_l, wall_r, ceiling, rail_r, rail_l,
  -- underside; default the style's tunnel), `left`, `right` (walls on each side, default
  -- true), `ceiling` ("flat", "curved" or nil), `wall` (thick wall style 0x4), `closed_start`,
  -- `closed_end`, `offset_start`, `offset_end` (true, "left" or "right"), `curved_sides`,
  -- `outer` (0x4000), `flags` (the raw word instead), `height` (m, drawn height; 5.5),
  -- `height2` (m, collision height; 7.0)
  function Room:tunnel(opts)
    opts = opts or {}
    if type(opts) ~= "table" then argerr(1, "tunnel", "table expected, got " .. type(opts)) end
    local m = opt_problem(opts.height, "height") or opt_problem(opts.height2, "height2")
      or opt_problem(opts.flags, "flags", "int", 0, 0xFFFF)
    if m then argerr(1, "tunnel", m) end
    local b = self.builder
    local g = as_group(b, opts.textures or b.style.tunnel, "tunnel", "tunnel")
    local h1, h2 = opts.height or 5.5, opts.height2 or 7.0
    if h1 < 0 or h1 >= 256 or h2 < 0 or h2 >= 256 then self:fail("tunnel: heights must be 0..255.99 m (8.8 fixed point)") end
    return self:push({ type = "tunnel", group = g, flags = tunnel_flags(opts), height1 = h1, height2 = h2 })
  end

  --- Junction tunnel (0x9, 10-word form) for an intersection room: walls on chosen perimeter
  -- edges (the mask is computed by `finish` from the final perimeter, §2.4 0x9).
  -- @tparam table opts `textures` (tunnel group), `height`, `height2` (m), `ceiling` (true: the
  -- ceiling fan, flag 0x8), `flags` (raw word; default 0x0003 plus the ceiling bit), `walls`:
  -- "outside" (default: edges with no neighbour or a block neighbour), "all", a list of
  -- 1-based perimeter edge numbers, or a function(edge) -> boolean with edge = `{index,
  -- neighbour (room id), room (Room or nil), from, to}`; `ceiling_start` (1-based perimeter
  -- point, 1)
  function Room:junction_tunnel(opts)
    opts = opts or {}
    if type(opts) ~= "table" then argerr(1, "junction_tunnel", "table expected, got " .. type(opts)) end
    local m = opt_problem(opts.height, "height", "nonneg", 0, 255.99) or opt_problem(opts.height2, "height2", "nonneg", 0, 255.99)
      or opt_problem(opts.flags, "flags", "int", 0, 0xFFFF) or opt_problem(opts.ceiling_start, "ceiling_start", "int", 1)
    if m then argerr(1, "junction_tunnel", m) end
    local b = self.builder
    local g = as_group(b, opts.textures or b.style.tunnel, "tunnel", "junction_tunnel")
    local flags = opts.flags or (0x0003 | (opts.ceiling and M.TUNNEL.flat_ceiling or 0))
    return self:push({ type = "junction_tunnel", group = g, flags = flags, height1 = opts.height or 5.5,
                       height2 = opts.height2 or 7.0, walls = opts.walls or "outside",
                       ceiling_start = opts.ceiling_start or 1 })
  end

  --- A raw texture reference (0xA) with an explicit value (1..2047; values above 255 are
  -- stored through the subtype, §2.3). The next textured attribute writes its own group's
  -- reference again.
  function Room:texture(value)
    if type(value) ~= "number" or value % 1 ~= 0 or value < 0 then self:fail("texture: integer value expected") end
    if value > M.MAX_TEXTURE then
      self:fail("texture value %d exceeds %d, the largest the format can store (§2.3)", value, M.MAX_TEXTURE)
    end
    return self:push({ type = "texture", value = value })
  end

  return {
    fans_of_flat = fans_of_flat,
  }
end
