-- City generation: lua/psdl/city/ (psdl.city, profiles, layout, random), `psdl build`, the
-- city examples (examples/downtown.lua, ring.lua, hills.lua, facade_rows.lua).
local psdl = require "psdl"
local geom = require "psdl.geom"
local core = require "psdl.core"
local render = require "psdl.render"
local cli = require "psdl.cli"
local common = require "psdl.cli.common"
local H = require "helper"

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"
local HAVE_BLOCKS = pcall(require, "psdl.city.blocks")

local FLAG = { subterranean = 0x02, standard = 0x04, road = 0x08, intersection = 0x10, warp = 0x40 }
local ROAD_TYPES = { road = true, divided_road = true, walkway = true }

------------------------------------------------------------------------ helpers

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs a shell command; returns its output, success, exit code.
local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok, code
end

-- Runs the CLI in this process; returns exit code, stdout, stderr.
local function psdl_cli(...)
  local out, err = common.sink(), common.sink()
  local code = cli.main({ ... }, { stdout = out, stderr = err })
  return code, out.text(), err.text()
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

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

-- Plan polygon {x, z} of a room's perimeter, consecutive repeated vertices dropped.
local function perimeter_poly(doc, room)
  local poly, last = {}, nil
  for _, p in ipairs(room.perimeter) do
    if p.vertex ~= last then
      local v = V(doc, p.vertex)
      poly[#poly + 1] = { v[1], v[3] }
      last = p.vertex
    end
  end
  if #poly > 1 and room.perimeter[1].vertex == last then poly[#poly] = nil end
  return poly
end

local function seg_dist(px, pz, a, b)
  local dx, dz = b[1] - a[1], b[2] - a[2]
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and math.max(0, math.min(1, ((px - a[1]) * dx + (pz - a[2]) * dz) / l2)) or 0
  local ex, ez = a[1] + t * dx - px, a[2] + t * dz - pz
  return math.sqrt(ex * ex + ez * ez)
end

-- Strictly inside (crossing number), false within `eps` of the boundary.
local function inside(px, pz, poly, eps)
  local n, c = #poly, false
  for i = 1, n do
    local a, b = poly[i], poly[i % n + 1]
    if seg_dist(px, pz, a, b) < (eps or 1e-4) then return false end
    if (a[2] > pz) ~= (b[2] > pz) then
      local x = a[1] + (pz - a[2]) * (b[1] - a[1]) / (b[2] - a[2])
      if px < x then c = not c end
    end
  end
  return c
end

local function bbox(poly)
  local x0, z0, x1, z1 = math.huge, math.huge, -math.huge, -math.huge
  for _, p in ipairs(poly) do
    x0, x1 = math.min(x0, p[1]), math.max(x1, p[1])
    z0, z1 = math.min(z0, p[2]), math.max(z1, p[2])
  end
  return x0, z0, x1, z1
end

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
-- room's perimeter (its centroid) must lie in no other ordinary room.
local function overlaps(doc)
  local find, polys = room_index(doc, function(room) return not is_warp(room) end)
  local bad = {}
  for r, poly in pairs(polys) do
    local pts = {}
    for i, p in ipairs(poly) do pts[i] = { p[1], 0, p[2] } end
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
local function road_attrs(room)
  local list = {}
  for _, a in ipairs(room.attributes) do
    if ROAD_TYPES[a.type] then list[#list + 1] = a end
  end
  return list
end

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

local EXAMPLES = {
  downtown = { divided = true, faces = 20 },
  ring = { tunnel = true, bridge = true },
  hills = { faces = 20, climbs = true },
  facade_rows = { faces = 6 },
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
