-- What a city build keeps alive (issue 13, growth): resolved profiles shared by the roads that
-- ask for the same one, and nothing left behind once the city, its document and its report
-- are dropped.
local city_mod = require "psdl.city"

describe("psdl.city memory", function()
  it("shares one resolved profile among roads asking for the same, not among different ones", function()
    local city = city_mod.new{ blocks = false }
    local a, b, c, d = city:node(0, 0), city:node(100, 0), city:node(200, 0), city:node(300, 0)
    local r1 = city:road(a, b, { profile = "avenue" })
    local r2 = city:road(b, c, { profile = "avenue", name = "Main St" })
    local r3 = city:road(c, d, { profile = "avenue", lanes = 2 })
    local r4 = city:road(a, city:node(0, 100), { profile = { kind = "road", lanes = 4 } })
    local r5 = city:road(a, city:node(0, -100), { profile = { kind = "road", lanes = 4 } })
    local r6 = city:road(d, city:node(300, 100), { profile = "avenue", width = 12.5 })
    local r7 = city:road(d, city:node(300, -100), { profile = "avenue", width = 12.5 + 1e-12 })
    assert.equal(r1.spec, r2.spec)
    assert.are_not.equal(r1.spec, r3.spec) -- an override
    assert.equal(4, r1.spec.lanes)
    assert.equal(2, r3.spec.lanes)
    assert.are_not.equal(r4.spec, r5.spec) -- profile tables are the script's: never shared
    assert.are_not.equal(r6.spec, r7.spec) -- widths differing in the last bits
    assert.is_true(r6.spec.half_width < r7.spec.half_width)
  end)

  it("gives every road record of the document its own lane lists", function()
    local city = city_mod.new{ blocks = false, dead_end = "open" }
    local n = {}
    for i = 0, 3 do n[i] = city:node(i * 120, 0, { junction = true }) end
    for i = 0, 2 do city:road(n[i], n[i + 1], { profile = "avenue" }) end
    local doc = city:build()
    assert.equal(3, #doc.roads)
    assert.same(doc.roads[1].lanes_left, doc.roads[2].lanes_left)
    doc.roads[1].lanes_left[1] = 0.75
    assert.equal(0.5, doc.roads[2].lanes_left[1])
    assert.equal(0.5, doc.roads[3].lanes_left[1])
  end)

  it("keeps every room table within 8 keys, the hash its constructor makes (no doubling)", function()
    local city = city_mod.new{ seed = 2 }
    local a, b, c = city:node(0, 0), city:node(200, 0), city:node(200, 150)
    city:road(a, b, { profile = "avenue" })
    city:road(b, c, { via = { { 230, 75 } } })
    city:road(c, a, { tunnel = true })
    city:blocks{ buildings = { floors = { 2, 3 } } }
    local _, rep = city:build()
    local kinds = {}
    for _, r in ipairs(rep.builder.rooms) do
      local n = 0
      for _ in pairs(r) do n = n + 1 end
      assert.is_true(n <= 8, string.format("room %d (%s) has %d keys", r.id, r.kind, n))
      kinds[r.kind] = true
      if r.is_tunnel ~= nil then assert.is_true(r.is_tunnel) end
    end
    assert.is_true(kinds.road and kinds.intersection and kinds.block)
    assert.is_true(rep.kinds.tunnel > 0)
  end)

  it("drops the roads phase's working data once its rooms are made, and builds the same again", function()
    local psdl = require "psdl"
    local city = city_mod.new{ seed = 5 }
    local a, b, c, d = city:node(0, 0), city:node(160, 0), city:node(160, 120), city:node(0, 120)
    city:road(a, b, { profile = "avenue" })
    city:road(b, c, { via = { { 190, 60 } } })
    city:road(c, d)
    city:road(d, a, { bridge = true })
    city:road(a, c, { tunnel = true })
    local doc1 = city:build()
    for _, n in ipairs(city.nodes) do assert.is_nil(n.junction) end
    for _, r in ipairs(city.roads) do
      assert.is_nil(r.poly)
      assert.is_nil(r.crossings)
      assert.is_true(#r.rooms > 0) -- (what psdl.city.repair reads after a failed validation stays)
    end
    local doc2 = city:build()
    assert.equal(psdl.encode(doc1), psdl.encode(doc2))
  end)

  it("builds with the collector's pause at GC_PAUSE and gives the caller's back", function()
    local city = city_mod.new{ blocks = false }
    city:road(city:node(0, 0), city:node(150, 0))
    local seen = {}
    local prev = collectgarbage("setpause", 160)
    local ok, err = pcall(city.build, city, { progress = function()
      local p = collectgarbage("setpause", 0)
      collectgarbage("setpause", p)
      seen[#seen + 1] = p
    end })
    local after = collectgarbage("setpause", prev)
    assert.is_true(ok, tostring(err))
    assert.equal(1000, city_mod.GC_PAUSE)
    assert.same({ 1000, 1000, 1000 }, seen)
    assert.equal(160, after)
  end)

  it("leaves nothing behind once the city, its document and its report are dropped", function()
    local function live()
      collectgarbage(); collectgarbage()
      return collectgarbage("count")
    end
    local function build()
      local city = city_mod.new{ seed = 3 }
      local n = {}
      for i = 0, 5 do
        n[i] = {}
        for j = 0, 5 do n[i][j] = city:node(i * 110, j * 90) end
      end
      for i = 0, 5 do
        for j = 0, 5 do
          if i < 5 then city:road(n[i][j], n[i + 1][j]) end
          if j < 5 then city:road(n[i][j], n[i][j + 1], { profile = i == 2 and "avenue" or "street" }) end
        end
      end
      city:blocks{ buildings = { floors = { 2, 4 } } }
      local doc, rep = city:build()
      assert.is_true(#doc.rooms > 100)
      return rep.rooms
    end
    build() -- (modules and style tables loaded once, as any first build does)
    local before = live()
    build()
    local kept = live() - before
    -- a few KiB of interned strings and caches at most, not a city (the build holds ~3 MiB)
    assert.is_true(kept < 64, string.format("%.1f KiB stay live after the city is dropped", kept))
  end)
end)
