-- Structural diff: lua/psdl/diff.lua and `psdl diff`.
local psdl = require "psdl"
local diff = require "psdl.diff"
local cjson = require "cjson"
local H = require "helper"

local N2 = "spec/fixtures/grid_n2.psdl"

local function read(path) return assert(psdl.read(path or N2)) end

local function paths(result)
  local out = {}
  for i, e in ipairs(result.differences) do out[i] = e.kind .. " " .. e.path end
  return out
end

local run = H.cli

local function tmpfile(bytes, suffix)
  local path = H.tmpname(suffix or ".psdl")
  H.write_bytes(path, bytes)
  finally(function() os.remove(path) end)
  return path
end

describe("psdl.diff", function()
  it("finds two reads of every fixture equal", function()
    for _, name in ipairs(H.fixture_names()) do
      local r = diff.diff(read("spec/fixtures/" .. name), read("spec/fixtures/" .. name))
      assert.is_true(r.equal)
      assert.same({}, r.differences)
    end
  end)

  it("names each difference by its path, as the validator does", function()
    local a, b = read(), read()
    b.magic = "PSD1"
    b.room0.prop_rule = 0
    b.vertices[17][2] = 0.5
    b.heights[2] = 99
    b.textures[3] = false
    b.rooms[12 - 3].flags = 0x04 -- room 9
    b.rooms[5].prop_rule = 7
    b.rooms[5].perimeter[2].neighbour = 3
    b.rooms[5].attributes[4].vertices[2] = 40
    b.rooms[7].attributes[2].divider_value = 1.25
    b.bounds.max[2] = 5
    b.bounds.radius = 41
    b.roads[2].lanes_left[1] = 1.5
    b.roads[3].rooms[1] = -7
    local r = diff.diff(a, b)
    assert.is_false(r.equal)
    assert.same({
      "changed magic",
      "changed room0.prop_rule",
      "changed vertices[17]",
      "changed heights[2]",
      "changed textures[3]",
      "changed rooms[5].prop_rule",
      "changed rooms[5].perimeter[2].neighbour",
      "changed rooms[5].attributes[4].vertices[2]",
      "changed rooms[7].attributes[2].divider_value",
      "changed rooms[9].flags",
      "changed bounds.max",
      "changed bounds.radius",
      "changed roads[2].lanes_left[1]",
      "changed roads[3].rooms[1]",
    }, paths(r))
    local e = r.differences[3]
    assert.same(a.vertices[17], e.a)
    assert.same(b.vertices[17], e.b)
    assert.equal("vertices", e.section)
    assert.same({ header = 2, vertices = 1, heights = 1, textures = 1, rooms = 5, bounds = 2, roads = 2 }, r.counts)
  end)

  it("reports added and removed pool entries, rooms, perimeter points and road records", function()
    local a, b = read(), read()
    b.vertices[#b.vertices + 1] = { 1, 2, 3 }
    table.remove(b.heights)
    b.rooms[#b.rooms + 1] = { flags = 4, prop_rule = 0, perimeter = {}, attributes = {} }
    table.remove(b.rooms[2].perimeter)
    table.remove(b.roads)
    local r = diff.diff(a, b)
    assert.same({
      "added vertices[121]",
      "removed heights[4]",
      "removed rooms[2].perimeter[8]",
      "added rooms[10]",
      "removed roads[4]",
    }, paths(r))
  end)

  it("aligns attributes, so one inserted attribute is one difference", function()
    local a, b = read(), read()
    table.insert(b.rooms[9].attributes, 3, { type = "texture", value = 9, last = false })
    local r = diff.diff(a, b)
    assert.same({ "added rooms[9].attributes[3]" }, paths(r))
    -- a change after the insertion is reported at its position in a, with its path in b
    b.rooms[9].attributes[6].u_repeat = 8 -- a's attributes[5]
    r = diff.diff(a, b)
    assert.same({ "added rooms[9].attributes[3]", "changed rooms[9].attributes[5].u_repeat" }, paths(r))
    assert.equal("rooms[9].attributes[6].u_repeat", r.differences[2].path_b)
    -- a removed attribute
    r = diff.diff(b, a)
    assert.equal("removed rooms[9].attributes[3]", paths(r)[1])
  end)

  it("reports an attribute whose type changed as one difference", function()
    local a, b = read(), read()
    b.rooms[9].attributes[2] = { type = "road_fan", vertices = { 3, 20, 25, 10 }, last = false }
    local r = diff.diff(a, b)
    assert.same({ "changed rooms[9].attributes[2]" }, paths(r))
    assert.equal("fan", r.differences[1].a.type)
  end)

  it("sees form fields, unless asked to ignore them", function()
    local a, b = read(), read()
    b.rooms[9].attributes[2].counted = true
    b.rooms[9].attributes[2].last = nil
    local r = diff.diff(a, b)
    assert.same({ "removed rooms[9].attributes[2].last", "added rooms[9].attributes[2].counted" }, paths(r))
    assert.is_true(diff.diff(a, b, { ignore_form = true }).equal)
  end)

  it("finds a difference whenever the bytes differ", function()
    local a = read()
    local bytes = psdl.encode(a)
    local b = read()
    b.rooms[3].attributes[3].vertices[4] = 100
    assert.are_not.equal(bytes, psdl.encode(b))
    assert.is_false(diff.diff(a, b).equal)
  end)

  it("tells float zeros apart by sign and takes NaN as equal to NaN", function()
    assert.is_false(diff.same(0.0, -0.0))
    assert.is_true(diff.same(0 / 0, 0 / 0))
    assert.is_true(diff.same(1, 1.0))
    local a, b = read(), read()
    a.heights[1], b.heights[1] = 0.0, -0.0
    assert.same({ "changed heights[1]" }, paths(diff.diff(a, b)))
  end)

  it("aligns lists by their longest common subsequence", function()
    local pairs_ = diff.align({ "a", "b", "c", "d" }, { "a", "x", "c", "d", "e" })
    assert.same({ { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 }, { nil, 5 } }, pairs_)
    pairs_ = diff.align({ "a", "b" }, { "b" })
    assert.same({ { 1, nil }, { 2, 1 } }, pairs_)
  end)

  it("is a document method and raises on misuse", function()
    local a = read()
    assert.is_true(a:diff(read()).equal)
    assert.has_error(function() diff.diff(a, 1) end, "bad argument #2 to 'diff' (document expected, got number)")
  end)

  it("describes values shortly", function()
    assert.equal("(1, 2.5, 3)", diff.value_text({ 1, 2.5, 3 }))
    assert.equal('"r4_f"', diff.value_text("r4_f"))
    assert.equal("false (empty slot)", diff.value_text(false))
    assert.equal("<road (20 vertices)>", diff.value_text({ type = "road", vertices = { table.unpack(read().rooms[5].attributes[4].vertices) } }))
  end)
end)

describe("psdl diff", function()
  it("exits 0 and prints nothing for equal files", function()
    local code, out, err = run("diff", N2, tmpfile(H.read_bytes(N2)))
    assert.equal(0, code)
    assert.equal("", out)
    assert.equal("", err)
  end)

  it("exits 1 and lists the differences with a count per part", function()
    local b = read()
    b.textures[1] = "r6_f"
    b.rooms[5].attributes[4].vertices[2] = 40
    local path = tmpfile(psdl.encode(b))
    local code, out = run("diff", N2, path)
    assert.equal(1, code)
    assert.equal(table.concat({
      "--- " .. N2, "+++ " .. path,
      'textures[1]: "r4_f" -> "r6_f"',
      "rooms[5].attributes[4].vertices[2]: 33 -> 40",
      "2 differences: textures 1, rooms 1", "" }, "\n"), out)
    code, out = run("diff", N2, path, "-q")
    assert.equal(1, code)
    assert.equal("", out)
    code, out = run("diff", N2, path, "--limit", "1")
    assert.matches("... and 1 more (--limit 0 lists all)", out, 1, true)
  end)

  it("writes JSON for scripts", function()
    local b = read()
    b.heights[2] = 6
    local code, out = run("diff", N2, tmpfile(psdl.encode(b)), "--json")
    assert.equal(1, code)
    local j = cjson.decode(out)
    assert.equal("psdlkit-diff", j.format)
    assert.is_false(j.equal)
    assert.equal(1, #j.differences)
    assert.same({ path = "heights[2]", kind = "changed", section = "heights", a = read().heights[2], b = 6 },
      j.differences[1])
    assert.equal(1, j.counts.heights)
    code, out = run("diff", N2, N2, "--json")
    assert.equal(0, code)
    j = cjson.decode(out)
    assert.is_true(j.equal)
    assert.equal(0, #j.differences)
  end)

  it("exits 2 for a file that is not PSDL and 3 for one that cannot be read", function()
    local code, _, err = run("diff", N2, tmpfile("PSD0 but not really"))
    assert.equal(2, code)
    assert.matches("psdl diff: ", err, 1, true)
    code, _, err = run("diff", "/nonexistent/a.psdl", N2)
    assert.equal(3, code)
    assert.matches("No such file", err, 1, true)
  end)
end)
