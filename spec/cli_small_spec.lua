-- Specs for small command-line messages a newcomer met (newcomer.md F8, CLI items): the
-- package options' ranges as usage errors naming the option, --remap of slot 0, info's
-- addressable vertex count, undump's paths against the JSON's 0-based arrays, psdl view of
-- an empty or cut .ar, and a script that returns an unfinished builder.

local psdl = require "psdl"
local H = require "helper"

describe("small CLI messages (newcomer F8)", function()
  it("package: --police and --density out of range are usage errors (exit 1) naming the option", function()
    local dir = H.tmpdir(finally)
    local city = "spec/fixtures/clean/street.psdl"
    for _, case in ipairs {
      { "--police", "99", "--police: a whole number of cars 0-8 expected, got 99" },
      { "--police", "1.5", "--police: a whole number of cars 0-8 expected, got 1.5" },
      { "--density", "-1", "--density: a number 0-4 expected (ambient traffic, 1 is the game's own), got -1" },
      { "--density", "nan", "--density: a number 0-4 expected" },
    } do
      local code, _, err = H.cli("package", city, "-o", dir .. "/t.ar", case[1], case[2])
      assert.equal(1, code, err)
      assert.matches("psdl package: " .. case[3], err, 1, true)
    end
    -- build --package refuses them before running the script
    local code, out, err = H.cli("build", "examples/street.lua", "-o", dir .. "/s.psdl", "--package", dir .. "/s.ar",
      "--police", "9")
    assert.equal(1, code)
    assert.equal("", out)
    assert.matches("--police: a whole number of cars 0-8 expected, got 9", err, 1, true)
    assert.is_nil(io.open(dir .. "/s.psdl"))
  end)

  -- psdl retexture --remap `pair` is a usage error (exit 1) whose message holds `says`
  local function remap_refused(pair, says)
    local dir = H.tmpdir(finally)
    local code, _, err = H.cli("retexture", "spec/fixtures/clean/street.psdl", "--out", dir, "--remap", pair)
    assert.equal(1, code)
    assert.matches(says, err, 1, true)
  end

  it("retexture --remap 0=1 says that slots start at 1", function()
    remap_refused("0=1", '--remap "0=1": slot 0: texture slots start at 1')
    remap_refused("x=1", "expected two texture slots A=B")
  end)

  it("info of a damaged package (local and central names differ) lists it, with the error, and exits 2", function()
    local dir = H.tmpdir(finally)
    local bytes = assert(require("psdl.package").ar_bytes({
      { "city/street.psdl", H.read_bytes("spec/fixtures/clean/street.psdl") } }))
    assert.equal("PK\3\4", bytes:sub(1, 4))
    assert.equal("city/", bytes:sub(31, 35))
    local path = dir .. "/bad.ar"
    assert(psdl.write_file(path, bytes:sub(1, 30) .. "citx/" .. bytes:sub(36)))
    local code, out, err = H.cli("info", path)
    assert.equal(2, code, err)
    assert.matches("city/street.psdl", out, 1, true)
    assert.matches("names differ", out .. err, 1, true)
    -- the undamaged package still exits 0
    assert(psdl.write_file(dir .. "/good.ar", bytes))
    assert.equal(0, (H.cli("info", dir .. "/good.ar")))
  end)

  it("retexture --remap 99999=1 is a usage error: slots run from 1 to 2047", function()
    remap_refused("99999=1", '--remap "99999=1": slot 99999: texture slots run from 1 to 2047')
    remap_refused("1=2048", "slot 2048: texture slots run from 1 to 2047")
  end)

  it("info gives 65,536 addressable vertices, the references the encoder takes (1..65536)", function()
    local _, out = H.cli("info", "spec/fixtures/clean/street.psdl")
    assert.matches("\n    vertices +105 / 65,536 +[%d.]+ %% +addressable\n", out)
    assert.equal(65536, require("psdl.cli.info").limits().vertices)
    -- the encoder's own range agrees: vertex reference 65536 is the last one it takes
    local doc = assert(psdl.read("spec/fixtures/clean/street.psdl"))
    doc.rooms[1].perimeter[1].vertex = 65537
    local ok, err = pcall(psdl.encode, doc)
    assert.is_false(ok)
    assert.matches("1..65536", tostring(err), 1, true)
  end)

  it("undump names the JSON file's 0-based place beside the 1-based path", function()
    local dir = H.tmpdir(finally)
    local cjson = require "cjson"
    local code = H.cli("dump", "--json", "spec/fixtures/clean/street.psdl", "-o", dir .. "/s.json")
    assert.equal(0, code)
    local obj = cjson.decode(H.read_bytes(dir .. "/s.json"))
    obj.rooms[3].perimeter[1].vertex = 99999 -- (Lua's [3][1] is the file's rooms[2].perimeter[0])
    H.write_bytes(dir .. "/bad.json", cjson.encode(obj))
    local ucode, _, err = H.cli("undump", dir .. "/bad.json", "-o", dir .. "/bad.psdl")
    assert.equal(2, ucode)
    assert.matches("rooms[3].perimeter[1].vertex: 99999", err, 1, true)
    assert.matches("in the JSON file it is rooms[2].perimeter[0].vertex", err, 1, true)
    assert.equal("no path here", require("psdl.cli.undump").json_place("no path here"))
  end)

  it("undump: a vertex out of range and a NaN string with a bad payload name the JSON place and the form", function()
    local dir = H.tmpdir(finally)
    local text = H.read_bytes("spec/fixtures/clean/street.psdl")
    assert(psdl.write_file(dir .. "/s.psdl", text))
    assert.equal(0, (H.cli("dump", dir .. "/s.psdl", "-o", dir .. "/s.json")))
    local json = H.read_bytes(dir .. "/s.json")
    local i, j = json:find("[-5, 0, 0],", 1, true)
    assert.truthy(i)
    H.write_bytes(dir .. "/big.json", json:sub(1, i - 1) .. "[-5, 0, 1e39]," .. json:sub(j + 1))
    local code, _, err = H.cli("undump", dir .. "/big.json", "-o", dir .. "/big.psdl")
    assert.equal(2, code)
    assert.matches("vertices[4][3]: out of single-precision range", err, 1, true)
    assert.matches("in the JSON file it is vertices[3][2]", err, 1, true)
    H.write_bytes(dir .. "/nan.json", json:sub(1, i - 1) .. '["NaN(0xffffffffff)", 0, 0],' .. json:sub(j + 1))
    code, _, err = H.cli("undump", dir .. "/nan.json", "-o", dir .. "/nan.psdl")
    assert.equal(2, code)
    assert.matches('vertices[4][1]: number expected, got the string "NaN(0xffffffffff)": a non-finite number is '
      .. 'written "Infinity", "-Infinity", "NaN" or "NaN(0x" and its 32-bit pattern in 8 hex digits ")"', err, 1, true)
    assert.matches("in the JSON file it is vertices[3][0]", err, 1, true)
  end)

  it("view of an empty or cut .ar says what validate says, not 'no city' or the same words twice", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/empty.ar", "")
    local code, _, err = H.cli("view", dir .. "/empty.ar", "-o", dir .. "/e.html")
    assert.equal(2, code)
    assert.matches(dir .. "/empty.ar: the file is empty (0 bytes): not a zip archive", err, 1, true)
    H.write_bytes(dir .. "/cut.ar", "PK\3\4" .. string.rep("x", 300))
    local code2, _, err2 = H.cli("view", dir .. "/cut.ar", "-o", dir .. "/c.html")
    assert.equal(2, code2)
    assert.matches("is not a zip archive or is cut short", err2, 1, true)
    assert.not_matches("Not a zip archive", err2, 1, true)
  end)

  it("a script that returns an unfinished builder is told to return (b:finish())", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/b.lua", "local b = psdl.builder.new{ style = 'sf' }\n"
      .. "b:street{ path = { {0,0,0}, {100,0,0} } }\nreturn b\n")
    local code, _, err = H.cli("build", dir .. "/b.lua", "-o", dir .. "/b.psdl")
    assert.equal(2, code)
    assert.matches("got a builder that was not finished: end the script with return (b:finish())", err, 1, true)
  end)
end)
