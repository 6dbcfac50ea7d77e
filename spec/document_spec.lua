-- Validate, encode and write on one conversion (lua/psdl/document.lua): the bytes a check
-- returns are the document's encoding, `write_checked` writes them with the verdict of the
-- problems found then, and `City:save` and `psdl build` write what `Builder:finish` checked.
local H = require "helper"
local psdl = require "psdl"
local document = require "psdl.document"

-- A small whole city: a ring of four roads around one block.
local function small_city(name)
  local c = psdl.city.new { name = name, seed = 3 }
  local a, b, d, e = c:node(0, 0), c:node(160, 0), c:node(160, 120), c:node(0, 120)
  c:road(a, b); c:road(b, d); c:road(d, e); c:road(e, a)
  return c
end

describe("psdl.document", function()
  local doc, report
  setup(function() doc, report = small_city("ring"):build() end)

  it("checks and encodes on one conversion: the bytes are the document's, the problems validate's", function()
    local good, problems, counts, checked = document.check(doc, {}, true)
    local vgood, vproblems, vcounts = psdl.validate(doc)
    assert.are.equal(vgood, good)
    assert.are.same(vcounts, counts)
    assert.are.equal(#vproblems, #problems)
    assert.are.equal(psdl.encode(doc), checked.bytes)
    assert.is_true(checked.drivable)
    -- without want_bytes: no checked document
    assert.is_nil(select(4, document.check(doc, {}, false)))
  end)

  it("Builder:finish keeps the checked bytes in the report; City:save and write_checked write them", function()
    assert.are.equal(psdl.encode(doc), report.checked.bytes)
    do
      local dir = H.tmpdir(finally)
      local out = dir .. "/ring.psdl"
      assert.is_true(document.write_checked(report.checked, out))
      assert.are.equal(report.checked.bytes, H.read_bytes(out))
      local saved = dir .. "/saved.psdl"
      assert.is_true(small_city("ring"):save(saved))
      assert.are.equal(report.checked.bytes, H.read_bytes(saved))
    end
  end)

  -- /proc takes no new files (even for root), so the temporary file beside the target cannot
  -- be made: the message says so, naming both, not "No such file" about a file that exists
  local proc = io.open("/proc/version", "rb")
  if proc then proc:close() end
  local it_proc = proc and it or pending
  it_proc("names the temporary file a folder refuses (City:save, psdl.write_file into /proc)", function()
    local before = H.read_bytes("/proc/version")
    local ok, msg, code = small_city("ring"):save("/proc/version")
    assert.is_nil(ok)
    assert.are.equal("io", code)
    assert.matches("^psdl: io: /proc/version: left untouched: the temporary file beside it cannot be created "
                   .. "%(.+: its folder takes no new files%): /proc/version%.tmp%-%d+%-XXXXXX$", msg)
    assert.are.equal(before, H.read_bytes("/proc/version"))
    ok, msg, code = psdl.write_file("/proc/no-such-city.psdl", "bytes")
    assert.is_nil(ok)
    assert.are.equal("io", code)
    assert.matches("^psdl: io: /proc/no%-such%-city%.psdl: not written: the temporary file beside it", msg)
    assert.is_nil(io.open("/proc/no-such-city.psdl", "rb"))
  end)

  it("judges checked bytes by the problems found and this call's name and strict", function()
    do
      local dir = H.tmpdir(finally)
      local out = dir .. "/x.psdl"
      local bad = { bytes = report.checked.bytes, errors = 1, warnings = 0, drivable = true,
                    problems = { { severity = "error", rule = "vertex_index", path = "rooms[2]", message = "made up" } } }
      local ok, msg, code = document.write_checked(bad, out)
      assert.is_nil(ok)
      assert.are.equal("invalid", code)
      assert.matches("rooms%[2%]: made up", msg)
      assert.is_nil(io.open(out, "rb"))
      assert.is_true(document.write_checked(bad, out, { force = true }))
      -- a name with "london" is a warning: refused with strict only
      local london = dir .. "/london.psdl"
      assert.is_true(document.write_checked(report.checked, london))
      ok, msg, code = document.write_checked(report.checked, london, { strict = true })
      assert.is_nil(ok)
      assert.matches("city name", msg)
    end
  end)

  it("raises on misuse: no checked document, or checked with another drivable", function()
    assert.error_matches(function() document.write_checked({}, "x.psdl") end, "bad argument #1 to 'write_checked'")
    assert.error_matches(function() document.write_checked(report.checked, "x.psdl", { drivable = false }) end,
      "bad argument #3 to 'write_checked' %(drivable")
    assert.error_matches(function() document.write_checked(report.checked, "x.psdl", { strcit = true }) end,
      "unknown option 'strcit'")
  end)
end)
