-- Specs for `psdl build` messages a newcomer met (round 6, #1, #2, #11, #14): two nodes at
-- one place and a road given twice are warned about by node, road and script line; an
-- error of the build after the script returned carries no tail-call note; an error object
-- that is a table shows its fields; the area limit's "middle of the nodes" is their median;
-- a method called with a dot says to use the colon.

local H = require "helper"

-- Runs a script (lines) with `psdl build`: exit code, stderr, and whether the file was written.
local function build(lines)
  local dir = H.tmpdir(finally)
  local script = dir .. "/s.lua"
  H.write_bytes(script, table.concat(lines, "\n") .. "\n")
  local code, _, err = H.cli("build", script, "-o", dir .. "/s.psdl", "-q")
  return code, err, H.exists(dir .. "/s.psdl")
end

local NEW = 'local city = psdl.city.new{ seed = 1, name = "m" }'

describe("psdl build messages (newcomer round 6)", function()
  it("warns about two nodes at one place, naming both and their lines", function()
    local code, err, written = build { NEW,
      "local a, b = city:node(0, 0), city:node(200, 0)",
      "local c = city:node(200, 0)",
      "city:road(a, b)", "city:road(a, c)", "return city" }
    assert.equal(0, code, err)
    assert.is_true(written)
    assert.matches("warning: [^\n]*s.lua:3: nodes 2 %([^)]*s.lua:2%) and 3 %([^)]*s.lua:3%) are both at %(200, 0%)", err)
  end)

  it("warns about a road given twice (from either end), naming both roads and their lines", function()
    local code, err = build { NEW,
      "local a, b, c = city:node(0, 0), city:node(100, 0), city:node(0, 100)",
      "city:road(a, b)", "city:road(b, c)", "city:road(b, a)", "return city" }
    assert.equal(0, code, err)
    assert.matches("warning: [^\n]*s.lua:5: road 3 %([^)]*s.lua:5%) is road 1 %([^)]*s.lua:3%) again: the same nodes 1 and 2", err)
  end)

  it("says nothing of the kind for a city without such mistakes", function()
    local code, err = build { NEW,
      "local a, b, c = city:node(0, 0), city:node(100, 0), city:node(0, 100)",
      "city:road(a, b)", "city:road(b, c)", "city:road(c, a)", "return city" }
    assert.equal(0, code, err)
    assert.not_matches("both at", err, 1, true)
    assert.not_matches("again:", err, 1, true)
  end)

  it("an error of the build after the script returned has no tail-call note", function()
    local code, err = build { NEW, "return city" }
    assert.equal(2, code)
    assert.matches("s.lua: the city has no roads (add some with city:road(a, b))", err, 1, true)
    assert.not_matches("tail call", err, 1, true)
  end)

  it("a table raised as the error shows its fields, not its address", function()
    local code, err = build { NEW, 'error({ code = 1, why = "x" })' }
    assert.equal(2, code)
    assert.matches("s.lua:2: the script raised a table, not a message: {", err, 1, true)
    assert.matches("code = 1", err, 1, true)
    assert.matches('why = "x"', err, 1, true)
    assert.not_matches("table: 0x", err, 1, true)
  end)

  it("the area limit measures from the nodes' median (the mean of the middle two of an even count)", function()
    local code, err = build { NEW, "local a, b = city:node(0, 0), city:node(30000, 0)", "city:road(a, b)", "return city" }
    assert.equal(2, code)
    assert.matches("15.00 km from the middle of the nodes (their median, x = 15000, z = 0 m)", err, 1, true)
  end)

  it("a method called with a dot says to use the colon", function()
    local code, err = build { NEW, "local a = city.node(0, 0)", "return city" }
    assert.equal(2, code)
    assert.matches("s.lua:2: bad argument #1 to 'node' (a city expected, got number: call it with a colon, "
      .. "city:node(x, z), not city.node(...))", err, 1, true)
    code, err = build { NEW, "local a, b = city:node(0, 0), city:node(100, 0)", "city.road(a, b)", "return city" }
    assert.equal(2, code)
    assert.matches("s.lua:3: bad argument #1 to 'road' (a city expected, got table: call it with a colon", err, 1, true)
  end)
end)
