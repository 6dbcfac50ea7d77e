-- Specs for messages of the command line a newcomer meets: the package room limit warned
-- about where a city is made (osm, build, info), the file named in package decode errors,
-- the dead-end notes of a package grouped, a browser that cannot be started, the
-- --textures hints, and the shown output of docs/city.md matching what the command prints.
-- Run from the repository root; PSDL_BUILD_DIR names the build directory (default build).

local H = require "helper"
local pkg = require "psdl.package"

-- a straight street cut into one room every 10 m: 2,080 rooms, more than a package holds
local LONG_SCRIPT = [[
local b = psdl.builder.new{ style = "london" }
b:street{
  path = { { 0, 0, 0 }, { 0, 0, 10400 } },
  profile = { kind = "road", left = 5, right = 5 },
  textures = b.style.roads.lanes2, split = 2, room = { name = "Long" },
}
return (b:finish())
]]

describe("the package room limit", function()
  it("is warned about from the package constant, with the route that fits", function()
    assert.is_nil(pkg.room_warning(pkg.MAX_ROOMS, "x.osm"))
    local w = pkg.room_warning(pkg.MAX_ROOMS + 1, "data/x.osm")
    assert.matches(tostring(pkg.MAX_ROOMS + 1) .. " rooms: more than the " .. pkg.MAX_ROOMS, w, 1, true)
    assert.matches("'psdl package data/x.osm' fits the extract itself, or import a smaller --bbox", w, 1, true)
    local w2 = pkg.room_warning(pkg.MAX_ROOMS + 1, "city.lua")
    assert.matches("docs/package.md", w2, 1, true)
    assert.not_matches("--bbox", w2, 1, true)
  end)

  it("is warned about by psdl build and marked OVER by psdl info", function()
    local dir = H.tmpdir(finally)
    local script, out = dir .. "/long.lua", dir .. "/long.psdl"
    H.write_bytes(script, LONG_SCRIPT)
    local code, stdout, stderr = H.cli("build", script, "-o", out)
    assert.equal(0, code, stderr)
    local rooms = tonumber((stdout:match("(%d[%d,]*) rooms"):gsub(",", "")))
    assert.is_true(rooms > pkg.MAX_ROOMS, stdout)
    assert.matches("psdl build: warning: " .. out .. ": " .. rooms .. " rooms: more than the " .. pkg.MAX_ROOMS
      .. " a package", stderr, 1, true)
    local icode, itext = H.cli("info", out)
    assert.equal(0, icode)
    local row = itext:match("\n(    rooms[^\n]*a package %(.ar%) holds[^\n]*)")
    assert.is_truthy(row, itext)
    assert.matches("/ 2,047", row, 1, true)
    assert.matches("OVER$", row)
    -- a city that fits: no warning, no OVER on the row
    local code2, _, stderr2 = H.cli("build", "examples/street.lua", "-o", dir .. "/street.psdl")
    assert.equal(0, code2)
    assert.equal("", stderr2)
    local _, itext2 = H.cli("info", dir .. "/street.psdl")
    assert.not_matches("OVER", itext2, 1, true)
  end)
end)

describe("psdl package", function()
  it("names the file when a PSDL does not decode", function()
    local dir = H.tmpdir(finally)
    local bad = dir .. "/trunc.psdl"
    H.write_bytes(bad, H.read_bytes("spec/fixtures/clean/street.psdl"):sub(1, 300))
    local code, _, stderr = H.cli("package", bad, "-o", dir .. "/t.ar")
    assert.equal(2, code)
    assert.matches("^psdl package: " .. bad:gsub("%p", "%%%0") .. ": bad_count: ", stderr)
    assert.is_nil(io.open(dir .. "/t.ar", "rb"))
  end)

  it("counts the roads that end without a junction room in one note (each with --verbose)", function()
    local notes = {
      "road 3: no junction room at its last end; a dead-end intersection in room 12",
      "junction room 7: no road record ends at it; its intersection has no roads",
      "road 9: no junction room at its first end; a dead-end intersection in room 20",
      "road 9: no junction room at its last end; a dead-end intersection in room 20",
    }
    local out = H.collector()
    require("psdl.cli.package").print_notes(out, notes, false)
    assert.equal("  note: junction room 7: no road record ends at it; its intersection has no roads\n"
      .. "  note: 3 road ends without a junction room; each gets a dead-end intersection in its end room "
      .. "(--verbose lists them)\n", out.text())
    local all = H.collector()
    require("psdl.cli.package").print_notes(all, notes, true)
    local n = 0
    for _ in all.text():gmatch("  note: [^\n]*\n") do n = n + 1 end
    assert.equal(4, n)
    assert.matches("road 9: no junction room at its first end", all.text(), 1, true)
  end)
end)

