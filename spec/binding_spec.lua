-- The Lua binding (src/lpsdl.c, psdl.core) and the psdl façade (lua/psdl/init.lua):
-- table <-> struct conversion, index translation, error channels, atomic writes.
local psdl = require "psdl"
local core = require "psdl.core"
local lfs = require "lfs"

local pack, unpack = string.pack, string.unpack
local FIXTURES = "spec/fixtures"

local H = require "helper"
local slurp, spit = H.read_bytes, H.write_bytes

local function fixture_names()
  local names = {}
  for name in lfs.dir(FIXTURES) do
    if name:match("%.psdl$") then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

-- A copy of doc without the `last` fields decode adds to every attribute.
local function strip_last(doc)
  for _, room in ipairs(doc.rooms) do
    for _, a in ipairs(room.attributes) do a.last = nil end
  end
  return doc
end

local deep_copy = H.deep_copy

-- A small document built by hand. Every float is exact in single precision.
local function small_doc()
  return {
    magic = "PSD0",
    target_size = 2,
    vertices = { {0, -0.25, 0}, {0, 0, 0}, {10, 0, 0}, {10, 0, 10}, {0, 0, 10}, {5, 0, 5} },
    heights = { 0, 5.5 },
    textures = { "r4_f", "swalk_f", false, "" },
    first_road_room = 0,
    room0 = { flags = 0, prop_rule = 0xCD },
    rooms = {
      {
        flags = 0x08, prop_rule = 3,
        perimeter = {
          { vertex = 2, neighbour = 0 }, { vertex = 3, neighbour = 0 },
          { vertex = 4, neighbour = 0 }, { vertex = 5, neighbour = 0 },
        },
        attributes = {
          { type = "texture", value = 1 },
          { type = "road", vertices = { 2, 2, 3, 3, 5, 5, 4, 4 } },
          { type = "fan", vertices = { 6, 2, 3, 4, 5 } },
        },
      },
    },
    bounds = { min = {0, -0.25, 0}, max = {10, 0, 10}, center = {5, -0.125, 5}, radius = 7.5 },
    roads = {
      {
        flags = 0x40, lanes_left = { 0.5 }, lanes_right = { 0.25, 0.75 }, stop_lights = { 0, 1 },
        start_crossroads = { 2, 2, 3, 3 }, end_crossroads = { 5, 5, 4, 4 }, rooms = { 1, -1 },
      },
    },
  }
end

