-- Export to OBJ / glTF / GLB: lua/psdl/export/ and `psdl export`.
local psdl = require "psdl"
local export = require "psdl.export"
local cjson = require "cjson"
local mime = require "mime"
local lfs = require "lfs"
local H = require "helper"

local unpack = string.unpack

local function f32(x) return (unpack("<f", string.pack("<f", x))) end

------------------------------------------------------------------------ building documents

local TEXTURES = { "r4_f", "swalk_f", "r4_lo", "xwalk", "t5", "t6", "t7", "t8", "t9", "t10" }

local function new_doc()
  return {
    magic = "PSD0", target_size = 2, vertices = { { 0, -0.15, 0 } }, heights = { 0, 5, 10, 0.25, 12 },
    textures = { table.unpack(TEXTURES) }, first_road_room = 0, room0 = { flags = 0, prop_rule = 0xCD },
    rooms = {}, bounds = { min = { 0, 0, 0 }, max = { 1, 1, 1 }, center = { 0, 0, 0 }, radius = 1 }, roads = {},
  }
end

local function vert(doc, x, y, z)
  doc.vertices[#doc.vertices + 1] = { x, y, z }
  return #doc.vertices
end

-- A strip of s sections along +z (10 m apart); cols = {{x, y} | "=" (the previous column's vertex)}.
local function strip(doc, cols, s)
  local list = {}
  for k = 0, s - 1 do
    for _, c in ipairs(cols) do
      if c == "=" then list[#list + 1] = list[#list] else list[#list + 1] = vert(doc, c[1], c[2], 10 * k) end
    end
  end
  return list
end

local ROAD = { { 10, 0.15 }, { 7, 0 }, { -7, 0 }, { -10, 0.15 } }
local DIVIDED = { { 12, 0.15 }, { 9, 0 }, { 1, 0 }, { -1, 0 }, { -9, 0 }, { -12, 0.15 } }

local function room(doc, attrs, perimeter)
  doc.rooms[#doc.rooms + 1] = { flags = 8, prop_rule = 0, perimeter = perimeter or {}, attributes = attrs }
  return #doc.rooms
end

local function tex(v) return { type = "texture", value = v } end

-- Triangles made by each attribute of the single room: {[attribute index] = n}.
local function counts(doc)
  local mesh = export.build(doc, { attribute_counts = true })
  return mesh.stats.attributes[1], mesh
end

-- Triangles of the attribute at index a of a one-room document with attributes attrs.
local function triangles(doc, attrs, a, perimeter)
  room(doc, attrs, perimeter)
  return counts(doc)[a] or 0
end

-- Every triangle of a mesh: {{a = {x,y,z}, b =, c =, material =, uv = {{s,t}...}}...}.
local function all_triangles(mesh)
  local out = {}
  for _, g in ipairs(mesh.groups) do
    for _, p in ipairs(g.prims) do
      local function P(i) return { p.pos[3 * i + 1], p.pos[3 * i + 2], p.pos[3 * i + 3] } end
      local function UV(i) return { p.uv[2 * i + 1], p.uv[2 * i + 2] } end
      for k = 1, #p.idx, 3 do
        local i, j, l = p.idx[k], p.idx[k + 1], p.idx[k + 2]
        out[#out + 1] = { P(i), P(j), P(l), uv = { UV(i), UV(j), UV(l) },
          material = mesh.materials[p.material].name }
      end
    end
  end
  return out
end

local function normal(t)
  local a, b, c = t[1], t[2], t[3]
  local ux, uy, uz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
  local vx, vy, vz = c[1] - a[1], c[2] - a[2], c[3] - a[3]
  return { uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx }
end

local run = H.cli

local function tmpdir() return H.tmpdir(finally) end

------------------------------------------------------------------------ checking files

local COMPONENT_SIZE = { [5126] = 4, [5125] = 4, [5123] = 2, [5121] = 1 }
local TYPE_SIZE = { SCALAR = 1, VEC2 = 2, VEC3 = 3, VEC4 = 4 }

-- Check a glTF document and its buffer; returns the total triangle count. (Plain checks
-- collected into one list: tens of thousands of accessors in grid_n20.)
local function check_gltf(j, bin)
  assert.equal("2.0", j.asset.version)
  if not j.buffers then
    assert.is_nil(j.accessors)
    return 0
  end
  local problems = {}
  local function check(cond, fmt, ...)
    if not cond and #problems < 10 then problems[#problems + 1] = string.format(fmt, ...) end
  end
  assert.equal(1, #j.buffers)
  assert.equal(#bin, j.buffers[1].byteLength)
  for i, v in ipairs(j.bufferViews) do
    check(v.buffer == 0, "view %d: buffer", i)
    check(v.byteOffset % 4 == 0, "view %d: offset %d not aligned", i, v.byteOffset)
    check(v.byteLength > 0 and v.byteOffset + v.byteLength <= #bin, "view %d: past the buffer", i)
  end
  local function read_accessor(i)
    local acc = j.accessors[i + 1]
    local view = j.bufferViews[acc.bufferView + 1]
    local csize = COMPONENT_SIZE[acc.componentType]
    local n = TYPE_SIZE[acc.type]
    local stride = view.byteStride or csize * n
    local off = acc.byteOffset or 0
    check(off % csize == 0, "accessor %d: offset %d not aligned", i, off)
    check(acc.count > 0, "accessor %d: empty", i)
    check(off + stride * (acc.count - 1) + csize * n <= view.byteLength, "accessor %d: past its view", i)
    local fmt = (acc.componentType == 5126 and "<" .. string.rep("f", n)) or "<" .. string.rep("I4", n)
    local values = {}
    for k = 0, acc.count - 1 do
      local a, b, c = unpack(fmt, bin, view.byteOffset + off + k * stride + 1)
      values[#values + 1] = a
      if n > 1 then values[#values + 1] = b end
      if n > 2 then values[#values + 1] = c end
    end
    return acc, values
  end
  local tris = 0
  for mi, m in ipairs(j.meshes) do
    for pi, p in ipairs(m.primitives) do
      local where = string.format("meshes[%d].primitives[%d]", mi - 1, pi - 1)
      check(p.mode == 4, "%s: mode", where)
      check(j.materials[p.material + 1] ~= nil, "%s: material", where)
      local pos_acc, pos = read_accessor(p.attributes.POSITION)
      check(pos_acc.type == "VEC3", "%s: POSITION type", where)
      local mn, mx = { math.huge, math.huge, math.huge }, { -math.huge, -math.huge, -math.huge }
      for k = 0, pos_acc.count - 1 do
        for c = 1, 3 do
          local x = pos[3 * k + c]
          if x < mn[c] then mn[c] = x end
          if x > mx[c] then mx[c] = x end
        end
      end
      -- JSON holds them to 14 digits: the same single-precision floats
      for c = 1, 3 do
        check(mn[c] == f32(pos_acc.min[c]) and mx[c] == f32(pos_acc.max[c]), "%s: POSITION min/max", where)
      end
      local uv_acc = read_accessor(p.attributes.TEXCOORD_0)
      check(uv_acc.count == pos_acc.count, "%s: TEXCOORD_0 count", where)
      local idx_acc, idx = read_accessor(p.indices)
      check(idx_acc.componentType == 5125 and idx_acc.count % 3 == 0, "%s: indices", where)
      for _, v in ipairs(idx) do
        if v >= pos_acc.count then check(false, "%s: index %d out of range", where, v) break end
      end
      tris = tris + idx_acc.count // 3
    end
  end
  assert.same({}, problems)
  return tris
end

local function read_glb(bytes)
  local magic, version, length = unpack("<I4I4I4", bytes)
  assert.equal(0x46546C67, magic)
  assert.equal(2, version)
  assert.equal(#bytes, length)
  local jlen, jtype = unpack("<I4I4", bytes, 13)
  assert.equal(0x4E4F534A, jtype)
  assert.equal(0, jlen % 4)
  local j = cjson.decode(bytes:sub(21, 20 + jlen))
  local bin = ""
  if 20 + jlen < #bytes then
    local blen, btype = unpack("<I4I4", bytes, 21 + jlen)
    assert.equal(0x004E4942, btype)
    assert.equal(0, blen % 4)
    assert.equal(#bytes, 28 + jlen + blen)
    bin = bytes:sub(29 + jlen, 28 + jlen + j.buffers[1].byteLength)
    assert.is_true(blen - j.buffers[1].byteLength < 4)
  end
  return j, bin
end

local function read_gltf(path)
  local j = cjson.decode(H.read_bytes(path))
  local bin = ""
  if j.buffers then
    local uri = j.buffers[1].uri
    local data = uri:match("^data:application/octet%-stream;base64,(.*)$")
    if data then bin = mime.unb64(data) else bin = H.read_bytes(path:match("^(.*/)") .. uri) end
  end
  return j, bin
end

------------------------------------------------------------------------ specs

describe("psdl.export triangles at full detail", function()
  describe("road strips", function()
    it("make 2(s-1) per road half and 4(s-1) per sidewalk side (walk + curb face)", function()
      for s = 1, 5 do
        local doc = new_doc()
        assert.equal(4 * (s - 1) + 8 * (s - 1), triangles(doc, { tex(1), { type = "road", vertices = strip(doc, ROAD, s) } }, 2))
      end
      local doc = new_doc()
      local cols = { { 7, 0 }, "=", { -7, 0 }, { -10, 0.15 } } -- no left sidewalk
      assert.equal(4 * 4 + 4 * 4, triangles(doc, { tex(1), { type = "road", vertices = strip(doc, cols, 5) } }, 2))
      doc = new_doc()
      cols = { { 7, 0 }, "=", { -7, 0 }, "=" }
      assert.equal(4 * 4, triangles(doc, { tex(1), { type = "road", vertices = strip(doc, cols, 5) } }, 2))
    end)

    it("raise the curb line 0.15 m, meet at the curbs' midpoint, face up and use slots n, n+1", function()
      local doc = new_doc()
      room(doc, { tex(1), { type = "road", vertices = strip(doc, ROAD, 3) } })
      local _, mesh = counts(doc)
      local ys, xs_road = {}, {}
      for _, t in ipairs(all_triangles(mesh)) do
        local n = normal(t)
        for _, p in ipairs { t[1], t[2], t[3] } do
          if t.material == "swalk_f" then ys[string.format("%.2f", p[2])] = true end
          if t.material == "r4_f" then xs_road[p[1]] = true end
        end
        if t.material == "r4_f" or (t.material == "swalk_f" and n[2] ~= 0) then
          assert.is_true(n[2] > 0) -- the game's front faces point up (psdl-format.md §4.2)
        end
      end
      assert.same({ ["0.00"] = true, ["0.15"] = true }, ys)
      assert.same({ [7] = true, [0] = true, [-7] = true }, xs_road)
    end)

    it("are not drawn under texture value 0 or before any texture attribute", function()
      local doc = new_doc()
      local c = counts(doc) -- no rooms yet
      assert.is_nil(c)
      room(doc, {
        { type = "road", vertices = strip(doc, ROAD, 3) },
        tex(0), { type = "road", vertices = strip(doc, ROAD, 3) },
        { type = "facade", bottom = 1, top = 2, u_repeat = 1, v_repeat = 1, vertices = { 2, 3 } },
        { type = "roof", height = 2, vertices = { 2, 3, 4, 5 } },
      })
      c = counts(doc)
      assert.same({ [1] = 0, [3] = 0, [4] = 2, [5] = 2 }, c)
      local _, mesh = counts(doc)
      assert.equal("(untextured)", mesh.materials[1].name)
    end)
  end)

  describe("divided roads", function()
    local function divided(kind, caps)
      local doc = new_doc()
      return triangles(doc, { tex(1), {
        type = "divided_road", divider_type = kind, cap_start = caps, cap_end = caps, divider_texture = 4,
        divider_value = 0.5, vertices = strip(doc, DIVIDED, 4),
      } }, 2)
    end

    it("make the road part as a road strip plus the divider by type", function()
      local road = 12 * 3
      assert.equal(road + 2 * 3, divided(1, false))
      assert.equal(road + 2 * 3, divided(1, true)) -- flat dividers have no caps
      assert.equal(road + 10 * 3, divided(2, false))
      assert.equal(road + 10 * 3 + 4, divided(2, true))
      assert.equal(road + 6 * 3, divided(3, false))
      assert.equal(road + 6 * 3 + 4, divided(3, true))
      assert.equal(road, divided(0, true)) -- "Bad Median Type": no divider
    end)

    it("raise an elevated divider by its height and a wedge 1.0 m, with textures D..D+3", function()
      for _, case in ipairs { { 2, 0.5 }, { 3, 1.0 } } do
        local doc = new_doc()
        room(doc, { tex(1), {
          type = "divided_road", divider_type = case[1], cap_start = true, cap_end = true, divider_texture = 4,
          divider_value = 0.5, vertices = strip(doc, DIVIDED, 3),
        } })
        local _, mesh = counts(doc)
        local top, mats = -1, {}
        for _, t in ipairs(all_triangles(mesh)) do
          if t.material:match("^xwalk$") or t.material:match("^t[5-7]$") then
            mats[t.material] = true
            for k = 1, 3 do top = math.max(top, t[k][2]) end
          end
        end
        assert.near(case[2], top, 1e-9)
        assert.is_true(mats.t7) -- the caps, slot D+3
      end
    end)
  end)

  describe("sidewalk strips", function()
    it("make 4(p-1) for p pairs and one triangle per end cap", function()
      local doc = new_doc()
      local list = strip(doc, { { 7, 0 }, { 10, 0.15 } }, 3)
      assert.equal(8, triangles(doc, { tex(1), { type = "sidewalk_strip", vertices = list } }, 2))
      doc = new_doc()
      room(doc, { tex(1),
        { type = "sidewalk_strip", cap = "start", vertices = { vert(doc, 7, 0, 0), vert(doc, 10, 0.15, 0) } },
        { type = "sidewalk_strip", cap = "end", vertices = { vert(doc, 7, 0, 20), vert(doc, 10, 0.15, 20) } },
      })
      local c, mesh = counts(doc)
      assert.same({ [2] = 1, [3] = 1 }, c)
      local t = all_triangles(mesh)
      -- start: (curb raised, outer, curb); end: (curb, outer, curb raised)
      assert.same({ { 7, 0.15, 0 }, { 10, 0.15, 0 }, { 7, 0, 0 } }, { t[1][1], t[1][2], t[1][3] })
      assert.same({ { 7, 0, 20 }, { 10, 0.15, 20 }, { 7, 0.15, 20 } }, { t[2][1], t[2][2], t[2][3] })
      assert.equal("swalk_f", t[1].material)
    end)

    it("map UVs planar, 4 m per repeat from the first curb vertex", function()
      local doc = new_doc()
      room(doc, { tex(1), { type = "sidewalk_strip", vertices = strip(doc, { { 7, 0 }, { 10, 0.15 } }, 2) } })
      local _, mesh = counts(doc)
      for _, t in ipairs(all_triangles(mesh)) do
        for k = 1, 3 do
          assert.near(t[k][1] / 4 - 1, t.uv[k][1], 1e-12)
          assert.near(t[k][3] / 4, t.uv[k][2], 1e-12)
        end
      end
    end)
  end)

  describe("other attributes", function()
    it("make walkways 2(p-1), crosswalks 2, fans and roofs k-2, facades 2", function()
      local doc = new_doc()
      local ring = { vert(doc, 0, 0, 0), vert(doc, 10, 0, 0), vert(doc, 12, 0, 5), vert(doc, 10, 0, 10),
        vert(doc, 0, 0, 10), vert(doc, -2, 0, 5) }
      room(doc, {
        tex(1),
        { type = "walkway", vertices = strip(doc, { { 0, 0 }, { 2, 0 } }, 4) },
        { type = "crosswalk", vertices = { ring[1], ring[2], ring[5], ring[4] } },
        { type = "road_fan", vertices = ring },
        { type = "fan", vertices = { ring[1], ring[2], ring[3], ring[4], ring[5] } },
        { type = "roof", height = 3, vertices = { ring[1], ring[2], ring[3], ring[4], ring[5] } },
        { type = "facade", bottom = 1, top = 3, u_repeat = 4, v_repeat = 3, vertices = { ring[1], ring[2] } },
        { type = "facade_bound", light = 0, top = 3, vertices = { ring[1], ring[2] } },
        { type = "unknown", words = { 0xD0 } },
      })
      assert.same({ [2] = 6, [3] = 2, [4] = 4, [5] = 3, [6] = 3, [7] = 2, [8] = 0, [9] = 0 }, (counts(doc)))
    end)

    it("put facades at the base x, z between the heights, roofs at their height", function()
      local doc = new_doc()
      local a, b = vert(doc, 0, 3, 0), vert(doc, 10, -2, 0)
      room(doc, {
        tex(8),
        { type = "facade", bottom = 1, top = 3, u_repeat = 4, v_repeat = 3, vertices = { a, b } },
        { type = "roof", height = 5, vertices = { a, b, vert(doc, 10, 7, 10), vert(doc, 0, 1, 10) } },
      })
      local _, mesh = counts(doc)
      local tris = all_triangles(mesh)
      for i = 1, 2 do
        for k = 1, 3 do
          local p, uv = tris[i][k], tris[i].uv[k]
          assert.is_true(p[2] == 0 or p[2] == 10)
          assert.equal(0, p[3])
          assert.is_true((p[1] == 0 and uv[1] == 0) or (p[1] == 10 and uv[1] == 4))
          assert.equal(p[2] == 0 and 0 or 3, uv[2])
        end
        assert.equal("t8", tris[i].material)
        -- facing (-dz, 0, dx) = (0, 0, 10): the side the game shows (§2.4 0xB)
        assert.is_true(normal(tris[i])[3] > 0)
      end
      for i = 3, 4 do
        for k = 1, 3 do assert.equal(12, tris[i][k][2]) end
      end
    end)

    it("make slivers a quad, a triangle when a base is at the top, nothing when both are", function()
      local doc = new_doc()
      local a, b, c = vert(doc, 0, 0, 0), vert(doc, 10, 0, 0), vert(doc, 20, 10, 0)
      local d = vert(doc, 30, 10, 0)
      room(doc, {
        tex(1),
        { type = "sliver", top = 3, density = 4, vertices = { a, b } },
        { type = "sliver", top = 3, density = 4, vertices = { b, c } },
        { type = "sliver", top = 3, density = 4, vertices = { c, d } },
      })
      assert.same({ [2] = 2, [3] = 1, [4] = 0 }, (counts(doc)))
    end)

    it("repeat a crosswalk's texture by its length over its width", function()
      local doc = new_doc()
      room(doc, { tex(2), { type = "crosswalk",
        vertices = { vert(doc, 0, 0, 0), vert(doc, 4, 0, 0), vert(doc, 0, 0, 12), vert(doc, 4, 0, 12) } } })
      local _, mesh = counts(doc)
      local t = all_triangles(mesh)
      assert.equal(2, #t)
      local vmax = 0
      for _, tri in ipairs(t) do
        assert.equal("xwalk", tri.material) -- slot n+2
        for k = 1, 3 do vmax = math.max(vmax, tri.uv[k][2]) end
      end
      assert.equal(3, vmax) -- |c0 - c2| / |c0 - c1| = 12 / 4
    end)
  end)

  describe("tunnels", function()
    local function tunnel(flags, h1, opts)
      opts = opts or {}
      local doc = new_doc()
      local attrs = { tex(5), { type = "tunnel", flags = flags, height1 = h1, height2 = 7 } }
      if opts.texture_between then attrs[#attrs + 1] = tex(1) end
      attrs[#attrs + 1] = opts.next or { type = "road", vertices = strip(doc, ROAD, 5) }
      return triangles(doc, attrs, 2)
    end

    it("make walls, thick walls, caps, deck and ceilings by the flags", function()
      assert.equal(2 * 4, tunnel(0x1, 5.5))
      assert.equal(2 * 2 * 4, tunnel(0x3, 5.5))
      assert.equal(2 * 2 * 2 * 4, tunnel(0x4003, 5.5)) -- walls seen from both sides
      assert.equal(2 * 6 * 4, tunnel(0x2003, 5.5)) -- sloped (curved) sides
      assert.equal(2 * 2 * 4 + 2 * 4 * 4 + 2 * 4, tunnel(0x7, 5.5)) -- thick: outer faces, tops, deck
      assert.equal(2 * 2 * 4 + 2 * 4 * 4 + 2 * 4 + 4 * 2, tunnel(0xF7, 5.5)) -- + 4 end caps
      assert.equal(2 * 4 + 2 * 4, tunnel(0x9, 5.5)) -- flat ceiling
      assert.equal(8 * 4, tunnel(0x100, 5.5)) -- curved ceiling
      assert.equal(22 * 4, tunnel(0x107, 5.5)) -- the fixtures' tunnels
      assert.equal(0, tunnel(0x107, 0))
    end)

    it("describe the next road, divided road or walkway, skipping one texture attribute", function()
      assert.equal(2 * 2 * 4, tunnel(0x3, 5, { texture_between = true }))
      local doc = new_doc()
      local walk = { type = "walkway", vertices = strip(doc, { { 0, 0 }, { 3, 0 } }, 3) }
      local attrs = { tex(5), { type = "tunnel", flags = 0x3, height1 = 4, height2 = 7 }, walk }
      assert.equal(2 * 2 * 2, triangles(doc, attrs, 2))
      doc = new_doc()
      attrs = { tex(5), { type = "tunnel", flags = 0x3, height1 = 4, height2 = 7 },
        { type = "fan", vertices = { vert(doc, 0, 0, 0), vert(doc, 1, 0, 0), vert(doc, 1, 0, 1) } } }
      assert.equal(0, triangles(doc, attrs, 2))
    end)

    it("turn walls to the road, ceilings down, and use slots n..n+5", function()
      local doc = new_doc()
      room(doc, { tex(5), { type = "tunnel", flags = 0x1FF, height1 = 5, height2 = 7 },
        tex(1), { type = "road", vertices = strip(doc, ROAD, 3) } })
      local _, mesh = counts(doc)
      local mats = {}
      for _, t in ipairs(all_triangles(mesh)) do
        mats[t.material] = true
        local n = normal(t)
        local cx = (t[1][1] + t[2][1] + t[3][1]) / 3
        if t.material == "t5" or t.material == "t6" then -- the walls (n, n+1) face the centre line
          assert.is_true(n[1] * -cx > 0)
          assert.near(0, n[2], 1e-9)
        elseif t.material == "t7" then -- the ceiling (n+2) faces down
          assert.is_true(n[2] < 0)
        elseif t.material == "t10" then -- the deck (n+5) faces down
          assert.is_true(n[2] < 0)
        end
      end
      for _, m in ipairs { "t5", "t6", "t7", "t8", "t9", "t10", "r4_f", "swalk_f" } do assert.is_true(mats[m], m) end
    end)

    it("put junction walls on the masked perimeter edges and a ceiling with flag 0x8", function()
      local function junction(flags, mask, h1, npoints)
        local doc = new_doc()
        local per = {}
        for j = 1, npoints or 6 do
          local a = 2 * math.pi * j / (npoints or 6)
          per[j] = { vertex = vert(doc, 10 * math.cos(a), 0, -10 * math.sin(a)), neighbour = 0 }
        end
        return triangles(doc, { tex(5), { type = "junction_tunnel", flags = flags, height1 = h1, height2 = 0,
          ceiling_start = 1, wall_mask = mask, mask1 = 0, mask2 = 0 } }, 2, per)
      end
      assert.equal(4 * 2, junction(0x3, 0x2D, 6)) -- bits 0, 2, 3, 5
      assert.equal(4 * 4, junction(0x4003, 0x2D, 6))
      assert.equal(4 * 2, junction(0x4007, 0x2D, 6)) -- 0x4 turns the inner walls off
      assert.equal(4 * 2 + 4, junction(0xB, 0x2D, 6)) -- ceiling fan: points - 2
      assert.equal(0, junction(0xB, 0x2D, 0))
      assert.equal(2 * 2, junction(0x3, 0x2, 6, 40)) -- bit 1: edges 1 and 33 (j & 31)
    end)
  end)

  it("keeps its rule for every attribute of every fixture (triangles per type add up)", function()
    for _, name in ipairs(H.fixture_names()) do
      local doc = assert(psdl.read("spec/fixtures/" .. name))
      local mesh = export.build(doc, { attribute_counts = true })
      local sum, by_type = 0, {}
      for r, room_counts in pairs(mesh.stats.attributes) do
        for a, n in pairs(room_counts) do
          local attr = doc.rooms[r].attributes[a]
          if n > 0 then by_type[attr.type] = (by_type[attr.type] or 0) + n end
          sum = sum + n
          if attr.type == "road" then
            local s = #attr.vertices // 4
            local sides = (attr.vertices[1] ~= attr.vertices[2] and 1 or 0) + (attr.vertices[3] ~= attr.vertices[4] and 1 or 0)
            assert.equal(4 * (s - 1) + 4 * (s - 1) * sides, n)
          elseif attr.type == "crosswalk" or attr.type == "facade" then
            assert.equal(2, n)
          elseif attr.type == "road_fan" or attr.type == "fan" or attr.type == "roof" then
            assert.equal(#attr.vertices - 2, n)
          elseif attr.type == "tunnel" and attr.flags == 0x107 then
            local nxt = doc.rooms[r].attributes[a + 1].type == "texture" and doc.rooms[r].attributes[a + 2]
              or doc.rooms[r].attributes[a + 1]
            local stride = ({ road = 4, divided_road = 6, walkway = 2 })[nxt.type]
            assert.equal(22 * (#nxt.vertices // stride - 1), n)
          end
        end
      end
      assert.equal(mesh.stats.triangles, sum)
      assert.same(mesh.stats.by_type, by_type)
    end
  end)
end)

describe("psdl.export files", function()
  it("writes every fixture as OBJ, glTF and GLB with valid buffers and accessors", function()
    local dir = tmpdir()
    for _, name in ipairs(H.fixture_names()) do
      local doc = assert(psdl.read("spec/fixtures/" .. name))
      local base = dir .. "/" .. name:gsub("%.psdl$", "")
      -- glTF, embedded buffer
      local stats = assert(export.export(doc, base .. ".gltf", { source = name }))
      assert.same({ base .. ".gltf" }, stats.files)
      local j, bin = read_gltf(base .. ".gltf")
      assert.equal(stats.triangles, check_gltf(j, bin))
      assert.equal(#j.meshes, #j.nodes)
      assert.equal(#j.nodes, #j.scenes[1].nodes)
      assert.equal("room 1", j.nodes[1].name)
      -- GLB
      stats = assert(export.export(doc, base .. ".glb"))
      local gj, gbin = read_glb(H.read_bytes(base .. ".glb"))
      assert.equal(stats.triangles, check_gltf(gj, gbin))
      assert.equal(bin, gbin)
      -- OBJ + MTL
      stats = assert(export.export(doc, base .. ".obj"))
      assert.same({ base .. ".obj", base .. ".mtl" }, stats.files)
      local obj, mtl = H.read_bytes(base .. ".obj"), H.read_bytes(base .. ".mtl")
      local defined = {}
      for m in mtl:gmatch("newmtl (%S+)") do defined[m] = true end
      local nv, nvt, nf, bad = 0, 0, 0, 0
      for line in obj:gmatch("[^\n]+") do
        local kind = line:match("^(%S+)")
        if kind == "v" then nv = nv + 1
        elseif kind == "vt" then nvt = nvt + 1
        elseif kind == "usemtl" then assert.is_true(defined[line:match("^usemtl (%S+)")])
        elseif kind == "f" then
          nf = nf + 1
          for v, t in line:gmatch("(%d+)/(%d+)") do
            v, t = tonumber(v), tonumber(t)
            if not (v >= 1 and v <= stats.vertices and v == t) then bad = bad + 1 end
          end
        end
      end
      assert.equal(0, bad)
      assert.matches("mtllib " .. name:gsub("%.psdl$", "") .. ".mtl\n", obj, 1, true)
      assert.equal(stats.vertices, nv)
      assert.equal(stats.vertices, nvt)
      assert.equal(stats.triangles, nf)
    end
  end)

  it("mirrors z and reverses the winding by default, so faces keep facing up", function()
    local doc = new_doc()
    room(doc, { tex(1), { type = "road", vertices = strip(doc, ROAD, 3) } })
    local mesh = export.build(doc)
    local j, bin = export.gltf(mesh)
    local kj, kbin = export.gltf(export.build(doc), { keep_axes = true })
    for _, case in ipairs { { j, bin, -1 }, { kj, kbin, 1 } } do
      local gj, gbin, zs = case[1], case[2], case[3]
      local p
      for _, prim in ipairs(gj.meshes[1].primitives) do
        if gj.materials[prim.material + 1].name == "r4_f" then p = prim end
      end
      local pos_view, idx_view = gj.bufferViews[1], gj.bufferViews[3]
      local count = gj.accessors[p.attributes.POSITION + 1].count
      local base = gj.accessors[p.attributes.POSITION + 1].byteOffset
      local ibase = gj.accessors[p.indices + 1].byteOffset
      local function P(i) return { unpack("<fff", gbin, pos_view.byteOffset + base + 12 * i + 1) } end
      local z_seen = {}
      for i = 0, count - 1 do z_seen[P(i)[3] * zs] = true end
      assert.is_true(z_seen[20]) -- the last section at z = 20 (file), -20 mirrored
      for k = 0, gj.accessors[p.indices + 1].count - 1, 3 do
        local a, b, c = unpack("<I4I4I4", gbin, idx_view.byteOffset + ibase + 4 * k + 1)
        local n = normal { P(a), P(b), P(c) }
        assert.is_true(n[2] > 0)
      end
    end
  end)

  it("writes one mesh per room, or one merged mesh, for the rooms asked", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    local per_room = export.build(doc)
    local merged = export.build(doc, { merge = true })
    assert.equal(per_room.stats.triangles, merged.stats.triangles)
    assert.equal(1, #merged.groups)
    assert.equal(25, #per_room.groups)
    local some = export.build(doc, { rooms = { 2, 5, 9 } })
    assert.same({ "room 2", "room 5", "room 9" }, { some.groups[1].name, some.groups[2].name, some.groups[3].name })
    local sum = 0
    for _, r in ipairs { 2, 5, 9 } do sum = sum + export.build(doc, { rooms = { r } }).stats.triangles end
    assert.equal(sum, some.stats.triangles)
    -- an empty selection gives a valid, empty glTF
    local j, bin = export.gltf(export.build(doc, { rooms = {} }))
    assert.equal(0, check_gltf(cjson.decode(cjson.encode(j)), bin))
    assert.is_nil(j.meshes)
  end)

  it("gives one material per texture name, a stable colour, or the image found in a folder", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    doc.textures[#doc.textures + 1] = "r4_f" -- a duplicate name is the same material
    local mesh = export.build(doc)
    local seen = {}
    for _, m in ipairs(mesh.materials) do
      assert.is_nil(seen[m.name])
      seen[m.name] = true
      if m.texture then assert.same(export.color(m.texture), m.color) end
    end
    assert.same(export.color("r4_f"), export.color("r4_f"))
    assert.are_not.same(export.color("r4_f"), export.color("r6_f"))

    local dir = tmpdir()
    assert(lfs.mkdir(dir .. "/tex"))
    local png = require("psdl.core").canvas_new(4, 4):png() -- a whole (checked) 4 x 4 image
    H.write_bytes(dir .. "/tex/r4_f.png", png)
    assert(export.export(doc, dir .. "/city.gltf", { textures = dir .. "/tex", bin = true }))
    local j, bin = read_gltf(dir .. "/city.gltf")
    assert.equal("city.bin", j.buffers[1].uri)
    assert.equal(#bin, j.buffers[1].byteLength)
    assert.same({ { uri = "tex/r4_f.png", name = "r4_f" } }, j.images)
    local with_texture = 0
    for _, m in ipairs(j.materials) do
      if m.pbrMetallicRoughness.baseColorTexture then
        with_texture = with_texture + 1
        assert.equal("r4_f", m.name)
      end
    end
    assert.equal(1, with_texture)
    assert(export.export(doc, dir .. "/city.glb", { textures = dir .. "/tex" }))
    local gj, gbin = read_glb(H.read_bytes(dir .. "/city.glb"))
    local view = gj.bufferViews[gj.images[1].bufferView + 1]
    assert.equal("image/png", gj.images[1].mimeType)
    assert.equal(png, gbin:sub(view.byteOffset + 1, view.byteOffset + view.byteLength))
    assert(export.export(doc, dir .. "/city.obj", { textures = dir .. "/tex" }))
    assert.matches("newmtl r4_f\n[^n]*map_Kd tex/r4_f.png\n", H.read_bytes(dir .. "/city.mtl"))
  end)

  it("exports broken references and non-finite coordinates without failing", function()
    local doc = new_doc()
    local list = strip(doc, ROAD, 3)
    list[2] = 9999 -- a vertex past the pool
    doc.vertices[list[5]] = { 0 / 0, 1 / 0, -1 / 0 }
    room(doc, { tex(1), { type = "road", vertices = list },
      tex(900), { type = "fan", vertices = { list[1], list[5], list[9] } },
      { type = "facade", bottom = 99, top = 98, u_repeat = 1, v_repeat = 1, vertices = { list[1], 9999 } } })
    local mesh = export.build(doc)
    assert.is_true(mesh.stats.nonfinite > 0)
    local j, bin = export.gltf(mesh)
    assert.equal(mesh.stats.triangles, check_gltf(cjson.decode(cjson.encode(j)), bin))
    local names = {}
    for _, m in ipairs(mesh.materials) do names[m.name] = true end
    assert.is_true(names["(missing slot 900)"])
  end)

  it("leaves out primitives over an empty vertex set (no +inf/-inf bounds in the JSON)", function()
    local mesh = {
      materials = { { name = "r4_f", texture = "r4_f", color = { 0.5, 0.5, 0.5 } } },
      groups = {
        { name = "room 1", room = 1, flags = 8, prims = { { material = 1, nv = 0, pos = {}, uv = {}, idx = {} } } },
        { name = "room 2", room = 2, flags = 8, prims = {
          { material = 1, nv = 0, pos = {}, uv = {}, idx = {} },
          { material = 1, nv = 3, pos = { 0, 0, 0, 1, 0, 0, 0, 0, 1 }, uv = { 0, 0, 1, 0, 0, 1 }, idx = { 0, 1, 2 } },
        } },
      },
    }
    local j, bin = export.gltf(mesh)
    local text = cjson.encode(j) -- raised "Cannot serialise number: must not be NaN or Inf" before
    j = cjson.decode(text)
    assert.equal(1, #j.meshes)
    assert.equal(1, #j.meshes[1].primitives)
    assert.equal(1, check_gltf(j, bin))
  end)

  it("parses room lists", function()
    assert.same({ 1, 2, 3, 7 }, export.parse_rooms("1-3, 7"))
    assert.same({ 1, 2, 3, 20, 35 }, export.parse_rooms("35,1-3,20,2"))
    assert.same({ nil, "room 40 does not exist (the city has rooms 1-25)" }, { export.parse_rooms("1,40", 25) })
    assert.is_nil((export.parse_rooms("3-1")))
    assert.is_nil((export.parse_rooms("a")))
    assert.is_nil((export.parse_rooms("")))
  end)

  it("exports London-scale grid_n20 in a couple of seconds", function()
    local dir = tmpdir()
    local t0 = os.clock()
    local doc = assert(psdl.read("spec/fixtures/grid_n20.psdl"))
    local stats = assert(export.export(doc, dir .. "/n20.glb"))
    local took = os.clock() - t0
    assert.is_true(stats.triangles > 60000)
    assert.is_true(took < 3, string.format("took %.2f s", took))
  end)
end)

describe("psdl export", function()
  it("writes the file and prints a summary", function()
    local dir = tmpdir()
    local code, out, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.glb", "--rooms", "1-4,9", "--merge")
    assert.equal(0, code)
    assert.equal("", err)
    assert.matches("^" .. dir:gsub("%p", "%%%0") .. "/a%.glb: 5 rooms, [%d,]+ triangles", out)
    local j = read_glb(H.read_bytes(dir .. "/a.glb"))
    assert.equal(1, #j.meshes)
    code, out = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/b.gltf", "-q", "--double-sided", "--bin")
    assert.equal(0, code)
    assert.equal("", out)
    j = read_gltf(dir .. "/b.gltf")
    assert.is_true(j.materials[1].doubleSided)
    assert.is_not_nil(lfs.attributes(dir .. "/b.bin"))
    code = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/c.dat", "--format", "obj")
    assert.equal(0, code)
    assert.matches("^# psdlkit export", H.read_bytes(dir .. "/c.dat"))
  end)

  it("writes a city whose coordinates pass the 32-bit float range as valid glTF, OBJ and GLB", function()
    local dir = tmpdir()
    local doc = new_doc()
    doc.heights[#doc.heights + 1] = 3.4e38
    local big = #doc.heights
    local a, b = vert(doc, 3.4e38, 3.4e38, 0), vert(doc, 3.4e38, 3.4e38, 10)
    local c = vert(doc, 0 / 0, 0, 10)
    room(doc, { tex(1), { type = "facade", bottom = 1, top = big, u_repeat = 1, v_repeat = 1, vertices = { a, b } },
      { type = "fan", vertices = { a, b, c } } })
    local path = dir .. "/huge.psdl"
    H.write_bytes(path, psdl.encode(doc))
    for _, ext in ipairs { "glb", "gltf", "obj" } do
      local code, _, err = run("export", path, "-o", dir .. "/huge." .. ext)
      assert.equal(0, code, ext .. ": " .. err)
    end
    local j = read_gltf(dir .. "/huge.gltf")
    -- every triangle uses a vertex beyond 1e9 m: all are left out (no accessor at all)
    assert.equal(0, export.build(psdl.decode(H.read_bytes(path)), { leave_far = true }).stats.triangles)
    for _, acc in ipairs(j.accessors or {}) do
      for _, v in ipairs(acc.min or {}) do assert.is_true(v == v and math.abs(v) < math.huge) end
      for _, v in ipairs(acc.max or {}) do assert.is_true(v == v and math.abs(v) < math.huge) end
    end
  end)

  it("leaves vertices beyond 1e9 m (NaN, inf, 1e30, 1e38) and their triangles out, as render does", function()
    local dir = tmpdir()
    local doc = assert(psdl.read("spec/fixtures/clean/street.psdl"))
    doc.vertices[5] = { 0 / 0, 1e30, -math.huge }
    doc.vertices[6] = { 1e38, 0, 0 }
    local path = dir .. "/far.psdl"
    assert(psdl.write(doc, path, { force = true }))
    local code, out, err = run("export", path, "-o", dir .. "/far.glb")
    assert.equal(0, code, err)
    assert.matches("; 2 vertices beyond 1e9 m %(or not finite%) left out, with the %d+ triangles? using them", out)
    local j, bin = read_glb(H.read_bytes(dir .. "/far.glb"))
    -- every position finite and near, and the accessors' min/max bound the data (glTF rule)
    assert.is_true(check_gltf(j, bin) > 0)
    for _, acc in ipairs(j.accessors) do
      for _, v in ipairs(acc.min or {}) do assert.is_true(v == v and math.abs(v) <= 1e9) end
      for _, v in ipairs(acc.max or {}) do assert.is_true(v == v and math.abs(v) <= 1e9) end
    end
    local clean = assert(export.build(assert(psdl.read("spec/fixtures/clean/street.psdl"))))
    local mesh = export.build(assert(psdl.read(path)), { leave_far = true })
    assert.equal(2, mesh.stats.left_out)
    assert.is_true(mesh.stats.left_out_triangles > 0)
    assert.equal(clean.stats.triangles, mesh.stats.triangles + mesh.stats.left_out_triangles)
  end)

  it("refuses a --textures folder that does not exist and a corrupt texture image", function()
    local dir = tmpdir()
    local code, _, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.glb", "--textures", dir .. "/none")
    assert.equal(3, code)
    assert.matches("--textures " .. dir .. "/none: no such folder", err, 1, true)
    assert.is_nil(lfs.attributes(dir .. "/a.glb"))
    assert(lfs.mkdir(dir .. "/tex"))
    local png = H.read_bytes("docs/img/downtown.png")
    H.write_bytes(dir .. "/tex/r4_f.png", png:sub(1, #png // 2)) -- cut in half
    code, _, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.glb", "--textures", dir .. "/tex")
    assert.equal(2, code)
    assert.matches("r4_f.png (texture \"r4_f\"): ", err, 1, true)
    assert.is_nil(lfs.attributes(dir .. "/a.glb"))
    os.remove(dir .. "/tex/r4_f.png")
    H.write_bytes(dir .. "/tex/r4_f.jpg", "\255\216\255\224 then nothing")
    code, _, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.glb", "--textures", dir .. "/tex")
    assert.equal(2, code)
    assert.matches("truncated JPEG image", err, 1, true)
    -- a whole image is embedded
    os.remove(dir .. "/tex/r4_f.jpg")
    H.write_bytes(dir .. "/tex/r4_f.png", png)
    code, _, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.glb", "--textures", dir .. "/tex")
    assert.equal(0, code, err)
  end)

  it("returns 1 for a bad room list or format, 2 for bad input, 3 for a missing file", function()
    local dir = tmpdir()
    local code, _, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.glb", "--rooms", "1-99")
    assert.equal(1, code)
    assert.matches("--rooms: room 99 does not exist", err, 1, true)
    code, _, err = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/a.stl")
    assert.equal(1, code)
    assert.matches('unknown export format "stl"', err, 1, true)
    H.write_bytes(dir .. "/bad.psdl", "PSD0")
    code = run("export", dir .. "/bad.psdl", "-o", dir .. "/a.glb")
    assert.equal(2, code)
    code = run("export", dir .. "/missing.psdl", "-o", dir .. "/a.glb")
    assert.equal(3, code)
    code = run("export", "spec/fixtures/grid_n2.psdl", "-o", dir .. "/no/such/dir/a.glb")
    assert.equal(3, code)
  end)
end)
