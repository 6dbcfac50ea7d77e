--- Tunnels and bridges of a `psdl.city` (city-layout.md §4): the defaults of their options,
-- the height profile of a tunnel or bridge piece (ramps at the ends at grade, kept clear of
-- the roads at grade it passes over or under), the cut of a piece into ramps and bore or deck,
-- and the builder options of those parts (bore, cut walls, deck and ramp railings) and of an
-- underground intersection.
--
-- Internal to `psdl.city` (`psdl.city.road` and `psdl.city.intersection` use it).
-- @module psdl.city.tunnel

local geom = require "psdl.geom"
local network = require "psdl.city.network"
local styles = require "psdl.styles"
local check = require "psdl.check"

local type, error, ipairs, pairs, tostring = type, error, ipairs, pairs, tostring
local sqrt, abs, max, huge = math.sqrt, math.abs, math.max, math.huge
local string_format = string.format
local seg_closest = network.seg_closest

local M = {}

--- Defaults of the tunnel and bridge options (metres).
M.TUNNEL = { depth = 9, ramp = 60, height = 7.0, height2 = 7.0, ceiling = "curved", wall_height = 5.0,
             wall_height2 = 2.0 }
M.BRIDGE = { height = 8, ramp = 60, railing_height = 1.5, railing_height2 = 1.0 }

--- Deck height added per layer above the first (metres): a layer-2 deck that crosses a
-- layer-1 deck keeps above it the clearance the layer-1 deck keeps above the ground (8 m deck,
-- its warp band from 7 m, city-layout.md §4.1), so their warp rooms never share a height.
M.LAYER_STEP = 7

--- Highest bridge deck and deepest tunnel bore a road may ask for (metres above / below its
-- end nodes; `City:road` refuses more): at the steepest slope the city makes a ramp itself
-- (40 %: 2.5 times the height, docs/city.md "Tunnels and bridges") 100 m need 250 m of ramp
-- at each end, a road half a kilometre long; the game's own bridges and tunnels stay within
-- a few tens of metres.
M.MAX_LEVEL = 100

-- The options of a road's `tunnel` and `bridge` tables, and which are lengths (m).
local OPTS = {
  tunnel = { depth = "level", ramp = "ramp", ceiling = true, height = "size", height2 = "size", textures = true,
             walls = true, wall_height = "size", wall_height2 = "size" },
  bridge = { height = "level", ramp = "ramp", railing = true, ramp_railing = true, railing_height = "size",
             railing_height2 = "size" },
}

--- What is wrong with a road's tunnel or bridge table, or nil (for `City:road`'s argument
-- error): an unknown key; `depth` / `height` (the level) outside 0..`MAX_LEVEL`; `ramp`
-- outside 0..max_coordinate; a wall or railing height outside 0..`MAX_LEVEL` (metres).
-- @tparam table t the table @tparam string what "tunnel" or "bridge"
-- @tparam number max_coordinate the longest ramp (`psdl.city.MAX_COORDINATE`)
-- @treturn string|nil "bridge.height: ..."
function M.options_problem(t, what, max_coordinate)
  local keys = OPTS[what]
  for k, v in pairs(t) do
    local kind = keys[k]
    if not kind then return string_format("%s: unknown option '%s'", what, tostring(k)) end
    local name = what .. "." .. k
    local m
    if kind == "level" or kind == "size" then
      m = check.num_problem(v, name, "nonneg", 0, M.MAX_LEVEL)
    elseif kind == "ramp" then
      m = check.num_problem(v, name, "nonneg", 0, max_coordinate)
    end
    if m then return m end
  end
end

--- Deck height of a bridge at an OSM-style `layer` (metres): `BRIDGE.height` for layer 1
-- (and for a missing, zero or negative layer), `LAYER_STEP` more for each layer above, at
-- most `MAX_LEVEL` (layer 14 and up).
-- @tparam[opt] number layer
-- @treturn number metres
function M.deck_height(layer)
  local l = math.floor(tonumber(layer) or 1)
  if l < 1 then l = 1 end
  return math.min(M.BRIDGE.height + (l - 1) * M.LAYER_STEP, M.MAX_LEVEL)
end

