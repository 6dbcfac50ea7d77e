--- Top-down maps of a city: PNG (drawn by the C canvas of `psdl.core`, src/psdl_raster.c)
-- or SVG (written here).
--
-- What is drawn comes from `psdl.export`: the triangles the game draws (at full detail),
-- seen from above. Each triangle gets a class from the attribute part that made it and the
-- room it is in:
--
-- | class | drawn from | colour |
-- | --- | --- | --- |
-- | ground | `fan` and `road_fan` in rooms without the road or intersection flag (blocks, parks) | olive green |
-- | walkway | `walkway` strips (alleys, paths, rails) | tan |
-- | road | road halves of `road` and `divided_road`; fans in road rooms (flag 0x08) | dark grey |
-- | intersection | fans in intersection rooms (flag 0x10) | slate blue-grey |
-- | crosswalk | `crosswalk` quads | white stripes across the quad's long axis |
-- | sidewalk | sidewalks of `road` and `divided_road`, `sidewalk_strip` | light grey |
-- | divider | the tops and slopes of `divided_road` dividers | amber |
-- | wall | tunnel walls and railings seen from above (thick walls' tops, sloped sides) | grey-brown |
-- | roof | `roof` fans, shaded by height (light = low, dark = high) | terracotta |
-- | tunnel | tunnel and junction-tunnel ceilings; subterranean rooms (flag 0x02) | dark diagonal hatching |
-- | warp | warp rooms (flag 0x40: bridges, tunnels) | translucent blue over the room |
--
-- Lines on top: facades (the base line of each facade, dark brown), room perimeters (thin,
-- translucent), then room numbers (`rooms = true`), problem markers (`problems = true`:
-- red discs for errors, orange diamonds for warnings, at the vertex, attribute or room each
-- problem points to) and the legend (a band under the map: classes present, scale bar,
-- axes, problem counts).
--
-- Axes: looking down on the city with **x to the right and z up** (north = +z at the top
-- of the image). This is the game's own view from above and the export module's convention
-- (it mirrors z into right-handed viewers, so the city is not mirrored either there or
-- here). Pixel of a point: `px = ox + (x - minx) * scale`, `py = oy + (maxz - z) * scale`.
--
-- Size: the bounds of everything drawn (in x and z) fit the long side of the image (`size`
-- pixels, legend included) with a margin. PNG fills are drawn at `supersample` times the
-- size and averaged down (anti-aliased edges); lines, markers and text are drawn at the
-- final size, anti-aliased.
-- @module psdl.render

local export = require "psdl.export"

local string, table, math = string, table, math
local type, ipairs, pairs, tostring, error, require, tonumber, next, select, setmetatable, utf8 =
  type, ipairs, pairs, tostring, error, require, tonumber, next, select, setmetatable, utf8
local floor, ceil, sqrt, abs, huge, max, min = math.floor, math.ceil, math.sqrt, math.abs, math.huge,
  math.max, math.min
local string_format, concat = string.format, table.concat

local M = {}

------------------------------------------------------------------------ classes and colours

--- Fill classes in drawing order: `name`, `label` (legend), `color` (0xRRGGBBAA).
M.classes = {
  { name = "ground", label = "ground", color = 0x9DB27AFF },
  { name = "road", label = "road", color = 0x4B4E54FF },
  { name = "intersection", label = "intersection", color = 0x5F6E86FF },
  { name = "walkway", label = "walkway", color = 0xC8B08AFF },
  { name = "sidewalk", label = "sidewalk", color = 0xCBC9C2FF },
  { name = "crosswalk", label = "crosswalk", color = 0xF4F4F0FF },
  { name = "divider", label = "divider", color = 0xE0B43CFF },
  { name = "wall", label = "wall/railing", color = 0x8C8076FF },
  { name = "roof", label = "roof", color = 0xB8705AFF },
  { name = "tunnel", label = "tunnel", color = 0x1B2433FF },
  { name = "warp", label = "warp room", color = 0x3C7DD955 },
}

--- Other colours (0xRRGGBBAA).
M.colors = {
  background = 0xE4E2DCFF, -- where no room draws anything
  legend = 0xFAFAF7FF,     -- the legend band
  legend_rule = 0x8A8A86FF,
  text = 0x1A1A1AFF,
  halo = 0xFFFFFFE0,
  roof_low = 0xE6BFA8FF,   -- the lowest roof
  roof_high = 0x8A3528FF,  -- the highest roof
  facade = 0x4A2119FF,
  perimeter = 0x0000004A,
  error = 0xE0201BFF,
  warning = 0xF59E0BFF,
  marker_outline = 0xFFFFFFFF,
}

local CLASS = {}
for i, c in ipairs(M.classes) do CLASS[c.name] = c; c.order = i end

local ROOF_LEVELS = 8
local TIER = 4 -- metres: rooms whose lowest points differ by a tier are drawn lowest first

local function lerp_color(a, b, t)
  local function ch(c, shift) return (c >> shift) & 255 end
  local out = 0
  for _, shift in ipairs { 24, 16, 8, 0 } do
    local v = floor(ch(a, shift) + (ch(b, shift) - ch(a, shift)) * t + 0.5)
    out = out | (v << shift)
  end
  return out
end

local function roof_color(level)
  return lerp_color(M.colors.roof_low, M.colors.roof_high, ROOF_LEVELS > 1 and level / (ROOF_LEVELS - 1) or 0.5)
end

--- Number of roof shades (level 0 is the lowest roof of the map, `ROOF_LEVELS - 1` the highest).
M.ROOF_LEVELS = ROOF_LEVELS

--- The colour of roof shade `level` (0xRRGGBBAA).
-- @tparam integer level 0 .. `ROOF_LEVELS - 1`
-- @treturn integer
M.roof_color = roof_color

------------------------------------------------------------------------ classifying export's triangles

-- The export module draws each attribute with textures at offsets from the current texture
-- value (road n, sidewalk n+1, crosswalk n+2, ...; dividers from their own value). A
-- shadow document with the same geometry gives every attribute type its own block of
-- texture slots, named "<type>#<offset>", so each triangle's material says which
-- attribute part drew it.
local TYPES = { "road", "divided_road", "sidewalk_strip", "walkway", "crosswalk", "road_fan", "fan", "roof",
  "facade", "sliver", "tunnel", "junction_tunnel" }
local SPAN = 8 -- texture slots per type (offsets 0..5 are used)
local BASE = {}
local SHADOW_TEXTURES = {}
for i, t in ipairs(TYPES) do
  BASE[t] = (i - 1) * SPAN + 1
  for off = 0, SPAN - 1 do SHADOW_TEXTURES[BASE[t] + off] = t .. "#" .. off end
end
local DIVIDER_BASE = #TYPES * SPAN + 1
for off = 0, 3 do SHADOW_TEXTURES[DIVIDER_BASE + off] = "divider#" .. off end
SHADOW_TEXTURES[DIVIDER_BASE + 4] = "divider#4"

-- Attribute part -> class; "surface" = by the room's flags; false = seen edge-on from
-- above (facades, slivers, vertical walls) or from below (tunnel decks): not filled.
local PART = {
  ["road#0"] = "road", ["road#1"] = "sidewalk",
  ["divided_road#0"] = "road", ["divided_road#1"] = "sidewalk",
  ["divider#0"] = "divider", ["divider#1"] = "divider", ["divider#2"] = "divider", ["divider#3"] = "divider",
  ["sidewalk_strip#1"] = "sidewalk",
  ["walkway#0"] = "walkway",
  ["crosswalk#2"] = "crosswalk",
  ["road_fan#0"] = "surface", ["fan#0"] = "surface",
  ["roof#0"] = "roof",
  ["facade#0"] = "facade", ["sliver#0"] = false,
  ["tunnel#0"] = "wall", ["tunnel#1"] = "wall", ["tunnel#2"] = "tunnel", ["tunnel#3"] = "wall",
  ["tunnel#4"] = "wall", ["tunnel#5"] = false,
  ["junction_tunnel#0"] = "wall", ["junction_tunnel#2"] = "tunnel",
}

local TUNNEL_STRIPS = { road = true, divided_road = true, walkway = true }

-- The shadow room of `room`: the same drawing attributes, each after a texture attribute
-- selecting its type's block (or 0 where the original draws untextured, which export
-- skips for strips and fans exactly as the game does).
local function shadow_room(room)
  local attrs = room.attributes or {}
  local out = {}
  local cur = 0
  for a, attr in ipairs(attrs) do
    local t = type(attr) == "table" and attr.type
    if t == "texture" then
      cur = math.tointeger(attr.value) or 0
    elseif t and BASE[t] then
      local keep = true
      if t == "tunnel" then
        -- export draws a strip tunnel along the next road, divided road or walkway,
        -- skipping one texture attribute; keep the tunnel only when the original has one
        local k = a + 1
        if attrs[k] and attrs[k].type == "texture" then k = k + 1 end
        keep = attrs[k] ~= nil and TUNNEL_STRIPS[attrs[k].type] == true
      end
      if keep then
        local always = t == "roof" or t == "facade" or t == "sliver"
        out[#out + 1] = { type = "texture", value = (cur ~= 0 or always) and BASE[t] or 0 }
        if t == "divided_road" then
          local copy = {}
          for k, v in pairs(attr) do copy[k] = v end
          copy.divider_texture = DIVIDER_BASE
          attr = copy
        end
        out[#out + 1] = attr
      end
    end
  end
  return { flags = room.flags, perimeter = room.perimeter, attributes = out }
end

local function shadow_document(doc)
  local rooms = {}
  for r, room in ipairs(doc.rooms) do rooms[r] = shadow_room(room) end
  return { vertices = doc.vertices, heights = doc.heights, textures = SHADOW_TEXTURES, rooms = rooms }
end

local function finite(x) return type(x) == "number" and x - x == 0 end

------------------------------------------------------------------------ the scene

-- Perimeter points of a room as a flat {x, z, ...} list (invalid references and repeated
-- points skipped).
local function perimeter_xz(doc, room)
  local pts = {}
  local V = doc.vertices
  local px, pz
  for _, p in ipairs(room.perimeter or {}) do
    local v = type(p) == "table" and V[p.vertex]
    if v and finite(v[1]) and finite(v[3]) and not (v[1] == px and v[3] == pz) then
      pts[#pts + 1], pts[#pts + 2] = v[1], v[3]
      px, pz = v[1], v[3]
    end
  end
  local n = #pts
  if n >= 4 and pts[1] == pts[n - 1] and pts[2] == pts[n] then pts[n], pts[n - 1] = nil, nil end
  return pts
end

local plan = require "psdl.plan"
-- Crossing-number test of (x, z) in the flat polygon pts (x1, z1, x2, z2, ...).
local inside = plan.inside_flat

--- A point inside a room to put its label on: the area centroid of its perimeter (as the
-- game's `GetCentroid`), or, when that falls outside (an L-shaped room), the middle of the
-- widest span of the perimeter on the line through it.
-- @tparam table doc
-- @tparam table room
-- @treturn number x
-- @treturn number z
-- @return nil for a room without a usable perimeter
function M.room_center(doc, room)
  local pts = perimeter_xz(doc, room)
  local n = #pts // 2
  if n == 0 then return nil end
  local sx, sz = 0, 0
  for i = 1, n do sx, sz = sx + pts[2 * i - 1], sz + pts[2 * i] end
  local ax, az = sx / n, sz / n
  if n < 3 then return ax, az end
  local area, cx, cz = 0, 0, 0
  for i = 1, n do
    local j = i % n + 1
    local x0, z0, x1, z1 = pts[2 * i - 1] - ax, pts[2 * i] - az, pts[2 * j - 1] - ax, pts[2 * j] - az
    local cr = x0 * z1 - x1 * z0
    area = area + cr
    cx, cz = cx + (x0 + x1) * cr, cz + (z0 + z1) * cr
  end
  local x, z = ax, az
  if abs(area) > 1e-9 then x, z = ax + cx / (3 * area), az + cz / (3 * area) end
  if inside(pts, x, z) then return x, z end
  -- widest span on the horizontal line through z
  local xs = {}
  for i = 1, n do
    local j = i % n + 1
    local x0, z0, x1, z1 = pts[2 * i - 1], pts[2 * i], pts[2 * j - 1], pts[2 * j]
    if (z0 > z) ~= (z1 > z) then xs[#xs + 1] = x0 + (z - z0) * (x1 - x0) / (z1 - z0) end
  end
  table.sort(xs)
  local best, bx = -1, nil
  for k = 1, #xs - 1, 2 do
    if xs[k + 1] - xs[k] > best then best, bx = xs[k + 1] - xs[k], (xs[k] + xs[k + 1]) / 2 end
  end
  if bx then return bx, z end
  return x, z
end

-- Where a validation problem points to, in world x, z (nil when it names no place): its
-- position (`x`, `z`: the drivability rules give the spot, e.g. a hole or an overlap), else
-- the vertex, attribute, perimeter point or room its path names.
local function problem_place(doc, p, centers)
  local path0 = type(p.path) == "string" and p.path or ""
  local whole_room = path0:match("^rooms%[%d+%]$") or path0:match("^rooms%[%d+%]%.perimeter$")
  if finite(p.x) and finite(p.z) and not (whole_room and not (p.rooms and p.rooms[2]) and p.rule ~= "hole") then
    return p.x, p.z
  end
  local V = doc.vertices
  local function vert(i)
    local v = math.tointeger(i) and V[i]
    if v and finite(v[1]) and finite(v[3]) then return v[1], v[3] end
  end
  local path = type(p.path) == "string" and p.path or ""
  local r = p.room or tonumber(path:match("^rooms%[(%d+)%]"))
  local room = r and doc.rooms[r]
  if room then
    local a = p.attribute or tonumber(path:match("^rooms%[%d+%]%.attributes%[(%d+)%]"))
    local attr = a and room.attributes and room.attributes[a]
    if type(attr) == "table" and type(attr.vertices) == "table" then
      local k = tonumber(path:match("%.vertices%[(%d+)%]"))
      if k then
        local x, z = vert(attr.vertices[k])
        if x then return x, z end
      end
      for _, vi in ipairs(attr.vertices) do
        local x, z = vert(vi)
        if x then return x, z end
      end
    end
    local k = tonumber(path:match("%.perimeter%[(%d+)%]"))
    if k and room.perimeter and type(room.perimeter[k]) == "table" then
      local x, z = vert(room.perimeter[k].vertex)
      if x then return x, z end
    end
    local c = centers[r]
    if c then return c[1], c[2], r end
    return nil
  end
  local road = p.road or tonumber(path:match("^roads%[(%d+)%]"))
  local rec = road and doc.roads and doc.roads[road]
  if type(rec) == "table" then
    local field, k = path:match("^roads%[%d+%]%.([%w_]+)%[(%d+)%]")
    if field and type(rec[field]) == "table" then
      local item = rec[field][tonumber(k)]
      if field == "rooms" then
        local c = math.tointeger(item) and centers[abs(item)]
        if c then return c[1], c[2] end
      else
        local x, z = vert(item)
        if x then return x, z end
      end
    end
    for _, id in ipairs(rec.rooms or {}) do
      local c = math.tointeger(id) and centers[abs(id)]
      if c then return c[1], c[2] end
    end
    return nil
  end
  local k = tonumber(path:match("^vertices%[(%d+)%]"))
  if k then return vert(k) end
  return nil
end

--- Where a validation problem points to (the vertex, attribute, perimeter point, room or
-- road record its path names), in world x, z.
-- @tparam table doc
-- @tparam table p a problem as `psdl.validate` returns it
-- @tparam table centers `{[room] = {x, z}}` room centres (`room_center`)
-- @treturn number|nil x (nil when the problem names no place)
-- @treturn number z
-- @treturn integer|nil the room, when the place is that room's centre
M.problem_place = problem_place

--- Collect what a map of `doc` shows, in world coordinates.
-- @tparam table doc
-- @tparam[opt] table opts `problems` (true: run `psdl.validate`; or a list of problems as
--   `psdl.validate` returns them)
-- @treturn table scene `{fills = {[class] = {[room] = {x, z, ...}}}, roof_heights = {[room]
--   = {h...}}, cross_t = {[room] = {t...}}, facades = {x0, z0, x1, z1, ...}, outlines =
--   {[room] = {x, z, ...}}, centers = {[room] = {x, z}}, markers = {...}, bounds = {minx,
--   minz, maxx, maxz}, counts = {[class] = triangles}, problems = {errors =, warnings =,
--   placed =, unplaced =}}`
-- long: the map's layers from the exported mesh (fills, roof shades, crosswalks, facades),
-- then the rooms' outlines, centres and tiers, then the problems, all growing one bounds
function M.scene(doc, opts)
  opts = opts or {}
  local mesh = export.build(shadow_document(doc))
  local materials = mesh.materials
  local fills, roof_h, cross_t, counts = {}, {}, {}, {}
  local facades, facade_seen = {}, {}
  local low = {} -- per room: the lowest point of its ground-level fills
  local box = plan.box() -- the map's bounds
  -- the document's vertices the map leaves out (beyond a billion metres, or not finite: a
  -- corrupt file), and when there are some, the box of the others: points the export derives
  -- from a far vertex (a curb's midpoint) do not stretch the map either
  local left_out, near = 0, nil
  do
    local kept = plan.box()
    for _, v in ipairs(doc.vertices or {}) do
      local x, z = v[1], v[3]
      if not (x and z and x >= -1e9 and x <= 1e9 and z >= -1e9 and z <= 1e9) then left_out = left_out + 1
      else kept:add(x, z) end
    end
    if left_out > 0 and not kept:empty() then near = { kept.u0 - 1, kept.v0 - 1, kept.u1 + 1, kept.v1 + 1 } end
  end
  local function grow(x, z)
    -- coordinates beyond a billion metres (corrupt files) do not stretch the map
    if x > 1e9 or x < -1e9 or z > 1e9 or z < -1e9 then return end
    if near and (x < near[1] or z < near[2] or x > near[3] or z > near[4]) then return end
    box:add(x, z)
  end
  for _, g in ipairs(mesh.groups) do
    local r = g.room
    local flags = g.flags or 0
    for _, prim in ipairs(g.prims) do
      local name = materials[prim.material].texture
      local class = name and PART[name]
      if class == "surface" then
        class = (flags & 0x10 ~= 0) and "intersection" or ((flags & 0x08 ~= 0) and "road" or "ground")
      end
      if class then
        local pos, idx, uv = prim.pos, prim.idx, prim.uv
        local list, hl, tl
        if class ~= "facade" then
          local byroom = fills[class]
          if not byroom then byroom = {}; fills[class] = byroom end
          list = byroom[r]
          if not list then list = {}; byroom[r] = list end
          if class == "roof" then
            hl = roof_h[r] or {}
            roof_h[r] = hl
          elseif class == "crosswalk" then
            tl = cross_t[r] or {}
            cross_t[r] = tl
          end
        end
        local n = 0
        for k = 1, #idx, 3 do
          local a, b, c = idx[k], idx[k + 1], idx[k + 2]
          local ax, az = pos[3 * a + 1], pos[3 * a + 3]
          local bx, bz = pos[3 * b + 1], pos[3 * b + 3]
          local cx, cz = pos[3 * c + 1], pos[3 * c + 3]
          if finite(ax + az + bx + bz + cx + cz) then
            if class == "facade" then
              -- a vertical quad: its footprint is the segment between the two points farthest apart
              local d1 = (ax - bx) ^ 2 + (az - bz) ^ 2
              local d2 = (bx - cx) ^ 2 + (bz - cz) ^ 2
              local d3 = (ax - cx) ^ 2 + (az - cz) ^ 2
              local x0, z0, x1, z1 = ax, az, bx, bz
              if d1 >= d2 and d1 >= d3 then -- keep a, b
              elseif d2 >= d3 then x0, z0 = cx, cz
              else x1, z1 = cx, cz end
              if x1 < x0 or (x1 == x0 and z1 < z0) then x0, z0, x1, z1 = x1, z1, x0, z0 end
              -- both triangles of a facade quad have the same footprint: keep it once
              local key = string_format("%.3f %.3f %.3f %.3f", x0, z0, x1, z1)
              if not facade_seen[key] then
                facade_seen[key] = true
                local n4 = #facades
                facades[n4 + 1], facades[n4 + 2], facades[n4 + 3], facades[n4 + 4] = x0, z0, x1, z1
              end
              grow(ax, az); grow(bx, bz); grow(cx, cz)
              n = n + 1
            else
              local cross = (bx - ax) * (cz - az) - (bz - az) * (cx - ax)
              if cross > 1e-9 or cross < -1e-9 then -- edge-on from above: nothing to fill
                local m = #list
                list[m + 1], list[m + 2], list[m + 3], list[m + 4], list[m + 5], list[m + 6] = ax, az, bx, bz, cx, cz
                if hl then
                  hl[#hl + 1] = (pos[3 * a + 2] + pos[3 * b + 2] + pos[3 * c + 2]) / 3
                elseif class ~= "tunnel" then
                  local y = min(pos[3 * a + 2], pos[3 * b + 2], pos[3 * c + 2])
                  if finite(y) and y < (low[r] or huge) then low[r] = y end
                end
                if tl then
                  local t = #tl
                  tl[t + 1], tl[t + 2], tl[t + 3] = uv[2 * a + 2], uv[2 * b + 2], uv[2 * c + 2]
                end
                grow(ax, az); grow(bx, bz); grow(cx, cz)
                n = n + 1
              end
            end
          end
        end
        counts[class] = (counts[class] or 0) + n
      end
    end
  end
  -- drop empty lists
  for class, byroom in pairs(fills) do
    for r, list in pairs(byroom) do if #list == 0 then byroom[r] = nil end end
    if next(byroom) == nil then fills[class] = nil end
  end

  -- room outlines, centres, and the overlays from room flags
  local outlines, centers, tiers = {}, {}, {}
  local underground, warp = {}, {}
  for r, room in ipairs(doc.rooms) do
    local pts = perimeter_xz(doc, room)
    if #pts >= 4 then
      outlines[r] = pts
      for i = 1, #pts, 2 do grow(pts[i], pts[i + 1]) end
    end
    local x, z = M.room_center(doc, room)
    if x and finite(x) and finite(z) then centers[r] = { x, z } end
    -- elevation tier: the lowest point of what the room draws (roofs and tunnel ceilings
    -- aside), else of its perimeter, in steps of TIER metres
    local y = low[r]
    if not y then
      y = huge
      for _, p in ipairs(room.perimeter or {}) do
        local v = type(p) == "table" and doc.vertices[p.vertex]
        if v and finite(v[2]) and v[2] < y then y = v[2] end
      end
    end
    if y < huge then tiers[r] = floor(y / TIER) end
    local flags = room.flags or 0
    if #pts >= 6 then
      if flags & 0x02 ~= 0 then underground[r] = pts end
      if flags & 0x40 ~= 0 then warp[r] = pts end
    end
  end
  if next(underground) then counts.tunnel = (counts.tunnel or 0) end
  if next(warp) then counts.warp = 0 end
  for _ in pairs(warp) do counts.warp = counts.warp + 1 end

  -- problems
  local markers, pcounts = {}, nil
  if opts.problems then
    local problems = opts.problems
    if problems == true then
      local _
      _, problems = require("psdl").validate(doc)
    end
    pcounts = { errors = 0, warnings = 0, placed = 0, unplaced = 0 }
    for _, p in ipairs(problems) do
      if type(p) ~= "table" then goto next_problem end
      if p.severity == "error" then pcounts.errors = pcounts.errors + 1
      else pcounts.warnings = pcounts.warnings + 1 end
      local x, z, at_center = problem_place(doc, p, centers)
      if x then
        pcounts.placed = pcounts.placed + 1
        markers[#markers + 1] = { x = x, z = z, room = at_center, severity = p.severity == "error" and "error" or "warning",
          text = ((p.path ~= nil and p.path ~= "") and (p.path .. ": ") or "") .. tostring(p.message) }
      else
        pcounts.unplaced = pcounts.unplaced + 1
      end
      ::next_problem::
    end
  end

  if box:empty() then -- nothing drawn: the vertices, or a unit square
    for _, v in ipairs(doc.vertices or {}) do
      if finite(v[1]) and finite(v[3]) then grow(v[1], v[3]) end
    end
  end
  local minx, minz, maxx, maxz = box.u0, box.v0, box.u1, box.v1
  if box:empty() then minx, minz, maxx, maxz = 0, 0, 1, 1 end
  return {
    fills = fills, roof_heights = roof_h, cross_t = cross_t, facades = facades, outlines = outlines,
    centers = centers, tiers = tiers, underground = underground, warp = warp, markers = markers,
    bounds = { minx, minz, maxx, maxz }, counts = counts, problems = pcounts,
    triangles = mesh.stats.triangles, left_out = left_out,
  }
end

------------------------------------------------------------------------ the other files

-- Private helpers shared between the files of psdl.render (never part of the API).
local private = {
  CLASS = CLASS,
  ROOF_LEVELS = ROOF_LEVELS,
  finite = finite,
  inside = inside,
  roof_color = roof_color,
}
for _, part in ipairs({ "draw", "output" }) do
  local exports = require("psdl.render." .. part)(M, private)
  for k, v in pairs(exports) do private[k] = v end
end
local build_ops, layout, legend_ops = private.build_ops, private.layout, private.legend_ops
local png_bytes, svg_text = private.png_bytes, private.svg_text

local OPTIONS = { output = true, format = true, size = true, rooms = true, problems = true, legend = true,
  perimeters = true, title = true, supersample = true, compression = true }

--- Largest `size` of a PNG map: 8192 px on the long side (the canvas holds 64 Mpixels,
-- 8192 x 8192). SVG maps take up to 16384.
M.PNG_MAX_SIZE = 8192

--- The image format of a map: `format`, else the extension of `output`, else "png".
-- @tparam[opt] string output
-- @tparam[opt] string format
-- @treturn string "png" or "svg"
-- @return[2] nil
-- @treturn[2] string `<output>: unknown image format "gif" (use .png or .svg)`
function M.format_of(output, format)
  if format == nil and output then format = (output:match("%.([^./]+)$") or ""):lower() end
  format = format or "png"
  if format ~= "png" and format ~= "svg" then
    return nil, string_format("%s: unknown image format %q (use .png or .svg)", tostring(output or "render"), format)
  end
  return format
end

--- Render a top-down map of a document.
-- @tparam table doc a document (`psdl.read`, `psdl.decode`, or built by hand)
-- @tparam[opt] table opts
--   `output` (path: write the image there, atomically; its extension `.png`/`.svg` picks the
--   format unless `format`), `format` (`"png"` (default) or `"svg"`), `size` (pixels on the
--   long side, legend included; 64-8192 for PNG, 64-16384 for SVG, default 2048), `rooms` (room numbers), `problems`
--   (true: markers for what `psdl.validate` reports; or a list of problems as it returns
--   them), `legend` (default true), `perimeters` (room outlines, default true), `title`
--   (legend title, e.g. the file name), `supersample` (1-4; PNG fills drawn that many times
--   larger and averaged; default 2 while that canvas holds at most 32 Mpixels, about 2900 px
--   square, else 1; lowered when the canvas would pass its limits), `compression` (PNG: zlib level
--   0-9, default 6)
-- @treturn table result `{format =, bytes =, width =, height =, scale = (pixels per metre),
--   pixel = function(x, z) -> px, py (pixel coordinates of a world point; pixel (i, j) covers
--   [i, i+1) x [j, j+1)), counts = {[class] = triangles}, triangles =, rooms =, problems =
--   {errors =, warnings =, placed =, unplaced =} (with `problems`), left_out = (the
--   document's vertices beyond 1e9 m on x or z, or not finite: not on the map), output = path
--   (with `output`)}`
-- @return[2] nil, message, code: `"io"` (the file cannot be written; nothing is left
--   behind), `"nomem"`
-- @raise on a bad argument or option (the option named), an unknown image format
--   (`format_of`) or a PNG `size` above `PNG_MAX_SIZE`
function M.render(doc, opts)
  if type(doc) ~= "table" or type(doc.rooms) ~= "table" then
    error("bad argument #1 to 'render' (document expected, got " .. type(doc) .. ")", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #2 to 'render' (table expected, got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  for k in pairs(opts) do
    if not OPTIONS[k] then error(string_format("bad argument #2 to 'render' (unknown option '%s')", tostring(k)), 2) end
  end
  local size = opts.size
  if size ~= nil and (math.tointeger(size) == nil or size < 64 or size > 16384) then
    error("bad argument #2 to 'render' (size: integer 64-16384 expected)", 2)
  end
  local ss = opts.supersample
  if ss ~= nil and (math.tointeger(ss) == nil or ss < 1 or ss > 4) then
    error("bad argument #2 to 'render' (supersample: integer 1-4 expected)", 2)
  end
  local level = opts.compression
  if level ~= nil and (math.tointeger(level) == nil or level < 0 or level > 9) then
    error("bad argument #2 to 'render' (compression: integer 0-9 expected)", 2)
  end
  if opts.output ~= nil and type(opts.output) ~= "string" then
    error("bad argument #2 to 'render' (output: string expected)", 2)
  end
  if opts.problems ~= nil and type(opts.problems) ~= "boolean" and type(opts.problems) ~= "table" then
    error("bad argument #2 to 'render' (problems: boolean or list expected)", 2)
  end
  local format, ferr = M.format_of(opts.output, opts.format)
  if not format then error("bad argument #2 to 'render' (" .. ferr .. ")", 2) end
  if format == "png" and size and size > M.PNG_MAX_SIZE then
    error(string_format("bad argument #2 to 'render' (size %d: a PNG map is at most %d px on the long side (its "
      .. "canvas holds 64 Mpixels); use SVG for a larger map)", size, M.PNG_MAX_SIZE), 2)
  end

  local core = require "psdl.core"
  local scene = M.scene(doc, opts)
  -- the roof range is needed by the legend before the operations are built
  local rmin, rmax = huge, -huge
  for _, hl in pairs(scene.roof_heights) do
    for _, h in ipairs(hl) do
      if finite(h) then rmin, rmax = min(rmin, h), max(rmax, h) end
    end
  end
  if rmin <= rmax then scene.roof_min, scene.roof_max = rmin, rmax end
  local L = layout(scene, opts)
  local ops = build_ops(scene, L, opts)
  legend_ops(scene, L, ops)

  local bytes, png, err, code
  if format == "png" then
    png, err, code = png_bytes(ops, L, opts, core)
    if not png then return nil, err, code end
    bytes = png.bytes
  else
    bytes = svg_text(ops, L, scene, opts)
  end
  local nrooms = 0
  for _ in pairs(scene.outlines) do nrooms = nrooms + 1 end
  local s, ox, oy, minx, maxz = L.scale, L.ox, L.oy, L.minx, L.maxz
  local result = {
    format = format, bytes = bytes, width = L.width, height = L.height, scale = s,
    supersample = png and png.supersample or nil, pixels = png and png.covered or nil,
    origin = { ox = ox, oy = oy, minx = minx, maxz = maxz },
    pixel = function(x, z) return ox + (x - minx) * s, oy + (maxz - z) * s end,
    counts = scene.counts, triangles = scene.triangles, rooms = nrooms, problems = scene.problems,
    left_out = scene.left_out,
    legend_height = L.legend_h,
  }
  if opts.output then
    local ok
    ok, err, code = require("psdl").write_file(opts.output, bytes)
    if not ok then return nil, err, code end
    result.output = opts.output
  end
  return result
end

return M