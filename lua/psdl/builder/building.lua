--- Blocks and buildings of psdl.builder: `Builder:block` (a block room whose ground is fans over
-- an outline) and `Builder:building` (facade bounds, facades, slivers and a roof in a room).
local core = require "psdl.core"
local styles = require "psdl.styles"
local check = require "psdl.check"


local type, pairs = type, pairs
local getmetatable = getmetatable
local floor, max, huge = math.floor, math.max, math.huge
local string_format = string.format
local argerr, shown, num_problem = check.argerr, check.shown, check.num_problem
local opt_problem, points_problem = check.opt_problem, check.points_problem
local polygon_problem = check.polygon_problem
check.own(debug.getinfo(1, "S").source)

-- Installed by psdl.builder (builder/init.lua): M is the module table, Builder and Room the
-- classes, P the builder's private helpers shared between its files.
return function(M, Builder, Room, P)
  local as_group, unknown_key, ROOM_KEYS = P.as_group, P.unknown_key, P.ROOM_KEYS
  local BLOCK_KEYS = { outline = true, holes = true, texture = true, room = true }
  local BUILDING_KEYS = { outline = true, closed = true, floors = true, floor_height = true, bay_width = true,
                          base = true, top = true, ground_height = true, ground = true, facade = true, roof = true,
                          sliver = true, sliver_density = true }

  --- A block room (flag 0x04) whose ground is fans over an outline (with holes).
  -- @tparam table o `outline` (points, a simple polygon), `holes` (rings inside it: the
  -- perimeter takes them in through keyhole cuts, see `Builder:room`), `texture` (group or
  -- name; default the style's paving), `room`: options of `Builder:room`. Put the outline on a
  -- road room's outer edge, at sidewalk height, where it meets one: rooms link only through
  -- shared vertices (`finish` warns otherwise).
  -- @treturn Room
  function Builder:block(o)
    if type(o) ~= "table" or type(o.outline) ~= "table" then argerr(1, "block", "outline expected") end
    local m = unknown_key(o, BLOCK_KEYS) or polygon_problem(o.outline, o.holes, "outline", "holes")
    if not m and o.room ~= nil and type(o.room) ~= "table" then m = "room: table expected, got " .. type(o.room) end
    if not m and o.room ~= nil then m = unknown_key(o.room, ROOM_KEYS, "room") end
    if m then argerr(1, "block", m) end
    local ropts = {}
    for k, v in pairs(o.room or {}) do ropts[k] = v end
    ropts.kind = ropts.kind or "block"
    ropts.outline = o.outline
    ropts.holes = o.holes
    -- (checked above: the room and its fan need not check it again)
    local r = P.new_room(self, ropts, true)
    P.checked_fan(r, o.outline, o.texture, o.holes)
    return r
  end

  --- A building in a room: facade bounds per wall run, facades (a ground floor and upper
  -- floors), slivers where the ground under a wall is lower than the facades' base, and a roof
  -- (§2.4 0x3, 0x7, 0xB, 0xC). Facades face outward (the outline is put in retail winding).
  -- @tparam Room room usually the block room the building stands in
  -- @tparam table o `outline`: footprint points at ground level (a row of facades along an
  -- open line with `closed = false`: no roof; its points must run so that (−dz, 0, dx) faces
  -- out); `floors` (3), `floor_height` (3 m), `bay_width` (4 m); `base`: facade bottom height
  -- (default the highest ground point); `ground_height` (m of ground floor, 0 = none) and
  -- `ground` (its facade texture); `facade`, `roof`, `sliver` textures; `sliver_density`
  -- (repeats per metre, 0.25). The footprint must lie inside the room's outline, when it has
  -- one (to within `BUILDING_SLACK`), and the building must have some height (`floors = 0`
  -- with a `ground_height` is a ground floor alone).
  -- @treturn table `{base, top, runs, facades, slivers}`
  function Builder:building(room, o)
    P.room_arg(self, room, 1, "building")
    self:settle()
    if type(o) ~= "table" or type(o.outline) ~= "table" or #o.outline < 2 then argerr(2, "building", "outline expected") end
    local closed = o.closed ~= false
    -- every check here, once: the attributes below are made without Room's own checks
    local m, flat, area = unknown_key(o, BUILDING_KEYS), nil, nil
    if m then argerr(2, "building", m) end
    if closed then m, flat, area = polygon_problem(o.outline, nil, "outline")
    else m, flat = points_problem(o.outline, "outline", 2) end
    m = m or opt_problem(o.floors, "floors", "nonneg") or opt_problem(o.floor_height, "floor_height", "positive")
      or opt_problem(o.ground_height, "ground_height", "nonneg") or opt_problem(o.bay_width, "bay_width", "positive")
      or opt_problem(o.base, "base") or opt_problem(o.top, "top") or opt_problem(o.sliver_density, "sliver_density", "positive")
    if m then argerr(2, "building", m) end
    local outline = o.outline
    local n = #outline
    if closed and area > 0 then -- retail winding (geom.retail)
      local r, f = {}, {}
      for i = 1, n do
        local p = outline[n + 1 - i]
        r[i] = p
        f[3 * i - 2], f[3 * i - 1], f[3 * i] = p[1], p[2] or 0, p[3]
      end
      outline, flat = r, f
    end
    local base = o.base
    if not base then
      base = -huge
      for i = 2, 3 * n, 3 do base = max(base, flat[i]) end
    end
    local fh = o.floor_height or 3
    local floors = o.floors or 3
    local gh = o.ground_height or 0
    local top = o.top or (base + gh + floors * fh)
    m = num_problem(top, "top") or num_problem(base + gh, "base + ground_height")
    if m then argerr(2, "building", m) end
    if not (top > base) then
      argerr(2, "building", string_format("the building has no height: top %s, base %s (floors, floor_height, "
        .. "ground_height or top)", shown(top), shown(base)))
    end
    if top < base + gh then
      argerr(2, "building", string_format("top (%s) is below the ground floor's top (base + ground_height = %s)",
        shown(top), shown(base + gh)))
    end
    if gh > 0 and not (base + gh > base) then
      argerr(2, "building", string_format("ground_height %s vanishes at base %s", shown(gh), shown(base)))
    end
    if room.outline then
      -- the room's outline as doubles kept in C, made once per room (again when the outline
      -- is replaced or changes length), not once per building
      local rflat = room.outline_flat
      if not rflat or room.outline_flat_of ~= room.outline or #rflat ~= #room.outline then
        rflat = core.points(self.vpool:points(room.outline))
        room.outline_flat, room.outline_flat_of = rflat, room.outline
      end
      local k = core.first_outside(rflat, flat, closed, max(self.eps, M.BUILDING_SLACK))
      if k then
        local p = outline[k]
        argerr(2, "building", string_format("building outline leaves the outline of %s at point %d (x = %s, z = %s)",
          room:label(), k, shown(p[1]), shown(p[3])))
      end
    end
    local style = self.style
    local vup = max(1, floor((top - base - gh) / fh + 0.5))
    local vgh = max(1, floor(gh / fh + 0.5))
    if vup > 32767 or vgh > 32767 then
      room:fail("facade: repeats %s x %s outside 1..32767", 1, max(vup, vgh))
    end
    -- the geometry in C (psdl_building): psdl_facades' wall segments, a bound per run, a
    -- sliver, ground-floor and upper facade per segment, the roof's fans; points and heights
    -- pooled in the order one attribute call after another would add them. A: 6 numbers per
    -- attribute (kind, two vertex references, two height references, light or u); R: the
    -- roof's fans ({m, refs...} each) and its height reference last
    local A, R = core.building(self.vpool, self.hpool, flat, { base = base, top = top, floor_height = fh,
      ground_height = gh, bay_width = o.bay_width or 4, sliver_density = o.sliver_density or 0.25, snap = self.snap,
      closed = closed })
    room:check_budget()
    -- the records go into the store in one call (store:building), in A's order, then the
    -- roof's fans; the texture groups are made for the kinds of attribute the building has
    local kinds = {}
    for q = 1, #A, 6 do kinds[A[q]] = true end
    local need_up = false
    for k in pairs(kinds) do if k ~= 1 and k ~= 2 and k ~= 3 then need_up = true end end
    local gi = { vground = vgh, vupper = vup }
    if kinds[2] then gi.sliver = as_group(self, o.sliver or styles.sliver(style), "single", "sliver").index end
    if kinds[3] then gi.ground = as_group(self, o.ground or styles.facade(style, "ground"), "single", "facade").index end
    if need_up then gi.upper = as_group(self, o.facade or styles.facade(style, "upper"), "single", "facade").index end
    local roof
    if closed then -- the roof (Room:roof): fans over the outline at the top
      gi.roof = as_group(self, o.roof or styles.roofs(style)[1], "single", "roof").index
      if #R <= 1 then -- (the walls stay, as when each was its own call)
        self.store:building(room.serial, A, nil, gi)
        room:fail("roof: the polygon has no area")
      end
      roof = R
    end
    local runs, facades, slivers = self.store:building(room.serial, A, roof, gi)
    return { base = base, top = top, runs = runs, facades = facades, slivers = slivers }
  end
end
