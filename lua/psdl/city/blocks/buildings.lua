--- Buildings of psdl.city.blocks (step 4 of `fill`): given footprints, then rows along each
-- run of street edges (corner buildings, bays, gaps, setbacks), each a `Builder:building`.
local core = require "psdl.core"
local lazy_table = require("psdl.lazy").table
local styles = require "psdl.styles"
local plan = require "psdl.plan"
local check = require "psdl.check"
local random = require "psdl.city.random"

local type, error, ipairs, pairs, next = type, error, ipairs, pairs, next
local abs, sqrt, floor, max, min, huge = math.abs, math.sqrt, math.floor, math.max, math.min, math.huge
local string_format = string.format
local area2, overlap, bbox = plan.area2, plan.overlap, plan.bbox
local flatten_points, row_fits, row_buildings = core.flatten_points, core.row_fits, core.row_buildings
local opt_problem, argerr = check.opt_problem, check.argerr

-- Installed by psdl.city.blocks (city/blocks/init.lua): M is the module table, Ctx the
-- context class of one `fill`, private the helpers shared between the blocks files.
return function(M, Ctx, private)

  -- ================================================================ buildings

  local function rint(rng, lo, hi)
    if hi <= lo then return lo end
    return lo + floor(rng() * (hi - lo + 1))
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

  -- Room R as the C layout sees it (psdl_row_room: its outline, the pool's points of its
  -- polygon R.P, and the footprints placed in it), made on first use.
  local function row_room(R)
    local rr = R.rows
    if not rr then
      local P = R.P
      rr = core.row_room(P.pool:points(P.refs))
      R.rows = rr
    end
    return rr
  end

  -- Does footprint fp (retail, points {x, y, z}) stand inside room R, clear of the buildings
  -- placed there (psdl_row_fits)? If so it is recorded as placed.
  local function fits(R, fp)
    if #fp < 3 then return false end
    local flat = flatten_points(fp)
    if not flat then return false end -- a point that is not finite
    return row_fits(row_room(R), flat)
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

  -- The options `Builder:building` would refuse (the first problem, as its message names it),
  -- or nil: the checks it makes per call, made once per building spec.
  local function spec_problem(bs)
    return opt_problem(bs.floor_height, "floor_height", "positive") or opt_problem(bs.bay_width, "bay_width", "positive")
      or opt_problem(bs.sliver_density, "sliver_density", "positive")
  end

  -- Building spec bs as core.row_spec keeps it in C (made once per spec: bs.row_spec).
  local function row_spec(ctx, bs)
    local function indices(list)
      if not list then return nil end
      local out = {}
      for i, g in ipairs(list) do out[i] = g.index end
      return out
    end
    local decks
    if ctx.decks then
      decks = {}
      for i, d in ipairs(ctx.decks) do decks[i] = { pts = flatten_points(d.pts), low = d.low } end
    end
    bs.problem = spec_problem(bs)
    bs.row_spec = core.row_spec{
      setback = bs.setback, depth = bs.depth, width = bs.width, gap = bs.gap, bay_width = bs.bay_width,
      floors = bs.floors, floor_height = bs.floor_height or 3, sliver_density = bs.sliver_density or 0.25,
      facades = indices(bs.facades), roofs = indices(bs.roofs), ground_facades = indices(bs.ground_facades),
      sliver = bs.sliver.index, refuse = bs.problem ~= nil, decks = decks, deck_gap = M.DECK_GAP,
    }
    return bs.row_spec
  end

  -- A building of room R's rows failed (core.row_buildings returned false, what, detail and
  -- the counts before it): raises what `Builder:building` raised for it, after dropping the
  -- part of the building that was made (as the builder's atomic calls do).
  local ROW_FAILURES = { range = "a coordinate or height beyond the float range", noheight = "the building has no height",
                         below = "top is below the ground floor's top", full = "the store is full",
                         vanish = "the ground floor's height vanishes at its base", nomem = "not enough memory" }
  local function row_failed(b, R, bs, what, detail, nv, nh, srooms, srecs, srefs)
    local room = R.room
    local ok, e = true, nil
    if what == "budget" then ok, e = pcall(room.check_budget, room)
    elseif what == "noroof" then ok, e = pcall(room.fail, room, "roof: the polygon has no area")
    elseif what == "repeats" then ok, e = pcall(room.fail, room, "facade: repeats %s x %s outside 1..32767", 1, detail)
    elseif what == "refused" then ok, e = pcall(argerr, 2, "building", bs.problem)
    end
    if ok then e = string_format("building in %s: %s", room:label(), ROW_FAILURES[what] or what) end
    b.vpool:truncate(nv)
    b.hpool:truncate(nh)
    b.store:truncate(srooms, srecs, srefs)
    error(e, 0)
  end

  -- The fill's building records (report.building_list), kept in C (core.row_list) and made
  -- tables when first read: a lazy list in place of the report's (empty) one, made on the
  -- first building. Returns the C list and the records made in Lua, by index.
  local function building_records(ctx)
    local rl = ctx.row_list
    if rl then return rl, ctx.lua_records end
    rl = core.row_list()
    local lua_records, report, rooms = {}, ctx.report, ctx.b.rooms
    for i, rec in ipairs(report.building_list) do lua_records[rl:add_lua()] = rec end
    report.building_list = lazy_table(function(t) rl:fill(t, rooms, lua_records) end)
    ctx.row_list, ctx.lua_records = rl, lua_records
    return rl, lua_records
  end

  -- Building rows along the frontage of room R over polygon P (edges whose kind is in
  -- `want`) with options bs, in one C call (core.row_buildings): chains, footprints and fit
  -- tests, then per footprint what `Ctx:building` and `Builder:building` do (ground heights,
  -- floors under bridge decks, texture picks, facades, slivers, roof, the store's records,
  -- the report's building_list), random numbers from the fill's generator (in C when it is a
  -- psdl.city.random generator's `fn`).
  local function rows(ctx, R, P, bs, want)
    local kinds, front = P.kinds, {}
    for i = 1, #P.refs do front[i] = want[kinds[i]] and true or false end
    local b, report, rng = ctx.b, ctx.report, ctx.rng
    local ground = R.flat_y or R.tris
    if ground == nil then error("psdl.city.blocks: room without its ground (flat_y or tris)", 0) end
    b:settle() -- (Builder:building's first step, once for the room)
    local built, under, detail, nv, nh, srooms, srecs, srefs, nb, nu = row_buildings(row_room(R), front,
      bs.row_spec or row_spec(ctx, bs), random.generator(rng) or rng, ground, b.vpool, b.hpool, b.store, R.room.serial,
      b.snap, b.budget, (building_records(ctx)))
    local what
    if built == false then what, built, under = under, nb, nu end
    report.buildings = report.buildings + built
    R.nbuildings = R.nbuildings + built
    if under > 0 then report.under_decks = (report.under_decks or 0) + under end
    if what then row_failed(b, R, bs, what, detail, nv, nh, srooms, srecs, srefs) end
  end

  -- A building on footprint fp (retail, plan) in room R.
  function Ctx:building(R, fp, bs, given)
    local rng, b = self.rng, self.b
    local outline = {}
    local base = -huge
    local ground = R.ground
    if not ground then
      ground = private.sampler(R.tris, R.flat_y)
      R.ground = ground
    end
    for i, p in ipairs(fp) do
      local y = floor(ground(p[1], p[3]) * 1000 + 0.5) / 1000
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
    local rl, lua_records = building_records(self)
    lua_records[rl:add_lua()] = rec
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
    rows = rows,
    fits = fits,
    clip_footprint = clip_footprint,
    building_spec = building_spec,
    FOOTPRINT_MARGIN = FOOTPRINT_MARGIN,
    FOOTPRINT_MIN_SHARE = FOOTPRINT_MIN_SHARE,
  }
end
