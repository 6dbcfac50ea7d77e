--- `Builder:finish` of psdl.builder: texture layout, perimeters, T-junction repair, neighbour
-- links, room flags, bounds, road records' crossroads, the document and its validation.
local core = require "psdl.core"
local geom = require "psdl.geom"
local check = require "psdl.check"


local type, error, ipairs, pairs, pcall, getmetatable = type, error, ipairs, pairs, pcall, getmetatable
local require = require
local table_insert, table_move = table.insert, table.move
local max, abs, sqrt = math.max, math.abs, math.sqrt
local string_format, table_concat, table_sort = string.format, table.concat, table.sort
local os_clock = os.clock
check.own(debug.getinfo(1, "S").source)
local raise = check.raise
-- The most vertices a PSDL can reference (16-bit references 1..65,536, §3.2).
local MAX_VERTICES = 65536
-- `error` levels of the caller of `Builder:finish`, which runs its work under pcall (a failed
-- finish is undone): from the work itself (1 it, 2 pcall, 3 finish, 4 the caller), and from a
-- function the work calls.
local AT_CALLER, AT_CALLER_2 = 4, 5

-- Installed by psdl.builder (builder/init.lua): M is the module table, Builder and Room the
-- classes, P the builder's private helpers shared between its files.
return function(M, Builder, Room, P)
  local STRIDE = P.STRIDE

  --- A room's outline as vertex references: its own (`outline`), or the boundary of its
  -- ground geometry (its surface attributes); nil when it has neither. The builder's read API
  -- for modules that place rooms around the others (psdl.city.blocks). The list is the
  -- caller's own (a copy, as `point` and `attributes` give): editing it changes no room.
  -- @tparam Room r a room of this builder
  -- @treturn table|nil vertex references (1-based, as in the document)
  local FINISH_KEYS = { strict = true, validate = true, drivable = true, order = true }

  function Builder:room_outline(r)
    P.room_arg(self, r, 1, "room_outline")
    local own = r.outline
    if own then return table_move(own, 1, #own, 1, {}) end
    return core.room_outline(self.store, r.serial, self.vpool) -- the store's triangles' boundary, in C
  end

  -- Texture layout: divider groups first, then the others in order of first use.
  local function layout_textures(b, rooms, serials)
    -- one pass in C over the store: divider groups in order of first use, the other groups
    -- in order of first use, each with its first user (a room serial)
    local oi, ou, di, du = b.store:group_uses(serials)
    local groups, by_serial = b.groups, b.rooms
    local dividers, others, users, dusers = {}, {}, {}, {}
    local nd, no = #di, #oi
    for i = 1, no do
      local g = groups[oi[i]]
      others[i] = g
      users[g] = by_serial[ou[i]]
    end
    for i = 1, nd do
      local g = groups[di[i]]
      dividers[i] = g
      dusers[g] = by_serial[du[i]]
    end
    local order = {}
    for i = 1, nd do
      local g = dividers[i]
      order[i] = g
      users[g] = dusers[g]
    end
    for i = 1, no do
      local g = others[i]
      if not dusers[g] then order[#order + 1] = g end
    end
    local textures, value = {}, {}
    for _, g in ipairs(order) do
      value[g] = #textures + 1
      for _, name in ipairs(g.names) do textures[#textures + 1] = name end
      if #textures > M.MAX_TEXTURE then
        error(string_format("%s: its texture group (%s: %s) needs texture slots up to %d, above %d, the largest "
          .. "value the format can store (§2.3)", users[g]:label(), g.kind, table_concat(g.names, ", "), #textures,
          M.MAX_TEXTURE), AT_CALLER_2)
      end
    end
    for _, g in ipairs(dividers) do
      if value[g] > M.MAX_DIVIDER_TEXTURE then
        error(string_format("%s: divider texture group (%s) lands at texture value %d, above %d: the divided "
          .. "road stores it in one byte (§2.4 0x8)", users[g]:label(), table_concat(g.names, ", "), value[g],
          M.MAX_DIVIDER_TEXTURE), AT_CALLER_2)
      end
    end
    return textures, value
  end

  -- Is point p strictly inside segment a-b (3D distance <= eps)? Returns the parameter t.
  local function on_segment(p, a, b, eps)
    local dx, dy, dz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
    local len2 = dx * dx + dy * dy + dz * dz
    if len2 <= 4 * eps * eps then return nil end
    local t = ((p[1] - a[1]) * dx + (p[2] - a[2]) * dy + (p[3] - a[3]) * dz) / len2
    local len = sqrt(len2)
    if t * len <= eps or (1 - t) * len <= eps then return nil end
    local ex, ey, ez = a[1] + t * dx - p[1], a[2] + t * dy - p[2], a[3] + t * dz - p[3]
    if ex * ex + ey * ey + ez * ez > eps * eps then return nil end
    return t
  end

  -- Edge key of two vertex references (direction kept).
  local function ekey(a, c) return a * 4294967296 + c end

  -- Index of the boundary edges of a room's ground geometry: key (a, c) -> entry describing
  -- where the edge is: a fan's ring edge, a strip's rail edge between two sections, or a
  -- fixed edge (crosswalk, strip end section) that cannot take a vertex.
  local function edge_index(ops)
    local idx = {}
    for _, op in ipairs(ops) do
      local t, refs = op.type, op.refs
      if t == "fan" or t == "road_fan" then
        local n = #refs
        if refs[n] == refs[2] then -- hub inside: ring = refs[2 .. n-1]
          for i = 2, n - 1 do idx[ekey(refs[i], refs[i + 1])] = { op = op, ring = i - 1 } end
        else
          for i = 1, n do idx[ekey(refs[i], refs[i % n + 1])] = { op = op, ring = i } end
        end
      elseif STRIDE[t] and op.cap == nil then
        local s = STRIDE[t]
        local ns = #refs // s
        for k = 1, ns - 1 do
          for _, col in ipairs({ 1, s }) do
            local a, c = refs[(k - 1) * s + col], refs[k * s + col]
            if a ~= c then idx[ekey(a, c)] = { op = op, k = k, col = col } end
          end
        end
        for _, k in ipairs({ 1, ns }) do
          for col = 1, s - 1 do
            local a, c = refs[(k - 1) * s + col], refs[(k - 1) * s + col + 1]
            if a ~= c and not idx[ekey(a, c)] then idx[ekey(a, c)] = { op = op, fixed = true } end
          end
        end
      elseif t == "crosswalk" then
        for _, e in ipairs({ { 1, 2 }, { 2, 4 }, { 4, 3 }, { 3, 1 } }) do
          idx[ekey(refs[e[1]], refs[e[2]])] = { op = op, fixed = true }
        end
      end
    end
    return idx
  end

  -- Looks up the geometry edge (a, c) or (c, a); returns the entry and whether reversed.
  local function find_edge(idx, a, c)
    local e = idx[ekey(a, c)]
    if e then return e, false end
    e = idx[ekey(c, a)]
    if e then return e, true end
    return nil
  end

  -- Slow path: the geometry edge containing every vertex of vs (outline edges that are not
  -- geometry edges). Returns the entry and the edge's end references, or nil.
  local function search_edge(b, idx, vs)
    local p1 = b:point(vs[1])
    for key, e in pairs(idx) do
      local a, c = key // 4294967296, key % 4294967296
      if on_segment(p1, b:point(a), b:point(c), b.eps) then return e, a, c end
    end
    return nil
  end

  -- Applies the collected insertions to the room's geometry (its op tables `ops`, written
  -- back to the store). ins[op] = list of {ring = j | k = k, col = col, list = {{t = t, v =
  -- ref}, ...}} in the op's edge direction.
  local function apply_insertions(b, r, ops, ins)
    local new_ops = {}
    for _, op in ipairs(ops) do
      local list = ins[op]
      if not list then
        new_ops[#new_ops + 1] = op
      elseif op.type == "fan" or op.type == "road_fan" then
        local refs, n = op.refs, #op.refs
        local closed = refs[n] == refs[2]
        local ring = {}
        if closed then for i = 2, n - 1 do ring[#ring + 1] = refs[i] end
        else for i = 1, n do ring[#ring + 1] = refs[i] end end
        local at, hub_edge = {}, false
        for _, e in ipairs(list) do
          local slot = at[e.ring]
          if not slot then slot = {}; at[e.ring] = slot end
          for _, x in ipairs(e.list) do slot[#slot + 1] = x end
          if not closed and (e.ring == 1 or e.ring == n) then hub_edge = true end
        end
        local out = {}
        for j = 1, #ring do
          out[#out + 1] = ring[j]
          local slot = at[j]
          if slot then
            table_sort(slot, function(x, y) return x.t < y.t end)
            for _, x in ipairs(slot) do out[#out + 1] = x.v end
          end
        end
        if hub_edge then
          local pts = {}
          for k, ref in ipairs(out) do pts[k] = b:point(ref) end
          for _, f in ipairs(geom.fans(pts)) do
            local nop = {}
            for k, v in pairs(op) do nop[k] = v end
            nop.refs = r:refs(f, op.type)
            new_ops[#new_ops + 1] = nop
          end
        else
          if closed then
            out[#out + 1] = out[1]
            table_insert(out, 1, refs[1])
          end
          op.refs = out
          new_ops[#new_ops + 1] = op
        end
      else -- strip rails: one new section per vertex
        local s = STRIDE[op.type]
        local refs = op.refs
        local byk = {}
        for _, e in ipairs(list) do
          local slot = byk[e.k]
          if not slot then slot = {}; byk[e.k] = slot end
          for _, x in ipairs(e.list) do slot[#slot + 1] = { t = x.t, v = x.v, col = e.col } end
        end
        local nr = {}
        local ns = #refs // s
        for k = 1, ns do
          for c = 1, s do nr[#nr + 1] = refs[(k - 1) * s + c] end
          local slot = byk[k]
          if slot then
            table_sort(slot, function(x, y) return x.t < y.t end)
            for _, x in ipairs(slot) do
              local a, c0 = refs[(k - 1) * s + x.col], refs[k * s + x.col]
              for c = 1, s do
                local ra, rc = refs[(k - 1) * s + c], refs[k * s + c]
                if ra == a and rc == c0 then nr[#nr + 1] = x.v
                else nr[#nr + 1] = b:vertex(geom.lerp(b:point(ra), b:point(rc), x.t)) end
              end
            end
          end
        end
        op.refs = nr
        new_ops[#new_ops + 1] = op
      end
    end
    b.store:set_ops(r.serial, new_ops)
  end

  -- Detects T-junctions between room perimeters and repairs them: the vertex goes into the
  -- perimeter of the room with the long edge and into that room's geometry (a fan takes it on
  -- its rim, or is fanned again when the edge touches its hub; a strip takes it with a new
  -- section, whose other end may be a new T-junction across the strip, so this repeats until
  -- none is left). An edge of a crosswalk or of a strip's end section cannot take a vertex:
  -- those are reported. perims: the perimeter set (store:perimeters), whose rooms' perimeters
  -- take the vertices; the outlines replaced go into saved.outline (room -> its old outline, for
  -- a failed finish to put back). Returns found, repaired, unrepaired (messages).
  local function repair_tjunctions(b, rooms, perims, saved)
    local found, repaired, unrepaired = 0, 0, {}
    local stuck = {}
    for _ = 1, 8 do
      local t = perims:tjunctions(b.vpool, b.eps)
      -- group by room and perimeter edge, skipping what could not be repaired before
      local by_room, any = {}, false
      for i = 1, #t, 3 do
        local ri, edge, v = t[i], t[i + 1], t[i + 2]
        local key = ri .. ":" .. v
        if not stuck[key] then
          local rm = by_room[ri]
          if not rm then rm = { edges = {}, order = {} }; by_room[ri] = rm end
          local g = rm.edges[edge]
          if not g then g = { edge = edge, vs = {}, keys = {} }; rm.edges[edge] = g; rm.order[#rm.order + 1] = edge end
          g.vs[#g.vs + 1] = v
          g.keys[#g.keys + 1] = key
          found = found + 1
          any = true
        end
      end
      if not any then break end
      for ri, rm in pairs(by_room) do
        local r, per = rooms[ri], perims:get(ri)
        local ops = b:attributes(r)
        local idx = edge_index(ops)
        local ins = {}
        local accepted = {}
        for _, k in ipairs(rm.order) do
          local g = rm.edges[k]
          local a, c = per[k], per[k % #per + 1]
          local e, rev = find_edge(idx, a, c)
          local ea, ec = a, c
          if not e then
            local sa, sc
            e, sa, sc = search_edge(b, idx, g.vs)
            if e then ea, ec, rev = sa, sc, false end
          elseif rev then
            ea, ec = c, a
          end
          if e and e.fixed then
            for q, v in ipairs(g.vs) do
              stuck[g.keys[q]] = true
              unrepaired[#unrepaired + 1] = string_format("%s: vertex %d lies on its perimeter edge %d, which is an "
                .. "edge of a crosswalk or of a strip's end section and cannot take a vertex", r:label(), v, k)
            end
          else
            if e then
              local pa, pc = b:point(ea), b:point(ec)
              local lst = {}
              for _, v in ipairs(g.vs) do
                local tt = on_segment(b:point(v), pa, pc, b.eps)
                if tt then lst[#lst + 1] = { t = tt, v = v } end
              end
              local l = ins[e.op]
              if not l then l = {}; ins[e.op] = l end
              l[#l + 1] = { ring = e.ring, k = e.k, col = e.col, list = lst }
            end
            accepted[#accepted + 1] = g
          end
        end
        apply_insertions(b, r, ops, ins)
        -- perimeter: from the last edge back so that positions stay valid
        table_sort(accepted, function(x, y) return x.edge > y.edge end)
        for _, g in ipairs(accepted) do
          for q = #g.vs, 1, -1 do table_insert(per, g.edge + 1, g.vs[q]) end
          repaired = repaired + #g.vs
        end
        perims:set(ri, per)
        if r.outline then
          if saved.outline[r] == nil then saved.outline[r] = r.outline end
          r.outline = per
        end
      end
    end
    return found, repaired, unrepaired
  end

  -- Block perimeter edges left without a neighbour that run along a road or intersection
  -- room's perimeter edge in plan (within eps) at another height (up to `HEIGHT_GAP` m away:
  -- farther is a bridge or a tunnel): rooms link only through shared vertices (§1.5), so a
  -- block at ground level beside a sidewalk 0.15 m up stays unlinked. One message per pair
  -- of rooms.
  local HEIGHT_GAP = 1.0
  local function height_mismatches(b, rooms, perims, cdoc)
    -- the edge loops run in C (psdl_height_mismatches): kinds 1 block, 2 road or
    -- intersection, 0 tunnels and bridges; over the assembled document when there is one
    -- (its perimeters linked, its vertices the pool's), else over the perimeter set
    local kinds = {}
    for i = 1, #rooms do
      local r = rooms[i]
      kinds[i] = (r.is_tunnel or r.is_bridge) and 0 or r.kind == "block" and 1
        or (r.kind == "road" or r.kind == "intersection") and 2 or 0
    end
    local found
    if cdoc then found = core.doc_height_mismatches(cdoc, kinds, max(b.eps, 1e-4), HEIGHT_GAP)
    else found = perims:height_mismatches(b.vpool, kinds, max(b.eps, 1e-4), HEIGHT_GAP) end
    local out = {}
    for n = 1, #found // 4 do -- in room order
      local q = 4 * (n - 1)
      local dy = found[q + 4]
      out[n] = string_format("%s: perimeter edge %d runs along an edge of %s but %.3f m %s it, so the two rooms "
        .. "are not linked (§1.5); blocks meet roads at the road room's outer edge (sidewalk height)",
        rooms[found[q + 1]]:label(), found[q + 2], rooms[found[q + 3]]:label(), abs(dy), dy < 0 and "below" or "above")
    end
    return out
  end

  -- Room flag byte: the room's own, or from its kind (§1.6).
  local function room_flags(r)
    local flags = r.flags
    if not flags then
      flags = r.kind == "road" and M.FLAGS.road or r.kind == "intersection" and M.FLAGS.intersection or M.FLAGS.standard
      if r.is_tunnel then flags = flags | M.FLAGS.subterranean | M.FLAGS.warp end
      if r.is_bridge then flags = flags | M.FLAGS.warp end
    end
    return flags
  end

  -- Wall mask of each junction tunnel of room r (in record order) over its linked perimeter
  -- per: bit j for edge j-1 -> j (0-based, §1.5) where `walls` puts a wall. A perimeter of
  -- more than 32 edges gives none (the assembly refuses the room).
  local function junction_masks(b, r, per, rooms)
    local list = {}
    local n = #per
    if n > 32 then return list end
    for _, op in ipairs(b:attributes(r)) do
      if op.type == "junction_tunnel" then
        local mask = 0
        for e = 1, n do
          local a, c = per[e], per[e % n + 1]
          if a.vertex ~= c.vertex then
            local nb = a.neighbour
            local nroom = nb > 0 and rooms[nb] or nil
            local wall
            local w = op.walls
            if w == "outside" then wall = nb == 0 or (nroom and nroom.kind == "block")
            elseif w == "all" then wall = true
            elseif type(w) == "function" then
              wall = w({ index = e, neighbour = nb, room = nroom, from = b:point(a.vertex), to = b:point(c.vertex) })
            elseif type(w) == "table" then
              for _, x in ipairs(w) do if x == e then wall = true end end
            end
            if wall then mask = mask | (1 << (e % n)) end -- bit j: edge j-1 -> j (0-based, §1.5)
          end
        end
        list[#list + 1] = mask
      end
    end
    return list
  end

  -- Raises the assembly's refusal of room r (code and count from store:assemble).
  local function assembly_error(r, code, n)
    if code == "perimeter_long" then
      error(string_format("%s: %d perimeter points; the game keeps the count in one byte, %d at most (§3.2)",
        r:label(), n, M.MAX_PERIMETER), AT_CALLER_2)
    elseif code == "perimeter_short" then error(r:label() .. ": its perimeter has fewer than 3 points", AT_CALLER_2)
    elseif code == "tunnel_alone" then
      error(r:label() .. ": a road tunnel must be followed by a road, walkway or divided road (§2.4 0x9)", AT_CALLER_2)
    elseif code == "junction_edges" then
      error(string_format("%s: a junction tunnel covers 32 perimeter edges, the room has %d (§3.2)", r:label(), n),
        AT_CALLER_2)
    end
    error(r:label() .. ": no attributes", AT_CALLER_2)
  end

  -- The rooms of the Lua document (docs/document-model.md), made from the records when a
  -- caller asks for the document: what the C assembly (store:assemble) encodes.
  local function lua_rooms(b, rooms, perims, value, masks, flags_of)
    local doc_rooms = {}
    for i, r in ipairs(rooms) do
      local per = perims:linked(i)
      local attrs, cur = {}, nil
      local function tex(v)
        if v ~= cur then
          attrs[#attrs + 1] = { type = "texture", value = v }
          cur = v
        end
      end
      local nj, jm = 0, masks[r.serial]
      for _, op in ipairs(b:attributes(r)) do
        local t = op.type
        if t == "texture" then
          attrs[#attrs + 1] = { type = "texture", value = op.value }
          cur = op.value
        elseif t == "tunnel" then
          tex(value[op.group])
          attrs[#attrs + 1] = { type = "tunnel", flags = op.flags, height1 = op.height1, height2 = op.height2 }
        elseif t == "junction_tunnel" then
          nj = nj + 1
          tex(value[op.group])
          attrs[#attrs + 1] = { type = "junction_tunnel", flags = op.flags, height1 = op.height1, height2 = op.height2,
                                ceiling_start = op.ceiling_start, wall_mask = jm[nj], mask1 = 0, mask2 = 0 }
        else
          if op.group then tex(value[op.group]) end
          local a -- each made whole in one constructor (no growing of its hash part)
          if t == "facade" then
            a = { type = t, vertices = op.refs, bottom = op.bottom, top = op.top, u_repeat = op.u, v_repeat = op.v }
          elseif t == "facade_bound" then a = { type = t, vertices = op.refs, light = op.light, top = op.top }
          elseif t == "roof" then a = { type = t, vertices = op.refs, height = op.height }
          elseif t == "sidewalk_strip" then a = { type = t, vertices = op.refs, cap = op.cap }
          elseif t == "divided_road" then
            a = { type = t, vertices = op.refs, divider_type = op.divider_type, cap_start = op.cap_start,
                  cap_end = op.cap_end, divider_texture = value[op.divider_group], divider_value = op.divider_value }
          elseif t == "sliver" then a = { type = t, vertices = op.refs, top = op.top, density = op.density }
          else a = { type = t, vertices = op.refs } end
          attrs[#attrs + 1] = a
        end
      end
      doc_rooms[i] = { flags = flags_of[i], prop_rule = r.prop_rule, perimeter = per, attributes = attrs }
    end
    return doc_rooms
  end

  -- The work of `Builder:finish` (below), under its pcall: errors at AT_CALLER.
  -- long: the document's assembly in order (perimeters, attributes, vertices, road records,
  -- validation) over the builder's pools; issue 13 §2 moves this to C
  local function finish_work(self, opts, saved)
    local t0 = os_clock()
    local rooms, first_road_room = M.trusted.document_rooms(self, opts.order)
    for i, r in ipairs(rooms) do r.id = i end
    local phases, tp = {}, t0
    local function phase(name)
      local t = os_clock()
      phases[#phases + 1] = { name, t - tp }
      tp = t
    end
    local order = {}
    for i, r in ipairs(rooms) do order[i] = r.serial end
    local textures, value = layout_textures(self, rooms, order)
    phase("textures")
    -- perimeters: a set in C (each room's outline, or the outline of its ground geometry),
    -- repaired and linked there; the Lua document reads it back only when it is made
    local outlines = {}
    for i, r in ipairs(rooms) do
      if r.outline then outlines[i] = r.outline end
    end
    local perims, pcode, ppos = self.store:perimeters(order, outlines, self.vpool)
    if not perims then
      if pcode == "no_geometry" then
        error(rooms[ppos]:label() .. ": no ground geometry to take a perimeter from, and no outline", AT_CALLER)
      end
      error(rooms[ppos]:label() .. ": its ground geometry has no outline", AT_CALLER)
    end
    phase("perimeters")
    local found, repaired, unrepaired = repair_tjunctions(self, rooms, perims, saved)
    phase("tjunctions")
    perims:link(self.vpool:count())
    phase("links")
    -- attributes: the wall masks of junction tunnels in Lua (`walls` may be a function of the
    -- final perimeter), every other record assembled into the C document from the store
    local masks = {}
    for i, r in ipairs(rooms) do
      if r.junction_tunnels then masks[r.serial] = junction_masks(self, r, perims:linked(i), rooms) end
    end
    local flags_of, props, gvalue = {}, {}, {}
    for i, r in ipairs(rooms) do
      flags_of[i], props[i] = room_flags(r), r.prop_rule
    end
    for k, g in ipairs(self.groups) do gvalue[k] = value[g] or 0 end
    local cdoc, code, pos, n = self.store:assemble{ order = order, flags = flags_of, props = props, perims = perims,
                                                    gvalue = gvalue, masks = masks }
    local unencodable
    if not cdoc then
      if code == "encodable" then
        unencodable = { severity = "error", rule = "encodable", message = n, path = "" }
      else
        assembly_error(rooms[pos], code, n)
      end
    end
    phase("attributes")
    -- vertices, dummy, bounds
    local nv = self.vpool:count()
    if self.budget and nv > self.budget then
      error(string_format("the vertex pool has %d vertices after T-junction repair, above the %s of %d (§3.2)",
        nv, self.budget == M.VERTEX_BUDGET and "safe budget" or "builder's vertex_budget", self.budget), AT_CALLER)
    end
    local bounds = core.bounds(self.vpool, 2)
    if not bounds then error("the document has no vertices", AT_CALLER) end
    self.vpool:set_dummy(bounds.center[1], bounds.center[2], bounds.center[3])
    if self.hpool:count() > 65536 then error("more than 65,536 heights (u16 references)", AT_CALLER) end
    -- road records
    -- (the end sections of the first and last rooms' strips come from the store in C)
    local roads = {}
    local store = self.store
    for k, rec in ipairs(self.records) do
      local ids, nr = {}, #rec.rooms
      for j, r in ipairs(rec.rooms) do ids[j] = r.id end
      local ft, s1, s2, s3, s4, lt, e1, e2, e3, e4
      if nr > 0 then
        ft, s1, s2, s3, s4 = store:strip_end(rec.rooms[1].serial, false)
        lt, e1, e2, e3, e4 = store:strip_end(rec.rooms[nr].serial, true)
      end
      if not ft or not lt then
        error(string_format("road record %d: its first and last rooms need a road, walkway or divided road", k),
          AT_CALLER)
      end
      local flags = rec.flags
      if not flags then
        flags = 0
        if ft == "walkway" then flags = flags | 0x10 end
        if ft == "divided_road" then flags = flags | 0x08 end
        if ft ~= "walkway" and s1 ~= s2 then flags = flags | 0x40 end
      end
      roads[k] = { flags = flags, lanes_left = rec.lanes_left or { 0.5 }, lanes_right = rec.lanes_right or { 0.5 },
                   stop_lights = rec.stop_lights or { 0, 0 }, start_crossroads = { s1, s2, s3, s4 },
                   end_crossroads = { e1, e2, e3, e4 }, rooms = ids }
    end
    phase("records")
    if cdoc then
      self.store:complete(cdoc, { vpool = self.vpool, hpool = self.hpool, textures = textures, bounds = bounds,
                                  first_road_room = first_road_room, roads = roads })
    end
    -- the Lua document, made when a caller first looks at it (City:save and `psdl build`
    -- write the bytes checked below without it)
    local heights_n = self.hpool:count()
    local doc = self:lazy_document(function()
      return {
        magic = "PSD0", target_size = 2,
        vertices = self.vpool:totable(),
        heights = self.hpool:totable(),
        textures = textures,
        first_road_room = first_road_room,
        room0 = { flags = 0, prop_rule = 0xCD },
        rooms = lua_rooms(self, rooms, perims, value, masks, flags_of),
        bounds = bounds,
        roads = roads,
      }
    end)
    phase("document")
    local report = { rooms = #rooms, vertices = nv, heights = heights_n, textures = #textures, roads = #roads,
                     tjunctions = { found = found, repaired = repaired, unrepaired = unrepaired },
                     clamped = self.clamped, warnings = height_mismatches(self, rooms, perims, cdoc) }
    phase("warnings")
    if opts.validate ~= false then
      if nv > MAX_VERTICES then -- (a budget lifted: the format's own limit, before the validator's words)
        raise(string_format("the document has %d vertices: a PSDL holds at most %d (16-bit references, §3.2), and the "
          .. "game's collision vertices need %d of those (the safe budget is %d, §3.2)", nv, MAX_VERTICES,
          MAX_VERTICES - core.limits.vertex_budget, core.limits.vertex_budget))
      end
      local strict = opts.strict ~= false
      -- (one conversion: the bytes of the document checked are kept for writing it)
      local ok, problems, counts, checked = require("psdl.document").check_assembled(self.store, cdoc or unencodable,
        { strict = strict, name = self.name, drivable = opts.drivable }, true)
      report.problems, report.counts, report.checked = problems, counts, checked
      if strict and #report.warnings > 0 then ok = false end
      if not ok then
        local lines = {}
        -- errors first: they are why the city is refused
        local ordered = {}
        for _, p in ipairs(problems) do if p.severity == "error" then ordered[#ordered + 1] = p end end
        for _, p in ipairs(problems) do if p.severity ~= "error" then ordered[#ordered + 1] = p end end
        problems = ordered
        for i, p in ipairs(problems) do
          if i > 8 then lines[#lines + 1] = string_format("(and %d more)", #problems - 8); break end
          lines[#lines + 1] = string_format("%s %s %s: %s", p.severity, p.rule, p.path, p.message)
        end
        if strict then
          for i, w in ipairs(report.warnings) do
            if i > 8 then lines[#lines + 1] = string_format("(and %d more)", #report.warnings - 8); break end
            lines[#lines + 1] = "warning builder " .. w
          end
        end
        error("the built document does not validate" .. (strict and " (strict)" or "") .. ":\n  "
          .. table_concat(lines, "\n  "), AT_CALLER)
      end
    end
    phase("validate")
    report.phases = phases
    report.seconds = os_clock() - t0
    return doc, report
  end

  -- What a failed finish puts back: each room's id, the outlines T-junction repair replaced
  -- (saved.outline), the store's records (a mark: the rooms whose geometry took a vertex get
  -- their records back, store:set_ops's clear log), the pools' counts, the dummy vertex and
  -- the builder's pending document.
  local function snapshot(b)
    local ids = {}
    for i, r in ipairs(b.rooms) do ids[i] = r.id or false end
    local dx, dy, dz = b.vpool:get(1)
    return { ids = ids, outline = {}, mark = { b.store:mark() }, nv = b.vpool:count(), nh = b.hpool:count(),
             dummy = { dx, dy, dz }, pending_doc = b.pending_doc }
  end

  local function restore(b, saved)
    for i, r in ipairs(b.rooms) do r.id = saved.ids[i] or nil end
    for r, outline in pairs(saved.outline) do r.outline = outline end
    local m = saved.mark
    b.store:truncate(m[1], m[2], m[3], m[4])
    b.vpool:truncate(saved.nv)
    b.hpool:truncate(saved.nh)
    b.vpool:set_dummy(saved.dummy[1], saved.dummy[2], saved.dummy[3])
    b.pending_doc = saved.pending_doc
  end

  -- (the end of finish: a failure undone, its error raised again unchanged)
  local function finished(b, saved, ok, ...)
    if not ok then
      restore(b, saved)
      error((...), 0) -- (the message carries its position: the caller's line)
    end
    return ...
  end

  --- Finish the document.
  --
  -- Lays out the texture table (divider groups first), takes each room's perimeter (its
  -- `outline`, or the outline of its ground geometry), repairs T-junctions between rooms
  -- (the vertex goes into the perimeter and geometry of the room with the long edge), links
  -- neighbours across shared edges (symmetric; a vertex shared with a room that is no edge
  -- neighbour is repeated, §1.5), sets room flags, writes the attributes (a texture reference
  -- before textured geometry, only when it changes), computes bounds, and validates.
  -- Atomic: a finish that raises (a limit of the format, validation, a `walls` function's
  -- error, ...) leaves the builder as it was before the call: its rooms' geometry, outlines
  -- and ids, the pools and the document of an earlier finish; fix what it names and finish
  -- again.
  -- @tparam[opt] table opts `strict` (default true: warnings are errors too, the builder's
  -- own with validation's), `validate` (default true), `drivable` (false: validate the format's
  -- rules only, for fragments that are no whole city; see `psdl.validate`), `order = "blocks_first"` (block rooms
  -- get the low ids, as retail; `first_road_room` is then the first non-block id)
  -- @treturn table document (docs/document-model.md)
  -- @treturn table report `{rooms, vertices, heights, textures, tjunctions = {found, repaired,
  -- unrepaired}, warnings, problems, counts, checked, seconds}`; `warnings`: block perimeter
  -- edges that run along a road or intersection room's edge at another height (a block at
  -- ground level beside a sidewalk 0.15 m up), which therefore stay unlinked; `checked`: the
  -- document's bytes with the problems validation found (`psdl.document.check`), for
  -- `psdl.document.write_checked` as long as the document is not changed
  -- @raise when a room breaks a limit of the format, or validation fails
  local function finish(self, opts)
    if getmetatable(self) ~= Builder then P.self_error(self, "finish") end
    opts = opts or {}
    if type(opts) ~= "table" then check.argerr(1, "finish", "table expected, got " .. type(opts)) end
    local bad = P.unknown_key(opts, FINISH_KEYS)
    if not bad and opts.order ~= nil and opts.order ~= "blocks_first" then
      bad = "order: \"blocks_first\" or nil expected, got " .. check.shown(opts.order)
    end
    if bad then check.argerr(1, "finish", bad) end
    self:settle()
    local saved = snapshot(self)
    return finished(self, saved, pcall(finish_work, self, opts, saved))
  end
  check.guard(finish) -- (`raise` inside the work points past its pcall, at the caller's line)
  Builder.finish = finish

  --- For psdl.city: the builder's rooms in the order `finish` numbers them (room ids 1, 2,
  -- ...): as made, or with `order = "blocks_first"` the block rooms first; and the id of the
  -- first non-block room then (0 when there is none, or without that order). psdl.city.repair
  -- maps the room numbers of a failed finish's validation errors back to rooms with it.
  -- @tparam Builder b
  -- @tparam[opt] string order nil or "blocks_first"
  -- @treturn table rooms in document order
  -- @treturn integer first_road_room
  function M.trusted.document_rooms(b, order)
    local rooms = {}
    for i, r in ipairs(b.rooms) do rooms[i] = r end
    local first_road_room = 0
    if order == "blocks_first" then
      local blocks, others = {}, {}
      for _, r in ipairs(rooms) do
        if r.kind == "block" then blocks[#blocks + 1] = r else others[#others + 1] = r end
      end
      first_road_room = #others > 0 and #blocks + 1 or 0
      rooms = blocks
      for _, r in ipairs(others) do rooms[#rooms + 1] = r end
    end
    return rooms, first_road_room
  end
end
