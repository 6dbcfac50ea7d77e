-- Specs for the drivability rules (docs/validate.md, src/psdl_drivable.c) through the Lua
-- module, the command line and the renderer: hand-made PSDL byte vectors (string.pack) that
-- trigger each rule and sit just under its threshold, and tiny builder scripts.
-- (tests/c/test_drivable.c checks the same rules in C under ASan.)

local psdl = require "psdl"
local H = require "helper"

-- A PSDL file (§1.2, §1.4): rooms = list of {pts = {{x, z}, ...}, flags = n, links = {[k] =
-- room}}, no attributes, no texture, one height, no road record; opts.nan = vertex index
-- (1-based) written as NaN in x.
local function pack(rooms, opts)
  opts = opts or {}
  local verts, index = { { 0, 0, 0 } }, {}
  local function vid(x, z)
    local key = string.format("%.6f %.6f", x, z)
    if not index[key] then verts[#verts + 1] = { x, 0, z }; index[key] = #verts - 1 end
    return index[key]
  end
  local recs = {}
  for _, r in ipairs(rooms) do
    local per = {}
    for k, p in ipairs(r.pts) do per[#per + 1] = string.pack("<I2I2", vid(p[1], p[2]), (r.links or {})[k] or 0) end
    recs[#recs + 1] = string.pack("<I4I4", #r.pts, 0) .. table.concat(per)
  end
  local out = { "PSD0", string.pack("<I4I4", 2, #verts) }
  for i, v in ipairs(verts) do
    local x = (opts.nan == i) and (0 / 0) or v[1]
    out[#out + 1] = string.pack("<fff", x, v[2], v[3])
  end
  out[#out + 1] = string.pack("<I4f", 1, 10)      -- one height
  out[#out + 1] = string.pack("<I4", 1)           -- texture slots: slot 0 only
  out[#out + 1] = string.pack("<I4I4", #rooms + 1, 0)
  out[#out + 1] = table.concat(recs)
  out[#out + 1] = string.char(0)
  for _, r in ipairs(rooms) do out[#out + 1] = string.char(r.flags or 4) end
  out[#out + 1] = string.char(0xCD) .. string.rep("\0", #rooms)
  out[#out + 1] = string.pack("<ffffffffffI4", -1000, -1000, -1000, 1000, 1000, 1000, 0, 0, 0, 2000, 0)
  return table.concat(out)
end

local function rect(x0, z0, x1, z1, flags, links)
  return { pts = { { x0, z0 }, { x0, z1 }, { x1, z1 }, { x1, z0 } }, flags = flags, links = links }
end

-- Problems of one rule (severity "error", "warning" or nil for both) in the file's bytes.
local function problems_of(bytes, rule, severity)
  local doc = assert(psdl.decode(bytes))
  local _, problems = psdl.validate(doc)
  local out = {}
  for _, p in ipairs(problems) do
    if p.rule == rule and (not severity or p.severity == severity) then out[#out + 1] = p end
  end
  return out, doc
end

-- Eight 10 m rooms round a missing square of side s.
local function ring(s)
  local c = { 0, 10, 10 + s, 20 + s }
  local rooms = {}
  for i = 1, 3 do
    for j = 1, 3 do
      if i ~= 2 or j ~= 2 then rooms[#rooms + 1] = rect(c[i], c[j], c[i + 1], c[j + 1]) end
    end
  end
  return rooms
end

describe("drivability rules on hand-made files", function()
  it("hole: a 1.01 m square of ground in no room is an error, 0.999 m a warning, 0.0995 m a gap", function()
    local errs = problems_of(pack(ring(1.01)), "hole", "error")
    assert.equal(1, #errs)
    local p = errs[1]
    assert.is_true(p.x > 10 and p.x < 11.01 and p.z > 10 and p.z < 11.01)
    assert.is_true(#p.rooms == 2)
    assert.matches("1.02 m²", p.message, 1, true)
    assert.equal(0, #problems_of(pack(ring(0.999)), "hole", "error"))
    assert.equal(1, #problems_of(pack(ring(0.999)), "hole", "warning"))
    assert.equal(1, #problems_of(pack(ring(0.1005)), "hole", "warning"))
    assert.equal(0, #problems_of(pack(ring(0.0995)), "hole"))
    assert.equal(1, #problems_of(pack(ring(0.0995)), "edge_gap", "warning"))
    assert.equal(0, #problems_of(pack(ring(0)), "hole"))
  end)

  it("room_overlap: 0.51 m² of two ordinary rooms is an error, 0.49 m² nothing, a warp room exempt", function()
    local p = problems_of(pack({ rect(0, 0, 10, 10), rect(9.949, 0, 20, 10) }), "room_overlap", "error")
    assert.equal(1, #p)
    assert.same({ 1, 2 }, p[1].rooms)
    assert.is_true(math.abs(p[1].x - 9.9745) < 0.01 and math.abs(p[1].z - 5) < 0.01)
    assert.equal(0, #problems_of(pack({ rect(0, 0, 10, 10), rect(9.951, 0, 20, 10) }), "room_overlap"))
    assert.equal(0, #problems_of(pack({ rect(0, 0, 10, 10, 0x08), rect(-5, 3, 15, 7, 0x48) }), "room_overlap"))
  end)

  it("unreachable: a road room no link reaches is an error, a block a warning", function()
    local rooms = { rect(0, 0, 30, 10, 0x08, { 2 }), rect(30, 0, 40, 10, 0x10, { 1 }), rect(40, 0, 50, 10, 0x08),
                    rect(0, 10, 50, 20, 0x04) }
    local errs = problems_of(pack(rooms), "unreachable", "error")
    assert.equal(1, #errs)
    assert.equal(3, errs[1].room)
    assert.equal(1, #problems_of(pack(rooms), "unreachable", "warning"))
    rooms[2].links = { 1, 3 }
    rooms[3].links = { 2 }
    rooms[1].links = { 2, 4 }
    rooms[4].links = { 1 }
    assert.equal(0, #problems_of(pack(rooms), "unreachable"))
  end)

  it("perimeter_crossing, perimeter_spike: a bow tie and a spike; a 2.9 degree needle is no spike", function()
    assert.equal(1, #problems_of(pack({ { pts = { { 0, 0 }, { 10, 10 }, { 10, 0 }, { 0, 10 } } } }),
      "perimeter_crossing", "error"))
    local function needle(d)
      return pack({ { pts = { { 0, 0 }, { 0, 10 }, { 5 - d, 10 }, { 5, 14 }, { 5 + d, 10 }, { 10, 10 }, { 10, 0 } } } })
    end
    assert.equal(1, #problems_of(needle(0.05), "perimeter_spike", "warning"))
    assert.equal(0, #problems_of(needle(0.1), "perimeter_spike"))
  end)

  it("nonfinite: a NaN vertex is an error and hides nothing; empty_city: no room", function()
    local bytes = pack({ rect(0, 0, 10, 10, 0x08) }, { nan = 3 })
    local p = problems_of(bytes, "nonfinite", "error")
    assert.equal(1, #p)
    assert.equal("vertices[3]", p[1].path)
    assert.equal(0, #problems_of(pack({ rect(0, 0, 10, 10, 0x08) }), "nonfinite"))
    local empty = problems_of(pack({}), "empty_city", "error")
    assert.equal(1, #empty)
    -- --strict used to pass an empty city
    local ok = psdl.validate(assert(psdl.decode(pack({}))), { strict = true })
    assert.is_false(ok)
  end)

  it("psdl.write refuses a city with a hole; drivable = false writes it", function()
    local doc = assert(psdl.decode(pack(ring(2))))
    local path = H.tmpname(".psdl")
    finally(function() os.remove(path) end)
    local ok, msg = psdl.write(doc, path)
    assert.is_nil(ok)
    assert.matches("ground", msg, 1, true)
    assert.is_true(psdl.write(doc, path, { drivable = false }))
  end)

  it("render --problems places each marker at its position", function()
    local doc = assert(psdl.decode(pack(ring(2))))
    local r = assert(require("psdl.render").render(doc, { size = 128, problems = true, format = "svg" }))
    assert.equal(0, r.problems.unplaced)
    assert.is_true(r.problems.errors >= 1)
  end)
end)

describe("drivability rules on tiny builder scripts", function()
  local STREET = { kind = "road", left = 4, right = 4, sidewalk_left = 2, sidewalk_right = 2 }

  it("two streets crossing without a junction overlap (error); apart they do not", function()
    local function build(dz)
      local b = psdl.builder.new()
      b:street { path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = STREET }
      b:street { path = { { -30, 0, 30 + dz }, { 30, 0, 30 + dz } }, profile = STREET }
      return b:finish { validate = false }
    end
    local _, problems = psdl.validate((build(0)))
    local n = 0
    for _, p in ipairs(problems) do if p.rule == "room_overlap" then n = n + 1 end end
    assert.is_true(n >= 1)
    -- parallel streets 5 m apart (centre lines): their rooms overlap too
    local b = psdl.builder.new()
    b:street { path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = STREET }
    b:street { path = { { 5, 0, 0 }, { 5, 0, 60 } }, profile = STREET }
    _, problems = psdl.validate((b:finish { validate = false }))
    n = 0
    for _, p in ipairs(problems) do if p.rule == "room_overlap" then n = n + 1 end end
    assert.is_true(n >= 1)
    -- 40 m apart: none
    b = psdl.builder.new()
    b:street { path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = STREET }
    b:street { path = { { 40, 0, 0 }, { 40, 0, 60 } }, profile = STREET }
    _, problems = psdl.validate((b:finish { validate = false }))
    for _, p in ipairs(problems) do assert.not_equal("room_overlap", p.rule) end
  end)

  it("a ring of roads without blocks leaves a hole; with blocks none", function()
    local function city(blocks)
      local c = psdl.city.new { style = "london", blocks = blocks, seed = 1 }
      local a, b2, c2, d = c:node(0, 0), c:node(120, 0), c:node(120, 120), c:node(0, 120)
      c:road(a, b2); c:road(b2, c2); c:road(c2, d); c:road(d, a)
      if blocks ~= false then c:blocks { buildings = false } end
      return (c:build { validate = false })
    end
    local _, problems = psdl.validate(city(false))
    local holes = {}
    for _, p in ipairs(problems) do if p.rule == "hole" then holes[#holes + 1] = p end end
    assert.equal(1, #holes)
    assert.equal("error", holes[1].severity)
    assert.is_true(holes[1].x > 0 and holes[1].x < 120 and holes[1].z > 0 and holes[1].z < 120)
    _, problems = psdl.validate(city(nil))
    for _, p in ipairs(problems) do assert.not_equal("hole", p.rule) end
  end)
end)
