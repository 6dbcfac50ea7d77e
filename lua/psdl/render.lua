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

-- Crossing-number test of (x, z) in the flat polygon pts.
local function inside(pts, x, z)
  local n = #pts // 2
  local c = false
  local j = n
  for i = 1, n do
    local xi, zi, xj, zj = pts[2 * i - 1], pts[2 * i], pts[2 * j - 1], pts[2 * j]
    if (zi > z) ~= (zj > z) and x < (xj - xi) * (z - zi) / (zj - zi) + xi then c = not c end
    j = i
  end
  return c
end

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
function M.scene(doc, opts)
  opts = opts or {}
  local mesh = export.build(shadow_document(doc))
  local materials = mesh.materials
  local fills, roof_h, cross_t, counts = {}, {}, {}, {}
  local facades, facade_seen = {}, {}
  local low = {} -- per room: the lowest point of its ground-level fills
  local minx, minz, maxx, maxz = huge, huge, -huge, -huge
  local function grow(x, z)
    -- coordinates beyond a billion metres (corrupt files) do not stretch the map
    if x > 1e9 or x < -1e9 or z > 1e9 or z < -1e9 then return end
    if x < minx then minx = x end
    if x > maxx then maxx = x end
    if z < minz then minz = z end
    if z > maxz then maxz = z end
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

  if minx > maxx then -- nothing drawn: the vertices, or a unit square
    for _, v in ipairs(doc.vertices or {}) do
      if finite(v[1]) and finite(v[3]) then grow(v[1], v[3]) end
    end
    if minx > maxx then minx, minz, maxx, maxz = 0, 0, 1, 1 end
  end
  return {
    fills = fills, roof_heights = roof_h, cross_t = cross_t, facades = facades, outlines = outlines,
    centers = centers, tiers = tiers, underground = underground, warp = warp, markers = markers,
    bounds = { minx, minz, maxx, maxz }, counts = counts, problems = pcounts,
    triangles = mesh.stats.triangles,
  }
end

------------------------------------------------------------------------ layout

local text_width -- core.text_width, loaded with the core module

local function fmt_num(x)
  local s = string_format("%.2f", x):gsub("0+$", ""):gsub("%.$", "")
  if s == "-0" then s = "0" end
  return s
end

local function nice_length(maxlen)
  -- the largest 1, 2, 5 x 10^k not above maxlen
  if not (maxlen > 0) then return 1 end
  local p = 10 ^ floor(math.log(maxlen, 10))
  for _, m in ipairs { 5, 2, 1 } do
    if m * p <= maxlen then return m * p end
  end
  return p
end

