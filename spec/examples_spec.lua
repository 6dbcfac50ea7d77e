-- Every builder example (examples/*.lua of the geometry issue) runs as a command and writes
-- a PSDL that validates strictly, through the Lua API and through `psdl validate --strict`.
local psdl = require "psdl"
local H = require "helper"

local build = os.getenv("PSDL_BUILD_DIR") or "./build"

local EXAMPLES = {
  street = { rooms = 5, roads = 1 },
  avenue = { roads = 1, divided = true },
  junctions = { rooms = 8, roads = 6, intersections = 2 },
  tunnel = { roads = 3, tunnel = true },
  bridge = { roads = 2, warp = true },
  facades = { facades = true },
}

local q, run = H.q, H.run

local names = {}
for name in pairs(EXAMPLES) do names[#names + 1] = name end
table.sort(names)

describe("examples", function()
  for _, name in ipairs(names) do
    local want = EXAMPLES[name]
    it(name .. ".lua writes a PSDL that validates strictly", function()
      local out = H.tmpname(".psdl")
      finally(function() os.remove(out) end)
      local log, ok = run("PSDL_BUILD_DIR=" .. q(build) .. " lua5.4 examples/" .. name .. ".lua " .. q(out))
      assert.is_true(ok, log)
      assert.matches(out:gsub("%p", "%%%0") .. ": ", log)
      local doc = assert(psdl.read(out))
      local good, problems, counts = psdl.validate(doc, { strict = true })
      assert.is_true(good, problems[1] and (problems[1].path .. ": " .. problems[1].message))
      assert.same({ errors = 0, warnings = 0 }, counts)
      -- the command line agrees
      local cli, cli_ok = run("PSDL_BUILD_DIR=" .. q(build) .. " scripts/psdl validate --strict " .. q(out))
      assert.is_true(cli_ok, cli)
      assert.matches("ok: 0 errors, 0 warnings %(strict%)", cli)
      -- what the example is about
      if want.rooms then assert.equal(want.rooms, #doc.rooms) end
      if want.roads then assert.equal(want.roads, #doc.roads) end
      local kinds = {}
      for _, r in ipairs(doc.rooms) do
        kinds[r.flags] = (kinds[r.flags] or 0) + 1
        for _, a in ipairs(r.attributes) do kinds[a.type] = (kinds[a.type] or 0) + 1 end
      end
      if want.intersections then assert.equal(want.intersections, kinds[0x10]) end
      if want.divided then assert.is_true((kinds.divided_road or 0) > 0) end
      if want.tunnel then
        assert.is_true((kinds[0x4A] or 0) > 0, "no tunnel room (0x4A)")
        assert.is_true((kinds.junction_tunnel or 0) > 0)
        assert.is_true((kinds.tunnel or 0) > 0)
      end
      if want.warp then assert.is_true((kinds[0x48] or 0) > 0, "no bridge deck room (0x48)") end
      if want.facades then
        for _, t in ipairs({ "facade", "facade_bound", "sliver", "roof" }) do
          assert.is_true((kinds[t] or 0) > 0, "no " .. t)
        end
      end
      -- symmetric neighbour links
      for r, room in ipairs(doc.rooms) do
        for _, p in ipairs(room.perimeter) do
          if p.neighbour > 0 then
            local back = false
            for _, o in ipairs(doc.rooms[p.neighbour].perimeter) do if o.neighbour == r then back = true end end
            assert.is_true(back)
          end
        end
      end
    end)
  end
end)
