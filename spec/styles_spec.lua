-- Texture styles (lua/psdl/styles/init.lua): loading by name or table, and the texture of
-- each role with its fallbacks.
local styles = require "psdl.styles"

describe("psdl.styles", function()
  it("loads a shipped style by name, passes a table through and names a bad one", function()
    for _, name in ipairs(styles.NAMES) do
      assert.are.equal(require("psdl.styles." .. name), styles.load(name))
    end
    local t = { road = {} }
    assert.are.equal(t, styles.load(t))
    local s, err = styles.load("paris")
    assert.is_nil(s)
    assert.are.equal("unknown style 'paris' (london or sf, or a style table)", err)
    assert.is_nil((styles.load("../init")))
    s, err = styles.load(42)
    assert.is_nil(s)
    assert.are.equal("style: name or table expected, got number", err)
    -- the builder and psdl.city report the same message
    assert.error_matches(function() require("psdl.builder").new { style = "paris" } end, "unknown style 'paris'")
    assert.error_matches(function() require("psdl.city").new { style = "paris" } end, "unknown style 'paris'")
  end)

  it("looks up the tunnel and bridge roles, falling back to the style's tunnel", function()
    local london = styles.load("london")
    assert.are.equal(london.tunnels.road or london.tunnels.subway, styles.tunnel(london, "bore"))
    assert.are.equal(london.tunnels.railing, styles.tunnel(london, "railing"))
    local bare = { tunnel = { wall_l = "w" } }
    for _, role in ipairs { "bore", "wall", "bridge_railing", "railing" } do
      assert.are.equal(bare.tunnel, styles.tunnel(bare, role))
    end
    local some = { tunnel = {}, tunnels = { railing = { wall_l = "r" } } }
    assert.are.equal(some.tunnels.railing, styles.tunnel(some, "wall"))
    assert.are.equal(some.tunnels.railing, styles.tunnel(some, "bridge_railing"))
    assert.are.equal(some.tunnel, styles.tunnel(some, "bore"))
    assert.has_error(function() styles.tunnel(some, "roof") end)
  end)

  it("resolves road, divider and intersection names, and leaves texture names alone", function()
    local sf = styles.load("sf")
    assert.are.equal(sf.alley, styles.road(sf, nil, "walkway", 1, false))
    assert.are.equal(sf.roads.lanes2, styles.road(sf, nil, "undivided", 2, false))
    assert.are.equal(sf.roads.lanes4_oneway or sf.roads.lanes4, styles.road(sf, nil, "undivided", 4, true))
    assert.are.equal("r2_f", styles.road(sf, "r2_f", "undivided", 2, false))
    assert.are.equal(sf.divider, styles.divider(sf, nil))
    assert.are.equal("plain", styles.divider({}, "plain"))
    assert.are.equal(nil, styles.intersection(sf, nil))
    assert.are.equal("rinter_f", styles.intersection(sf, "rinter_f"))
  end)

  it("gives the ground, facade, roof and sliver textures with their defaults", function()
    local london = styles.load("london")
    assert.are.equal(london.ground.paving[1], styles.ground(london, "paving"))
    assert.are.equal(london.ground.paving[1], styles.ground(london, "no such kind"))
    assert.are.equal("s_concrt", styles.ground({}, "grass"))
    assert.are.equal(london.facades.upper[1], styles.facade(london, "upper"))
    assert.are.equal(london.roofs, styles.roofs(london))
    assert.are.same({ "s_concrt" }, styles.roofs({}))
    assert.are.equal(london.slivers[1], styles.sliver(london))
    assert.are.equal("sliver", styles.sliver({}))
  end)
end)
