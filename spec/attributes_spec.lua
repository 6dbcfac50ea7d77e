-- Hand-built byte vectors (string.pack) for every attribute type and form (psdl-format.md
-- §2), decoded through the Lua API and encoded back byte for byte.
local psdl = require "psdl"
local H = require "helper"

-- Decode a one-room file and return the room's attributes (after the leading texture).
local function attrs_of(words, opts)
  local bytes = H.one_room(words, opts)
  local doc, msg = psdl.decode(bytes)
  assert(doc, msg)
  assert.are.equal(bytes, psdl.encode(doc))
  local list = doc.rooms[1].attributes
  if opts and opts.no_texture then return list, doc end
  assert.are.equal("texture", list[1].type)
  return { table.unpack(list, 2) }, doc
end

-- Decodes words (attrs_of) and checks the first attribute's fields against `want`; returns it.
local function first_attr_is(words, want)
  local a = attrs_of(words)[1]
  for k, v in pairs(want) do assert.are.same(v, a[k], k) end
  return a
end

describe("attribute decoding", function()
  it("reads a road strip in inline and counted forms (0x0)", function()
    local a = attrs_of{ 0x80 + 0x01, 1, 2, 3, 4 }
    assert.are.equal("road", a[1].type)
    assert.are.same({2, 3, 4, 5}, a[1].vertices)   -- file refs + 1
    assert.is_true(a[1].last)
    assert.is_nil(a[1].counted)
    local c = attrs_of{ 0x80 + 0x00, 2, 1, 2, 3, 4, 5, 6, 7, 1 }
    assert.are.same({2, 3, 4, 5, 6, 7, 8, 2}, c[1].vertices)
    assert.is_true(c[1].counted)
  end)

  it("reads a road strip of 8 sections in the counted form without a counted hint", function()
    local w = { 0x80 + 0x00, 8 }
    for i = 1, 32 do w[#w + 1] = (i % 7) + 1 end
    local a = attrs_of(w)
    assert.are.equal(32, #a[1].vertices)
    assert.is_nil(a[1].counted)   -- the form the encoder picks anyway
  end)

  it("reads sidewalk strips, and end caps only for exactly 2 pairs (0x1)", function()
    local plain = attrs_of{ 0x80 + 0x0A, 1, 2, 3, 4 }
    assert.are.equal("sidewalk_strip", plain[1].type)
    assert.is_nil(plain[1].cap)
    local start = attrs_of{ 0x80 + 0x0A, 0, 0, 3, 4 }
    assert.are.equal("start", start[1].cap)
    assert.are.same({4, 5}, start[1].vertices)
    local finish = attrs_of{ 0x80 + 0x0A, 1, 1, 3, 4 }
    assert.are.equal("end", finish[1].cap)
    assert.are.same({4, 5}, finish[1].vertices)
    local three = attrs_of{ 0x80 + 0x0B, 1, 1, 3, 4, 5, 6 }
    assert.is_nil(three[1].cap)
    assert.are.same({2, 2, 4, 5, 6, 7}, three[1].vertices)
  end)

  it("reads a walkway (rectangle strip, 0x2)", function()
    first_attr_is({ 0x80 + 0x12, 1, 2, 3, 4 }, { type = "walkway", vertices = { 2, 3, 4, 5 } })
  end)

  it("reads a sliver (0x3) with height references", function()
    first_attr_is({ 0x80 + 0x1C, 2, 0, 1, 2 }, { type = "sliver", top = 3, density = 1, vertices = { 2, 3 } })
  end)

  it("reads a crosswalk (0x4)", function()
    first_attr_is({ 0x80 + 0x24, 1, 2, 3, 4 }, { type = "crosswalk", vertices = { 2, 3, 4, 5 } })
  end)

  it("reads road fans and fans, count = triangles (0x5, 0x6)", function()
    local a = attrs_of{ 0x29, 5, 1, 2, 0x80 + 0x30, 2, 5, 1, 2, 3 }
    assert.are.equal("road_fan", a[1].type)
    assert.are.same({6, 2, 3}, a[1].vertices)
    assert.are.equal("fan", a[2].type)
    assert.are.same({6, 2, 3, 4}, a[2].vertices)
    assert.is_true(a[2].counted)
  end)

  it("reads a facade bound (0x7)", function()
    first_attr_is({ 0x80 + 0x3C, 40, 2, 1, 2 }, { type = "facade_bound", light = 40, top = 3, vertices = { 2, 3 } })
  end)

  it("reads a divided road's packed word and 8.8 value (0x8)", function()
    -- type 2, caps at both ends, divider texture value 4, height 38/256
    first_attr_is({ 0x80 + 0x41, 0x0400 + 0xC0 + 2, 38, 1, 2, 3, 4, 5, 6 }, { type = "divided_road",
      divider_type = 2, cap_start = true, cap_end = true, divider_texture = 4, divider_value = 38 / 256,
      vertices = { 2, 3, 4, 5, 6, 7 } })
  end)

  it("reads road tunnels (0x4B), junction tunnels (0x48, 10 words) and the beta form", function()
    local a = attrs_of{ 0x4B, 0x0103, 0x0580, 0x0700, 0x80 + 0x01, 1, 2, 3, 4 }
    assert.are.equal("tunnel", a[1].type)
    assert.are.equal(0x0103, a[1].flags)
    assert.are.equal(5.5, a[1].height1)
    assert.are.equal(7.0, a[1].height2)
    local j = attrs_of{ 0x80 + 0x48, 10, 0x0008, 0x0500, 0x0300, 2, 0x000F, 0x0001, 3, 0, 0, 0x8000 }
    assert.are.equal("junction_tunnel", j[1].type)
    assert.are.equal(8, j[1].flags)
    assert.are.equal(5.0, j[1].height1)
    assert.are.equal(3.0, j[1].height2)
    assert.are.equal(3, j[1].ceiling_start)
    assert.are.equal(0x0001000F, j[1].wall_mask)
    assert.are.equal(3, j[1].mask1)
    assert.are.equal(0x80000000, j[1].mask2)
    local beta = attrs_of{ 0x80 + 0x4A, 0x0003, 0x0180 }
    assert.are.equal("tunnel", beta[1].type)
    assert.are.equal(1.5, beta[1].height1)
    assert.is_nil(beta[1].height2)
  end)

  it("reads texture values below and above 255 (0xA)", function()
    local a = attrs_of({ 0x50, 7, 0x51, 0, 0x80 + 0x57, 0xFF }, { no_texture = true })
    assert.are.equal(7, a[1].value)
    assert.are.equal(256, a[2].value)
    assert.are.equal(2047, a[3].value)
  end)

  it("reads a facade (0xB) with unsigned repeats", function()
    first_attr_is({ 0x80 + 0x5E, 0, 2, 3, 0xFFFE, 1, 2 }, { type = "facade", bottom = 1, top = 3, u_repeat = 3,
      v_repeat = 0xFFFE, vertices = { 2, 3 } })
  end)

  it("reads a roof: count = vertices - 1 (0xC)", function()
    local a = attrs_of{ 0x80 + 0x62, 1, 5, 1, 2 }
    assert.are.equal("roof", a[1].type)
    assert.are.equal(2, a[1].height)
    assert.are.same({6, 2, 3}, a[1].vertices)
  end)

  it("keeps unknown type 0xD and the rest of the room as raw words", function()
    local a = attrs_of{ 0x68, 1, 2, 0x80 + 0x01, 1, 2, 3, 4 }
    assert.are.equal("unknown", a[1].type)
    assert.are.same({0x68, 1, 2, 0x81, 1, 2, 3, 4}, a[1].words)
  end)

  it("keeps words after the LAST attribute", function()
    local a = attrs_of{ 0x80 + 0x01, 1, 2, 3, 4, 0x50, 3, 0x4B, 1, 2, 3 }
    assert.are.equal(3, #a)
    assert.is_false(a[2].last)
    assert.are.equal("tunnel", a[3].type)
  end)

  it("keeps fixed-size attributes stored with an unusual subtype", function()
    local a = attrs_of{ 0x80 + 0x3B, 40, 2, 1, 2 }   -- facade bound with subtype 3
    assert.are.equal(3, a[1].subtype)
    local c = attrs_of{ 0x80 + 0x38, 9, 40, 2, 1, 2 } -- subtype 0: a count word the game eats
    assert.are.equal(0, c[1].subtype)
    assert.are.equal(9, c[1].count)
  end)
end)

describe("attribute encoding", function()
  local function encode_room(attributes)
    local doc = assert(psdl.decode(H.one_room({ 0x80 + 0x01, 1, 2, 3, 4 })))
    doc.rooms[1].attributes = attributes
    local bytes = psdl.encode(doc)
    local back = assert(psdl.decode(bytes))
    return back.rooms[1].attributes, bytes
  end

  it("encodes texture value 256 (index 255) as header 0x51 with data 0", function()
    local attrs, bytes = encode_room{ { type = "texture", value = 256 }, { type = "road", vertices = {2, 3, 4, 5} } }
    assert.are.equal(256, attrs[1].value)
    assert.truthy(bytes:find(string.pack("<I2I2", 0x51, 0), 1, true))
  end)

  it("encodes 2047 as the largest texture value and refuses 2048", function()
    local attrs, bytes = encode_room{ { type = "texture", value = 2047 }, { type = "fan", vertices = {2, 3, 4} } }
    assert.are.equal(2047, attrs[1].value)
    assert.truthy(bytes:find(string.pack("<I2I2", 0x57, 0xFF), 1, true))
    local ok, err = pcall(encode_room, { { type = "texture", value = 2048 } })
    assert.is_false(ok)
    assert.matches("2047", err)
    assert.matches("rooms%[1%]%.attributes%[1%]", err)
  end)

  it("refuses a divider texture value above 255", function()
    local ok, err = pcall(encode_room, { { type = "texture", value = 1 },
      { type = "divided_road", divider_type = 2, divider_texture = 256, divider_value = 0.15,
        vertices = {2, 3, 4, 5, 6, 7} } })
    assert.is_false(ok)
    assert.matches("255", err)
  end)

  it("picks inline forms up to 7 and counted forms beyond, and sets LAST on the final attribute", function()
    local seven, eight = {}, {}
    for i = 1, 28 do seven[i] = 2 end
    for i = 1, 32 do eight[i] = 2 end
    local attrs = encode_room{ { type = "texture", value = 1 }, { type = "road", vertices = seven },
      { type = "road", vertices = eight } }
    assert.is_nil(attrs[2].counted)
    assert.are.equal(28, #attrs[2].vertices)
    assert.are.equal(32, #attrs[3].vertices)
    assert.is_false(attrs[1].last)
    assert.is_false(attrs[2].last)
    assert.is_true(attrs[3].last)
  end)

  it("never writes subtype 1 for a one-pair sidewalk or rectangle strip or a two-vertex roof", function()
    -- header words: type << 3 | subtype, LAST (0x80) on the final attribute
    local cases = {
      { { type = "sidewalk_strip", vertices = {2, 3} }, 0x1 },
      { { type = "walkway", vertices = {2, 3} }, 0x2 },
      { { type = "roof", height = 1, vertices = {2, 3} }, 0xC },
    }
    for _, c in ipairs(cases) do
      local attrs, bytes = encode_room{ { type = "texture", value = 1 }, c[1] }
      local hdr = c[2] << 3 | 0x80
      assert.truthy(bytes:find(string.pack("<I2I2", hdr, 1), 1, true), c[1].type .. ": counted form, count 1")
      assert.falsy(bytes:find(string.pack("<I2", hdr | 1), 1, true), c[1].type .. ": subtype 1 written")
      assert.are.same({2, 3}, attrs[2].vertices)
    end
    -- two pairs keep the inline form (subtype 2)
    local _, bytes = encode_room{ { type = "texture", value = 1 }, { type = "walkway", vertices = {2, 3, 4, 5} } }
    assert.truthy(bytes:find(string.pack("<I2", 0x2 << 3 | 0x80 | 2), 1, true))
    -- a file that has subtype 1 is read as one pair and written back byte for byte
    local list = attrs_of({ 0x80 + (0x2 << 3) + 1, 1, 2 })
    assert.are.equal("walkway", list[1].type)
    assert.are.same({2, 3}, list[1].vertices)
    assert.is_false(list[1].counted)
  end)

  it("writes sidewalk end caps with their (0,0) / (1,1) markers", function()
    local attrs = encode_room{ { type = "texture", value = 1 },
      { type = "sidewalk_strip", cap = "end", vertices = {4, 5} } }
    assert.are.equal("end", attrs[2].cap)
    assert.are.same({4, 5}, attrs[2].vertices)
  end)

  it("round-trips every attribute type built in Lua", function()
    local built = {
      { type = "texture", value = 1 },
      { type = "tunnel", flags = 0x0103, height1 = 5.5, height2 = 7 },
      { type = "road", vertices = {2, 3, 4, 5} },
      { type = "sidewalk_strip", vertices = {2, 3, 4, 5} },
      { type = "walkway", vertices = {2, 3, 4, 5} },
      { type = "sliver", top = 3, density = 1, vertices = {2, 3} },
      { type = "crosswalk", vertices = {2, 3, 4, 5} },
      { type = "road_fan", vertices = {6, 2, 3, 4} },
      { type = "fan", vertices = {6, 2, 3, 4, 5} },
      { type = "facade_bound", light = 17, top = 3, vertices = {2, 3} },
      { type = "texture", value = 4 },
      { type = "divided_road", divider_type = 3, cap_start = true, cap_end = false, divider_texture = 4,
        divider_value = 1.0, vertices = {2, 3, 4, 5, 6, 7} },
      { type = "junction_tunnel", flags = 8, height1 = 5, height2 = 3, ceiling_start = 1, wall_mask = 0xF,
        mask1 = 0, mask2 = 0 },
      { type = "facade", bottom = 1, top = 3, u_repeat = 4, v_repeat = 2, vertices = {2, 3} },
      { type = "roof", height = 3, vertices = {6, 2, 3, 4} },
    }
    local attrs = encode_room(built)
    assert.are.equal(#built, #attrs)
    for i, a in ipairs(attrs) do
      a.last = nil
      assert.are.same(built[i].type, a.type)
      for k, v in pairs(built[i]) do
        if v == false then assert.is_falsy(a[k]) else assert.are.same(v, a[k], a.type .. "." .. k) end
      end
    end
  end)
end)

describe("road records and per-room bytes", function()
  it("round-trips a signed road room id of -5", function()
    local bytes = H.psdl{
      rooms = {
        { perimeter = {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, words = {0x50, 1, 0x81, 1, 2, 3, 4} },
      },
      roads = { H.road{ flags = 0x40, left = {0.5}, right = {0.25, 0.75}, stop = {1, 128},
        start = {1, 2, 3, 4}, finish = {4, 3, 2, 1}, rooms = {1, -5} } },
    }
    local doc = assert(psdl.decode(bytes))
    local r = doc.roads[1]
    assert.are.same({1, -5}, r.rooms)
    assert.are.same({0.5}, r.lanes_left)
    assert.are.same({0.25, 0.75}, r.lanes_right)
    assert.are.same({1, 128}, r.stop_lights)
    assert.are.same({2, 3, 4, 5}, r.start_crossroads)
    assert.are.equal(0x40, r.flags)
    assert.are.equal(bytes, psdl.encode(doc))
  end)

  it("keeps room 0's prop-rule byte, 0xCD or 0x00", function()
    for _, b in ipairs{ 0xCD, 0x00 } do
      local bytes = H.psdl{ props = { b, 3 } }
      local doc = assert(psdl.decode(bytes))
      assert.are.equal(b, doc.room0.prop_rule)
      assert.are.equal(3, doc.rooms[1].prop_rule)
      assert.are.equal(bytes, psdl.encode(doc))
    end
  end)

  it("keeps empty texture slots and duplicate names", function()
    local bytes = H.psdl{ textures = { "a", false, "a", "" } }
    local doc = assert(psdl.decode(bytes))
    assert.are.same({ "a", false, "a", "" }, doc.textures)
    assert.are.equal(bytes, psdl.encode(doc))
  end)

  it("reads PSD1 files with a material byte after each name", function()
    local bytes = H.psdl{ magic = "PSD1", textures = { "a", false, "b" } }
    local doc = assert(psdl.decode(bytes))
    assert.are.equal("PSD1", doc.magic)
    assert.are.equal(bytes, psdl.encode(doc))
  end)
end)

describe("decode errors", function()
  it("names the offset of bytes after the last road record", function()
    local bytes = H.psdl{ tail = "xyz" }
    local doc, msg, code = psdl.decode(bytes)
    assert.is_nil(doc)
    assert.are.equal("trailing_bytes", code)
    assert.matches(string.format("0x%x", #bytes - 3), msg, 1, true)
  end)

  it("rejects a file that is not a PSDL", function()
    local doc, msg, code = psdl.decode("GIF89a........")
    assert.is_nil(doc)
    assert.are.equal("bad_magic", code)
    assert.matches("^psdl: bad_magic:", msg)
  end)

  it("names room and attribute of an attribute that overruns its room", function()
    local doc, msg, code = psdl.decode(H.one_room{ 0x80 + 0x02, 1, 2, 3 })
    assert.is_nil(doc)
    assert.are.equal("bad_attribute", code)
    assert.matches("(room 1, attribute 2)", msg, 1, true)
  end)

  it("returns an error, never raises, for every truncation of a fixture", function()
    local bytes = H.read_bytes(H.fixtures_dir .. "/grid_n2.psdl")
    for len = 0, #bytes - 1 do
      local doc, msg, code = psdl.decode(bytes:sub(1, len))
      assert(doc == nil and type(msg) == "string" and type(code) == "string", "length " .. len)
      local off = tonumber(msg:match("at offset 0x(%x+)"), 16)
      assert(off == nil or off <= len, "offset past the data at length " .. len .. ": " .. msg)
    end
  end)
end)