describe("psdl view --open", function()
  it("says so when the browser cannot be started", function()
    local dir = H.tmpdir(finally)
    local html = dir .. "/street.html"
    for _, browser in ipairs { "/bin/false", dir .. "/no-such-browser" } do
      local text = H.sh("BROWSER=" .. H.q(browser) .. " scripts/psdl view examples/street.lua -o " .. H.q(html)
        .. " --open")
      assert.matches("exit=0", text, 1, true)
      assert.matches("psdl view: note: could not open a browser: $BROWSER (" .. browser .. ") failed; open "
        .. html .. " yourself", text, 1, true)
    end
    -- a browser that starts: no note
    local ok = H.sh("BROWSER=/bin/true scripts/psdl view examples/street.lua -o " .. H.q(html) .. " --open")
    assert.not_matches("note:", ok, 1, true)
    assert.matches("exit=0", ok, 1, true)
  end)
end)

describe("--textures", function()
  it("says what the folder is when it is missing", function()
    local dir = H.tmpdir(finally)
    local code, _, stderr = H.cli("export", "spec/fixtures/clean/street.psdl", "-o", dir .. "/c.glb",
      "--textures", dir .. "/none")
    assert.equal(3, code)
    assert.matches("no such folder (the folder of the city's texture images", stderr, 1, true)
    assert.matches("docs/export.md", stderr, 1, true)
    local vcode, _, verr = H.cli("view", "spec/fixtures/clean/street.psdl", "-o", dir .. "/v.html",
      "--textures", dir .. "/none")
    assert.equal(3, vcode)
    assert.matches("the game's texture folder", verr, 1, true)
  end)
end)

describe("docs/city.md", function()
  it("shows what psdl build prints for examples/downtown.lua", function()
    local doc = H.read_bytes("docs/city.md")
    local dir = H.tmpdir(finally)
    local code, out = H.cli("build", "examples/downtown.lua", "-o", dir .. "/downtown.psdl", "--preview",
      dir .. "/downtown.png")
    assert.equal(0, code)
    local first = out:match("^[^\n]*"):gsub("^.*/downtown%.psdl", "downtown.psdl")
    assert.matches("\n" .. first .. "\n", doc, 1, true)
    local png = out:match("downtown%.png: [^\n]*")
    assert.matches("\n" .. png .. "\n", doc, 1, true)
    for _, l in ipairs { "network", "blocks", "validation" } do
      assert.matches("\n" .. out:match("\n(  " .. l .. ": [^\n]*)") .. "\n", doc, 1, true)
    end
  end)
end)