-- Height profile of a tunnel or bridge piece: y at plan distance s along a piece of length
-- L, given the levels at the ends of the middle part and the ramp lengths.
local function piece_levels(city, piece, y0, y1, L, pts, acc)
  local r = piece.road
  local t = r.tunnel or r.bridge
  if not t then return nil end
  local is_tunnel = r.tunnel ~= nil
  local D = is_tunnel and M.TUNNEL or M.BRIDGE
  local depth = is_tunnel and (t.depth or D.depth) or (t.height or D.height)
  local sign = is_tunnel and -1 or 1
  local from, to = piece.from, piece.to
  -- a ramp at an end whose node is at grade (not underground / elevated)
  local special_from = is_tunnel and from.underground or (not is_tunnel and from.elevated)
  local special_to = is_tunnel and to.underground or (not is_tunnel and to.elevated)
  local ramp = t.ramp or D.ramp
  if depth == 0 then ramp = 0 end
  local ra = special_from and 0 or ramp
  local rb = special_to and 0 or ramp
  -- roads at grade passing under a bridge or over a tunnel: the ramps stop short of them
  -- (shortened down to a 40 % slope when the road did not set `ramp`)
  for _, c in ipairs(pts and r.crossings or {}) do
    local best, sc = huge, nil
    for i = 1, #pts - 1 do
      local d, t = seg_closest(c.x, c.z, { pts[i][1], pts[i][3] }, { pts[i + 1][1], pts[i + 1][3] })
      if d < best then best, sc = d, acc[i] + t * (acc[i + 1] - acc[i]) end
    end
    if sc and best < c.half + 5 then
      local lo, hi = sc - c.half, L - (sc + c.half)
      local least = 2.5 * abs(depth)
      local function fit(cur, room)
        if cur <= room or cur == 0 then return cur end
        if t.ramp == nil and room >= least then return room end
        error(string_format("%s: its %s ramp would reach %s where it passes at (%.1f, %.1f): %.1f m of ramp fit "
          .. "before it, %g m are needed%s", network.road_label(r), is_tunnel and "tunnel" or "bridge", network.road_ref(c.road),
          c.x, c.z, max(0, room), t.ramp or least, t.ramp and " (ramp = ... shorter)" or
          " (a lower height or depth, or move the crossing nearer the middle)"), 0)
      end
      ra, rb = fit(ra, lo), fit(rb, hi)
    end
  end
  if ra + rb > L - 10 and ra + rb > 0 then
    error(string_format("%s: its %s ramps (%g m each) need more than its %.1f m of length (ramp = ... shorter, "
      .. "or a longer road)", network.road_label(r), is_tunnel and "tunnel" or "bridge", ramp, L), 0)
  end
  local la = special_from and y0 or (y0 + sign * depth)
  local lb = special_to and y1 or (y1 + sign * depth)
  return { ra = ra, rb = rb, la = la, lb = lb, y0 = y0, y1 = y1, tunnel = is_tunnel, opts = t }
end

-- Inserts a sample at plan distance s into a point list with cumulative distances; returns
-- its index.
local function insert_at(pts, acc, s)
  for i = 2, #pts do
    if acc[i] >= s - 1e-6 then
      if abs(acc[i] - s) < 0.5 then return i end
      if abs(acc[i - 1] - s) < 0.5 then return i - 1 end
      local t = (s - acc[i - 1]) / (acc[i] - acc[i - 1])
      local p = geom.lerp(pts[i - 1], pts[i], t)
      table.insert(pts, i, p)
      table.insert(acc, i, s)
      return i
    end
  end
  return #pts
end

local function cumulative(pts)
  local acc = { 0 }
  for i = 2, #pts do
    local dx, dz = pts[i][1] - pts[i - 1][1], pts[i][3] - pts[i - 1][3]
    acc[i] = acc[i - 1] + sqrt(dx * dx + dz * dz)
  end
  return acc
end

