--- Faces of the road network for psdl.city.blocks (step 1 of `fill`): room outlines, the
-- network's boundary loops, faces with holes, portals and decks (`M.faces`).
local core = require "psdl.core"
local plan = require "psdl.plan"

local ipairs, setmetatable, rawset = ipairs, setmetatable, rawset
local string_format = string.format
local dist = plan.dist

-- Installed by psdl.city.blocks (city/blocks/init.lua): M is the module table, Ctx the
-- context class of one `fill`, private the helpers shared between the blocks files.
return function(M, Ctx, private)
  -- ================================================================ network and faces

  -- A room's outline as vertex references: its own, or that of its ground geometry (the
  -- builder's list itself, read only: builder/init.lua's trusted.outline_refs).
  local outline_refs = require("psdl.builder").trusted.outline_refs
  local function room_outline(b, r) return outline_refs(b, r) end

  -- The outlines of the rooms (vertex references; those of fewer than 3 points left out by
  -- the kernel) and their kinds: 0 ordinary, 1 tunnel (its edges are portals), 2 other warp
  -- rooms (bridge decks: their edges are decks).
  local function outlines(b, skip, outline_of)
    local lists, warp = {}, {}
    for _, r in ipairs(b.rooms) do
      if not (skip and skip[r]) then
        local out
        if outline_of then out = outline_of(r) else out = room_outline(b, r) end
        if out then
          local n = #lists + 1
          lists[n] = out
          local fl, k = r.flags, 0 -- a warp room (tunnel, bridge, flag 0x40), and which kind
          if r.is_tunnel then k = 1
          elseif r.is_bridge or (fl ~= nil and (fl & 0x40) ~= 0) then
            k = (fl ~= nil and (fl & 0x02) ~= 0) and 1 or 2
          end
          warp[n] = k
        end
      end
    end
    return lists, warp
  end

  --- The faces of the road layout placed in a builder so far.
  -- The outlines of the ordinary (non-warp) rooms, split at the vertices of other rooms lying
  -- inside their edges (T-junctions); edges used by exactly one outline are the network's
  -- boundary; loose chain ends are joined to loose starts within 12 m (rooms that overlap or
  -- leave a sliver between them), and the edges are chained into loops taking the sharpest
  -- left turn (the face lies on the left, math) and split where a loop visits a vertex
  -- twice. Loops of over 0.5 m² are classified by winding: S > 0 bounds a face (reversed
  -- into retail winding), S < 0 is an outline of the network, a hole of the smallest face
  -- holding it (an island) or else of the apron. Edges shared with a tunnel room are
  -- "portal", with another warp room "deck". All in C (psdl.core.network_faces,
  -- src/psdl_faces.c).
  -- @tparam Builder b
  -- @tparam[opt] table opts `skip`: a set of rooms to leave out; `outline_of`: function(room)
  -- -> vertex references or nil, in place of `Builder:room_outline` (a cache)
  -- @treturn table `{faces = {{refs, pts, kinds, holes = {...}, area}...}, outlines =
  -- {...} (the network's outer loops not inside a face, wound S > 0: holes of the apron),
  -- warnings = {...}}`; a face's `refs` / `pts` run in retail winding; `pts` (points
  -- `{x, y, z}`, the vertex pool's) are made from `refs` on first read, so `next` and
  -- `rawget` do not see them before
  function M.faces(b, opts)
    opts = opts or {}
    local lists, warp = outlines(b, opts.skip, opts.outline_of)
    local faces, apron, gaps, open = core.network_faces(b.vpool, lists, warp, b.eps, false)
    -- the rings as polygons of the blocks (their points made on first read, blocks/init.lua)
    local pool, POLY = b.vpool, private.POLY
    for _, F in ipairs(faces) do
      F.pool = pool
      setmetatable(F, POLY)
      for _, H in ipairs(F.holes) do
        H.pool = pool
        setmetatable(H, POLY)
      end
    end
    for _, H in ipairs(apron) do
      H.pool = pool
      setmetatable(H, POLY)
    end
    local warnings = {}
    for i = 1, #gaps, 3 do
      local p, q = b:point(gaps[i + 1]), b:point(gaps[i + 2])
      warnings[#warnings + 1] = string_format("a gap of %.2f m between rooms' outlines at (%.1f, %.1f) - (%.1f, %.1f) "
        .. "(overlapping or parted rooms) was closed", gaps[i], p[1], p[3], q[1], q[3])
    end
    for i = 1, #open, 2 do
      warnings[#warnings + 1] = string_format("an open chain of %d boundary edges from vertex %d was left out", open[i], open[i + 1])
    end
    return { faces = faces, outlines = apron, warnings = warnings }
  end

  -- Moves the points of edges shared with warp rooms to the ground: a tunnel portal's
  -- points up to the ground above (no ground lid over the ramp, city-layout §4.2), a bridge
  -- deck's end down to the ground under it (clearance under the deck). The height function
  -- gives that ground, else the highest (portal) or lowest (deck) of the polygon's other
  -- boundary points within 80 m. The street edges next to a moved point are no longer shared
  -- with the road: no buildings there.
  local function lift_portals(ctx, Q)
    if Q.warp == false then return end -- no portal or deck edge (psdl.core.network_faces)
    local n = #Q.refs
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
    rawset(Q, "pts", nil) -- made again from the references on the next read
    Q.simple = nil
    for i = 1, n do
      if new[i] then
        Q.refs[i] = new[i][2]
        if Q.kinds[i] == "street" then Q.kinds[i] = "portal" end
        local pi_ = (i - 2) % n + 1
        if Q.kinds[pi_] == "street" then Q.kinds[pi_] = "portal" end
      end
    end
  end

  return {
    room_outline = room_outline,
    lift_portals = lift_portals,
  }
end
