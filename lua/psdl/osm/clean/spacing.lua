--- Clean-up fit round (`psdl.osm.clean`): spacing. A road shorter than the reaches of its two
-- junctions plus `min_road_length`: the junctions merge; a dead end shorter than its junction
-- is removed; a too-short bridge or tunnel grows over its approach.
-- @module psdl.osm.clean.spacing

local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs, pairs = ipairs, pairs
local math_abs, math_max = math.abs, math.max
local string_format, table_sort = string.format, table.sort
local len, degree, other = Graph.len, Graph.degree, Graph.other
local change, drop, max_rank, remove_orphans = C.change, C.drop, C.max_rank, C.remove_orphans

-- edges that cross another road at a different level (bridges, tunnels over/under roads)
local function separated_edges(g, dims)
  local set = {}
  for e, list in pairs(fit.separated(g, dims)) do
    set[e] = true
    for _, c in ipairs(list) do set[c.other] = true end
  end
  return set
end

-- What an edge would need if every road met it at a right angle: the widest other road
-- at each junction end plus the crosswalks. A road much longer than that is too short only
-- because of an acute angle, which merging its junctions would not fix.
local function square_need(e, dims, min_len)
  local need = min_len
  for _, n in ipairs({ e.a, e.b }) do
    if degree(n) >= 3 then
      local w = 0
      for _, f in ipairs(n.edges) do
        if f ~= e then w = math_max(w, fit.hw(f, dims)) end
      end
      need = need + w + dims.crosswalk
    elseif degree(n) == 2 then
      need = need + fit.hw(e, dims)
    end
  end
  return need
end

function M.spacing(ctx)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  local min_len = opts.min_road_length
  local changed = false
  local reach = fit.reach_table(g, dims)
  for _ = 1, 50 do
    local bad = {}
    for _, e in ipairs(g:edge_list()) do
      if e.a ~= e.b then
        local L = len(e)
        local need = fit.need(e, dims, min_len, reach)
        if L < need - 1e-6 and L < 1.5 * square_need(e, dims, min_len) then
          bad[#bad + 1] = { e = e, short = need - L }
        end
      end
    end
    if #bad == 0 then break end
    table_sort(bad, function(p, q)
      if math_abs(p.short - q.short) > 1e-9 then return p.short > q.short end
      return p.e.k < q.e.k
    end)
    local crossing = separated_edges(g, dims)
    local touched, did = {}, 0
    for _, b in ipairs(bad) do
      local e = b.e
      if not e.dead and not touched[e.a] and not touched[e.b] then
        local a, z = e.a, e.b
        local da, dz = degree(a), degree(z)
        local L = len(e)
        if crossing[e] and (da == 2 or dz == 2) then
          -- a short bridge or tunnel: grow it over its approach
          local at = dz == 2 and z or a
          local attr = e.attr
          if g:join(at, true, attr) then
            change(ctx, "bridges and tunnels extended over their approach roads", 1, e)
            touched[a], touched[z] = true, true
            did = did + 1
          end
        elseif crossing[e] then
          -- between two junctions: leave it, reported by the final check
        elseif da == 1 and dz == 1 then
          if L < min_len then
            drop(ctx, e, "isolated fragment", string_format("isolated fragment (%.1f m)", L))
            did = did + 1
          end
        elseif da == 1 or dz == 1 then
          local j = da == 1 and z or a
          if degree(j) >= 3 then
            drop(ctx, e, "dead end shorter than the junction it leaves",
              string_format("dead end shorter than the junction it leaves (%.1f m, needs %.1f m)", L, L + b.short))
          else
            g:remove_edge(e)
            change(ctx, "short road ends trimmed at a bend or profile change", 1, e)
          end
          touched[a], touched[z] = true, true
          did = did + 1
        else
          -- merge the two ends
          local keep, gone = a, z
          local function better(p, q)
            local dp, dq = degree(p), degree(q)
            if dp ~= dq then return dp > dq end
            local rp, rq = max_rank(p), max_rank(q)
            if rp ~= rq then return rp > rq end
            return p.k < q.k
          end
          if better(z, a) then keep, gone = z, a end
          local x, zz = keep.x, keep.z
          if degree(a) == degree(z) and max_rank(a) == max_rank(z) then
            x, zz = (a.x + z.x) / 2, (a.z + z.z) / 2
          end
          local both = da >= 3 and dz >= 3
          g:remove_edge(e)
          g:merge(keep, gone, x, zz)
          touched[keep] = true
          change(ctx, both and "junctions too close for their roads merged"
            or "short roads between a junction and a bend merged away", 1, keep)
          did = did + 1
        end
      end
    end
    remove_orphans(g)
    if did == 0 then break end
    changed = true
    -- a merge can leave loops and parallel roads behind: tidy before measuring again
    local l1 = M.loops(ctx)
    local l2 = M.parallel(ctx)
    if l1 or l2 then
      reach = fit.reach_table(g, dims)
    else -- only the junctions changed here and their neighbours need measuring again
      local redo = {}
      for n in pairs(touched) do
        redo[n] = true
        if not n.dead then
          for _, e in ipairs(n.edges) do redo[other(e, n)] = true end
        end
      end
      fit.reach_update(reach, redo, dims)
    end
  end
  return changed
end

return M