-- Legend items for a scene: {kind =, label =, ...}.
local function legend_items(scene, opts)
  local items = {}
  for _, c in ipairs(M.classes) do
    if scene.counts[c.name] then
      local label = c.label
      if c.name == "roof" then
        local lo, hi = scene.roof_min, scene.roof_max
        if lo then
          label = (hi - lo >= 0.05) and string_format("roof %s-%s m", fmt_num(lo), fmt_num(hi))
            or string_format("roof %s m", fmt_num(lo))
        end
      end
      items[#items + 1] = { kind = "fill", class = c.name, label = label }
    end
  end
  if #scene.facades > 0 then items[#items + 1] = { kind = "line", class = "facade", label = "facade" } end
  if opts.perimeters ~= false and next(scene.outlines) then
    items[#items + 1] = { kind = "line", class = "perimeter", label = "room outline" }
  end
  local pc = scene.problems
  if pc then
    items[#items + 1] = { kind = "marker", severity = "error",
      label = string_format("%d error%s", pc.errors, pc.errors == 1 and "" or "s") }
    items[#items + 1] = { kind = "marker", severity = "warning",
      label = string_format("%d warning%s", pc.warnings, pc.warnings == 1 and "" or "s") }
    if pc.unplaced > 0 then
      items[#items + 1] = { kind = "note", label = string_format("(%d without a place)", pc.unplaced) }
    end
  end
  items[#items + 1] = { kind = "scale" }
  items[#items + 1] = { kind = "axes" }
  return items
end

-- Flow the legend items into rows for an image `width` wide. Returns the band height and
-- sets each item's x, y (relative to the band's top-left), w.
local function legend_flow(items, title, width, ls, scale_len_px)
  local pad, gap, sw = 8 * ls, 14 * ls, 10 * ls
  local line_h = max(sw, 7 * ls)
  local y = pad
  if title then y = y + 7 * ls + 6 * ls end
  local x = pad
  local rows = 1
  for _, it in ipairs(items) do
    local w
    if it.kind == "scale" then
      w = scale_len_px + 6 * ls + text_width(#it.text, ls)
    elseif it.kind == "axes" then
      w = 16 * ls + text_width(2, ls)
    elseif it.kind == "note" then
      w = text_width(#it.label, ls)
    else
      w = sw + 4 * ls + text_width(#it.label, ls)
    end
    if x > pad and x + w > width - pad then
      x = pad
      y = y + line_h + 6 * ls
      rows = rows + 1
    end
    it.x, it.y, it.w = x, y, w
    x = x + w + gap
  end
  -- the axes item reaches a little below its row
  return y + line_h + pad + 4 * ls, rows
end

--- Image size and world-to-pixel transform for a scene.
-- @treturn table layout `{width, height, scale, ox, oy, minx, maxz, legend_y, legend_h,
--   ls, items, title}`
local function layout(scene, opts)
  local size = opts.size or 2048
  local minx, minz, maxx, maxz = scene.bounds[1], scene.bounds[2], scene.bounds[3], scene.bounds[4]
  local ww, wh = maxx - minx, maxz - minz
  if ww < 1 then minx, maxx = minx - (1 - ww) / 2, maxx + (1 - ww) / 2; ww = 1 end
  if wh < 1 then minz, maxz = minz - (1 - wh) / 2, maxz + (1 - wh) / 2; wh = 1 end
  local margin = max(4, floor(size / 64))
  -- scale of the legend's font and of the largest room numbers
  local ls = size < 1000 and 1 or min(4, 2 + (size - 1000) // 1500)
  local legend = opts.legend ~= false and size >= 256 -- no room for a legend below that
  local items = legend and legend_items(scene, opts) or {}
  local title = legend and opts.title or nil

  local function scale_bar(s, width)
    -- about a fifth of the image width, at most 300 px at ls 1
    local target = min(width / 5, 150 * ls) / s
    local len = nice_length(target)
    return len, len * s
  end
  local function legend_height(width, s)
    if not legend then return 0 end
    local len, px = scale_bar(s, width)
    for _, it in ipairs(items) do
      if it.kind == "scale" then
        it.text = len >= 1000 and (fmt_num(len / 1000) .. " km") or (fmt_num(len) .. " m")
        it.len, it.px = len, px
      end
    end
    return (legend_flow(items, title, width, ls, px))
  end

  -- landscape: the width is the long side
  local W = size
  local s = (W - 2 * margin) / ww
  local L = legend_height(W, s)
  local H = ceil(wh * s) + 2 * margin + L
  if H > size then
    -- portrait: the height is the long side; the legend's rows depend on the width
    H = size
    local min_w = legend and min(size, 240 * ls) or 16
    L = legend_height(size, (size - 2 * margin) / max(ww, wh))
    for _ = 1, 5 do
      s = max(1, H - 2 * margin - L) / wh
      W = max(min_w, ceil(ww * s) + 2 * margin)
      local L2 = legend_height(W, s)
      if L2 == L then break end
      L = L2
    end
    s = min(max(1, H - 2 * margin - L) / wh, (W - 2 * margin) / ww)
    for _, it in ipairs(items) do
      if it.kind == "scale" then it.px = it.len * s end
    end
  end
  W, H = floor(W), floor(H)
  local ox = (W - ww * s) / 2
  local oy = margin + ((H - L - 2 * margin) - wh * s) / 2
  return {
    width = W, height = H, scale = s, ox = ox, oy = oy, minx = minx, maxz = maxz,
    legend_y = H - L, legend_h = L, ls = ls, items = items, title = title, margin = margin,
  }
end

------------------------------------------------------------------------ drawing operations

-- Operations in final pixel coordinates, shared by the PNG and SVG writers:
--   {op = "fill", class =, room =, color =, xy = {...}, stripes = {period, duty, dx, dy, phase}}
--   {op = "poly", class =, room =, color =, xy = {...}, stripes =}
--   {op = "stroke", class =, segs = {...}, width =, color =}
--   {op = "text", x =, y =, text =, scale =, color =, halo =, anchor = "start"|"middle"}
--   {op = "marker", x =, y =, r =, shape =, color =, outline_width =, outline =, title =}
--   {op = "rect", x0 =, y0 =, x1 =, y1 =, color =}
-- `layer`: "fill" ops are drawn supersampled (PNG); "over" ops at the final size.

local function hatch(ls)
  local d = 0.70710678118654752
  return { period = 7 * ls, duty = 0.32, dx = d, dy = d, phase = 0 }
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function build_ops(scene, L, opts)
  local ops = {}
  local s, ox, oy, minx, maxz = L.scale, L.ox, L.oy, L.minx, L.maxz
  local function X(x) return ox + (x - minx) * s end
  local function Y(z) return oy + (maxz - z) * s end
  local function project(list)
    local out = {}
    for i = 1, #list, 2 do out[i], out[i + 1] = X(list[i]), Y(list[i + 1]) end
    return out
  end

  -- roof shades
  local rmin, rmax = huge, -huge
  for _, hl in pairs(scene.roof_heights) do
    for _, h in ipairs(hl) do
      if finite(h) then
        if h < rmin then rmin = h end
        if h > rmax then rmax = h end
      end
    end
  end
  local function roof_level(h)
    if not finite(h) or rmax - rmin < 0.05 then return floor(ROOF_LEVELS / 2) end
    return floor((h - rmin) / (rmax - rmin) * (ROOF_LEVELS - 1) + 0.5)
  end

  local cw_period = max(1.0 * s, 5) -- one white bar per metre across, at least 5 px
  for _, c in ipairs(M.classes) do
    local name = c.name
    local byroom = scene.fills[name]
    if byroom then
      for _, r in ipairs(sorted_keys(byroom)) do
        local list = byroom[r]
        if name == "roof" then
          local hl = scene.roof_heights[r]
          local by_level = {}
          for t = 1, #list // 6 do
            local lv = roof_level(hl[t])
            local xy = by_level[lv] or {}
            by_level[lv] = xy
            local k = (t - 1) * 6
            local m = #xy
            for j = 1, 6, 2 do xy[m + j], xy[m + j + 1] = X(list[k + j]), Y(list[k + j + 1]) end
          end
          for _, lv in ipairs(sorted_keys(by_level)) do
            ops[#ops + 1] = { op = "fill", layer = "fill", class = "roof", level = lv, room = r,
              color = roof_color(lv), xy = by_level[lv] }
          end
        elseif name == "crosswalk" then
          local tl = scene.cross_t[r]
          for t = 1, #list // 6 do
            local k = (t - 1) * 6
            local xy = { X(list[k + 1]), Y(list[k + 2]), X(list[k + 3]), Y(list[k + 4]), X(list[k + 5]), Y(list[k + 6]) }
            local t0, t1, t2 = tl[3 * t - 2], tl[3 * t - 1], tl[3 * t]
            -- the gradient of the texture's v across the triangle: the crosswalk's long axis
            local e1x, e1y, e2x, e2y = xy[3] - xy[1], xy[4] - xy[2], xy[5] - xy[1], xy[6] - xy[2]
            local d1, d2 = t1 - t0, t2 - t0
            local det = e1x * e2y - e1y * e2x
            local stripes
            if det ~= 0 and finite(d1) and finite(d2) then
              local gx, gy = (d1 * e2y - d2 * e1y) / det, (d2 * e1x - d1 * e2x) / det
              local gl = sqrt(gx * gx + gy * gy)
              local len = 0 -- the crosswalk's length along the gradient, in pixels
              if gl > 0 and finite(gl) then
                gx, gy = gx / gl, gy / gl
                -- the start of the crosswalk: the vertex with the smallest v
                local tmin, bx, by = t0, xy[1], xy[2]
                if t1 < tmin then tmin, bx, by = t1, xy[3], xy[4] end
                if t2 < tmin then tmin, bx, by = t2, xy[5], xy[6] end
                local tmax = max(t0, t1, t2)
                len = (tmax - tmin) / gl
                if len >= 2 * cw_period then
                  stripes = { period = cw_period, duty = 0.5, dx = gx, dy = gy,
                    phase = -(bx * gx + by * gy) - cw_period * 0.25 }
                end
              end
            end
            ops[#ops + 1] = { op = "fill", layer = "fill", class = "crosswalk", room = r,
              color = stripes and c.color or ((c.color & 0xFFFFFF00) | 0xB0), xy = xy, stripes = stripes }
          end
        else
          ops[#ops + 1] = { op = "fill", layer = "fill", class = name, room = r, color = c.color, xy = project(list) }
        end
      end
    end
    if name == "tunnel" then
      for _, r in ipairs(sorted_keys(scene.underground)) do
        ops[#ops + 1] = { op = "poly", layer = "fill", class = "tunnel", room = r, color = c.color,
          xy = project(scene.underground[r]), stripes = "hatch" }
      end
    elseif name == "warp" then
      for _, r in ipairs(sorted_keys(scene.warp)) do
        ops[#ops + 1] = { op = "poly", layer = "fill", class = "warp", room = r, color = c.color,
          xy = project(scene.warp[r]) }
      end
    end
  end
  -- Fills from the lowest tier up (a bridge over a road, a road over a tunnel), by class
  -- within a tier; the tunnel hatching and warp tint go over everything.
  local tiers = scene.tiers
  for i, o in ipairs(ops) do
    o.seq = i
    o.tier = (o.class == "tunnel" or o.class == "warp") and huge or (tiers[o.room] or 0)
    if o.class == "tunnel" then o.stripes = "hatch" end
  end
  table.sort(ops, function(a, b)
    if a.tier ~= b.tier then return a.tier < b.tier end
    local ca, cb = CLASS[a.class].order, CLASS[b.class].order
    if ca ~= cb then return ca < cb end
    return a.seq < b.seq
  end)
  scene.roof_min, scene.roof_max = rmin <= rmax and rmin or nil, rmin <= rmax and rmax or nil

  -- lines
  local lw = max(1, s * 0.25)
  if lw > 2.5 * L.ls then lw = 2.5 * L.ls end
  if #scene.facades > 0 then
    ops[#ops + 1] = { op = "stroke", layer = "over", class = "facade", segs = project(scene.facades), width = lw,
      color = M.colors.facade }
  end
  if opts.perimeters ~= false then
    local segs = {}
    for _, r in ipairs(sorted_keys(scene.outlines)) do
      local pts = scene.outlines[r]
      local n = #pts // 2
      for i = 1, n do
        local j = i % n + 1
        local m = #segs
        segs[m + 1], segs[m + 2], segs[m + 3], segs[m + 4] = X(pts[2 * i - 1]), Y(pts[2 * i]), X(pts[2 * j - 1]),
          Y(pts[2 * j])
      end
    end
    if #segs > 0 then
      local polys = {}
      for _, r in ipairs(sorted_keys(scene.outlines)) do polys[#polys + 1] = { room = r, xy = project(scene.outlines[r]) } end
      ops[#ops + 1] = { op = "stroke", layer = "over", class = "perimeter", segs = segs, width = 1.0,
        color = M.colors.perimeter, polys = polys }
    end
  end

  -- room numbers
  local label_at = {} -- where each room's label is: {px, py, half its width}
  if opts.rooms then
    -- one scale for all numbers: the largest (up to the legend's) at which three rooms in
    -- four hold their number; a room too small for it gets the smallest
    local labels = {}
    for _, r in ipairs(sorted_keys(scene.centers)) do
      local bw, bh = 0, 0
      local pts = scene.outlines[r]
      if pts then
        local x0, x1, z0, z1 = huge, -huge, huge, -huge
        for i = 1, #pts, 2 do
          x0, x1 = min(x0, pts[i]), max(x1, pts[i])
          z0, z1 = min(z0, pts[i + 1]), max(z1, pts[i + 1])
        end
        bw, bh = (x1 - x0) * s, (z1 - z0) * s
      end
      labels[#labels + 1] = { room = r, text = tostring(r), bw = bw, bh = bh }
    end
    local function fits(l, sc) return text_width(#l.text, sc) <= 0.7 * l.bw and 7 * sc <= 0.6 * l.bh end
    local scale = 1
    for try = L.ls, 2, -1 do
      local n = 0
      for _, l in ipairs(labels) do if fits(l, try) then n = n + 1 end end
      if n >= 0.75 * #labels then scale = try; break end
    end
    -- place the labels of small rooms first; a label that would cover one already placed
    -- moves along its room's long axis (a long road's centre may be under a bridge's label)
    table.sort(labels, function(a, b)
      if a.bw * a.bh ~= b.bw * b.bh then return a.bw * a.bh < b.bw * b.bh end
      return a.room < b.room
    end)
    local CELL = 32
    local grid = {}
    local function cells(b, fn)
      for gy = floor(b[2] / CELL), floor(b[4] / CELL) do
        for gx = floor(b[1] / CELL), floor(b[3] / CELL) do
          if fn(gy * 1048576 + gx) then return true end
        end
      end
      return false
    end
    local function collides(b)
      return cells(b, function(key)
        for _, o in ipairs(grid[key] or {}) do
          if b[1] < o[3] and o[1] < b[3] and b[2] < o[4] and o[2] < b[4] then return true end
        end
        return false
      end)
    end
    local function add(b)
      cells(b, function(key)
        local list = grid[key] or {}
        grid[key] = list
        list[#list + 1] = b
        return false
      end)
    end
    for _, l in ipairs(labels) do
      local sc = fits(l, scale) and scale or 1
      local c = scene.centers[l.room]
      local tw = text_width(#l.text, sc)
      local pts = scene.outlines[l.room]
      local function box(px, py)
        return { px - tw / 2 - 1, py - 3.5 * sc - 1, px + tw / 2 + 1, py + 3.5 * sc + 1 }
      end
      local px, py = X(c[1]), Y(c[2])
      if not (px > -1000 and px < L.width + 1000 and py > -1000 and py < L.height + 1000) then goto next_label end
      local b = box(px, py)
      if pts and collides(b) then
        local alongx = l.bw >= l.bh
        local extent = (alongx and l.bw or l.bh) / s
        for _, f in ipairs { 0.25, -0.25, 0.38, -0.38, 0.12, -0.12 } do
          local x, z = c[1] + (alongx and f * extent or 0), c[2] + (alongx and 0 or f * extent)
          if inside(pts, x, z) then
            local qx, qy = X(x), Y(z)
            local qb = box(qx, qy)
            if not collides(qb) then px, py, b = qx, qy, qb; break end
          end
        end
      end
      add(b)
      label_at[l.room] = { px, py, tw / 2 }
      ops[#ops + 1] = { op = "text", layer = "over", class = "room-id", room = l.room, text = l.text, scale = sc,
        x = floor(px - tw / 2 + 0.5), y = floor(py - 3.5 * sc + 0.5), cx = px, cy = py,
        color = M.colors.text, halo = M.colors.halo, anchor = "middle" }
      ::next_label::
    end
  end

  -- problem markers: one per place and severity, errors on top
  if #scene.markers > 0 then
    local seen, list = {}, {}
    -- about 2 m across on the map, 5 to 8 legend-font pixels
    local r = min(3.5 * L.ls + 0.5, max(2.5, 2.0 * s))
    for _, m in ipairs(scene.markers) do
      local px, py = X(m.x), Y(m.z)
      if not (px > -1000 and px < L.width + 1000 and py > -1000 and py < L.height + 1000) then goto next_marker end
      -- a problem of a whole room sits at its centre, or beside the room's number when shown
      local at = m.room and label_at[m.room]
      if at then px, py = at[1] + at[3] + r + 2, at[2] end
      local key = string_format("%s:%d:%d", m.severity, floor(px + 0.5), floor(py + 0.5))
      local e = seen[key]
      if e then
        e.count = e.count + 1
        if e.count <= 8 then e.titles[#e.titles + 1] = m.text end
      else
        e = { x = px, y = py, severity = m.severity, count = 1, titles = { m.text } }
        seen[key] = e
        list[#list + 1] = e
      end
      ::next_marker::
    end
    for pass = 1, 2 do
      local want = pass == 1 and "warning" or "error"
      for _, e in ipairs(list) do
        if e.severity == want then
          if e.count > 8 then e.titles[#e.titles + 1] = string_format("(and %d more)", e.count - 8) end
          ops[#ops + 1] = { op = "marker", layer = "over", class = want, x = e.x, y = e.y,
            r = want == "error" and r or r + 0.5, shape = want == "error" and "disc" or "diamond",
            color = M.colors[want], outline_width = min(max(1, 0.75 * L.ls), max(1, r / 4)),
            outline = M.colors.marker_outline,
            title = concat(e.titles, "\n") }
        end
      end
    end
  end
  return ops
end

-- Legend operations (in the band under the map).
local function legend_ops(scene, L, all)
  if L.legend_h <= 0 then return end
  local ops = setmetatable({}, { __newindex = function(_, _, o)
    o.legend = true
    all[#all + 1] = o
  end, __len = function() return #all end })
  local ls = L.ls
  local y0 = L.legend_y
  local W = L.width
  local C = M.colors
  ops[#ops + 1] = { op = "rect", layer = "over", class = "legend", x0 = 0, y0 = y0, x1 = W, y1 = L.height,
    color = C.legend }
  ops[#ops + 1] = { op = "rect", layer = "over", class = "legend", x0 = 0, y0 = y0, x1 = W, y1 = y0 + max(1, ls // 1),
    color = C.legend_rule }
  local pad = 8 * ls
  if L.title then
    ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = pad, y = y0 + pad, text = L.title,
      scale = ls, color = C.text }
  end
  local sw = 10 * ls
  local line_h = max(sw, 7 * ls)
  for _, it in ipairs(L.items) do
    local x, y = it.x, y0 + it.y
    local ty = y + floor((line_h - 7 * ls) / 2)
    if it.kind == "fill" then
      local c = CLASS[it.class]
      local sq = { x, y, x + sw, y, x + sw, y + sw, x, y + sw }
      if it.class == "roof" then
        local third = sw / 3
        for k = 0, 2 do
          local lv = floor(k * (ROOF_LEVELS - 1) / 2 + 0.5)
          ops[#ops + 1] = { op = "poly", layer = "over", class = "roof", level = lv, color = roof_color(lv),
            xy = { x + k * third, y, x + (k + 1) * third, y, x + (k + 1) * third, y + sw, x + k * third, y + sw } }
        end
      elseif it.class == "crosswalk" then
        ops[#ops + 1] = { op = "poly", layer = "over", class = "road", color = CLASS.road.color, xy = sq }
        ops[#ops + 1] = { op = "poly", layer = "over", class = "crosswalk", color = c.color, xy = sq,
          stripes = { period = 3 * ls, duty = 0.5, dx = 1, dy = 0, phase = -x } }
      elseif it.class == "tunnel" then
        ops[#ops + 1] = { op = "poly", layer = "over", class = "road", color = CLASS.road.color, xy = sq }
        ops[#ops + 1] = { op = "poly", layer = "over", class = "tunnel", color = c.color, xy = sq, stripes = "hatch-legend" }
      elseif it.class == "warp" then
        ops[#ops + 1] = { op = "poly", layer = "over", class = "road", color = CLASS.road.color, xy = sq }
        ops[#ops + 1] = { op = "poly", layer = "over", class = "warp", color = c.color, xy = sq }
      else
        ops[#ops + 1] = { op = "poly", layer = "over", class = it.class, color = c.color, xy = sq }
      end
      ops[#ops + 1] = { op = "stroke", layer = "over", class = "legend", width = 1,
        segs = { x, y, x + sw, y, x + sw, y, x + sw, y + sw, x + sw, y + sw, x, y + sw, x, y + sw, x, y },
        color = 0x00000040 }
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x + sw + 4 * ls, y = ty, text = it.label,
        scale = ls, color = C.text }
    elseif it.kind == "line" then
      local color = it.class == "facade" and C.facade or 0x000000A0
      ops[#ops + 1] = { op = "stroke", layer = "over", class = it.class, width = it.class == "facade" and 2 * ls or ls,
        segs = { x, y + sw / 2, x + sw, y + sw / 2 }, color = color }
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x + sw + 4 * ls, y = ty, text = it.label,
        scale = ls, color = C.text }
    elseif it.kind == "marker" then
      local r = 3.5 * ls + 0.5
      ops[#ops + 1] = { op = "marker", layer = "over", class = it.severity, x = x + sw / 2, y = y + sw / 2,
        r = it.severity == "error" and r or r + 0.5, shape = it.severity == "error" and "disc" or "diamond",
        color = C[it.severity], outline_width = max(1, 0.75 * ls), outline = 0x555555FF }
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x + sw + 4 * ls, y = ty, text = it.label,
        scale = ls, color = C.text }
    elseif it.kind == "note" then
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x, y = ty, text = it.label, scale = ls,
        color = C.text }
    elseif it.kind == "scale" then
      local by = y + sw / 2
      local px = it.px
      ops[#ops + 1] = { op = "stroke", layer = "over", class = "legend", width = max(1, ls),
        segs = { x, by, x + px, by, x, by - 3 * ls, x, by + 3 * ls, x + px, by - 3 * ls, x + px, by + 3 * ls,
          x + px / 2, by - 2 * ls, x + px / 2, by },
        color = C.text }
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = floor(x + px + 6 * ls), y = ty,
        text = it.text, scale = ls, color = C.text }
    elseif it.kind == "axes" then
      -- an arrow up labelled +z, an arrow right labelled +x, from a corner at the row's bottom
      local cx, cy = x + ls, y + line_h
      local len, a = 12 * ls, 3 * ls
      ops[#ops + 1] = { op = "stroke", layer = "over", class = "legend", width = max(1, ls),
        segs = { cx, cy, cx, cy - len, cx, cy - len, cx - a, cy - len + a, cx, cy - len, cx + a, cy - len + a,
          cx, cy, cx + len, cy, cx + len, cy, cx + len - a, cy - a, cx + len, cy, cx + len - a, cy + a },
        color = C.text }
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = floor(cx + 5 * ls), y = floor(cy - 13 * ls),
        text = "+z", scale = ls, color = C.text }
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = floor(cx + 14 * ls),
        y = floor(cy - 3.5 * ls), text = "+x", scale = ls, color = C.text }
    end
  end
end

------------------------------------------------------------------------ PNG

local function png_bytes(ops, L, opts, core)
  local W, H = L.width, L.height
  -- the supersampled canvas stays within 32 Mpixels (128 MiB) by default, within the
  -- canvas limits (16384 px a side, 64 Mpixels) when asked for more
  local ss = opts.supersample or 2
  local budget = opts.supersample and (1 << 26) or (1 << 25)
  while ss > 1 and (max(W, H) * ss > 16384 or W * H * ss * ss > budget) do ss = ss - 1 end
  if W * H > (1 << 26) then
    return nil, string_format("psdl: usage: a PNG map of %d x %d px is above the 64 Mpixel canvas limit "
      .. "(about 8192 x 8192): use a smaller size, or SVG", W, H), "usage"
  end
  local hi, err, code = core.canvas_new(W * ss, H * ss, M.colors.background)
  if not hi then return nil, err, code end
  local function scaled(xy)
    if ss == 1 then return xy end
    local out = {}
    for i = 1, #xy do out[i] = xy[i] * ss end
    return out
  end
  local function paint(o, k)
    local st = o.stripes
    if st == "hatch" then return hatch(L.ls * k) end
    if st == "hatch-legend" then return hatch(L.ls * k * 0.6) end
    if st and k ~= 1 then
      return { period = st.period * k, duty = st.duty, dx = st.dx, dy = st.dy, phase = st.phase * k }
    end
    return st
  end
  local covered = {}
  for _, o in ipairs(ops) do
    if o.layer == "fill" then
      local n
      if o.op == "fill" then
        n = hi:triangles(scaled(o.xy), o.color, paint(o, ss))
      else
        n = hi:polygon(scaled(o.xy), o.color, paint(o, ss))
      end
      covered[o.class] = (covered[o.class] or 0) + n
    end
  end
  local c = hi
  if ss > 1 then
    c = hi:downsample(ss)
    hi:close()
  end
  for _, o in ipairs(ops) do
    if o.layer == "over" then
      if o.op == "stroke" then
        c:stroke(o.segs, o.width, o.color)
      elseif o.op == "text" then
        c:text(o.x, o.y, o.text, o.scale, o.color, o.halo)
      elseif o.op == "marker" then
        c:marker(o.x, o.y, o.r, o.shape, o.color, o.outline_width, o.outline)
      elseif o.op == "rect" then
        c:rect(floor(o.x0), floor(o.y0), floor(o.x1), floor(o.y1), o.color)
      elseif o.op == "poly" or o.op == "fill" then
        local method = o.op == "poly" and c.polygon or c.triangles
        method(c, o.xy, o.color, paint(o, 1))
      end
    end
  end
  local bytes, err, code = c:png(opts.compression or 6)
  c:close()
  if not bytes then return nil, err, code end
  return { bytes = bytes, supersample = ss, covered = covered }
end

------------------------------------------------------------------------ SVG

local function hex(rgba) return string_format("#%06x", rgba >> 8) end
local function opacity(rgba)
  local a = rgba & 255
  if a == 255 then return nil end
  return fmt_num(a / 255)
end

local function xml_escape(s)
  s = s:gsub("[%z\1-\8\11\12\14-\31]", "?")
  if not utf8.len(s) then s = s:gsub("[\128-\255]", "?") end
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

local function svg_path_tris(xy, out)
  -- one closed subpath per triangle, all wound the same way so overlaps stay filled
  for k = 1, #xy, 6 do
    local ax, ay, bx, by, cx, cy = xy[k], xy[k + 1], xy[k + 2], xy[k + 3], xy[k + 4], xy[k + 5]
    if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) < 0 then bx, by, cx, cy = cx, cy, bx, by end
    if not (finite(ax + ay + bx + by + cx + cy) and abs(ax) + abs(ay) + abs(bx) + abs(by) + abs(cx) + abs(cy) < 1e9) then
      goto skip
    end
    out[#out + 1] = "M" .. fmt_num(ax) .. " " .. fmt_num(ay) .. "L" .. fmt_num(bx) .. " " .. fmt_num(by) .. "L" ..
      fmt_num(cx) .. " " .. fmt_num(cy) .. "Z"
    ::skip::
  end
end

local function svg_path_poly(xy)
  local out = {}
  for k = 1, #xy do
    if not (finite(xy[k]) and abs(xy[k]) < 1e9) then return "" end
  end
  for k = 1, #xy, 2 do out[#out + 1] = (k == 1 and "M" or "L") .. fmt_num(xy[k]) .. " " .. fmt_num(xy[k + 1]) end
  return concat(out) .. "Z"
end

local function svg_text(ops, L, scene, opts)
  local W, H = L.width, L.height
  local out = {}
  local function w(...) for i = 1, select("#", ...) do out[#out + 1] = select(i, ...) end end
  w('<?xml version="1.0" encoding="UTF-8"?>\n')
  w(string_format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n', W, H, W, H))
  w("<title>", xml_escape(opts.title or "psdl map"), "</title>\n")
  local function minus(v) return v < 0 and (" + " .. fmt_num(-v)) or (" - " .. fmt_num(v)) end
  w(string_format('<desc>psdlkit map: x to the right, z up; %s px per metre; px = %s + (x%s) * %s, py = %s - (z%s) * %s</desc>\n',
    fmt_num(L.scale), fmt_num(L.ox), minus(L.minx), fmt_num(L.scale), fmt_num(L.oy), minus(L.maxz),
    fmt_num(L.scale)))
  -- styles per class
  w("<style>\n")
  for _, c in ipairs(M.classes) do
    if c.name == "tunnel" then
      w(".tunnel{fill:url(#hatch)}\n")
    elseif c.name == "crosswalk" then
      w(".crosswalk{fill:", hex(c.color), "}\n")
    else
      local op = opacity(c.color)
      w(".", c.name, "{fill:", hex(c.color), op and (";fill-opacity:" .. op) or "", "}\n")
    end
  end
  for lv = 0, ROOF_LEVELS - 1 do w(".roof-", lv, "{fill:", hex(roof_color(lv)), "}\n") end
  w(".facade{fill:none;stroke:", hex(M.colors.facade), ";stroke-linecap:round}\n")
  w(".perimeter{fill:none;stroke:", hex(M.colors.perimeter), ";stroke-opacity:", opacity(M.colors.perimeter),
    ";stroke-width:1}\n")
  w(".room-id{font-family:monospace;text-anchor:middle;dominant-baseline:central;fill:", hex(M.colors.text),
    ";stroke:#fff;stroke-opacity:0.85;paint-order:stroke}\n")
  w(".error{fill:", hex(M.colors.error), ";stroke:#fff}\n.warning{fill:", hex(M.colors.warning), ";stroke:#fff}\n")
  w(".legend text{font-family:monospace;fill:", hex(M.colors.text), "}\n")
  w("</style>\n")
  -- patterns: hatching and one stripe pattern per crosswalk direction
  local ls = L.ls
  local hp = hatch(ls)
  w("<defs>\n")
  w(string_format('<pattern id="hatch" patternUnits="userSpaceOnUse" width="%s" height="%s" patternTransform="rotate(45)">'
    .. '<rect width="%s" height="%s" fill="%s"/></pattern>\n', fmt_num(hp.period), fmt_num(hp.period),
    fmt_num(hp.period * hp.duty), fmt_num(hp.period), hex(CLASS.tunnel.color)))
  local cw_ids = {}
  for _, o in ipairs(ops) do
    if o.class == "crosswalk" and o.stripes and o.layer == "fill" then
      local deg = floor(math.deg(math.atan(o.stripes.dy, o.stripes.dx)) + 0.5) % 180
      o.pattern = "cw" .. deg
      if not cw_ids[deg] then
        cw_ids[deg] = true
        local p = o.stripes.period
        w(string_format('<pattern id="cw%d" patternUnits="userSpaceOnUse" width="%s" height="%s" '
          .. 'patternTransform="rotate(%d)"><rect width="%s" height="%s" fill="%s"/></pattern>\n', deg, fmt_num(p),
          fmt_num(p), deg, fmt_num(p * 0.5), fmt_num(p), hex(CLASS.crosswalk.color)))
      end
    end
  end
  w("</defs>\n")
  w(string_format('<rect class="background" width="%d" height="%d" fill="%s"/>\n', W, H, hex(M.colors.background)))

  -- fills: one group per class, one path per room (per roof shade / crosswalk direction)
  local groups, order = {}, {}
  for _, o in ipairs(ops) do
    if o.layer == "fill" then
      local g = groups[o.class]
      if not g then
        g = { items = {}, index = {} }
        groups[o.class] = g
        order[#order + 1] = o.class
      end
      local key = tostring(o.room) .. ":" .. tostring(o.level or o.pattern or (o.stripes and "s" or "")) ..
        ":" .. o.op
      local item = g.index[key]
      if not item then
        item = { room = o.room, level = o.level, pattern = o.pattern, plain = o.class == "crosswalk" and not o.stripes,
          op = o.op, d = {} }
        g.index[key] = item
        g.items[#g.items + 1] = item
      end
      if o.op == "fill" then svg_path_tris(o.xy, item.d) else item.d[#item.d + 1] = svg_path_poly(o.xy) end
    end
  end
  table.sort(order, function(a, b) return CLASS[a].order < CLASS[b].order end)
  for _, class in ipairs(order) do
    w('<g class="', class, '">\n')
    for _, item in ipairs(groups[class].items) do
      local attrs = ""
      if item.level then attrs = ' class="roof-' .. item.level .. '"' end
      if item.pattern then attrs = ' fill="url(#' .. item.pattern .. ')"' end
      if item.plain then attrs = ' fill-opacity="0.7"' end
      w('<path data-room="', tostring(item.room), '"', attrs, ' d="', concat(item.d), '"/>\n')
    end
    w("</g>\n")
  end

  -- lines, labels, markers
  for _, o in ipairs(ops) do
    if o.op == "stroke" and o.polys then
      w('<g class="', o.class, '" stroke-width="', fmt_num(o.width), '">\n')
      for _, p in ipairs(o.polys) do w('<path data-room="', tostring(p.room), '" d="', svg_path_poly(p.xy), '"/>\n') end
      w("</g>\n")
    elseif o.layer == "over" and o.op == "stroke" and not o.legend and (o.class == "facade" or o.class == "perimeter") then
      local d = {}
      local segs = o.segs
      for k = 1, #segs, 4 do
        local ok = true
        for j = k, k + 3 do if not (finite(segs[j]) and abs(segs[j]) < 1e9) then ok = false end end
        if ok then
          d[#d + 1] = "M" .. fmt_num(segs[k]) .. " " .. fmt_num(segs[k + 1]) .. "L" .. fmt_num(segs[k + 2]) .. " " ..
            fmt_num(segs[k + 3])
        end
      end
      w('<g class="', o.class, '"><path stroke-width="', fmt_num(o.width), '" d="', concat(d), '"/></g>\n')
    end
  end
  local any = false
  for _, o in ipairs(ops) do
    if o.op == "text" and o.class == "room-id" then
      if not any then w('<g class="room-ids">\n'); any = true end
      w(string_format('<text class="room-id" x="%s" y="%s" font-size="%s" stroke-width="%s">%s</text>\n',
        fmt_num(o.cx), fmt_num(o.cy), fmt_num(o.scale * 9), fmt_num(o.scale), xml_escape(o.text)))
    end
  end
  if any then w("</g>\n") end
  any = false
  for _, o in ipairs(ops) do
    if o.op == "marker" and not o.legend then
      if not any then w('<g class="problems">\n'); any = true end
      local t = "<title>" .. xml_escape(o.title) .. "</title>"
      if o.shape == "disc" then
        w(string_format('<circle class="%s" cx="%s" cy="%s" r="%s" stroke-width="%s">%s</circle>\n', o.class,
          fmt_num(o.x), fmt_num(o.y), fmt_num(o.r), fmt_num(o.outline_width), t))
      else
        local r = o.r
        w(string_format('<path class="%s" d="M%s %sL%s %sL%s %sL%s %sZ" stroke-width="%s">%s</path>\n', o.class,
          fmt_num(o.x), fmt_num(o.y - r), fmt_num(o.x + r), fmt_num(o.y), fmt_num(o.x), fmt_num(o.y + r),
          fmt_num(o.x - r), fmt_num(o.y), fmt_num(o.outline_width), t))
      end
    end
  end
  if any then w("</g>\n") end

  -- legend
  if L.legend_h > 0 then
    w('<g class="legend">\n')
    for _, o in ipairs(ops) do
      if o.legend then
        if o.op == "rect" then
          local op = opacity(o.color)
          w(string_format('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>\n', fmt_num(o.x0), fmt_num(o.y0),
            fmt_num(o.x1 - o.x0), fmt_num(o.y1 - o.y0), hex(o.color), op and (' fill-opacity="' .. op .. '"') or ""))
        elseif o.op == "poly" then
          local fill = hex(o.color)
          if o.stripes == "hatch-legend" then fill = "url(#hatch)" end
          if o.class == "crosswalk" and o.stripes then fill = "url(#cw0)" end
          local op = opacity(o.color)
          if o.class == "crosswalk" and not cw_ids[0] then
            cw_ids[0] = true
            w(string_format('<defs><pattern id="cw0" patternUnits="userSpaceOnUse" width="%d" height="%d">'
              .. '<rect width="%s" height="%d" fill="%s"/></pattern></defs>\n', 3 * ls, 3 * ls, fmt_num(1.5 * ls), 3 * ls,
              hex(o.color)))
          end
          w('<path d="', svg_path_poly(o.xy), '" fill="', fill, '"', op and (' fill-opacity="' .. op .. '"') or "",
            "/>\n")
        elseif o.op == "stroke" then
          local d = {}
          for k = 1, #o.segs, 4 do
            d[#d + 1] = "M" .. fmt_num(o.segs[k]) .. " " .. fmt_num(o.segs[k + 1]) .. "L" .. fmt_num(o.segs[k + 2]) ..
              " " .. fmt_num(o.segs[k + 3])
          end
          local op = opacity(o.color)
          w('<path fill="none" stroke="', hex(o.color), '"', op and (' stroke-opacity="' .. op .. '"') or "",
            ' stroke-width="', fmt_num(o.width), '" d="', concat(d), '"/>\n')
        elseif o.op == "text" then
          w(string_format('<text x="%s" y="%s" font-size="%s">%s</text>\n', fmt_num(o.x), fmt_num(o.y + 7 * o.scale),
            fmt_num(o.scale * 10), xml_escape(o.text)))
        elseif o.op == "marker" then
          if o.shape == "disc" then
            w(string_format('<circle class="%s" cx="%s" cy="%s" r="%s" stroke-width="%s"/>\n', o.class, fmt_num(o.x),
              fmt_num(o.y), fmt_num(o.r), fmt_num(o.outline_width)))
          else
            local r = o.r
            w(string_format('<path class="%s" d="M%s %sL%s %sL%s %sL%s %sZ" stroke-width="%s"/>\n', o.class,
              fmt_num(o.x), fmt_num(o.y - r), fmt_num(o.x + r), fmt_num(o.y), fmt_num(o.x), fmt_num(o.y + r),
              fmt_num(o.x - r), fmt_num(o.y), fmt_num(o.outline_width)))
          end
        end
      end
    end
    w("</g>\n")
  end
  w("</svg>\n")
  return concat(out)
end

------------------------------------------------------------------------ render

local OPTIONS = { output = true, format = true, size = true, rooms = true, problems = true, legend = true,
  perimeters = true, title = true, supersample = true, compression = true }

--- Largest `size` of a PNG map: 8192 px on the long side (the canvas holds 64 Mpixels,
-- 8192 x 8192). SVG maps take up to 16384.
M.PNG_MAX_SIZE = 8192

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
--   {errors =, warnings =, placed =, unplaced =} (with `problems`), output = path (with
--   `output`)}`
-- @return[2] nil, message, code: `"usage"` (unknown format), `"io"` (the file cannot be
--   written; nothing is left behind), `"nomem"`
-- @raise on a bad argument or option
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
  local format = opts.format
  if format == nil and opts.output then format = (opts.output:match("%.([^./]+)$") or ""):lower() end
  format = format or "png"
  if format ~= "png" and format ~= "svg" then
    return nil, string_format("psdl: usage: %s: unknown image format %q (use .png or .svg)",
      tostring(opts.output or "render"), format), "usage"
  end
  if format == "png" and size and size > M.PNG_MAX_SIZE then
    return nil, string_format("psdl: usage: size %d: a PNG map is at most %d px on the long side (its canvas "
      .. "holds 64 Mpixels); use SVG for a larger map", size, M.PNG_MAX_SIZE), "usage"
  end

  local core = require "psdl.core"
  text_width = core.text_width
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
