-- Specs for OpenStreetMap extracts turned into cities: `psdl.osm` → `psdl.city` →
-- validated PSDL, for the hand-written snippets, both shared extracts, a synthetic town of
-- thousands of ways, a fixed set of random towns (bench/city_fuzz.lua) and `psdl osm -o`.
-- Every city must validate without errors and warnings, keep every perimeter within 255
-- points and have no two ordinary rooms overlapping in plan.

local psdl = require "psdl"
local osm = require "psdl.osm"
local city_mod = require "psdl.city"
local H = require "helper"
local fuzz = dofile("bench/city_fuzz.lua")

local DIR = "spec/fixtures/osm/"

-- Drivability findings of issue 14 (docs/validate.md) in the builder's output that the
-- builder does not avoid yet: tolerated here so that everything else stays checked, and
-- listed as pending below (rule name -> what). Empty: the builder avoids every finding so
-- far (spikes, kinks, holes, corner sidewalks outside their rooms).
local KNOWN = {}

-- Imports, builds (buildings on the footprints) and checks a city; returns doc, report, net.
-- Built without the validation gate, then validated: problems of a KNOWN rule are left to
-- assert_clean_city.
local function city_of(net, opts)
  opts = opts or {}
  local c = city_mod.from_network(net, { style = opts.style or "london", seed = opts.seed or 1 })
  c:blocks { buildings = opts.buildings or (opts.procedural and {} or false) }
  local doc, report = c:build { validate = false }
  local _, problems, counts = psdl.validate(doc)
  report.problems, report.counts = problems, counts
  return doc, report
end