describe("psdl osm", function()
  -- a closed residential loop crossed by shorter roads between its corners, and a way id
  -- given twice (the crafted extract of a newcomer's test, cut down)
  local OSM = [[
<?xml version="1.0"?>
<osm version="0.6">
 <node id="1" lat="51.5000" lon="-0.1000"/>
 <node id="2" lat="51.5000" lon="-0.0990"/>
 <node id="3" lat="51.5009" lon="-0.0990"/>
 <node id="4" lat="51.5009" lon="-0.1000"/>
 <node id="5" lat="51.5000" lon="-0.1000"/>
 <node id="6" lat="51.50045" lon="-0.1005"/>
 <node id="7" lat="51.50045" lon="-0.0985"/>
 <way id="10"><nd ref="1"/><nd ref="2"/><nd ref="3"/><nd ref="4"/><nd ref="1"/><tag k="highway" v="residential"/></way>
 <way id="11"><nd ref="6"/><nd ref="7"/><tag k="highway" v="primary"/></way>
 <way id="12"><nd ref="5"/><nd ref="3"/><tag k="highway" v="residential"/></way>
 <way id="14"><nd ref="2"/><nd ref="4"/><tag k="highway" v="residential"/></way>
 <way id="15"><nd ref="1"/><nd ref="3"/><tag k="highway" v="tertiary"/></way>
 <way id="10"><nd ref="1"/><nd ref="2"/><tag k="highway" v="residential"/></way>
</osm>
]]

  it("warns about a way id given twice, naming file:line", function()
    local dir = H.tmpdir(finally)
    local file = dir .. "/loop.osm"
    H.write_bytes(file, OSM)
    local data = assert(require("psdl.osm.reader").read(file))
    assert.same({ { id = 10, line = 15, first_line = 10 } }, data.duplicate_ways)
    local code, _, stderr = H.cli("osm", file)
    assert.equal(0, code, stderr)
    assert.matches("psdl osm: warning: " .. file .. ":15: way 10 appears again (first at line 10)", stderr, 1, true)
    local _, _, quiet = H.cli("osm", file, "-q")
    assert.equal("", quiet)
  end)

  it("names the length lost with no drop in the summary, with the ways that lost most", function()
    local dir = H.tmpdir(finally)
    local file = dir .. "/loop.osm"
    H.write_bytes(file, OSM)
    local code, out = H.cli("osm", file)
    assert.equal(0, code)
    local m = out:match("not kept without a drop: (%d+) m %(merged into other roads or cut in clean%-up")
    assert.is_truthy(m, out)
    local code2, json = H.cli("osm", file, "--json")
    assert.equal(0, code2)
    local imp = require("cjson").decode(json).import
    local dropped = 0
    for _, d in ipairs(imp.dropped) do dropped = dropped + d.length_m end
    -- the figure is the loss no drop accounts for, as --report measures it
    assert.near(imp.kept.input_m - imp.kept.kept_m - dropped, tonumber(m), 1)
    local worst = imp.kept.lost[1]
    assert.matches("\n          " .. worst.source .. ": " .. math.floor(worst.length_m + 0.5) .. " m not kept\n", out, 1, true)
  end)

  it("prints every line of a 'cannot be built' error, capped as build's (osm -o, package x.osm)", function()
    -- the city build raising a message of 50 lines: the CLI's handling of it is what is
    -- checked here (osm.city.build is swapped for one raise, then put back)
    local ocity = require "psdl.osm.city"
    local real = ocity.build
    local lines = { "blocks: a block near (10.0, 20.0) cannot be laid out:" }
    for i = 2, 50 do lines[i] = string.format("  face %d: reason %d", i, i) end
    ocity.build = function() error(table.concat(lines, "\n"), 0) end
    finally(function() ocity.build = real end)
    local dir = H.tmpdir(finally)
    local file = dir .. "/loop.osm"
    H.write_bytes(file, OSM)
    for _, args in ipairs({ { "osm", file, "-o", dir .. "/a.psdl", "-q" }, { "package", file, "-o", dir .. "/b.ar" } }) do
      local code, _, stderr = H.cli(table.unpack(args))
      assert.equal(2, code, stderr)
      assert.matches(": " .. file .. ": the city cannot be built: blocks: a block near (10.0, 20.0) cannot be laid out:\n"
        .. "  face 2: reason 2\n", stderr, 1, true)
      assert.matches("\n  face 40: reason 40\n  ... and 10 more lines\n$", stderr)
      assert.not_matches("face 41:", stderr, 1, true)
    end
  end)

  it("adds no such line when the drops account for the loss", function()
    local _, out = H.cli("osm", "spec/fixtures/osm/houston-fourth-ward.osm")
    assert.matches("\ndropped %(", out)
    assert.not_matches("not kept without a drop", out, 1, true)
  end)
end)

describe("psdl build's blocks notes (newcomer F6)", function()
  it("prints report.blocks.warnings under the summary, as psdl osm does", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/notes.lua"
    H.write_bytes(script, [[
local n = { nodes = { a = {x=0,z=0}, b = {x=200,z=0}, c = {x=200,z=150} },
  roads = { {from="a",to="b"}, {from="b",to="c"}, {from="a",to="c"} },
  buildings = { { outline = {{140,20},{150,20},{150,30},{140,30}}, height = 0/0 },
                { outline = {{160,20},{170,20},{170,30},{160,30}}, levels = -2 } } }
local c = psdl.city.from_network(n)
c:blocks{ buildings = true }
return c
]])
    local code, out, err = H.cli("build", script, "-o", dir .. "/notes.psdl")
    assert.equal(0, code, err)
    assert.truthy(out:find("\n  blocks: 2 notes\n    buildings[1]: height nan m (0..3500 m) ignored", 1, true), out)
    assert.truthy(out:find("\n    buildings[2]: levels -2 (1..1000) ignored", 1, true), out)
    -- -q prints nothing; a city without notes gets no notes line
    local _, qout = H.cli("build", script, "-o", dir .. "/notes.psdl", "-q")
    assert.equal("", qout)
    local _, sout = H.cli("build", "examples/street.lua", "-o", dir .. "/street.psdl")
    assert.not_matches("notes", sout, 1, true)
  end)

  it("caps the list at MAX_BLOCK_NOTES, saying how many more", function()
    local build = require "psdl.cli.build"
    local out = H.collector()
    local notes = {}
    for i = 1, build.MAX_BLOCK_NOTES + 3 do notes[i] = "note " .. i end
    build.print_block_notes(out, { warnings = notes })
    local text = out.text()
    assert.truthy(text:find("^  blocks: " .. #notes .. " notes\n    note 1\n"), text)
    assert.truthy(text:find("\n    note " .. build.MAX_BLOCK_NOTES .. "\n    ... and 3 more\n$"), text)
  end)
end)

describe("a city:blocks override whose point lies in no block", function()
  -- before: only a note in report.blocks.warnings ("override point (900, 900) lies in no
  -- face"), naming neither the override nor the script line
  local SCRIPT = [[
local city = psdl.city.new{ name = "ov" }
local a, b, c = city:node(0, 0), city:node(200, 0), city:node(200, 150)
city:road(a, b); city:road(b, c); city:road(a, c)
city:blocks{ overrides = { { point = { 150, 40 }, park = true }, { point = { 900, 900 }, park = true } } }
return city
]]
  local WARNING = "ov.lua:4: city:blocks overrides[2]: its point (900, 900) lies in no block (on a road or an "
    .. "intersection, outside the network or in a hole), so it is not applied; move the point inside the block it is for"

  it("is a warning of the build report naming the override, the point and the script line; the build goes on", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/ov.lua", SCRIPT)
    local city = assert(loadfile(dir .. "/ov.lua", "t", setmetatable({ psdl = require "psdl" }, { __index = _G })))()
    local doc, report = city:build()
    assert.is_true(#doc.rooms > 0)
    assert.equal(1, #report.warnings)
    assert.equal(dir .. "/" .. WARNING, report.warnings[1])
    assert.equal(1, report.blocks.parks) -- the first override is applied
    for _, w in ipairs(report.blocks.warnings) do assert.not_matches("override", w, 1, true) end
  end)

  it("is printed by psdl build as a warning, exit 0", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/ov.lua", SCRIPT)
    local code, out, err = H.cli("build", dir .. "/ov.lua", "-o", dir .. "/ov.psdl")
    assert.equal(0, code, err)
    assert.matches("psdl build: warning: " .. dir .. "/" .. WARNING .. "\n", err, 1, true)
    assert.not_matches("override", out, 1, true)
  end)
end)
