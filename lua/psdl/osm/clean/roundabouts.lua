--- Clean-up pass 4 (`psdl.osm.clean`): roundabouts (`junction=roundabout`) kept, grown
-- about their centre, or collapsed to one node (see `psdl.osm.clean` for the rules).
-- @module psdl.osm.clean.roundabouts

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs, pairs = ipairs, pairs
local math_max, math_pi, math_atan, math_sqrt = math.max, math.pi, math.atan, math.sqrt
-- (cosine: a road leaving a junction near a ring at more than 75 degrees from the ring's
-- radius runs across the approach, within 15 degrees of the ring's tangent)
local ACROSS = math.cos(math.rad(75))
local string_format, table_sort, table_remove, table_unpack = string.format, table.sort, table.remove, table.unpack
local len, other = Graph.len, Graph.other
local note, change = C.note, C.change
local ring_clusters, grow_ring

--- A kept roundabout's island must be at least this wide (metres, between the inner
-- edges of its ring road).
M.ISLAND = 4

-- The attachments of a ring (sorted by angle) in clusters too close along the ring of
-- `radius` to be junctions of their own.
function ring_clusters(att, radius, dims, opts)
  local clusters = {}
  for _, a in ipairs(att) do
    local last = clusters[#clusters]
    if last and radius * (a.angle - last[#last].angle) < last.hw + a.hw + 2 * dims.crosswalk + opts.min_road_length then
      last[#last + 1] = a
      last.hw = math_max(last.hw, a.hw)
    else
      clusters[#clusters + 1] = { a, hw = a.hw }
    end
  end
  if #clusters > 1 then
    local first, last = clusters[1], clusters[#clusters]
    local gap = radius * (first[1].angle + 2 * math_pi - last[#last].angle)
    if gap < first.hw + last.hw + 2 * dims.crosswalk + opts.min_road_length then
      for _, a in ipairs(first) do last[#last + 1] = a end
      last.hw = math_max(last.hw, first.hw)
      table_remove(clusters, 1)
    end
  end
  return clusters
end

--- How much a roundabout's ring may grow (metres of radius) to fit the game's widths.
M.RING_GROWTH = 25
--- A grown ring's roads are this many times as long as their junctions need (the later
-- passes straighten the arcs, which makes the junctions reach further).
M.RING_MARGIN = 1.5

-- Grow a ring about its centre (every point moved out radially) to the radius its island
-- (`ISLAND`) and its junctions (the roads joining it, their half widths, crosswalks and
-- `min_road_length` apart along the ring) need, then in steps of 15 % until each road of
-- the ring is `RING_MARGIN` times as long as its junctions need (`psdl.osm.fit.need`).
-- What lies near the ring makes room for it: a junction at the far end of an approach road
-- that the grown ring and its width (plus `min_road_length`) would cover is **merged into
-- its ring node** when its other roads leave outwards (they join the ring there; its links
-- to the ring go), or **moved** radially just past the ring's outer edge when one of them
-- runs across the approach (within 15 degrees of the ring's tangent, `ACROSS`); a dead end
-- moves out with its ring node, at least past the ring and its width, and then far enough
-- for its junction; the approach roads lose the shape points the ring now covers. Refused
-- (nil, the graph as it was: moves and merges undone) when the growth is over
-- `RING_GROWTH`, when a road joins the ring twice, when any other node would come within
-- the grown ring, its width and `min_road_length`, or when nothing is to be gained.
-- Returns the new radius (the merges counted as changes).
-- @tparam table ctx the clean-up context
-- @tparam table c the ring: `{edges, nodes (set), node_list}`
-- @tparam table att its attachments (`attachments`)
-- @tparam number cx, cz its centre; radius its mean radius; hw_ring its half width (m)
function grow_ring(ctx, c, att, cx, cz, radius, hw_ring)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  if radius < 1 then return nil end
  local need = hw_ring + M.ISLAND / 2 + 0.5
  for i, a in ipairs(att) do
    local b = att[i % #att + 1]
    local gap = b.angle - a.angle
    if gap <= 0 then gap = gap + 2 * math_pi end
    if gap < 1e-3 then return nil end
    local want = (a.hw + b.hw + 2 * dims.crosswalk + opts.min_road_length) * 1.05
    need = math_max(need, want / gap)
  end
  if need <= radius + 0.1 or need - radius > M.RING_GROWTH then return nil end
  local ringnode, ringedge = c.nodes, {}
  for _, e in ipairs(c.edges) do ringedge[e] = true end
  for _, a in ipairs(att) do
    for _, e in ipairs(a.n.edges) do
      if not ringedge[e] and ringnode[other(e, a.n)] then return nil end -- a chord across the ring
    end
  end
  -- the merges of junctions into ring nodes (`absorb`), each with what it changed, to undo
  -- them when the ring cannot grow
  local undo = {}
  local function undo_all()
    for i = #undo, 1, -1 do
      local u = undo[i]
      for x, l in pairs(u.lists) do x.edges = l end
      for _, t in ipairs(u.ends) do
        local e2 = t[1]
        e2.a, e2.b, e2.pts, e2.len, e2.dead = t[2], t[3], t[4], nil, nil
        g.edges[e2] = true
      end
      local f, n = u.f, u.n
      f.dead, f.merged_into = nil, nil
      g.nodes[f] = true
      n.absorbed, n.roundabout, n.turning_circle, n.contact, n.boundary = table_unpack(u.flags, 1, 5)
    end
    g.nlist, g.elist = nil, nil
    undo = {}
  end
  -- a junction whose other roads run across the approach (along the ring) is not merged
  -- into the ring (its roads would leave the ring node along the ring) but moves out with
  -- its ring node, as a dead end does
  local movable = {}
  local function across(n, f)
    local rx, rz = n.x - cx, n.z - cz
    local rl = math_sqrt(rx * rx + rz * rz)
    if rl < 1e-9 then return false end
    for _, e2 in ipairs(f.edges) do
      if not ringnode[other(e2, f)] then
        local q = e2.a == f and e2.pts[2] or e2.pts[#e2.pts - 1]
        local dx, dz = q[1] - f.x, q[2] - f.z
        local dl = math_sqrt(dx * dx + dz * dz)
        if dl > 1e-9 and (dx * rx + dz * rz) / (dl * rl) < ACROSS then
          movable[f] = true
          return true
        end
      end
    end
    return false
  end
  -- a junction within `reach` of the centre at the far end of an approach road, whose
  -- roads leave outwards: merged into the ring node; the next ones out are looked at again
  local function absorb(reach)
    local again = true
    while again do
      again = false
      for _, n in ipairs(c.node_list) do
        if not n.dead then
          for _, e in ipairs(n.edges) do
            local f = other(e, n)
            if not ringedge[e] and not ringnode[f] and #f.edges >= 2 and not movable[f]
              and G.dist(f.x, f.z, cx, cz) < reach and not across(n, f) then
              -- (what the merge changes, to undo it when the ring cannot grow)
              local u = { f = f, n = n, lists = {}, ends = {},
                          flags = { n.absorbed, n.roundabout, n.turning_circle, n.contact, n.boundary } }
              local links = {}
              for _, e2 in ipairs(f.edges) do
                local m = other(e2, f)
                if ringnode[m] then links[#links + 1] = e2 end
                local pts = {}
                for i, p in ipairs(e2.pts) do pts[i] = p end
                u.ends[#u.ends + 1] = { e2, e2.a, e2.b, pts }
                for _, x in ipairs({ e2.a, e2.b }) do
                  if not u.lists[x] then
                    local l = {}
                    for i, y in ipairs(x.edges) do l[i] = y end
                    u.lists[x] = l
                  end
                end
              end
              for _, e2 in ipairs(links) do g:remove_edge(e2) end
              g:merge(n, f, n.x, n.z)
              undo[#undo + 1] = u
              again = true
              break
            end
          end
          if again then break end
        end
      end
    end
  end
  -- (what the growth moves, to put it back when the ring cannot grow enough)
  local saved_nodes, saved_edges = {}, {}
  local function save_edge(e)
    if not saved_edges[e] then
      local pts = {}
      for i, p in ipairs(e.pts) do pts[i] = p end
      saved_edges[e] = pts
    end
  end
  -- the far ends of short approach roads inside the grown ring move out with their ring
  -- node (by the mean of their ring nodes' moves), at least past the ring and its width
  local function shifts(k, R)
    local reach = R + hw_ring + opts.min_road_length
    local shift = {}
    for _, n in ipairs(c.node_list) do
      if not n.dead then
        for _, e in ipairs(n.edges) do
          if not ringedge[e] then
            local f = other(e, n)
            if G.dist(f.x, f.z, cx, cz) < reach + 1 and (#f.edges == 1 or movable[f]) then
              local sh = shift[f] or { 0, 0, 0 }
              shift[f] = sh
              sh[1], sh[2], sh[3] = sh[1] + (n.x - cx) * (k - 1), sh[2] + (n.z - cz) * (k - 1), sh[3] + 1
            end
          end
        end
      end
    end
    local out = {}
    for f, sh in pairs(shift) do
      local x, z = f.x, f.z
      if not movable[f] then x, z = x + sh[1] / sh[3], z + sh[2] / sh[3] end
      local d = G.dist(x, z, cx, cz)
      -- (a dead end past the reach; a junction just past the ring's edge, its roads move least)
      local r = movable[f] and R + hw_ring + 1 or reach + 1
      if d < r and d > 1e-6 then
        x, z = cx + (x - cx) * r / d, cz + (z - cz) * r / d
      end
      out[f] = { x, z }
    end
    -- nothing else may lie within the grown ring and its width
    for _, n in ipairs(g:node_list()) do
      if not ringnode[n] and not out[n] then
        if G.dist(n.x, n.z, cx, cz) < reach then
          return nil
        end
      end
    end
    return out
  end
  local function scale(k, shift)
    for f, p in pairs(shift) do
      if not saved_nodes[f] then
        saved_nodes[f] = { f.x, f.z }
        for _, e2 in ipairs(f.edges) do save_edge(e2) end
      end
      g:move(f, p[1], p[2])
    end
    for _, e in ipairs(c.edges) do
      for i = 2, #e.pts - 1 do
        local p = e.pts[i]
        e.pts[i] = { cx + (p[1] - cx) * k, cz + (p[2] - cz) * k }
      end
      e.len = nil
    end
    for n in pairs(ringnode) do
      if not n.dead then g:move(n, cx + (n.x - cx) * k, cz + (n.z - cz) * k) end
    end
  end
  -- approach roads: their shape points inside the ring of radius R and its width go
  local function strip(R)
    for _, n in ipairs(c.node_list) do
      for _, e in ipairs(n.dead and {} or n.edges) do
        if not ringedge[e] then
          local pts = e.pts
          local kept = {}
          for i = 1, #pts do
            local p = pts[i]
            local inner = i > 1 and i < #pts and G.dist(p[1], p[2], cx, cz) < R + hw_ring
            if not inner then kept[#kept + 1] = p end
          end
          if #kept >= 2 and #kept < #pts then e.pts = kept end
          e.len = nil
        end
      end
    end
  end
  local function save()
    for n in pairs(ringnode) do
      if not saved_nodes[n] then saved_nodes[n] = { n.x, n.z } end
      for _, e in ipairs(n.edges) do
        save_edge(e)
        local f = other(e, n)
        if not saved_nodes[f] then
          saved_nodes[f] = { f.x, f.z }
          for _, e2 in ipairs(f.edges) do save_edge(e2) end
        end
      end
    end
  end
  -- grow until every road of the ring is `RING_MARGIN` times as long as its junctions need
  -- (fit.need), in steps of 15 %; back as it was when it cannot
  local cur, target = radius, need
  local fits = false
  save()
  while target - radius <= M.RING_GROWTH do
    absorb(target + hw_ring + opts.min_road_length)
    save()
    local shift = shifts(target / cur, target)
    if not shift then break end
    scale(target / cur, shift)
    cur = target
    strip(cur)
    fits = true
    for _, e in ipairs(c.edges) do
      if not e.dead and e.a ~= e.b and len(e) < M.RING_MARGIN * fit.need(e, dims, opts.min_road_length) then
        fits = false
        break
      end
    end
    if fits then break end
    target = cur * 1.15
  end
  if not fits then
    for e, pts in pairs(saved_edges) do e.pts, e.len = pts, nil end
    for n, p in pairs(saved_nodes) do n.x, n.z = p[1], p[2] end
    undo_all()
    return nil
  end
  for _, u in ipairs(undo) do
    change(ctx, "junctions next to a roundabout merged into its ring's junctions", 1, u.n)
  end
  need = cur
  -- the far ends that moved out: far enough for their approach road's junctions
  for _, n in ipairs(c.node_list) do
    for _, e in ipairs(n.dead and {} or n.edges) do
      local f = other(e, n)
      if not ringedge[e] and #f.edges == 1 and saved_nodes[f] then
        local want = fit.need(e, dims, opts.min_road_length) + 1
        local dx, dz = f.x - n.x, f.z - n.z
        local d = math_sqrt(dx * dx + dz * dz)
        if d > 1e-9 and len(e) < want then
          local k = (d + want - len(e)) / d
          g:move(f, n.x + dx * k, n.z + dz * k)
        end
      end
    end
  end
  strip(need)
  return need
end

-- The attachments of ring c: its nodes with other roads, by angle around the centre
-- (`{n, angle, hw, outside}`: the widest and the number of those roads).
local function attachments(c, is_ring, cx, cz, dims)
  local att = {}
  for _, n in ipairs(c.node_list) do
    if not n.dead then
      local outside, hw = 0, 0
      for _, e in ipairs(n.edges) do
        if not is_ring[e] then outside = outside + 1 hw = math_max(hw, fit.hw(e, dims)) end
      end
      if outside > 0 then
        att[#att + 1] = { n = n, angle = math_atan(n.z - cz, n.x - cx), hw = hw, outside = outside }
      end
    end
  end
  table_sort(att, function(p, q) return p.angle < q.angle end)
  return att
end

function M.roundabouts(ctx)
  local g, opts, dims = ctx.g, ctx.opts, ctx.dims
  local ring = {}
  for _, e in ipairs(g:edge_list()) do
    if e.attr.roundabout then ring[#ring + 1] = e end
  end
  if #ring == 0 then return false end
  -- components of ring edges
  local comp_of = {}
  local comps = {}
  for _, e in ipairs(ring) do
    if not comp_of[e] then
      local c = { edges = {}, nodes = {}, node_list = {} }
      comps[#comps + 1] = c
      local stack = { e }
      comp_of[e] = c
      while #stack > 0 do
        local x = table_remove(stack)
        c.edges[#c.edges + 1] = x
        for _, n in ipairs({ x.a, x.b }) do
          if not c.nodes[n] then
            c.nodes[n] = true
            c.node_list[#c.node_list + 1] = n
          end
          for _, y in ipairs(n.edges) do
            if y.attr.roundabout and not comp_of[y] then
              comp_of[y] = c
              stack[#stack + 1] = y
            end
          end
        end
      end
    end
  end
  local changed = false
  for _, c in ipairs(comps) do
    table_sort(c.node_list, function(p, q) return p.k < q.k end)
    -- centre, perimeter, ring width
    local sx, sz, sl, perim, hw_ring = 0, 0, 0, 0, 0
    for _, e in ipairs(c.edges) do
      hw_ring = math_max(hw_ring, fit.hw(e, dims))
      for i = 2, #e.pts do
        local a, b = e.pts[i - 1], e.pts[i]
        local l = G.dist(a[1], a[2], b[1], b[2])
        sx, sz, sl = sx + (a[1] + b[1]) / 2 * l, sz + (a[2] + b[2]) / 2 * l, sl + l
      end
      perim = perim + len(e)
    end
    local cx, cz = sx / math_max(sl, 1e-9), sz / math_max(sl, 1e-9)
    if sl == 0 then cx, cz = c.node_list[1].x, c.node_list[1].z end
    local radius = perim / (2 * math_pi)
    -- attachments: ring nodes with other roads, by angle around the centre
    local att = attachments(c, comp_of, cx, cz, dims)
    local clusters = ring_clusters(att, radius, dims, opts)
    local island = 2 * (radius - hw_ring)
    local keep = opts.roundabouts == "keep"
      or (opts.roundabouts == "auto" and #clusters >= 2 and island >= M.ISLAND)
    -- a ring too small for the game's widths: grown to the radius its island and its
    -- junctions need, when its approach roads leave the room
    if not keep and opts.roundabouts == "auto" and #att >= 2 then
      -- ring nodes no other road joins (where the ring's tags change) would be bends
      -- between two short roads of the growing ring: its roads are joined there first
      for _, n in ipairs(c.node_list) do
        if not n.dead and #n.edges == 2 and comp_of[n.edges[1]] == c and comp_of[n.edges[2]] == c then
          local e1, e2 = n.edges[1], n.edges[2]
          local e = g:join(n, true, len(e1) >= len(e2) and e1.attr or e2.attr)
          if e then
            comp_of[e] = c
            local list = {}
            for _, x in ipairs(c.edges) do if x ~= e1 and x ~= e2 then list[#list + 1] = x end end
            list[#list + 1] = e
            c.edges = list
          end
        end
      end
      local R = grow_ring(ctx, c, att, cx, cz, radius, hw_ring)
      att = attachments(c, comp_of, cx, cz, dims)
      if R then
        change(ctx, "roundabouts enlarged to the game's widths", 1, { x = cx, z = cz, e = c.edges[1] })
        note(ctx, string_format("roundabout ring radius %.1f m -> %.1f m", radius, R), 1,
          { x = cx, z = cz, e = c.edges[1] })
        radius = R
        clusters = ring_clusters(att, radius, dims, opts)
        island = 2 * (radius - hw_ring)
        keep = #clusters >= 2 and island >= M.ISLAND
      end
    end
    if keep and #clusters >= 1 then
      for _, cl in ipairs(clusters) do
        if #cl > 1 then
          table_sort(cl, function(p, q)
            if p.outside ~= q.outside then return p.outside > q.outside end
            return p.n.k < q.n.k
          end)
          local rep = cl[1].n
          for i = 2, #cl do
            g:merge(rep, cl[i].n, rep.x, rep.z)
          end
          change(ctx, "roundabout junctions merged (too close on the ring)", #cl - 1, rep)
        end
      end
      change(ctx, "roundabouts kept as a ring of roads", 1, { x = cx, z = cz, e = c.edges[1] })
    else
      local centre = g:node(cx, cz, nil, "r")
      centre.roundabout = true
      for _, e in ipairs(c.edges) do
        if not e.dead then g:remove_edge(e) end
      end
      for _, n in ipairs(c.node_list) do
        if not n.dead then
          if #n.edges > 0 then g:merge(centre, n, cx, cz) else g:remove_node(n) end
        end
      end
      if #centre.edges == 0 then g:remove_node(centre) end
      change(ctx, "roundabouts collapsed into one junction", 1, { x = cx, z = cz, e = c.edges[1] })
    end
    changed = true
  end
  return changed
end

return M
