-- A network's building footprints with a height or levels no building can have (an OSM
-- `height = 1e9` typo, NaN, inf, negative): the value is ignored, the building gets its
-- style's floors, and a note in the blocks report names it by its source (newcomer F11).
-- One such footprint never stops the whole city.

local psdl = require "psdl"
local city_mod = require "psdl.city"
local H = require "helper"

local function nodes()
  return { a = { x = 0, z = 0 }, b = { x = 200, z = 0 }, c = { x = 200, z = 150 }, d = { x = 0, z = 150 } }
end
local ROADS = { { from = "a", to = "b" }, { from = "b", to = "c" }, { from = "c", to = "d" }, { from = "d", to = "a" } }
local SQ = { { 50, 50 }, { 100, 50 }, { 100, 100 }, { 50, 100 } }

-- Builds a city on one footprint; returns doc, report, the top of the footprint's building.
local function build(bld)
  local c = city_mod.from_network{ nodes = nodes(), roads = ROADS, buildings = { bld } }
  c:blocks{ buildings = true }
  local doc, rep = c:build()
  local top
  for _, r in ipairs(rep.blocks.building_list) do
    if r.footprint == 1 then top = r.top end
  end
  return doc, rep, assert(top, "the footprint's building")
end

describe("footprint heights (from_network)", function()
  it("keeps a sound height", function()
    local _, rep, top = build{ outline = SQ, height = 30, source = "way 1" }
    assert.equal(1, rep.blocks.footprints)
    assert.is_nil(rep.blocks.footprint_heights_ignored)
    assert.is_true(top >= 30 and top < 40, tostring(top))
  end)

  for _, c in ipairs{ { "height", 1e9, "1000000000" }, { "height", math.huge, "inf" }, { "height", 0 / 0, "nan" },
                      { "height", -3, "-3" }, { "height", "12", "\"12\"" }, { "levels", 1e9, "1000000000" },
                      { "levels", math.huge, "inf" }, { "levels", 0 / 0, "nan" } } do
    it("ignores " .. c[1] .. " = " .. c[3] .. " with a note naming the source", function()
      local bld = { outline = SQ, source = "way 218119638" }
      bld[c[1]] = c[2]
      local doc, rep, top = build(bld)
      assert.is_true(psdl.validate(doc))
      assert.equal(1, rep.blocks.footprints)
      assert.equal(1, rep.blocks.footprint_heights_ignored)
      local note = rep.blocks.warnings[#rep.blocks.warnings]
      assert.truthy(note:find("buildings[1] (way 218119638): " .. c[1] .. " " .. c[3] .. " ", 1, true), note)
      assert.truthy(note:find("ignored: built at its style's height", 1, true), note)
      assert.is_true(top > 0 and top < 100, tostring(top))
    end)
  end

  it("leaves the caller's network table as it was", function()
    local bld = { outline = SQ, height = 1e9 }
    local list = { bld }
    local c = city_mod.from_network{ nodes = nodes(), roads = ROADS, buildings = list }
    assert.equal(1e9, bld.height)
    assert.equal(bld, list[1])
    assert.are_not.equal(list, c.footprints)
  end)
end)

describe("psdl osm with an absurd building height", function()
  it("imports the city and names the OSM way", function()
    local src = H.read_bytes("spec/fixtures/osm/houston-fourth-ward.osm")
    local edited, n = src:gsub('(<way id="218119638"[^>]*>)', '%1\n  <tag k="height" v="1e9"/>')
    assert.equal(1, n)
    local input, out_psdl = H.tmp(finally, ".osm"), H.tmp(finally, ".psdl")
    local f = assert(io.open(input, "wb"))
    f:write(edited)
    f:close()
    local code, out, err = H.cli("osm", input, "-o", out_psdl, "-q")
    assert.equal(0, code, err)
    code, out, err = H.cli("osm", input, "-o", out_psdl, "--verbose")
    assert.equal(0, code, err)
    assert.truthy(out:find("(way 218119638): height 1000000000 m (0..3500 m) ignored", 1, true), out)
  end)
end)
