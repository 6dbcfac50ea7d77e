--- Clean-up passes 1 and 2 (`psdl.osm.clean`): nodes closer than `merge_distance` at a
-- common level become one (**merge**), and a dead end within `snap_distance` of another road
-- at its level is joined to it, the road split there (**snap**: OSM "almost junctions").
-- @module psdl.osm.clean.merge

local G = require "psdl.osm.geometry"
local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local math_sqrt, math_max = math.sqrt, math.max
local string_format, table_sort = string.format, table.sort
local degree, other = Graph.degree, Graph.other
local note, change, share_level = C.note, C.change, C.share_level

function M.merge_close(ctx)
  local d = ctx.opts.merge_distance
  if not d or d <= 0 then return false end
  local g = ctx.g
  local nodes = g:node_list()
  local grid = G.grid(math_max(d * 4, 10))
  local parent = {}
  local function find(n)
    while parent[n] and parent[n] ~= n do n = parent[n] end
    return n
  end
  for _, n in ipairs(nodes) do
    grid:query(n.x - d, n.z - d, n.x + d, n.z + d, function(m)
      if G.dist(n.x, n.z, m.x, m.z) < d and share_level(n, m) then
        local rn, rm = find(n), find(m)
        if rn ~= rm then
          if rn.k < rm.k then parent[rm] = rn else parent[rn] = rm end
        end
      end
    end)
    grid:insert(n, n.x, n.z, n.x, n.z)
  end
  local clusters = {}
  for _, n in ipairs(nodes) do
    local r = find(n)
    if r ~= n then
      local c = clusters[r]
      if not c then c = { r } clusters[r] = c clusters[#clusters + 1] = c end
      c[#c + 1] = n
    end
  end
  local changed = false
  for _, c in ipairs(clusters) do
    local sx, sz = 0, 0
    for _, n in ipairs(c) do sx, sz = sx + n.x, sz + n.z end
    local x, z = sx / #c, sz / #c
    table_sort(c, function(p, q) return p.k < q.k end)
    for i = 2, #c do g:merge(c[1], c[i], x, z) end
    change(ctx, string_format("nodes merged (closer than %g m)", d), #c - 1, c[1])
    changed = true
  end
  return changed
end

function M.snap(ctx)
  local d = ctx.opts.snap_distance
  if not d or d <= 0 then return false end
  local g = ctx.g
  local changed = false
  for _ = 1, 5 do
    local grid = G.grid(50)
    for _, e in ipairs(g:edge_list()) do
      for i = 2, #e.pts do
        local a, b = e.pts[i - 1], e.pts[i]
        grid:insert_segment({ e = e, i = i - 1 }, a[1], a[2], b[1], b[2], 0)
      end
    end
    local todo = {}
    for _, n in ipairs(g:node_list()) do
      if degree(n) == 1 and not n.boundary then
        local mine = n.edges[1]
        local lv = fit.level(mine.attr)
        local best, bd
        grid:query(n.x - d, n.z - d, n.x + d, n.z + d, function(sg)
          local e = sg.e
          if e ~= mine and fit.level(e.attr) == lv then
            local a, b = e.pts[sg.i], e.pts[sg.i + 1]
            local d2, t = G.seg_dist2(n.x, n.z, a[1], a[2], b[1], b[2])
            local dist = math_sqrt(d2)
            if dist < d and (not bd or dist < bd or (dist == bd and e.k < best.e.k)) then
              best, bd = { e = e, i = sg.i, t = t }, dist
            end
          end
        end)
        if best then todo[#todo + 1] = { n = n, hit = best } end
      end
    end
    local done = 0
    local touched = {}
    for _, s in ipairs(todo) do
      local n, e = s.n, s.hit.e
      if not e.dead and not n.dead and not touched[e] and degree(n) == 1 then
        local other_end = n.edges[1]
        local target
        local pts = e.pts
        local a, b = pts[s.hit.i], pts[s.hit.i + 1]
        local x, z = a[1] + s.hit.t * (b[1] - a[1]), a[2] + s.hit.t * (b[2] - a[2])
        -- onto an end node of e, or into its middle
        if G.dist(x, z, e.a.x, e.a.z) < 1e-6 + d * 0.5 and (s.hit.i == 1 and s.hit.t < 0.5) then
          target = e.a
        elseif G.dist(x, z, e.b.x, e.b.z) < 1e-6 + d * 0.5 and (s.hit.i == #pts - 1 and s.hit.t > 0.5) then
          target = e.b
        else
          target = g:split(e, s.hit.i, s.hit.t, nil, nil, "j")
        end
        if target ~= other(other_end, n) then
          g:merge(target, n, target.x, target.z)
          done = done + 1
          touched[e] = true
          note(ctx, string_format("dead ends joined to a road they almost touch (within %g m)", d), 1, target)
        end
      end
    end
    if done == 0 then break end
    change(ctx, string_format("dead ends joined to a road they almost touch (within %g m)", d), done)
    changed = true
  end
  return changed
end

return M
