--- Clean-up last resort (`psdl.osm.clean`): for each problem `psdl.osm.check` still finds,
-- as little as can be is given up, until none is left.
-- @module psdl.osm.clean.enforce

local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"
local reattach = require "psdl.osm.clean.reattach"

local ipairs, tostring = ipairs, tostring
local string_format, table_remove = string.format, table.remove
local len, other, degree = Graph.len, Graph.other, Graph.degree
local change, drop, rank, major, remove_orphans =
  C.change, C.drop, C.rank, C.major, C.remove_orphans

local function least(list)
  local victim
  for _, e in ipairs(list) do
    if not e.dead and (not victim or major(victim, e)) then victim = e end
  end
  return victim
end

--- Whatever the passes could not fit: drop the least road involved in each problem the
-- checker still finds (a bend without room first loses the shape point at its sharper end,
-- one per round, and only a road with no shape point there is straightened; a junction that
-- overlaps another road loses its least road's end there, when that road is long enough
-- to stay as a dead end), until none is left. Returns the problems of the last check (empty unless something could not be
-- resolved).
function M.enforce(ctx)
  local g = ctx.g
  local check = require "psdl.osm.check"
  local copts = { dimensions = ctx.dims, min_angle = ctx.opts.min_angle, min_road_length = ctx.opts.min_road_length }
  local problems
  local reattached = {}
  for _ = 1, 1000 do
    problems = check.graph(g, copts)
    if #problems == 0 then break end
    local did = false
    for _, p in ipairs(problems) do
      local edges, nodes = p._edges, p._nodes
      local alive = true
      for _, e in ipairs(edges) do if e.dead then alive = false end end
      for _, n in ipairs(nodes) do if n.dead then alive = false end end
      if alive then
        local victim
        if p.kind == "bend" and #edges[1].pts > 2 then
          -- the sharper interior end of the segment too short (`_segment`) loses its point:
          -- the road keeps its other bends (a long curve straightened whole would cross its
          -- neighbours: Nairobi's flyover ramp beside its twin)
          local e = edges[1]
          local i, pts = p._segment, e.pts
          local k
          if i and i >= 1 and i < #pts then
            local _, _, need = fit.bend_violation(pts, fit.hw(e, ctx.dims), 0, 0)
            if i > 1 and (i + 1 == #pts or need[i] >= need[i + 1]) then k = i
            elseif i + 1 < #pts then k = i + 1 end
          end
          if k then
            table_remove(pts, k)
            change(ctx, "bends without room eased (a shape point removed)", 1, e)
          else
            change(ctx, "roads straightened (no room for their bends)", 1, e)
            e.pts = { e.pts[1], e.pts[#e.pts] }
          end
          e.len = nil
          did = true
        elseif p.kind == "short" or p.kind == "overlap" then
          local cands = {}
          for _, e in ipairs(edges) do cands[#cands + 1] = e end
          for _, n in ipairs(nodes) do
            for _, e in ipairs(n.edges) do cands[#cands + 1] = e end
          end
          victim = least(cands)
        else
          victim = least(edges)
        end
        local n = nodes[1]
        local vkey = victim and Graph.source_text(victim.src)
        if p.kind == "angle" and victim and #edges == 2 and n and (reattached[vkey] or 0) < 2
          and rank(victim) < rank(victim == edges[1] and edges[2] or edges[1]) then
          -- two roads leaving a node too close together: the lesser first joins the other
          -- where they part (as the acute pass does), before it is given up
          local e, f = edges[1], edges[2]
          local Mj = victim == e and f or e
          reattached[vkey] = (reattached[vkey] or 0) + 1
          if e ~= f and e.a ~= e.b and f.a ~= f.b and other(e, n) == other(f, n)
            and fit.level(e.attr) == fit.level(f.attr) and len(victim) > 4 * (fit.hw(e, ctx.dims) + fit.hw(f, ctx.dims)) then
            -- both run to the same far node: the lesser gets a node half-way, so that only
            -- its first half joins the other
            local _, e1, e2 = g:split_at(victim, len(victim) / 2, 0, "h")
            if e1 and e2 then victim = (e1.a == n or e1.b == n) and e1 or e2 end
          end
          if e ~= f and e.a ~= e.b and f.a ~= f.b and other(victim, n) ~= other(Mj, n)
            and fit.level(e.attr) == fit.level(f.attr) and reattach(ctx, n, victim, Mj) then
            remove_orphans(g)
            did = true
            victim = nil
          end
        end
        local cut_end = false
        -- a junction (alone in `nodes`) overlapping another road: its least road loses its
        -- end there, as at a flat junction, rather than the whole road (Nairobi: a flyover's
        -- ramp joining Waiyaki Way beside the other carriageway)
        local at_junction = p.kind == "overlap" and n and #nodes == 1 and degree(n) >= 3
        if (p.kind == "angle" or at_junction) and victim and n and victim.a ~= victim.b
          and (victim.a == n or victim.b == n) then
          -- rather than the whole road, only its end at the flat junction goes: the rest
          -- stays as a dead end (when long enough to be worth it)
          local Mj = victim == edges[1] and edges[2] or edges[1]
          if at_junction then -- the widest other road there
            Mj = nil
            for _, f in ipairs(n.edges) do
              if f ~= victim and (not Mj or fit.hw(f, ctx.dims) > fit.hw(Mj, ctx.dims)) then Mj = f end
            end
          end
          local clear = fit.hw(victim, ctx.dims) + fit.hw(Mj, ctx.dims)
          local L = len(victim)
          local cut = 2 * clear + ctx.opts.min_road_length
          if L > 3 * cut then
            local _, e1, e2 = g:split_at(victim, victim.a == n and cut or L - cut, 0, "c")
            if e1 and e2 then
              local piece = (e1.a == n or e1.b == n) and e1 or e2
              drop(ctx, piece, at_junction and "end at a junction overlapping a road cut away"
                or "end at a junction too flat cut away",
                string_format("its end at node %s cut away (%.0f m): %s", tostring(n.id), len(piece), p.message))
              remove_orphans(g)
              did, cut_end = true, true
            end
          end
        end
        if not victim or cut_end then -- handled above
        elseif victim and M.narrow(ctx, victim) then
          did = true
        elseif victim and p._overlap and M.cut_overlap(ctx, victim, p._overlap) then
          -- only the overlapping stretch goes (listed in report.dropped)
          did = true
        elseif victim then
          drop(ctx, victim, "could not be fitted (" .. p.kind .. ")",
            "could not be fitted: " .. p.kind .. " (" .. p.message .. ")")
          did = true
        end
      end
    end
    remove_orphans(g)
    if not did then break end
  end
  return problems
end

return M
