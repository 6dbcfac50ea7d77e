-- City generation: lua/psdl/city/ (psdl.city, profiles, random; network, road, intersection
-- and tunnel have their own specs), `psdl build`, the city examples (examples/downtown.lua,
-- ring.lua, hills.lua, facade_rows.lua).
local psdl = require "psdl"
local geom = require "psdl.geom"
local core = require "psdl.core"
local render = require "psdl.render"
local cli = require "psdl.cli"
local common = require "psdl.cli.common"
local H = require "helper"

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
local HAVE_BLOCKS = pcall(require, "psdl.city.blocks")

local FLAG = H.FLAG
local perimeter_poly, bbox, road_attrs, intersection_rooms = H.perimeter_poly, H.bbox, H.road_attrs, H.intersection_rooms

------------------------------------------------------------------------ helpers

local q, run = H.q, H.run

-- Runs the CLI in this process; returns exit code, stdout, stderr.
local psdl_cli = H.cli

local exists = H.exists

local function write_text(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- An example city (the City the script returns, and a cached build).
local example_cache = {}
local function example(name)
  local e = example_cache[name]
  if not e then
    local env = setmetatable({ psdl = psdl, arg = { [0] = "examples/" .. name .. ".lua" } }, { __index = _G })
    local chunk = assert(loadfile("examples/" .. name .. ".lua", "t", env))
    local city = chunk()
    local doc, report = city:build()
    e = { city = city, doc = doc, report = report }
    example_cache[name] = e
  end
  return e
end

local function V(doc, i) return doc.vertices[i] end

local plan_seg_dist, inside_strict = require("psdl.plan").seg_dist, require("psdl.plan").inside_strict
-- Plan distance from (px, pz) to the segment a-b of points {x, z}.
local function seg_dist(px, pz, a, b) return plan_seg_dist(px, pz, a[1], a[2], b[1], b[2]) end

-- Strictly inside (crossing number), false within `eps` (0.1 mm) of the boundary.
local function inside(px, pz, poly, eps) return inside_strict(poly, px, pz, eps or 1e-4) end

-- Spatial index of room perimeters: rooms whose box holds a point.
local function room_index(doc, filter)
  local cell, grid, polys, boxes = 40, {}, {}, {}
  for r, room in ipairs(doc.rooms) do
    if not filter or filter(room) then
      local poly = perimeter_poly(doc, room)
      polys[r] = poly
      local x0, z0, x1, z1 = bbox(poly)
      boxes[r] = { x0, z0, x1, z1 }
      for i = math.floor(x0 / cell), math.floor(x1 / cell) do
        for j = math.floor(z0 / cell), math.floor(z1 / cell) do
          local k = i * 100003 + j
          grid[k] = grid[k] or {}
          table.insert(grid[k], r)
        end
      end
    end
  end
  return function(x, z)
    local out = {}
    for _, r in ipairs(grid[math.floor(x / cell) * 100003 + math.floor(z / cell)] or {}) do
      local b = boxes[r]
      if x >= b[1] and x <= b[3] and z >= b[2] and z <= b[4] and inside(x, z, polys[r]) then out[#out + 1] = r end
    end
    return out
  end, polys
end

local function is_warp(room) return room.flags & FLAG.warp ~= 0 end

-- Pairs of ordinary rooms that overlap in plan: a point inside each triangle of every
-- room's perimeter (its centroid), and every perimeter point, must lie in no other ordinary
-- room (points on a shared edge are on the boundary, not inside).
local function overlaps(doc)
  local find, polys = room_index(doc, function(room) return not is_warp(room) end)
  local bad = {}
  for r, poly in pairs(polys) do
    local pts = {}
    for i, p in ipairs(poly) do
      pts[i] = { p[1], 0, p[2] }
      for _, o in ipairs(find(p[1], p[2])) do
        if o ~= r then bad[#bad + 1] = string.format("room %d's point (%.2f, %.2f) inside room %d", r, p[1], p[2], o) end
      end
    end
    for _, t in ipairs(geom.triangulate(pts)) do
      local a, b, c = pts[t[1]], pts[t[2]], pts[t[3]]
      local cx, cz = (a[1] + b[1] + c[1]) / 3, (a[3] + b[3] + c[3]) / 3
      for _, o in ipairs(find(cx, cz)) do
        if o ~= r then bad[#bad + 1] = string.format("rooms %d and %d at (%.2f, %.2f)", r, o, cx, cz) end
      end
    end
  end
  return bad
end

-- Neighbour links that are not returned. Every link r -> n needs a link n -> r; between two
-- ordinary rooms, edge i -> i+1 of room r with neighbour n needs the edge i+1 -> i in room n
-- with neighbour r. A warp room (bridge deck, tunnel) overlaps the ground it crosses, so an
-- edge it shares with the ground under it runs the same way in both (§1.5: retail has such
-- links around tunnels and bridges); on an edge a warp room shares, three rooms meet and a
-- link back anywhere suffices.
local function asymmetric(doc)
  local edges, links, warp_edge = {}, {}, {}
  for r, room in ipairs(doc.rooms) do
    local per = room.perimeter
    for i, p in ipairs(per) do
      local nx = per[i % #per + 1]
      local k = r .. ":" .. p.vertex .. ":" .. nx.vertex
      edges[k] = edges[k] or {}
      edges[k][p.neighbour] = true
      links[r .. ">" .. p.neighbour] = true
      if is_warp(room) then
        warp_edge[math.min(p.vertex, nx.vertex) .. ":" .. math.max(p.vertex, nx.vertex)] = true
      end
    end
  end
  local bad = {}
  for r, room in ipairs(doc.rooms) do
    local per = room.perimeter
    for i, p in ipairs(per) do
      local n, nx = p.neighbour, per[i % #per + 1]
      if n > 0 then
        if not links[n .. ">" .. r] then
          bad[#bad + 1] = string.format("room %d -> room %d, never back", r, n)
        elseif p.vertex ~= nx.vertex then
          local back = edges[n .. ":" .. nx.vertex .. ":" .. p.vertex]
          local ok = back and back[r]
          if not ok and (is_warp(room) or is_warp(doc.rooms[n])
                         or warp_edge[math.min(p.vertex, nx.vertex) .. ":" .. math.max(p.vertex, nx.vertex)]) then
            ok = links[n .. ">" .. r]
          end
          if not ok then
            bad[#bad + 1] = string.format("room %d edge %d (%d -> %d) -> room %d", r, i, p.vertex, nx.vertex, n)
          end
        end
      end
    end
  end
  return bad
end

-- The road-type attributes of a room.

-- Bounded faces of a city's network (straight between nodes and via points), each with an
-- interior point as far as possible from its edges. Faces are walked with the next edge
-- clockwise at each node; bounded faces come out counter-clockwise (S > 0).
local function network_faces(city)
  local half = {}
  local out = {}
  for _, n in ipairs(city.nodes) do out[n] = {} end
  for _, r in ipairs(city.roads) do
    local pts = { { r.a.x, r.a.z } }
    for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2] } end
    pts[#pts + 1] = { r.b.x, r.b.z }
    local rev = {}
    for i = #pts, 1, -1 do rev[#rev + 1] = pts[i] end
    local h1 = { from = r.a, to = r.b, pts = pts }
    local h2 = { from = r.b, to = r.a, pts = rev }
    h1.twin, h2.twin = h2, h1
    for _, h in ipairs({ h1, h2 }) do
      h.angle = math.atan(h.pts[2][2] - h.pts[1][2], h.pts[2][1] - h.pts[1][1])
      half[#half + 1] = h
      table.insert(out[h.from], h)
    end
  end
  for _, list in pairs(out) do table.sort(list, function(a, b) return a.angle < b.angle end) end
  local seen, faces = {}, {}
  for _, h0 in ipairs(half) do
    if not seen[h0] then
      local poly, h = {}, h0
      repeat
        seen[h] = true
        for i = 1, #h.pts - 1 do poly[#poly + 1] = h.pts[i] end
        -- at h.to: the edge just clockwise of the twin
        local list = out[h.to]
        local k
        for i, e in ipairs(list) do if e == h.twin then k = i end end
        h = list[(k - 2) % #list + 1]
      until h == h0
      local s = 0
      for i = 1, #poly do
        local a, b = poly[i], poly[i % #poly + 1]
        s = s + a[1] * b[2] - b[1] * a[2]
      end
      if s > 0 then faces[#faces + 1] = poly end
    end
  end
  for _, poly in ipairs(faces) do
    local pts = {}
    for i, p in ipairs(poly) do pts[i] = { p[1], 0, p[2] } end
    local best, bd = nil, -1
    for _, t in ipairs(geom.triangulate(pts)) do
      local a, b, c = pts[t[1]], pts[t[2]], pts[t[3]]
      local cx, cz = (a[1] + b[1] + c[1]) / 3, (a[3] + b[3] + c[3]) / 3
      local d = math.huge
      for i = 1, #poly do d = math.min(d, seg_dist(cx, cz, poly[i], poly[i % #poly + 1])) end
      if d > bd then best, bd = { cx, cz }, d end
    end
    poly.point, poly.clearance = best, bd
  end
  return faces
end

local function png_size(bytes)
  assert(bytes:sub(1, 8) == "\137PNG\r\n\26\n", "not a PNG")
  return string.unpack(">I4I4", bytes, 17)
end

------------------------------------------------------------------------ examples

-- Attribute counts of a document by type, and the highest roof.
local function attribute_counts(doc)
  local c, roof = {}, -math.huge
  for _, room in ipairs(doc.rooms) do
    for _, a in ipairs(room.attributes) do
      c[a.type] = (c[a.type] or 0) + 1
      if a.type == "roof" then roof = math.max(roof, doc.heights[a.height]) end
    end
  end
  return c, roof
end

local EXAMPLES = {
  downtown = { faces = 20, shows = function(doc, rep)
    local dividers = {}
    for _, room in ipairs(doc.rooms) do
      for _, a in ipairs(room.attributes) do
        if a.type == "divided_road" then dividers[a.divider_type] = true end
      end
    end
    assert.is_true(dividers[2] and dividers[1], "an elevated (avenue) and a flat (boulevard) divider")
    if HAVE_BLOCKS then
      assert.is_true((attribute_counts(doc).roof or 0) > 50, "buildings")
      assert.equal(1, rep.blocks.parks)
    end
  end },
  ring = { tunnel = true },
  hills = { faces = 20, climbs = true, shows = function(doc)
    if HAVE_BLOCKS then assert.is_true((attribute_counts(doc).sliver or 0) > 0, "slivers on the slopes") end
  end },
  facade_rows = { faces = 6, shows = function(doc)
    if HAVE_BLOCKS then
      local c, roof = attribute_counts(doc)
      assert.is_true((c.facade or 0) > 100 and (c.facade_bound or 0) > 20, "facade rows")
      assert.is_true(roof > 30, "towers")
    end
  end },
}
local NAMES = { "downtown", "ring", "hills", "facade_rows" }

describe("city examples", function()
  for _, name in ipairs(NAMES) do
    local want = EXAMPLES[name]
    describe(name .. ".lua", function()
      it("builds through `psdl build` with zero validation errors and warnings", function()
        local out = H.tmpname(".psdl")
        finally(function() os.remove(out) end)
        local code, stdout, stderr = psdl_cli("build", "examples/" .. name .. ".lua", "-o", out)
        assert.equal(0, code, stderr)
        assert.matches("validation: 0 errors, 0 warnings", stdout, 1, true)
        local doc = assert(psdl.read(out))
        local ok, problems, counts = psdl.validate(doc, { strict = true })
        assert.is_true(ok, problems[1] and (problems[1].path .. ": " .. problems[1].message))
        assert.same({ errors = 0, warnings = 0 }, counts)
        -- the summary counts what the file holds
        assert.matches(string.format("%s rooms", common.int(#doc.rooms)), stdout, 1, true)
        assert.matches(string.format("%s road records", common.int(#doc.roads)), stdout, 1, true)
      end)

      if want.shows then
        it("shows what it is about", function()
          local e = example(name)
          want.shows(e.doc, e.report)
        end)
      end

      it("has symmetric neighbour links and no two ordinary rooms overlapping in plan", function()
        local doc = example(name).doc
        assert.same({}, asymmetric(doc))
        assert.same({}, overlaps(doc))
        -- every room has neighbours (the city is one connected piece)
        for r, room in ipairs(doc.rooms) do
          local any = false
          for _, p in ipairs(room.perimeter) do if p.neighbour > 0 then any = true end end
          assert.is_true(any, "room " .. r .. " has no neighbour")
        end
      end)

      it("lists only road rooms in its road records, each with exactly one road-type attribute", function()
        local doc = example(name).doc
        assert.is_true(#doc.roads > 0)
        local listed = {}
        for k, road in ipairs(doc.roads) do
          assert.is_true(#road.rooms >= 1)
          for _, id in ipairs(road.rooms) do
            local room = doc.rooms[id]
            assert.is_truthy(room, "road " .. k)
            assert.equal(FLAG.road, room.flags & (FLAG.road | FLAG.intersection | FLAG.standard),
              string.format("road %d lists room %d (flags 0x%02x)", k, id, room.flags))
            assert.equal(1, #road_attrs(room), string.format("road %d room %d", k, id))
            assert.is_nil(listed[id], "room " .. id .. " in two road records")
            listed[id] = k
          end
          -- the crossroads are the end sections of the first and last road attribute
          local first = road_attrs(doc.rooms[road.rooms[1]])[1]
          local v = first.vertices
          if first.type == "road" then
            assert.same({ v[1], v[2], v[3], v[4] }, road.start_crossroads)
          elseif first.type == "divided_road" then
            assert.same({ v[1], v[2], v[5], v[6] }, road.start_crossroads)
          end
          local last = road_attrs(doc.rooms[road.rooms[#road.rooms]])[1]
          local w, n = last.vertices, #last.vertices
          if last.type == "road" then
            assert.same({ w[n - 3], w[n - 2], w[n - 1], w[n] }, road.end_crossroads)
          elseif last.type == "divided_road" then
            assert.same({ w[n - 5], w[n - 4], w[n - 1], w[n] }, road.end_crossroads)
          end
        end
        -- and every road room is on a record
        for id, room in ipairs(doc.rooms) do
          if room.flags & FLAG.road ~= 0 then assert.is_truthy(listed[id], "road room " .. id .. " on no record") end
        end
      end)

      if want.faces then
        it("turns every bounded face of its network into a block room", function()
          if not HAVE_BLOCKS then
            pending("psdl.city.blocks is not available")
            return
          end
          local e = example(name)
          local faces = network_faces(e.city)
          assert.equal(want.faces, #faces)
          local find = room_index(e.doc)
          local blocks = {}
          for _, f in ipairs(faces) do
            local hits = find(f.point[1], f.point[2])
            assert.equal(1, #hits, string.format("face at (%.1f, %.1f)", f.point[1], f.point[2]))
            local room = e.doc.rooms[hits[1]]
            assert.equal(FLAG.standard, room.flags & (FLAG.road | FLAG.intersection | FLAG.standard))
            blocks[hits[1]] = true
          end
          local n = 0
          for _ in pairs(blocks) do n = n + 1 end
          assert.equal(#faces, n)
          assert.equal(#faces, e.report.blocks.blocks)
        end)
      end

      if want.tunnel then
        it("has a tunnel bore (subterranean + warp) and a bridge deck (warp) with walls and railings", function()
          local doc = example(name).doc
          local bore, deck, cut = 0, 0, 0
          for _, room in ipairs(doc.rooms) do
            local tun
            for _, a in ipairs(room.attributes) do if a.type == "tunnel" then tun = a end end
            if room.flags == FLAG.road | FLAG.subterranean | FLAG.warp then
              bore = bore + 1
              assert.truthy(tun, "bore without walls")
              assert.equal(0x0100, tun.flags & 0x0100) -- curved ceiling
              -- the tunnel attribute is the first after a texture (the height band reads it, §4.1)
              local first = room.attributes[1].type == "texture" and room.attributes[2] or room.attributes[1]
              assert.equal("tunnel", first.type)
            elseif room.flags == FLAG.road | FLAG.warp then
              deck = deck + 1
              assert.truthy(tun, "deck without railings")
              assert.equal(1.5, tun.height1)
              -- the deck is level: its lowest perimeter point is at deck height (about 8 m up)
              local low = math.huge
              for _, p in ipairs(room.perimeter) do low = math.min(low, V(doc, p.vertex)[2]) end
              assert.near(8, low, 0.01)
            elseif room.flags == FLAG.road and tun then
              cut = cut + 1
            end
          end
          assert.is_true(bore >= 1 and deck >= 1 and cut >= 2, string.format("bore %d deck %d walled %d", bore, deck, cut))
        end)
      end

      if want.climbs then
        it("keeps intersections flat and road quads planar while the streets climb", function()
          local e = example(name)
          local doc = e.doc
          local lo, hi = math.huge, -math.huge
          for _, room in ipairs(doc.rooms) do
            for _, a in ipairs(room.attributes) do
              if a.type == "road_fan" then
                local pts = {}
                for i, v in ipairs(a.vertices) do pts[i] = V(doc, v) end
                assert.is_true(geom.fan_flatness(pts) < 1e-3)
              elseif a.type == "road" or a.type == "divided_road" then
                local stride = a.type == "road" and 4 or 6
                local rows = {}
                for i = 1, #a.vertices, stride do
                  local row = {}
                  for c = 0, stride - 1 do row[#row + 1] = V(doc, a.vertices[i + c]) end
                  rows[#rows + 1] = row
                  lo, hi = math.min(lo, row[1][2]), math.max(hi, row[1][2])
                end
                assert.is_true(geom.strip_deviation(rows) < 0.021)
              end
            end
          end
          assert.is_true(hi - lo > 15, "the streets climb " .. (hi - lo) .. " m")
          -- every node sits at the ground's height
          for _, n in ipairs(e.city.nodes) do assert.is_true(n.y > 0) end
        end)
      end
    end)
  end

  it("the same seed gives the same bytes, another seed other bytes (separate processes)", function()
    local a, b, c = H.tmpname(".psdl"), H.tmpname(".psdl"), H.tmpname(".psdl")
    finally(function() os.remove(a); os.remove(b); os.remove(c) end)
    local env = "PSDL_BUILD_DIR=" .. q(build_dir) .. " "
    for _, t in ipairs({ { a, "" }, { b, "" }, { c, " --seed 99" } }) do
      local log, ok = run(env .. "scripts/psdl build examples/downtown.lua -q -o " .. q(t[1]) .. t[2])
      assert.is_true(ok, log)
    end
    assert.equal(H.read_bytes(a), H.read_bytes(b))
    assert.are_not.equal(H.read_bytes(a), H.read_bytes(c))
    -- in one process too, and the ring with its tunnel and bridge
    local env2 = setmetatable({ psdl = psdl }, { __index = _G })
    local city = assert(loadfile("examples/ring.lua", "t", env2))()
    local d1 = city:build{ seed = 3 }
    local d2 = city:build{ seed = 3 }
    assert.equal(psdl.encode(d1), psdl.encode(d2))
  end)

  it("renders a PNG of the expected size whose road pixels sit where the roads are", function()
    local doc = example("downtown").doc
    local res = assert(render.render(doc, { size = 800 }))
    local w, h = png_size(res.bytes)
    assert.equal(res.width, w)
    assert.equal(res.height, h)
    assert.equal(800, math.max(w, h))
    local canvas = assert(core.canvas_png_decode(res.bytes))
    local COLOR = {}
    for _, cl in ipairs(render.classes) do COLOR[cl.name] = cl.color end
    local checked = 0
    for _, road in ipairs(doc.roads) do
      for _, id in ipairs(road.rooms) do
        local a = road_attrs(doc.rooms[id])[1]
        local stride = a.type == "road" and 4 or a.type == "divided_road" and 6 or 2
        local ns = #a.vertices // stride
        local k = (ns // 2) * stride -- the middle section
        -- a quarter of the way from the left curb to the right one (divided: the left carriageway)
        local p1 = V(doc, a.vertices[k + 2])
        local p2 = V(doc, a.vertices[k + (a.type == "divided_road" and 3 or 3)])
        local x, z = p1[1] + (p2[1] - p1[1]) * 0.3, p1[3] + (p2[3] - p1[3]) * 0.3
        local px, py = res.pixel(x, z)
        assert.equal(string.format("%08x", COLOR.road), string.format("%08x", canvas:get(math.floor(px), math.floor(py))),
          string.format("room %d at (%.1f, %.1f)", id, x, z))
        checked = checked + 1
      end
    end
    assert.equal(#doc.roads > 0 and checked >= #doc.roads, true)
    -- and a block's middle is not road
    if HAVE_BLOCKS then
      local px, py = res.pixel(55, 45)
      assert.are_not.equal(COLOR.road, canvas:get(math.floor(px), math.floor(py)))
    end
  end)
end)

------------------------------------------------------------------------ the API

-- A built city's rooms that are on no road record and have the intersection flag.

local function texture_names(doc, room)
  local names = {}
  for _, a in ipairs(room.attributes) do
    if a.type == "texture" then names[#names + 1] = doc.textures[a.value] end
  end
  return names
end

describe("psdl.city", function()
  local city_mod = psdl.city

  it("resolves profiles, lanes and overrides into cross-sections, textures and record flags", function()
    local city = city_mod.new{ style = "sf", blocks = false, dead_end = "open", props = false }
    local function road(o)
      local a, b = city:node(#city.nodes * 300, 0), city:node(#city.nodes * 300 + 150, 0)
      return city:road(a, b, o)
    end
    road{ profile = "street" }
    road{ profile = "one_sided", sidewalk = "left" }
    road{ profile = "alley" }
    road{ profile = "avenue", lanes = 6 }
    road{ profile = "boulevard" }
    road{ profile = "freeway" }
    road{ profile = "street", lanes = 4, oneway = true }
    road{ profile = "street", width = 14, sidewalk_width = 2, style = "london" }
    local doc = city:build{ drivable = false } -- separate roads, no blocks: no whole city
    assert.equal(8, #doc.roads)
    local R = doc.roads
    local function attr(k) return road_attrs(doc.rooms[R[k].rooms[1]])[1] end
    local function width(k, i, j)
      local v = attr(k).vertices
      return math.abs(V(doc, v[j])[3] - V(doc, v[i])[3])
    end
    -- street: 10 m carriageway, 4 m sidewalks, r2_f
    assert.equal("road", attr(1).type)
    assert.near(10, width(1, 2, 3), 1e-4)
    assert.near(4, width(1, 1, 2), 1e-4)
    assert.equal(0x40, R[1].flags)
    assert.same({ "r2_f", "swalk_f", "r2_lo_f" }, { doc.textures[doc.rooms[R[1].rooms[1]].attributes[1].value],
      doc.textures[doc.rooms[R[1].rooms[1]].attributes[1].value + 1], doc.textures[doc.rooms[R[1].rooms[1]].attributes[1].value + 2] })
    assert.same({ 1 }, { #R[1].lanes_left })
    -- one-sided: the sidewalk on the left of travel only, still 0x40
    assert.near(4, width(2, 1, 2), 1e-4)
    assert.near(0, width(2, 3, 4), 1e-4)
    assert.equal(0x40, R[2].flags)
    -- alley: a rectangle strip, flag 0x10, texture r_alley
    assert.equal("walkway", attr(3).type)
    assert.equal(0x10, R[3].flags)
    assert.near(5, width(3, 1, 2), 1e-4)
    -- avenue: divided (0x08) with sidewalks, 3 lanes each way, elevated divider
    assert.equal("divided_road", attr(4).type)
    assert.equal(0x48, R[4].flags)
    assert.equal(3, #R[4].lanes_left)
    assert.equal(3, #R[4].lanes_right)
    assert.equal(2, attr(4).divider_type)
    -- boulevard: flat divider 8 m wide
    assert.equal(1, attr(5).divider_type)
    assert.near(8, width(5, 3, 4), 1e-4)
    -- freeway: wedge divider, no sidewalks, flag 0x20, rfwy_f
    assert.equal(3, attr(6).divider_type)
    assert.equal(0x28, R[6].flags)
    assert.same({ "rfwy_f" }, { texture_names(doc, doc.rooms[R[6].rooms[1]])[1] })
    -- one-way: every lane on the right of travel, the one-way texture
    assert.equal(0, #R[7].lanes_left)
    assert.equal(4, #R[7].lanes_right)
    assert.equal("r4_oneway_f", doc.textures[doc.rooms[R[7].rooms[1]].attributes[1].value])
    -- overrides: 14 m carriageway, 2 m sidewalks, London textures in an SF city
    assert.near(14, width(8, 2, 3), 1e-4)
    assert.near(2, width(8, 1, 2), 1e-4)
    assert.equal("r2_l", doc.textures[doc.rooms[R[8].rooms[1]].attributes[1].value])
    -- divider groups come first in the texture table (their value must fit a byte)
    for k = 4, 6 do assert.is_true(attr(k).divider_texture <= 12) end
  end)

  it("gives each record's first room a prop rule from the style's themes, only where there are sidewalks", function()
    local city = city_mod.new{ style = "london", blocks = false, dead_end = "open", seed = 4 }
    for k = 0, 5 do
      local profile = ({ "street", "avenue", "alley", "freeway", "street", "boulevard" })[k + 1]
      city:road(city:node(k * 300, 0), city:node(k * 300 + 200, 0), { profile = profile })
    end
    city:road(city:node(0, 500), city:node(200, 500), { prop_rule = 15 })
    local doc = city:build{ drivable = false } -- separate roads, no blocks: no whole city
    local themes = require("psdl.styles.london").proprules.themes
    local function member(v, list) for _, x in ipairs(list) do if x == v then return true end end end
    local rule = function(k) return doc.rooms[doc.roads[k].rooms[1]].prop_rule end
    assert.is_true(member(rule(1), themes.residential))
    assert.is_true(member(rule(2), themes.high_street))
    assert.equal(0, rule(3)) -- alley: no sidewalks (0x40 off)
    assert.equal(0, rule(4)) -- freeway
    assert.is_true(member(rule(6), themes.main_road))
    assert.equal(15, rule(7))
    -- only the first room of a record carries it
    for _, road in ipairs(doc.roads) do
      for k = 2, #road.rooms do assert.equal(0, doc.rooms[road.rooms[k]].prop_rule) end
    end
    -- props = false: none anywhere
    local quiet = city_mod.new{ blocks = false, props = false, dead_end = "open" }
    quiet:road(quiet:node(0, 0), quiet:node(200, 0))
    local d2 = quiet:build()
    assert.equal(0, d2.rooms[d2.roads[1].rooms[1]].prop_rule)
  end)

  it("uses the style's real texture names: London and SF", function()
    for style, want in pairs({ london = { "r2_l", "rinter_l", "rxwalk02_l" }, sf = { "r2_f", "rinter_f", "rxwalk_f" } }) do
      local city = city_mod.new{ style = style, blocks = false }
      local c = city:node(0, 0)
      for k = 0, 2 do city:road(c, city:node(150 * math.cos(k * 2.1), 150 * math.sin(k * 2.1))) end
      local doc = city:build()
      local have = {}
      for _, name in ipairs(doc.textures) do if name then have[name] = true end end
      for _, name in ipairs(want) do assert.is_true(have[name], style .. ": " .. name) end
    end
  end)

  it("takes the network table of docs/network.md as a whole (from_network), ids in any order", function()
    local net = {
      nodes = { [10] = { x = 0, z = 0 }, [3] = { x = 200, z = 0 }, a = { x = 200, z = 180, y = 2 },
                [7] = { x = 0, z = 180 } },
      roads = {
        { from = 10, to = 3, profile = "avenue", name = "South" },
        { from = 3, to = "a", via = { { 240, 90 } } },
        { from = "a", to = 7, lanes = 4, sidewalk = "right" },
        { from = 7, to = 10, profile = "one_sided", sidewalk = "left" },
        { from = 10, to = "a" },
      },
    }
    local city = city_mod.from_network(net, { style = "sf", seed = 9, blocks = false })
    assert.equal(4, #city.nodes)
    assert.same({ 3, 7, 10, "a" }, { city.nodes[1].id, city.nodes[2].id, city.nodes[3].id, city.nodes[4].id })
    local doc, rep = city:build{ drivable = false } -- separate roads, no blocks: no whole city
    assert.equal(0, rep.counts.errors)
    assert.equal(5, #doc.roads)
    assert.equal(2, rep.nodes.junction) -- 10 and a (three roads each)
    assert.equal(2, city.node_by_id.a.y)
    -- the same network in another table order gives the same bytes
    local net2 = { nodes = {}, roads = net.roads }
    for _, k in ipairs({ "a", 7, 3, 10 }) do net2.nodes[k] = net.nodes[k] end
    local doc2 = city_mod.from_network(net2, { style = "sf", seed = 9, blocks = false }):build{ drivable = false }
    assert.equal(psdl.encode(doc), psdl.encode(doc2))
    assert.same({}, overlaps(doc))
    assert.same({}, asymmetric(doc))
    -- a bad road names its place in the table
    assert.has_error(function()
      city_mod.from_network({ nodes = { [1] = { x = 0, z = 0 } }, roads = { { from = 1, to = 2 } } })
    end)
    local ok, err = pcall(city_mod.from_network, { nodes = { [1] = { x = 0, z = 0 }, [2] = { x = 9, z = 0 } },
      roads = { { from = 1, to = 2, profile = "motorwy" } } })
    assert.is_false(ok)
    assert.matches("roads%[1%]: unknown profile 'motorwy'", err)
  end)

  it("names the script line of a bad node or road, at once or when the city is built", function()
    local city = city_mod.new{ blocks = false }
    local a, b = city:node(0, 0), city:node(100, 0)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(city.road, city, a, b, { profile = "avenu" })
    assert.is_false(ok)
    assert.matches("unknown profile 'avenu'", err)
    ok, err = pcall(function() city:road(a, b, { profile = "avenu" }) end)
    assert.matches("city_spec.lua:" .. (line + 3) .. ":", err)
    assert.has_error(function() city:road(a, a) end)
    -- two nodes at one place (before: "the document has no vertices", no line named)
    local same = city:node(0, 0)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() city:road(a, same) end)
    assert.matches("city_spec.lua:" .. line .. ": bad argument #2 to 'road' %(a road needs length: nodes 1 and 3 are both at %(0, 0%)%)", err)
    assert.has_no_error(function() city:road(a, same, { via = { { 50, 50 }, { -50, 50 } } }) end) -- a loop is fine
    assert.has_error(function() city:node(0 / 0, 1) end)
    assert.has_error(function() city:road(a, b, { wdith = 3 }) end, "bad argument #3 to 'road' (unknown option 'wdith')")
    -- roads too short for their intersections: named with the line that made them (strict:
    -- an error; otherwise the road is dropped with a warning naming the same line)
    local c2 = city_mod.new{ blocks = false, strict = true }
    local hub = c2:node(0, 0)
    local far = c2:node(8, 0)
    line = debug.getinfo(1, "l").currentline + 1
    c2:road(hub, far)
    c2:road(hub, c2:node(0, 100))
    c2:road(hub, c2:node(0, -100))
    c2:road(far, c2:node(8, 100))
    c2:road(far, c2:node(8, -100))
    ok, err = pcall(c2.build, c2)
    assert.is_false(ok)
    assert.matches("city_spec.lua:" .. line .. ": road 1: too short", err)
    c2.strict = false
    -- what is left, two pairs of parallel roads 8 m apart, overlaps: refused naming both
    -- lines (issue 14), after the repairs
    ok, err = pcall(c2.build, c2, { drivable = false })
    assert.is_false(ok)
    assert.matches("city_spec%.lua:%d+: road %d, its rooms would overlap those of road %d at [^ ]*city_spec%.lua:%d+", err)
    local rep = { repairs = c2.repair_log.entries }
    -- narrowed first (fewer lanes, no sidewalks), then dropped
    assert.are.equal(2, #rep.repairs)
    assert.are.equal("road narrowed", rep.repairs[1].reason)
    local e = rep.repairs[2]
    assert.are.equal("dropped", e.action)
    assert.are.equal("too short for its intersections", e.reason)
    assert.matches("city_spec.lua:" .. line .. ": road 1: too short", e.detail)
    assert.are.equal("city_spec.lua:" .. line, e.where:match("[^/]*$"))
  end)

  it("refuses a road whose via points make it cross itself, naming the line and the crossing", function()
    local city = city_mod.new{ blocks = false }
    local a, b = city:node(0, 0), city:node(200, 0)
    -- an S whose middle strokes cross (the newcomer's t4.lua): before, built as a smooth S
    -- through none of the points, with "bend eased" warnings only
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() city:road(a, b, { via = { { 150, 50 }, { 50, -50 }, { 150, -50 }, { 50, 50 } } }) end)
    assert.is_false(ok)
    assert.matches("city_spec.lua:" .. line .. ": road 1 crosses itself at %(75%.0, 25%.0%): its centre line from "
      .. "node 1 to via%[1%] meets the one from via%[3%] to via%[4%]", err)
    -- a detour that comes back over its first stretch (t18.lua): before, two via points
    -- 200 m from the node were dropped as "beside or behind the end"
    local c = city:node(400, 0)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() city:road(a, c, { via = { { 400, 200 }, { 200, 200 }, { 200, -200 } } }) end)
    assert.is_false(ok)
    assert.matches("city_spec.lua:" .. line .. ": road 1 crosses itself at %(200%.0, 100%.0%)", err)
    -- a via point on an earlier stretch of the line touches it: refused too
    ok, err = pcall(function() city:road(a, b, { via = { { 100, 0 }, { 100, 50 }, { 50, 50 }, { 50, 0 } } }) end)
    assert.matches("road 1 crosses itself at %(50%.0, 0%.0%)", err)
    assert.are.equal(0, #city.roads)
    -- repeated points, a zigzag and a loop between two nodes at one place are no crossing
    assert.has_no_error(function() city:road(a, b, { via = { { 50, 20 }, { 50, 20 }, { 100, -20 }, { 150, 20 } } }) end)
    local c2 = city_mod.new{ blocks = false }
    local a2, same = c2:node(0, 0), c2:node(0, 0)
    assert.has_no_error(function() c2:road(a2, same, { via = { { 50, 50 }, { -50, 50 } } }) end)
    local doc = city:build{ drivable = false }
    assert.is_true(#doc.rooms > 1)
  end)

  it("refuses lanes, widths and coordinates beyond the format's limits at the script line", function()
    local city = city_mod.new{ blocks = false }
    local a, b = city:node(0, 0), city:node(200, 0)
    local lim = core.limits.lane_values
    -- before: exit 1 "the built document does not validate: ... 500 lane values", no line
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() city:road(a, b, { lanes = 1000 }) end)
    assert.is_false(ok)
    assert.matches("city_spec.lua:" .. line .. ": bad argument #3 to 'road' %(lanes: 1000 lanes put 500 on one side, "
      .. "at most " .. lim .. " per side", err)
    ok, err = pcall(function() city:road(a, b, { lanes = lim + 1, oneway = true, width = 20 }) end)
    assert.matches("at most " .. lim .. " lanes on a one%-way road", err)
    assert.has_no_error(function() city:road(a, b, { lanes = lim, oneway = true, width = 20 }) end)
    -- a width no road has (before: a 5 km disc of dead ends, no word)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() city:road(a, b, { width = 5000 }) end)
    assert.matches("city_spec.lua:" .. line .. ": bad argument #3 to 'road' %(width 5000 m: wider than any road %(at "
      .. "most 100 m", err)
    ok, err = pcall(function() city:road(a, b, { lanes = 30 }) end)
    assert.matches("width %(30 lanes of 5 m%) 150 m: wider than any road", err)
    ok, err = pcall(function() city:road(a, b, { profile = "avenue", median = 300 }) end)
    assert.matches("median 300 m: wider than any road", err)
    -- a prop rule beyond the room's byte
    ok, err = pcall(function() city:road(a, b, { prop_rule = core.limits.prop_rule + 1 }) end)
    assert.is_false(ok)
    -- coordinates too far out for 32-bit float positions (before: "every road of the city
    -- had to be dropped ... road_fan: the polygon has no area")
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() city:node(1e9, 1e9) end)
    assert.matches("city_spec.lua:" .. line .. ": bad argument #1 to 'node' %(%(1e%+09, 1e%+09%) lies too far out: x "
      .. "and z within %+%-65536 m", err)
    line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() city:road(a, b, { via = { { 100, -7e4 } } }) end)
    assert.matches("city_spec.lua:" .. line .. ": bad argument #3 to 'road' %(via%[1%]: %(100, %-70000%) lies too far out", err)
    assert.has_no_error(function() city:node(city_mod.MAX_COORDINATE, -city_mod.MAX_COORDINATE) end)
  end)

  it("keeps the bend of a road turning back beyond its intersection, drops only points inside it", function()
    -- (real OSM roads bending more than 90 degrees after a junction, Suwon's 72-188 m from
    -- the node: every via point behind the arm's end was left out and the road cut its bend)
    local function hairpin(strict)
      local c = city_mod.new{ blocks = false, strict = strict }
      local a = c:node(0, 0)
      c:road(a, c:node(-100, 0))
      c:road(a, c:node(0, -100))
      -- east from the junction, round a hairpin, back west 60 m north of it: (0, 60) lies
      -- behind the end of the junction's arm (east), 60 m from the node
      c:road(a, c:node(-60, 120), { via = { { 60, 0 }, { 90, 20 }, { 90, 40 }, { 60, 60 }, { 0, 60 } } })
      return c
    end
    for _, strict in ipairs({ true, false }) do
      local c = hairpin(strict)
      local doc = c:build()
      assert.are.equal(0, #c.repair_log.entries)
      local _, _, counts = psdl.validate(doc)
      assert.are.equal(0, counts.errors)
      -- the road passes (0, 60): a vertex of its edges within its half width (5 m) and a bit
      local best = math.huge
      for _, v in ipairs(doc.vertices) do best = math.min(best, math.sqrt(v[1] ^ 2 + (v[3] - 60) ^ 2)) end
      assert.is_true(best < 6, "nearest vertex to (0, 60): " .. best)
    end
    -- a via point next to the dead end (inside its reach) is left out quietly, as before
    local c3 = city_mod.new{ blocks = false }
    c3:road(c3:node(0, 0), c3:node(200, 0), { via = { { 1, 1 }, { 100, 30 } } })
    c3:build()
    assert.are.equal(0, #c3.repair_log.entries)
  end)

  it("does not silently drop a via point the road cannot leave its intersection towards", function()
    -- (newcomer finding #9) the first via point lies within 1 m of the dead end (inside its reach), the
    -- next one 58 m behind it: the centre line leaves the intersection eastwards and cannot
    -- start behind it, so that point is left out, with a word
    local function back(strict)
      local c = city_mod.new{ blocks = false, strict = strict }
      local ln = debug.getinfo(1, "l").currentline + 1
      c:road(c:node(0, 0), c:node(100, 100), { via = { { 0.5, 0 }, { -50, 30 }, { 50, 80 } } })
      return c, ln
    end
    local c, line = back(true)
    local ok, err = pcall(c.build, c)
    assert.is_false(ok)
    assert.matches("city_spec%.lua:" .. line .. ": road 1: via point %(%-50%.0, 30%.0%) left out: it lies beside or "
      .. "behind the end of the road at node %d at [^ ]*city_spec%.lua:%d+, 58 m from it", err)
    c, line = back(false)
    c:build()
    c:build() -- built again: the point is reported once
    local entries = c.repair_log.entries
    assert.are.equal(1, #entries)
    local e = entries[1]
    assert.are.equal("repaired", e.action)
    assert.are.equal("via point dropped", e.reason)
    assert.are.equal("city_spec.lua:" .. line, e.where:match("[^/]*$"))
  end)

  it("is deterministic: the same seed gives the same document, another seed another one", function()
    local function make(seed)
      local city = city_mod.new{ seed = seed }
      local n = {}
      for i = 0, 2 do for j = 0, 2 do n[i * 3 + j] = city:node(i * 120, j * 100) end end
      for i = 0, 2 do for j = 0, 2 do
        if i < 2 then city:road(n[i * 3 + j], n[(i + 1) * 3 + j]) end
        if j < 2 then city:road(n[i * 3 + j], n[i * 3 + j + 1]) end
      end end
      city:blocks{ buildings = { floors = { 2, 8 } } }
      return psdl.encode((city:build()))
    end
    assert.equal(make(5), make(5))
    assert.are_not.equal(make(5), make(6))
    local r1, r2 = city_mod.random.seeded(42), city_mod.random.seeded(42)
    for _ = 1, 100 do assert.equal(r1(), r2()) end
    local x = r1()
    assert.is_true(x >= 0 and x < 1)
  end)
end)

describe("psdl build", function()
  it("writes the city a script returns, prints its summary and draws a preview", function()
    local out, png = H.tmpname(".psdl"), H.tmpname(".png")
    finally(function() os.remove(out); os.remove(png) end)
    local code, stdout, stderr = psdl_cli("build", "examples/facade_rows.lua", "-o", out, "--preview", png,
      "--size", "400", "--seed", "12")
    assert.equal(0, code, stderr)
    local doc = assert(psdl.read(out))
    assert.matches(string.format("%s: %s rooms", out:gsub("%p", "%%%0"), common.int(#doc.rooms)), stdout)
    assert.matches("seed 12", stdout, 1, true)
    local w, h = png_size(H.read_bytes(png))
    assert.equal(400, math.max(w, h))
  end)

  it("names the script line of an error and leaves no file behind", function()
    local script, out = H.tmpname(".lua"), H.tmpname(".psdl")
    finally(function() os.remove(script); os.remove(out) end)
    write_text(script, table.concat({
      "local city = psdl.city.new{}",
      "local a = city:node(0, 0)",
      "local b = city:node(100, 0)",
      "city:road(a, b, { profile = 'boulevardd' })",
      "return city",
    }, "\n"))
    local code, stdout, stderr = psdl_cli("build", script, "-o", out)
    assert.equal(2, code)
    assert.equal("", stdout)
    assert.matches(script:gsub("%p", "%%%0") .. ":4: .*unknown profile 'boulevardd'", stderr)
    assert.is_false(exists(out))
    -- a runtime error of the script itself
    write_text(script, "local city = psdl.city.new{}\nlocal x = nil\nreturn x.y\n")
    code, _, stderr = psdl_cli("build", script, "-o", out)
    assert.equal(2, code)
    assert.matches(script:gsub("%p", "%%%0") .. ":3:", stderr)
    assert.is_false(exists(out))
    -- a syntax error
    write_text(script, "local city = psdl.city.new{\n")
    code, _, stderr = psdl_cli("build", script, "-o", out)
    assert.equal(2, code)
    assert.matches(script:gsub("%p", "%%%0") .. ":%d+:", stderr)
    assert.is_false(exists(out))
    -- an error found while building (a road shorter than its intersections) names its line
    write_text(script, table.concat({
      "local city = psdl.city.new{ blocks = false }",
      "local hub, far = city:node(0, 0), city:node(8, 0)",
      "city:road(hub, far)",
      "for _, n in ipairs({ hub, far }) do",
      "  city:road(n, city:node(n.x, 100)); city:road(n, city:node(n.x, -100))",
      "end",
      "return city",
    }, "\n"))
    code, _, stderr = psdl_cli("build", script, "-o", out, "--strict")
    assert.equal(2, code)
    assert.matches(script:gsub("%p", "%%%0") .. ":3: road 1: too short", stderr)
    assert.is_false(exists(out))
    -- without --strict: the road is dropped, and what is left (two pairs of parallel roads
    -- 8 m apart) is refused naming both lines (issue 14)
    code, _, stderr = psdl_cli("build", script, "-o", out)
    assert.equal(2, code)
    assert.matches("its rooms would overlap those of road", stderr, 1, true)
    assert.is_false(exists(out))
    -- no city returned
    write_text(script, "local city = psdl.city.new{}\n")
    code, _, stderr = psdl_cli("build", script, "-o", out)
    assert.equal(2, code)
    assert.matches("must return a city", stderr, 1, true)
    assert.is_false(exists(out))
    -- an existing output file is left as it was
    H.write_bytes(out, "old")
    code = psdl_cli("build", script, "-o", out)
    assert.equal(2, code)
    assert.equal("old", H.read_bytes(out))
  end)
end)

