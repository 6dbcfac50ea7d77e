-- Positions within +-65,536 m everywhere (newcomer findings F1 and F9): the builder takes
-- the limit psdl.city has (a point at 1e30 m validated clean before, and a far-out triangle
-- got "the polygon has no area"), a profile is at most 100 m wide as in psdl.city, and the
-- validator warns about far vertices in files made elsewhere (`far_vertex`).

local psdl = require "psdl"
local builder = require "psdl.builder"
local H = require "helper"

local LINE = debug.getinfo(1, "S").short_src

-- The error of f(...), which must fail.
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "accepted")
  return e
end

describe("coordinates and widths", function()
  it("one limit: the builder's, psdl.city's and the C core's agree", function()
    assert.equal(65536, builder.MAX_COORDINATE)
    assert.equal(psdl.city.MAX_COORDINATE, builder.MAX_COORDINATE)
    assert.equal(100, builder.MAX_WIDTH)
    assert.equal(psdl.city.profiles.MAX_WIDTH, builder.MAX_WIDTH)
    local core = require "psdl.core"
    assert.is_table(core.flatten_points({ { 65536, -65536, 0 } }))
    assert.is_nil((core.flatten_points({ { 0, 0, 0 }, { 65536.5, 0, 0 } })))
    assert.equal(2, select(2, core.flatten_points({ { 0, 0, 0 }, { 0, 0, -65537 } })))
  end)

  it("the builder refuses a point beyond +-65,536 m at the script line, a far triangle included", function()
    local b = builder.new()
    local r = b:room()
    local line = debug.getinfo(1, "l").currentline + 1
    local e = err_of(function() r:fan({ { 1e30, 0, 0 }, { 1e30, 0, 10 }, { 1e30 + 10, 0, 0 } }, "s_grass") end)
    assert.matches(string.format("%s:%d: bad argument #1 to 'fan' (polygon[1]: x = 1e+30 lies too far out: coordinates "
      .. "within +-65536 m (psdl.builder.MAX_COORDINATE", LINE, line), e, 1, true)
    assert.not_matches("no area", e)
    e = err_of(b.vertex, b, { 0, 70000, 0 })
    assert.matches("p: y = 70000 lies too far out", e, 1, true)
    e = err_of(b.vertices_flat, b, { 0, 0, 0, 1e9, 0, 0 })
    assert.matches("flat[4]: a coordinate within +-65536 m expected (psdl.builder.MAX_COORDINATE), got 1000000000", e, 1,
      true)
    e = err_of(b.street, b, { path = { { 0, 0, 0 }, { 0, 0, 1e7 } } })
    assert.matches("lies too far out", e, 1, true)
    -- at the limit it builds
    b = builder.new()
    local r2 = b:room()
    r2:fan({ { 65526, 0, 0 }, { 65526, 0, 10 }, { 65536, 0, 10 }, { 65536, 0, 0 } }, "s_grass")
    local doc = b:finish { validate = false }
    assert.equal(65536, doc.bounds.max[1])
  end)

  it("the builder refuses a profile wider than 100 m, as psdl.city does", function()
    local b = builder.new()
    local e = err_of(b.street, b, { path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = { left = 5e5, right = 5e5 } })
    assert.matches("bad argument #1 to 'street' (profile: left + right = 1000000 m: wider than any road (at most 100 m, "
      .. "psdl.builder.MAX_WIDTH))", e, 1, true)
    e = err_of(b.street, b, { path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = { left = 5, right = 5, sidewalk_left = 101 } })
    assert.matches("profile.sidewalk_left = 101 m: wider than any road has", e, 1, true)
    -- 100 m across builds
    assert.is_table(b:street { path = { { 0, 0, 0 }, { 0, 0, 60 } }, profile = { left = 50, right = 50 } })
  end)

  it("psdl validate warns about vertices beyond the limit in a file made elsewhere", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local _, problems = psdl.validate(doc, { drivable = false })
    for _, p in ipairs(problems) do assert.not_equal("far_vertex", p.rule) end
    doc.vertices[3] = { 1e6, 2, -5 }
    doc.vertices[7] = { 0, -1e5, 0 }
    _, problems = psdl.validate(doc, { drivable = false })
    local far
    for _, p in ipairs(problems) do if p.rule == "far_vertex" then far = p end end
    assert.is_table(far)
    assert.equal("warning", far.severity)
    assert.equal("vertices[3]", far.path)
    assert.matches("2 vertices beyond +-65536 m, the first at (1e+06, 2, -5): 32-bit floats lose their centimetres there",
      far.message, 1, true)
    -- the command line lists it, and the rule list has it
    local dir = H.tmpdir(finally)
    assert(psdl.write(doc, dir .. "/far.psdl", { validate = false }))
    local _, out = H.cli("validate", dir .. "/far.psdl", "--no-drivable")
    assert.matches("far_vertex", out, 1, true)
    local _, rules = H.cli("validate", "--rules")
    assert.matches("far_vertex", rules, 1, true)
  end)
end)
