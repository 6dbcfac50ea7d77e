--- Files of psdl.export: paths, images next to the textures, and the OBJ + MTL, glTF and GLB
-- writers.
local string, table, io = string, table, io
local type, ipairs, tostring, tonumber, error, require, pcall, setmetatable, utf8 =
  type, ipairs, tostring, tonumber, error, require, pcall, setmetatable, utf8
local huge = math.huge
local string_format, pack = string.format, string.pack

-- Installed by psdl.export (export/init.lua): M is the module table, private the helpers shared
-- between its files.
return function(M, private)

  ------------------------------------------------------------------------ files and paths

  local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
  end

  local function basename(path)
    return path:match("([^/]*)$")
  end

  local function stem(path)
    return (basename(path):gsub("%.[^.]*$", ""))
  end

  local function absolute(path)
    if path:sub(1, 1) == "/" then return path end
    local ok, lfs = pcall(require, "lfs")
    local cwd = ok and lfs.currentdir() or "."
    return cwd .. "/" .. path
  end

  local function split_path(path)
    local parts = {}
    for part in path:gmatch("[^/]+") do
      if part == ".." then
        if #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil else parts[#parts + 1] = part end
      elseif part ~= "." then
        parts[#parts + 1] = part
      end
    end
    return parts
  end

  --- The path of `target` relative to the folder `from` (both relative to the current folder
  -- or absolute).
  -- @tparam string from folder
  -- @tparam string target file
  -- @treturn string
  function M.relative_path(from, target)
    local a, b = split_path(absolute(from)), split_path(absolute(target))
    local i = 1
    while i <= #a and i <= #b and a[i] == b[i] do i = i + 1 end
    local out = {}
    for _ = i, #a do out[#out + 1] = ".." end
    for j = i, #b do out[#out + 1] = b[j] end
    return table.concat(out, "/")
  end

  local IMAGE_EXTS = { "png", "PNG", "jpg", "JPG", "jpeg", "JPEG" }

  -- The image file for a texture name in dir, or nil.
  local function find_image(dir, name)
    for _, ext in ipairs(IMAGE_EXTS) do
      for _, n in ipairs { name, name:lower() } do
        local path = dir .. "/" .. n .. "." .. ext
        local f = io.open(path, "rb")
        if f then
          f:close()
          return path, (ext:lower() == "png") and "image/png" or "image/jpeg"
        end
      end
    end
    return nil
  end

  -- Whether the bytes of an image file are a whole, decodable image: a PNG must decode
  -- (psdl.core's bounded PNG reader); a JPEG must start with SOI and an APPn/DQT/SOF marker
  -- and end with EOI. Returns true or nil, reason.
  local function check_image(data, mime)
    if mime == "image/png" then
      local canvas, err = require("psdl.core").canvas_png_decode(data)
      if not canvas then return nil, (tostring(err):gsub("^psdl: ", "")) end
      canvas:close()
      return true
    end
    if data:sub(1, 3) ~= "\255\216\255" then return nil, "not a JPEG image (no start-of-image marker)" end
    local tail = data:sub(-2)
    if tail ~= "\255\217" and not data:sub(-32):find("\255\217", 1, true) then
      return nil, "truncated JPEG image (no end-of-image marker)"
    end
    return true
  end

  -- Attach images to materials (when opts.textures names a folder). Returns true, or nil and
  -- a message when the folder does not exist or an image in it is corrupt.
  local function attach_images(mesh, dir)
    if not dir then return true end
    local ok, lfs = pcall(require, "lfs")
    if ok and lfs.attributes(dir, "mode") ~= "directory" then
      return nil, string_format("psdl: --textures %s: no such folder (the folder of "
        .. "the city's texture images, <texture name>.png or .jpg, e.g. the game's textures converted; "
        .. "docs/export.md)", dir), "io"
    end
    for _, mat in ipairs(mesh.materials) do
      if mat.texture then
        mat.image, mat.mime = find_image(dir, mat.texture)
        if mat.image then
          local f = io.open(mat.image, "rb")
          local data = f and f:read("a")
          if f then f:close() end
          if not data then return nil, string_format("psdl: %s: cannot be read", mat.image), "io" end
          local good, why = check_image(data, mat.mime)
          if not good then
            return nil, string_format("psdl: %s (texture %q): %s", mat.image, mat.texture, why), "bad_image"
          end
        end
      end
    end
    return true
  end

  -- A name usable in OBJ/MTL (no spaces) and JSON (valid UTF-8), unique among names.
  local function clean_names(materials)
    local used = {}
    for _, mat in ipairs(materials) do
      local n = mat.name
      if not utf8.len(n) then n = n:gsub("[\128-\255]", "?") end
      n = n:gsub("[%c]", "?")
      local obj = n:gsub("%s", "_")
      if obj == "" then obj = "_" end
      local base, k = obj, 1
      while used[obj] do k = k + 1; obj = base .. "_" .. k end
      used[obj] = true
      mat.json_name, mat.obj_name = n, obj
    end
  end

  local function write_file(path, data)
    local psdl = require "psdl"
    local ok, err, code = psdl.write_file(path, data)
    if not ok then return nil, err, code end
    return true
  end

  local function f32(x) return (string.unpack("<f", pack("<f", x))) end

  ------------------------------------------------------------------------ OBJ

  --- OBJ and MTL text of a mesh.
  -- @tparam table mesh from `build`
  -- @tparam[opt] table opts `mtl` (the .mtl file name to reference), `keep_axes`,
  --   `image_base` (folder the image paths are made relative to), `comment`
  -- @treturn string OBJ text
  -- @treturn string MTL text
  function M.obj(mesh, opts)
    opts = opts or {}
    clean_names(mesh.materials)
    local mirror = not opts.keep_axes
    local zs = mirror and -1 or 1
    local out = {}
    local s = mesh.stats
    out[#out + 1] = string_format("# psdlkit export%s: %d rooms, %d triangles, %d materials\n",
      opts.comment and (" of " .. opts.comment) or "", s.rooms, s.triangles, #mesh.materials)
    out[#out + 1] = "# full detail (LOD 3); " .. (mirror and "axes x, y, -z (the game's z mirrored: right-handed)\n"
      or "the file's axes (left-handed: the city is mirrored)\n")
    if opts.mtl then out[#out + 1] = "mtllib " .. opts.mtl .. "\n" end
    local base = 0
    local fmt_v, fmt_vt = "v %.4f %.4f %.4f\n", "vt %.5f %.5f\n"
    for _, g in ipairs(mesh.groups) do
      out[#out + 1] = "o " .. (g.room and ("room_" .. g.room) or g.name:gsub("%s", "_")) .. "\n"
      for _, p in ipairs(g.prims) do
        local pos, uv = p.pos, p.uv
        for i = 0, p.nv - 1 do
          out[#out + 1] = string_format(fmt_v, pos[3 * i + 1], pos[3 * i + 2], zs * pos[3 * i + 3])
        end
        for i = 0, p.nv - 1 do
          out[#out + 1] = string_format(fmt_vt, uv[2 * i + 1], 1 - uv[2 * i + 2])
        end
      end
      for _, p in ipairs(g.prims) do
        out[#out + 1] = "usemtl " .. mesh.materials[p.material].obj_name .. "\n"
        local idx = p.idx
        for k = 1, #idx, 3 do
          local a, b, c = idx[k] + base + 1, idx[k + 1] + base + 1, idx[k + 2] + base + 1
          if mirror then b, c = c, b end
          out[#out + 1] = string_format("f %d/%d %d/%d %d/%d\n", a, a, b, b, c, c)
        end
        base = base + p.nv
      end
    end
    local mtl = { "# psdlkit materials: one per texture name\n" }
    for _, mat in ipairs(mesh.materials) do
      local c = mat.image and { 1, 1, 1 } or mat.color
      mtl[#mtl + 1] = string_format("\nnewmtl %s\nKa 0 0 0\nKd %.3f %.3f %.3f\nKs 0 0 0\nd 1\nillum 1\n",
        mat.obj_name, c[1], c[2], c[3])
      if mat.image then
        local path = opts.image_base and M.relative_path(opts.image_base, mat.image) or mat.image
        mtl[#mtl + 1] = "map_Kd " .. path .. "\n"
      end
    end
    return table.concat(out), table.concat(mtl)
  end

  ------------------------------------------------------------------------ glTF

  local ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
  local FLOAT, UNSIGNED_INT = 5126, 5125
  local REPEAT, LINEAR, LINEAR_MIPMAP_LINEAR = 10497, 9729, 9987

  local function pad4(n) return (4 - n % 4) % 4 end

  --- glTF JSON document (as a Lua table) and binary buffer of a mesh.
  -- @tparam table mesh from `build`
  -- @tparam[opt] table opts `keep_axes`, `double_sided`, `embed_images` (images go into the
  --   buffer, for GLB), `image_base` (folder image URIs are relative to), `source` (name of
  --   the PSDL file, kept in `asset.extras`)
  -- @treturn table the glTF JSON as Lua tables (to encode with cjson; no empty arrays)
  -- @treturn string the binary buffer (length a multiple of 4)
  function M.gltf(mesh, opts)
    opts = opts or {}
    clean_names(mesh.materials)
    local mirror = not opts.keep_axes
    local zs = mirror and -1 or 1
    local pos_parts, uv_parts, idx_parts = {}, {}, {}
    local pos_len, uv_len, idx_len = 0, 0, 0
    local accessors, meshes, nodes = {}, {}, {}

    for _, g in ipairs(mesh.groups) do
      local prims = {}
      for _, p in ipairs(g.prims) do
        -- an empty vertex set has no bounds (min +inf, max -inf), and glTF accessors need
        -- count >= 1: such a primitive is left out
        if p.nv > 0 and #p.idx > 0 then
        local pos, uv, idx = p.pos, p.uv, p.idx
        local minx, miny, minz, maxx, maxy, maxz = huge, huge, huge, -huge, -huge, -huge
        local pp, up_ = {}, {}
        for i = 0, p.nv - 1 do
          local x, y, z = pos[3 * i + 1], pos[3 * i + 2], zs * pos[3 * i + 3]
          if x < minx then minx = x end
          if x > maxx then maxx = x end
          if y < miny then miny = y end
          if y > maxy then maxy = y end
          if z < minz then minz = z end
          if z > maxz then maxz = z end
          pp[i + 1] = pack("<fff", x, y, z)
          up_[i + 1] = pack("<ff", uv[2 * i + 1], uv[2 * i + 2])
        end
        local ip = {}
        for k = 1, #idx, 3 do
          local a, b, c = idx[k], idx[k + 1], idx[k + 2]
          if mirror then b, c = c, b end
          ip[#ip + 1] = pack("<I4I4I4", a, b, c)
        end
        local pos_acc = #accessors
        accessors[#accessors + 1] = {
          bufferView = 0, byteOffset = pos_len, componentType = FLOAT, count = p.nv, type = "VEC3",
          min = { f32(minx), f32(miny), f32(minz) }, max = { f32(maxx), f32(maxy), f32(maxz) },
        }
        accessors[#accessors + 1] = {
          bufferView = 1, byteOffset = uv_len, componentType = FLOAT, count = p.nv, type = "VEC2",
        }
        accessors[#accessors + 1] = {
          bufferView = 2, byteOffset = idx_len, componentType = UNSIGNED_INT, count = #idx, type = "SCALAR",
        }
        pos_parts[#pos_parts + 1] = table.concat(pp)
        uv_parts[#uv_parts + 1] = table.concat(up_)
        idx_parts[#idx_parts + 1] = table.concat(ip)
        pos_len, uv_len, idx_len = pos_len + 12 * p.nv, uv_len + 8 * p.nv, idx_len + 4 * #idx
        prims[#prims + 1] = {
          attributes = { POSITION = pos_acc, TEXCOORD_0 = pos_acc + 1 },
          indices = pos_acc + 2, material = p.material - 1, mode = 4,
        }
        end
      end
      if #prims > 0 then
        meshes[#meshes + 1] = { name = g.name, primitives = prims }
        nodes[#nodes + 1] = {
          name = g.name, mesh = #meshes - 1,
          extras = g.room and { room = g.room, flags = g.flags } or nil,
        }
      end
    end

    local bin_parts = { table.concat(pos_parts), table.concat(uv_parts), table.concat(idx_parts) }
    local views = {}
    local offset = 0
    if #accessors > 0 then
      -- several accessors share each vertex view: a byteStride is then required
      views[1] = { buffer = 0, byteOffset = 0, byteLength = pos_len, byteStride = 12, target = ARRAY_BUFFER }
      views[2] = { buffer = 0, byteOffset = pos_len, byteLength = uv_len, byteStride = 8, target = ARRAY_BUFFER }
      views[3] = { buffer = 0, byteOffset = pos_len + uv_len, byteLength = idx_len, target = ELEMENT_ARRAY_BUFFER }
      offset = pos_len + uv_len + idx_len
    else
      bin_parts = {}
    end

    -- materials, and images for those that have one
    local materials, textures, images = {}, {}, {}
    local used = {}
    for _, g in ipairs(mesh.groups) do
      for _, p in ipairs(g.prims) do
        if p.nv > 0 and #p.idx > 0 then used[p.material] = true end
      end
    end
    for i, mat in ipairs(mesh.materials) do
      local c = mat.color
      local m = {
        name = mat.json_name,
        pbrMetallicRoughness = { baseColorFactor = { c[1], c[2], c[3], 1 }, metallicFactor = 0, roughnessFactor = 1 },
        doubleSided = opts.double_sided and true or nil,
        extras = mat.texture and { texture = mat.json_name } or nil,
      }
      if mat.image and used[i] then
        local image = { name = mat.json_name }
        if opts.embed_images then
          local f = io.open(mat.image, "rb")
          local data = f and f:read("a")
          if f then f:close() end
          if data then
            views[#views + 1] = { buffer = 0, byteOffset = offset, byteLength = #data }
            bin_parts[#bin_parts + 1] = data .. string.rep("\0", pad4(#data))
            offset = offset + #data + pad4(#data)
            image.bufferView, image.mimeType = #views - 1, mat.mime
          end
        else
          local path = opts.image_base and M.relative_path(opts.image_base, mat.image) or mat.image
          image.uri = path:gsub("[^%w%-%._~/]", function(ch) return string_format("%%%02X", ch:byte()) end)
        end
        if image.uri or image.bufferView then
          images[#images + 1] = image
          textures[#textures + 1] = { sampler = 0, source = #images - 1 }
          m.pbrMetallicRoughness.baseColorTexture = { index = #textures - 1 }
          m.pbrMetallicRoughness.baseColorFactor = { 1, 1, 1, 1 }
        end
      end
      materials[i] = m
    end

    local bin = table.concat(bin_parts)
    local doc = {
      asset = { version = "2.0", generator = "psdlkit export",
        extras = { source = opts.source, lod = 3, axes = mirror and "x, y, -z" or "file" } },
      scene = 0,
      scenes = { { name = opts.source and stem(opts.source) or "city", nodes = #nodes > 0 and {} or nil } },
    }
    for i = 1, #nodes do doc.scenes[1].nodes[i] = i - 1 end
    if #nodes > 0 then doc.nodes, doc.meshes = nodes, meshes end
    if #materials > 0 then doc.materials = materials end
    if #accessors > 0 then doc.accessors = accessors end
    if #views > 0 then doc.bufferViews = views end
    if #bin > 0 then doc.buffers = { { byteLength = #bin } } end
    if #images > 0 then
      doc.images, doc.textures = images, textures
      doc.samplers = { { magFilter = LINEAR, minFilter = LINEAR_MIPMAP_LINEAR, wrapS = REPEAT, wrapT = REPEAT } }
    end
    return doc, bin
  end

  local function json_encode(t)
    local cjson = require("cjson").new()
    cjson.encode_number_precision(14)
    return cjson.encode(t)
  end

  --- GLB bytes of a glTF document and its buffer.
  -- @tparam table doc glTF JSON (its `buffers[1]` has no `uri`)
  -- @tparam string bin the buffer
  -- @treturn string
  function M.glb(doc, bin)
    local json = json_encode(doc)
    json = json .. string.rep(" ", pad4(#json))
    local chunks = pack("<I4I4", #json, 0x4E4F534A) .. json
    if #bin > 0 then
      chunks = chunks .. pack("<I4I4", #bin + pad4(#bin), 0x004E4942) .. bin .. string.rep("\0", pad4(#bin))
    end
    return pack("<I4I4I4", 0x46546C67, 2, 12 + #chunks) .. chunks
  end

  return {
    attach_images = attach_images,
    basename = basename,
    dirname = dirname,
    json_encode = json_encode,
    stem = stem,
    write_file = write_file,
  }
end
