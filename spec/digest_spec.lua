-- Byte-identity guard (spec/digest.lua): every example city built with `psdl build`, the
-- benchmark grid cities and bench/london_city.lua give exactly the bytes recorded in
-- spec/data/digests.txt. The OSM imports are checked where they are built
-- (spec/osm_extracts_spec.lua). A deliberate change of the output: `lua5.4 spec/digest_update.lua`,
-- committed on its own with the reason.
local D = require "digest"

describe("byte-identity guard", function()
  local want = D.load()
  it("has a digest for every guarded city and no stale names", function()
    local names = {}
    for _, c in ipairs(D.cases()) do names[c.name] = true end
    for _, file in ipairs(D.OSM) do names[D.osm_name(file)] = true end
    for name in pairs(names) do assert.is_string(want[name], name .. " has no digest") end
    for name in pairs(want) do assert.is_true(names[name], name .. " is recorded but not built") end
  end)
  for _, c in ipairs(D.cases()) do
    it(c.name .. " builds to the recorded bytes", function()
      local got = c.digest()
      assert.are.equal(want[c.name], got, c.name .. ": output bytes changed; a deliberate change: "
        .. "lua5.4 spec/digest_update.lua, in its own commit")
    end)
  end
end)
