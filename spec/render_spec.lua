-- Top-down maps: lua/psdl/render.lua (layout, classes, SVG), src/lpsdl_render.c +
-- src/psdl_raster.c (canvas, PNG) and `psdl render`.
local psdl = require "psdl"
local render = require "psdl.render"
local export = require "psdl.export"
local core = require "psdl.core"
local lxp = require "lxp"
local lfs = require "lfs"
local H = require "helper"

local unpack = string.unpack

local COLOR = {}
for _, c in ipairs(render.classes) do COLOR[c.name] = c.color end

local function hexc(c) return string.format("%08x", c) end

------------------------------------------------------------------------ helpers

local fixture_cache = {}
local function fixture(name)
  if not fixture_cache[name] then fixture_cache[name] = assert(psdl.read(H.fixtures_dir .. "/" .. name)) end
  return fixture_cache[name]
end

-- A fresh copy of a fixture (to edit).
local function fresh(name)
  return assert(psdl.read(H.fixtures_dir .. "/" .. name))
end

-- The decoded canvas of a render result (PNG).
local function decode(result)
  return assert(core.canvas_png_decode(result.bytes))
end

-- Colour of the pixel that holds world point (x, z).
local function pixel_at(canvas, result, x, z)
  local px, py = result.pixel(x, z)
  return canvas:get(math.floor(px), math.floor(py)), math.floor(px), math.floor(py)
end

local function V(doc, i) return doc.vertices[i] end

