--- The companion files in the CLI: `psdl info`, `psdl dump --json` and `psdl undump` accept
-- `.bai`, `.cpvs`, `.pathset` and PKG3 files (recognised by their magic) and `.inst` and
-- `.tex` files (no magic: recognised by the extension) besides PSDL files.
--
-- JSON form: `{"format": "psdlkit-companion", "version": 1, "type": "<bai|cpvs|...>",
-- "data": <the table of docs/companion.md>}` with these rules, so that undump gives back the
-- identical bytes:
--
-- * every float is written as the shortest text that reads back as the same 32-bit float
--   (non-finite values as `"Infinity"`, `"-Infinity"`, `"NaN"`, `"NaN(0x7fc00001)"`);
-- * byte strings (`rle`, `data`, `levels`, `palette`, `trailing`, `name_field`) are
--   `{"hex": "..."}`; names that are not valid UTF-8, or that read like a non-finite
--   marker, too;
-- * the BAI culling lists, indexed by room id from 0 in Lua, are JSON arrays whose element
--   k is room k - 1.
-- @module psdl.cli.companion

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local cjson = require("cjson").new()

local string, math, table, utf8 = string, math, table, utf8
local type, pairs, ipairs, tostring, tonumber, pcall, next = type, pairs, ipairs, tostring, tonumber, pcall, next

local M = {}

--- Top-level `"format"` of the JSON form.
M.FORMAT = "psdlkit-companion"
--- Its `"version"`.
M.VERSION = 1

local BYTES = { rle = true, data = true, palette = true, trailing = true, name_field = true }

--- The companion format of a file, from its magic or (for `.inst`, `.tex`) its name; nil
-- for PSDL and unknown files.
-- @tparam string name file name
-- @tparam string bytes its contents
-- @treturn ?string `"bai"`, `"cpvs"`, `"inst"`, `"pathset"`, `"pkg"` or `"tex"`
function M.format_of(name, bytes)
  local psdl = common.psdl()
  local f = psdl.companion.detect(bytes)
  if f == "psdl" then return nil end
  if f then return f end
  local ext = psdl.companion.format_of_name(name)
  if ext == "inst" or ext == "tex" then return ext end
  return nil
end

--- Read and decode a companion file.
-- @treturn string format, table data, integer size; or nil, message, code
function M.load(path, bytes)
  local psdl = common.psdl()
  local fmt = M.format_of(path, bytes)
  if not fmt then return nil, path .. ": not a companion file", "bad_magic" end
  local t, msg, code = psdl[fmt].decode(bytes)
  if not t then return nil, path .. ": " .. msg, code end
  return fmt, t, #bytes
end

------------------------------------------------------------------------ JSON

local function hex(s) return { hex = (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) } end

local NONFINITE = { ["Infinity"] = true, ["-Infinity"] = true, ["NaN"] = true }
local function looks_nonfinite(s) return NONFINITE[s] or s:match("^NaN%(0x%x%x%x%x%x%x%x%x%)$") ~= nil end

local function to_json(v, key)
  local tv = type(v)
  if tv == "number" then
    if math.type(v) == "float" then return docjson.float32(v) end
    return v
  elseif tv == "string" then
    if BYTES[key] or not utf8.len(v) or looks_nonfinite(v) then return hex(v) end
    return v
  elseif tv == "table" then
    local r = {}
    if key == "near" or key == "in" then -- indexed from room 0
      local n = 0
      while v[n] ~= nil do n = n + 1 end
      for k = 0, n - 1 do r[k + 1] = to_json(v[k], nil) end
      return r
    end
    for k, x in pairs(v) do r[k] = to_json(x, type(k) == "string" and k or (key == "levels" and "data" or nil)) end
    return r
  end
  return v
end

--- The JSON text of a decoded companion table.
-- @tparam string fmt format name
-- @tparam table t
-- @tparam[opt] table opts `compact`
-- @treturn string
function M.dump(fmt, t, opts)
  return docjson.encode({ format = M.FORMAT, version = M.VERSION, type = fmt, data = to_json(t, nil) }, opts)
end

local function bad(path, msg) error({ path = path, msg = msg }, 0) end

