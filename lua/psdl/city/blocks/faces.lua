--- Faces of the road network for psdl.city.blocks (step 1 of `fill`): room outlines, the
-- network's boundary loops, faces with holes, portals and decks (`M.faces`).
local core = require "psdl.core"
local plan = require "psdl.plan"

local ipairs = ipairs
local abs = math.abs
local table_sort, table_insert, string_format = table.sort, table.insert, string.format
local area2, dist, inside = plan.area2, plan.dist, plan.inside

-- Installed by psdl.city.blocks (city/blocks/init.lua): M is the module table, Ctx the
-- context class of one `fill`, private the helpers shared between the blocks files.
return function(M, Ctx, private)
  local poly, push = private.poly, private.push

  -- ================================================================ network and faces

  local function is_warp(r)
    if r.is_tunnel or r.is_bridge then return true end
    return r.flags ~= nil and (r.flags & 0x40) ~= 0
  end

  -- A room's outline as vertex references: its own, or that of its ground geometry.
  local function room_outline(b, r) return b:room_outline(r) end

  local function ukey(a, c)
    if a < c then return a * 4294967296 + c end
    return c * 4294967296 + a
  end

  -- The outlines of the ordinary rooms (vertex references, split at the vertices of other
  -- rooms lying inside their edges: T-junctions) and the edges of tunnel and deck rooms.
  local function outlines(b, skip, outline_of)
    local base, tunnel_edges, deck_edges = {}, {}, {}
    for _, r in ipairs(b.rooms) do
      if not (skip and skip[r]) then
        local out
        if outline_of then out = outline_of(r) else out = room_outline(b, r) end
        if out and #out >= 3 then
          if is_warp(r) then
            local set = (r.is_tunnel or (r.flags and (r.flags & 0x02) ~= 0)) and tunnel_edges or deck_edges
            local n = #out
            for k = 1, n do set[ukey(out[k], out[k % n + 1])] = true end
          else
            local c = {}
            for k, v in ipairs(out) do c[k] = v end
            base[#base + 1] = c
          end
        end
      end
    end
    if #base > 1 then
      local t = core.tjunctions(b.vpool, base, b.eps)
      local by = {}
      for i = 1, #t, 3 do
        local ri, e, v = t[i], t[i + 1], t[i + 2]
        local l = by[ri]
        if not l then l = {}; by[ri] = l end
        l[#l + 1] = { e = e, v = v, o = #l }
      end
      for ri = 1, #base do
        local l = by[ri]
        if l then
          table_sort(l, function(x, y) if x.e ~= y.e then return x.e > y.e end return x.o > y.o end)
          local per = base[ri]
          for _, x in ipairs(l) do table_insert(per, x.e + 1, x.v) end
        end
      end
    end
    return base, tunnel_edges, deck_edges
  end

  -- The loops classified by winding: S > 0 bounds a face (reversed into retail winding), S < 0
  -- is an outline of the network; loops of under 0.5 m² are dropped.
  local function classify(loops, pt, edge_kind)
    local faces, outs = {}, {}
    for _, loop in ipairs(loops) do
      if #loop >= 3 then
        local pts = {}
        for i, v in ipairs(loop) do pts[i] = pt(v) end
        local s = area2(pts)
        if abs(s) > 2 * 0.5 then
          local Q = poly()
          if s > 0 then -- reverse into retail winding
            for i = #loop, 1, -1 do
              local j = i == 1 and #loop or i - 1 -- edge (loop[i] -> loop[i-1]) reversed original (loop[i-1] -> loop[i])
              local a, c = loop[i], loop[j]
              push(Q, pts[i], a, edge_kind(a, c))
            end
            Q.area = s / 2
            Q.holes = {}
            faces[#faces + 1] = Q
          else
            local n = #loop
            for i = 1, n do
              local a, c = loop[i], loop[i % n + 1]
              push(Q, pts[i], a, edge_kind(a, c))
            end
            Q.area = -s / 2
            outs[#outs + 1] = Q
          end
        end
      end
    end
    return faces, outs
  end

  -- Islands: an outline inside a face is a hole of the smallest face holding it (wound against
  -- the region, S > 0); the others are returned, holes of the apron.
  local function islands(faces, outs)
    local order = {}
    for i = 1, #faces do order[i] = i end
    table_sort(order, function(x, y) if faces[x].area ~= faces[y].area then return faces[x].area < faces[y].area end return x < y end)
    local apron = {}
    for _, L in ipairs(outs) do
      local host
      local p = L.pts[1]
      for _, fi in ipairs(order) do
        local F = faces[fi]
        if F.area > L.area and inside(F.pts, p[1], p[3]) then host = F; break end
      end
      local H = poly()
      for i = #L.pts, 1, -1 do
        local j = i == 1 and #L.pts or i - 1
        push(H, L.pts[i], L.refs[i], L.kinds[j])
      end
      H.area = L.area
      if host then host.holes[#host.holes + 1] = H else apron[#apron + 1] = H end
    end
    return apron
  end

  --- The faces of the road layout placed in a builder so far.
  -- Edges used by exactly one outline are the network's boundary; loose chain ends are joined
  -- to loose starts within 12 m (rooms that overlap or leave a sliver between them), and the
  -- edges are chained into loops taking the sharpest left turn (the face lies on the left,
  -- math) and split where a loop visits a vertex twice: all in C (psdl.core.face_loops,
  -- src/psdl_faces.c).
  -- @tparam Builder b
  -- @tparam[opt] table opts `skip`: a set of rooms to leave out; `outline_of`: function(room)
  -- -> vertex references or nil, in place of `Builder:room_outline` (a cache)
  -- @treturn table `{faces = {{refs, pts, kinds, holes = {...}, area}...}, outlines =
  -- {...} (the network's outer loops not inside a face, wound S > 0: holes of the apron),
  -- warnings = {...}}`; a face's `refs` / `pts` run in retail winding
  function M.faces(b, opts)
    opts = opts or {}
    local base, tunnel_edges, deck_edges = outlines(b, opts.skip, opts.outline_of)
    local loops, gaps, open = core.face_loops(b.vpool, base)
    local P = {}
    local function pt(v)
      local p = P[v]
      if not p then p = b:point(v); P[v] = p end
      return p
    end
    local warnings = {}
    for i = 1, #gaps, 3 do
      local p, q = pt(gaps[i + 1]), pt(gaps[i + 2])
      warnings[#warnings + 1] = string_format("a gap of %.2f m between rooms' outlines at (%.1f, %.1f) - (%.1f, %.1f) "
        .. "(overlapping or parted rooms) was closed", gaps[i], p[1], p[3], q[1], q[3])
    end
    for i = 1, #open, 2 do
      warnings[#warnings + 1] = string_format("an open chain of %d boundary edges from vertex %d was left out", open[i], open[i + 1])
    end
    local function edge_kind(a, c)
      local key = ukey(a, c)
      if tunnel_edges[key] then return "portal" end
      if deck_edges[key] then return "deck" end
      return "street"
    end
    local faces, outs = classify(loops, pt, edge_kind)
    return { faces = faces, outlines = islands(faces, outs), warnings = warnings }
  end

  -- Moves the points of edges shared with warp rooms to the ground: a tunnel portal's
  -- points up to the ground above (no ground lid over the ramp, city-layout §4.2), a bridge
  -- deck's end down to the ground under it (clearance under the deck). The height function
  -- gives that ground, else the highest (portal) or lowest (deck) of the polygon's other
  -- boundary points within 80 m. The street edges next to a moved point are no longer shared
  -- with the road: no buildings there.
  local function lift_portals(ctx, Q)
    local n = #Q.pts
    local mode = {}
    local any = false
    for i = 1, n do
      local k = Q.kinds[i]
      if k == "portal" or k == "deck" then
        mode[i] = mode[i] or k
        mode[i % n + 1] = mode[i % n + 1] or k
        any = true
      end
    end
    if not any then return end
    local new = {}
    for i = 1, n do
      local md = mode[i]
      if md then
        local p = Q.pts[i]
        local y = ctx:h(p[1], p[3], nil)
        if not y then
          for j = 1, n do
            local q = Q.pts[j]
            if not mode[j] and dist(p, q) < 80 then
              if not y or (md == "portal" and q[2] > y) or (md == "deck" and q[2] < y) then y = q[2] end
            end
          end
          y = y or p[2]
        end
        new[i] = { ctx:new_point(p[1], y, p[3]) }
      end
    end
    for i = 1, n do
      if new[i] then
        Q.pts[i], Q.refs[i] = new[i][1], new[i][2]
        if Q.kinds[i] == "street" then Q.kinds[i] = "portal" end
        local pi_ = (i - 2) % n + 1
        if Q.kinds[pi_] == "street" then Q.kinds[pi_] = "portal" end
      end
    end
  end

  return {
    is_warp = is_warp,
    room_outline = room_outline,
    lift_portals = lift_portals,
  }
end