-- The bytes small_doc() must encode to, written out with string.pack (0-based refs).
local function small_bytes()
  local out = {}
  local function put(fmt, ...) out[#out + 1] = pack(fmt, ...) end
  put("<c4I4I4", "PSD0", 2, 6)
  for _, v in ipairs{ {0, -0.25, 0}, {0, 0, 0}, {10, 0, 0}, {10, 0, 10}, {0, 0, 10}, {5, 0, 5} } do
    put("<fff", v[1], v[2], v[3])
  end
  put("<I4ff", 2, 0, 5.5)
  put("<I4", 5)
  put("<s1", "r4_f\0"); put("<s1", "swalk_f\0"); put("<B", 0); put("<s1", "\0")
  put("<I4I4", 2, 0)                        -- room count incl. room 0, first_road_room
  local words = { 0x50, 1,                  -- texture value 1 (subtype 0, data 1)
                  0x02, 1, 1, 2, 2, 4, 4, 3, 3, -- road, 2 sections inline
                  0x80 + 0x33, 5, 1, 2, 3, 4 }  -- LAST | fan, 3 triangles
  put("<I4I4", 4, #words)
  for v = 1, 4 do put("<I2I2", v, 0) end
  for _, w in ipairs(words) do put("<I2", w) end
  put("<BBBB", 0, 0x08, 0xCD, 3)            -- flags room 0, 1; prop rules room 0, 1
  put("<ffffffffff", 0, -0.25, 0, 10, 0, 10, 5, -0.125, 5, 7.5)
  put("<I4", 1)
  put("<I4BBfffBB", 0x40, 1, 2, 0.5, 0.25, 0.75, 0, 1)
  put("<I2I2I2I2I2I2I2I2", 1, 1, 2, 2, 4, 4, 3, 3)
  put("<Bi2i2", 2, 1, -1)
  return table.concat(out)
end

describe("psdl.core", function()
  it("has a name, a version and the status and type names", function()
    assert.equal("psdl.core", core._NAME)
    assert.matches("^%d+%.%d+%.%d+$", core._VERSION)
    assert.equal(core._VERSION, psdl._VERSION)
    assert.equal("ok", core.status_names[1])
    assert.equal("truncated", core.status_names[2])
    assert.is_true(#core.attribute_types == 15)
  end)

  it("exposes the format's limits as psdl.limits, and the modules that check them use them", function()
    assert.equal(core.limits, psdl.limits)
    assert.same({ vertex_budget = 65024, perimeter = 255, texture_value = 2047, texture_rendered = 511,
                  texture_stock = 767, divider_texture = 255, lane_values = 255, prop_rule = 255 }, psdl.limits)
    assert.equal(psdl.limits.vertex_budget, require("psdl.builder").VERTEX_BUDGET)
    assert.equal(psdl.limits.divider_texture, require("psdl.retexture").MAX_DIVIDER)
    assert.equal(psdl.limits.texture_rendered, require("psdl.cli.info").limits().texture_slots_rendered)
  end)
end)

describe("decode then encode", function()
  for _, name in ipairs(fixture_names()) do
    it("gives back the exact bytes of " .. name, function()
      local bytes = slurp(FIXTURES .. "/" .. name)
      local doc, msg = psdl.decode(bytes)
      assert(doc, msg)
      local again = psdl.encode(doc)
      assert.equal(#bytes, #again)
      assert.is_true(bytes == again)
    end)
  end

  it("leaves the garbage collector as it found it", function()
    local bytes = slurp(FIXTURES .. "/grid_n2.psdl")
    assert.is_true(collectgarbage("isrunning"))
    assert.truthy(psdl.decode(bytes))
    assert.is_true(collectgarbage("isrunning"))
    collectgarbage("stop")
    assert.truthy(psdl.decode(bytes))
    local running = collectgarbage("isrunning")
    collectgarbage("restart")
    assert.is_false(running)
  end)

  it("survives a JSON-style copy where integers became floats", function()
    local bytes = slurp(FIXTURES .. "/grid_n2.psdl")
    local doc = assert(psdl.decode(bytes))
    local function floatify(t)
      for k, v in pairs(t) do
        if math.type(v) == "integer" then t[k] = v + 0.0
        elseif type(v) == "table" then floatify(v) end
      end
    end
    floatify(doc)
    assert.is_true(psdl.encode(doc) == bytes)
  end)
end)

describe("index conversion", function()
  it("turns file indices into 1-based Lua references (grid_n2, first room)", function()
    local bytes = slurp(FIXTURES .. "/grid_n2.psdl")
    local doc = assert(psdl.decode(bytes))
    -- walk the file by hand to room 1
    local magic, target, nv, pos = unpack("<c4I4I4", bytes)
    assert.equal(doc.magic, magic)
    assert.equal(doc.target_size, target)
    assert.equal(nv, #doc.vertices)
    local x, y, z = unpack("<fff", bytes, pos)
    assert.same({x, y, z}, doc.vertices[1])
    pos = pos + 12 * nv
    local nh; nh, pos = unpack("<I4", bytes, pos)
    assert.equal(nh, #doc.heights)
    pos = pos + 4 * nh
    local nt; nt, pos = unpack("<I4", bytes, pos)
    assert.equal(nt - 1, #doc.textures)
    for v = 1, nt - 1 do
      local name; name, pos = unpack("<s1", bytes, pos)
      assert.equal(name ~= "" and name:sub(1, -2) or false, doc.textures[v])
    end
    local nr, first; nr, first, pos = unpack("<I4I4", bytes, pos)
    assert.equal(nr - 1, #doc.rooms)
    assert.equal(first, doc.first_road_room)
    local np, nw; np, nw, pos = unpack("<I4I4", bytes, pos)
    local room = doc.rooms[1]
    assert.equal(np, #room.perimeter)
    for i = 1, np do
      local v, n; v, n, pos = unpack("<I2I2", bytes, pos)
      assert.equal(v + 1, room.perimeter[i].vertex)
      assert.equal(n, room.perimeter[i].neighbour)
    end
    assert.is_true(nw > 0)
  end)

  it("encodes a hand-built document to the expected bytes", function()
    assert.is_true(psdl.encode(small_doc()) == small_bytes())
  end)

  it("decodes those bytes back to the same table (plus `last`)", function()
    local doc = assert(psdl.decode(small_bytes()))
    local attrs = doc.rooms[1].attributes
    assert.same({ false, false, true }, { attrs[1].last, attrs[2].last, attrs[3].last })
    assert.same(small_doc(), strip_last(doc))
  end)

  it("keeps PSD1 material bytes and a missing tail", function()
    local doc = small_doc()
    doc.magic, doc.materials, doc.bounds, doc.roads = "PSD1", { 3, 0, 0, 7 }, nil, nil
    local bytes = psdl.encode(doc)
    -- names carry a material byte; empty slots do not; the file ends after the room bytes
    assert.equal(#small_bytes() + 3 - (40 + 4) - (25 + 3 * 4 + 2 * 2), #bytes)
    local back = assert(psdl.decode(bytes))
    assert.equal("PSD1", back.magic)
    assert.same({ 3, 0, 0, 7 }, back.materials)
    assert.is_nil(back.bounds)
    assert.is_nil(back.roads)
    assert.same(doc, strip_last(back))
  end)

  it("fills in defaults and computes the bounds when they are missing", function()
    local doc = small_doc()
    doc.magic, doc.target_size, doc.first_road_room, doc.room0, doc.bounds = nil, nil, nil, nil, nil
    doc.heights, doc.roads = nil, nil
    local back = assert(psdl.decode(psdl.encode(doc)))
    assert.equal("PSD0", back.magic)
    assert.equal(2, back.target_size)
    assert.same({ flags = 0, prop_rule = 0xCD }, back.room0)
    assert.same({ min = {0, -0.25, 0}, max = {10, 0, 10}, center = {5, -0.125, 5},
                  radius = back.bounds.radius }, back.bounds)
    assert.near(math.sqrt(50 + 0.125 ^ 2), back.bounds.radius, 1e-5)
    assert.same({}, back.roads)
  end)
end)

describe("attribute model", function()
  -- Every attribute type and form field, with explicit `last` so the decoded table matches.
  local function every_type()
    local list = {
      { type = "texture", value = 300 },
      { type = "texture", value = 0x1FF, subtype = 1, data = 0x1FF },   -- non-canonical
      { type = "road", vertices = { 1, 2, 3, 4 }, counted = true },
      { type = "road", vertices = { 1, 2, 3, 4 }, header_high = 1 },
      { type = "sidewalk_strip", vertices = { 1, 2, 3, 4 } },
      { type = "sidewalk_strip", cap = "start", vertices = { 3, 4 } },
      { type = "sidewalk_strip", cap = "end", vertices = { 5, 6 } },
      { type = "walkway", vertices = { 1, 2, 3, 4, 5, 6 } },
      { type = "sliver", top = 2, density = 1, vertices = { 1, 2 } },
      { type = "sliver", top = 2, density = 1, vertices = { 1, 2 }, subtype = 5 },
      { type = "crosswalk", vertices = { 1, 2, 3, 4 } },
      { type = "crosswalk", vertices = { 1, 2, 3, 4 }, subtype = 0, count = 9 },
      { type = "road_fan", vertices = { 6, 2, 3, 4 } },
      { type = "fan", vertices = { 6, 2, 3, 4, 5, 2, 3, 4, 5, 2 } },
      { type = "facade_bound", light = 64, top = 2, vertices = { 2, 3 } },
      { type = "divided_road", divider_type = 2, cap_start = true, cap_end = false,
        divider_texture = 3, divider_value = 0.5, vertices = { 1, 2, 3, 4, 5, 6 } },
      { type = "tunnel", flags = 0x103, height1 = 5.5, height2 = 7 },
      { type = "tunnel", flags = 3, height1 = 1.5 },
      { type = "tunnel", words = { 1, 2, 3, 4 } },
      { type = "junction_tunnel", flags = 8, height1 = 5.5, height2 = 0, ceiling_start = 2,
        wall_mask = 0x8000000F, mask1 = 0x10000, mask2 = 0 },
      { type = "facade", bottom = 1, top = 2, u_repeat = 3, v_repeat = 65535, vertices = { 2, 3 } },
      { type = "roof", height = 2, vertices = { 6, 2, 3, 4 } },
      { type = "unknown", words = { 0x68, 1, 2 } },
    }
    for i, a in ipairs(list) do a.last = (i == #list - 1) end
    local doc = small_doc()
    doc.rooms[1].attributes = list
    return doc
  end

  it("round-trips every type and form field", function()
    local doc = every_type()
    local bytes = psdl.encode(doc)
    local back = assert(psdl.decode(bytes))
    assert.same(doc, back)
    assert.is_true(psdl.encode(back) == bytes)
  end)

  it("stores tunnel heights as 8.8 fixed point and junction fields as words", function()
    local doc = small_doc()
    doc.rooms[1].attributes = {
      { type = "junction_tunnel", flags = 8, height1 = 5.5, height2 = 1, ceiling_start = 2,
        wall_mask = 0x8000000F, mask1 = 0x10000, mask2 = 0x12345678 },
      { type = "tunnel", flags = 0x103, height1 = 5.5, height2 = 7 },
    }
    -- the same room written as raw words (an unknown attribute is copied verbatim)
    local raw = small_doc()
    raw.rooms[1].attributes = { { type = "unknown", words = {
      0x48, 10, 8, 1408, 256, 1, 0x000F, 0x8000, 0x0000, 0x0001, 0x5678, 0x1234, -- junction
      0x80 + 0x4B, 0x103, 1408, 1792,                                             -- strip, LAST
    } } }
    assert.is_true(psdl.encode(doc) == psdl.encode(raw))
    local back = strip_last(assert(psdl.decode(psdl.encode(raw))))
    assert.same(doc.rooms[1].attributes, back.rooms[1].attributes)
  end)

  it("sets LAST on the final attribute unless the final one says explicitly what it is", function()
    local function lasts(doc)
      local back, l = assert(psdl.decode(psdl.encode(doc))), {}
      for i, a in ipairs(back.rooms[1].attributes) do l[i] = a.last end
      return l
    end
    local doc = small_doc()
    assert.same({ false, false, true }, lasts(doc))
    doc.rooms[1].attributes[1].last = true            -- the final one has no `last`: auto
    assert.same({ false, false, true }, lasts(doc))
    doc.rooms[1].attributes[3].last = false           -- explicit everywhere it matters
    assert.same({ true, false, false }, lasts(doc))
  end)

  it("moves LAST to attributes appended to a room read from a file", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local attrs = doc.rooms[2].attributes
    local n = #attrs
    attrs[n + 1] = { type = "texture", value = 3 }
    attrs[n + 2] = { type = "fan", vertices = { 2, 3, 4 } }
    local back = assert(psdl.decode(psdl.encode(doc)))
    local b = back.rooms[2].attributes
    assert.is_false(b[n].last)
    assert.is_true(b[n + 2].last)
    table.remove(back.rooms[2].attributes)          -- the new final one says last = false
    local again = assert(psdl.decode(psdl.encode(back)))
    assert.is_true(again.rooms[2].attributes[n + 1].last)
  end)

  it("keeps a room read without any LAST that way", function()
    local H = require "helper"
    local bytes = H.one_room({ 0x01, 1, 2, 3, 4 })     -- road without LAST: invalid, kept
    local doc = assert(psdl.decode(bytes))
    assert.is_true(doc.rooms[1].missing_last)
    assert.are.equal(bytes, psdl.encode(doc))
  end)

  it("refuses a gap in the rooms and a room 0 record, naming the key", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    doc.rooms[#doc.rooms + 2] = doc.rooms[1]
    local ok, err = pcall(psdl.encode, doc)
    assert.is_false(ok)
    assert.matches("outside the sequence", err)
    doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    doc.rooms[0] = doc.rooms[1]
    ok, err = pcall(psdl.encode, doc)
    assert.is_false(ok)
    assert.matches("doc.room0", err, 1, true)
  end)

  it("keeps signalling NaNs and the largest floats bit for bit", function()
    local H = require "helper"
    local bytes = H.psdl{ vertices = { {0, 0, 0}, {1, 2, 3} } }
    -- vertex 1 x := signalling NaN 0x7F800001, y := FLT_MAX
    local off = 12 + 12
    bytes = bytes:sub(1, off) .. string.pack("<I4I4", 0x7F800001, 0x7F7FFFFF) .. bytes:sub(off + 9)
    local doc = assert(psdl.decode(bytes))
    assert.are.equal(bytes, psdl.encode(doc))
  end)
end)

describe("decode failures", function()
  it("returns nil, message, code for data that is not a PSDL file", function()
    local doc, msg, code = psdl.decode("")
    assert.is_nil(doc)
    assert.equal("truncated", code)
    assert.equal("psdl: truncated: need 4 bytes for the magic, 0 remain at offset 0x0", msg)
    doc, msg, code = psdl.decode("RIFF\0\0\0\0")
    assert.is_nil(doc)
    assert.equal("bad_magic", code)
    assert.matches("^psdl: bad_magic: ", msg)
  end)

  it("reports truncation with an offset", function()
    local bytes = slurp(FIXTURES .. "/grid_n3.psdl")
    local doc, msg, code = psdl.decode(bytes:sub(1, 10))
    assert.is_nil(doc)
    assert.equal("truncated", code)
    assert.equal("psdl: truncated: need 4 bytes for the vertex count, 2 remain at offset 0x8", msg)
    doc, msg, code = psdl.decode(bytes:sub(1, -2))
    assert.is_nil(doc)
    assert.equal("bad_count", code)   -- the road-record count no longer fits what is left
    assert.matches("^psdl: bad_count: .* at offset 0x%x+", msg)
    for cut = 1, #bytes - 1, 97 do
      local d, m, c = psdl.decode(bytes:sub(1, cut))
      assert.is_nil(d)
      assert.is_string(m)
      assert.is_string(c)
    end
  end)

  it("reports trailing bytes", function()
    local doc, msg, code = psdl.decode(slurp(FIXTURES .. "/grid_n2.psdl") .. "\0")
    assert.is_nil(doc)
    assert.equal("trailing_bytes", code)
    assert.matches("^psdl: trailing_bytes: ", msg)
  end)

  it("honours limits", function()
    local doc, _, code = psdl.decode(slurp(FIXTURES .. "/grid_n3.psdl"), { max_rooms = 3 })
    assert.is_nil(doc)
    assert.equal("bad_count", code)
  end)

  it("raises on misuse", function()
    assert.has_error(function() psdl.decode({}) end,
      "bad argument #1 to 'decode' (string expected, got table)")
  end)
end)

describe("encode errors", function()
  local function encode_error(mutate)
    local doc = small_doc()
    mutate(doc)
    local ok, err = pcall(function() return psdl.encode(doc) end)
    assert.is_false(ok)
    return (err:gsub("^[^:]*:%d+: ", ""))   -- the caller's position, as luaL_error adds it
  end

  it("names the path of a value of the wrong type", function()
    local err = encode_error(function(d) d.rooms[1].attributes[2].vertices[2] = "x" end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[2].vertices[2]: integer expected, got string)", err)
    err = encode_error(function(d) d.rooms[1].perimeter[3].vertex = nil end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].perimeter[3].vertex: integer expected, got nil)", err)
    err = encode_error(function(d) d.rooms = nil end)
    assert.equal("bad argument #1 to 'encode' (rooms: table expected, got nil)", err)
    err = encode_error(function(d) d.vertices[4][2] = {} end)
    assert.equal("bad argument #1 to 'encode' (vertices[4][2]: number expected, got table)", err)
    err = encode_error(function(d) d.roads[1].rooms[2] = 40000 end)
    assert.equal("bad argument #1 to 'encode' (roads[1].rooms[2]: 40000 is out of range (-32768..32767))", err)
    assert.has_error(function() psdl.encode("doc") end,
      "bad argument #1 to 'encode' (table expected, got string)")
  end)

  it("names a stray key, a gap or the first bad value of a reference list", function()
    local err = encode_error(function(d) d.rooms[1].attributes[2].vertices.x = 1 end)
    assert.matches("(rooms[1].attributes[2].vertices: key x is outside the sequence 1..", err, 1, true)
    err = encode_error(function(d) local v = d.rooms[1].attributes[2].vertices; v[#v + 5] = 1 end)
    assert.matches("is outside the sequence 1..%d+ of values %(a gap or a stray key", err)
    err = encode_error(function(d) d.rooms[1].attributes[2].vertices[2] = nil end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[2].vertices[2]: integer expected, got nil)", err)
    -- the first bad value in index order, whichever the traversal meets first
    err = encode_error(function(d)
      local v = d.rooms[1].attributes[2].vertices
      v[#v] = "last"
      v[1] = 0
    end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[2].vertices[1]: 0 is out of range (1..65536))", err)
    -- words keep base 0
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    doc.rooms[1].attributes[1] = { type = "unknown", words = { 0, 65535, 7 } }
    doc.rooms[1].attributes[1].words[2] = 65536
    local ok, msg = pcall(psdl.encode, doc)
    assert.is_false(ok)
    assert.matches("rooms[1].attributes[1].words[2]: 65536 is out of range (0..65535)", msg, 1, true)
  end)

  it("range-checks values against their field", function()
    local err = encode_error(function(d) d.rooms[1].attributes[2].vertices[1] = 0 end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[2].vertices[1]: 0 is out of range (1..65536))", err)
    err = encode_error(function(d) d.rooms[1].flags = 256 end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].flags: 256 is out of range (0..255))", err)
    err = encode_error(function(d) d.rooms[1].attributes[2].vertices[1] = 2.5 end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[2].vertices[1]: " ..
                 "number has no integer representation (2.5))", err)
    err = encode_error(function(d)
      d.rooms[1].attributes[1] = { type = "tunnel", flags = 1, height1 = 300, height2 = 1 }
    end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[1].height1: " ..
                 "300.0 is out of range (0..255.99609375, 8.8 fixed point))", err)
  end)

  it("passes the core's explanation for values the format cannot hold", function()
    local err = encode_error(function(d) d.rooms[1].attributes[1].value = 2048 end)
    assert.matches("bad argument #1 to 'encode' (rooms[1].attributes[1]: texture value 2048 exceeds 2047", err, 1, true)
    err = encode_error(function(d) d.rooms[1].attributes[2].vertices = { 1, 2, 3, 4, 5, 6 } end)
    assert.matches("bad argument #1 to 'encode' (rooms[1].attributes[2]: road needs a multiple of 4 vertices", err, 1, true)
  end)

  it("rejects unknown types and fields", function()
    local err = encode_error(function(d) d.rooms[1].attributes[3].type = "rode" end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[3].type: unknown attribute type 'rode' " ..
      "(expected one of road, sidewalk_strip, walkway, sliver, crosswalk, road_fan, fan, facade_bound, " ..
      "divided_road, tunnel, junction_tunnel, texture, facade, roof, unknown))", err)
    err = encode_error(function(d) d.rooms[1].attributes[1].valeu = 3 end)
    assert.equal("bad argument #1 to 'encode' (rooms[1].attributes[1]: unknown field 'valeu' for a texture attribute)", err)
    err = encode_error(function(d) d.rooms[1].attributes[2].cap = "start" end)
    assert.matches("unknown field 'cap' for a road attribute", err, 1, true)
  end)

  it("frees the half-built document when it raises", function()
    -- the C document lives in a to-be-closed box; repeated failures must not pile up
    for _ = 1, 200 do
      pcall(psdl.encode, { vertices = { {0, 0, 0} }, rooms = { { flags = 1, prop_rule = 0,
        perimeter = {}, attributes = { { type = "road", vertices = { 1, "x" } } } } } })
    end
    collectgarbage()
    assert.is_true(true)
  end)
end)

describe("psdl.validate", function()
  it("finds no format errors in the fixtures, warnings only (drivable = false)", function()
    local doc = assert(psdl.read(FIXTURES .. "/grid_n2.psdl"))
    local ok, problems, counts = psdl.validate(doc, { drivable = false })
    assert.is_true(ok)
    assert.equal(0, counts.errors)
    assert.equal(#problems, counts.warnings)
    assert.is_true(counts.warnings > 0)
    local p = problems[1]
    assert.equal("warning", p.severity)
    assert.is_string(p.rule)
    assert.is_string(p.path)
    assert.is_string(p.message)
    local strict = psdl.validate(doc, { strict = true, drivable = false })
    assert.is_false(strict)
  end)

  it("finds the fixtures' drivability defects: holes and floor outside rooms, with rooms and positions", function()
    local doc = assert(psdl.read(FIXTURES .. "/grid_n2.psdl"))
    local ok, problems, counts = psdl.validate(doc)
    assert.is_false(ok)
    local rules = {}
    for _, p in ipairs(problems) do
      if p.severity == "error" then rules[p.rule] = true end
      if p.rule == "hole" then
        -- grid_n2: a 3 m gap between intersection 1 (x <= 7) and road room 5 (x >= 10)
        assert.is_true(p.x > -11 and p.x < 61 and p.z > -11 and p.z < 61, p.message)
        assert.is_true(#p.rooms >= 1)
      end
    end
    assert.same({ hole = true, floor_outside = true }, rules)
    assert.equal(20, counts.errors)
    -- a city the builder made passes every rule
    local ok2, p2 = psdl.validate(assert(psdl.read(FIXTURES .. "/clean/street.psdl")), { strict = true })
    assert.is_true(ok2, p2[1] and p2[1].message)
  end)

  it("reports an index past the vertex pool with a 1-based path", function()
    local doc = small_doc()
    doc.rooms[1].attributes[2].vertices[3] = 99
    local ok, problems, counts = psdl.validate(doc)
    assert.is_false(ok)
    assert.is_true(counts.errors >= 1)
    local found
    for _, p in ipairs(problems) do
      if p.rule == "vertex_index" then found = p end
    end
    assert.truthy(found)
    assert.equal("error", found.severity)
    assert.equal("rooms[1].attributes[2].vertices[3]", found.path)
    assert.equal(1, found.room)
    assert.equal(2, found.attribute)
  end)

  it("reports a document encode would reject as one 'encodable' error", function()
    local doc = small_doc()
    doc.rooms[1].attributes[2].vertices[1] = "one"
    local ok, problems, counts = psdl.validate(doc)
    assert.is_false(ok)
    assert.same({ errors = 1, warnings = 0 }, counts)
    assert.equal("encodable", problems[1].rule)
    assert.equal("rooms[1].attributes[2].vertices[1]", problems[1].path)
    assert.equal("integer expected, got string", problems[1].message)
  end)

  it("warns about city names the game special-cases", function()
    local doc = small_doc()
    for _, name in ipairs{ "cities/London2.psdl", "mysf.psdl", "SF" } do
      local _, problems = psdl.validate(doc, { name = name })
      local last = problems[#problems]
      assert.equal("city_name", last.rule)
      assert.equal("warning", last.severity)
    end
    local _, problems = psdl.validate(doc, { name = "london_dir/mycity.psdl" })
    for _, p in ipairs(problems) do assert.not_equal("city_name", p.rule) end
  end)
end)

describe("psdl.read and psdl.write", function()
  local dir

  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(lfs.mkdir(dir))
  end)

  after_each(function()
    for name in lfs.dir(dir) do
      if name ~= "." and name ~= ".." then
        local p = dir .. "/" .. name
        if lfs.attributes(p, "mode") == "directory" then lfs.rmdir(p) else os.remove(p) end
      end
    end
    lfs.rmdir(dir)
  end)

  local function entries() return H.files_in(dir) end

  it("reads a file, or returns an io failure", function()
    local doc = assert(psdl.read(FIXTURES .. "/grid_n2.psdl"))
    assert.same(psdl.decode(slurp(FIXTURES .. "/grid_n2.psdl")), doc)
    local none, msg, code = psdl.read(dir .. "/missing.psdl")
    assert.is_nil(none)
    assert.equal("io", code)
    assert.equal("psdl: io: " .. dir .. "/missing.psdl: No such file or directory", msg)
    local _, m2, c2 = psdl.read(dir)   -- a directory: opens, but cannot be read
    assert.equal("io", c2)
    assert.equal("psdl: io: " .. dir .. ": Is a directory", m2)
  end)

  it("reads every fixture into the document decode makes of its bytes (core.decode_file)", function()
    for _, name in ipairs(fixture_names()) do
      local path = FIXTURES .. "/" .. name
      local bytes = slurp(path)
      local want, wmsg, wcode = psdl.decode(bytes)
      local got, gmsg, gcode = psdl.read(path)
      assert.same(want, got, name)
      assert.equal(wmsg, gmsg, name)
      assert.equal(wcode, gcode, name)
      if got then assert.equal(getmetatable(want), getmetatable(got)) end
    end
    -- limits apply as for decode
    local _, msg, code = psdl.read(FIXTURES .. "/grid_n3.psdl", { max_rooms = 3 })
    assert.equal("bad_count", code)
    assert.equal(select(2, psdl.decode(slurp(FIXTURES .. "/grid_n3.psdl"), { max_rooms = 3 })), msg)
  end)

  it("decodes a truncated file and a pipe as decode does their bytes", function()
    local bytes = slurp(FIXTURES .. "/grid_n2.psdl")
    local path = dir .. "/cut.psdl"
    spit(path, bytes:sub(1, #bytes - 7))
    local doc, msg, code = psdl.read(path)
    assert.is_nil(doc)
    local _, want_msg, want_code = psdl.decode(bytes:sub(1, #bytes - 7))
    assert.equal(want_code, code)
    assert.equal(want_msg, msg)
    spit(path, "")
    assert.same({ psdl.decode("") }, { psdl.read(path) })
    -- a stream of unknown size (a pipe) grows its block until the end
    local p = assert(io.popen("cat " .. FIXTURES .. "/grid_n20.psdl", "r"))
    local piped = assert(core.decode_file(p, "pipe"))
    p:close()
    assert.same(psdl.decode(slurp(FIXTURES .. "/grid_n20.psdl")), piped)
    -- what is left of a handle already read from
    local f = assert(io.open(FIXTURES .. "/grid_n2.psdl", "rb"))
    assert.equal(bytes:sub(1, 4), f:read(4))
    local _, m2, c2 = core.decode_file(f, "rest")
    f:close()
    assert.equal("bad_magic", c2)
    assert.equal(select(2, psdl.decode(bytes:sub(5))), m2)
  end)

  it("core.decode_file raises on a closed file or something else", function()
    local f = assert(io.open(FIXTURES .. "/grid_n2.psdl", "rb"))
    f:close()
    assert.has_error(function() core.decode_file(f, "x") end,
      "bad argument #1 to 'decode_file' (an open file expected, got a closed one)")
    assert.has_error(function() core.decode_file("spec/fixtures/grid_n2.psdl", "x") end)
    assert.has_error(function() core.decode_file(io.stdin) end,
      "bad argument #2 to 'decode_file' (string expected, got no value)")
    local g = assert(io.open(FIXTURES .. "/grid_n2.psdl", "rb"))
    assert.has_error(function() core.decode_file(g, "x", 5) end,
      "bad argument #3 to 'decode_file' (table expected, got number)")
    assert.has_error(function() core.decode_file(g, "x", { max_rooms = -1 }) end)
    g:close()
    assert.has_error(function() psdl.read(FIXTURES .. "/grid_n2.psdl", 5) end,
      "bad argument #2 to 'read' (table expected, got number)")
  end)

  it("writes atomically and leaves no temporary file", function()
    local path = dir .. "/city.psdl"
    assert.is_true(psdl.write(small_doc(), path))
    assert.is_true(slurp(path) == small_bytes())
    assert.same({ "city.psdl" }, entries())
    local doc = assert(psdl.read(FIXTURES .. "/clean/street.psdl"))
    assert.is_true(psdl.write(doc, path))
    assert.is_true(slurp(path) == slurp(FIXTURES .. "/clean/street.psdl"))
    assert.same({ "city.psdl" }, entries())
  end)

  it("refuses an invalid document unless forced, leaving the target alone", function()
    local path = dir .. "/city.psdl"
    spit(path, "old contents")
    local doc = small_doc()
    doc.rooms[1].attributes[2].vertices[3] = 99
    local ok, msg, code = psdl.write(doc, path)
    assert.is_nil(ok)
    assert.equal("invalid", code)
    assert.matches("^psdl: invalid: " .. dir:gsub("%p", "%%%0") .. "/city%.psdl: %d+ problems?: ", msg)
    assert.matches("rooms[1].attributes[2].vertices[3]: ", msg, 1, true)
    assert.equal("old contents", slurp(path))
    assert.same({ "city.psdl" }, entries())
    assert.is_true(psdl.write(doc, path, { force = true }))
    assert.is_true(slurp(path) == psdl.encode(doc))
    assert.is_true(psdl.write(small_doc(), path, { validate = false }))
    -- forced, but not encodable at all: nil, message, "invalid" (before: a raise from
    -- document.lua), naming where; a reference past the 65,536 vertices a u16 addresses
    spit(path, "old contents")
    doc.rooms[1].attributes[2].vertices[3] = 65537
    for _, opts in ipairs({ { force = true }, { validate = false } }) do
      local ok, msg, code = psdl.write(doc, path, opts)
      assert.is_nil(ok)
      assert.equal("invalid", code)
      assert.equal("psdl: invalid: " .. path .. ": 1 problem: rooms[1].attributes[2].vertices[3]: "
                   .. "65537 is out of range (1..65536)", msg)
      assert.equal("old contents", slurp(path))
      assert.same({ "city.psdl" }, entries())
    end
  end)

  it("removes the temporary file when the final rename fails", function()
    local target = dir .. "/taken"
    assert(lfs.mkdir(target))              -- a directory cannot be replaced by a file
    local ok, msg, code = psdl.write(small_doc(), target)
    assert.is_nil(ok)
    assert.equal("io", code)
    assert.matches("^psdl: io: ", msg)
    assert.equal("directory", lfs.attributes(target, "mode"))
    assert.same({ "taken" }, entries())
  end)

  it("returns an io failure for a folder that does not exist", function()
    local ok, msg, code = psdl.write(small_doc(), dir .. "/no/such/city.psdl")
    assert.is_nil(ok)
    assert.equal("io", code)
    assert.matches("^psdl: io: .*No such file or directory", msg)
  end)

  it("raises on misuse", function()
    assert.has_error(function() psdl.write(small_doc()) end,
      "bad argument #2 to 'write' (string expected, got nil)")
    assert.has_error(function() psdl.read() end,
      "bad argument #1 to 'read' (string expected, got nil)")
  end)
end)