local from_bits = docjson.float_from_bits -- (the document JSON's)

local function from_json(v, path, key)
  if v == cjson.null then bad(path, "null is not allowed") end
  local tv = type(v)
  if tv == "number" then
    if math.type(v) == "float" and v == math.floor(v) and not (v == 0 and 1 / v < 0) and math.abs(v) < 2 ^ 53 then
      return math.tointeger(v) -- integral values: integers (floats read back as the same number)
    end
    return v
  elseif tv == "string" then
    if v == "Infinity" then return math.huge end
    if v == "-Infinity" then return -math.huge end
    if v == "NaN" then return from_bits(0x7fc00000) end
    local h = v:match("^NaN%(0x(%x%x%x%x%x%x%x%x)%)$")
    if h then return from_bits(tonumber(h, 16)) end
    return v
  elseif tv == "table" then
    if type(v.hex) == "string" and next(v, next(v)) == nil then
      if #v.hex % 2 ~= 0 or v.hex:find("%X") then bad(path, "hex: an even number of hex digits expected") end
      return (v.hex:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
    end
    local r = {}
    if key == "near" or key == "in" then
      for i, x in ipairs(v) do r[i - 1] = from_json(x, path .. "[" .. i .. "]", nil) end
      return r
    end
    for k, x in pairs(v) do
      r[k] = from_json(x, type(k) == "number" and (path .. "[" .. k .. "]") or (path .. "." .. tostring(k)),
        type(k) == "string" and k or nil)
    end
    return r
  end
  return v
end

--- Rebuild a companion table from its JSON text.
-- @tparam table obj the decoded JSON object (already checked to have `format` = FORMAT)
-- @treturn string format, table data; or nil, message
function M.undump(obj)
  if obj.version ~= M.VERSION then
    return nil, string.format("unsupported companion version %s (this psdl reads %d)", tostring(obj.version),
      M.VERSION)
  end
  local fmt = obj.type
  local known = { bai = true, cpvs = true, inst = true, pathset = true, pkg = true, tex = true }
  if not known[fmt] then return nil, 'type: "bai", "cpvs", "inst", "pathset", "pkg" or "tex" expected' end
  if type(obj.data) ~= "table" then return nil, "data: an object expected" end
  local ok, t = pcall(from_json, obj.data, "data", nil)
  if not ok then
    if type(t) == "table" then return nil, t.path .. ": " .. t.msg end
    error(t, 0)
  end
  return fmt, t
end

------------------------------------------------------------------------ info

--- Summary statistics of a decoded companion table (what `psdl info` shows).
-- @treturn table `{type, size, counts = {...}}` plus per-format extras
function M.stats(fmt, t, size)
  local s = { type = fmt, size = size, counts = {} }
  local c = s.counts
  if fmt == "bai" then
    c.roads, c.intersections, c.cull_rooms = #t.roads, #t.intersections, t.cull_rooms
    local sections, lanes, maxlanes, near, inl = 0, 0, 0, 0, 0
    for _, r in ipairs(t.roads) do
      sections = sections + #r.origin
      for _, sn in ipairs { "side_a", "side_b" } do
        lanes = lanes + #r[sn].lanes
        maxlanes = math.max(maxlanes, #r[sn].lanes)
      end
    end
    for room = 0, t.cull_rooms - 1 do
      near = near + #(t.near[room] or {})
      inl = inl + #(t["in"][room] or {})
    end
    c.sections, c.lanes, c.most_lanes_per_side = sections, lanes, maxlanes
    c.near_entries, c.in_entries = near, inl
  elseif fmt == "cpvs" then
    c.rooms, c.rows = t.rooms, #t.rows
    local total, most, self = 0, 0, 0
    for r, row in ipairs(t.rows) do
      total = total + #row.visible
      most = math.max(most, #row.visible)
      for _, id in ipairs(row.visible) do if id == r then self = self + 1 break end end
    end
    c.visible_pairs, c.most_visible, c.rows_seeing_themselves = total, most, self
  elseif fmt == "inst" then
    c.records = #t
    local compact, names = 0, {}
    for _, r in ipairs(t) do
      if r.compact then compact = compact + 1 end
      names[r.name] = true
    end
    local n = 0
    for _ in pairs(names) do n = n + 1 end
    c.compact, c.full, c.models = compact, #t - compact, n
  elseif fmt == "pathset" then
    c.paths = #t.paths
    local pts = 0
    for _, p in ipairs(t.paths) do pts = pts + #p.points end
    c.points = pts
  elseif fmt == "pkg" then
    c.chunks = #t.chunks
    s.chunks = {}
    for i, ch in ipairs(t.chunks) do
      local kind = ch.geometry and "geometry" or ch.shaders and "shaders" or ch.xrefs and "xrefs" or "raw"
      local e = { name = ch.name, kind = kind }
      if ch.geometry then
        local v, idx = 0, 0
        for _, sec in ipairs(ch.geometry.sections) do
          for _, pk in ipairs(sec.packets) do v, idx = v + #pk.vertices, idx + #pk.indices end
        end
        e.sections, e.vertices, e.triangles, e.fvf = #ch.geometry.sections, v, idx // 3, ch.geometry.fvf
      elseif ch.shaders then
        e.paint_jobs = #ch.shaders.paint_jobs
        e.shaders = ch.shaders.paint_jobs[1] and #ch.shaders.paint_jobs[1] or 0
      elseif ch.xrefs then
        e.xrefs = #ch.xrefs
      else
        e.bytes = #ch.data
      end
      s.chunks[i] = e
    end
  elseif fmt == "tex" then
    c.width, c.height, c.texel_format, c.mips, c.flags = t.width, t.height, t.format, t.mips, t.flags
    c.levels = t.levels and #t.levels or nil
  end
  return s
end

--- Write the text form of `stats` to out.
function M.print_text(out, file, s)
  out:write(file, "\n")
  out:write(string.format("  %-16s %s (%s bytes)\n", "format", s.type, common.int(s.size)))
  local keys = {}
  for k in pairs(s.counts) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = s.counts[k]
    local text = (k == "flags") and string.format("0x%x", v) or common.int(v)
    out:write(string.format("  %-22s %s\n", k:gsub("_", " "), text))
  end
  for i, e in ipairs(s.chunks or {}) do
    local parts = {}
    for _, k in ipairs { "sections", "vertices", "triangles", "paint_jobs", "shaders", "xrefs", "bytes" } do
      if e[k] then parts[#parts + 1] = k:gsub("_", " ") .. " " .. common.int(e[k]) end
    end
    if e.fvf then parts[#parts + 1] = string.format("fvf 0x%x", e.fvf) end
    out:write(string.format("  chunk %-3d %-12s %-8s %s\n", i, e.name, e.kind, table.concat(parts, ", ")))
  end
end

return M
