-- Small newcomer notes: `psdl info` on a package's text files says what the file is and what
-- info reads (it said bad_magic), and `psdl render` of a file with vertices beyond 1e9 m
-- counts them in its summary and keeps the map's scale on the rest (a curb midpoint derived
-- from a far vertex stretched it to 2e-6 px/m).

local psdl = require "psdl"
local H = require "helper"

describe("psdl info on text files", function()
  it("names a package's text files by extension, and any text file, instead of bad_magic", function()
    local dir = H.tmpdir(finally)
    local cases = {
      { "strt.aimap", "[Speed Limit]\r\n40\r\n", "an AI map" },
      { "roam.aimap_p", "[Ambient Types/Density]\r\n0\r\n", "a race's AI map" },
      { "strt.cinfo", "LocalizedName=strt\r\n", "the city info" },
      { "strt.mmhudmap", "type: mmHudMap\n", "the HUD map settings" },
      { "proprules.csv", "rule,prop\n", "a prop table" },
      { "notes.txt", "hello\n", "a text file" },
    }
    for _, c in ipairs(cases) do
      local path = dir .. "/" .. c[1]
      H.write_bytes(path, c[2])
      local code, _, err = H.cli("info", path)
      assert.equal(2, code)
      assert.matches(path .. ": " .. c[3], err, 1, true)
      assert.matches("not a PSDL: psdl info reads PSDL files (.psdl), packages (.ar) and their binary files", err, 1, true)
      assert.not_matches("bad_magic", err)
    end
    -- a binary file that is no PSDL keeps the decoder's message
    H.write_bytes(dir .. "/x.bin", "\127ELF\0\0\0\0")
    local code, _, err = H.cli("info", dir .. "/x.bin")
    assert.equal(2, code)
    assert.matches("bad_magic", err, 1, true)
  end)
end)

describe("psdl render of far-out vertices", function()
  it("counts the vertices it leaves out and keeps the scale of the rest", function()
    local dir = H.tmpdir(finally)
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local plain = psdl.render(doc, { format = "svg", size = 512 })
    assert.equal(0, plain.left_out)
    doc.vertices[3] = { 2e9, 0, 0 }
    local far = psdl.render(doc, { format = "svg", size = 512 })
    assert.equal(1, far.left_out)
    assert.is_true(math.abs(far.scale - plain.scale) / plain.scale < 0.05)
    assert(psdl.write(doc, dir .. "/far.psdl", { validate = false }))
    local code, out = H.cli("render", dir .. "/far.psdl", "-o", dir .. "/far.png", "--size", "256")
    assert.equal(0, code)
    assert.matches("; 1 vertex beyond 1e9 m (or not finite) left out of the map", out, 1, true)
  end)
end)