-- Rooms whose drawing attributes are exactly the given types, in order.
local function rooms_with(doc, types, flags)
  local out = {}
  for r, room in ipairs(doc.rooms) do
    local list = {}
    for _, a in ipairs(room.attributes) do
      if a.type ~= "texture" then list[#list + 1] = a.type end
    end
    if table.concat(list, " ") == table.concat(types, " ") and (not flags or room.flags == flags) then
      out[#out + 1] = r
    end
  end
  return out
end

local function first_attr(room, t)
  for i, a in ipairs(room.attributes) do
    if a.type == t then return a, i end
  end
end

-- Bounding box of a room's perimeter in x, z.
local function room_box(doc, r)
  local x0, z0, x1, z1 = math.huge, math.huge, -math.huge, -math.huge
  for _, p in ipairs(doc.rooms[r].perimeter) do
    local v = V(doc, p.vertex)
    x0, x1 = math.min(x0, v[1]), math.max(x1, v[1])
    z0, z1 = math.min(z0, v[3]), math.max(z1, v[3])
  end
  return x0, z0, x1, z1
end

-- Colour histogram of the pixels of a world box (inclusive), shrunk by `inset` metres.
local function box_colors(canvas, result, x0, z0, x1, z1, inset)
  inset = inset or 0
  local ax, ay = result.pixel(x0 + inset, z1 - inset)
  local bx, by = result.pixel(x1 - inset, z0 + inset)
  local hist = {}
  for y = math.ceil(ay), math.floor(by) - 1 do
    for x = math.ceil(ax), math.floor(bx) - 1 do
      local c = canvas:get(x, y)
      hist[c] = (hist[c] or 0) + 1
    end
  end
  return hist
end

local run = H.cli

local function exists(path) return lfs.attributes(path, "mode") ~= nil end

-- A small hand-built document: `rooms` = {{flags =, perimeter = {{x, z}...} (y 0),
-- attributes = {...}}}; attributes give vertices as {x, y, z} points.
local function hand_doc(rooms)
  local doc = {
    magic = "PSD0", target_size = 2, vertices = { { 0, 0, 0 } }, heights = { 0, 10, 20 },
    textures = { "r4_f", "swalk_f", "xwalk", "grass", "roof" }, first_road_room = 0,
    room0 = { flags = 0, prop_rule = 0xCD }, rooms = {}, roads = {},
    bounds = { min = { 0, 0, 0 }, max = { 1, 1, 1 }, center = { 0, 0, 0 }, radius = 1 },
  }
  local function vert(p)
    doc.vertices[#doc.vertices + 1] = { p[1], p[2], p[3] }
    return #doc.vertices
  end
  for r, spec in ipairs(rooms) do
    local per = {}
    for _, p in ipairs(spec.perimeter or {}) do per[#per + 1] = { vertex = vert { p[1], 0, p[2] }, neighbour = 0 } end
    local attrs = {}
    for _, a in ipairs(spec.attributes or {}) do
      local copy = {}
      for k, v in pairs(a) do copy[k] = v end
      if a.points then
        copy.points = nil
        copy.vertices = {}
        for _, p in ipairs(a.points) do copy.vertices[#copy.vertices + 1] = vert(p) end
      end
      attrs[#attrs + 1] = copy
    end
    doc.rooms[r] = { flags = spec.flags or 4, prop_rule = 0, perimeter = per, attributes = attrs }
  end
  return doc
end

-- A square fan (x0..x1, z0..z1) at height y.
local function square_fan(x0, z0, x1, z1, y, t)
  y = y or 0
  return { type = t or "fan", points = { { x0, y, z0 }, { x1, y, z0 }, { x1, y, z1 }, { x0, y, z1 } } }
end

local function square(x0, z0, x1, z1) return { { x0, z0 }, { x1, z0 }, { x1, z1 }, { x0, z1 } } end

------------------------------------------------------------------------ the canvas binding

describe("psdl.core canvas", function()
  it("fills a triangle with the pixel count of its area and reads pixels back", function()
    local c = core.canvas_new(200, 100, 0x000000FF)
    assert.same({ 200, 100 }, { c:size() })
    -- legs 100 and 80: area 4000; top-left rule, pixel centres inside
    local n = c:triangles({ 10, 10, 110, 10, 10, 90 }, 0xFF0000FF)
    assert.is_true(math.abs(n - 4000) <= 100, n)
    local red = 0
    for y = 0, 99 do for x = 0, 199 do if c:get(x, y) == 0xFF0000FF then red = red + 1 end end end
    assert.equal(n, red)
    assert.equal(0xFF0000FF, c:get(20, 20))
    assert.equal(0x000000FF, c:get(150, 50))
    assert.equal(0, c:get(-1, 0))
    -- two triangles of a square: exactly its pixels, each painted once (translucent)
    local s = core.canvas_new(50, 50, 0x000000FF)
    local a = s:triangles({ 5, 5, 25, 5, 25, 25, 5, 5, 25, 25, 5, 25 }, 0xFFFFFF80)
    assert.equal(400, a)
    assert.equal(s:get(6, 6), s:get(24, 24))
    assert.equal(0x808080FF, s:get(15, 15))
  end)

  it("paints stripes and polygons, draws text and encodes PNG that decodes to the same pixels", function()
    local c = core.canvas_new(40, 20, 0xFFFFFFFF)
    local n = c:polygon({ 0, 0, 40, 0, 40, 20, 0, 20 }, 0x000000FF, { period = 4, duty = 0.5, dx = 1, dy = 0 })
    assert.equal(800, n)
    assert.equal(0x000000FF, c:get(0, 5))
    assert.equal(0x000000FF, c:get(1, 5))
    assert.equal(0xFFFFFFFF, c:get(2, 5))
    assert.equal(core.text_width("123", 1), c:text(1, 1, "123", 1, 0xFF0000FF))
    assert.equal(17, core.text_width(3, 1))
    local png = c:png()
    assert.equal("\137PNG\r\n\26\n", png:sub(1, 8))
    assert.equal(40, unpack(">I4", png, 17))
    assert.equal(20, unpack(">I4", png, 21))
    local d = assert(core.canvas_png_decode(png))
    assert.same({ 40, 20 }, { d:size() })
    for y = 0, 19 do for x = 0, 39 do assert.equal(c:get(x, y), d:get(x, y)) end end
    local nothing, msg, code = core.canvas_png_decode("GIF89a")
    assert.is_nil(nothing)
    assert.equal("bad_magic", code)
    assert.matches("not a PNG", msg)
    assert.equal("truncated", select(3, core.canvas_png_decode(png:sub(1, #png - 20))))
    c:close()
    assert.has_error(function() c:get(0, 0) end)
  end)

  it("refuses a PNG whose header claims more pixels than its data can hold, and chunks past the end", function()
    local function crc32(str)
      local c = 0xFFFFFFFF
      for i = 1, #str do
        c = c ~ str:byte(i)
        for _ = 1, 8 do c = (c >> 1) ~ (0xEDB88320 & -(c & 1)) end
      end
      return c ~ 0xFFFFFFFF
    end
    local function chunk(kind, data, claim)
      return string.pack(">I4", claim or #data) .. kind .. data .. string.pack(">I4", crc32(kind .. data))
    end
    local function header(w, h)
      return "\137PNG\r\n\26\n" .. chunk("IHDR", string.pack(">I4I4BBBBB", w, h, 8, 6, 0, 0, 0))
    end
    local idat = chunk("IDAT", "\x78\x9C\x63\x60\x00\x00\x00\x02\x00\x01")
    -- 8192 x 8192 RGBA (a 256 MiB canvas) from 69 bytes: refused before allocating
    local big = header(8192, 8192) .. idat .. chunk("IEND", "")
    assert.is_true(#big < 80)
    local nothing, msg, code = core.canvas_png_decode(big)
    assert.is_nil(nothing)
    assert.equal("bad_count", code)
    assert.matches("compressed data", msg)
    -- a text chunk running past the end of the data
    local _, msg2, code2 = core.canvas_png_decode(header(1, 1) .. idat .. chunk("tEXt", "k\0v", 5000))
    assert.equal("truncated", code2)
    assert.matches("runs past the end", msg2)
    -- a real image that compresses very well still decodes
    local u = core.canvas_new(1024, 1024, 0x000000FF)
    local d = assert(core.canvas_png_decode(u:png(9)))
    assert.same({ 1024, 1024 }, { d:size() })
  end)

  it("rejects bad arguments", function()
    assert.has_error(function() core.canvas_new(0, 10) end)
    assert.has_error(function() core.canvas_new(20000, 10) end)
    local c = core.canvas_new(4, 4)
    assert.has_error(function() c:triangles({ 1, 2, 3 }, 0xFF) end)
    assert.has_error(function() c:triangles({ 1, 2, 3, 4, 5, "x" }, 0xFF) end)
    assert.has_error(function() c:polygon({ 0, 0, 1, 0, 1, 1 }, 0xFF, { period = 0 }) end)
    assert.has_error(function() c:marker(1, 1, 1, "star", 0xFF) end)
    assert.has_error(function() c:png(12) end)
  end)
end)

------------------------------------------------------------------------ PNG maps of the fixtures

describe("psdl.render PNG", function()
  local doc = fixture("grid_n6.psdl")
  local res, canvas
  setup(function()
    res = assert(render.render(doc, { size = 1024 }))
    canvas = decode(res)
  end)

  it("writes a PNG of the requested size: signature, IHDR, decoded size", function()
    local b = res.bytes
    assert.equal("png", res.format)
    assert.equal("\137PNG\r\n\26\n", b:sub(1, 8))
    assert.equal("IHDR", b:sub(13, 16))
    assert.equal(res.width, unpack(">I4", b, 17))
    assert.equal(res.height, unpack(">I4", b, 21))
    assert.equal(1024, math.max(res.width, res.height))
    assert.same({ res.width, res.height }, { canvas:size() })
    assert.equal(121, res.rooms)
  end)

  it("paints a road's centre road grey, wherever each plain road is", function()
    local list = rooms_with(doc, { "road" }, 0x0c)
    assert.is_true(#list >= 10)
    for _, r in ipairs(list) do
      local road = first_attr(doc.rooms[r], "road")
      local n = #road.vertices // 4
      local k = (n // 2) * 4 -- a middle section: curb left and right
      local a, b = V(doc, road.vertices[k + 2]), V(doc, road.vertices[k + 3])
      if n == 2 then -- between the two sections
        local c, d = V(doc, road.vertices[6]), V(doc, road.vertices[7])
        a = { (a[1] + c[1]) / 2, 0, (a[3] + c[3]) / 2 }
        b = { (b[1] + d[1]) / 2, 0, (b[3] + d[3]) / 2 }
      end
      local color = pixel_at(canvas, res, (a[1] + b[1]) / 2, (a[3] + b[3]) / 2)
      assert.equal(hexc(COLOR.road), hexc(color), "room " .. r)
    end
  end)

  it("paints block ground, roofs by height, intersections and the background", function()
    -- blocks, except those beside a tunnel (its thick walls reach over the block's edge)
    local tunnels = {}
    for r, room in ipairs(doc.rooms) do
      if first_attr(room, "tunnel") then tunnels[#tunnels + 1] = { room_box(doc, r) } end
    end
    local blocks = {}
    for r, room in ipairs(doc.rooms) do
      if first_attr(room, "roof") then
        local x0, z0, x1, z1 = room_box(doc, r)
        local near = false
        for _, t in ipairs(tunnels) do
          if x0 - 3 < t[3] and t[1] < x1 + 3 and z0 - 3 < t[4] and t[2] < z1 + 3 then near = true end
        end
        blocks[#blocks + 1] = { room = r, near = near }
      end
    end
    assert.equal(25, #blocks)
    local by_height = {}
    local grounds = 0
    for _, b in ipairs(blocks) do
      local r = b.room
      local room = doc.rooms[r]
      local bx0, bz0, bx1, bz1 = room_box(doc, r)
      local roof = first_attr(room, "roof")
      local rx0, rz0, rx1, rz1 = math.huge, math.huge, -math.huge, -math.huge
      for _, vi in ipairs(roof.vertices) do
        local v = V(doc, vi)
        rx0, rx1 = math.min(rx0, v[1]), math.max(rx1, v[1])
        rz0, rz1 = math.min(rz0, v[3]), math.max(rz1, v[3])
      end
      -- between the block's edge and the building: ground
      if not b.near then
        assert.equal(hexc(COLOR.ground), hexc((pixel_at(canvas, res, (bx0 + rx0) / 2, (bz0 + bz1) / 2))), "block " .. r)
        grounds = grounds + 1
      end
      -- the roof's middle: one of the roof shades
      local c = pixel_at(canvas, res, (rx0 + rx1) / 2, (rz0 + rz1) / 2)
      local level
      for lv = 0, render.ROOF_LEVELS - 1 do if render.roof_color(lv) == c then level = lv end end
      assert.is_not_nil(level, hexc(c))
      by_height[#by_height + 1] = { h = doc.heights[roof.height], level = level }
    end
    assert.is_true(grounds >= 10, grounds)
    table.sort(by_height, function(a, b) return a.h < b.h end)
    assert.equal(0, by_height[1].level)
    assert.equal(render.ROOF_LEVELS - 1, by_height[#by_height].level)
    for i = 2, #by_height do assert.is_true(by_height[i].level >= by_height[i - 1].level) end
    -- lower roofs are lighter
    local function lum(c) return ((c >> 24) & 255) + ((c >> 16) & 255) + ((c >> 8) & 255) end
    assert.is_true(lum(render.roof_color(0)) > lum(render.roof_color(render.ROOF_LEVELS - 1)))

    local inter = rooms_with(doc, { "road_fan", "sidewalk_strip", "sidewalk_strip", "sidewalk_strip",
      "sidewalk_strip", "crosswalk", "crosswalk", "crosswalk", "crosswalk" }, 0x14)
    assert.is_true(#inter >= 10)
    for _, r in ipairs(inter) do
      local x0, z0, x1, z1 = room_box(doc, r)
      assert.equal(hexc(COLOR.intersection), hexc((pixel_at(canvas, res, (x0 + x1) / 2, (z0 + z1) / 2))), "room " .. r)
    end
    assert.equal(hexc(render.colors.background), hexc(canvas:get(1, 1)))
  end)

  it("hatches tunnels and stripes crosswalks", function()
    local tunnels = rooms_with(doc, { "tunnel", "road" }, 0x0c)
    assert.is_true(#tunnels >= 2)
    for _, r in ipairs(tunnels) do
      local x0, z0, x1, z1 = room_box(doc, r)
      local hist = box_colors(canvas, res, x0, z0, x1, z1, 4)
      assert.is_true((hist[COLOR.tunnel] or 0) > 20, "room " .. r)
      assert.is_true((hist[COLOR.road] or 0) > 20, "room " .. r)
    end
    -- a crosswalk: white stripes with something else between them
    local res2 = assert(render.render(doc, { size = 2048, perimeters = false }))
    local c2 = decode(res2)
    local r = rooms_with(doc, { "road_fan", "sidewalk_strip", "sidewalk_strip", "sidewalk_strip", "sidewalk_strip",
      "crosswalk", "crosswalk", "crosswalk", "crosswalk" }, 0x14)[1]
    local cw = first_attr(doc.rooms[r], "crosswalk")
    local p = {}
    for i = 1, 4 do p[i] = V(doc, cw.vertices[i]) end
    local cx = (p[1][1] + p[2][1] + p[3][1] + p[4][1]) / 4
    local cz = (p[1][3] + p[2][3] + p[3][3] + p[4][3]) / 4
    local ax, ay = res2.pixel(cx, cz)
    local white, other = 0, 0
    for dy = -4, 4 do
      for dx = -4, 4 do
        if c2:get(math.floor(ax) + dx, math.floor(ay) + dy) == COLOR.crosswalk then white = white + 1 else other = other + 1 end
      end
    end
    assert.is_true(white > 10 and other > 10, white .. " / " .. other)
  end)

  it("draws the legend band under the map, and leaves it out with legend = false", function()
    assert.is_true(res.legend_height > 0)
    assert.equal(hexc(render.colors.legend), hexc(canvas:get(res.width - 2, res.height - 2)))
    local bare = assert(render.render(doc, { size = 1024, legend = false }))
    assert.equal(0, bare.legend_height)
    assert.is_true(bare.height < res.height or bare.width > res.width)
    local bc = decode(bare)
    assert.equal(hexc(render.colors.background), hexc(bc:get(bare.width - 2, bare.height - 2)))
  end)

  it("draws room numbers at the rooms' centres", function()
    local with = decode(assert(render.render(doc, { size = 1024, rooms = true })))
    local differ, dark = 0, 0
    for r = 1, #doc.rooms do
      local x, z = render.room_center(doc, doc.rooms[r])
      local px, py = res.pixel(x, z)
      local changed = false
      for dy = -3, 3 do
        for dx = -6, 6 do
          local a, b = canvas:get(math.floor(px) + dx, math.floor(py) + dy), with:get(math.floor(px) + dx, math.floor(py) + dy)
          if a ~= b then changed = true end
          if b == render.colors.text then dark = dark + 1 end
        end
      end
      if changed then differ = differ + 1 end
    end
    assert.equal(#doc.rooms, differ)
    assert.is_true(dark > #doc.rooms * 5)
  end)

  it("renders every fixture to PNG and SVG", function()
    for _, name in ipairs(H.fixture_names()) do
      local d = fixture(name)
      local p = assert(render.render(d, { size = 400, rooms = true, problems = true }))
      local c = decode(p)
      assert.same({ p.width, p.height }, { c:size() }, name)
      assert.equal(400, math.max(p.width, p.height), name)
      assert.is_true(p.triangles > 0, name)
      local s = assert(render.render(d, { size = 400, format = "svg", rooms = true, problems = true }))
      local parser = lxp.new({})
      assert.truthy(parser:parse(s.bytes), name)
      assert.truthy(parser:parse(), name)
      parser:close()
    end
  end)

  it("renders corrupt geometry: huge, infinite and NaN coordinates, mutated files", function()
    for _, big in ipairs { 1e6, 3e38, -3e38, 0 / 0, math.huge } do
      local d = fresh("grid_n2.psdl")
      d.vertices[5] = { big, 0, -big }
      d.vertices[9] = { 1, big, 2 }
      for _, format in ipairs { "png", "svg" } do
        local r = assert(render.render(d, { size = 200, rooms = true, problems = true, format = format }))
        assert.equal(200, math.max(r.width, r.height))
        if format == "svg" then
          local parser = lxp.new({})
          assert.truthy(parser:parse(r.bytes))
          assert.truthy(parser:parse())
          parser:close()
          assert.is_nil(r.bytes:find("[^%a]%-?nan[^%a]"))
          assert.is_nil(r.bytes:find("[^%a]%-?inf[^%a]"))
        end
      end
    end
    local base = H.read_bytes(H.fixtures_dir .. "/grid_n2.psdl")
    local seed, rendered = 12345, 0
    local function rnd(n)
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    for i = 1, 150 do
      local b = { base:byte(1, -1) }
      for _ = 1, 1 + rnd(5) do b[1 + rnd(#b)] = rnd(256) end
      local chars = {}
      for k = 1, #b do chars[k] = string.char(b[k]) end
      local d = psdl.decode(table.concat(chars))
      if d then
        local r = assert(render.render(d, { size = 96, rooms = true, problems = true,
          format = i % 2 == 0 and "svg" or "png" }))
        assert.is_true(#r.bytes > 0)
        rendered = rendered + 1
      end
    end
    assert.is_true(rendered > 50, rendered)
  end)

  it("gives the same bytes for the same document", function()
    local a = assert(render.render(doc, { size = 300, rooms = true, problems = true }))
    local b = assert(render.render(doc, { size = 300, rooms = true, problems = true }))
    assert.equal(a.bytes, b.bytes)
  end)
end)

------------------------------------------------------------------------ classes and geometry from export

describe("psdl.render classes", function()
  it("classifies exactly the triangles the export module draws", function()
    for _, name in ipairs { "grid_n3.psdl", "grid_n6.psdl" } do
      local doc = fixture(name)
      local scene = render.scene(doc)
      local by = export.build(doc).stats.by_type
      assert.equal(by.roof, scene.counts.roof, name)
      assert.equal(by.crosswalk, scene.counts.crosswalk, name)
      assert.equal(by.walkway, scene.counts.walkway, name)
      assert.equal(by.road_fan, scene.counts.intersection, name) -- road fans only in intersections here
      assert.equal(by.fan, scene.counts.ground, name)
      assert.equal(by.facade, scene.counts.facade, name)
      -- road halves and sidewalks: export's road and divided-road triangles less the curb
      -- faces (edge-on from above) and dividers
      assert.is_true(scene.counts.road > 0 and scene.counts.sidewalk > 0 and scene.counts.divider > 0, name)
      -- every facade is one line
      local facades = 0
      for _, room in ipairs(doc.rooms) do
        for _, a in ipairs(room.attributes) do if a.type == "facade" then facades = facades + 1 end end
      end
      assert.equal(facades * 4, #scene.facades, name)
    end
  end)

  it("follows the room flags: fans in road, intersection and other rooms", function()
    local doc = hand_doc {
      { flags = 0x04, perimeter = square(0, 0, 10, 10), attributes = { { type = "texture", value = 4 }, square_fan(0, 0, 10, 10) } },
      { flags = 0x08, perimeter = square(10, 0, 20, 10), attributes = { { type = "texture", value = 1 }, square_fan(10, 0, 20, 10) } },
      { flags = 0x14, perimeter = square(20, 0, 30, 10), attributes = { { type = "texture", value = 1 }, square_fan(20, 0, 30, 10, 0, "road_fan") } },
      -- untextured strips and fans are not drawn (as in the game); roofs are
      { flags = 0x04, perimeter = square(30, 0, 40, 10), attributes = { square_fan(30, 0, 40, 10), { type = "roof", height = 2,
        points = { { 32, 0, 2 }, { 38, 0, 2 }, { 38, 0, 8 }, { 32, 0, 8 } } } } },
    }
    local res = assert(render.render(doc, { size = 400, legend = false, perimeters = false }))
    local c = decode(res)
    assert.equal(hexc(COLOR.ground), hexc((pixel_at(c, res, 5, 5))))
    assert.equal(hexc(COLOR.road), hexc((pixel_at(c, res, 15, 5))))
    assert.equal(hexc(COLOR.intersection), hexc((pixel_at(c, res, 25, 5))))
    assert.equal(hexc(render.colors.background), hexc((pixel_at(c, res, 31, 1))))
    assert.equal(hexc(render.roof_color(render.ROOF_LEVELS // 2)), hexc((pixel_at(c, res, 35, 5))))
    -- x to the right, z up: a point further north (larger z) is higher in the image
    local _, y_low = res.pixel(5, 1)
    local _, y_high = res.pixel(5, 9)
    assert.is_true(y_high < y_low)
    local x_left = res.pixel(1, 5)
    local x_right = res.pixel(9, 5)
    assert.is_true(x_right > x_left)
    -- the long side (x, 40 m) fills the width, with a margin
    assert.equal(400, res.width)
    assert.is_true(res.height < 200)
  end)

  it("puts higher rooms over lower ones (a bridge over a road) and tints warp rooms", function()
    local doc = hand_doc {
      -- a road along x at y 0, and a bridge across it at y 8 (warp room)
      { flags = 0x08, perimeter = square(0, 10, 60, 20), attributes = { { type = "texture", value = 1 }, square_fan(0, 10, 60, 20) } },
      { flags = 0x04, perimeter = square(25, 0, 35, 30), attributes = { { type = "texture", value = 4 }, square_fan(25, 0, 35, 30, 8) } },
      { flags = 0x48, perimeter = square(40, 0, 50, 30), attributes = { { type = "texture", value = 1 }, square_fan(40, 0, 50, 30, 8) } },
      { flags = 0x06, perimeter = square(0, 40, 20, 60), attributes = { { type = "texture", value = 1 }, square_fan(0, 40, 20, 60) } },
    }
    local res = assert(render.render(doc, { size = 600, legend = false, perimeters = false }))
    local c = decode(res)
    -- the green block 8 m up covers the road where they cross, in whatever room order
    assert.equal(hexc(COLOR.ground), hexc((pixel_at(c, res, 30, 15))))
    assert.equal(hexc(COLOR.road), hexc((pixel_at(c, res, 10, 15))))
    -- the warp room: road tinted blue
    local w = pixel_at(c, res, 45, 15)
    assert.are_not.equal(COLOR.road, w)
    assert.is_true(((w >> 8) & 255) > ((w >> 24) & 255) + 20, hexc(w))
    -- the subterranean room (its fan without the road flag is ground) is hatched
    local hist = box_colors(c, res, 0, 40, 20, 60, 2)
    assert.is_true((hist[COLOR.tunnel] or 0) > 50 and (hist[COLOR.ground] or 0) > 50)
    assert.truthy(res.counts.warp and res.counts.tunnel)
    -- rooms 1 and 2 share their centre: the long road's number moves along the road
    local sres = assert(render.render(doc, { size = 600, format = "svg", rooms = true, legend = false }))
    local at = {}
    for x, y, label in sres.bytes:gmatch('<text class="room%-id" x="([%d.]+)" y="([%d.]+)"[^>]*>(%d+)</text>') do
      at[tonumber(label)] = { tonumber(x), tonumber(y) }
    end
    local cx, cy = sres.pixel(30, 15)
    assert.is_true(math.abs(at[2][1] - cx) < 0.01 and math.abs(at[2][2] - cy) < 0.01)
    assert.is_true(math.abs(at[1][1] - at[2][1]) > 20 and math.abs(at[1][2] - at[2][2]) < 0.01)
    local x0 = sres.pixel(0, 15)
    local x60 = sres.pixel(60, 15)
    assert.is_true(at[1][1] > x0 and at[1][1] < x60) -- still on the road
  end)
end)

------------------------------------------------------------------------ problems

describe("psdl.render problems", function()
  it("marks an error at the vertex it points to and a room problem at the room's centre", function()
    local doc = fresh("grid_n2.psdl")
    local r = rooms_with(doc, { "divided_road" }, 0x0c)[1]
    local attr = first_attr(doc.rooms[r], "divided_road")
    local good = attr.vertices[1]
    attr.vertices[2] = #doc.vertices + 50 -- out of range: an error at ...vertices[2]
    local ok, problems = psdl.validate(doc)
    assert.is_false(ok)
    local res = assert(render.render(doc, { size = 800, problems = true, legend = false }))
    assert.is_true(res.problems.errors >= 1)
    assert.equal(res.problems.errors + res.problems.warnings, #problems)
    local c = decode(res)
    local v = V(doc, good)
    assert.equal(hexc(render.colors.error), hexc((pixel_at(c, res, v[1], v[3]))))

    -- a problem list given by the caller: a room problem at the room's centre
    local clean = fixture("grid_n2.psdl")
    local res2 = assert(render.render(clean, { size = 800, legend = false,
      problems = { { severity = "warning", rule = "test", path = "rooms[5]", room = 5, message = "look here" } } }))
    assert.same({ errors = 0, warnings = 1, placed = 1, unplaced = 0 }, res2.problems)
    local c2 = decode(res2)
    local x, z = render.room_center(clean, clean.rooms[5])
    assert.equal(hexc(render.colors.warning), hexc((pixel_at(c2, res2, x, z))))
    -- one without a place is counted, not drawn
    local res3 = assert(render.render(clean, { size = 300, format = "svg",
      problems = { { severity = "error", rule = "magic", path = "", message = "bad magic" } } }))
    assert.same({ errors = 1, warnings = 0, placed = 0, unplaced = 1 }, res3.problems)
    assert.matches("1 without a place", res3.bytes)
  end)
end)

------------------------------------------------------------------------ SVG

describe("psdl.render SVG", function()
  it("is XML with one group per class, rooms as data-room, ids as text, problems with titles", function()
    local doc = fixture("grid_n6.psdl")
    local res = assert(render.render(doc, { format = "svg", size = 1000, rooms = true, problems = true }))
    assert.equal("svg", res.format)
    local groups, texts, room_refs, titles, stack = {}, {}, {}, 0, {}
    local root
    local p = lxp.new {
      StartElement = function(_, name, attrs)
        if not root then root = { name = name, attrs = attrs } end
        stack[#stack + 1] = name
        if name == "g" and attrs.class then groups[#groups + 1] = attrs.class end
        if attrs["data-room"] then room_refs[tonumber(attrs["data-room"])] = true end
        if name == "title" and stack[#stack - 1] ~= "svg" then titles = titles + 1 end
      end,
      EndElement = function() stack[#stack] = nil end,
      CharacterData = function(parser, text)
        if stack[#stack] == "text" then texts[#texts + 1] = text end
      end,
    }
    assert.truthy(p:parse(res.bytes))
    assert.truthy(p:parse())
    p:close()
    assert.equal("svg", root.name)
    assert.equal(tostring(res.width), root.attrs.width)
    assert.equal(tostring(res.height), root.attrs.height)
    local count = {}
    for _, g in ipairs(groups) do count[g] = (count[g] or 0) + 1 end
    for _, class in ipairs { "ground", "road", "intersection", "walkway", "sidewalk", "crosswalk", "divider", "wall",
      "roof", "tunnel", "facade", "perimeter", "room-ids", "problems", "legend" } do
      assert.equal(1, count[class], class)
    end
    -- every class with triangles has its group, in drawing order
    local pos = {}
    for i, g in ipairs(groups) do pos[g] = i end
    for i = 2, #render.classes do
      local a, b = render.classes[i - 1].name, render.classes[i].name
      if pos[a] and pos[b] then assert.is_true(pos[a] < pos[b], a .. " before " .. b) end
    end
    for r in pairs(room_refs) do assert.is_not_nil(doc.rooms[r]) end
    local ids = {}
    for _, t in ipairs(texts) do ids[t] = true end
    for r = 1, #doc.rooms do assert.is_true(ids[tostring(r)], "room " .. r) end
    assert.is_true(titles > 10) -- the warnings of the fixture, as tooltips
  end)
end)

------------------------------------------------------------------------ files, options, failures

describe("psdl.render files and options", function()
  it("writes atomically where asked, picks the format from the extension, fails cleanly", function()
    local doc = fixture("grid_n2.psdl")
    local dir = H.tmpdir(finally)
    local png, svg = dir .. "/map.png", dir .. "/map.svg"
    local a = assert(render.render(doc, { output = png, size = 256 }))
    assert.equal(png, a.output)
    assert.equal(a.bytes, H.read_bytes(png))
    local b = assert(render.render(doc, { output = svg, size = 256 }))
    assert.equal("svg", b.format)
    assert.matches("^<%?xml", H.read_bytes(svg))
    -- through the facade and the document method
    assert.equal("png", psdl.render(doc, { size = 256 }).format)
    assert.equal("svg", psdl.document(doc):render({ size = 256, format = "svg" }).format)

    -- a missing folder, a file in the way, a directory as target: "io", nothing left behind
    for _, bad in ipairs { dir .. "/nope/map.png", png .. "/map.png", dir } do
      local r, msg, code = render.render(doc, { output = bad, size = 256, format = "png" })
      assert.is_nil(r)
      assert.equal("io", code)
      assert.matches("psdl: io: ", msg)
    end
    local names = {}
    for name in lfs.dir(dir) do if name ~= "." and name ~= ".." then names[#names + 1] = name end end
    table.sort(names)
    assert.same({ "map.png", "map.svg" }, names)
    assert.equal(a.bytes, H.read_bytes(png)) -- untouched
    -- unknown format
    assert.error_matches(function() render.render(doc, { output = dir .. "/map.gif" }) end,
      "bad argument #2 to 'render' %(.*unknown image format")
    assert.is_false(exists(dir .. "/map.gif"))
  end)

  it("raises on misuse", function()
    local doc = fixture("grid_n2.psdl")
    assert.has_error(function() render.render(nil) end)
    assert.has_error(function() render.render(doc, { sise = 100 }) end)
    assert.has_error(function() render.render(doc, { size = 10 }) end)
    assert.has_error(function() render.render(doc, { size = 100.5 }) end)
    assert.has_error(function() render.render(doc, { supersample = 9 }) end)
    assert.has_error(function() render.render(doc, { problems = "yes" }) end)
    assert.has_error(function() render.render(doc, { compression = 10 }) end)
  end)

  it("fits the long side, landscape or portrait, and renders empty documents", function()
    local wide = hand_doc { { flags = 4, perimeter = square(0, 0, 200, 50),
      attributes = { { type = "texture", value = 4 }, square_fan(0, 0, 200, 50) } } }
    local tall = hand_doc { { flags = 4, perimeter = square(0, 0, 50, 200),
      attributes = { { type = "texture", value = 4 }, square_fan(0, 0, 50, 200) } } }
    for _, size in ipairs { 256, 700, 2048 } do
      local w = assert(render.render(wide, { size = size }))
      assert.equal(size, w.width)
      assert.is_true(w.height < size)
      local t = assert(render.render(tall, { size = size }))
      assert.equal(size, t.height)
      assert.is_true(t.width < size)
      -- the map is inside the image, above the legend
      local x0, y0 = t.pixel(0, 200)
      local x1, y1 = t.pixel(50, 0)
      assert.is_true(x0 >= 0 and y0 >= 0 and x1 <= t.width and y1 <= t.height - t.legend_height)
    end
    local empty = hand_doc {}
    local e = assert(render.render(empty, { size = 128 }))
    assert.equal(128, math.max(e.width, e.height))
    assert.equal(0, e.rooms)
  end)
end)

------------------------------------------------------------------------ the command

describe("psdl render", function()
  it("writes PNG and SVG maps and reports what it drew", function()
    local png, svg = H.tmpname(".png"), H.tmpname(".svg")
    finally(function() os.remove(png); os.remove(svg) end)
    local code, out, err = run("render", H.fixtures_dir .. "/grid_n3.psdl", "-o", png, "--size", "300", "--rooms",
      "--problems")
    assert.equal(0, code, err)
    assert.matches("300 px", out)
    assert.matches("25 rooms", out)
    assert.matches("warnings marked", out)
    local c = assert(core.canvas_png_decode(H.read_bytes(png)))
    local w, h = c:size()
    assert.equal(300, math.max(w, h))
    code, out, err = run("render", H.fixtures_dir .. "/grid_n3.psdl", "-o", svg, "--no-legend", "--no-outlines", "-q")
    assert.equal(0, code, err)
    assert.equal("", out)
    local text = H.read_bytes(svg)
    assert.matches("<svg ", text)
    assert.is_nil(text:find('class="legend"', 1, true))
    assert.is_nil(text:find('class="perimeter"', 1, true))
  end)

  it("fails with the usual exit codes and leaves no file", function()
    local out = H.tmpname(".png")
    local code, _, err = run("render", H.fixtures_dir .. "/grid_n2.psdl", "-o", "/nonexistent-dir/x.png")
    assert.equal(3, code)
    assert.matches("psdl render: ", err)
    code, _, err = run("render", H.fixtures_dir .. "/grid_n2.psdl", "-o", (out:gsub("%.png$", ".gif")))
    assert.equal(1, code)
    assert.matches("unknown image format", err)
    code, _, err = run("render", H.fixtures_dir .. "/grid_n2.psdl", "-o", out, "--size", "12")
    assert.equal(1, code)
    assert.matches("%-%-size", err)
    code = run("render", "README.md", "-o", out)
    assert.equal(2, code)
    code = run("render", "/nonexistent.psdl", "-o", out)
    assert.equal(3, code)
    assert.is_false(exists(out))
    code = run("render", H.fixtures_dir .. "/grid_n2.psdl")
    assert.equal(1, code) -- -o is required
  end)
end)
