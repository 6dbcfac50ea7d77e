-- Specs for the OpenStreetMap importer (lua/psdl/osm.lua, lua/psdl/osm/*.lua) and the
-- `psdl osm` command. Run from the repository root; PSDL_BUILD_DIR names the build
-- directory (the command's file writing goes through the C module).

local osm = require "psdl.osm"
local reader = require "psdl.osm.reader"
local projection = require "psdl.osm.projection"
local tags = require "psdl.osm.tags"
local G = require "psdl.osm.geometry"
local fit = require "psdl.osm.fit"
local H = require "helper"

local DIR = "spec/fixtures/osm/"

local function import(name, opts)
  local net, report = osm.import(DIR .. name, opts)
  assert(net, report)
  return net, report
end

local function degrees(net)
  local d = {}
  for id in pairs(net.nodes) do d[id] = 0 end
  for _, r in ipairs(net.roads) do
    d[r.from] = d[r.from] + 1
    d[r.to] = d[r.to] + 1
  end
  return d
end

local function count(list, pred)
  local n = 0
  for _, v in ipairs(list) do if pred(v) then n = n + 1 end end
  return n
end

local function road_points(net, r)
  local a, b = net.nodes[r.from], net.nodes[r.to]
  local pts = { { a.x, a.z } }
  for _, v in ipairs(r.via or {}) do pts[#pts + 1] = { v[1], v[2] } end
  pts[#pts + 1] = { b.x, b.z }
  return pts
end

local function road_length(net, r) return G.length(road_points(net, r)) end

-- the node nearest to (x, z), and its distance
local function nearest_node(net, x, z)
  local best, bd
  for id, n in pairs(net.nodes) do
    local d = G.dist(n.x, n.z, x, z)
    if not bd or d < bd then best, bd = id, d end
  end
  return best, bd
end

local function problems_text(problems)
  local t = {}
  for _, p in ipairs(problems) do t[#t + 1] = p.kind .. ": " .. p.message end
  return table.concat(t, "\n")
end

-- every guarantee of docs/network.md and psdl.osm.check holds
local function assert_clean(net)
  for _, r in ipairs(net.roads) do
    assert.is_not_nil(net.nodes[r.from], "unknown from " .. tostring(r.from))
    assert.is_not_nil(net.nodes[r.to], "unknown to " .. tostring(r.to))
    assert.are_not.equal(r.from, r.to)
    assert.is_true(fit.footprint(r) > 0)
  end
  local problems = osm.check(net)
  assert.are.equal(0, #problems, problems_text(problems))
end

describe("psdl.osm reader", function()
  it("reads nodes, ways, tags, relations and bounds", function()
    local d = assert(osm.read(DIR .. "houston-fourth-ward.osm"))
    assert.are.equal(877, d.counts.nodes)
    assert.are.equal(141, d.counts.ways)
    assert.are.equal(0, d.counts.relations)
    assert.are.same({ minlat = 29.7545, minlon = -95.3815, maxlat = 29.7565, maxlon = -95.379 }, d.bounds)
    assert.are.same({ 29.7563968, -95.3831314 }, d.nodes[152153163])
    local ruthven
    for _, w in ipairs(d.ways) do
      if w.tags.name == "Ruthven Street" then ruthven = w break end
    end
    assert.is_not_nil(ruthven)
    assert.are.equal("residential", ruthven.tags.highway)
    assert.are.equal("yes", ruthven.tags.oneway)
    assert.is_true(#ruthven.nds >= 2)
    local l = assert(osm.read(DIR .. "leeds-potternewton.osm"))
    assert.are.equal(109, l.counts.nodes)
    assert.are.equal(35, l.counts.ways)
    assert.are.equal(3, l.counts.relations)
    assert.is_nil(l.bounds)
    local rel = l.relations[2]
    assert.are.equal(1269665, rel.id)
    assert.are.same({ type = "way", ref = 5098649, role = "from" }, rel.members[1])
    assert.are.equal("no_left_turn", rel.tags.restriction)
  end)

  it("streams: any chunk size gives the same data", function()
    local whole = assert(osm.read(DIR .. "houston-fourth-ward.osm"))
    local saved = reader.CHUNK
    reader.CHUNK = 7
    local ok, small = pcall(osm.read, DIR .. "houston-fourth-ward.osm")
    reader.CHUNK = saved
    assert.is_true(ok, small)
    assert.are.same(whole.nodes, small.nodes)
    assert.are.same(whole.ways, small.ways)
    local text = H.read_bytes(DIR .. "houston-fourth-ward.osm")
    local parsed = assert(osm.parse(text, "houston"))
    assert.are.same(whole.ways, parsed.ways)
  end)

  it("fails on malformed XML with the line and column", function()
    local d, msg, code = osm.read(DIR .. "malformed.osm")
    assert.is_nil(d)
    assert.are.equal("xml", code)
    assert.are.equal("psdl: xml: " .. DIR .. "malformed.osm:8:5: mismatched tag", msg)
  end)

  it("fails on XML that is not OSM, and on broken OSM elements, with the line", function()
    local d, msg, code = osm.read(DIR .. "not_osm.xml")
    assert.is_nil(d)
    assert.are.equal("not_osm", code)
    assert.are.equal("psdl: not_osm: " .. DIR .. "not_osm.xml:2:1: the root element is <gpx>, not <osm>", msg)
    d, msg, code = osm.parse('<osm version="0.6">\n\n  <node id="7" lat="91" lon="0"/>\n</osm>', "x.osm")
    assert.is_nil(d)
    assert.are.equal("bad_osm", code)
    assert.matches("^psdl: bad_osm: x%.osm:3:%d+: node 7: lat/lon missing or out of range", msg)
    -- a node id given twice: an exact repeat is read once, differing positions are refused
    d = assert(osm.parse('<osm>\n<node id="1" lat="50" lon="14"/>\n<node id="1" lat="50" lon="14"/>\n</osm>', "r.osm"))
    assert.are.same({ 50, 14 }, d.nodes[1])
    assert.are.equal(1, d.counts.nodes)
    d, msg, code = osm.parse('<osm>\n<node id="1" lat="50" lon="14"/>\n<node id="1" lat="51" lon="15"/>\n</osm>', "dup.osm")
    assert.is_nil(d)
    assert.are.equal("bad_osm", code)
    assert.matches("^psdl: bad_osm: dup%.osm:3:%d+: node 1 appears twice with different lat/lon %(first lat=50.*here lat=51, lon=15%)", msg)
    d, msg, code = osm.parse('<osm>\n<way id="x"/></osm>', "w.osm")
    assert.are.equal("bad_osm", code)
    assert.matches("w%.osm:2:%d+: <way> without a valid id", msg)
    d, msg, code = osm.parse("", "empty.osm")
    assert.are.equal("xml", code)
    assert.matches("empty%.osm:1:%d+: no element found", msg)
    d, msg, code = osm.read("spec/fixtures/osm/no-such-file.osm")
    assert.is_nil(d)
    assert.are.equal("io", code)
    assert.matches("^psdl: io: .*no%-such%-file%.osm", msg)
    assert.has_error(function() osm.read(42) end, "bad argument #1 to 'read' (string expected, got number)")
  end)

  it("leaves out deleted elements", function()
    local d = assert(osm.parse([[<osm version="0.6">
      <node id="1" lat="1" lon="1"/><node id="2" lat="1" lon="2" visible="false"/>
      <node id="3" lat="1" lon="3" action="delete"/>
      <way id="5" visible="false"><nd ref="1"/><nd ref="2"/></way></osm>]]))
    assert.are.equal(1, d.counts.nodes)
    assert.are.equal(0, d.counts.ways)
    assert.are.equal(3, d.counts.deleted)
    assert.is_nil(d.nodes[2])
  end)
end)

describe("psdl.osm projection", function()
  -- meridian arc length by Simpson's rule over the WGS 84 radius of curvature
  local a, f = 6378137, 1 / 298.257223563
  local e2 = f * (2 - f)
  local function arc(lat1, lat2)
    local n, sum = 2000, 0
    local p1, p2 = math.rad(lat1), math.rad(lat2)
    local h = (p2 - p1) / n
    for i = 0, n do
      local p = p1 + i * h
      local m = a * (1 - e2) / (1 - e2 * math.sin(p) ^ 2) ^ 1.5
      sum = sum + m * ((i == 0 or i == n) and 1 or (i % 2 == 1 and 4 or 2))
    end
    return sum * h / 3
  end

  it("puts the origin at 0, 0, east on +x and north on +z, in metres", function()
    local p = projection.new(53.82, -1.525)
    local x, z = p:forward(53.82, -1.525)
    assert.are.equal(0, x)
    assert.are.equal(0, z)
    x, z = p:forward(53.83, -1.525)
    assert.is_true(math.abs(x) < 1e-9 and z > 0)
    assert.is_true(math.abs(z - arc(53.82, 53.83)) < 1e-3)
    x, z = p:forward(53.82, -1.515)
    assert.is_true(x > 0)
    -- along the parallel: N cos(lat) dlon, to a millimetre over 660 m
    local phi = math.rad(53.82)
    local N = a / math.sqrt(1 - e2 * math.sin(phi) ^ 2)
    assert.is_true(math.abs(x - N * math.cos(phi) * math.rad(0.01)) < 1e-3)
    assert.is_true(z > 0 and z < 0.1) -- the parallel curves north of the grid line
  end)

  it("measures a degree of latitude at 45 N as the ellipsoid does", function()
    local p = projection.new(45, 0)
    local _, z1 = p:forward(44.5, 0)
    local _, z2 = p:forward(45.5, 0)
    assert.is_true(math.abs((z2 - z1) - arc(44.5, 45.5)) < 1e-3)
    assert.is_true(math.abs((z2 - z1) - 111131.78) < 0.01)
  end)

  it("keeps distances and angles within a millimetre per kilometre over a few kilometres", function()
    local p = projection.new(29.755, -95.38)
    for _, q in ipairs({ { 3000, 0 }, { 0, 3000 }, { -2500, 2500 }, { 2000, -1500 } }) do
      local lat, lon = p:inverse(q[1], q[2])
      local x, z = p:forward(lat, lon)
      assert.is_true(math.abs(x - q[1]) < 1e-3 and math.abs(z - q[2]) < 1e-3)
    end
    -- a 1 km north-east step 3 km east of the origin: 45 degrees and 1000 m
    local lat0, lon0 = p:inverse(3000, 0)
    local lat1, lon1 = p:inverse(3000 + 1000 / math.sqrt(2), 1000 / math.sqrt(2))
    local x0, z0 = p:forward(lat0, lon0)
    local x1, z1 = p:forward(lat1, lon1)
    assert.is_true(math.abs(G.dist(x0, z0, x1, z1) - 1000) < 1e-3)
    assert.has_error(function() projection.new(90, 0) end)
  end)

  it("describes itself", function()
    assert.are.equal("+proj=tmerc +lat_0=53.8200000 +lon_0=-1.5250000 +k=1 +x_0=0 +y_0=0 +datum=WGS84 +units=m",
      projection.describe(projection.new(53.82, -1.525)))
  end)
end)

describe("psdl.osm tags", function()
  local function profile(t, opts) local r = tags.road(t, opts or {}) return r and r.profile end

  it("maps highway classes to profiles", function()
    assert.are.equal("freeway", profile { highway = "motorway", oneway = "no" })
    assert.are.equal("alley", profile { highway = "motorway" }) -- one carriageway alone
    assert.are.equal("avenue", profile { highway = "trunk" })
    assert.are.equal("avenue", profile { highway = "primary" })
    assert.are.equal("avenue", profile { highway = "secondary" })
    assert.are.equal("street", profile { highway = "secondary", oneway = "yes" })
    for _, c in ipairs({ "tertiary", "residential", "unclassified" }) do
      assert.are.equal("street", profile { highway = c })
    end
    assert.are.equal("alley", profile { highway = "service" })
    assert.are.equal("alley", profile { highway = "living_street" })
    for _, c in ipairs({ "footway", "path", "steps", "cycleway" }) do
      local r, why = tags.road({ highway = c }, {})
      assert.is_nil(r)
      assert.are.equal("walkway (highway=" .. c .. ")", why)
      local w = tags.road({ highway = c }, { walkways = true })
      assert.are.equal("alley", w.profile)
      assert.is_true(w.walkway)
    end
    assert.is_nil(tags.road({ highway = "footway", footway = "sidewalk" }, { walkways = true }))
    assert.is_nil(profile { highway = "service", service = "driveway" })
    assert.are.equal("alley", profile({ highway = "service", service = "driveway" }, { driveways = true }))
    assert.are.equal("boulevard", profile({ highway = "primary" }, { profiles = { primary = "boulevard" } }))
    local r, why = tags.road({ highway = "proposed" }, {})
    assert.is_nil(r)
    assert.are.equal("highway=proposed", why)
    assert.is_nil(select(2, tags.road({ building = "yes" }, {})))
  end)

  it("reads lanes, widths, one-ways, bridges, tunnels and layers", function()
    local r = tags.road({ highway = "residential", lanes = "3", width = "7.5 m", oneway = "-1",
      bridge = "viaduct", layer = "2", name = "X" }, {})
    assert.are.equal(3, r.lanes)
    assert.are.equal(7.5, r.width)
    assert.are.equal(-1, r.oneway)
    assert.is_true(r.bridge)
    assert.are.equal(2, r.layer)
    r = tags.road({ highway = "primary", tunnel = "yes" }, {})
    assert.is_true(r.tunnel)
    assert.are.equal(-1, r.layer)
    r = tags.road({ highway = "primary", bridge = "yes" }, {})
    assert.are.equal(1, r.layer)
    r = tags.road({ highway = "primary", tunnel = "building_passage" }, {})
    assert.is_false(r.tunnel)
    assert.are.equal(0, r.layer)
    assert.are.equal(1, tags.road({ highway = "residential", junction = "roundabout" }, {}).oneway)
    assert.are.equal(1, tags.road({ highway = "motorway" }, {}).oneway)
    assert.are.equal(0, tags.road({ highway = "residential", oneway = "reversible" }, {}).oneway)
    r = tags.road({ highway = "residential", sidewalk = "left" }, {})
    assert.are.equal("one_sided", r.profile)
    assert.are.equal("left", r.sidewalk)
    assert.are.equal("none", tags.road({ highway = "primary", sidewalk = "no" }, {}).sidewalk)
    assert.are.equal("both", tags.road({ highway = "service", sidewalk = "both" }, {}).sidewalk)
    assert.is_nil(tags.road({ highway = "residential", sidewalk = "both" }, {}).sidewalk)
    assert.are.equal("right", tags.sidewalk({ ["sidewalk:left"] = "no", ["sidewalk:right"] = "separate" }))
    assert.are.equal("none", tags.sidewalk({ ["sidewalk:both"] = "no" }))
    assert.is_nil(tags.sidewalk({}))
    assert.are.equal(12.192, tags.length("40'"))
    assert.is_true(math.abs(tags.length("12'6\"") - 3.81) < 1e-9)
    assert.are.equal(3.5, tags.length("3,5"))
    assert.are.equal(1200, tags.length("1.2 km"))
    assert.is_nil(tags.length("wide"))
    assert.is_nil(tags.length("-3"))
    assert.are.equal(2, tags.count("2;3"))
    assert.are.equal(3, tags.count("2.5"))
    assert.is_nil(tags.count("many"))
  end)
end)

describe("psdl.osm network from hand-written snippets", function()
  it("crossroads: one junction of four roads", function()
    local net, report = import("crossroads.osm")
    assert.are.equal(5, report.counts.nodes)
    assert.are.equal(4, #net.roads)
    assert.are.equal(1, report.counts.junctions)
    assert.are.equal(4, report.counts.dead_ends)
    local d = degrees(net)
    assert.are.equal(4, d["1"])
    assert.is_true(math.abs(net.nodes["1"].x) < 0.5 and math.abs(net.nodes["1"].z) < 0.5)
    for _, r in ipairs(net.roads) do
      assert.are.equal("street", r.profile)
      assert.is_true(r.from == "1" or r.to == "1")
      assert.is_true(math.abs(road_length(net, r) - 100) < 1)
      assert.matches("^way 1[01]$", r.source)
    end
    -- the shape point 0.5 m off the line was simplified away
    assert.are.equal(0, count(net.roads, function(r) return r.via ~= nil end))
    assert.are.equal("node 1", net.nodes["1"].source)
    assert.matches("OpenStreetMap contributors", net.attribution)
    assert_clean(net)
  end)

  it("T junction: a junction of three roads; an almost-junction is joined; footways skipped", function()
    local net, report = import("tee.osm")
    local d = degrees(net)
    assert.are.equal(3, d["1"])
    local j, dist = nearest_node(net, 80, 0)
    assert.is_true(dist < 1)
    assert.are.equal(3, d[j])
    assert.are.equal(1, report.changes["dead ends joined to a road they almost touch (within 3 m)"])
    assert.are.equal(1, report.skipped["walkway (highway=footway)"])
    assert.are.equal(0, count(net.roads, function(r) return r.walkway end))
    assert_clean(net)
    local with = import("tee.osm", { walkways = true })
    local walk = {}
    for _, r in ipairs(with.roads) do if r.walkway then walk[#walk + 1] = r end end
    assert.are.equal(1, #walk)
    assert.are.equal("alley", walk[1].profile)
    assert.are.equal("footway", walk[1].highway)
    local dw = degrees(with)
    assert.are.same({ 1, 3 }, { math.min(dw[walk[1].from], dw[walk[1].to]), math.max(dw[walk[1].from], dw[walk[1].to]) })
  end)

  it("roundabouts: a big one stays a ring, a small one grows to the game's widths and stays a ring", function()
    local net, report = import("roundabout.osm")
    assert.are.equal(2, report.changes["roundabouts kept as a ring of roads"])
    assert.are.equal(1, report.changes["roundabouts enlarged to the game's widths"])
    assert.is_nil(report.changes["roundabouts collapsed into one junction"])
    local ring = {}
    for _, r in ipairs(net.roads) do if r.roundabout then ring[#ring + 1] = r end end
    assert.are.equal(8, #ring)
    local d = degrees(net)
    local next_of = {}
    for _, r in ipairs(ring) do
      assert.is_true(r.oneway)
      assert.are.equal(3, d[r.from])
      next_of[r.from] = r.to
    end
    -- each ring's roads run round in one direction: a cycle through four junctions
    for _, first in ipairs({ ring[1], ring[#ring] }) do
      local start = first.from
      local at, steps = start, 0
      repeat at, steps = next_of[at], steps + 1 until at == start or steps > 4
      assert.are.equal(4, steps)
    end
    -- the rings keep their round shape (shape points between the junctions)
    for _, r in ipairs(ring) do assert.is_true(r.via ~= nil and #r.via >= 1) end
    for _, n in pairs(net.nodes) do assert.is_nil(n.roundabout) end
    -- the small ring (radius 7 m, centre about 600 m east of the big one's) has grown: its
    -- junctions stand at least the street's width plus an island from its centre, nothing at
    -- the centre
    local c = net.nodes["200"]
    local east = {}
    for _, r in ipairs(ring) do
      local n = net.nodes[r.from]
      if n.x > 150 then east[#east + 1] = n end
    end
    assert.are.equal(4, #east)
    local cx, cz = 0, 0
    for _, n in ipairs(east) do cx, cz = cx + n.x / 4, cz + n.z / 4 end
    for _, n in ipairs(east) do
      local r = math.sqrt((n.x - cx) ^ 2 + (n.z - cz) ^ 2)
      assert.is_true(r > 2 * 7, "grown ring radius " .. r)
    end
    local _, bd = nearest_node(net, cx, cz)
    assert.is_true(bd > 15)
    assert.is_nil(c and c.roundabout)
    assert_clean(net)
    -- options: keep or collapse every ring
    local kept, rep1 = import("roundabout.osm", { roundabouts = "keep" })
    assert.are.equal(2, rep1.changes["roundabouts kept as a ring of roads"])
    assert_clean(kept)
    local collapsed, rep2 = import("roundabout.osm", { roundabouts = "collapse" })
    assert.are.equal(2, rep2.changes["roundabouts collapsed into one junction"])
    assert.are.equal(0, count(collapsed.roads, function(r) return r.roundabout end))
    assert.are.equal(8, #collapsed.roads)
  end)

  it("dual carriageway: one divided road, the cross street meets it once", function()
    local net, report = import("dual_carriageway.osm")
    assert.are.equal(1, report.changes["dual carriageways merged into one divided road"])
    assert.are.equal(0, count(net.roads, function(r) return r.oneway end))
    local divided = {}
    for _, r in ipairs(net.roads) do if r.divided then divided[#divided + 1] = r end end
    assert.are.equal(3, #divided)
    for _, r in ipairs(divided) do
      assert.are.equal("avenue", r.profile)
      assert.are.equal(4, r.lanes) -- 2 + 2
      assert.are.equal("Long Road", r.name)
      assert.are.equal("way 41, way 42", r.source)
      for _, p in ipairs(road_points(net, r)) do assert.is_true(math.abs(p[2]) < 1) end -- on the middle line
    end
    -- the middle piece keeps the estimated real median: 14 m apart, 2 x 3.5 m carriageways
    local mid = divided[2]
    assert.is_true(math.abs(mid.median - 7) < 0.5)
    local d = degrees(net)
    local cross, cd = nearest_node(net, 0, 0)
    assert.is_true(cd < 1)
    assert.are.equal(4, d[cross])
    local side, sd = nearest_node(net, 100, 0)
    assert.is_true(sd < 1)
    assert.are.equal(3, d[side])
    -- the taper nodes where the two-way road splits stay where they were
    assert.are.equal(2, d["2"])
    assert.are.equal(2, d["3"])
    assert_clean(net)
    -- without the merge pass, the junctions on the two carriageways are still too close
    -- and merge, so the carriageways between them become two-way roads; still clean
    local plain, rep2 = import("dual_carriageway.osm", { dual_carriageways = false })
    assert.is_nil(rep2.changes["dual carriageways merged into one divided road"])
    assert.are.equal(0, count(plain.roads, function(r) return r.divided end))
    assert_clean(plain)
  end)

  it("dual carriageways crossing: one junction of four divided roads", function()
    local net, report = import("dual_crossing.osm")
    assert.are.equal(2, report.changes["dual carriageways merged into one divided road"])
    local d = degrees(net)
    local j, jd = nearest_node(net, 0, 0)
    assert.is_true(jd < 2)
    assert.are.equal(4, d[j])
    assert.are.equal(4, count(net.roads, function(r) return r.divided end))
    -- the slip road ended on that junction at both ends: dropped, with the reason
    assert.are.equal(1, #report.dropped)
    assert.are.equal("way 105", report.dropped[1].source)
    assert.matches("^loop too small for its road", report.dropped[1].reason)
    assert_clean(net)
  end)

  it("bridge: no junction where it passes over; an unnoded crossing at grade is joined", function()
    local net, report = import("bridge.osm")
    local bridge
    for _, r in ipairs(net.roads) do if r.bridge then bridge = r end end
    assert.is_not_nil(bridge)
    assert.are.equal(1, bridge.layer)
    -- the 80 m bridge grew over its approaches to hold 60 m ramps at grade before the street
    assert.are.equal("way 51, way 52, way 53", bridge.source)
    for _, id in ipairs({ bridge.from, bridge.to }) do
      assert.is_true(math.abs(net.nodes[id].z) >= 60 + 9 - 0.01)
    end
    assert.are.equal(2, report.changes["bridges and tunnels extended over their approach roads (room for the ramps)"])
    -- Low Street is split only at the forgotten crossing
    local low = {}
    for _, r in ipairs(net.roads) do if r.name == "Low Street" then low[#low + 1] = r end end
    assert.are.equal(2, #low)
    local x = low[1].to == low[2].from and low[1].to or low[1].from
    local n = net.nodes[x]
    assert.is_true(math.abs(n.x - 120) < 1 and math.abs(n.z) < 1)
    assert.are.equal(4, degrees(net)[x])
    assert.are.equal(1, report.changes["at-grade crossings without a shared node joined"])
    local _, d0 = nearest_node(net, 0, 0)
    assert.is_true(d0 > 30)
    assert_clean(net)
  end)

  it("a bridge too short to clear the road under it grows over its approaches", function()
    -- a street W-E; a road N-S whose bridge is only 12 m long over it
    local function ll(x, z) return 51.5 + z / 111320, -0.1 + x / 69300 end
    local function node(id, x, z)
      local lat, lon = ll(x, z)
      return string.format('<node id="%d" lat="%.7f" lon="%.7f"/>', id, lat, lon)
    end
    local xml = '<osm version="0.6">' .. node(1, -150, 0) .. node(2, 150, 0) .. node(3, 0, -150)
      .. node(4, 0, -6) .. node(5, 0, 6) .. node(6, 0, 150)
      .. '<way id="10"><nd ref="1"/><nd ref="2"/><tag k="highway" v="residential"/></way>'
      .. '<way id="11"><nd ref="3"/><nd ref="4"/><tag k="highway" v="residential"/></way>'
      .. '<way id="12"><nd ref="4"/><nd ref="5"/><tag k="highway" v="residential"/><tag k="bridge" v="yes"/></way>'
      .. '<way id="13"><nd ref="5"/><nd ref="6"/><tag k="highway" v="residential"/></way></osm>'
    local net, report = osm.network(assert(osm.parse(xml)))
    local bridge
    for _, r in ipairs(net.roads) do if r.bridge then bridge = r end end
    assert.is_not_nil(bridge)
    assert.matches("way 11, way 12, way 13", bridge.source, 1, true)
    -- both ends have a 60 m ramp before the street's 18 m corridor, and no more
    local a, b = net.nodes[bridge.from], net.nodes[bridge.to]
    assert.is_true(math.abs(a.z) >= 69 - 0.01 and math.abs(b.z) >= 69 - 0.01)
    assert.is_true(road_length(net, bridge) < 2 * 69 + 5)
    assert.are.equal(2, report.changes["bridges and tunnels extended over their approach roads (room for the ramps)"])
    -- no room south of the street for a ramp (a dead end 30 m away): the crossing is made
    -- at grade, a junction
    local near = xml:gsub('<node id="3" lat="[%d.]+"', string.format('<node id="3" lat="%.7f"', 51.5 - 30 / 111320))
    local net2, rep2 = osm.network(assert(osm.parse(near)))
    assert.are.equal(1, rep2.changes["bridge and tunnel crossings made at grade (no room for the ramps)"])
    assert.are.equal(0, count(net2.roads, function(r) return r.bridge end))
    local d2, junctions = degrees(net2), {}
    for id, k in pairs(d2) do if k == 4 then junctions[#junctions + 1] = id end end
    assert.are.equal(1, #junctions)
    local jn = net2.nodes[junctions[1]]
    assert.is_true(math.abs(jn.z - net2.nodes["1"].z) < 0.5 and math.abs(jn.x - net2.nodes["3"].x) < 0.5)
    assert_clean(net2)
    -- a bridge over no road is an ordinary road (the map is flat)
    local flat = osm.network(assert(osm.parse(xml:gsub('<way id="10">.-</way>', ""))))
    assert.are.equal(0, count(flat.roads, function(r) return r.bridge end))
    assert.are.equal(0, #report.warnings)
    assert_clean(net)
  end)

  it("tunnel: passes under a street without a junction, on layer -1", function()
    local net = import("tunnel.osm")
    local tunnel
    for _, r in ipairs(net.roads) do if r.tunnel then tunnel = r end end
    assert.is_not_nil(tunnel)
    assert.are.equal(-1, tunnel.layer)
    assert.are.equal(0, count(net.roads, function(r) return r.bridge end))
    assert.are.equal(4, #net.roads)
    for _, r in ipairs(net.roads) do
      assert.is_true(degrees(net)[r.from] <= 2 and degrees(net)[r.to] <= 2)
    end
    assert_clean(net)
  end)

  it("buildings: footprints in metres, clockwise, with levels, heights and courtyards", function()
    local net, report = import("building.osm")
    assert.are.equal(3, #net.buildings)
    local by = {}
    for _, b in ipairs(net.buildings) do by[b.source] = b end
    local a = by["way 71"]
    assert.are.equal(3, a.levels)
    assert.is_nil(a.height)
    assert.are.equal(4, #a.outline)
    assert.is_true(G.area(a.outline) < 0) -- clockwise seen from above (retail winding)
    assert.is_true(math.abs(G.area(a.outline) + 400) < 3)
    local h = by["way 72"]
    assert.are.equal("house", h.kind)
    assert.are.equal(12.192, h.height)
    assert.are.equal(2, h.levels)
    assert.is_true(G.area(h.outline) < 0)
    local m = by["relation 80"]
    assert.are.equal("apartments", m.kind)
    assert.are.equal(18.5, m.height)
    assert.is_true(math.abs(G.area(m.outline) + 1600) < 10)
    assert.are.equal(1, #m.holes)
    assert.is_true(math.abs(G.area(m.holes[1]) - 400) < 3) -- counter-clockwise
    assert.are.equal(1, report.skipped["building: missing node references"])
    assert.are.equal(1, report.skipped["building: not a closed way"])
    assert.is_nil(report.skipped["not a road or building"]) -- the multipolygon's member ways
    local none = import("building.osm", { buildings = false })
    assert.are.equal(0, #none.buildings)
  end)

  it("a way with a missing node reference is cut there; one with nothing left is skipped", function()
    local net, report = import("missing_node.osm")
    assert.are.equal(2, #net.roads)
    for _, r in ipairs(net.roads) do
      assert.are.equal("Broken Street", r.name)
      assert.is_true(math.abs(road_length(net, r) - 100) < 1)
    end
    assert.are.equal(1, report.changes["roads cut at missing node references"])
    assert.are.equal(1, report.skipped["road with missing node references (nothing left)"])
  end)

  it("runs a reversed one-way the way traffic goes, its sides swapped", function()
    local data = assert(osm.parse([[<osm version="0.6">
      <node id="1" lat="51.5" lon="-0.1"/><node id="2" lat="51.5" lon="-0.099"/>
      <way id="3"><nd ref="1"/><nd ref="2"/><tag k="highway" v="residential"/>
        <tag k="oneway" v="-1"/><tag k="sidewalk" v="left"/></way></osm>]], "rev.osm"))
    local net = osm.network(data)
    assert.are.equal(1, #net.roads)
    local r = net.roads[1]
    assert.are.same({ "2", "1", true, "one_sided", "right" }, { r.from, r.to, r.oneway, r.profile, r.sidewalk })
    assert.is_true(net.nodes["2"].x > net.nodes["1"].x)
  end)

  it("a way going back over itself travels each stretch once (selfref.osm: out and back, lollipop, spur)", function()
    local net, report = import("selfref.osm")
    local by = {}
    for _, r in ipairs(net.roads) do
      local list = by[r.source] or {}
      by[r.source] = list
      list[#list + 1] = r
    end
    -- out and back (1-4-1, 111 m each way): one dead-end road to node 4, not a flat loop removed
    assert.are.equal(1, #by["way 21"])
    local r = by["way 21"][1]
    assert.are.same({ "1", "4" }, { r.from, r.to })
    assert.is_nil(report.changes["flat loops removed (left where two nodes became one)"])
    -- the spur doubling back (2-10-11-10) reaches 11; the one-way service road out and back is two-way
    assert.are.same({ "2", "11" }, { by["way 23"][1].from, by["way 23"][1].to })
    assert.are.same({ "13", "14", false }, { by["way 24"][1].from, by["way 24"][1].to, by["way 24"][1].oneway or false })
    -- the lollipop keeps its stem 3-5 and its ring (split into roads from node 5 back to 5)
    local stem, ring = 0, 0
    for _, q in ipairs(by["way 22"]) do
      if (q.from == "3" and q.to == "5") or (q.from == "5" and q.to == "3") then stem = stem + 1 else ring = ring + 1 end
    end
    assert.are.same({ 1, true }, { stem, ring >= 2 })
    assert.are.equal(4, report.changes["ways going back over themselves: the way back left out"])
    -- the input counts each stretch once, and all of it is kept
    local km = require "psdl.osm.kept"
    local m = km.measure(net.input, km.network_roads(net))
    assert.is_true(m.fraction > 0.99, tostring(m.fraction))
    assert.is_true(math.abs(m.input - 1137) < 15, tostring(m.input))
  end)

  it("psdl.osm.retrace leaves out the segments a way travels a second time", function()
    local R = require "psdl.osm.retrace"
    assert.is_nil(R.runs({ 1, 2, 3 }, false))
    assert.is_nil(R.runs({ 1, 2, 3, 1 }, false)) -- a closed way: no segment twice
    local runs, left = R.runs({ 1, 2, 1 }, false)
    assert.are.same({ { refs = { 1, 2 }, both = true } }, runs)
    assert.are.equal(1, left)
    runs = R.runs({ 1, 2, 3, 4, 3, 2, 5 }, false) -- out to 4, back to 2, on to 5
    assert.are.same({ { refs = { 1, 2, 3, 4 }, both = true }, { refs = { 2, 5 }, both = false } }, runs)
    -- one-way: the stretch driven both ways is a run of its own
    runs = R.runs({ 1, 2, 3, 4, 3 }, true)
    assert.are.same({ { refs = { 1, 2, 3 }, both = false }, { refs = { 3, 4 }, both = true } }, runs)
    -- clip points (tables) are never a retrace
    local edge = { 51.5, -0.1 }
    assert.are.same({ { refs = { edge, 1, 2 }, both = true } }, (R.runs({ edge, 1, 2, 1 }, false)))
  end)

  it("clips to a bbox: roads end at its edge, the rest is skipped", function()
    -- crossroads around 51.5 N, 0.1 W: keep x <= about 50 m, z >= -50 m
    local bbox = { -0.1020, 51.5 - 50 / 111320, -0.1 + 50 / 69300, 51.5020 }
    local net, report = import("crossroads.osm", { bbox = bbox })
    assert.are.equal(1, report.changes["roads clipped at the edge of the area"] and 1 or 0)
    local east = nil
    for id, n in pairs(net.nodes) do if id:match("^b") and n.x > 0 then east = n end end
    assert.is_not_nil(east)
    -- the projection is centred on the bbox now: compare in degrees through its centre
    assert.is_true(net.bounds.max_x - net.bounds.min_x < 200)
    local empty, rep2 = import("crossroads.osm", { bbox = { 10, 10, 11, 11 } })
    assert.are.equal(0, #empty.roads)
    assert.are.equal(2, rep2.skipped["road outside the clip area"])
  end)

  it("by default clips to the file's <bounds>, and keeps whole ways with clip = false", function()
    local clipped = import("houston-fourth-ward.osm")
    local whole = import("houston-fourth-ward.osm", { clip = false })
    local function extent(net)
      local b = net.bounds
      return b.max_x - b.min_x
    end
    assert.is_true(extent(clipped) < 300)
    assert.is_true(extent(whole) > 500)
  end)

  it("scales every distance", function()
    local one = import("crossroads.osm")
    local two = import("crossroads.osm", { scale = 2 })
    assert.is_true(math.abs(road_length(two, two.roads[1]) - 2 * road_length(one, one.roads[1])) < 0.05)
  end)

  it("without the clean-up gives the ways split at shared nodes", function()
    local net = import("dual_carriageway.osm", { cleanup = false })
    assert.is_true(count(net.roads, function(r) return r.oneway end) >= 4)
    local raw = import("crossroads.osm", { cleanup = false })
    assert.are.equal(4, #raw.roads)
    assert.are.equal(1, #raw.roads[2].via) -- the shape point is still there
  end)

  it("rejects unknown and malformed options", function()
    local data = assert(osm.read(DIR .. "crossroads.osm"))
    assert.has_error(function() osm.network(data, { colour = "red" }) end,
      "bad argument #2 to 'network' (unknown option 'colour')")
    assert.has_error(function() osm.network(data, { bbox = { 1, 2, 0, 3 } }) end)
    assert.has_error(function() osm.network(data, { profiles = { primary = "highway" } }) end,
      "bad argument #2 to 'network' (profiles.primary: unknown profile 'highway')")
    assert.has_error(function() osm.network(data, { roundabouts = "sometimes" }) end)
    assert.has_error(function() osm.network(data, { dimensions = { colour = 1 } }) end)
    assert.has_error(function() osm.network({}, {}) end)
  end)
end)

describe("psdl.osm on the shared extracts", function()
  it("Houston, Fourth Ward: a clean grid of one-way streets and alleys with its buildings", function()
    local net, report = import("houston-fourth-ward.osm")
    local c = report.counts
    assert.are.equal(106, c.buildings)
    assert.are.equal(14, report.skipped["building outside the clip area"])
    assert.are.equal(1, report.skipped["service=driveway"])
    assert.is_true(c.junctions >= 20)
    assert.is_true(c.by_profile.street >= 30 and c.by_profile.alley >= 8)
    -- every street of the grid is one-way (tagged so), with its lane count
    local oneway = count(net.roads, function(r) return r.highway == "residential" and r.oneway and r.lanes == 1 end)
    assert.is_true(oneway >= 30)
    -- the origin is the centre of the extract's <bounds>
    assert.is_true(math.abs(net.origin.lat - 29.7555) < 1e-9 and math.abs(net.origin.lon + 95.38025) < 1e-9)
    assert.are.equal(0, #report.warnings)
    assert_clean(net)
  end)

  it("Leeds, Potternewton: fragments cut at the extract's missing nodes, cleaned", function()
    local net, report = import("leeds-potternewton.osm")
    assert.are.equal(9, report.skipped["road with missing node references (nothing left)"])
    assert.are.equal(5, report.skipped["walkway (highway=footway)"] + report.skipped["walkway (highway=path)"])
    assert.are.equal(1, report.counts.by_profile.avenue) -- the secondary road
    assert.is_true(#net.roads >= 12)
    assert.are.equal(0, #net.buildings)
    assert_clean(net)
  end)
end)

describe("psdl.osm.check", function()
  local function street(from, to, via) return { from = from, to = to, via = via, profile = "street" } end

  it("accepts a clean crossroads and finds what would overlap", function()
    local net = {
      nodes = { a = { x = 0, z = 0 }, b = { x = 100, z = 0 }, c = { x = -100, z = 0 }, d = { x = 0, z = 100 },
        e = { x = 0, z = -100 } },
      roads = { street("a", "b"), street("a", "c"), street("a", "d"), street("a", "e") },
    }
    assert.are.same({}, osm.check(net))
    -- a crossing without a node
    net.nodes.f, net.nodes.g = { x = 50, z = -50 }, { x = 50, z = 50 }
    net.roads[5] = street("f", "g")
    local p = osm.check(net)
    assert.are.equal("crossing", p[1].kind)
    assert.are.same({ 1, 5 }, p[1].roads)
    -- a parallel street 6 m away
    net.roads[5] = nil
    net.nodes.f, net.nodes.g = { x = 20, z = 6 }, { x = 90, z = 6 }
    net.roads[5] = street("f", "g")
    p = osm.check(net)
    assert.are.equal(1, #p)
    assert.are.equal("overlap", p[1].kind)
    -- a road too short for its two junctions, an acute angle, a loop, an unknown node
    local short = {
      nodes = { a = { x = 0, z = 0 }, b = { x = 10, z = 0 }, c = { x = -50, z = 0 }, d = { x = 0, z = 50 },
        e = { x = 10, z = 50 }, f = { x = 60, z = 0 }, g = { x = 10, z = -50 }, h = { x = 50, z = 10 } },
      roads = { street("a", "b"), street("c", "a"), street("a", "d"), street("b", "e"), street("b", "f"),
        street("b", "g"), street("b", "h"), street("f", "f", { { 70, 10 }, { 70, -10 } }), street("a", "zz") },
    }
    local kinds = {}
    for _, q in ipairs(osm.check(short)) do kinds[q.kind] = (kinds[q.kind] or 0) + 1 end
    assert.is_true(kinds.short >= 1)
    assert.is_true(kinds.angle >= 1)
    assert.are.equal(1, kinds.loop)
    assert.are.equal(1, kinds.invalid)
  end)

  it("assumes the cross-sections city generation builds (psdl.city.profiles)", function()
    local ok, profiles = pcall(require, "psdl.city.profiles")
    if not ok or type(profiles) ~= "table" or not profiles.PROFILES then
      pending("psdl.city.profiles is not available: " .. tostring(profiles))
      return
    end
    local SIDES = { both = 2, left = 1, right = 1, none = 0 }
    for name, mine in pairs(fit.dimensions.profiles) do
      local theirs = profiles.PROFILES[name]
      assert.is_table(theirs, name)
      local function total(p, lane)
        local cw = p.width or (p.lanes or 0) * (p.lane_width or lane)
        local sides = p.sides
        if type(sides) == "string" then sides = SIDES[sides] end
        if p.kind == "walkway" then sides = 0 end
        return cw + (sides or 0) * (p.sidewalk or 0) + (p.median or 0)
      end
      assert.are.equal(total(theirs, 5), total(mine, fit.dimensions.lane), name)
      assert.are.equal((theirs.crosswalk or 0) > 0, mine.crosswalk == true, name .. " crosswalk")
      if theirs.crosswalk and theirs.crosswalk > 0 then assert.are.equal(theirs.crosswalk, fit.dimensions.crosswalk) end
    end
    local tunnel = require "psdl.city.tunnel"
    assert.are.equal(tunnel.BRIDGE.ramp, fit.dimensions.ramp)
    assert.are.equal(tunnel.TUNNEL.ramp, fit.dimensions.ramp)
  end)

  it("measures road widths the way city generation builds them", function()
    assert.are.equal(18, fit.footprint({ profile = "street" }))            -- 2 x 5 + 2 x 4
    assert.are.equal(13, fit.footprint({ profile = "street", lanes = 1 }))
    assert.are.equal(5, fit.footprint({ profile = "alley" }))
    assert.are.equal(4, fit.footprint({ profile = "alley", walkway = true }))
    assert.are.equal(32, fit.footprint({ profile = "avenue" }))            -- 20 + 2 + 10
    assert.are.equal(38, fit.footprint({ profile = "boulevard" }))
    assert.are.equal(33, fit.footprint({ profile = "freeway" }))
    assert.are.equal(11, fit.footprint({ profile = "street", width = 7, sidewalk = "left" }))
    assert.are.equal(12, fit.footprint({ profile = "street" }, fit.resolve({ lane = 2, sidewalk = 4 })))
  end)
end)

describe("psdl.osm on a synthetic town", function()
  local synth = dofile("bench/osm_synth.lua")

  it("imports thousands of ways, merging avenues and motorways, keeping roundabouts and bridges", function()
    local xml, info = synth.generate { cols = 24, rows = 24 }
    assert.is_true(info.ways > 3000)
    local t0 = os.clock()
    local data = assert(osm.parse(xml, "synthetic.osm"))
    local net, report = osm.network(data)
    local seconds = os.clock() - t0
    -- a generous bound for slow machines; bench/bench_osm.lua prints the real figures
    assert.is_true(seconds < 30, "import took " .. seconds .. " s")
    -- no one-way carriageway of an avenue or the motorway is left
    assert.are.equal(0, count(net.roads, function(r)
      return r.oneway and (r.highway == "primary" or r.highway == "motorway")
    end))
    assert.are.equal(info.avenues + 1, report.changes["dual carriageways merged into one divided road"])
    -- every roundabout kept as a ring of four roads
    assert.are.equal(info.roundabouts, report.changes["roundabouts kept as a ring of roads"])
    assert.are.equal(4 * info.roundabouts, count(net.roads, function(r) return r.roundabout end))
    -- the motorway's bridges, 40 m apart, became one elevated freeway over every street,
    -- with its ramps at grade past the town's edge
    local deck = {}
    for _, r in ipairs(net.roads) do if r.highway == "motorway" and r.bridge then deck[#deck + 1] = r end end
    assert.are.equal(1, #deck)
    assert.are.equal("freeway", deck[1].profile)
    assert.is_true(road_length(net, deck[1]) > 24 * 100)
    assert.are.equal(3, count(net.roads, function(r) return r.highway == "motorway" end))
    assert.are.equal(0, count(net.roads, function(r) return r.highway == "motorway" and not r.divided end))
    assert.are.equal(info.buildings, #net.buildings)
    assert.are.equal(0, #report.dropped)
    assert_clean(net)
    -- the same input gives the same network
    local again = osm.network(assert(osm.parse(xml, "synthetic.osm")))
    assert.are.same(net.roads, again.roads)
    assert.are.same(net.nodes, again.nodes)
  end)
end)

describe("psdl osm (command)", function()
  local cjson = require "cjson"

  local run = H.cli
  local function tmp(suffix) return H.tmp(finally, suffix) end

  it("prints a summary and writes the network as JSON and a picture", function()
    local json, svg = tmp(".json"), tmp(".svg")
    local code, out, err = run("osm", DIR .. "leeds-potternewton.osm", "--network-json", json, "--svg", svg)
    assert.are.equal(0, code, err)
    assert.matches("109 nodes, 35 ways, 3 relations read", out, 1, true)
    assert.matches("network: %d+ nodes %(%d+ junctions, %d+ dead ends%), %d+ roads", out)
    assert.matches("skipped %(25%):", out)
    assert.matches("       9  road with missing node references %(nothing left%)", out)
    assert.matches("problems left: none", out, 1, true)
    local doc = cjson.decode(H.read_bytes(json))
    assert.are.equal("psdlkit-network", doc.format)
    assert.are.equal(1, doc.version)
    assert.are.equal(15, #doc.roads)
    assert.is_table(doc.nodes[doc.roads[1].from])
    assert.matches("OpenStreetMap contributors", doc.attribution)
    local net = assert(osm.decode_network(H.read_bytes(json)))
    assert.are.same({}, osm.check(net))
    local direct = import("leeds-potternewton.osm")
    assert.are.same(direct.nodes, net.nodes)
    assert.are.same(direct.roads, net.roads)
    local picture = H.read_bytes(svg)
    assert.matches("^<svg ", picture)
    assert.matches("© OpenStreetMap contributors", picture, 1, true)
  end)

  it("prints the report as JSON", function()
    local code, out = run("osm", DIR .. "houston-fourth-ward.osm", "--json")
    assert.are.equal(0, code)
    local doc = cjson.decode(out)
    assert.are.equal("psdlkit-osm-report", doc.format)
    assert.are.equal(106, doc.report.counts.buildings)
    assert.are.equal(14, doc.report.skipped["building outside the clip area"])
  end)

  it("fails on malformed XML with the line, and on a bad bbox", function()
    local code, _, err = run("osm", DIR .. "malformed.osm")
    assert.are.equal(2, code)
    assert.are.equal("psdl osm: xml: " .. DIR .. "malformed.osm:8:5: mismatched tag\n", err)
    code, _, err = run("osm", DIR .. "no-such.osm")
    assert.are.equal(3, code)
    code, _, err = run("osm", DIR .. "crossroads.osm", "--bbox", "1,2,3")
    assert.are.equal(1, code)
    assert.matches("four numbers", err)
  end)

  it("takes the clean-up options", function()
    local code, out = run("osm", DIR .. "roundabout.osm", "--roundabouts", "collapse", "--verbose")
    assert.are.equal(0, code)
    assert.matches("2  roundabouts collapsed into one junction", out, 1, true)
    code, out = run("osm", DIR .. "dual_carriageway.osm", "--no-dual", "--raw", "-q")
    assert.are.equal(0, code)
    assert.are.equal("", out)
    code, out = run("osm", DIR .. "tee.osm", "--walkways", "--scale", "1.5", "--lane-width", "4")
    assert.are.equal(0, code)
    assert.matches("1 alley", out, 1, true)
  end)
end)
