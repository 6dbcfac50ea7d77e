-- The warnings of psdl.city.repair name the road they dropped or repaired by the number the
-- script gave it, and for roads leaving a node in the same direction the road kept too
-- (newcomer finding F4: five roads between two nodes gave four warnings all naming roads 1
-- and 2, worded "dropped leaves a node along another road").

local psdl = require "psdl"
local H = require "helper"

-- Five straight roads between the same two nodes.
local function bundle()
  local city = psdl.city.new {}
  local a, b = city:node(0, 0), city:node(200, 0)
  for _ = 1, 5 do city:road(a, b) end
  return city
end

describe("psdl.city.repair warnings", function()
  it("name each dropped road and the one kept, by the script's numbers", function()
    local _, report = bundle():build()
    assert.equal(4, #report.repairs)
    for i, e in ipairs(report.repairs) do
      assert.equal("dropped", e.action)
      assert.equal("leaves a node along another road", e.reason)
      assert.equal(i + 1, e.number)
      assert.matches(string.format("^road %d at .-repair_warnings_spec.lua:%%d+$", i + 1), e.ref)
      assert.matches(string.format(": node 1: road %d at .- leaves it in the same direction as road 1 at .- %%(0.0 degrees "
        .. "apart%%): road %d dropped, road 1 kept; join them further out or move a via point", i + 1, i + 1), e.detail)
    end
    -- strict: the first is an error, as before
    local ok, err = pcall(function() return bundle():build { strict = true } end)
    assert.is_false(ok)
    assert.matches("leave it in the same direction", err, 1, true)
  end)

  it("psdl build prints one line per road: what was done to which road, why, and the layout's words", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/five.lua", table.concat({
      "local city = psdl.city.new{}",
      "local a, b = city:node(0, 0), city:node(200, 0)",
      "for i = 1, 5 do city:road(a, b, { name = 'R' .. i }) end",
      "return city",
    }, "\n"))
    local code, _, err = H.cli("build", dir .. "/five.lua", "-o", dir .. "/five.psdl", "-q")
    assert.equal(0, code)
    local lines = {}
    for l in err:gmatch("[^\n]+") do
      -- (the roads given again are also said in one line of their own: spec/build_messages_spec.lua)
      if l:find("again: the same nodes", 1, true) then
        assert.matches("roads 2 %([^)]*five.lua:3%), 3 %([^)]*five.lua:3%), 4 ", l)
      else
        lines[#lines + 1] = l
      end
    end
    assert.equal(4, #lines)
    for i, l in ipairs(lines) do
      local n = i + 1
      assert.matches(string.format("psdl build: warning: dropped road %d (R%d) at %s/five.lua:3 (leaves a node along another "
        .. "road): %s/five.lua:2: node 1: road %d (R%d) at %s/five.lua:3 leaves it in the same direction as road 1 (R1) at "
        .. "%s/five.lua:3 (0.0 degrees apart): road %d dropped, road 1 kept", n, n, dir, dir, n, n, dir, dir, n), l, 1, true)
      assert.not_matches("dropped leaves", l)
    end
  end)
end)
