-- The room builder (lua/psdl/builder/): textures, every attribute type, perimeters,
-- neighbours, T-junctions, flags, road records, limits.
local psdl = require "psdl"
local builder = require "psdl.builder"
local geom = require "psdl.geom"
local core = require "psdl.core"

local STREET = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }

-- Decoded copy of a built document (through the encoder: forms, LAST).
local function roundtrip(doc)
  return assert(psdl.decode(psdl.encode(doc)))
end

local function types_of(room)
  local t = {}
  for i, a in ipairs(room.attributes) do t[i] = a.type .. (a.cap and (":" .. a.cap) or "") end
  return t
end

local function count_type(doc, ty)
  local n = 0
  for _, r in ipairs(doc.rooms) do
    for _, a in ipairs(r.attributes) do if a.type == ty then n = n + 1 end end
  end
  return n
end

-- Every neighbour link has its reverse.
local assert_symmetric = require("helper").assert_symmetric

-- Plan S of a list of vertex references.
local function perimeter_s(doc, room)
  local s, per = 0, room.perimeter
  for i = 1, #per do
    local a, b = doc.vertices[per[i].vertex], doc.vertices[per[i % #per + 1].vertex]
    s = s + a[1] * b[3] - b[1] * a[3]
  end
  return s
end

-- A crossroads with four short streets.
local function crossroads(b, opts)
  opts = opts or {}
  local dirs = { {1, 0}, {0, 1}, {-1, 0}, {0, -1} }
  local arms = {}
  for i, d in ipairs(dirs) do arms[i] = { dir = d, profile = STREET } end
  local x, info = b:intersection{ center = { 0, 0, 0 }, arms = arms, radius = 4, room = opts.room, tunnel = opts.tunnel }
  local streets = {}
  for i, d in ipairs(dirs) do
    streets[i] = b:street{ from = { info, i }, path = { { d[1] * 50, 0, d[2] * 50 } }, profile = STREET }
  end
  return x, info, streets
end

describe("psdl.builder", function()
  describe("documents", function()
    it("starts empty and finishes a street into a document that validates strictly", function()
      local b = builder.new()
      local rooms = b:street{ path = { {0, 0, 0}, {0, 0, 60} }, profile = STREET }
      local doc, report = b:finish()
      assert.equal(1, #rooms)
      assert.equal(1, #doc.rooms)
      assert.equal("PSD0", doc.magic)
      assert.equal(0xCD, doc.room0.prop_rule)
      local ok, problems = psdl.validate(doc, { strict = true })
      assert.is_true(ok, problems[1] and problems[1].message)
      assert.equal(report.vertices, #doc.vertices)
      assert.is_true(report.seconds >= 0)
    end)

    it("reserves vertex 1 (file vertex 0) as a dummy no geometry uses", function()
      local b = builder.new()
      crossroads(b)
      local doc = b:finish()
      for _, r in ipairs(doc.rooms) do
        for _, p in ipairs(r.perimeter) do assert.is_true(p.vertex > 1) end
        for _, a in ipairs(r.attributes) do
          for _, v in ipairs(a.vertices or {}) do assert.is_true(v > 1) end
        end
      end
      -- the dummy sits inside the bounds
      local d = doc.vertices[1]
      for k = 1, 3 do assert.is_true(d[k] >= doc.bounds.min[k] and d[k] <= doc.bounds.max[k]) end
    end)

    it("deduplicates vertices and heights", function()
      local b = builder.new()
      local r = b:room()
      r:fan({ {0, 0, 0}, {0, 0, 10}, {10, 0, 10}, {10, 0, 0} }, "s_grass")
      r:roof({ {0, 0, 0}, {0, 0, 10}, {10, 0, 10}, {10, 0, 0} }, 12)
      r:roof({ {2, 0, 2}, {2, 0, 8}, {8, 0, 8}, {8, 0, 2} }, 12)
      local doc = b:finish()
      assert.equal(1 + 8, #doc.vertices)
      assert.same({ 12 }, doc.heights)
    end)

    it("gives the same document twice for the same script", function()
      local function build()
        local b = builder.new{ style = "sf" }
        crossroads(b)
        return psdl.encode((b:finish()))
      end
      assert.equal(build(), build())
    end)

    it("runs a street from one intersection's arm to another's, sections at most `spacing` apart", function()
      local b = builder.new()
      local _, a = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = STREET } } }
      local _, c = b:intersection{ center = { 100, 2, 30 }, arms = { { dir = { -1, 0 }, profile = STREET } } }
      local rooms, info = b:street{ from = { a, 1 }, to = { c, 1 }, path = { { 50, 1, 10 } }, profile = STREET,
                                    spacing = 5 }
      assert.same(a.sections[1], info.first)
      assert.same(builder.reverse(c.sections[1]), info.last)
      for k = 1, #info.center - 1 do
        assert.is_true(geom.dist3(info.center[k], info.center[k + 1]) <= 5 + 1e-9)
      end
      local doc = b:finish()
      assert_symmetric(doc)
      assert.equal(3, #doc.rooms)
      local links = 0
      for _, p in ipairs(doc.rooms[rooms[1].id].perimeter) do if p.neighbour > 0 then links = links + 1 end end
      assert.equal(6, links) -- three section edges at each end
    end)

    it("computes bounds that hold every vertex", function()
      local b = builder.new()
      b:street{ path = { {-20, 3, 5}, {40, -2, 90} }, profile = STREET }
      local doc = b:finish()
      for i = 2, #doc.vertices do
        local v = doc.vertices[i]
        for k = 1, 3 do assert.is_true(v[k] >= doc.bounds.min[k] - 1e-4 and v[k] <= doc.bounds.max[k] + 1e-4) end
      end
      assert.is_true(doc.bounds.radius > 50)
    end)
  end)

  describe("textures", function()
    it("lays out groups whole, divider groups first within the first 255 slots", function()
      local b = builder.new{ style = "sf" }
      b:street{ path = { {0, 0, 0}, {0, 0, 40} }, profile = STREET }
      b:street{ path = { {50, 0, 0}, {50, 0, 40} },
                profile = { kind = "divided", left = 7, right = 7, median = 2, sidewalk_left = 3, sidewalk_right = 3 },
                divider = { divider = "wedge", divider_textures = b.style.dividers.wedge } }
      local doc = b:finish{ drivable = false } -- a fragment, no whole city: format rules only
      local S = b.style
      -- the divider group (wedge: s_jersey_rail x 4) comes first, then the road group
      assert.same({ "s_jersey_rail", "s_jersey_rail", "s_jersey_rail", "s_jersey_rail",
                    S.road.surface, S.road.sidewalk, S.road.lod }, doc.textures)
      local div
      for _, a in ipairs(doc.rooms[2].attributes) do if a.type == "divided_road" then div = a end end
      assert.equal(1, div.divider_texture)
      assert.equal(3, div.divider_type)
    end)

    it("writes the texture reference before textured geometry, only when it changes", function()
      local b = builder.new()
      local r = b:room()
      r:fan({ {0, 0, 0}, {0, 0, 10}, {10, 0, 10}, {10, 0, 0} }, "s_grass")
      r:fan({ {10, 0, 0}, {10, 0, 10}, {20, 0, 10}, {20, 0, 0} }, "s_grass")
      r:fan({ {20, 0, 0}, {20, 0, 10}, {30, 0, 10}, {30, 0, 0} }, "s_concrt")
      r:facade_bound({ 0, 0, 0 }, { 10, 0, 0 }, { top = 10 })
      r:fan({ {30, 0, 0}, {30, 0, 10}, {40, 0, 10}, {40, 0, 0} }, "s_concrt")
      local doc = b:finish()
      assert.same({ "texture", "fan", "fan", "texture", "fan", "facade_bound", "fan" }, types_of(doc.rooms[1]))
      assert.equal(1, doc.rooms[1].attributes[1].value)
      assert.equal(2, doc.rooms[1].attributes[4].value)
    end)

    it("stores texture values above 255 (through the subtype, §2.3)", function()
      local b = builder.new()
      local r
      for i = 1, 300 do
        local x = (i - 1) * 2
        r = b:room()
        r:fan({ {x, 0, 0}, {x, 0, 2}, {x + 2, 0, 2}, {x + 2, 0, 0} }, string.format("tex%03d", i))
      end
      r:texture(280)
      r:fan({ {598, 0, 2}, {598, 0, 4}, {600, 0, 4}, {600, 0, 2} }, "tex300")
      local doc = b:finish()
      local dec = roundtrip(doc)
      local values = {}
      for _, a in ipairs(dec.rooms[300].attributes) do
        if a.type == "texture" then values[#values + 1] = a.value end
      end
      assert.same({ 300, 280, 300 }, values)
      assert.equal("tex300", dec.textures[300])
      assert.equal(256, dec.rooms[256].attributes[1].value)
    end)

    it("spreads a single name over a group's slots where a reader needs more", function()
      local b = builder.new()
      local r = b:room()
      r:sidewalk({ { {0, 0, 0}, {-3, 0.15, 0} }, { {0, 0, 10}, {-3, 0.15, 10} } }, "swalk_f")
      r:crosswalk({ {0, 0, 0}, {0, 0, 3}, {10, 0, 0}, {10, 0, 3} }, "rxwalk_f")
      local doc = b:finish{ drivable = false } -- a fragment, no whole city: format rules only
      assert.same({ "swalk_f", "swalk_f", "swalk_f", "rxwalk_f", "rxwalk_f", "rxwalk_f", "rxwalk_f" }, doc.textures)
    end)

    it("rejects texture names the game cannot read", function()
      local b = builder.new()
      assert.has_error(function() b:texture(string.rep("x", 32)) end)
      assert.has_error(function() b:textures("road", { surface = "a" }) end)
      assert.has_error(function() b:textures("nonsense", "a") end)
    end)
  end)

  describe("attributes", function()
    it("fills rooms with every attribute type 0x0-0xC", function()
      local b = builder.new{ style = "london" }
      -- 0x0 road, 0x9 tunnel (strip form)
      b:street{ path = { {0, 0, 0}, {0, 0, 40} }, profile = STREET, tunnel = { ceiling = "curved" } }
      -- 0x8 divided road, all four divider types
      for i, dt in ipairs({ "none", "flat", "elevated", "wedge" }) do
        b:street{ path = { {40 * i, 0, 0}, {40 * i, 0, 40} },
                  profile = { kind = "divided", left = 7, right = 7, median = 2, sidewalk_left = 3, sidewalk_right = 3 },
                  divider = { divider = dt, cap_start = true, cap_end = i % 2 == 0 } }
      end
      -- 0x2 walkway
      b:street{ path = { {300, 0, 0}, {300, 0, 40} }, profile = { kind = "walkway", left = 2, right = 2 } }
      -- 0x5 road fan, 0x1 sidewalk (with caps), 0x4 crosswalk, 0x9 junction tunnel
      crossroads(b, { tunnel = { ceiling = true } })
      -- 0x1 sidewalk strip with both caps
      b:room():sidewalk({ { {200, 0, -50}, {203, 0.15, -50} }, { {200, 0, -30}, {203, 0.15, -30} } }, nil,
                        { start_cap = true, end_cap = true })
      -- 0x6 fan, 0x7 facade bound, 0xB facade, 0x3 sliver, 0xC roof, 0xA raw texture
      local blk = b:block{ outline = { {-100, 1, -100}, {-100, 0, -60}, {-60, 0, -60}, {-60, 1, -100} } }
      b:building(blk, { outline = { {-95, 1, -95}, {-95, 0, -70}, {-70, 0, -70}, {-70, 1, -95} }, floors = 4 })
      blk:texture(2)
      blk:fan({ {-60, 1, -100}, {-60, 0, -60}, {-50, 0, -60}, {-50, 1, -100} }, "s_grass")
      local doc = b:finish{ strict = false, drivable = false } -- a fragment, no whole city: format rules only
      local seen = {}
      for _, r in ipairs(doc.rooms) do
        for _, a in ipairs(r.attributes) do seen[a.type .. (a.cap and ":" .. a.cap or "")] = true end
      end
      for _, t in ipairs({ "road", "sidewalk_strip", "sidewalk_strip:start", "sidewalk_strip:end", "walkway",
                           "sliver", "crosswalk", "road_fan", "fan", "facade_bound", "divided_road", "tunnel",
                           "junction_tunnel", "texture", "facade", "roof" }) do
        assert.is_true(seen[t], t .. " missing")
      end
      -- divider types 0..3, caps where asked
      local dts, caps = {}, {}
      for _, r in ipairs(doc.rooms) do
        for _, a in ipairs(r.attributes) do
          if a.type == "divided_road" then
            dts[#dts + 1] = a.divider_type
            caps[#caps + 1] = { a.cap_start, a.cap_end }
          end
        end
      end
      assert.same({ 0, 1, 2, 3 }, dts)
      assert.same({ { true, false }, { true, true }, { true, false }, { true, true } }, caps)
      -- only the invisible divider (type 0) draws a warning; nothing else is wrong
      local ok, problems, counts = psdl.validate(doc, { strict = true, drivable = false }) -- pieces side by side
      assert.is_false(ok)
      assert.equal(0, counts.errors)
      for _, p in ipairs(problems) do assert.equal("divider_type", p.rule) end
      -- the encoder picks the forms and sets LAST on each room's final attribute only
      local dec = roundtrip(doc)
      for _, r in ipairs(dec.rooms) do
        for k, a in ipairs(r.attributes) do assert.equal(k == #r.attributes, a.last) end
      end
    end)

    it("puts the tunnel before [texture] and its strip, and flags tunnel rooms 0x4A", function()
      local b = builder.new()
      local rooms = b:street{ path = { {0, -8, 0}, {0, -8, 40} }, profile = STREET,
                              tunnel = { ceiling = "curved", height = 9.5, height2 = 7 } }
      local doc = b:finish()
      local r = doc.rooms[rooms[1].id]
      assert.same({ "texture", "tunnel", "texture", "road" }, types_of(r))
      assert.equal(0x0103, r.attributes[2].flags)
      assert.equal(9.5, r.attributes[2].height1)
      assert.equal(7, r.attributes[2].height2)
      assert.equal(0x4A, r.flags)
    end)

    it("builds bridge railings (0x4003, 1.5 / 1.0) and flags deck rooms warp", function()
      local b = builder.new()
      local rooms = b:street{ path = { {0, 8, 0}, {0, 8, 40} }, profile = STREET, railing = {},
                              room = { bridge = true } }
      local doc = b:finish()
      local r = doc.rooms[rooms[1].id]
      assert.equal(0x48, r.flags)
      assert.equal(0x4003, r.attributes[2].flags)
      assert.equal(1.5, r.attributes[2].height1)
      assert.equal(1.0, r.attributes[2].height2)
    end)

    it("computes a junction tunnel's wall mask from the final perimeter", function()
      local b = builder.new()
      local x = crossroads(b, { tunnel = { ceiling = true, walls = "outside" } })
      local doc = b:finish()
      local r = doc.rooms[x.id]
      local jt
      for _, a in ipairs(r.attributes) do if a.type == "junction_tunnel" then jt = a end end
      assert.equal(0x000B, jt.flags)
      local n = #r.perimeter
      -- bit j: a wall on edge j-1 -> j (0-based, §1.5): exactly the edges with no neighbour
      for e = 1, n do
        local bit = (jt.wall_mask >> (e % n)) & 1
        local zero = r.perimeter[e].vertex == r.perimeter[e % n + 1].vertex
        assert.equal((r.perimeter[e].neighbour == 0 and not zero) and 1 or 0, bit, "edge " .. e)
      end
    end)

    it("lays buildings out: a bound per wall run before its facades, slivers where the ground is low", function()
      local b = builder.new()
      local blk = b:block{ outline = { {0, 0, 0}, {0, 3, 30}, {30, 3, 30}, {30, 0, 0} } }
      local stats = b:building(blk, { outline = { {5, 0.5, 5}, {5, 2.5, 25}, {25, 2.5, 25}, {25, 0.5, 5} },
                                      floors = 3, floor_height = 3, ground_height = 4 })
      assert.equal(2.5, stats.base)
      assert.equal(2.5 + 4 + 9, stats.top)
      assert.equal(4, stats.runs)
      assert.equal(3, stats.slivers)     -- every wall but the uphill one
      local doc = b:finish()
      local r = doc.rooms[1]
      local light
      for _, a in ipairs(r.attributes) do
        if a.type == "facade_bound" then
          light = a.light
          local l, rt = doc.vertices[a.vertices[1]], doc.vertices[a.vertices[2]]
          assert.equal(geom.light_index(rt[1] - l[1], rt[3] - l[3]), a.light)
          assert.equal(stats.top, doc.heights[a.top])
        elseif a.type == "facade" then
          assert.is_not_nil(light, "facade before any bound")
          local l, rt = doc.vertices[a.vertices[1]], doc.vertices[a.vertices[2]]
          assert.equal(geom.light_index(rt[1] - l[1], rt[3] - l[3]), light)
          -- outward: the footprint's centre lies behind the facade
          local dx, dz = rt[1] - l[1], rt[3] - l[3]
          local mx, mz = 15 - l[1], 15 - l[3]
          assert.is_true(-dz * mx + dx * mz < 0)
        elseif a.type == "sliver" then
          assert.equal(stats.base, doc.heights[a.top])
        elseif a.type == "roof" then
          assert.equal(stats.top, doc.heights[a.height])
        end
      end
      assert.is_true(psdl.validate(doc, { strict = true }))
    end)

    it("rejects a road fan that is not flat and a tunnel without a strip", function()
      local b = builder.new()
      local r = b:room{ kind = "intersection" }
      assert.has_error(function() r:road_fan({ {0, 0, 0}, {0, 0, 10}, {10, 1, 10} }) end)
      local t = b:room{ kind = "road" }
      t:tunnel{}
      t:fan({ {0, 0, 0}, {0, 0, 10}, {10, 0, 10} })
      assert.has_error(function() b:finish() end, nil)
    end)
  end)

  describe("rooms", function()
    it("fan_refs makes the fans `fan` makes of the same points, and names a bad argument", function()
      -- an L-shaped (concave) polygon: more than one fan
      local L = { {0, 0, 0}, {0, 0, 20}, {10, 0, 20}, {10, 0, 10}, {20, 0, 10}, {20, 0, 0} }
      local b1, b2 = builder.new(), builder.new()
      local r1 = b1:room{ outline = L }
      r1:fan(L, "s_grass")
      local r2 = b2:room{ outline = L }
      local refs = {}
      for i, p in ipairs(L) do refs[i] = b2:vertex(p) end
      local r, made = r2:fan_refs(refs, "s_grass")
      assert.equal(r2, r)
      local ops1, ops2 = b1:attributes(r1), b2:attributes(r2)
      assert.is_true(#ops1 > 1)
      assert.equal(#ops1, #ops2)
      assert.equal(#ops2, #made)
      for k = 1, #ops1 do
        assert.same(b1:flat_of(ops1[k].refs), b2:flat_of(ops2[k].refs))
        assert.same(ops2[k].refs, made[k])
      end
      assert.equal(b1.vpool:count(), b2.vpool:count())
      local function err(...)
        local n = b2:attribute_count(r2)
        local ok, e = pcall(r2.fan_refs, r2, ...)
        assert.is_false(ok)
        assert.equal(n, b2:attribute_count(r2)) -- nothing added
        return e
      end
      assert.matches("refs%[2%]", err({ refs[1], 0, refs[3] }))
      assert.matches("refs%[3%]", err({ refs[1], refs[2], 1e6 }))
      assert.matches("refs%[1%]", err({ "x", refs[2], refs[3] }))
      assert.matches("3 or more", err({ refs[1], refs[2] }))
      assert.matches("list of vertex references", err("refs"))
      assert.matches("self%-intersecting", err({ refs[1], refs[3], refs[2], refs[6] }))
      assert.matches("no area", err({ refs[1], refs[2], refs[1] }))
      assert.matches("hub_height", err(refs, nil, { hub_height = 1 }))
    end)

    it("sets room flags: road 0x08, intersection 0x10, standard 0x04", function()
      local b = builder.new()
      local x, _, streets = crossroads(b)
      local blk = b:block{ outline = { {20, 0.15, 20}, {20, 0.15, 40}, {40, 0.15, 40}, {40, 0.15, 20} } }
      local doc = b:finish{ drivable = false } -- a fragment, no whole city: format rules only
      assert.equal(0x10, doc.rooms[x.id].flags)
      assert.equal(0x08, doc.rooms[streets[1][1].id].flags)
      assert.equal(0x04, doc.rooms[blk.id].flags)
    end)

    it("computes a perimeter in retail winding from the ground geometry", function()
      local b = builder.new()
      local r = b:room()
      r:fan({ {0, 0, 0}, {10, 0, 0}, {10, 0, 10}, {0, 0, 10} })
      r:fan({ {10, 0, 0}, {20, 0, 0}, {20, 0, 10}, {10, 0, 10} })
      local doc = b:finish()
      assert.equal(6, #doc.rooms[1].perimeter)
      assert.is_true(perimeter_s(doc, doc.rooms[1]) < 0)
      assert.near(-400, perimeter_s(doc, doc.rooms[1]), 1e-6)
    end)

    it("gives an intersection the outline of its surface as perimeter", function()
      local b = builder.new()
      local x = crossroads(b)
      local doc = b:finish()
      local r = doc.rooms[x.id]
      local tris = {}
      for _, a in ipairs(r.attributes) do
        if a.type ~= "texture" and a.type ~= "junction_tunnel" and not a.cap then
          for _, v in ipairs(core.surface_triangles(a.type, a.vertices)) do tris[#tris + 1] = v end
        end
      end
      local pool = {}
      for i, v in ipairs(doc.vertices) do pool[i] = v end
      local outline = geom.boundary(tris, pool)
      local per = {}
      for _, p in ipairs(r.perimeter) do
        if per[#per] ~= p.vertex then per[#per + 1] = p.vertex end
      end
      assert.equal(#outline, #per)
      local start
      for i, v in ipairs(per) do if v == outline[1] then start = i end end
      for k = 1, #outline do assert.equal(outline[k], per[(start + k - 2) % #per + 1]) end
    end)

    it("links neighbours symmetrically across shared edges", function()
      local b = builder.new()
      crossroads(b)
      local doc = b:finish()
      assert_symmetric(doc)
      local links = 0
      for _, r in ipairs(doc.rooms) do
        for _, p in ipairs(r.perimeter) do if p.neighbour > 0 then links = links + 1 end end
      end
      assert.equal(24, links) -- 4 arms x 3 section edges, both sides
    end)

    it("repeats a vertex once per neighbour that touches only there (§1.5)", function()
      local b = builder.new()
      local sq = function(x, z) return { {x, 0, z}, {x, 0, z + 10}, {x + 10, 0, z + 10}, {x + 10, 0, z} } end
      local r1 = b:block{ outline = sq(0, 0) }
      b:block{ outline = sq(10, 0) }
      b:block{ outline = sq(0, 10) }
      local r4 = b:block{ outline = sq(10, 10) }
      local doc = b:finish()
      assert_symmetric(doc)
      local per = doc.rooms[r1.id].perimeter
      assert.equal(5, #per)
      local rep = 0
      for i = 1, #per do
        if per[i].vertex == per[i % #per + 1].vertex then
          rep = rep + 1
          assert.equal(r4.id, per[i].neighbour)
        end
      end
      assert.equal(1, rep)
    end)

    it("orders block rooms first on request", function()
      local b = builder.new()
      crossroads(b)
      b:block{ outline = { {20, 0.15, 20}, {20, 0.15, 40}, {40, 0.15, 40}, {40, 0.15, 20} } }
      local doc = b:finish{ order = "blocks_first", drivable = false } -- a fragment, no whole city: format rules only
      assert.equal(0x04, doc.rooms[1].flags)
      assert.equal(2, doc.first_road_room)
      assert_symmetric(doc)
    end)
  end)

  describe("T-junctions", function()
    it("finds a T-junction and repairs it in the coarser room's perimeter and fans", function()
      local b = builder.new()
      local _, info = b:street{ path = { {0, 0, 0}, {0, 0, 60} }, profile = STREET, spacing = 10 }
      local x = info.left[1][1]
      -- a block given only by its corners: the street's sidewalk points lie on its edge
      local blk = b:block{ outline = { {x, 0.15, 0}, {x, 0.15, 60}, {x + 30, 0.15, 60}, {x + 30, 0.15, 0} } }
      local doc, report = b:finish()
      assert.equal(5, report.tjunctions.found)
      assert.equal(5, report.tjunctions.repaired)
      assert.same({}, report.tjunctions.unrepaired)
      local r = doc.rooms[blk.id]
      assert.equal(4 + 5, #r.perimeter)
      -- every street point on the edge is now in the block's perimeter and in its fans
      local in_fans = {}
      for _, a in ipairs(r.attributes) do
        if a.type == "fan" then for _, v in ipairs(a.vertices) do in_fans[v] = true end end
      end
      local function f32(x) return (string.unpack("f", string.pack("f", x))) end
      for _, p in ipairs(info.left) do
        local v
        for i, q in ipairs(doc.vertices) do
          if q[1] == f32(p[1]) and q[2] == f32(p[2]) and q[3] == f32(p[3]) then v = i end
        end
        assert.is_true(in_fans[v], "street point not in the block's fans")
      end
      -- no T-junction is left, the links are symmetric, and the block is neighbour to the street
      local perims = {}
      for i, rm in ipairs(doc.rooms) do
        perims[i] = {}
        for _, p in ipairs(rm.perimeter) do perims[i][#perims[i] + 1] = p.vertex end
      end
      local flat = {}
      for _, v in ipairs(doc.vertices) do flat[#flat + 1] = v[1]; flat[#flat + 1] = v[2]; flat[#flat + 1] = v[3] end
      assert.same({}, core.tjunctions(flat, perims))
      assert_symmetric(doc)
      assert.is_true(psdl.validate(doc, { strict = true }))
    end)

    it("repairs a strip by inserting a section", function()
      local b = builder.new()
      local rooms, info = b:street{ path = { {0, 0, 0}, {0, 0, 40} }, profile = STREET, spacing = 40 }
      local x = info.left[1][1]
      -- a block with a point in the middle of the street's long side
      b:block{ outline = { {x, 0.15, 0}, {x, 0.15, 25}, {x, 0.15, 40}, {x + 20, 0.15, 40}, {x + 20, 0.15, 0} } }
      local doc, report = b:finish()
      assert.is_true(report.tjunctions.repaired >= 1)
      local road
      for _, a in ipairs(doc.rooms[rooms[1].id].attributes) do if a.type == "road" then road = a end end
      assert.equal(3 * 4, #road.vertices) -- 2 sections + 1 inserted at z = 25
      assert.near(25, doc.vertices[road.vertices[5]][3], 1e-4)
      assert.is_true(psdl.validate(doc, { strict = true }))
    end)

    it("reports a T-junction a crosswalk edge cannot take, naming the room", function()
      local b = builder.new()
      local x, info = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = STREET } } }
      local sec = info.sections[1]
      -- a room whose outline has a point in the middle of the road end (the crosswalk's edge)
      local m = { (sec[2][1] + sec[3][1]) / 2, 0, (sec[2][3] + sec[3][3]) / 2 }
      b:room{ name = "patch", outline = { sec[2], m, sec[3], { sec[3][1] + 5, 0, sec[3][3] }, { sec[2][1] + 5, 0, sec[2][3] } } }
        :fan({ sec[2], m, sec[3], { sec[3][1] + 5, 0, sec[3][3] }, { sec[2][1] + 5, 0, sec[2][3] } })
      local _, report = b:finish{ validate = false }
      assert.equal(1, #report.tjunctions.unrepaired)
      assert.matches("room " .. x.serial .. " %(intersection%)", report.tjunctions.unrepaired[1])
    end)
  end)

  describe("road records", function()
    it("fills crossroads from the end sections and flags from the strip", function()
      local b = builder.new()
      local rooms = b:street{ path = { {0, 0, 0}, {0, 0, 100} }, profile = STREET, split = 8,
                              room = { prop_rule = 7 } }
      b:road_record{ rooms = rooms }
      local walk = b:street{ path = { {50, 0, 0}, {50, 0, 30} }, profile = { kind = "walkway", left = 2, right = 2 } }
      b:road_record{ rooms = walk }
      local doc = b:finish{ drivable = false } -- a fragment, no whole city: format rules only
      assert.is_true(#rooms > 1)
      local rd = doc.roads[1]
      assert.equal(0x40, rd.flags)
      assert.equal(#rooms, #rd.rooms)
      local first = doc.rooms[rd.rooms[1]].attributes[2].vertices
      local last = doc.rooms[rd.rooms[#rd.rooms]].attributes[2].vertices
      assert.same({ first[1], first[2], first[3], first[4] }, rd.start_crossroads)
      assert.same({ last[#last - 3], last[#last - 2], last[#last - 1], last[#last] }, rd.end_crossroads)
      assert.equal(7, doc.rooms[rd.rooms[1]].prop_rule)
      assert.equal(0, doc.rooms[rd.rooms[2]].prop_rule)
      assert.equal(0x10, doc.roads[2].flags)
      local wv = doc.rooms[doc.roads[2].rooms[1]].attributes[2].vertices
      assert.same({ wv[1], wv[1], wv[2], wv[2] }, doc.roads[2].start_crossroads)
      -- consecutive rooms share a full cross-section and link across it
      assert_symmetric(doc)
      assert.is_true(psdl.validate(doc, { strict = true, drivable = false })) -- two separate streets
    end)
  end)

  describe("limits", function()
    it("raises at the vertex budget of §3.2, naming the room", function()
      local b = builder.new()
      local r = b:room{ kind = "road", name = "long alley" }
      local rows = {}
      for k = 1, 32600 do rows[k] = { { 1, 0, k }, { -1, 0, k } } end
      assert.has_error(function() r:walkway(rows, "r_alley") end,
        nil)
      local ok, err = pcall(r.walkway, r, rows, "r_alley")
      assert.is_false(ok)
      assert.matches('room 1 %("long alley"%): the vertex pool reaches 65201 vertices, above the safe budget of 65024', err)
    end)

    it("raises at 255 perimeter points, naming the room", function()
      local b = builder.new()
      local ring = {}
      for i = 1, 300 do
        local a = -2 * math.pi * i / 300
        ring[i] = { 100 * math.cos(a), 0, 100 * math.sin(a) }
      end
      b:block{ outline = ring, room = { name = "round park" } }
      local ok, err = pcall(b.finish, b)
      assert.is_false(ok)
      assert.matches('room 1 %("round park"%): 300 perimeter points; the game keeps the count in one byte, 255 at most', err)
    end)

    it("raises past texture value 2047, naming the room", function()
      local b = builder.new()
      local r = b:room{ name = "patchwork" }
      for i = 1, 2048 do
        local x = (i - 1) * 2
        r:fan({ {x, 0, 0}, {x, 0, 2}, {x + 2, 0, 2} }, "t" .. i)
      end
      local ok, err = pcall(b.finish, b)
      assert.is_false(ok)
      assert.matches('room 1 %("patchwork"%): its texture group %(single: t2048%) needs texture slots up to 2048, above 2047', err)
      assert.has_error(function() r:texture(2048) end)
    end)

    it("raises when a divider group lands beyond slot 255, naming the room", function()
      local b = builder.new()
      local P = { kind = "divided", left = 7, right = 7, median = 2, sidewalk_left = 3, sidewalk_right = 3 }
      for i = 1, 70 do
        b:street{ path = { {30 * i, 0, 0}, {30 * i, 0, 10} }, profile = P,
                  divider = { divider_textures = "div" .. i }, room = { name = "avenue " .. i } }
      end
      local ok, err = pcall(b.finish, b)
      assert.is_false(ok)
      -- 64 groups of 4 fill values 1..256; the 65th starts at 257
      assert.matches('room 65 %("avenue 65"%): divider texture group %(div65, div65, div65, div65%) lands at texture '
        .. 'value 257, above 255: the divided road stores it in one byte', err)
    end)

    it("raises for a curve tighter than the road unless allowed", function()
      local b = builder.new()
      local ok, err = pcall(b.street, b, { path = { {0, 0, 0}, {6, 0, 6}, {0, 0, 12} }, profile = STREET,
                                           room = { name = "hairpin" } })
      assert.is_false(ok)
      assert.matches('room 1 %("hairpin"%): the centre line bends tighter than the road is wide', err)
    end)
  end)

  describe("argument checks", function()
    -- The message of a call that must fail, for assert.matches (plain text).
    local function err_of(f, ...)
      local ok, err = pcall(f, ...)
      assert.is_false(ok, "no error")
      return err
    end
    local function raises(text, f, ...)
      local err = err_of(f, ...)
      assert.is_truthy(err:find(text, 1, true), "expected '" .. text .. "' in: " .. err)
    end
    local SQ = { {0, 0, 0}, {0, 0, 30}, {30, 0, 30}, {30, 0, 0} }

    it("builds the same rooms from a centre line given as points or flat", function()
      local function bytes(center)
        local b = builder.new()
        b:street{ center = center, profile = STREET }
        return require("psdl").encode(b:finish())
      end
      assert.equal(bytes({ {0, 0, 0}, {3, 0.5, 40}, {10, 1, 80} }), bytes({ 0, 0, 0, 3, 0.5, 40, 10, 1, 80 }))
    end)

    it("rejects NaN and infinite coordinates and options, naming the argument (no runaway sampling)", function()
      local b = builder.new()
      raises("bad argument #1 to 'street' (path[2]: x is not a finite number)",
        b.street, b, { path = { {0, 0, 0}, {0 / 0, 0, 50} }, profile = STREET })
      raises("bad argument #1 to 'street' (path[2]: x is not a finite number)",
        b.street, b, { path = { {0, 0, 0}, {math.huge, 0, 50} }, profile = STREET })
      raises("path[1]: z is not a finite number", b.street, b, { path = { {0, 0, -math.huge}, {0, 0, 50} }, profile = STREET })
      raises("center[2]: y is not a finite number", b.street, b, { center = { {0, 0, 0}, {0, 0 / 0, 50} }, profile = STREET })
      -- a flat centre line (psdl.city's): the same checks, naming the point
      raises("center[2]: y is not a finite number", b.street, b, { center = { 0, 0, 0, 0, 0 / 0, 50 }, profile = STREET })
      raises("center[3]: x = 1e+39 lies too far out: coordinates within +-65536 m", b.street, b,
        { center = { 0, 0, 0, 0, 0, 50, 1e39, 0, 60 }, profile = STREET })
      raises("center: a flat array of x, y, z expected, got 5 numbers", b.street, b,
        { center = { 0, 0, 0, 0, 0 }, profile = STREET })
      raises("center: 2 or more points expected, got 1", b.street, b, { center = { 0, 0, 0 }, profile = STREET })
      raises("lies too far out", b.street, b, { path = { {0, 0, 0}, {1e39, 0, 50} }, profile = STREET })
      raises("spacing: finite number expected, got inf", b.street, b,
        { path = { {0, 0, 0}, {0, 0, 50} }, profile = STREET, spacing = math.huge })
      raises("profile.left: finite number expected, got nan", b.street, b,
        { path = { {0, 0, 0}, {0, 0, 50} }, profile = { kind = "road", left = 0 / 0, right = 5 } })
      raises("start_dir[1]: finite number expected", b.street, b,
        { path = { {0, 0, 0}, {0, 0, 50} }, profile = STREET, start_dir = { 0 / 0, 1 } })
      raises("tunnel.height: finite number expected", b.street, b,
        { path = { {0, 0, 0}, {0, 0, 50} }, profile = STREET, tunnel = { height = 0 / 0 } })
      raises("bad argument #1 to 'intersection' (center: x is not a finite number)",
        b.intersection, b, { center = { 0 / 0, 0, 0 }, arms = { { dir = { 1, 0 } } } })
      raises("radius: finite number expected, got inf", b.intersection, b,
        { center = { 0, 0, 0 }, radius = math.huge, arms = { { dir = { 1, 0 } }, { dir = { 0, 1 } } } })
      raises("arms[2].dir[2]: finite number expected", b.intersection, b,
        { center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, { dir = { 0, 0 / 0 } } } })
      raises("arms[1].min_distance: finite number expected", b.intersection, b,
        { center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, min_distance = math.huge } } })
      raises("bad argument #1 to 'block' (outline[3]: x is not a finite number)",
        b.block, b, { outline = { {0, 0, 0}, {0, 0, 10}, {0 / 0, 0, 10} } })
      local blk = b:block{ outline = SQ }
      raises("bad argument #2 to 'building' (floors: finite number expected, got nan)",
        b.building, b, blk, { outline = { {5, 0, 5}, {5, 0, 10}, {10, 0, 10}, {10, 0, 5} }, floors = 0 / 0 })
      raises("bad argument #1 to 'fan' (polygon[2]: y is not a finite number)", blk.fan, blk, { {0, 0, 0}, {0, 0 / 0, 1}, {1, 0, 0} })
      raises("bad argument #3 to 'facade' (opts.top: finite number expected, got inf)",
        blk.facade, blk, {0, 0, 0}, {4, 0, 0}, { bottom = 0, top = math.huge })
      raises("bad argument #1 to 'height'", b.height, b, 0 / 0)
      raises("bad argument #1 to 'vertex'", b.vertex, b, { 0, math.huge, 0 })
      -- nothing was added to the pools by the failed calls beyond the block
      assert.is_true(b.vpool:count() < 20)
    end)

    it("raises for a street of zero horizontal length", function()
      local b = builder.new()
      raises("bad argument #1 to 'street' (path has zero horizontal length)",
        b.street, b, { path = { {5, 0, 5}, {5, 0, 5} }, profile = STREET })
      raises("bad argument #1 to 'street' (path has zero horizontal length)",
        b.street, b, { path = { {5, 0, 5}, {5, 10, 5} }, profile = STREET })
      raises("center has zero horizontal length", b.street, b, { center = { {5, 0, 5}, {5, 3, 5} }, profile = STREET })
      local _, x = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = STREET } } }
      local c = x.centers[1]
      raises("path has zero horizontal length (with from / to)", b.street, b, { from = { x, 1 }, path = { c }, profile = STREET })
      assert.equal(1, #b.rooms) -- only the intersection
    end)

    it("builds two-arm junctions in line (a mid-block crosswalk, a change of width) that validate strictly", function()
      local WIDE = { kind = "road", left = 7, right = 7, sidewalk_left = 3, sidewalk_right = 3 }
      local NARROW_ONE_SIDE = { kind = "road", left = 4, right = 4, sidewalk_left = 2, sidewalk_right = 0 }
      for _, q in ipairs({ STREET, WIDE, NARROW_ONE_SIDE }) do
        local b = builder.new()
        local x, info = b:intersection{ center = { 0, 0, 0 },
                                        arms = { { dir = { 1, 0 }, profile = STREET }, { dir = { -1, 0 }, profile = q } } }
        local s1 = b:street{ from = { info, 1 }, path = { { 60, 0, 0 } }, profile = STREET }
        local s2 = b:street{ from = { info, 2 }, path = { { -60, 0, 0 } }, profile = q }
        local doc, report = b:finish() -- strict
        assert.same({}, report.tjunctions.unrepaired)
        assert.is_true(psdl.validate(doc, { strict = true }))
        assert_symmetric(doc)
        -- the junction links to both streets, and has road surface between its crosswalks
        local nbs = {}
        for _, p in ipairs(doc.rooms[x.id].perimeter) do nbs[p.neighbour] = true end
        assert.is_true(nbs[s1[1].id] and nbs[s2[1].id])
        assert.is_true(count_type(doc, "road_fan") >= 1)
        assert.is_true(info.distance[1] >= 4 and info.distance[2] >= 4)
      end
      -- arms at 0 and 179 degrees keep what they built before
      local b = builder.new()
      local a = math.rad(179)
      local _, info = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = STREET },
                                                                   { dir = { math.cos(a), math.sin(a) }, profile = STREET } } }
      assert.near(3.0872686779, info.distance[1], 1e-9)
    end)

    it("rejects nonsense widths, spacings, radii, floors and polygons, naming the field", function()
      local b = builder.new()
      local path = { {0, 0, 0}, {0, 0, 50} }
      raises("bad argument #1 to 'street' (profile.left: non-negative number expected, got -5)",
        b.street, b, { path = path, profile = { kind = "road", left = -5, right = 5 } })
      raises("profile: left + right must be positive", b.street, b,
        { path = path, profile = { kind = "road", left = 0, right = 0, sidewalk_left = 3 } })
      raises("profile.sidewalk_right: non-negative number expected, got -1", b.street, b,
        { path = path, profile = { kind = "road", left = 5, right = 5, sidewalk_right = -1 } })
      raises("a divided road needs positive left and right widths", b.street, b,
        { path = path, profile = { kind = "divided", left = 0, right = 5, median = 2 } })
      raises("profile.kind: \"road\", \"divided\" or \"walkway\" expected, got \"lane\"", b.street, b,
        { path = path, profile = { kind = "lane", left = 5, right = 5 } })
      raises("spacing: positive number expected, got 0", b.street, b, { path = path, profile = STREET, spacing = 0 })
      raises("spacing: positive number expected, got -3", b.street, b, { path = path, profile = STREET, spacing = -3 })
      raises("split: integer in 2.. expected, got 1", b.street, b, { path = path, profile = STREET, split = 1 })
      raises("bad argument #1 to 'intersection' (radius: non-negative number expected, got -1)", b.intersection, b,
        { center = { 0, 0, 0 }, radius = -1, arms = { { dir = { 1, 0 } }, { dir = { 0, 1 } } } })
      raises("arms[1] and arms[2] are less than 1 degree apart", b.intersection, b,
        { center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, { dir = { 1, 0.001 } } } })
      raises("arms[2].dir: zero direction", b.intersection, b,
        { center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, { dir = { 0, 0 } } } })
      raises("arms[1].profile.right: non-negative number expected", b.intersection, b,
        { center = { 0, 0, 0 }, arms = { { dir = { 1, 0 }, profile = { kind = "road", left = 5, right = -2 } } } })
      raises("bad argument #1 to 'block' (outline: self-intersecting polygon (edges 1 and 3 cross))",
        b.block, b, { outline = { {0, 0, 0}, {10, 0, 10}, {10, 0, 0}, {0, 0, 10} } })
      raises("outline: the polygon has no area", b.block, b, { outline = { {0, 0, 0}, {5, 0, 5}, {10, 0, 10} } })
      raises("holes[1]: point 1 lies outside outline", b.block, b,
        { outline = SQ, holes = { { {40, 0, 10}, {50, 0, 10}, {50, 0, 20} } } })
      raises("outline edge 3 crosses holes[1] edge 1", b.block, b,
        { outline = { {0, 0, 0}, {0, 0, 30}, {10, 0, 30}, {10, 0, 10}, {30, 0, 10}, {30, 0, 0} },
          holes = { { {2, 0, 20}, {20, 0, 2}, {2, 0, 2} } } })
      raises("bad argument #1 to 'room' (outline: self-intersecting polygon (edges 1 and 3 cross))",
        b.room, b, { outline = { {0, 0, 0}, {10, 0, 10}, {10, 0, 0}, {0, 0, 10} } })
      local blk = b:block{ outline = SQ }
      local other = b:block{ outline = { {40, 0, 0}, {40, 0, 30}, {70, 0, 30}, {70, 0, 0} }, room = { name = "east" } }
      local fp = { {5, 0, 5}, {5, 0, 10}, {10, 0, 10}, {10, 0, 5} }
      raises("bad argument #2 to 'building' (floors: non-negative number expected, got -1)",
        b.building, b, blk, { outline = fp, floors = -1 })
      raises("the building has no height", b.building, b, blk, { outline = fp, floors = 0 })
      raises("floor_height: positive number expected, got 0", b.building, b, blk, { outline = fp, floor_height = 0 })
      raises("outline: self-intersecting polygon (edges 1 and 3 cross)", b.building, b, blk,
        { outline = { {5, 0, 5}, {10, 0, 10}, {10, 0, 5}, {5, 0, 10} } })
      raises(string.format("building outline leaves the outline of room %d (\"east\") at point 1", other.serial),
        b.building, b, other, { outline = fp })
      raises("building outline leaves the outline of room", b.building, b, blk,
        { outline = { {25, 0, 5}, {25, 0, 10}, {35, 0, 10}, {35, 0, 5} } })
      raises("bad argument #1 to 'fan' (polygon: self-intersecting polygon", blk.fan, blk,
        { {0, 0, 0}, {10, 0, 10}, {10, 0, 0}, {0, 0, 10} })
      raises("opts.top (2) must be above opts.bottom (5)", blk.facade, blk, {0, 0, 0}, {4, 0, 0}, { bottom = 5, top = 2 })
      raises("bad argument #1 to 'new' (eps: non-negative number expected, got -1)", builder.new, { eps = -1 })
      raises("snap: positive number expected, got 0", builder.new, { snap = 0 })
      -- a ground floor alone is a building; floors above it are left out
      local stats = b:building(blk, { outline = fp, floors = 0, ground_height = 4 })
      assert.equal(4, stats.top - stats.base)
      assert.equal(4, stats.facades)
    end)

    it("names the argument instead of raising raw Lua errors", function()
      local b = builder.new()
      local _, x3 = b:intersection{ center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, { dir = { 0, 1 } }, { dir = { -1, 0 } } } }
      local function msg(f, ...)
        local err = err_of(f, ...)
        assert.is_nil(err:find("psdl/builder", 1, true), "points into the builder: " .. err)
        assert.is_nil(err:find("psdl/check.lua", 1, true), "points into the checker: " .. err)
        assert.is_nil(err:find("attempt to", 1, true), "raw Lua error: " .. err)
        return err
      end
      assert.matches("bad argument #1 to 'street' %(from%[1%]: the info table of Builder:intersection expected",
        msg(b.street, b, { from = { {}, 1 }, path = { {0, 0, 50} }, profile = STREET }))
      assert.matches("from%[2%]: arm number 1..3 expected %(the junction has 3 arms%), got 9",
        msg(b.street, b, { from = { x3, 9 }, path = { {0, 0, 50} }, profile = STREET }))
      assert.matches("to%[2%]: arm number 1..3 expected", msg(b.street, b, { to = { x3, 0 }, path = { {0, 0, 50} }, profile = STREET }))
      assert.matches("bad argument #1 to 'street' %(profile: table expected, got string%)",
        msg(b.street, b, { path = { {0, 0, 0}, {0, 0, 50} }, profile = "road" }))
      local blk = b:block{ outline = { {30, 0, 30}, {30, 0, 60}, {60, 0, 60}, {60, 0, 30} } }
      assert.matches("bad argument #2 to 'building' %(floors: non%-negative number expected, got \"x\"%)",
        msg(b.building, b, blk, { outline = { {35, 0, 35}, {35, 0, 40}, {40, 0, 40}, {40, 0, 35} }, floors = "x" }))
      local err = msg(b.street, b, { path = { {0, 0}, {0, 50} }, profile = STREET })
      assert.matches("bad argument #1 to 'street' %(path%[1%]: 3%-D point {x, y, z} expected, got a 2%-D point {0, 0}%)", err)
      assert.is_nil(err:find("spline", 1, true))
      assert.matches("bad argument #1 to 'texture' %(name \"x+\" has 40 characters; texture names have 1..31",
        msg(b.texture, b, string.rep("x", 40)))
      assert.matches("bad argument #1 to 'street' %(split: integer expected, got \"x\"%)",
        msg(b.street, b, { path = { {0, 0, 0}, {0, 0, 50} }, profile = STREET, split = "x" }))
      assert.matches("railing: table expected, got boolean",
        msg(b.street, b, { path = { {0, 0, 0}, {0, 0, 50} }, profile = STREET, railing = true }))
      assert.matches("start_section: 4 points expected %(the profile's section%), got 2",
        msg(b.street, b, { path = { {0, 0, 0}, {0, 0, 50} }, profile = STREET, start_section = { {0, 0, 0}, {1, 0, 0} } }))
      assert.matches("arms%[2%]: table expected, got number",
        msg(b.intersection, b, { center = { 0, 0, 0 }, arms = { { dir = { 1, 0 } }, 5 } }))
      assert.matches("lanes_left%[2%]: finite number expected",
        msg(b.road_record, b, { rooms = { blk }, lanes_left = { 0.5, 0 / 0 } }))
      assert.matches("bad argument #1 to 'room' %(prop_rule: integer in 0..255 expected, got 300%)",
        msg(b.room, b, { prop_rule = 300 }))
      -- the message points at the calling line (this file), not into the builder
      local ok, where = pcall(function() b:street{ path = { {0, 0, 0}, {0, 0, 0 / 0} }, profile = STREET } end)
      assert.is_false(ok)
      assert.matches("^spec/builder_spec.lua:%d+: bad argument #1 to 'street'", where)
    end)

    it("joins a room's holes into its perimeter through keyhole cuts, so a room in the hole links", function()
      local hole = { {10, 0, 10}, {20, 0, 10}, {20, 0, 20}, {10, 0, 20} }
      local function in_perimeter(doc, room, x, z)
        local inside, per = false, room.perimeter
        for i = 1, #per do
          local a, c = doc.vertices[per[i].vertex], doc.vertices[per[i % #per + 1].vertex]
          if (a[3] > z) ~= (c[3] > z) and x < a[1] + (z - a[3]) * (c[1] - a[1]) / (c[3] - a[3]) then inside = not inside end
        end
        return inside
      end
      for _, how in ipairs({ "block", "room outline", "fans only" }) do
        local b = builder.new()
        local outer
        if how == "block" then
          outer = b:block{ outline = SQ, holes = { hole } }
        elseif how == "room outline" then
          outer = b:room{ outline = SQ, holes = { hole } }
          outer:fan(SQ, "s_grass", { holes = { hole } })
        else
          outer = b:room()
          outer:fan(SQ, "s_grass", { holes = { hole } })
        end
        local inner = b:block{ outline = hole, room = { name = "courtyard" } }
        local doc = b:finish() -- strict
        assert_symmetric(doc)
        local po, pi = doc.rooms[outer.id], doc.rooms[inner.id]
        -- one ring: the outer ring, a bridge, the hole the other way round, back
        assert.equal(4 + 4 + 2, #po.perimeter, how)
        assert.is_true(perimeter_s(doc, po) < 0)
        local linked = 0
        for _, p in ipairs(po.perimeter) do if p.neighbour == inner.id then linked = linked + 1 end end
        assert.equal(4, linked, how)
        for _, p in ipairs(pi.perimeter) do assert.equal(outer.id, p.neighbour) end
        -- the game's point-in-perimeter test: the courtyard is not in the outer room
        assert.is_false(in_perimeter(doc, po, 15, 15), how)
        assert.is_true(in_perimeter(doc, pi, 15, 15), how)
        assert.is_true(in_perimeter(doc, po, 5, 25) and in_perimeter(doc, po, 25, 5) and in_perimeter(doc, po, 3, 2), how)
      end
    end)

    it("warns about blocks that meet a road room at another height (report and strict)", function()
      local function build(y)
        local b = builder.new()
        local rooms, info = b:street{ path = { {0, 0, 0}, {0, 0, 60} }, profile = STREET }
        local x = info.left[1][1]
        local blk = b:block{ outline = { {x, y, 0}, {x, y, 60}, {x + 30, y, 60}, {x + 30, y, 0} } }
        return b, rooms[1], blk
      end
      -- at ground level beside the sidewalk (0.15 m up): unlinked, a warning
      local b, road, blk = build(0)
      local doc, report = b:finish{ strict = false, drivable = false } -- a fragment, no whole city: format rules only
      assert.equal(1, #report.warnings)
      assert.matches(string.format("room %d %%(block%%): perimeter edge %%d+ runs along an edge of room %d %%(road%%) but "
        .. "0.150 m below it", blk.serial, road.serial), report.warnings[1])
      for _, p in ipairs(doc.rooms[blk.id].perimeter) do assert.equal(0, p.neighbour) end
      local err = err_of(b.finish, b, { drivable = false })
      assert.matches("does not validate %(strict%)", err)
      assert.matches("warning builder room %d+ %(block%): perimeter edge", err)
      -- at sidewalk height: linked, no warning
      b, road, blk = build(geom.CURB)
      doc, report = b:finish{ drivable = false }
      assert.same({}, report.warnings)
      local linked = false
      for _, p in ipairs(doc.rooms[blk.id].perimeter) do if p.neighbour == road.id then linked = true end end
      assert.is_true(linked)
      -- far above (a deck) or below (a tunnel) is no contact
      b = build(5)
      doc, report = b:finish{ drivable = false }
      assert.same({}, report.warnings)
    end)
  end)
end)
