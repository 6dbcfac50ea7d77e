-- Ctrl-C (SIGINT) ends a `psdl` command at once with exit 130 and no traceback, and leaves an
-- existing output as it was (docs/cli.md, exit codes; psdl.control.default_interrupt). Before,
-- lua5.4's own handler raised "interrupted!" inside the running code: an internal error with a
-- traceback (exit 4), or a road the city builder reported as failed (exit 2).

local psdl = require "psdl"
local H = require "helper"

local BUILD = os.getenv("PSDL_BUILD_DIR") or "build"
if BUILD == "" then BUILD = "build" end
local ROOT = assert(psdl.real_path("."))
if BUILD:sub(1, 1) ~= "/" then BUILD = ROOT .. "/" .. BUILD end

describe("Ctrl-C during a command", function()
  it("ends psdl build with exit 130, no traceback, and leaves the old output untouched", function()
    local dir = H.tmpdir(finally)
    local script, out = dir .. "/slow.lua", dir .. "/city.psdl"
    H.write_bytes(script, "local psdl = require 'psdl'\nlocal x = 0\nwhile true do x = x + 1 end\n")
    H.write_bytes(out, "the old city")
    local text = H.sh(string.format("cd %s && PSDL_BUILD_DIR=%s timeout --preserve-status -s INT 2 scripts/psdl build %s -o %s",
      H.q(ROOT), H.q(BUILD), H.q(script), H.q(out)))
    assert.matches("exit=130", text)
    assert.not_matches("traceback", text)
    assert.not_matches("internal error", text)
    assert.are.equal("the old city", H.read_bytes(out))
    assert.are.same({ "city.psdl", "slow.lua" }, H.files_in(dir)) -- no temporary file left
  end)

  it("ends psdl osm with exit 130 while the city is being built, writing nothing", function()
    local dir = H.tmpdir(finally)
    local out = dir .. "/city.psdl"
    local text = H.sh(string.format("cd %s && PSDL_BUILD_DIR=%s timeout --preserve-status -s INT 1.5 scripts/psdl osm %s -o %s",
      H.q(ROOT), H.q(BUILD), "spec/data/osm/philadelphia-temple.osm", H.q(out)))
    assert.matches("exit=130", text)
    assert.not_matches("traceback", text)
    assert.are.same({}, H.files_in(dir))
  end)
end)