--- The sub-pieces of one piece of a run, appended to `subs`: the piece as one "road", or a
-- tunnel piece as "cut" ramps around a "bore", a bridge piece as "ramp"s around a "deck",
-- with the heights of the ramps and the middle part set (`piece_levels`).
-- @tparam table city
-- @tparam table p the piece `{road, forward, from, to}`
-- @tparam table pts its samples of the run's centre line (`{x, y, z}`, a fresh list)
-- @tparam table subs `{ {pts, kind, piece, length, levels}, ... }`, appended to
function M.sub_pieces(city, p, pts, subs)
  local acc = cumulative(pts)
  local L = acc[#acc]
  local lv = piece_levels(city, p, pts[1][2], pts[#pts][2], L, pts, acc)
  if not lv then
    subs[#subs + 1] = { pts = pts, kind = "road", piece = p, length = L }
  else
    local ia = lv.ra > 0 and insert_at(pts, acc, lv.ra) or 1
    local ib = lv.rb > 0 and insert_at(pts, acc, L - lv.rb) or #pts
    -- a ramp of under half a metre snaps to its end point (insert_at): no ramp, as ramp = 0
    -- (its slope would divide by a length of 0)
    if ia == 1 then lv.ra = 0 end
    if ib == #pts then lv.rb = 0 end
    -- heights: ramps linear from the end's grade to the level, the middle linear between levels
    local sa, sb = acc[ia], acc[ib]
    for i = 1, #pts do
      local s, y = acc[i], nil
      if i <= ia and lv.ra > 0 then y = lv.y0 + (lv.la - lv.y0) * (s / sa)
      elseif i >= ib and lv.rb > 0 then y = lv.y1 + (lv.lb - lv.y1) * ((L - s) / (L - sb))
      else y = lv.la + (lv.lb - lv.la) * ((s - sa) / max(1e-9, sb - sa)) end
      local q = pts[i]
      pts[i] = { q[1], y, q[3] }
    end
    local mid = lv.tunnel and "bore" or "deck"
    local ramp = lv.tunnel and "cut" or "ramp"
    local function sub(i0, i1, kind)
      local s = {}
      for i = i0, i1 do s[#s + 1] = pts[i] end
      subs[#subs + 1] = { pts = s, kind = kind, piece = p, length = acc[i1] - acc[i0], levels = lv }
    end
    if ia > 1 then sub(1, ia, ramp) end
    sub(ia, ib, mid)
    if ib < #pts then sub(ib, #pts, ramp) end
  end
end

--- The builder options of a tunnel or bridge part of a run (`builder.trusted.street`'s
-- last four arguments).
-- @tparam table s a sub-piece (`kind`: "bore", "cut", "deck", "ramp" or "road", `levels`)
-- @tparam table style the city's texture style
-- @return `tunnel` (options of `Room:tunnel`), `railing` (the same for a railing), and the
-- room's `tunnel` and `bridge` (each nil when not set)
function M.street_parts(s, style)
  local kind = s.kind
  if kind == "road" then return nil, nil, nil, nil end
  local lv = s.levels
  local t = type(lv.opts) == "table" and lv.opts or {}
  if kind == "bore" then
    return { textures = t.textures or styles.tunnel(style, "bore"),
             ceiling = t.ceiling or M.TUNNEL.ceiling, height = t.height or M.TUNNEL.height,
             height2 = t.height2 or M.TUNNEL.height2 }, nil, true, nil
  elseif kind == "cut" then
    local walls = t.walls or styles.tunnel(style, "wall")
    return { textures = walls, wall = true, height = t.wall_height or M.TUNNEL.wall_height,
             height2 = t.wall_height2 or M.TUNNEL.wall_height2 }, nil, false, nil
  elseif kind == "deck" then
    return nil, { textures = t.railing or styles.tunnel(style, "bridge_railing"),
                  height = t.railing_height or M.BRIDGE.railing_height,
                  height2 = t.railing_height2 or M.BRIDGE.railing_height2 }, nil, true
  elseif kind == "ramp" then
    return nil, { textures = t.ramp_railing or styles.tunnel(style, "railing"), height = 1.0, height2 = 1.0 }, nil, nil
  end
  return nil, nil, nil, nil
end

--- The tunnel options of an underground intersection (`Builder:intersection`'s `tunnel`),
-- nil for one at grade.
-- @tparam table city
-- @tparam table n the node (`n.underground`, `n.opts.tunnel`)
function M.junction_options(city, n)
  local tunnel
  if n.underground then
    local t = type(n.opts.tunnel) == "table" and n.opts.tunnel or {}
    tunnel = { textures = t.textures or styles.tunnel(city.style, "bore"),
               height = t.height or M.TUNNEL.height, height2 = t.height2 or M.TUNNEL.height2,
               ceiling = t.ceiling ~= false, walls = t.walls or "outside" }
  end
  return tunnel
end

return M
