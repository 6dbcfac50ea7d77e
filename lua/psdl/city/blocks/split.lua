--- Splitting for psdl.city.blocks (step 2 of `fill`): chords across a face's dominant
-- direction, holes bridged to the outer ring, convex pieces as the fallback.
local core = require "psdl.core"
local plan = require "psdl.plan"

local error, ipairs, tostring = error, ipairs, tostring
local string_format, table_move, table_unpack = string.format, table.move, table.unpack
local area2, inside = plan.area2, plan.inside
local split_chord = core.split_chord_refs
local refs_area2, refs_inside = core.refs_area2, core.refs_inside

-- Installed by psdl.city.blocks (city/blocks/init.lua): M is the module table, Ctx the
-- context class of one `fill`, private the helpers shared between the blocks files.
return function(M, Ctx, private)
  local poly, push = private.poly, private.push

  -- ================================================================ splitting

  -- Cuts polygon P along the chord i-j (with points every `step` m): two polygons, A = P's
  -- points i .. j then the chord's back to i, B = P's points j .. n, 1 .. i then the chord's
  -- towards j (the runs copied by table.move; references and kinds only, blocks/init.lua).
  local function cut(ctx, P, i, j, step)
    if i > j then i, j = j, i end
    local refs, kinds = P.refs, P.kinds
    local n = #refs
    local mr = ctx:chord_refs(refs[i], refs[j], step)
    local nm = #mr
    -- (the copies made at their size, not grown)
    local ar, ak = { table_unpack(refs, i, j) }, { table_unpack(kinds, i, j) }
    local na = j - i + 1
    ak[na] = "cut"
    for m = 1, nm do
      local k = na + m
      ar[k], ak[k] = mr[nm + 1 - m], "cut"
    end
    local br, bk = { table_unpack(refs, j, n) }, { table_unpack(kinds, j, n) }
    local nb1 = n - j + 1
    table_move(refs, 1, i, nb1 + 1, br)
    table_move(kinds, 1, i, nb1 + 1, bk)
    local nb = nb1 + i
    bk[nb] = "cut"
    for m = 1, nm do
      local k = nb + m
      br[k], bk[k] = mr[m], "cut"
    end
    return poly(P.pool, ar, ak), poly(P.pool, br, bk)
  end

  -- Splits P recursively until it fits the limits; appends the pieces to out. The test of the
  -- limits and the choice of chord are C's (psdl.core.split_chord, src/psdl_split.c): the
  -- best chord between two vertices near the half-area line across the polygon's dominant
  -- direction (a street grid's, else its major axis), clear of the given footprints when it
  -- can be (`ctx.split_obstacles`).
  local function split(ctx, P, lim, out, depth)
    depth = depth or 0
    local i, j = split_chord(P.pool, P.refs, lim.max_area, lim.max_points, lim.max_length, depth < 24,
      ctx.split_obstacles)
    if j then
      local A, B = cut(ctx, P, i, j, lim.step)
      split(ctx, A, lim, out, depth + 1)
      split(ctx, B, lim, out, depth + 1)
      return
    end
    if i == false then
      local n = #P.refs
      if n > 250 then
        error(string_format("psdl.city.blocks: a block of %d boundary points near (%.1f, %.1f) cannot be cut into "
          .. "rooms of at most 255 perimeter points", n, P.pts[1][1], P.pts[1][3]), 0)
      end
      ctx.unsplit = (ctx.unsplit or 0) + 1
    end
    out[#out + 1] = P
  end

  -- Cuts a polygon with holes into simple polygons: each hole is joined to the outer ring
  -- by two chords (from its extreme points along x), which splits the region in two.
  local function bridge_holes(ctx, outer, holes, step, out)
    if #holes == 0 then out[#out + 1] = outer; return end
    -- the region in C for the chord tests (psdl.core.region, src/psdl_region.c: is the chord
    -- free of every ring's edges but those at its ends, psdl.plan.segs_meet, and its
    -- midpoint inside the outer ring and outside the holes?)
    local ring_pts = { outer.pts }
    for _, h in ipairs(holes) do ring_pts[#ring_pts + 1] = h.pts end
    local region = core.region(ring_pts)
    -- the first hole (in order) whose two extreme points both see the outer ring: another
    -- hole may hide the outer ring from the first one's
    local H, rest, hp, lo, hi, w1, w2
    -- the outer point hole point hk of hole hi_ is joined to (psdl_region_target, in C): the
    -- nearest whose chord is in the outer ring's angle there and clear of every ring, first at
    -- least 10 degrees off the edges at both ends (a chord almost along an edge cuts off a
    -- sliver), then any; the second chord also avoids the first one's outer point and crossing
    local function target(hi_, hk, avoid, other_hk)
      return region:target(hi_, hk, avoid, other_hk)
    end
    for hi_ = 1, #holes do
      H = holes[hi_]
      hp = H.pts
      lo, hi = 1, 1
      for k = 2, #hp do
        if hp[k][1] < hp[lo][1] or (hp[k][1] == hp[lo][1] and hp[k][3] < hp[lo][3]) then lo = k end
        if hp[k][1] > hp[hi][1] or (hp[k][1] == hp[hi][1] and hp[k][3] > hp[hi][3]) then hi = k end
      end
      w1 = target(hi_, lo)
      w2 = w1 and target(hi_, hi, w1, lo)
      if w1 and w2 and lo ~= hi then
        rest = {}
        for k = 1, #holes do if k ~= hi_ then rest[#rest + 1] = holes[k] end end
        break
      end
    end
    if not rest then
      error("psdl.city.blocks: cannot join a hole of the network outline to the ground around it", 0)
    end
    local c1r = ctx:chord_refs(outer.refs[w1], H.refs[lo], step) -- w1 -> h(lo)
    local c2r = ctx:chord_refs(outer.refs[w2], H.refs[hi], step) -- w2 -> h(hi)
    local no, nh = #outer.refs, #hp
    -- appends ring R's points a .. b (cyclic) to refs, kinds from w on, the last one's edge a
    -- cut; returns the new count
    local function run(R, n, a, b, refs, kinds, w)
      local rr, rk = R.refs, R.kinds
      if a <= b then
        table_move(rr, a, b, w + 1, refs)
        table_move(rk, a, b, w + 1, kinds)
        w = w + b - a + 1
      else
        table_move(rr, a, n, w + 1, refs)
        table_move(rk, a, n, w + 1, kinds)
        w = w + n - a + 1
        table_move(rr, 1, b, w + 1, refs)
        table_move(rk, 1, b, w + 1, kinds)
        w = w + b
      end
      kinds[w] = "cut"
      return w
    end
    local function piece(wa, wb, ca, cb, ha, hb)
      -- outer wa -> wb, chord wb -> h(hb) (cb forward), hole hb -> ha, chord h(ha) -> wa (ca reversed)
      local refs, kinds = {}, {}
      local w = run(outer, no, wa, wb, refs, kinds, 0)
      for m = 1, #cb do refs[w + m], kinds[w + m] = cb[m], "cut" end
      w = run(H, nh, hb, ha, refs, kinds, w + #cb)
      local nc = #ca
      for m = 1, nc do refs[w + m], kinds[w + m] = ca[nc + 1 - m], "cut" end
      return poly(outer.pool, refs, kinds)
    end
    local X = piece(w1, w2, c1r, c2r, lo, hi)
    local Y = piece(w2, w1, c2r, c1r, hi, lo)
    local pool = outer.pool
    if refs_area2(pool, X.refs) >= 0 or refs_area2(pool, Y.refs) >= 0 then
      error("psdl.city.blocks: joining a hole of the network outline gave a piece wound the wrong way", 0)
    end
    local hx, hy = {}, {}
    for _, h in ipairs(rest) do
      local x, _, z = pool:get(h.refs[1]) -- (h.pts[1]: the pool's point)
      if refs_inside(pool, X.refs, x, z) then hx[#hx + 1] = h else hy[#hy + 1] = h end
    end
    bridge_holes(ctx, X, hx, step, out)
    bridge_holes(ctx, Y, hy, step, out)
  end

  -- The kernel's convex pieces (Hertel-Mehlhorn, no added point) of a region with holes, as
  -- polygons: the fallback when joining holes or cutting fails.
  local function convex_pieces(F, holes)
    local refs, ekind, starts = {}, {}, {}
    local function add_ring(Q)
      local n = #Q.refs
      for i = 1, n do
        refs[#refs + 1] = Q.refs[i]
        ekind[Q.refs[i] * 4294967296 + Q.refs[i % n + 1]] = Q.kinds[i]
      end
    end
    add_ring(F)
    for _, H in ipairs(holes) do
      starts[#starts + 1] = #refs + 1
      add_ring(H)
    end
    local pool = F.pool
    local flat = pool:points(refs)
    local idx = core.fans(flat, #starts > 0 and starts or nil)
    local n = #refs
    local out = {}
    for _, f0 in ipairs(idx) do
      -- the piece's ring: the fan's points, or its rim when the hub is an added point
      local f = f0
      if f0[1] > n then
        f = {}
        for j = 2, #f0 - 1 do f[#f + 1] = f0[j] end
      end
      local Q = poly(pool)
      local m = #f
      for j = 1, m do
        local a, c = refs[f[j]], refs[f[j % m + 1]]
        push(Q, a, ekind[a * 4294967296 + c] or "cut")
      end
      if area2(Q.pts) > 0 then -- keep retail winding
        local R = poly(pool)
        for j = m, 1, -1 do push(R, Q.refs[j], Q.kinds[(j - 2) % m + 1]) end
        Q = R
      end
      out[#out + 1] = Q
    end
    return out
  end

  -- Simple polygons within the limits covering a region (outer ring and holes): holes joined
  -- by chords, then cut; when that fails, the kernel's convex pieces, cut where they can be.
  local function region_pieces(ctx, F, holes, lim, what)
    local ok, res = false, "convex pieces asked for"
    if ctx.mode ~= "convex" then ok, res = pcall(function()
      local simple_pieces, polys = {}, {}
      bridge_holes(ctx, F, holes, lim.step, simple_pieces)
      for _, S in ipairs(simple_pieces) do split(ctx, S, lim, polys) end
      return polys
    end) end
    if ok then return res end
    local w = ctx.report.warnings
    if ctx.mode ~= "convex" then w[#w + 1] = string_format("%s: %s; convex pieces used instead", what, tostring(res):gsub("^psdl%.city%.blocks: ", "")) end
    local polys = {}
    for _, Q in ipairs(convex_pieces(F, holes)) do
      local part = {}
      if pcall(split, ctx, Q, lim, part) then
        for _, x in ipairs(part) do polys[#polys + 1] = x end
      else
        polys[#polys + 1] = Q
      end
    end
    return polys
  end

  return {
    region_pieces = region_pieces,
    convex_pieces = convex_pieces,
    split = split,
  }
end
