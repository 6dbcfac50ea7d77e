--- Buildings of psdl.city.blocks (step 4 of `fill`): given footprints, then rows along each
-- run of street edges (corner buildings, bays, gaps, setbacks), each a `Builder:building`.
local core = require "psdl.core"
local styles = require "psdl.styles"
local plan = require "psdl.plan"

local type, error, ipairs, pairs = type, error, ipairs, pairs
local abs, sqrt, floor, max, min, huge = math.abs, math.sqrt, math.floor, math.max, math.min, math.huge
local atan, pi = math.atan, math.pi
local string_format = string.format
local area2, dist, locator, seg_dist = plan.area2, plan.dist, plan.locator, plan.seg_dist
local segs_cross, inset, overlap, bbox = plan.segs_cross, plan.inset, plan.overlap, plan.bbox
local simple = plan.simple

-- Installed by psdl.city.blocks (city/blocks/init.lua): M is the module table, Ctx the
-- context class of one `fill`, private the helpers shared between the blocks files.
return function(M, Ctx, private)

  -- ================================================================ buildings

  -- Runs of consecutive frontage edges of a room polygon, as point chains; a room whose whole
  -- boundary is frontage gives one closed run opened at the middle of its longest edge.
  local function frontage(P, want)
    local n = #P.pts
    local all = true
    for i = 1, n do if not want[P.kinds[i]] then all = false; break end end
    local chains = {}
    if all then
      local best, bl = 1, -1
      for i = 1, n do
        local l = dist(P.pts[i], P.pts[i % n + 1])
        if l > bl then best, bl = i, l end
      end
      local a, c = P.pts[best], P.pts[best % n + 1]
      local mid = { (a[1] + c[1]) / 2, (a[2] + c[2]) / 2, (a[3] + c[3]) / 2 }
      local ch = { mid }
      for k = 1, n do ch[#ch + 1] = P.pts[(best + k - 1) % n + 1] end
      ch[#ch + 1] = mid
      chains[1] = ch
      return chains
    end
    for i = 1, n do
      local prev = (i - 2) % n + 1
      if want[P.kinds[i]] and not want[P.kinds[prev]] then
        local ch = { P.pts[i] }
        local k = i
        while want[P.kinds[k]] do
          k = k % n + 1
          ch[#ch + 1] = P.pts[k]
          if k == i then break end
        end
        chains[#chains + 1] = ch
      end
    end
    return chains
  end

  -- Drops chain points that lie on the line of their neighbours (straight streets sample a
  -- point every few metres; a wall needs one segment there).
  local function simplify(ch)
    local out = { ch[1] }
    for k = 2, #ch - 1 do
      local a, p, c = out[#out], ch[k], ch[k + 1]
      local d = seg_dist(p[1], p[3], a[1], a[3], c[1], c[3])
      if d > 0.03 then out[#out + 1] = p end
    end
    out[#out + 1] = ch[#ch]
    local clean = { out[1] }
    for k = 2, #out do
      if dist(out[k], clean[#clean]) > 0.05 then clean[#clean + 1] = out[k] end
    end
    return clean
  end

  local function rint(rng, lo, hi)
    if hi <= lo then return lo end
    return lo + floor(rng() * (hi - lo + 1))
  end

  local function runi(rng, lo, hi)
    if hi <= lo then return lo end
    return lo + rng() * (hi - lo)
  end

  local function range(v, name)
    if type(v) == "number" then return v, v end
    if type(v) == "table" and type(v[1]) == "number" then return v[1], v[2] or v[1] end
    error(string_format("psdl.city.blocks: buildings.%s: a number or {min, max} expected", name), 0)
  end

  local function pick(rng, list)
    return list[rint(rng, 1, #list)]
  end

  -- Texture names from a style set name, a list or one name.
  local function names(style_set, v, default)
    if v == nil then v = default end
    if type(v) == "string" then
      local s = style_set and style_set[v]
      if type(s) == "table" then return s end
      return { v }
    end
    if type(v) == "table" and #v > 0 then return v end
    return nil
  end

  -- Does footprint fp (retail) stand inside room R, clear of the buildings placed there? If
  -- so it is recorded as placed.
  local function fits(R, fp)
    if #fp < 3 or not simple(fp) then return false end
    if area2(fp) >= 0 then return false end
    local t = inset(fp, 0.05)
    local room = R.pts
    local first_outside = core.first_outside
    if first_outside then -- the builder's own test (Builder:building), stricter than its 0.05 m
      local rf = R.flat
      if not rf then
        rf = {}
        for i, p in ipairs(room) do rf[3 * i - 2], rf[3 * i - 1], rf[3 * i] = p[1], p[2], p[3] end
        rf = core.points(rf) -- converted once for all the room's tests
        R.flat = rf
      end
      local ff = {}
      for i, p in ipairs(fp) do ff[3 * i - 2], ff[3 * i - 1], ff[3 * i] = p[1], 0, p[3] end
      if first_outside(rf, ff, true, 0.01) then return false end
    else -- the same in Lua: the inset footprint's points inside, its edges crossing no room edge
      local within = R.inside
      if not within then within = locator(room); R.inside = within end
      for _, p in ipairs(t) do
        if not within(p[1], p[3]) then return false end
      end
      local bb = bbox(t)
      local bx0, bx1, bz0, bz1 = bb[1], bb[2], bb[3], bb[4]
      local nr, nt = #room, #t
      local a = room[nr]
      for j = 1, nr do
        local c = room[j]
        local ax, az, cx, cz = a[1], a[3], c[1], c[3]
        if not ((ax < bx0 and cx < bx0) or (ax > bx1 and cx > bx1) or (az < bz0 and cz < bz0) or (az > bz1 and cz > bz1)) then
          for i = 1, nt do
            local p, q = t[i], t[i % nt + 1]
            if segs_cross(p[1], p[3], q[1], q[3], ax, az, cx, cz) then return false end
          end
        end
        a = c
      end
    end
    local bb = bbox(t)
    for _, o in ipairs(R.placed) do
      if overlap(t, bb, o.pts, o.bb) then return false end
    end
    R.placed[#R.placed + 1] = { pts = t, bb = bb }
    return true
  end

  -- A footprint (retail) cut back to room R's polygon (retail) and kept `margin` metres off its
  -- edges: clipped by the inner half-plane of every room edge near it (Sutherland-Hodgman). On
  -- a concave room this can cut a little more than needed; `fits` checks the result. Returns
  -- nil when less than `min_share` of the footprint's area (or under 8 m²) is left.
  local FOOTPRINT_MARGIN, FOOTPRINT_MIN_SHARE = 0.1, 0.3
  local function clip_footprint(fp, room, margin)
    local bb = bbox(fp)
    local pad = margin + 0.5
    local out = fp
    local n = #room
    for i = 1, n do
      local a, c = room[i], room[i % n + 1]
      local ex, ez = c[1] - a[1], c[3] - a[3]
      local el = sqrt(ex * ex + ez * ez)
      if el > 1e-9 and not ((a[1] < bb[1] - pad and c[1] < bb[1] - pad) or (a[1] > bb[2] + pad and c[1] > bb[2] + pad)
          or (a[3] < bb[3] - pad and c[3] < bb[3] - pad) or (a[3] > bb[4] + pad and c[3] > bb[4] + pad)) then
        -- signed distance inside (retail: the room lies right of a -> c, cross < 0)
        local function d(p) return -((ex * (p[3] - a[3]) - ez * (p[1] - a[1])) / el) - margin end
        local res = {}
        local m = #out
        for k = 1, m do
          local p, q = out[k], out[k % m + 1]
          local dp, dq = d(p), d(q)
          if dp >= 0 then res[#res + 1] = p end
          if (dp >= 0) ~= (dq >= 0) then
            local t = dp / (dp - dq)
            res[#res + 1] = { p[1] + t * (q[1] - p[1]), p[2], p[3] + t * (q[3] - p[3]) }
          end
        end
        out = res
        if #out < 3 then return nil end
      end
    end
    -- drop repeated points
    local clean = {}
    for _, p in ipairs(out) do
      local l = clean[#clean]
      if not l or abs(l[1] - p[1]) + abs(l[3] - p[3]) > 1e-3 then clean[#clean + 1] = p end
    end
    if #clean > 1 and abs(clean[1][1] - clean[#clean][1]) + abs(clean[1][3] - clean[#clean][3]) <= 1e-3 then
      clean[#clean] = nil
    end
    local a0, a1 = -area2(fp), -area2(clean)
    if #clean < 3 or a1 < 16 or a1 < FOOTPRINT_MIN_SHARE * a0 then return nil end
    return clean
  end

  -- Lays buildings out along one frontage chain of a room.
  local function layout(ctx, R, chain, bs)
    local rng = ctx.rng
    local Q = simplify(chain)
    local m = #Q
    if m < 2 then return end
    local seg, S = {}, 0
    for k = 1, m - 1 do
      local dx, dz = Q[k + 1][1] - Q[k][1], Q[k + 1][3] - Q[k][3]
      local l = sqrt(dx * dx + dz * dz)
      seg[k] = { tx = dx / l, tz = dz / l, len = l, s0 = S }
      S = S + l
    end
    local L = S
    -- mitre vectors: the inward offset of chain point k by o is Q[k] + mit[k] * o
    local mit = {}
    for k = 1, m do
      local a, c = seg[k - 1] or seg[k], seg[k] or seg[k - 1]
      local nax, naz, ncx, ncz = a.tz, -a.tx, c.tz, -c.tx
      local sx, sz = nax + ncx, naz + ncz
      local sl = sqrt(sx * sx + sz * sz)
      if sl < 1e-9 then mit[k] = { ncx, ncz }
      else
        sx, sz = sx / sl, sz / sl
        local d = sx * ncx + sz * ncz
        if d < 0.3 then d = 0.3 end
        mit[k] = { sx / d, sz / d }
      end
    end
    local sb = bs.setback
    local dmin, dmax = bs.depth[1], bs.depth[2]
    local wmin, wmax = bs.width[1], bs.width[2]
    local gmin, gmax = bs.gap[1], bs.gap[2]
    local bay = bs.bay_width
    local minw = max(4, bay)
    local cm = 0.3
    -- Around chain point k, the stretch [S_k - before, S_k + after] where a wall square to
    -- the street at depth `o` would not meet the offset lines cleanly.
    local function reach(k, o)
      local before = max(0, -o * (mit[k][1] * seg[k - 1].tx + mit[k][2] * seg[k - 1].tz), 0)
      local after = max(0, o * (mit[k][1] * seg[k].tx + mit[k][2] * seg[k].tz))
      -- the setback line too
      before = max(before, -sb * (mit[k][1] * seg[k - 1].tx + mit[k][2] * seg[k - 1].tz))
      after = max(after, sb * (mit[k][1] * seg[k].tx + mit[k][2] * seg[k].tz))
      return before + cm, after + cm
    end
    -- sharp bends (corners) get a corner building; regular buildings never end near one
    local corners, forbid = {}, {}
    for k = 2, m - 1 do
      local a, c = seg[k - 1], seg[k]
      local turn = abs(atan(a.tx * c.tz - a.tz * c.tx, a.tx * c.tx + a.tz * c.tz))
      if turn > 25 * pi / 180 then
        corners[#corners + 1] = k
        local bf, af = reach(k, sb + dmax)
        forbid[#forbid + 1] = { seg[k].s0 - bf, seg[k].s0 + af, k = k }
      end
    end
    local function allowed(s)
      if s < -1e-9 or s > L + 1e-9 then return false end
      for _, f in ipairs(forbid) do if s > f[1] and s < f[2] then return false end end
      return true
    end
    local function snap_back(s, lo)
      for _ = 1, #forbid + 1 do
        local moved = false
        for _, f in ipairs(forbid) do
          if s > f[1] and s < f[2] then s = f[1]; moved = true end
        end
        if not moved then break end
      end
      if s < lo then return nil end
      return s
    end
    local function snap_fwd(s, hi)
      for _ = 1, #forbid + 1 do
        local moved = false
        for _, f in ipairs(forbid) do
          if s > f[1] and s < f[2] then s = f[2]; moved = true end
        end
        if not moved then break end
      end
      if s > hi then return nil end
      return s
    end
    local function locate(s) -- the first segment ending at or after s (ends never decrease): bisection
      local lo, hi = 1, m - 1
      while lo < hi do
        local mid = (lo + hi) // 2
        local g = seg[mid]
        if s <= g.s0 + g.len + 1e-9 then hi = mid else lo = mid + 1 end
      end
      return lo, s - seg[lo].s0
    end
    -- The point of a wall square to the street at station s, o metres in; near a bend, where
    -- that square line would leave the offset line's segment, the bend's mitre point instead,
    -- so that walls at increasing stations never cross (gentle curves need no gap).
    local function foot(s, o)
      local k, u = locate(s)
      local g = seg[k]
      local lo = o * (mit[k][1] * g.tx + mit[k][2] * g.tz)
      local hi = g.len + o * (mit[k + 1][1] * g.tx + mit[k + 1][2] * g.tz)
      if u < lo then return { Q[k][1] + mit[k][1] * o, 0, Q[k][3] + mit[k][2] * o } end
      if u > hi then return { Q[k + 1][1] + mit[k + 1][1] * o, 0, Q[k + 1][3] + mit[k + 1][2] * o } end
      return { Q[k][1] + g.tx * u + g.tz * o, 0, Q[k][3] + g.tz * u - g.tx * o }
    end
    local function footprint(s0, s1, D)
      local front, back = { foot(s0, sb) }, { foot(s0, sb + D) }
      for k = 2, m - 1 do
        local sk = seg[k].s0
        if sk > s0 + 1e-6 and sk < s1 - 1e-6 then
          front[#front + 1] = { Q[k][1] + mit[k][1] * sb, 0, Q[k][3] + mit[k][2] * sb }
          back[#back + 1] = { Q[k][1] + mit[k][1] * (sb + D), 0, Q[k][3] + mit[k][2] * (sb + D) }
        end
      end
      front[#front + 1] = foot(s1, sb)
      back[#back + 1] = foot(s1, sb + D)
      for i = #back, 1, -1 do front[#front + 1] = back[i] end
      local out = {}
      for _, p in ipairs(front) do
        local q = out[#out]
        if not q or dist(p, q) > 0.05 then out[#out + 1] = p end
      end
      while #out > 1 and dist(out[1], out[#out]) <= 0.05 do out[#out] = nil end
      return out
    end
    -- the ends pulled in when a building does not fit (a slanted room edge at a row's end)
    local TRIMS = { { 0, 0 }, { 2, 0 }, { 0, 2 }, { 4, 0 }, { 0, 4 }, { 4, 4 }, { 7, 0 }, { 0, 7 } }
    local DEPTHS = { 1, 0.65, 0.4 } -- the depth tried, as shares of D
    local function place(s0, s1, D)
      if s1 - s0 < minw then return false end
      local fp
      for _, tr in ipairs(TRIMS) do
        local a, c = s0 + tr[1], s1 - tr[2]
        if c - a < minw then break end
        if tr[1] == 0 or allowed(a) then
          if tr[2] == 0 or allowed(c) then
            for _, f in ipairs(DEPTHS) do
              local d = D * f
              if d >= 3 then
                local cand = footprint(a, c, d)
                if fits(R, cand) then fp = cand; break end
              end
            end
          end
        end
        if fp then break end
      end
      if not fp then return false end
      ctx:building(R, fp, bs)
      return true
    end
    local function width()
      local nb = rint(rng, max(1, floor(wmin / bay + 0.5)), max(1, floor(wmax / bay + 0.5)))
      return max(minw, nb * bay)
    end
    local endm = max(0.5, gmin / 2)
    -- 1. corner buildings: at every bend of more than 25 degrees, a building wrapping it
    local taken = {} -- occupied stretches {s0, s1}, in chain order
    local lo_limit = endm
    for ci, k in ipairs(corners) do
      local D = runi(rng, dmin, dmax)
      local bf, af = reach(k, sb + D)
      local f0, f1 = seg[k].s0 - bf, seg[k].s0 + af
      local nxt = corners[ci + 1]
      local hi_limit = L - endm
      if nxt then
        local nbf = reach(nxt, sb + dmax)
        hi_limit = (f1 + seg[nxt].s0 - nbf) / 2 - gmin / 2
      end
      local arm_a, arm_b = runi(rng, 2, max(2, wmax / 2)), runi(rng, 2, max(2, wmax / 2))
      local c0 = max(f0 - arm_a, lo_limit)
      local c1 = min(f1 + arm_b, hi_limit)
      c0 = c0 < f0 and snap_back(c0, lo_limit) or nil
      c1 = c1 > f1 and snap_fwd(c1, hi_limit) or nil
      if c0 and c1 and c0 < f0 and c1 > f1 then
        -- a wall square to the street at depth D must clear every other bend inside
        if place(c0, c1, D) then
          taken[#taken + 1] = { c0, c1 }
          lo_limit = c1 + gmin
        end
      end
    end
    -- 2. rows between the corner buildings (and the chain's ends)
    local runs = {}
    local prev = endm - gmin
    for _, t in ipairs(taken) do
      runs[#runs + 1] = { prev + runi(rng, gmin, gmax), t[1] - runi(rng, gmin, gmax) }
      prev = t[2]
    end
    runs[#runs + 1] = { prev + runi(rng, gmin, gmax), L - endm }
    if #taken == 0 then runs[1][1] = endm end
    for _, run in ipairs(runs) do
      local r0, r1 = run[1], run[2]
      local s = snap_fwd(r0, r1)
      local guard = 0
      while s and r1 - s >= minw and guard < 500 do
        guard = guard + 1
        local e = s + width()
        if r1 - e < max(minw, wmin * 0.6) + gmin then e = r1 end -- no room for another: take the rest
        if e - s > wmax * 1.6 then e = s + wmax end
        if not allowed(e) then e = snap_back(e, s + minw) or snap_fwd(e, r1) end
        if not e then break end
        local D = runi(rng, dmin, dmax)
        place(s, e, D)
        s = snap_fwd(e + runi(rng, gmin, gmax), r1)
      end
    end
  end

  -- A building on footprint fp (retail, plan) in room R.
  function Ctx:building(R, fp, bs, given)
    local rng, b = self.rng, self.b
    local outline = {}
    local base = -huge
    for i, p in ipairs(fp) do
      local y = floor(R.ground(p[1], p[3]) * 1000 + 0.5) / 1000
      outline[i] = { p[1], y, p[3] }
      if y > base then base = y end
    end
    local floors = rint(rng, bs.floors[1], bs.floors[2])
    local fh = bs.floor_height
    local top
    if given then -- a footprint with its own levels and / or height
      local lv, h = given.levels, given.height
      if type(h) == "number" and h > 0 then
        floors = (type(lv) == "number" and lv >= 1) and floor(lv + 0.5) or max(1, floor(h / fh + 0.5))
        fh = h / floors
        top = base + h
      elseif type(lv) == "number" and lv >= 1 then
        floors = floor(lv + 0.5)
      end
    end
    -- under a bridge deck: no taller than the clearance (less a gap for the deck), or none
    local decks = self.decks
    if decks then
      local bb = bbox(fp)
      local clear = huge
      for _, d in ipairs(decks) do
        if overlap(fp, bb, d.pts, d.bb) then clear = min(clear, d.low - base - M.DECK_GAP) end
      end
      if clear < huge then
        if clear < fh then
          self.report.under_decks = (self.report.under_decks or 0) + 1
          if given then given.why = "under a bridge deck" end
          return false
        end
        if (top or base + floors * fh) > base + clear then
          floors = max(1, min(floors, floor(clear / fh)))
          top = nil
          if given then top = base + floors * fh end
        end
      end
    end
    local facade = pick(rng, bs.facades)
    local o = { outline = outline, floors = floors, floor_height = fh, bay_width = bs.bay_width, top = top,
                facade = facade, roof = pick(rng, bs.roofs), sliver = bs.sliver, sliver_density = bs.sliver_density }
    if bs.ground_facades and floors >= 2 then
      o.ground_height = fh
      o.ground = pick(rng, bs.ground_facades)
      o.floors = floors - 1
    end
    local st = b:building(R.room, o)
    self.report.buildings = self.report.buildings + 1
    local rec = { room = R.room, outline = outline, base = st.base, top = st.top, floors = floors,
                  facades = st.facades, slivers = st.slivers, footprint = given and given.index or nil }
    self.report.building_list[#self.report.building_list + 1] = rec
    R.nbuildings = R.nbuildings + 1
    return true
  end

  -- Building options: defaults, the fill's, a face override's.
  local function building_spec(ctx, over)
    local d = M.DEFAULTS.buildings
    local src = over
    local o = {}
    for k, v in pairs(d) do o[k] = v end
    for k, v in pairs(ctx.buildings_base or {}) do o[k] = v end
    if type(src) == "table" then for k, v in pairs(src) do o[k] = v end end
    local style = ctx.style
    local f1, f2 = range(o.floors, "floors")
    local g1, g2 = range(o.gap, "gap")
    local d1, d2 = range(o.depth, "depth")
    local w1, w2 = range(o.width, "width")
    if f1 < 1 or f2 < f1 then error("psdl.city.blocks: buildings.floors: 1 <= min <= max expected", 0) end
    if d1 <= 0 or d2 < d1 then error("psdl.city.blocks: buildings.depth: 0 < min <= max expected", 0) end
    if w1 <= 0 or w2 < w1 then error("psdl.city.blocks: buildings.width: 0 < min <= max expected", 0) end
    if g1 < 0 or g2 < g1 then error("psdl.city.blocks: buildings.gap: 0 <= min <= max expected", 0) end
    local facades = names(style.facades, o.facades, "upper")
    if not facades then error("psdl.city.blocks: buildings.facades: a facade set name, a texture name or a list expected", 0) end
    local gf
    if o.ground_floor then
      gf = names(style.facades, o.ground_floor == true and "ground" or o.ground_floor, "ground")
    end
    -- texture group handles, resolved once (the builder takes them as they are)
    local b = ctx.b
    local function groups(list)
      if not list then return nil end
      local out = {}
      for i, nm in ipairs(list) do out[i] = b:texture(nm) end
      return out
    end
    return {
      floors = { f1, f2 }, floor_height = o.floor_height, bay_width = o.bay_width, setback = o.setback or 0,
      gap = { g1, g2 }, depth = { d1, d2 }, width = { w1, w2 }, facades = groups(facades), ground_facades = groups(gf),
      roofs = groups(names(nil, o.roofs, styles.roofs(style)) or { "s_concrt" }),
      sliver = b:texture(o.sliver or styles.sliver(style)),
      sliver_density = o.sliver_density,
    }
  end

  return {
    frontage = frontage,
    layout = layout,
    fits = fits,
    clip_footprint = clip_footprint,
    building_spec = building_spec,
    FOOTPRINT_MARGIN = FOOTPRINT_MARGIN,
    FOOTPRINT_MIN_SHARE = FOOTPRINT_MIN_SHARE,
  }
end
