-- A road whose centre line zigzags tighter than it is wide (2,000 via points, 10 m apart
-- across, 2 m along) pools more sections than the vertex budget allows by itself. The
-- budget is a limit of the whole city, which no repair of one road answers, so on 086ebf8
-- the whole city was refused; the clamped bend is this road's fault and is named first
-- (builder/street.lua), so psdl.city.repair eases the road and the rest of the city builds.

local psdl = require "psdl"
local H = require "helper"
local cjson = require "cjson"

-- The script of a city: a 4 km by 200 m frame of roads split at the middle of its ends,
-- and the zigzag across between those middles.
local ZIGZAG_CITY = [[
local city = psdl.city.new {}
local L = 4000
local a, b, c, d = city:node(0, 0), city:node(L, 0), city:node(L, 200), city:node(0, 200)
local e, f = city:node(0, 100), city:node(L, 100)
city:road(a, b, { name = "South" }); city:road(d, c, { name = "North" })
city:road(a, e); city:road(e, d); city:road(b, f); city:road(f, c)
local via = {}
for i = 1, 2000 do via[i] = { L * i / 2001, 100 + (i % 2 == 0 and 5 or -5) } end
city:road(e, f, { via = via, name = "Zigzag" })
return city
]]

describe("a road that zigzags tighter than it is wide", function()
  it("is repaired on its own; the city builds, validates and keeps its other roads", function()
    local city = assert(load(ZIGZAG_CITY, "=zigzag.lua", "t", setmetatable({ psdl = psdl }, { __index = _G })))()
    local doc, report = city:build()
    local _, _, counts = psdl.validate(doc)
    assert.are.equal(0, counts.errors)
    assert.are.equal(7, #city.roads) -- every road kept
    local zig = 0
    for _, e in ipairs(report.repairs) do
      if e.name == "Zigzag" then
        zig = zig + 1
        assert.are.equal("repaired", e.action)
        assert.is_truthy(e.reason == "bend eased" or e.reason == "road straightened" or e.reason == "via point dropped",
          e.reason)
        assert.matches("^zigzag.lua:9: road 7 %(Zigzag%)", e.detail)
      end
    end
    assert.is_true(zig > 0)
    -- the first repair names the bend, not the budget
    local first
    for _, e in ipairs(report.repairs) do if e.name == "Zigzag" and e.reason == "bend eased" then first = e; break end end
    assert.matches("bends tighter than the road is wide", first.detail, 1, true)
    assert.not_matches("vertex pool", first.detail, 1, true)
  end)

  it("psdl build writes the city and warns about that road only", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/zigzag.lua", ZIGZAG_CITY)
    local code, _, err = H.cli("build", dir .. "/zigzag.lua", "-o", dir .. "/zigzag.psdl", "-q")
    assert.are.equal(0, code, err)
    local doc = assert(psdl.read(dir .. "/zigzag.psdl"))
    local _, _, counts = psdl.validate(doc)
    assert.are.equal(0, counts.errors)
    local n = 0
    for l in err:gmatch("[^\n]+") do
      n = n + 1
      assert.matches("^psdl build: warning: repaired road 7 %(Zigzag%) at .-zigzag.lua:9 %([%a ]+%): .-zigzag.lua:9: road 7 %(Zigzag%)", l)
    end
    assert.is_true(n > 0)
  end)
end)

describe("psdl osm with a 2,000-point zigzag way", function()
  it("imports the map: the zigzag is simplified or repaired with a named reason, the rest kept", function()
    local function ll(x, z) return 51.5 + z / 111200, -0.1 + x / (111200 * math.cos(math.rad(51.5))) end
    local out, id, ways = { '<?xml version="1.0"?>', '<osm version="0.6">' }, 0, {}
    local function node(x, z)
      id = id + 1
      local lat, lon = ll(x, z)
      out[#out + 1] = string.format('<node id="%d" lat="%.8f" lon="%.8f"/>', id, lat, lon)
      return id
    end
    local grid = {}
    for i = 0, 2 do grid[i] = {} for j = 0, 2 do grid[i][j] = node(i * 200, j * 200) end end
    for i = 0, 2 do
      ways[#ways + 1] = { grid[i][0], grid[i][1], grid[i][2] }
      ways[#ways + 1] = { grid[0][i], grid[1][i], grid[2][i] }
    end
    local zig = { grid[2][1] }
    for k = 1, 2000 do zig[#zig + 1] = node(400 + 4000 * k / 2001, 200 + (k % 2 == 0 and 15 or -15)) end
    zig[#zig + 1] = node(4400, 200)
    ways[#ways + 1] = zig
    for w, refs in ipairs(ways) do
      local nds = {}
      for _, r in ipairs(refs) do nds[#nds + 1] = string.format('<nd ref="%d"/>', r) end
      out[#out + 1] = string.format('<way id="%d">%s<tag k="highway" v="residential"/></way>', 1000 + w,
        table.concat(nds))
    end
    out[#out + 1] = "</osm>"
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/zigzag.osm", table.concat(out, "\n"))
    local code, _, err = H.cli("osm", dir .. "/zigzag.osm", "-o", dir .. "/zigzag.psdl", "--report", dir .. "/r.json", "-q")
    assert.are.equal(0, code, err)
    local doc = assert(psdl.read(dir .. "/zigzag.psdl"))
    local _, _, counts = psdl.validate(doc)
    assert.are.equal(0, counts.errors)
    local r = cjson.decode(H.read_bytes(dir .. "/r.json"))
    -- the zigzag way (1007) is accounted for: its loss, a repair or a drop names it
    local named = false
    for _, list in ipairs({ r.kept.lost or {}, r.repairs, r.dropped }) do
      for _, e in ipairs(list) do if e.source and e.source:match("^way 1007") then named = true end end
    end
    assert.is_true(named)
    -- the grid's six streets are there in full
    for _, e in ipairs(r.dropped) do assert.is_nil(e.source:match("^way 100[1-6]$"), e.source) end
  end)
end)
