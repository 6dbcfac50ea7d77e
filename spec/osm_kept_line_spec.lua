-- Specs for the kept line and the list under "not kept without a drop" of `psdl osm`'s summary
-- (newcomer round 6, #8 and #3): ways merged into one road count as kept length, so the line
-- also gives the length of the city's roads; a way listed under the heading can hold a drop
-- of the road merged from it, which the list's own heading says.

local H = require "helper"

-- n parallel east-west ways of 10 nodes, 110 m long, `gap` degrees of latitude apart
local function parallel(n, gap)
  local t = { '<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6">\n' }
  local id = 0
  for w = 1, n do
    local refs = {}
    for k = 0, 9 do
      id = id + 1
      t[#t + 1] = string.format('<node id="%d" lat="%.7f" lon="%.7f"/>\n', id, 50 + (w - 1) * gap, 14 + k * 0.00017)
      refs[#refs + 1] = string.format('<nd ref="%d"/>', id)
    end
    t[#t + 1] = string.format('<way id="%d">%s<tag k="highway" v="residential"/></way>\n', 1000 + w, table.concat(refs))
  end
  t[#t + 1] = "</osm>\n"
  return table.concat(t)
end

describe("psdl osm's kept line", function()
  it("gives the roads' length beside the kept length: 20 parallel ways merged into one road", function()
    local dir = H.tmpdir(finally)
    local file = dir .. "/par.osm"
    H.write_bytes(file, parallel(20, 0.00001))
    local code, out, err = H.cli("osm", file, "-o", dir .. "/p.psdl")
    assert.equal(0, code, err)
    local kept_km, input_km, road = out:match("kept: [%d.]+ %% of the drivable length %(([%d.]+) km of ([%d.]+) km lie "
      .. "on a road; the roads measure (%d+) m%)")
    assert.is_truthy(kept_km, out)
    -- the city shows about one road: far less than the length the kept fraction counts
    assert.is_true(tonumber(road) < 400, out)
    assert.is_true(tonumber(kept_km) * 1000 > 2 * tonumber(road), out)
    local code2, json = H.cli("osm", file, "-o", dir .. "/p.psdl", "--json")
    assert.equal(0, code2)
    local kept = require("cjson").decode(json).import.kept
    assert.near(tonumber(road), kept.road_m, 1)
    assert.near(tonumber(input_km) * 1000, kept.input_m, 10)
  end)

  it("gives the list under 'not kept without a drop' a heading of its own", function()
    local dir = H.tmpdir(finally)
    local file = dir .. "/par.osm"
    H.write_bytes(file, parallel(40, 0.00001)) -- (44 m across: the outer ways lie off the road)
    local code, out, err = H.cli("osm", file, "-o", dir .. "/p.psdl")
    assert.equal(0, code, err)
    assert.matches("\nnot kept without a drop: [^\n]*\n  the ways no drop names that lost most %(a drop of a road merged "
      .. "from them included%):\n          way 10%d%d: %d+ m not kept\n", out)
  end)
end)
