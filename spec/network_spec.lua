-- The network of a city (lua/psdl/city/network.lua): conflicts of the network, node classes
-- and road runs, as `psdl.city` builds them.
local H = require "helper"
local city_mod = require "psdl.city"
local perimeter_poly, bbox, intersection_rooms = H.perimeter_poly, H.bbox, H.intersection_rooms

describe("psdl.city.network", function()
  it("runs a road smoothly through a gentle node, puts a bend room at a sharp one and a transition "
    .. "room where the profile changes", function()
    local city = city_mod.new{ blocks = false, dead_end = "open" }
    local a, b, c, d, e = city:node(0, 0), city:node(200, 0), city:node(400, 40), city:node(400, 300),
      city:node(560, 300)
    city:road(a, b)
    city:road(b, c)                          -- 11 degrees: through
    city:road(c, d)                          -- 79 degrees: a bend room
    city:road(d, e, { profile = "avenue" })  -- another profile: a transition room
    local doc, rep = city:build()
    assert.equal(1, rep.nodes.through)
    assert.equal(1, rep.nodes.bend)
    assert.equal(1, rep.nodes.transition)
    assert.equal(2, rep.nodes.open)
    assert.equal(2, #intersection_rooms(doc))
    -- three runs: a-b-c (one record over both roads), c-d, d-e
    assert.equal(3, #doc.roads)
    local first = doc.roads[1]
    assert.equal(4, #first.rooms) -- about 400 m in rooms of about 100 m
    local len = 0
    for _, id in ipairs(first.rooms) do
      local poly = perimeter_poly(doc, doc.rooms[id])
      local x0, _, x1 = bbox(poly)
      len = len + (x1 - x0)
    end
    assert.near(400, len, 12) -- the run covers both roads from a to c
    -- the avenue is divided: flag 0x08 with sidewalks 0x40; the streets 0x40 only
    assert.equal(0x40, doc.roads[1].flags)
    assert.equal(0x48, doc.roads[3].flags)
    -- the divider is capped at both ends of its run only
    local caps = 0
    for _, id in ipairs(doc.roads[3].rooms) do
      for _, at in ipairs(doc.rooms[id].attributes) do
        if at.type == "divided_road" then
          caps = caps + (at.cap_start and 1 or 0) + (at.cap_end and 1 or 0)
        end
      end
    end
    assert.equal(2, caps)
  end)
end)

describe("psdl.city.network.conflicts after a repair", function()
  it("checks only the changed roads and nodes and finds what a full check finds", function()
    local pcity = require "psdl.city"
    local network = require "psdl.city.network"
    local c = pcity.new { auto_junctions = true }
    local a, b = c:node(0, 0), c:node(200, 0)
    local f, g = c:node(0, 150), c:node(200, 150)
    local d, e = c:node(100, 60), c:node(100, 110)
    c:road(a, b)
    c:road(f, g)
    local r = c:road(d, e)
    assert.are.same({}, network.conflicts(c))
    -- a repair moved r's shape: it now runs across road a-b twice
    r.via = { { 100, -20 }, { 120, 40 } }
    local full = network.conflicts(c)
    local part = network.conflicts(c, { roads = { [r] = true }, nodes = { [d] = true, [e] = true } })
    assert.is_true(#full >= 2, #full .. " conflicts")
    assert.are.equal(#full, #part)
    for i, x in ipairs(full) do
      local y = part[i]
      assert.are.equal(x.kind, y.kind)
      assert.are.equal(x.a, y.a)
      assert.are.equal(x.b, y.b)
      assert.is_true(math.abs(x.x - y.x) < 1e-9 and math.abs(x.z - y.z) < 1e-9)
    end
    -- an unchanged pair is not tested again: two roads crossing that nobody marked changed
    local h, k = c:node(50, -50), c:node(50, 100)
    c:road(h, k)
    local marked = network.conflicts(c, { roads = { [r] = true }, nodes = { [d] = true, [e] = true } })
    assert.are.equal(#part, #marked)
  end)
end)

describe("psdl.city.from_network refuses what an importer must repair first", function()
  it("names the network road that crosses itself or holds more lanes than a road record", function()
    local nodes = { [1] = { x = 0, z = 0 }, [2] = { x = 400, z = 0 } }
    local ok, err = pcall(city_mod.from_network, { nodes = nodes,
      roads = { { from = 1, to = 2, source = "way 7", via = { { 400, 200 }, { 200, 200 }, { 200, -200 } } } } })
    assert.is_false(ok)
    -- the road's place once, not "roads[1]: roads[1] (way 7): ..."
    assert.matches("^roads%[1%] %(way 7%): road 1 crosses itself at %(200%.0, 100%.0%): its centre line from node 1 "
      .. "to via%[1%] meets the one from via%[2%] to via%[3%]", err)
    ok, err = pcall(city_mod.from_network, { nodes = nodes, roads = { { from = 1, to = 2 }, { from = 2, to = 1, lanes = 600 } } })
    assert.is_false(ok)
    assert.matches("^roads%[2%]: lanes: 600 lanes put 300 on one side, at most " .. require("psdl.core").limits.lane_values, err)
  end)
end)

-- The segment tests psdl.city.network's Lua used before its overlaps and conflicts moved to C
-- (src/psdl_segment.c now), kept as the reference of the two comparisons below.
local function unit(x, z)
  local l = math.sqrt(x * x + z * z)
  if l < 1e-9 then return nil end
  return x / l, z / l
end

-- Closest point of segment p-q to (x, z): distance, parameter 0..1.
local function seg_closest(x, z, p, q)
  local dx, dz = q[1] - p[1], q[2] - p[2]
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and math.max(0, math.min(1, ((x - p[1]) * dx + (z - p[2]) * dz) / l2)) or 0
  local ex, ez = p[1] + t * dx - x, p[2] + t * dz - z
  return math.sqrt(ex * ex + ez * ez), t
end

-- Proper crossing of segments p-q and u-v: the parameters on both, or nil.
local function seg_cross(p, q, u, v)
  local rx, rz = q[1] - p[1], q[2] - p[2]
  local sx, sz = v[1] - u[1], v[2] - u[2]
  local den = rx * sz - rz * sx
  if math.abs(den) < 1e-12 then return nil end
  local wx, wz = u[1] - p[1], u[2] - p[2]
  local t = (wx * sz - wz * sx) / den
  local w = (wx * rz - wz * rx) / den
  if t > 1e-9 and t < 1 - 1e-9 and w > 1e-9 and w < 1 - 1e-9 then return t, w end
  return nil
end

-- Builder:overlaps (core.room_overlaps, src/psdl_overlaps.c) against the Lua that
-- psdl.city.network's `overlaps` ran before it moved to C (kept here as the reference): the
-- same pairs, in the same order, at the same points, on random rooms and owners.
describe("psdl.city.network overlaps in C", function()
  local core = require "psdl.core"
  local builder = require "psdl.builder"
  local sqrt, abs, min, max, huge = math.sqrt, math.abs, math.min, math.max, math.huge
  local function poly_dist(x, z, poly)
    local n, c, d = #poly, false, huge
    for i = 1, n do
      local a, b = poly[i], poly[i % n + 1]
      local e = seg_closest(x, z, a, b)
      if e < d then d = e end
      if (a[2] > z) ~= (b[2] > z) and x < a[1] + (z - a[2]) * (b[1] - a[1]) / (b[2] - a[2]) then c = not c end
    end
    return c and -d or d
  end
  local function poly_overlap(P, Q, eps)
    for _, pair in ipairs({ { P, Q }, { Q, P } }) do
      local A, B = pair[1], pair[2]
      for _, p in ipairs(A) do
        if p[1] > B.x0 and p[1] < B.x1 and p[2] > B.z0 and p[2] < B.z1 and poly_dist(p[1], p[2], B) < -eps then
          return p[1], p[2]
        end
      end
    end
    local n, m = #P, #Q
    for i = 1, n do
      local a, b = P[i], P[i % n + 1]
      if max(a[1], b[1]) > Q.x0 and min(a[1], b[1]) < Q.x1 and max(a[2], b[2]) > Q.z0 and min(a[2], b[2]) < Q.z1 then
        for k = 1, m do
          local u, v = Q[k], Q[k % m + 1]
          local t = seg_cross(a, b, u, v)
          if t then
            local ex, ez = unit(b[1] - a[1], b[2] - a[2])
            local fx, fz = unit(v[1] - u[1], v[2] - u[2])
            if ex and fx then
              local du = (u[1] - a[1]) * ez - (u[2] - a[2]) * ex
              local dv = (v[1] - a[1]) * ez - (v[2] - a[2]) * ex
              local da = (a[1] - u[1]) * fz - (a[2] - u[2]) * fx
              local db = (b[1] - u[1]) * fz - (b[2] - u[2]) * fx
              if min(abs(du), abs(dv), abs(da), abs(db)) > eps then
                return a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])
              end
            end
          end
        end
      end
    end
  end
  -- the former network.overlaps over rooms {outline, owner}; owners are nodes {ends} and
  -- roads {a, b}
  local function reference(b, rooms)
    local items, g = {}, core.grid(40)
    for _, rm in ipairs(rooms) do
      local poly = b:plan_outline(rm.outline, 1e-6)
      if #poly >= 3 then
        items[#items + 1] = { poly = poly, owner = rm.owner }
        g:insert(#items, poly.x0, poly.z0, poly.x1, poly.z1)
      end
    end
    local function related(p, q)
      if p == q then return true end
      if p.a and q.a then return p.a == q.a or p.a == q.b or p.b == q.a or p.b == q.b end
      if p.a then return p.a == q or p.b == q end
      if q.a then return q.a == p or q.b == p end
      for _, r in ipairs(p.ends) do
        if r.a == q or r.b == q then return true end
      end
      return false
    end
    local out, done = {}, {}
    for _, it in ipairs(items) do
      local P = it.poly
      local cand = g:collect(P.x0, P.z0, P.x1, P.z1)
      for k = 1, #cand do
        local o = items[cand[k]]
        local Q = o.poly
        if o ~= it and Q.x0 < P.x1 and P.x0 < Q.x1 and Q.z0 < P.z1 and P.z0 < Q.z1 and not related(it.owner, o.owner) then
          local k1, k2 = it.owner, o.owner
          local key = tostring(k1) < tostring(k2) and (tostring(k1) .. tostring(k2)) or (tostring(k2) .. tostring(k1))
          if not done[key] then
            local x, z = poly_overlap(P, Q, 0.05)
            if x then
              done[key] = true
              out[#out + 1] = { a = k1, b = k2, x = x, z = z }
            end
          end
        end
      end
    end
    return out
  end

  it("finds the pairs, points and order the Lua found, on random rooms", function()
    local seed = 7
    local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
    local pairs_seen = 0
    for _ = 1, 60 do
      local b = builder.new{ vertex_budget = false }
      local nodes, roads, owners = {}, {}, {}
      for i = 1, 2 + math.floor(rnd() * 5) do nodes[i] = { ends = {}, id = i } end
      for i = 1, 1 + math.floor(rnd() * 6) do
        local r = { a = nodes[1 + math.floor(rnd() * #nodes)], b = nodes[1 + math.floor(rnd() * #nodes)] }
        roads[i] = r
        r.a.ends[#r.a.ends + 1] = r
        if r.b ~= r.a then r.b.ends[#r.b.ends + 1] = r end
      end
      for _, n in ipairs(nodes) do owners[#owners + 1] = n end
      for _, r in ipairs(roads) do owners[#owners + 1] = r end
      local num = {}
      for i, o in ipairs(owners) do num[o] = i end
      local ends = {}
      for i, o in ipairs(owners) do
        ends[2 * i - 1], ends[2 * i] = o.a and num[o.a] or 0, o.b and num[o.b] or 0
      end
      local rooms, outlines, owner_of = {}, {}, {}
      for i = 1, 3 + math.floor(rnd() * 10) do
        -- a convex-ish ring round a random centre (some tiny, some with repeated points)
        local cx, cz, rad = rnd() * 120, rnd() * 120, 2 + rnd() * 30
        local m, pts = 3 + math.floor(rnd() * 6), {}
        for k = 1, m do
          local ang = (k + rnd() * 0.5) / m * 2 * math.pi
          pts[k] = { cx + rad * math.cos(ang), 0, cz + rad * math.sin(ang) }
        end
        if rnd() < 0.2 then pts[#pts + 1] = pts[#pts] end
        local refs = {}
        for k, p in ipairs(pts) do refs[k] = b:vertex(p) end
        local o = owners[1 + math.floor(rnd() * #owners)]
        rooms[i] = { outline = refs, owner = o }
        outlines[i], owner_of[i] = refs, num[o]
      end
      local want = reference(b, rooms)
      local got = b:overlaps(outlines, owner_of, ends)
      assert.equal(4 * #want, #got)
      for k, w in ipairs(want) do
        assert.equal(num[w.a], got[4 * k - 3])
        assert.equal(num[w.b], got[4 * k - 2])
        assert.equal(w.x, got[4 * k - 1])
        assert.equal(w.z, got[4 * k])
      end
      pairs_seen = pairs_seen + #want
    end
    assert.is_true(pairs_seen > 20, pairs_seen .. " overlaps only") -- the comparison saw overlaps
  end)

  it("refuses bad lists naming them", function()
    local b = builder.new{}
    local r = b:vertex{ 0, 0, 0 }
    assert.has_error(function() b:overlaps({ { r, 99 } }, { 1 }, { 0, 0 }) end,
      "bad argument #1 to 'overlaps' (outlines[1][2]: vertex reference in 1..2 expected)")
    assert.has_error(function() b:overlaps({ { r } }, { 3 }, { 0, 0 }) end,
      "bad argument #2 to 'overlaps' (owners[1]: integer in 1..1 expected)")
    assert.has_error(function() b:overlaps({}, {}, { 0, 1 }) end,
      "bad argument #3 to 'overlaps' (ends[1]: both 0 (a node) or both owners (a road) expected)")
    assert.has_error(function() b:overlaps({}, {}, "x") end, "bad argument #3 to 'overlaps' (table expected, got string)")
    assert.has_error(function() b:overlaps({}, {}, {}, -1) end,
      "bad argument #4 to 'overlaps' (eps: positive number expected, got -1)")
  end)
end)

-- psdl.city.network's `conflicts` (core.network_conflicts, src/psdl_conflicts.c) against the
-- Lua it ran before the tests moved to C (kept here as the reference): the same conflicts, in
-- the same order, with the same numbers, and the same `crossings` of bridges and tunnels, on
-- random networks, with and without a repair's `only`.
describe("psdl.city.network conflicts in C", function()
  local core = require "psdl.core"
  local network = require "psdl.city.network"
  local sqrt, abs, min, max = math.sqrt, math.abs, math.min, math.max
  local grid_new = core.grid
  local function plan_line(r)
    local pts = { { r.a.x, r.a.z, r.a.y0 or r.a.y or 0, s = 0 } }
    for _, v in ipairs(r.via) do pts[#pts + 1] = { v[1], v[2], v[3] } end
    pts[#pts + 1] = { r.b.x, r.b.z, r.b.y0 or r.b.y or 0 }
    for i = 2, #pts do
      local p, q = pts[i - 1], pts[i]
      q.s = p.s + sqrt((q[1] - p[1]) ^ 2 + (q[2] - p[2]) ^ 2)
    end
    return pts
  end

    local function level(r) return r.bridge ~= nil or r.tunnel ~= nil end
  local function reference(city, only)
    local out = {}
    local cell = 50
    local g = grid_new(cell)
    -- (with `only`: a grid of the segments of the changed roads and of bridges and tunnels,
    -- met by the segments of the other roads and by the other nodes)
    local small = only and grid_new(cell)
    local lines, item_road, item_seg = {}, {}, {} -- per grid item: its road and segment
    for _, n in ipairs(city.nodes) do n.roads = {} end
    for _, r in ipairs(city.roads) do
      local ra, rb = r.a.roads, r.b.roads
      ra[#ra + 1] = r
      if rb ~= ra then rb[#rb + 1] = r end
    end
    for _, r in ipairs(city.roads) do
      local pts = plan_line(r)
      lines[r] = pts
      local hw = r.spec.half_width or 0
      local both = small and (only.roads[r] or level(r))
      for i = 1, #pts - 1 do
        local p, q = pts[i], pts[i + 1]
        local id = #item_road + 1
        item_road[id], item_seg[id] = r, i
        local x0, z0, x1, z1 = min(p[1], q[1]) - hw, min(p[2], q[2]) - hw, max(p[1], q[1]) + hw, max(p[2], q[2]) + hw
        g:insert(id, x0, z0, x1, z1)
        if both then small:insert(id, x0, z0, x1, z1) end
      end
    end
    -- crossings
    for _, r in ipairs(city.roads) do r.crossings = {} end
    for _, r in ipairs(city.roads) do
      local pts = lines[r]
      local rl, ri = level(r), r.index
      local gr = (small and not only.roads[r] and not rl) and small or g
      for i = 1, #pts - 1 do
        local p, q = pts[i], pts[i + 1]
        local cand = gr:collect(min(p[1], q[1]), min(p[2], q[2]), max(p[1], q[1]), max(p[2], q[2]))
        for n = 1, #cand do
          local o, ci = item_road[cand[n]], item_seg[cand[n]]
          -- each pair once (roads after this one); the two cases exclude each other
          if o.index > ri then
            local ol = level(o)
            local lo = lines[o]
            local u, v = lo[ci], lo[ci + 1]
            if ol ~= rl then
              -- a bridge or tunnel over / under a road at grade: where the road passes, the
              -- level road must be on its deck or in its bore (`piece_levels` fits the ramps)
              local t = seg_cross(p, q, u, v)
              if t then
                local lv, gr2 = r, o
                if ol then lv, gr2 = o, r end
                local ax, az = unit(q[1] - p[1], q[2] - p[2])
                local bx, bz = unit(v[1] - u[1], v[2] - u[2])
                local sn = abs((ax or 0) * (bz or 0) - (az or 0) * (bx or 0))
                local list = lv.crossings
                list[#list + 1] = { x = p[1] + t * (q[1] - p[1]), z = p[2] + t * (q[2] - p[2]), road = gr2,
                                    half = ((lv.spec.half_width or 0) + (gr2.spec.half_width or 0)) / max(sn, 0.2) + 1 }
              end
            elseif not ol then
              -- two roads at grade crossing (each segment pair is met once: no repeats)
              local t, w = seg_cross(p, q, u, v)
              if t then
                local x, z = p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])
                out[#out + 1] = { kind = "cross", a = r, b = o, x = x, z = z,
                                  sa = p.s + t * (q.s - p.s), sb = u.s + w * (v.s - u.s),
                                  y = ((p[3] or 0) + t * ((q[3] or 0) - (p[3] or 0)) + (u[3] or 0)
                                       + w * ((v[3] or 0) - (u[3] or 0))) / 2 }
              end
            end
          end
        end
      end
    end
    -- nodes on another road's body
    for _, n in ipairs(city.nodes) do
      if not (n.opts.tunnel or n.opts.bridge) then
        local deg, own = 0, nil
        for _, r in ipairs(n.roads or {}) do deg, own = deg + 1, r end
        -- a dead end's room reaches its road's half width past the node; one that comes
        -- within DEAD_END_GAP of another road's room counts too (the sliver of ground between
        -- them would be no block, and the curves between the nodes bulge a little)
        local reach = deg == 1 and (own.spec.half_width or 0) + network.DEAD_END_GAP or 0
        if deg > 0 then
          local gr = (small and not only.nodes[n]) and small or g
          local cand = gr:collect(n.x - reach, n.z - reach, n.x + reach, n.z + reach)
          local best
          for k = 1, #cand do
            local o, ci = item_road[cand[k]], item_seg[cand[k]]
            if o.a ~= n and o.b ~= n and not level(o) then
              local pts = lines[o]
              local p, q = pts[ci], pts[ci + 1]
              local d, t = seg_closest(n.x, n.z, p, q)
              local s = p.s + t * (q.s - p.s)
              local L = pts[#pts].s
              -- on the body, away from the road's own ends (a node near another node is a
              -- matter of room overlaps)
              if d < (o.spec.half_width or 0) + reach and s > 1 and s < L - 1 and (not best or d < best.d) then
                local hw = o.spec.half_width or 0
                local dx, dz = unit(q[1] - p[1], q[2] - p[2])
                best = { kind = d < hw and "node" or "touch", node = n, road = o, d = d, s = s, dead_end = deg == 1,
                         dir = { dx or 1, dz or 0 },
                         need = hw + reach, own = own,
                         x = p[1] + t * (q[1] - p[1]), z = p[2] + t * (q[2] - p[2]) }
              end
            end
          end
          if best then out[#out + 1] = best end
        end
      end
    end
    return out
  end


  -- a random network: nodes on a 200 m square, roads with 0-3 via points (some given a
  -- height), random widths, some bridges and tunnels, some tunnel or bridge nodes
  local function random_city(rnd)
    local city = { nodes = {}, roads = {} }
    for i = 1, 3 + math.floor(rnd() * 10) do
      local opts = {}
      if rnd() < 0.1 then opts.tunnel = true elseif rnd() < 0.1 then opts.bridge = true end
      city.nodes[i] = { x = rnd() * 200, z = rnd() * 200, y = rnd() * 3, y0 = rnd() < 0.3 and rnd() or nil, opts = opts,
                        id = i }
    end
    for i = 1, 1 + math.floor(rnd() * 12) do
      local a = city.nodes[1 + math.floor(rnd() * #city.nodes)]
      local b = city.nodes[1 + math.floor(rnd() * #city.nodes)]
      local via = {}
      for k = 1, math.floor(rnd() * 4) do via[k] = { rnd() * 200, rnd() * 200, rnd() < 0.5 and rnd() * 5 or nil } end
      local r = { index = i, a = a, b = b, via = via, spec = { half_width = rnd() < 0.1 and nil or 2 + rnd() * 10 } }
      if rnd() < 0.15 then r.bridge = {} elseif rnd() < 0.1 then r.tunnel = {} end
      -- (a road of one point: its two ends at one place and no via point)
      if a == b and #via == 0 then via[1] = { a.x + 30, a.z + 10 } end
      city.roads[i] = r
    end
    return city
  end

  local function same(want, got, what)
    assert.equal(#want, #got, what)
    for i, w in ipairs(want) do
      local g = got[i]
      for k, v in pairs(w) do
        if type(v) == "table" and not v.index and not v.opts then
          assert.equal(v[1], g[k][1], what .. " " .. i .. " " .. k)
          assert.equal(v[2], g[k][2], what .. " " .. i .. " " .. k)
        else
          assert.equal(v, g[k], what .. " " .. i .. " " .. k)
        end
      end
      for k in pairs(g) do assert.is_not_nil(w[k], what .. " " .. i .. " " .. k) end
    end
  end

  it("finds the conflicts, numbers, order and crossings the Lua found, on random networks", function()
    local seed = 11
    local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
    local seen = { cross = 0, node = 0, touch = 0, level = 0 }
    for round = 1, 300 do
      local city = random_city(rnd)
      local only
      if round % 3 == 0 then -- a repair's re-check: some roads and nodes changed
        only = { roads = {}, nodes = {} }
        for _, r in ipairs(city.roads) do if rnd() < 0.4 then only.roads[r] = true end end
        for _, n in ipairs(city.nodes) do if rnd() < 0.4 then only.nodes[n] = true end end
      end
      local want = reference(city, only)
      local want_cr = {}
      for i, r in ipairs(city.roads) do want_cr[i] = r.crossings end
      local got = network.conflicts(city, only)
      same(want, got, "round " .. round)
      for i, r in ipairs(city.roads) do
        same(want_cr[i], r.crossings, "round " .. round .. " crossings of road " .. i)
        seen.level = seen.level + #r.crossings
      end
      for _, c in ipairs(got) do seen[c.kind] = seen[c.kind] + 1 end
    end
    for k, v in pairs(seen) do assert.is_true(v > 10, v .. " " .. k .. " conflicts only") end
  end)

  it("refuses bad lists naming them", function()
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1, 0 }, { 1, 3 }, {}, {}, false) end,
      "bad argument #1 to 'network_conflicts' (a flat array of x, z, y expected)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1, 0, 0 }, { 1, 2 }, { 1, 1, 1, 0, 0, 0, 0 }, { 0, 0, 0, 1, 0 }, false) end,
      "bad argument #2 to 'network_conflicts' (starts[1]: a road of 2 or more points expected)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1, 0, 0 }, { 1, 3 }, { 1, 1, 2, 0, 0, 0, 0 }, { 0, 0, 0, 1, 0 }, false) end,
      "bad argument #3 to 'network_conflicts' (roads[3]: integer in 1..1 expected)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1, 0, 0 }, { 1, 3 }, { 1, 1, 1, -1, 0, 0, 0 }, { 0, 0, 0, 1, 0 }, false) end,
      "bad argument #3 to 'network_conflicts' (roads[4]: a half width >= 0 expected)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1, 0, 0 }, { 1, 3 }, { 1, 1, 1, 0, 0, 0, 0 }, { 0, "x", 0, 1, 0 }, false) end,
      "bad argument #4 to 'network_conflicts' (nodes[2]: number expected, got string)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 0 / 0, 0, 0 }, { 1, 3 }, { 1, 1, 1, 0, 0, 0, 0 }, { 0, 0, 0, 1, 0 }, false) end,
      "bad argument #1 to 'network_conflicts' (pts[4]: finite number expected)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1, 0, 0 }, { 1, 3 }, { 1, 1, 1, 0, 0, 0, 0 }, { 0, 0, -1, 1, 0 }, false) end,
      "bad argument #4 to 'network_conflicts' (nodes[1]: finite x, z and a reach >= 0 expected)")
    assert.has_error(function() core.network_conflicts({ 0, 0, 0, 1e300, 0, 0 }, { 1, 3 }, { 1, 1, 1, 0, 0, 0, 0 }, { 0, 0, 0, 1, 0 }, false) end,
      "bad argument #1 to 'network_conflicts' (a point not finite, or a road too large for the grid)")
    assert.has_error(function() core.network_conflicts({}, {}, {}, {}, false) end,
      "bad argument #2 to 'network_conflicts' (one start per road and one past the last point expected)")
    assert.has_error(function() core.network_conflicts({}, { 1 }, {}, {}, false, 0) end,
      "bad argument #6 to 'network_conflicts' (cell: a positive finite number expected)")
  end)
end)
