-- Tunnels and bridges of a city (lua/psdl/city/tunnel.lua): bores, cuts, decks, ramps and
-- underground junctions, as `psdl.city` builds them.
local H = require "helper"
local city_mod = require "psdl.city"
local tunnel = require "psdl.city.tunnel"
local FLAG, intersection_rooms, perimeter_poly, bbox = H.FLAG, H.intersection_rooms, H.perimeter_poly, H.bbox
local function V(doc, i) return doc.vertices[i] end

describe("psdl.city.tunnel", function()
  it("makes tunnel bores subterranean warp rooms between walled cuts, and bridge decks warp rooms", function()
    local city = city_mod.new{ style = "sf", blocks = false, dead_end = "open" }
    city:road(city:node(0, 0), city:node(400, 0), { tunnel = { depth = 9, ramp = 60 } })
    city:road(city:node(0, 100), city:node(400, 100), { bridge = { height = 8, ramp = 60 } })
    local doc = city:build{ drivable = false } -- separate roads, no blocks: no whole city
    assert.equal(2, #doc.roads)
    local function kinds(k)
      local out = {}
      for _, id in ipairs(doc.roads[k].rooms) do
        local room = doc.rooms[id]
        local tun
        for _, a in ipairs(room.attributes) do if a.type == "tunnel" then tun = a end end
        local lo, hi = math.huge, -math.huge
        for _, p in ipairs(room.perimeter) do
          local y = V(doc, p.vertex)[2]
          lo, hi = math.min(lo, y), math.max(hi, y)
        end
        out[#out + 1] = { flags = room.flags, tunnel = tun, lo = lo, hi = hi }
      end
      return out
    end
    local t = kinds(1)
    assert.equal(FLAG.road, t[1].flags)                 -- the cut going down, walls
    assert.equal(0x0004, t[1].tunnel.flags & 0x0004)
    assert.near(-9, t[1].lo, 0.01)
    local bore = t[2]
    assert.equal(0x4A, bore.flags)
    assert.equal(0x0100, bore.tunnel.flags & 0x0100)
    -- the bore's height band (top perimeter point + tunnel height2) stays under the ground
    assert.is_true(bore.hi + bore.tunnel.height2 < 0, "band top " .. (bore.hi + bore.tunnel.height2))
    assert.equal(FLAG.road, t[#t].flags)
    local b = kinds(2)
    assert.equal(FLAG.road, b[1].flags)                 -- ramp with a low railing
    assert.near(1.0, b[1].tunnel.height1, 1e-6)
    local deck = b[2]
    assert.equal(0x48, deck.flags)
    assert.near(8, deck.lo, 0.01)                       -- the deck is level: its band starts at 7 m
    assert.near(1.5, deck.tunnel.height1, 1e-6)
    assert.equal(0x4000, deck.tunnel.flags & 0x4000)
    -- an underground junction: tunnel roads meet there without ramps; junction-tunnel walls
    local c4 = city_mod.new{ style = "sf", blocks = false, dead_end = "open" }
    local u = c4:node(0, 200, { y = -9, tunnel = true })
    c4:road(c4:node(0, 0), u, { tunnel = true })
    c4:road(u, c4:node(0, 400), { tunnel = true })
    c4:road(u, c4:node(200, 200), { tunnel = true })
    local d4 = c4:build()
    local under = intersection_rooms(d4)
    assert.equal(1, #under)
    assert.equal(FLAG.intersection | FLAG.subterranean | FLAG.warp, d4.rooms[under[1]].flags)
    local jt
    for _, a in ipairs(d4.rooms[under[1]].attributes) do if a.type == "junction_tunnel" then jt = a end end
    assert.truthy(jt)
    assert.is_true(jt.wall_mask ~= 0)
    -- each road: a cut, then the bore straight on to the junction (no ramp at the underground end)
    for _, road in ipairs(d4.roads) do
      assert.equal(2, #road.rooms)
    end
    -- a junction underground takes tunnel roads only
    local c5 = city_mod.new{ blocks = false }
    local u5 = c5:node(0, 0, { y = -9, tunnel = true })
    c5:road(u5, c5:node(200, 0))
    assert.error_matches(function() c5:build() end, "underground")
    -- too short for its ramps: an error in strict mode, else built at grade with a warning
    local c3 = city_mod.new{ blocks = false, strict = true }
    c3:road(c3:node(0, 0), c3:node(100, 0), { tunnel = true })
    assert.error_matches(function() c3:build() end, "ramps")
    c3.strict = false
    local _, rep3 = c3:build()
    assert.are.equal("tunnel made at grade", rep3.repairs[1].reason)
    assert.are.equal(0, rep3.kinds.tunnel)
    assert.are.equal(0, rep3.counts.errors)
  end)

  it("takes the depth, height and ramp length not given from tunnel.TUNNEL and tunnel.BRIDGE", function()
    local city = city_mod.new{ style = "sf", blocks = false, dead_end = "open" }
    city:road(city:node(0, 0), city:node(400, 0), { tunnel = true })
    city:road(city:node(0, 100), city:node(400, 100), { bridge = true })
    local doc = city:build{ drivable = false }
    local function room_of(k, i) return doc.rooms[doc.roads[k].rooms[i]] end
    local function lowest(room)
      local lo = math.huge
      for _, p in ipairs(room.perimeter) do lo = math.min(lo, V(doc, p.vertex)[2]) end
      return lo
    end
    -- the cut goes down over the ramp length to the depth; the deck is level at the height
    local x0, _, x1 = bbox(perimeter_poly(doc, room_of(1, 1)))
    assert.near(tunnel.TUNNEL.ramp, x1 - x0, 0.5)
    assert.near(-tunnel.TUNNEL.depth, lowest(room_of(1, 2)), 0.01)
    x0, _, x1 = bbox(perimeter_poly(doc, room_of(2, 1)))
    assert.near(tunnel.BRIDGE.ramp, x1 - x0, 0.5)
    assert.near(tunnel.BRIDGE.height, lowest(room_of(2, 2)), 0.01)
  end)
end)
