--- Clean-up fit round (`psdl.osm.clean`): bridges and tunnels that end too close to the road
-- they cross grow over their approach roads, or are built at grade.
-- @module psdl.osm.clean.bridges

local Graph = require "psdl.osm.graph"
local fit = require "psdl.osm.fit"
local M = require "psdl.osm.clean.passes"
local C = require "psdl.osm.clean.common"

local ipairs = ipairs
local len, other = Graph.len, Graph.other
local change = C.change

local function flatten(attr)
  return Graph.with(attr, { bridge = false, tunnel = false, layer = 0,
    flattened = (attr.bridge or attr.tunnel or (attr.layer or 0) ~= 0) and true or Graph.NIL })
end

--- Bridges and tunnels as city generation builds them: one road per structure, with a
-- ramp of `dimensions.ramp` metres at grade at each end, what it crosses under its deck
-- (or over its bore). Consecutive pieces are joined; a structure too short for its ramps
-- grows over its approach roads through nodes nothing else uses; where it cannot (a
-- junction or a dead end in the way), the crossings too close to that end are made at grade
-- (the crossings pass then gives them a junction); a bridge or tunnel that crosses no road
-- becomes an ordinary road (the map is flat: nothing to clear).
function M.bridges(ctx)
  local g, dims, opts = ctx.g, ctx.dims, ctx.opts
  local ramp = dims.ramp or 0
  local changed = false
  -- one road per structure: consecutive off-ground pieces at the same level
  local function join_structures()
    local any = false
    for _, n in ipairs(g:node_list()) do
      if not n.dead and #n.edges == 2 then
        local e, f = n.edges[1], n.edges[2]
        if e ~= f and e.a ~= e.b and f.a ~= f.b and other(e, n) ~= other(f, n)
          and fit.off_ground(e.attr) and fit.off_ground(f.attr) and fit.level(e.attr) == fit.level(f.attr) then
          local keep = len(e) >= len(f) and e.attr or f.attr
          if g:join(n, true, keep) then
            change(ctx, "bridge and tunnel pieces joined into one road", 1, { x = n.x, z = n.z, e = e })
            any = true
          end
        end
      end
    end
    return any
  end
  if join_structures() then changed = true end
  -- 2. ramps: each round measures once and changes every structure that needs it (a
  -- structure or approach changed in a round waits for the next)
  for _ = 1, 200 do
    local did = false
    if join_structures() then did = true end
    local sep = fit.separated(g, dims)
    local touched = {}
    local crossing_flattened = false
    for _, e in ipairs(g:edge_list()) do
      if not e.dead and not touched[e] and fit.off_ground(e.attr) then
        local list = sep[e]
        if not list then
          e.attr = Graph.with(flatten(e.attr), { flattened = Graph.NIL })
          touched[e] = true
          change(ctx, "bridges and tunnels over no road made ordinary roads", 1, e)
          did = true
        else
          local L = len(e)
          local first, last = list[1], list[#list]
          local gap_a = first.s - first.clear
          local gap_b = L - last.s - last.clear
          local done = false
          for _, side in ipairs({ { n = e.a, gap = gap_a, cut = first.s + first.clear + 1 },
                                  { n = e.b, gap = gap_b, cut = last.s - last.clear - 1 } }) do
            if not e.dead and side.gap < ramp - 1e-6 and not touched[side.n] then
              local n = side.n
              local f = #n.edges == 2 and (n.edges[1] == e and n.edges[2] or n.edges[1]) or nil
              local usable = f and f ~= e and f.a ~= f.b and other(f, n) ~= other(e, n) and not touched[f]
                and not touched[other(f, n)]
              if usable and fit.off_ground(f.attr) and fit.level(f.attr) == fit.level(e.attr) then
                -- the next piece of the same structure: one road
                local joined = g:join(n, true, len(e) >= len(f) and e.attr or f.attr)
                if joined then
                  change(ctx, "bridge and tunnel pieces joined into one road", 1, { x = n.x, z = n.z, e = joined })
                  touched[joined], touched[joined.a], touched[joined.b] = true, true, true
                  done = true
                end
              elseif usable and not fit.off_ground(f.attr) then
                -- grow: just enough of the approach road (plus 1 m) joins the structure
                local extra = ramp - side.gap + 1
                local Lf = len(f)
                if extra < Lf - opts.min_road_length then
                  g:split_at(f, f.a == n and extra or Lf - extra, 0, "g")
                end
                local joined = g:join(n, true, e.attr)
                if joined then
                  change(ctx, "bridges and tunnels extended over their approach roads (room for the ramps)", 1,
                    { x = n.x, z = n.z, e = joined })
                  touched[joined], touched[joined.a], touched[joined.b] = true, true, true
                  done = true
                end
              elseif not (f and (touched[f] or touched[other(f, n)])) then
                -- no room to grow (a junction or a dead end): the crossing nearest this end
                -- is made at grade
                local at = side.cut
                local pieces = {}
                if at > opts.min_road_length and at < L - opts.min_road_length then
                  local mid, e1, e2 = g:split_at(e, at, 0, "g")
                  local piece = n == e.a and e1 or e2
                  if piece then piece.attr = flatten(piece.attr) end
                  pieces = { e1, e2, mid }
                else
                  e.attr = flatten(e.attr)
                  pieces = { e }
                end
                for _, x in ipairs(pieces) do touched[x] = true end
                touched[e.a], touched[e.b] = true, true
                crossing_flattened = true
                change(ctx, "bridge and tunnel crossings made at grade (no room for the ramps)", 1, e)
                done = true
              end
              if done then
                did = true
                touched[e.a], touched[e.b] = true, true
              end
              done = false
            end
          end
        end
      end
    end
    -- crossings made at grade become junctions now, so the structures do not grow back
    if crossing_flattened then M.crossings(ctx) end
    if not did then break end
    changed = true
  end
  return changed
end

return M
