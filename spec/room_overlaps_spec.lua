-- Rooms of a road layout that overlap are found right after the layout (psdl.core.overlaps,
-- the validator's room_overlap rule in C) and handed to psdl.city.repair as failures of the
-- road or node that made them, so the city is built once instead of being built, refused by
-- its validation and built again (psdl.city.repair.validated).

local core = require "psdl.core"
local builder = require "psdl.builder"
local city_mod = require "psdl.city"
local repair = require "psdl.city.repair"

-- flat x, y, z points of axis-aligned squares, and their perimeters (1-based)
local function squares(list)
  local pts, per = {}, {}
  for _, s in ipairs(list) do
    local x0, z0, x1, z1 = s[1], s[2], s[3], s[4]
    local base = #pts // 3
    for _, p in ipairs({ { x0, z0 }, { x1, z0 }, { x1, z1 }, { x0, z1 } }) do
      pts[#pts + 1], pts[#pts + 2], pts[#pts + 3] = p[1], 0, p[2]
    end
    per[#per + 1] = { base + 1, base + 2, base + 3, base + 4 }
  end
  return pts, per
end

describe("psdl.core.overlaps", function()
  it("reports each pair overlapping by more than 0.5 m² once, with its centroid", function()
    -- 1 and 2 overlap by 2 x 10 = 20 m² around (9, 5); 3 only touches 2; 4 overlaps 1 by 0.4 m²
    local pts, per = squares({ { 0, 0, 10, 10 }, { 8, 0, 18, 10 }, { 18, 0, 28, 10 }, { 9.8, -2, 11.8, 0.2 } })
    local found = core.overlaps(pts, per)
    assert.are.equal(1, #found)
    local o = found[1]
    assert.are.equal(1, o.room)
    assert.are.equal(2, o.other)
    assert.is_true(math.abs(o.x - 9) < 1e-9 and math.abs(o.z - 5) < 1e-9)
    assert.matches("overlap by 20.00 m²", o.message, 1, true)
  end)

  it("leaves warp rooms out, as the validator does", function()
    local pts, per = squares({ { 0, 0, 10, 10 }, { 5, 5, 15, 15 }, { 6, 6, 9, 9 } })
    assert.are.equal(3, #core.overlaps(pts, per))
    local found = core.overlaps(pts, per, { false, true, false })
    assert.are.equal(1, #found)
    assert.are.same({ 1, 3 }, { found[1].room, found[1].other })
  end)

  it("finds what the validator finds in a document (the same C rule)", function()
    local pts, per = squares({ { 0, 0, 10, 10 }, { 7, 3, 17, 13 } })
    local found = core.overlaps(pts, per)
    assert.are.equal(1, #found)
    assert.matches("rooms 1 and 2 overlap by 21.00 m² around %(8.50, 6.50%)", found[1].message)
  end)

  it("takes a vertex pool and refuses references past it", function()
    local b = builder.new{}
    local refs = {}
    for _, p in ipairs({ { 0, 0, 0 }, { 10, 0, 0 }, { 10, 0, 10 }, { 0, 0, 10 }, { 5, 0, 5 }, { 15, 0, 5 },
                         { 15, 0, 15 }, { 5, 0, 15 } }) do
      refs[#refs + 1] = b:vertex(p)
    end
    local found = core.overlaps(b.vpool, { { refs[1], refs[2], refs[3], refs[4] }, { refs[5], refs[6], refs[7], refs[8] } })
    assert.are.equal(1, #found)
    assert.has_error(function() core.overlaps(b.vpool, { { 1, 2, 99999 } }) end)
  end)
end)

describe("psdl.city.repair.overlap_failures", function()
  -- a T of three streets; the layout builds it without overlaps
  local function town()
    local city = city_mod.new{ style = "london", seed = 1 }
    local c = city:node(0, 0)
    local w, e, s = city:node(-120, 0), city:node(120, 0), city:node(0, -120)
    local west = city:road(w, c)
    local east = city:road(c, e)
    city:road(s, c)
    return city, c, west, east
  end

  local function laid_out(city)
    local b = builder.new{ style = city.style }
    city.failures = {}
    require("psdl.city.road").build_roads(city, b, require("psdl.city.random").seeded(1))
    return b
  end

  it("finds nothing in a clean layout", function()
    local city = town()
    local b = laid_out(city)
    assert.are.same({}, repair.overlaps(city, b))
    assert.are.equal(0, repair.overlap_failures(city, b))
    assert.are.same({}, city.failures)
  end)

  it("blames the road whose room overlaps an intersection room, naming both", function()
    local city, c, west = town()
    local b = laid_out(city)
    -- a room of the west street reaching 4 m into the intersection
    local rm = b:room{ kind = "road", outline = { { -12, 0, -3 }, { 4, 0, -3 }, { 4, 0, 3 }, { -12, 0, 3 } } }
    west.rooms[#west.rooms + 1] = rm
    assert.is_true(#repair.overlaps(city, b) >= 1)
    assert.is_true(repair.overlap_failures(city, b) >= 1)
    local msg = city.failures[1]
    local network = require "psdl.city.network"
    assert.are.equal(network.road_label(west) .. ": its room overlaps", msg:sub(1, #network.road_label(west) + 19))
    assert.matches("the intersection of " .. network.node_label(c):gsub("%p", "%%%0"), msg)
    assert.matches("room_overlap", msg, 1, true)
  end)

  it("adds nothing while the layout has failures of its own (they are repaired first)", function()
    local city, _, west = town()
    local b = laid_out(city)
    west.rooms[#west.rooms + 1] = b:room{ kind = "road", outline = { { -12, 0, -3 }, { 4, 0, -3 }, { 4, 0, 3 },
                                                                     { -12, 0, 3 } } }
    city.failures = { "something else" }
    assert.are.equal(0, repair.overlap_failures(city, b))
    assert.are.same({ "something else" }, city.failures)
  end)
end)
