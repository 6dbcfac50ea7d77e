-- The script runner of psdl build / package (lua/psdl/cli/source.lua): what leaves the
-- sandbox of a city script is the document and a plain report of figures, problems and
-- repairs, not the builder and block objects the in-process report holds (their deep copy
-- made a London-scale `psdl build` take ten times longer than its build).
local psdl = require "psdl"
local source = require "psdl.cli.source"

describe("psdl.cli.source", function()
  it("returns a city's report without the builder, road runs and block objects", function()
    local doc, report = source.script_document(psdl, "examples/downtown.lua", {})
    assert.is_true(#doc.rooms > 0)
    assert.is_nil(report.builder)
    assert.is_nil(report.run_list)
    assert.is_table(report.blocks)
    for _, k in ipairs({ "rooms", "faces", "apron_rooms", "building_list" }) do
      assert.is_nil(report.blocks[k], "blocks." .. k .. " left the sandbox")
    end
    -- the figures are all there: the summary psdl build prints is the in-process one
    local city = dofile("examples/downtown.lua")
    local _, full = city:build()
    assert.are.equal(full.blocks.buildings, report.blocks.buildings)
    assert.is_true(report.blocks.buildings > 0)
    local function untimed(r) return (psdl.city.summary(r, "x"):gsub("built in [^\n]*", "")) end
    assert.are.equal(untimed(full), untimed(report))
    assert.are.same(full.counts, report.counts)
    assert.are.equal(full.runs, report.runs)
  end)

  it("keeps the plain fields of a report and copies no functions or userdata", function()
    local rep = source.plain_report({ rooms = 3, builder = {}, run_list = { {} }, f = print,
      blocks = { buildings = 2, rooms = { {} }, warnings = { "w" } } })
    assert.are.same({ rooms = 3, blocks = { buildings = 2, warnings = { "w" } } }, rep)
  end)
end)
