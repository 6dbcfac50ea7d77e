--- Triangles of psdl.export: the mesh builder (materials, strips, fans, faces, UVs of §4.3)
-- and the drawing of every attribute type (the table at the top of export/init.lua).
local type, ipairs, tostring, tonumber, error, require, pcall, setmetatable, utf8 =
  type, ipairs, tostring, tonumber, error, require, pcall, setmetatable, utf8
local floor, sqrt, huge = math.floor, math.sqrt, math.huge
local string_format = string.format

-- Installed by psdl.export (export/init.lua): M is the module table, private the helpers shared
-- between its files.
return function(M, private)

  ------------------------------------------------------------------------ geometry helpers

  local ZERO = { 0, 0, 0 }

  local function dist(a, b)
    local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
    return sqrt(dx * dx + dy * dy + dz * dz)
  end

  local function flat_dist(a, b)
    local dx, dz = a[1] - b[1], a[3] - b[3]
    return sqrt(dx * dx + dz * dz)
  end

  local function up(p, h) return { p[1], p[2] + h, p[3] } end

  local function mid(a, b)
    return { (b[1] - a[1]) * 0.5 + a[1], (b[2] - a[2]) * 0.5 + a[2], (b[3] - a[3]) * 0.5 + a[3] }
  end

  local function normalized(x, y, z)
    local m = x * x + y * y + z * z
    if m == 0 then return 0, 0, 0 end
    m = 1 / sqrt(m)
    return x * m, y * m, z * m
  end

  ------------------------------------------------------------------------ the builder

  local Builder = {}
  Builder.__index = Builder

  -- Material index for a key (texture name, or a special key), created on first use.
  function Builder:material(key, display, name)
    local m = self.mat_by_key[key]
    if m then return m end
    local list = self.materials
    m = #list + 1
    local color = name and M.color(name) or (key == "#none" and { 0.6, 0.6, 0.6 } or { 1, 0, 1 })
    list[m] = { name = display, texture = name, color = color, key = key }
    self.mat_by_key[key] = m
    return m
  end

  -- Material for texture slot `slot` (1-based).
  function Builder:slot_material(slot)
    local cache = self.slot_cache
    local m = cache[slot]
    if m then return m end
    local tex = self.doc.textures
    local name = slot >= 1 and tex[slot] or nil
    if type(name) == "string" then
      m = self:material(name, name, name)
    elseif name == false then
      m = self:material("#empty:" .. slot, string_format("(empty slot %d)", slot))
    else
      m = self:material("#missing:" .. slot, string_format("(missing slot %d)", slot))
    end
    cache[slot] = m
    return m
  end

  -- Material of the current group at offset (untextured when the value is 0).
  function Builder:tex(offset)
    if self.parts then self.part = self.atype .. "#" .. offset end
    if self.value == 0 then return self:material("#none", "(untextured)") end
    return self:slot_material(self.value + offset)
  end

  -- Start a primitive of material m: vertices go to the current group's bucket (one per
  -- material, or per material and part with the `parts` option).
  function Builder:begin(m)
    local group = self.group
    local key = m
    if self.parts then key = m .. "|" .. self.part end
    local prim = group.by_mat[key]
    if not prim then
      prim = { material = m, part = self.parts and self.part or nil, pos = {}, uv = {}, idx = {}, nv = 0 }
      group.by_mat[key] = prim
      group.prims[#group.prims + 1] = prim
    end
    self.prim = prim
    self.first = prim.nv
  end

  -- Largest finite 32-bit float: positions and UVs are written as such, so a larger double
  -- (a height added to a coordinate near the limit) would become infinity in the file.
  local F32_MAX = 3.4028234663852886e38

  -- A non-finite number (NaN, infinity: a corrupt file), or one beyond the 32-bit float range,
  -- becomes 0, which JSON, OBJ and glTF can hold.
  local function finite(x)
    if x - x ~= 0 or x > F32_MAX or x < -F32_MAX then return 0 end
    return x
  end

  local function out_of_range(x)
    return x - x ~= 0 or x > F32_MAX or x < -F32_MAX
  end

  -- With `leave_far` (psdl export), positions beyond a billion metres (or not finite) are left
  -- out as render leaves them out of the map: written as 0 (so that the glTF accessor's min/max bound the data) and every
  -- triangle that uses one is dropped (`prim.bad` marks them for the end_* functions).
  local FAR = 1e9

  local function far(x)
    return not (x >= -FAR and x <= FAR)
  end

  function Builder:vertex(p, s, t)
    local prim = self.prim
    local n = prim.nv
    local pos, uv = prim.pos, prim.uv
    local x, y, z = p[1], p[2], p[3]
    if self.leave_far and (far(x) or far(y) or far(z)) then
      x, y, z, s, t = 0, 0, 0, finite(s), finite(t)
      self.nonfinite = (self.nonfinite or 0) + 1
      local bad = prim.bad
      if not bad then bad = {}; prim.bad = bad end
      bad[n] = true
    elseif out_of_range(x) or out_of_range(y) or out_of_range(z) or out_of_range(s) or out_of_range(t) then
      x, y, z, s, t = finite(x), finite(y), finite(z), finite(s), finite(t)
      self.nonfinite = (self.nonfinite or 0) + 1
    end
    pos[3 * n + 1], pos[3 * n + 2], pos[3 * n + 3] = x, y, z
    uv[2 * n + 1], uv[2 * n + 2] = s, t
    prim.nv = n + 1
  end

  function Builder:count(n)
    self.tris = self.tris + n
  end

  -- Triangle strip over the vertices since begin: (i, i+1, i+2), odd ones (i+1, i, i+2).
  function Builder:end_strip()
    local prim = self.prim
    local first, n = self.first, prim.nv - self.first
    local idx = prim.idx
    local k = #idx
    local bad = prim.bad
    if bad then return self:end_bad(nil, n, first, bad, "strip") end
    for i = 0, n - 3 do
      local a = first + i
      if i % 2 == 1 then
        idx[k + 1], idx[k + 2], idx[k + 3] = a + 1, a, a + 2
      else
        idx[k + 1], idx[k + 2], idx[k + 3] = a, a + 1, a + 2
      end
      k = k + 3
    end
    if n >= 3 then self:count(n - 2) end
  end

  -- The triangles of a strip, fan or list since begin, leaving out those that use a vertex
  -- marked in `bad` (a position beyond a billion metres): the slow path of the end_* functions.
  function Builder:end_bad(_, n, first, bad, kind)
    local idx = self.prim.idx
    local made = 0
    local function tri(a, b, c)
      if bad[a] or bad[b] or bad[c] then
        self.left_tris = (self.left_tris or 0) + 1
        return
      end
      local k = #idx
      idx[k + 1], idx[k + 2], idx[k + 3] = a, b, c
      made = made + 1
    end
    if kind == "strip" then
      for i = 0, n - 3 do
        local a = first + i
        if i % 2 == 1 then tri(a + 1, a, a + 2) else tri(a, a + 1, a + 2) end
      end
    elseif kind == "fan" then
      for i = 1, n - 2 do tri(first, first + i, first + i + 1) end
    else
      for i = 0, n - 3, 3 do tri(first + i, first + i + 1, first + i + 2) end
    end
    self:count(made)
  end

  -- Triangle fan: (0, i, i+1).
  function Builder:end_fan()
    local prim = self.prim
    local first, n = self.first, prim.nv - self.first
    local idx = prim.idx
    local k = #idx
    if prim.bad then return self:end_bad(nil, n, first, prim.bad, "fan") end
    for i = 1, n - 2 do
      idx[k + 1], idx[k + 2], idx[k + 3] = first, first + i, first + i + 1
      k = k + 3
    end
    if n >= 3 then self:count(n - 2) end
  end

  -- Triangle list.
  function Builder:end_list()
    local prim = self.prim
    local first, n = self.first, prim.nv - self.first
    local idx = prim.idx
    local k = #idx
    if prim.bad then return self:end_bad(nil, n, first, prim.bad, "list") end
    for i = 0, n - 3, 3 do
      idx[k + 1], idx[k + 2], idx[k + 3] = first + i, first + i + 1, first + i + 2
      k = k + 3
    end
    self:count(n // 3)
  end

  -- A planar polygon (fan of pts with uvs), turned to face `want` (a direction), and also
  -- its back when `both`.
  function Builder:face(m, pts, uvs, want, both)
    local a, b, c = pts[1], pts[2], pts[3]
    local ux, uy, uz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
    local vx, vy, vz = c[1] - a[1], c[2] - a[2], c[3] - a[3]
    local nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    if nx == 0 and ny == 0 and nz == 0 and pts[4] then
      c = pts[4]
      vx, vy, vz = c[1] - a[1], c[2] - a[2], c[3] - a[3]
      nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    end
    local flip = nx * want[1] + ny * want[2] + nz * want[3] < 0
    local n = #pts
    for pass = 1, both and 2 or 1 do
      self:begin(m)
      local reverse = (flip and pass == 1) or (not flip and pass == 2)
      self:vertex(pts[1], uvs[1][1], uvs[1][2])
      if reverse then
        for i = n, 2, -1 do self:vertex(pts[i], uvs[i][1], uvs[i][2]) end
      else
        for i = 2, n do self:vertex(pts[i], uvs[i][1], uvs[i][2]) end
      end
      self:end_fan()
    end
  end

  function Builder:v(i)
    return self.verts[i] or ZERO
  end

  function Builder:h(i)
    return self.heights[i] or 0
  end

  -- §4.3 ArcMap over list entries base + (i-1)*stride (0-based base), width to base+column.
  function Builder:arcmap(list, base, stride, count, column)
    local V = self.verts
    local s = { 0 }
    local width, length, longest = 0, 0, 1
    for i = 2, count do
      local a = V[list[(i - 2) * stride + base + 1]] or ZERO
      local c = V[list[(i - 2) * stride + base + column + 1]] or ZERO
      local b = V[list[(i - 1) * stride + base + 1]] or ZERO
      width = width + dist(a, c)
      local seg = dist(a, b)
      s[i] = seg
      length = length + seg
      if longest <= seg then longest = seg end
    end
    if count > 1 and width ~= 0 and length >= 0.1 then
      local repeats = floor(length / (width / count) + 0.5)
      if repeats < 1 then repeats = 1 end
      local scale = repeats / length
      if scale * longest > 128 then scale = 127 / longest end
      local run = 0
      for i = 2, count do
        if run > 0 then run = run - s[i] else run = run + s[i] end
        s[i] = run * scale
      end
    else
      for i = 2, count do s[i] = 0 end
    end
    return s
  end

  ------------------------------------------------------------------------ attributes

  local H = {} -- handlers by attribute type: H[type](builder, attr, room, index)

  -- Sidewalk (n+1) from outer to the raised curb, and the curb face (§2.4 0x0, LOD 3).
  function Builder:sidewalk_side(list, stride, n, outer, curb, left, s)
    local rise = M.CURB_RISE
    local m = self:tex(1)
    self:begin(m)
    for i = 0, n - 1 do
      local o, c = self:v(list[i * stride + outer + 1]), self:v(list[i * stride + curb + 1])
      if left then
        self:vertex(o, s[i + 1], 1); self:vertex(up(c, rise), s[i + 1], 0)
      else
        self:vertex(up(c, rise), s[i + 1], 0); self:vertex(o, s[i + 1], 1)
      end
    end
    self:end_strip()
    self:begin(m)
    for i = 0, n - 1 do
      local c = self:v(list[i * stride + curb + 1])
      if left then
        self:vertex(up(c, rise), s[i + 1], 0); self:vertex(c, s[i + 1], 0)
      else
        self:vertex(c, s[i + 1], 0); self:vertex(up(c, rise), s[i + 1], 0)
      end
    end
    self:end_strip()
  end

  -- The two road halves (n): l -> lm and rm -> r, meeting at the midpoint when split.
  function Builder:road_halves(list, stride, n, l, lm, rm, r, split)
    local s = self:arcmap(list, l, stride, n, 1)
    local m = self:tex(0)
    local function P(i, col) return self:v(list[i * stride + col + 1]) end
    self:begin(m)
    for i = 0, n - 1 do
      local a = P(i, l)
      local b = split and mid(a, P(i, r)) or P(i, lm)
      self:vertex(a, s[i + 1], 1); self:vertex(b, s[i + 1], 0)
    end
    self:end_strip()
    self:begin(m)
    for i = 0, n - 1 do
      local b = P(i, r)
      local a = split and mid(P(i, l), b) or P(i, rm)
      self:vertex(a, s[i + 1], 0); self:vertex(b, s[i + 1], 1)
    end
    self:end_strip()
  end

  H.road = function(B, attr)
    if B.value == 0 then return end
    local list = attr.vertices
    local n = #list // 4
    if n <= 0 then return end
    if list[1] ~= list[2] then B:sidewalk_side(list, 4, n, 0, 1, true, B:arcmap(list, 0, 4, n, 1)) end
    if list[3] ~= list[4] then B:sidewalk_side(list, 4, n, 3, 2, false, B:arcmap(list, 2, 4, n, 1)) end
    B:road_halves(list, 4, n, 1, 2, 2, 2, true)
  end

  function Builder:divider(attr, list, n)
    local kind = (attr.divider_type or 0) & 0x3F
    local D = attr.divider_texture or 0
    local h = attr.divider_value or 0
    local s = self:arcmap(list, 2, 6, n, 1)
    local function ml(i) return self:v(list[i * 6 + 3]) end
    local function mr(i) return self:v(list[i * 6 + 4]) end
    local function dtex(off)
      if self.parts then self.part = "divider#" .. off end
      return self:slot_material(D + off)
    end
    local last = n - 1
    if kind == 1 then
      self:begin(dtex(1))
      for i = 0, n - 1 do self:vertex(ml(i), s[i + 1], 0); self:vertex(mr(i), s[i + 1], h) end
      self:end_strip()
    elseif kind == 2 then
      self:begin(dtex(0))
      for i = 0, n - 1 do self:vertex(ml(i), s[i + 1], 0); self:vertex(up(ml(i), h), s[i + 1], h) end
      self:end_strip()
      self:begin(dtex(0))
      for i = 0, n - 1 do self:vertex(up(mr(i), h), s[i + 1], 0); self:vertex(mr(i), s[i + 1], 1) end
      self:end_strip()
      local function dir(i)
        local l, r = ml(i), mr(i)
        return normalized(l[1] - r[1], l[2] - r[2], l[3] - r[3])
      end
      self:begin(dtex(1))
      for i = 0, n - 1 do
        local dx, dy, dz = dir(i)
        local p = ml(i)
        self:vertex(up(p, h), s[i + 1], 0)
        self:vertex({ p[1] - h * dx, p[2] + h - h * dy, p[3] - h * dz }, s[i + 1], 1)
      end
      self:end_strip()
      self:begin(dtex(1))
      for i = 0, n - 1 do
        local dx, dy, dz = dir(i)
        local p = mr(i)
        self:vertex({ p[1] + h * dx, p[2] + h + h * dy, p[3] + h * dz }, s[i + 1], 1)
        self:vertex(up(p, h), s[i + 1], 0)
      end
      self:end_strip()
      self:begin(dtex(2))
      for i = 0, n - 1 do
        local dx, dy, dz = dir(i)
        local l, r = ml(i), mr(i)
        self:vertex({ l[1] - h * dx, l[2] + h - h * dy, l[3] - h * dz }, s[i + 1], 0)
        self:vertex({ r[1] + h * dx, r[2] + h - h * dy, r[3] + h * dz }, s[i + 1], 1)
      end
      self:end_strip()
      if attr.cap_start then
        self:begin(dtex(3))
        self:vertex(ml(0), 0, 0); self:vertex(mr(0), 1, 0)
        self:vertex(up(ml(0), h), 1, 1); self:vertex(up(mr(0), h), 0, 1)
        self:end_strip()
      end
      if attr.cap_end then
        self:begin(dtex(attr.cap_start and 3 or 2))
        self:vertex(mr(last), 0, 0); self:vertex(ml(last), 1, 0)
        self:vertex(up(mr(last), h), 1, 1); self:vertex(up(ml(last), h), 0, 1)
        self:end_strip()
      end
    elseif kind == 3 then
      local WH, WI = M.WEDGE_HEIGHT, M.WEDGE_INSET
      -- normalize(from - to) * k, raised by the wedge height
      local function inset(from, to, k)
        local dx, dy, dz = normalized(from[1] - to[1], from[2] - to[2], from[3] - to[3])
        return { dx * k, dy * k + WH, dz * k }
      end
      local function add(p, d) return { p[1] + d[1], p[2] + d[2], p[3] + d[3] } end
      local function mirrored(d) return { -d[1], d[2], -d[3] } end
      self:begin(dtex(1))
      for i = 0, n - 1 do
        self:vertex(ml(i), s[i + 1], 0); self:vertex(add(ml(i), inset(ml(i), mr(i), -WI)), s[i + 1], 1)
      end
      self:end_strip()
      self:begin(dtex(1))
      for i = 0, n - 1 do
        self:vertex(add(mr(i), inset(ml(i), mr(i), WI)), s[i + 1], 1); self:vertex(mr(i), s[i + 1], 0)
      end
      self:end_strip()
      self:begin(dtex(2))
      for i = 0, n - 1 do
        local d = inset(ml(i), mr(i), -WI)
        self:vertex(add(ml(i), d), s[i + 1], 0); self:vertex(add(mr(i), mirrored(d)), s[i + 1], 1)
      end
      self:end_strip()
      if attr.cap_start then
        local d = inset(ml(0), mr(0), -WI)
        self:begin(dtex(3))
        self:vertex(ml(0), 0, 0); self:vertex(mr(0), 1, 0)
        self:vertex(add(ml(0), d), 1, 1); self:vertex(add(mr(0), mirrored(d)), 0, 1)
        self:end_strip()
      end
      if attr.cap_end then
        local d = inset(mr(last), ml(last), -WI)
        self:begin(dtex(attr.cap_start and 3 or 2))
        self:vertex(mr(last), 0, 0); self:vertex(ml(last), 1, 0)
        self:vertex(add(mr(last), d), 1, 1); self:vertex(add(ml(last), mirrored(d)), 0, 1)
        self:end_strip()
      end
    end
    -- any other type: "Bad Median Type", nothing drawn
  end

  H.divided_road = function(B, attr)
    if B.value == 0 then return end
    local list = attr.vertices
    local n = #list // 6
    if n <= 0 then return end
    if list[1] ~= list[2] then B:sidewalk_side(list, 6, n, 0, 1, true, B:arcmap(list, 0, 6, n, 1)) end
    if list[5] ~= list[6] then B:sidewalk_side(list, 6, n, 5, 4, false, B:arcmap(list, 4, 6, n, 1)) end
    B:road_halves(list, 6, n, 1, 2, 3, 4, false)
    B:divider(attr, list, n)
  end

  H.sidewalk_strip = function(B, attr)
    if B.value == 0 then return end
    local list = attr.vertices
    local rise = M.CURB_RISE
    local m = B:tex(1)
    if attr.cap then
      local c, o = B:v(list[1]), B:v(list[2])
      local fx, fz = floor(c[1] * 0.25), floor(c[3] * 0.25)
      local cu, cv, ou, ov = c[1] * 0.25 - fx, c[3] * 0.25 - fz, o[1] * 0.25 - fx, o[3] * 0.25 - fz
      B:begin(m)
      if attr.cap == "start" then
        B:vertex(up(c, rise), cu, cv); B:vertex(o, ou, ov); B:vertex(c, cu, cv)
      else
        B:vertex(c, cu, cv); B:vertex(o, ou, ov); B:vertex(up(c, rise), cu, cv)
      end
      B:end_list()
      return
    end
    local n = #list // 2
    if n <= 0 then return end
    local c0 = B:v(list[1])
    local fx, fz = floor(c0[1] * 0.25), floor(c0[3] * 0.25)
    B:begin(m)
    for i = 0, n - 1 do
      local c = B:v(list[2 * i + 1])
      local u, v = c[1] * 0.25 - fx, c[3] * 0.25 - fz
      B:vertex(c, u, v); B:vertex(up(c, rise), u, v)
    end
    B:end_strip()
    B:begin(m)
    for i = 0, n - 1 do
      local c, o = B:v(list[2 * i + 1]), B:v(list[2 * i + 2])
      B:vertex(up(c, rise), c[1] * 0.25 - fx, c[3] * 0.25 - fz)
      B:vertex(o, o[1] * 0.25 - fx, o[3] * 0.25 - fz)
    end
    B:end_strip()
  end

  H.walkway = function(B, attr)
    if B.value == 0 then return end
    local list = attr.vertices
    local n = #list // 2
    if n <= 0 then return end
    local s = B:arcmap(list, 0, 2, n, 1)
    B:begin(B:tex(0))
    for i = 0, n - 1 do
      B:vertex(B:v(list[2 * i + 1]), s[i + 1], 0); B:vertex(B:v(list[2 * i + 2]), s[i + 1], 1)
    end
    B:end_strip()
  end

  H.sliver = function(B, attr)
    local list = attr.vertices
    local p0, p1 = B:v(list[1]), B:v(list[2])
    local top, density = B:h(attr.top), B:h(attr.density)
    local u = floor(flat_dist(p1, p0) * density + 0.5)
    local v0, v1 = (p0[2] - top) * density, (p1[2] - top) * density
    B:begin(B:tex(0))
    if v0 == 0 then
      if v1 == 0 then return end
      B:vertex(p0, 0, 0); B:vertex(p1, u, v1); B:vertex({ p1[1], top, p1[3] }, u, 0)
    elseif v1 ~= 0 then
      B:vertex(p0, 0, v0); B:vertex(p1, u, v1)
      B:vertex({ p1[1], top, p1[3] }, u, 0); B:vertex({ p0[1], top, p0[3] }, 0, 0)
    else
      B:vertex(p0, 0, v0); B:vertex(p1, u, 0); B:vertex({ p0[1], top, p0[3] }, 0, 0)
    end
    B:end_fan()
  end

  H.crosswalk = function(B, attr)
    if B.value == 0 then return end
    local list = attr.vertices
    if #list < 4 then return end
    local c0, c1, c2, c3 = B:v(list[1]), B:v(list[2]), B:v(list[3]), B:v(list[4])
    local width = list[1] == list[2] and dist(c2, c3) or dist(c0, c1)
    local r = width ~= 0 and dist(c0, c2) / width or 0
    B:begin(B:tex(2))
    B:vertex(c1, 0, 0); B:vertex(c0, 1, 0); B:vertex(c3, 0, r); B:vertex(c2, 1, r)
    B:end_strip()
  end

  local function fan(B, attr, y)
    local list = attr.vertices
    if #list < 3 then return end
    local first = B:v(list[1])
    local fx, fz = floor(first[1] * 0.125), floor(first[3] * 0.125)
    B:begin(B:tex(0))
    for i = 1, #list do
      local p = B:v(list[i])
      if y then p = { p[1], y, p[3] } end
      B:vertex(p, p[1] * 0.125 - fx, p[3] * 0.125 - fz)
    end
    B:end_fan()
  end

  H.road_fan = function(B, attr) if B.value ~= 0 then fan(B, attr) end end
  H.fan = H.road_fan
  H.roof = function(B, attr) fan(B, attr, B:h(attr.height)) end

  H.facade = function(B, attr)
    local list = attr.vertices
    local p0, p1 = B:v(list[1]), B:v(list[2])
    local bottom, top = B:h(attr.bottom), B:h(attr.top)
    local u, v = attr.u_repeat or 1, attr.v_repeat or 1
    B:begin(B:tex(0))
    B:vertex({ p0[1], bottom, p0[3] }, 0, 0)
    B:vertex({ p1[1], bottom, p1[3] }, u, 0)
    B:vertex({ p1[1], top, p1[3] }, u, v)
    B:vertex({ p0[1], top, p0[3] }, 0, v)
    B:end_fan()
  end

  -- Strip tunnels: walls along the next strip's outer edges (see the module table).
  local STRIDE = { road = 4, divided_road = 6, walkway = 2 }

  H.tunnel = function(B, attr, room, index)
    if B.value == 0 then return end
    local h = attr.height1
    if type(h) ~= "number" or not (h > 0) then return end
    local flags = attr.flags or 0
    local attrs = room.attributes
    local k = index + 1
    if attrs[k] and attrs[k].type == "texture" then k = k + 1 end
    local strip = attrs[k]
    local stride = strip and STRIDE[strip.type]
    if not stride then return end
    local list = strip.vertices
    local n = #list // stride
    if n < 2 then return end
    local function P(i, col) return B:v(list[i * stride + col + 1]) end

    local E, F, C, OL, OR = {}, {}, {}, {}, {}
    local off = h * M.RAILING_OFFSET
    local function outward(p, q, other)
      local dx, dz = p[1] - q[1], p[3] - q[3]
      if dx == 0 and dz == 0 then dx, dz = p[1] - other[1], p[3] - other[3] end
      local m = sqrt(dx * dx + dz * dz)
      if m == 0 then return { p[1], p[2], p[3] }, 0, 0 end
      return { p[1] + dx / m * off, p[2], p[3] + dz / m * off }, dx / m, dz / m
    end
    local DL, DR = {}, {}
    for i = 0, n - 1 do
      local e, f = P(i, 0), P(i, stride - 1)
      E[i], F[i], C[i] = e, f, mid(e, f)
      local dlx, dlz, drx, drz
      OL[i], dlx, dlz = outward(e, P(i, 1), f)
      OR[i], drx, drz = outward(f, P(i, stride - 2), e)
      DL[i], DR[i] = { dlx, dlz }, { drx, drz }
    end
    -- length along the edge, for UVs
    local function runs(line)
      local s = { [0] = 0 }
      for i = 1, n - 1 do s[i] = s[i - 1] + flat_dist(line[i - 1], line[i]) / h end
      return s
    end
    local both = flags & 0x4000 ~= 0
    local sloped = flags & 0x2000 ~= 0
    local thick = flags & 0x4 ~= 0 and not sloped

    local function wall(line, D, m)
      local s = runs(line)
      for i = 0, n - 2 do
        local a, b = line[i], line[i + 1]
        local c = mid(C[i], C[i + 1])
        local want = { c[1] - (a[1] + b[1]) / 2, 0, c[3] - (a[3] + b[3]) / 2 }
        if sloped then
          -- base, out at 1/4 and 3/4 height, back in at the top
          local function at(p, d, frac, out)
            return { p[1] + d[1] * out, p[2] + h * frac, p[3] + d[2] * out }
          end
          local prof = { { 0, 0 }, { 0.25, off }, { 0.75, off }, { 1, 0 } }
          for j = 1, 3 do
            local f0, o0, f1, o1 = prof[j][1], prof[j][2], prof[j + 1][1], prof[j + 1][2]
            B:face(m, { at(a, D[i], f0, o0), at(b, D[i + 1], f0, o0), at(b, D[i + 1], f1, o1), at(a, D[i], f1, o1) },
              { { s[i], 1 - f0 }, { s[i + 1], 1 - f0 }, { s[i + 1], 1 - f1 }, { s[i], 1 - f1 } }, want, both)
          end
        else
          B:face(m, { a, b, up(b, h), up(a, h) }, { { s[i], 1 }, { s[i + 1], 1 }, { s[i + 1], 0 }, { s[i], 0 } },
            want, both)
        end
      end
    end
    local function thick_side(edge, outer, m, cap_start, cap_end)
      local s = runs(outer)
      local q = h * 0.25
      for i = 0, n - 2 do
        local a, b = outer[i], outer[i + 1]
        local want = { (a[1] + b[1]) / 2 - (C[i][1] + C[i + 1][1]) / 2, 0, (a[3] + b[3]) / 2 - (C[i][3] + C[i + 1][3]) / 2 }
        B:face(m, { up(a, -q), up(b, -q), up(b, h), up(a, h) },
          { { s[i], 1.25 }, { s[i + 1], 1.25 }, { s[i + 1], 0 }, { s[i], 0 } }, want)
        B:face(m, { up(edge[i], h), up(edge[i + 1], h), up(b, h), up(a, h) },
          { { s[i], 0 }, { s[i + 1], 0 }, { s[i + 1], 0.333 }, { s[i], 0.333 } }, { 0, 1, 0 })
      end
      local function cap(i, j)
        local e, o = edge[i], outer[i]
        local want = { e[1] - edge[j][1], 0, e[3] - edge[j][3] }
        B:face(m, { e, up(o, -q), up(o, h), up(e, h) }, { { 0, 1 }, { 0.333, 1.25 }, { 0.333, 0 }, { 0, 0 } }, want)
      end
      if cap_start then cap(0, 1) end
      if cap_end then cap(n - 1, n - 2) end
    end

    if flags & 0x1 ~= 0 then wall(E, DL, B:tex(0)) end
    if flags & 0x2 ~= 0 then wall(F, DR, B:tex(1)) end
    local left_line, right_line = E, F
    if thick then
      if flags & 0x1 ~= 0 then
        thick_side(E, OL, B:tex(4), flags & 0x10 ~= 0, flags & 0x20 ~= 0)
        left_line = OL
      end
      if flags & 0x2 ~= 0 then
        thick_side(F, OR, B:tex(3), flags & 0x40 ~= 0, flags & 0x80 ~= 0)
        right_line = OR
      end
      -- the deck under the road, between the outer lines
      local s = runs(C)
      local q = h * 0.25
      local m = B:tex(5)
      for i = 0, n - 2 do
        B:face(m, { up(left_line[i], -q), up(left_line[i + 1], -q), up(right_line[i + 1], -q), up(right_line[i], -q) },
          { { s[i], 0 }, { s[i + 1], 0 }, { s[i + 1], 1 }, { s[i], 1 } }, { 0, -1, 0 })
      end
    end
    if flags & 0x100 ~= 0 or flags & 0x8 ~= 0 then
      local s = runs(C)
      local m = B:tex(2)
      local fr, rise
      if flags & 0x100 ~= 0 then
        fr, rise = { 0, 0.25, 0.5, 0.75, 1 }, { 0, 1.5, 2, 1.5, 0 }
      else
        fr, rise = { 0, 1 }, { 0, 0 }
      end
      local function at(i, j)
        local e, f, t = E[i], F[i], fr[j]
        return { e[1] + (f[1] - e[1]) * t, e[2] + (f[2] - e[2]) * t + h + rise[j], e[3] + (f[3] - e[3]) * t }
      end
      for i = 0, n - 2 do
        for j = 1, #fr - 1 do
          B:face(m, { at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1) },
            { { s[i], fr[j] }, { s[i + 1], fr[j] }, { s[i + 1], fr[j + 1] }, { s[i], fr[j + 1] } }, { 0, -1, 0 })
        end
      end
    end
  end

  H.junction_tunnel = function(B, attr, room)
    if B.value == 0 then return end
    local h = attr.height1
    if type(h) ~= "number" or not (h > 0) then return end
    local flags = attr.flags or 0
    local per = room.perimeter or {}
    local n = #per
    if n < 2 then return end
    local P = {}
    local cx, cz, top = 0, 0, -huge
    for j = 1, n do
      local p = B:v(per[j].vertex)
      P[j] = p
      cx, cz = cx + p[1], cz + p[3]
      if p[2] > top then top = p[2] end
    end
    cx, cz = cx / n, cz / n
    local mask = attr.wall_mask or 0
    local both = flags & 0x4000 ~= 0 and flags & 0x4 == 0
    local m = B:tex(0)
    for j = 0, n - 1 do
      if mask & (1 << (j & 31)) ~= 0 then
        local a, b = P[(j - 1) % n + 1], P[j + 1]
        local want = { cx - (a[1] + b[1]) / 2, 0, cz - (a[3] + b[3]) / 2 }
        local len = flat_dist(a, b) / h
        B:face(m, { a, b, up(b, h), up(a, h) }, { { 0, 1 }, { len, 1 }, { len, 0 }, { 0, 0 } }, want, both)
      end
    end
    if flags & 0x8 ~= 0 and n >= 3 then
      local y = top + h
      local start = attr.ceiling_start or 1
      local pts, uvs = {}, {}
      local hub = P[(start - 1) % n + 1]
      local fx, fz = floor(hub[1] * 0.125), floor(hub[3] * 0.125)
      for t = 0, n - 1 do
        local p = P[(start - 1 - t) % n + 1]
        pts[#pts + 1] = { p[1], y, p[3] }
        uvs[#uvs + 1] = { p[1] * 0.125 - fx, p[3] * 0.125 - fz }
      end
      B:face(B:tex(2), pts, uvs, { 0, -1, 0 })
    end
  end

  return {
    Builder = Builder,
    H = H,
  }
end