-- The problems of a list that are not KNOWN findings.
local function unknown(problems)
  local out = {}
  for _, p in ipairs(problems or {}) do
    if not KNOWN[p.rule] then out[#out + 1] = p end
  end
  return out
end

local function problems_text(report)
  local t = {}
  for _, p in ipairs(report.problems or {}) do
    t[#t + 1] = string.format("%s %s %s: %s", p.severity, p.rule, p.path, p.message)
  end
  return table.concat(t, "\n")
end

local function assert_clean_city(doc, report)
  local left = unknown(report.problems)
  assert.are.equal(0, #left, problems_text({ problems = left }))
  local bad = fuzz.check(doc)
  assert.are.same({}, bad)
  -- the bytes validate as read back
  local _, problems = psdl.validate(assert(psdl.decode(psdl.encode(doc))))
  left = unknown(problems)
  assert.are.equal(0, #left, left[1] and left[1].message)
end

describe("drivability findings the builder does not fix yet (issue 14)", function()
  for rule, what in pairs(KNOWN) do pending(rule .. ": " .. what) end
end)

describe("OSM snippets to cities", function()
  for _, name in ipairs({ "crossroads", "tee", "roundabout", "dual_carriageway", "dual_crossing", "bridge",
                          "tunnel", "building", "missing_node" }) do
    it(name .. " imports to a city with no validation problems and no overlapping rooms", function()
      local net = assert(osm.import(DIR .. name .. ".osm"))
      assert.is_true(#net.roads > 0)
      for _, style in ipairs({ "london", "sf" }) do
        local doc, report = city_of(net, { style = style })
        assert_clean_city(doc, report)
        assert.is_true(report.kinds.road > 0)
      end
    end)
  end

  it("bridge and tunnel: the deck and the bore are warp rooms over / under the street", function()
    local _, rb = city_of(assert(osm.import(DIR .. "bridge.osm")))
    assert.is_true(rb.kinds.bridge > 0)
    local _, rt = city_of(assert(osm.import(DIR .. "tunnel.osm")))
    assert.is_true(rt.kinds.tunnel > 0)
  end)

  it("building footprints become buildings in their block", function()
    local net = assert(osm.import(DIR .. "building.osm"))
    assert.is_true(#net.buildings > 0)
    local _, report = city_of(net)
    assert.is_true(report.blocks.footprints > 0)
    assert.is_true(report.blocks.buildings >= report.blocks.footprints)
  end)
end)

describe("OSM extracts to cities", function()
  it("Houston, Fourth Ward: a grid of streets and alleys with its building footprints", function()
    local net = assert(osm.import(DIR .. "houston-fourth-ward.osm"))
    for _, style in ipairs({ "london", "sf" }) do
      local doc, report = city_of(net, { style = style })
      assert_clean_city(doc, report)
      assert.is_true(report.kinds.intersection >= 20)
      assert.is_true(report.blocks.blocks >= 6)
      assert.is_true(report.blocks.footprints >= 60, "footprints placed: " .. report.blocks.footprints)
      assert.is_true(#doc.rooms < 1000)
    end
    -- with generated rows too
    local doc, report = city_of(net, { procedural = true, seed = 5 })
    assert_clean_city(doc, report)
    assert.is_true(report.blocks.buildings > report.blocks.footprints)
  end)

  it("Leeds, Potternewton: curved streets in separate pieces, a bend and transitions", function()
    local net = assert(osm.import(DIR .. "leeds-potternewton.osm"))
    for _, style in ipairs({ "london", "sf" }) do
      local doc, report = city_of(net, { style = style })
      assert_clean_city(doc, report)
      assert.is_true(report.kinds.road >= 15)
      -- the ground round the pieces is cut by chords (holes joined), not into slivers
      assert.is_true(report.kinds.block < 150, report.kinds.block .. " block rooms")
      for _, w in ipairs(report.blocks.warnings) do assert.not_matches("cannot join a hole", w) end
    end
  end)

  it("scaled by 1.5, and with walkways, both still build clean", function()
    for _, f in ipairs({ "houston-fourth-ward", "leeds-potternewton" }) do
      assert_clean_city(city_of(assert(osm.import(DIR .. f .. ".osm", { walkways = true }))))
      assert_clean_city(city_of(assert(osm.import(DIR .. f .. ".osm", { scale = 1.5 }))))
    end
  end)
end)

-- Plan polygon {x, z} of a document room's perimeter.
local function room_poly(doc, id)
  local poly = {}
  for _, p in ipairs(doc.rooms[id].perimeter) do
    local v = doc.vertices[p.vertex]
    poly[#poly + 1] = { v[1], v[3] }
  end
  return poly
end

describe("buildings of an imported city", function()
  it("footprints reaching over the sidewalks are cut back inside their block room", function()
    local net = assert(osm.import(DIR .. "houston-fourth-ward.osm"))
    local doc, report = city_of(net)
    local bl = report.blocks
    assert.is_true(bl.footprints >= 100, "placed " .. bl.footprints)
    assert.is_true(bl.footprints_clipped > 10)
    local why = 0
    for _, n in pairs(bl.footprints_why) do why = why + n end
    assert.are.equal(#net.buildings - bl.footprints, why)
    -- every building stands inside its room, at least 5 cm off its edges
    for _, b in ipairs(bl.building_list) do
      local poly = room_poly(doc, b.room.id)
      for _, p in ipairs(b.outline) do
        assert.is_true(fuzz.inside(p[1], p[3], poly, 0.05), string.format("(%.2f, %.2f) off room %d", p[1], p[3],
          b.room.id))
      end
    end
  end)

  it("blocks under a bridge deck get buildings below the deck, or none", function()
    local synth = dofile("bench/osm_synth.lua")
    local xml = synth.generate { cols = 6, rows = 6 }
    local net = osm.network(assert(osm.parse(xml, "synthetic.osm")))
    local doc, report = city_of(net, { procedural = true })
    assert.are.equal(0, report.counts.errors)
    local decks = {}
    for _, r in ipairs(report.builder.rooms) do
      if r.is_bridge then
        local low = math.huge
        for _, p in ipairs(doc.rooms[r.id].perimeter) do low = math.min(low, doc.vertices[p.vertex][2]) end
        decks[#decks + 1] = { poly = room_poly(doc, r.id), low = low }
      end
    end
    assert.is_true(#decks > 0)
    local under = 0
    for _, b in ipairs(report.blocks.building_list) do
      for _, d in ipairs(decks) do
        local hit = false
        for _, p in ipairs(b.outline) do
          if fuzz.inside(p[1], p[3], d.poly, 0) then hit = true end
        end
        if hit then
          under = under + 1
          assert.is_true(b.top <= d.low - 1 + 1e-6, string.format("a building %.1f m high under a deck at %.1f m",
            b.top, d.low))
        end
      end
    end
    assert.is_true(under > 0) -- the motorway runs over a row of blocks
  end)
end)

describe("a synthetic town of thousands of ways to a city", function()
  it("imports and builds within seconds, with no validation problems", function()
    local synth = dofile("bench/osm_synth.lua")
    local xml, info = synth.generate { cols = 20, rows = 20 }
    assert.is_true(info.ways > 2000)
    local t0 = os.clock()
    local net = osm.network(assert(osm.parse(xml, "synthetic.osm")))
    local doc, report = city_of(net)
    local seconds = os.clock() - t0
    -- generous for slow machines (about 1 s here; bench/README.md)
    assert.is_true(seconds < 30, "took " .. seconds .. " s")
    assert.are.equal(0, report.counts.errors, problems_text(report))
    assert.is_true(report.kinds.bridge > 0)
    assert.is_true(report.blocks.blocks > 300)
    for _, room in ipairs(doc.rooms) do assert.is_true(#room.perimeter <= 255) end
  end)
end)

describe("random towns (bench/city_fuzz.lua)", function()
  -- seeds that build clean; `lua5.4 bench/city_fuzz.lua 1 200` runs many more
  -- (3, 16, 28, 38, 51, 64, 65, 94, 117: overlaps, folds or fans fixed in the importer and the
  -- junction kernel)
  local SEEDS = { 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 27, 28, 34, 38,
                  42, 50, 51, 64,
                  65, 81, 94, 100, 117, 137 }
  it("jittered, skewed, curvy networks with mixed profiles build clean", function()
    for _, seed in ipairs(SEEDS) do
      -- as fuzz.run(seed) builds them, without the validation gate (KNOWN findings aside)
      local net = fuzz.network(seed, {})
      local doc, report = city_of(net, { style = seed % 2 == 0 and "sf" or "london", seed = seed,
                                         buildings = { floors = { 1, 6 } } })
      local left = unknown(report.problems)
      assert.are.equal(0, #left, "seed " .. seed .. ": " .. problems_text({ problems = left }))
      assert.are.same({}, fuzz.check(doc), "seed " .. seed)
    end
  end)

  it("the generator is deterministic", function()
    local a = fuzz.generate(7)
    local b = fuzz.generate(7)
    assert.are.same(a, b)
  end)
end)

describe("psdl osm -o (command)", function()
  local cjson = require "cjson"

  local run = H.cli
  local function tmp(suffix) return H.tmp(finally, suffix) end

  it("builds the city, writes it and its preview, and prints the summary", function()
    local out_psdl, png = tmp(".psdl"), tmp(".png")
    local code, out, err = run("osm", DIR .. "houston-fourth-ward.osm", "-o", out_psdl, "--preview", png,
      "--seed", "3", "--style", "sf")
    assert.are.equal(0, code, err)
    assert.matches("network: %d+ nodes", out)
    assert.matches("rooms %(%d+ road, %d+ intersection, %d+ block", out)
    assert.matches("blocks: %d+ blocks, %d+ buildings", out)
    assert.matches("validation: 0 errors, 0 warnings", out, 1, true)
    assert.matches("footprints: %d+ of 106 placed as buildings", out)
    assert.matches("skipped %(%d+%):", out)
    assert.matches("written: .*%(city%)", out)
    assert.matches("x %d+ px map", out)
    local doc = assert(psdl.read(out_psdl))
    assert.is_true(#doc.rooms > 50)
    assert.is_true(psdl.validate(doc))
    assert.are.equal("\137PNG", H.read_bytes(png):sub(1, 4))
    -- no progress unless asked (stderr is no terminal here)
    assert.are.equal("", err)
    -- the same seed gives the same bytes
    local again = tmp(".psdl")
    assert.are.equal(0, (run("osm", DIR .. "houston-fourth-ward.osm", "-o", again, "--seed", "3", "--style", "sf",
      "-q")))
    assert.are.equal(H.read_bytes(out_psdl), H.read_bytes(again))
  end)

  it("shows progress on stderr with --progress, and the city in the JSON report", function()
    local out_psdl = tmp(".psdl")
    local code, out, err = run("osm", DIR .. "leeds-potternewton.osm", "-o", out_psdl, "--progress", "--json")
    assert.are.equal(0, code, err)
    assert.matches("psdl osm: reading...", err, 1, true)
    assert.matches("psdl osm: building the city", err, 1, true)
    assert.matches("psdl osm: writing", err, 1, true)
    local rep = cjson.decode(out)
    assert.are.equal("psdlkit-osm-report", rep.format)
    assert.are.equal(0, rep.city.validation.errors)
    -- warnings: only KNOWN drivability findings (a spike in Leeds, pending above)
    for _, p in ipairs(rep.city.problems or {}) do assert.truthy(KNOWN[p.rule], p.rule .. ": " .. p.message) end
    assert.are.equal(#(rep.city.problems or {}), rep.city.validation.warnings)
    assert.is_true(rep.city.rooms > 0)
  end)

  it("refuses options that need -o, and a bad preview name, before reading", function()
    local code, _, err = run("osm", DIR .. "tee.osm", "--preview", "map.png")
    assert.are.equal(1, code)
    assert.matches("needs %-o", err)
    code, _, err = run("osm", DIR .. "tee.osm", "-o", tmp(".psdl"), "--preview", "map.gif")
    assert.are.equal(1, code)
    assert.matches("%.png or %.svg", err)
    code, _, err = run("osm", DIR .. "tee.osm", "-o", tmp(".psdl"), "--seed", "x")
    assert.are.equal(1, code)
    assert.matches("integer", err)
  end)

  it("writes nothing when the extract has no roads", function()
    local osm_file, out_psdl = tmp(".osm"), tmp(".psdl")
    H.write_bytes(osm_file, '<?xml version="1.0"?>\n<osm version="0.6"><node id="1" lat="51" lon="0"/></osm>\n')
    local code, _, err = run("osm", osm_file, "-o", out_psdl)
    assert.are.equal(2, code)
    assert.matches("no drivable road", err)
    assert.is_nil(io.open(out_psdl, "rb"))
  end)
  it("a road whose centre line crosses itself is dropped with its reason, the rest is built", function()
    -- psdl.city refuses such a road (a script's mistake); an import must not lose the city for it
    local net = {
      nodes = { a = { x = 0, z = 0 }, b = { x = 200, z = 0 }, c = { x = 100, z = 150 }, d = { x = 100, z = -150 },
                e = { x = 0, z = 200 }, f = { x = 200, z = 200 } },
      roads = {
        { from = "a", to = "b", highway = "residential", source = 1, name = "Main" },
        { from = "c", to = "d", highway = "residential", source = 2 },
        { from = "e", to = "f", highway = "residential", source = 3, name = "Loop",
          via = { { 150, 300 }, { 150, 250 }, { 50, 350 } } },
      },
    }
    local doc, city_report, result = require("psdl.osm.city").build(net, { dropped = {} }, { seed = 1 })
    assert.are.equal(0, city_report.counts.errors)
    assert.is_true(#doc.rooms > 0)
    local found
    for _, d in ipairs(result.dropped) do
      if d.reason == "crosses itself" then found = d end
    end
    assert.is_table(found)
    assert.are.equal(3, found.source)
    assert.matches("crosses itself at %(120%.0, 280%.0%)", found.detail)
    -- under strict the road is refused, naming it
    local ok, err = pcall(require("psdl.osm.city").build, net, { dropped = {} }, { seed = 1, strict = true })
    assert.is_false(ok)
    assert.matches("crosses itself", tostring(err))
  end)
end)

describe("psdl osm when simplifying leaves no road (newcomer finding 1)", function()
  it("says which stage took the last road out and the build's reason, and writes the --report", function()
    local dir = H.tmpdir(finally)
    -- one residential way, a spiral of 8,000 nodes (about 15 km across): far over the vertex budget
    local parts = { '<?xml version="1.0"?>\n<osm version="0.6">\n' }
    local refs = {}
    for i = 0, 7999 do
      local a, r = i * 0.05, 0.00001 * i
      parts[#parts + 1] = string.format('<node id="%d" lat="%.9f" lon="%.9f"/>\n', i + 1, 51.5 + r * math.sin(a),
        -0.1 + r * math.cos(a))
      refs[#refs + 1] = string.format('<nd ref="%d"/>', i + 1)
    end
    parts[#parts + 1] = '<way id="1">' .. table.concat(refs) .. '<tag k="highway" v="residential"/></way>\n</osm>\n'
    H.write_bytes(dir .. "/spiral.osm", table.concat(parts))
    local code, _, err = H.cli("osm", dir .. "/spiral.osm", "--max-extent", "100", "-o", dir .. "/s.psdl",
      "--report", dir .. "/s.json")
    assert.equal(2, code)
    assert.matches("the city cannot be built: no roads left: simplifying to fit the game's limits (", err, 1, true)
    assert.matches("residential dead ends left out (1 roads)", err, 1, true)
    assert.matches("took the last road out; the build before it: roads[1] (way 1): ", err, 1, true)
    assert.matches("above the safe budget of 65024", err, 1, true)
    local rep = require("cjson").decode(H.read_bytes(dir .. "/s.json"))
    assert.equal("limits", rep.failure.stage)
    assert.matches("took the last road out", rep.failure.message, 1, true)
    assert.is_nil(io.open(dir .. "/s.psdl"))
  end)
end)

describe("psdl osm --report of a city that cannot be built (stop 23, not fixed before)", function()
  -- a road running along another from a node on its body (the layout drops it), a road whose
  -- centre line crosses itself (dropped before the layout), and a room limit nothing fits
  local function network()
    return {
      nodes = { a = { x = 0, z = 0 }, b = { x = 300, z = 0 }, c = { x = -300, z = 0 }, d = { x = 100, z = 0.5 },
                e = { x = 200, z = 1 }, f = { x = 100, z = 250 }, g = { x = 0, z = -300 },
                h = { x = -300, z = 300 }, i = { x = -100, z = 300 } },
      roads = {
        { from = "c", to = "a", highway = "tertiary", source = "way 1", name = "West" },
        { from = "a", to = "b", highway = "tertiary", source = "way 2", name = "Main" },
        { from = "a", to = "g", highway = "tertiary", source = "way 5", name = "South" },
        { from = "d", to = "e", highway = "tertiary", source = "way 3", name = "Along" },
        { from = "d", to = "f", highway = "tertiary", source = "way 4", name = "North" },
        { from = "h", to = "i", highway = "tertiary", source = "way 6", name = "Loop",
          via = { { -150, 400 }, { -150, 350 }, { -250, 450 } } },
      },
    }
  end
  local ocity = require "psdl.osm.city"

  it("try_build returns the layout's drops and the clean-up's with the failure", function()
    local report = { dropped = { { stage = "clean-up", kind = "could not be fitted (short)", reason = "short",
      source = "way 9", x = 1, z = 2, length = 10 } } }
    -- it builds, dropping both roads
    local doc, _, result = ocity.try_build(network(), report, { seed = 1 })
    assert.is_table(doc)
    local reasons = {}
    for _, d in ipairs(result.dropped) do reasons[d.source] = d.reason end
    assert.same({ ["way 9"] = "could not be fitted (short)", ["way 3"] = "runs along another road",
                  ["way 6"] = "crosses itself" }, reasons)
    -- over a room limit nothing fits: the same drops come back with the message
    local none, msg, known = ocity.try_build(network(), report, { seed = 1, max_rooms = 5 })
    assert.is_nil(none)
    assert.matches("does not fit the game's limits even simplified", msg, 1, true)
    local failed = {}
    for _, d in ipairs(known.dropped) do failed[d.source] = d.reason end
    assert.same(reasons, failed)
    assert.is_true(#known.simplified >= 1)
    -- build raises the same message
    local ok, err = pcall(ocity.build, network(), report, { seed = 1, max_rooms = 5 })
    assert.is_false(ok)
    assert.equal(msg, err)
  end)

  it("the failure report lists every road dropped before the failure, with its reason", function()
    local R = require "psdl.cli.osm_report"
    local net = network()
    local report = { dropped = {}, change_list = {}, skipped = {}, changes = {}, counts = { dead_ends = 0 } }
    local _, msg, known = ocity.try_build(net, report, { seed = 1, max_rooms = 5 })
    local rep = R.import_report({ file = "x.osm" }, net, report, nil, nil, R.failure_of(msg), known)
    assert.equal("limits", rep.failure.stage)
    local by = {}
    for _, d in ipairs(rep.dropped) do by[d.source] = d end
    assert.equal("runs along another road", by["way 3"].reason)
    assert.equal("layout", by["way 3"].stage)
    assert.matches("it runs along", by["way 3"].detail, 1, true)
    assert.is_number(by["way 3"].length_m)
    assert.equal("crosses itself", by["way 6"].reason)
    assert.equal(1, rep.by_reason["dropped: runs along another road"])
    assert.same(known.simplified, rep.simplified)
  end)
end)
