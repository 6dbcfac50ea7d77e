--- JSON for the CLI: a deterministic, readable JSON writer, and the reversible mapping
-- between a PSDL document (see docs/document-model.md) and JSON used by `psdl dump` and
-- `psdl undump`.
--
-- The JSON form of a document is the document itself plus `"format": "psdlkit-document"`
-- and `"version": 1`, with these rules so that `undump(dump(doc))` encodes to the same
-- bytes:
--
-- * Every Lua array is a JSON array, empty ones included (`[]`): the model has no empty
--   objects, so an empty table always means an empty array.
-- * Single-precision values (vertex coordinates, heights, bounds, road lane values) are
--   written with the fewest digits that read back as the same 32-bit float (`0.1`, not
--   `0.100000001490116`); other non-integers with the fewest digits that read back as the
--   same double. Non-finite values are the strings `"Infinity"`, `"-Infinity"`, `"NaN"` or
--   `"NaN(0x7fc00001)"` (a NaN with other bits: the 32-bit pattern).
-- * Texture names that are not valid UTF-8 become `{"hex": "<bytes in hex>"}`.
-- * Object keys come out in a fixed order (the document model's order), so the same
--   document always gives the same text.
--
-- Strings are escaped and JSON is parsed by lua-cjson.
-- @module psdl.cli.docjson

local cjson_module = require "cjson"
local string, math, table, utf8 = string, math, table, utf8
local type, pairs, ipairs, next, tostring, tonumber, setmetatable, getmetatable, error, pcall =
  type, pairs, ipairs, next, tostring, tonumber, setmetatable, getmetatable, error, pcall

local cjson = cjson_module.new() -- private instance: our settings do not leak to other users
cjson.encode_number_precision(14)

local M = {}

--- Value of the top-level `"format"` field of a dumped document.
M.FORMAT = "psdlkit-document"
--- Value of the top-level `"version"` field of a dumped document.
M.VERSION = 1

local RAW = {}    -- metatable of {text}: emitted verbatim (a number already formatted)
local OBJECT = {} -- metatable marking a table to write as an object even when empty

--- Mark a table to be written as a JSON object (an empty table is otherwise `[]`).
-- @tparam[opt] table t
-- @treturn table t
function M.object(t)
  return setmetatable(t or {}, OBJECT)
end

-- Key order in objects: the document model's order per kind of object; other keys
-- follow, sorted.
local KEY_ORDER = {
  document = {
    "format", "version", "magic", "target_size", "first_road_room", "room0", "bounds",
    "vertices", "heights", "textures", "materials", "rooms", "roads",
  },
  room = { "flags", "prop_rule", "perimeter", "attributes" },
  attribute = {
    "type", "last", "counted", "subtype", "count", "data", "header_high", "cap", "value",
    "flags", "height1", "height2", "ceiling_start", "wall_mask", "mask1", "mask2", "top",
    "density", "bottom", "light", "height", "divider_type", "cap_start", "cap_end",
    "divider_texture", "divider_value", "u_repeat", "v_repeat", "words", "vertices",
  },
  road = {
    "flags", "lanes_left", "lanes_right", "stop_lights", "start_crossroads",
    "end_crossroads", "rooms",
  },
  -- the wrapper of a companion file (psdl.cli.companion)
  companion = { "format", "version", "type", "data" },
  -- everything else: bounds, perimeter points, and the info and validate results
  other = {
    "format", "version", "strict", "file", "name", "ok", "errors", "warnings", "error",
    "severity", "code", "rule", "path", "message", "room", "attribute", "road",
    "magic", "target_size", "size", "first_road_room", "room0", "counts", "bounds", "has_roads",
    "min", "max", "center", "radius", "vertex", "neighbour", "flags", "prop_rule", "names",
    "vertices", "heights", "texture_slots", "rooms", "room_records", "attributes",
    "attribute_words", "road_records", "textures", "slots", "empty_slots", "empty_names",
    "duplicates", "longest", "names_over_31_chars", "length", "slot", "attribute_types",
    "type", "count", "room_flags", "limits", "value", "limit", "percent", "note", "where",
  },
}
local KEY_RANK = {}
for kind, keys in pairs(KEY_ORDER) do
  KEY_RANK[kind] = {}
  for i, k in ipairs(keys) do KEY_RANK[kind][k] = i end
end

local function object_kind(t)
  if t.format == "psdlkit-companion" then return "companion" end
  if type(t.type) == "string" and t.severity == nil then return "attribute" end
  if t.lanes_left ~= nil or t.start_crossroads ~= nil then return "road" end
  if t.perimeter ~= nil then return "room" end
  if t.magic ~= nil and t.vertices ~= nil then return "document" end
  return "other"
end

------------------------------------------------------------------------ numbers

local FLT_MAX = 3.4028234663852886e38

--- Round a number to the nearest 32-bit float (as a Lua float).
-- @tparam number x
-- @treturn number
local function f32(x)
  return (string.unpack("<f", string.pack("<f", x)))
end

-- The 32-bit pattern of a float held in a Lua number. NaNs are taken apart bit by bit: a
-- conversion through string.pack("<f") would quiet a signalling NaN.
local function float_bits(x)
  if x ~= x then
    local d = string.unpack("<I8", string.pack("<d", x))
    local mant = (d >> 29) & 0x7FFFFF
    if mant == 0 then mant = 0x400000 end
    return ((d >> 63) << 31) | 0x7F800000 | mant
  end
  return (string.unpack("<I4", string.pack("<f", x)))
end

-- The Lua number standing for float bits (a NaN built bit by bit, see float_bits).
local function float_from_bits(bits)
  if bits & 0x7F800000 == 0x7F800000 and bits & 0x7FFFFF ~= 0 then
    local d = ((bits >> 31) << 63) | (0x7FF << 52) | ((bits & 0x7FFFFF) << 29)
    return (string.unpack("<d", string.pack("<I8", d)))
  end
  return (string.unpack("<f", string.pack("<I4", bits)))
end

local CANONICAL_NAN = 0x7fc00000

local function nonfinite(x)
  if x == math.huge then return "Infinity" end
  if x == -math.huge then return "-Infinity" end
  local bits = float_bits(x)
  if bits == CANONICAL_NAN then return "NaN" end
  return string.format("NaN(0x%08x)", bits)
end

-- First precision worth trying: enough digits for the integer part, so that %g does not
-- switch to an exponent for plain numbers (10 -> "10", not "1e+01").
local function first_precision(x, max)
  local a = math.abs(x)
  if a < 1 then return 1 end
  local digits = math.floor(math.log(a, 10)) + 1
  return math.max(1, math.min(digits, max))
end

--- Shortest decimal text for a double that reads back as the same double.
local function format_double(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x or x == math.huge or x == -math.huge then return nil end
  for p = first_precision(x, 17), 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

--- Shortest decimal text that reads back as the same 32-bit float.
local function format_float32(x)
  if x ~= x or x == math.huge or x == -math.huge then return nil end
  if f32(x) ~= x then return format_double(x) end -- not a float32: keep it exact
  for p = first_precision(x, 9), 9 do
    local s = string.format("%." .. p .. "g", x)
    if f32(tonumber(s)) == x then return s end
  end
  return string.format("%.9g", x)
end

local function raw(text)
  return setmetatable({ text }, RAW)
end

-- A single-precision model value as a JSON token (a raw number, or a marker string).
local function f32_token(x)
  if type(x) ~= "number" then return x end
  local s = format_float32(x)
  if s then return raw(s) end
  return nonfinite(x)
end

--- A single-precision value as a JSON value for `encode`: written with the fewest digits
-- that read back as the same 32-bit float, or as a marker string when not finite.
-- @tparam number x
-- @return a value `encode` writes as that number (or string)
M.float32 = f32_token

--- Shortest text for a number: for a 32-bit float the fewest digits that read back as
-- the same float, otherwise as the same double; `"inf"`, `"-inf"`, `"nan"` when not finite.
-- @tparam number x
-- @treturn string
function M.number_text(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  return format_float32(x) or (x ~= x and "nan" or (x > 0 and "inf" or "-inf"))
end

------------------------------------------------------------------------ writer

local function encode_string(s)
  -- cjson escapes "/" as "\/"; both are valid JSON, the plain form reads better.
  return (cjson.encode(s):gsub("\\/", "/"))
end

local function is_array(t)
  if getmetatable(t) == OBJECT then return false end
  local n = #t
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local function sorted_keys(t, path)
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" then
      error(string.format("cannot write %s as JSON: key %s in a table that is not an array",
        path, tostring(k)), 0)
    end
    keys[#keys + 1] = k
  end
  local rank = KEY_RANK[object_kind(t)]
  table.sort(keys, function(a, b)
    local ra, rb = rank[a] or math.maxinteger, rank[b] or math.maxinteger
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  return keys
end

-- Text of a scalar (or raw token); nil for a table that has structure.
local function scalar(v, path)
  local tv = type(v)
  if tv == "string" then return encode_string(v) end
  if tv == "number" then
    local s = format_double(v)
    if s then return s end
    return encode_string(nonfinite(v))
  end
  if tv == "boolean" then return v and "true" or "false" end
  if tv == "table" then
    if getmetatable(v) == RAW then return v[1] end
    return nil
  end
  if v == nil then return "null" end
  error(string.format("cannot write %s as JSON: %s value", path, tv), 0)
end

-- One-line text of v if it fits in budget characters, else nil.
local function try_inline(v, budget, path)
  local s = scalar(v, path)
  if s then return #s <= budget and s or nil end
  local parts, used = {}, 2
  if is_array(v) then
    for i = 1, #v do
      local p = try_inline(v[i], budget - used, path)
      if not p then return nil end
      parts[i] = p
      used = used + #p + 2
      if used > budget + 2 then return nil end
    end
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  for _, k in ipairs(sorted_keys(v, path)) do
    local ks = encode_string(k) .. ": "
    local p = try_inline(v[k], budget - used - #ks, path)
    if not p then return nil end
    parts[#parts + 1] = ks .. p
    used = used + #ks + #p + 2
    if used > budget + 2 then return nil end
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local WIDTH = 100

-- prefix: characters already on the line after the indentation (an object key)
local function write_pretty(out, v, indent, path, prefix)
  local s = scalar(v, path)
  if s then out[#out + 1] = s; return end
  local one = try_inline(v, WIDTH - #indent - (prefix or 0) - 1, path) -- 1: a comma may follow
  if one then out[#out + 1] = one; return end
  local inner = indent .. "  "
  if is_array(v) then
    local all_scalar = true
    for i = 1, #v do
      if not scalar(v[i], path) then all_scalar = false; break end
    end
    out[#out + 1] = "[\n"
    if all_scalar then -- fill lines up to WIDTH
      local line = inner
      for i = 1, #v do
        local item = scalar(v[i], path) .. (i < #v and "," or "")
        if #line > #inner and #line + 1 + #item > WIDTH then
          out[#out + 1] = line .. "\n"
          line = inner
        end
        line = line .. (#line > #inner and " " or "") .. item
      end
      out[#out + 1] = line .. "\n"
    else
      for i = 1, #v do
        out[#out + 1] = inner
        write_pretty(out, v[i], inner, path .. "[" .. i .. "]")
        out[#out + 1] = i < #v and ",\n" or "\n"
      end
    end
    out[#out + 1] = indent .. "]"
  else
    local keys = sorted_keys(v, path)
    out[#out + 1] = "{\n"
    for i, k in ipairs(keys) do
      local key = encode_string(k) .. ": "
      out[#out + 1] = inner .. key
      write_pretty(out, v[k], inner, path .. "." .. k, #key)
      out[#out + 1] = i < #keys and ",\n" or "\n"
    end
    out[#out + 1] = indent .. "}"
  end
end

local function write_compact(out, v, path)
  local s = scalar(v, path)
  if s then out[#out + 1] = s; return end
  if is_array(v) then
    out[#out + 1] = "["
    for i = 1, #v do
      if i > 1 then out[#out + 1] = "," end
      write_compact(out, v[i], path .. "[" .. i .. "]")
    end
    out[#out + 1] = "]"
  else
    out[#out + 1] = "{"
    for i, k in ipairs(sorted_keys(v, path)) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = encode_string(k) .. ":"
      write_compact(out, v[k], path .. "." .. k)
    end
    out[#out + 1] = "}"
  end
end

--- Write a Lua value as JSON text: tables with keys 1..n (and empty tables, unless marked
-- with `object`) are arrays, other tables objects with string keys in a fixed order.
-- Pretty output keeps short values on one line and fills long lists of numbers.
-- @param value
-- @tparam[opt] table opts `{compact = true}` for no whitespace at all
-- @treturn string the JSON text, ending with a newline
-- @raise when the value cannot be written (a function, a sparse array, a non-string key)
function M.encode(value, opts)
  local out = {}
  if opts and opts.compact then
    write_compact(out, value, "value")
  else
    write_pretty(out, value, "", "value")
  end
  out[#out + 1] = "\n"
  return table.concat(out)
end

------------------------------------------------------------------------ document -> JSON

local function map(list, fn)
  if type(list) ~= "table" then return list end
  local r = {}
  for i = 1, #list do r[i] = fn(list[i]) end
  return r
end

local function vec3_tokens(v)
  return map(v, f32_token)
end

local function texture_entry(name)
  if type(name) == "string" and not utf8.len(name) then
    return M.object { hex = (name:gsub(".", function(c) return string.format("%02x", c:byte()) end)) }
  end
  return name
end

--- The JSON form of a document (without changing the document).
-- @tparam table doc a document as `psdl.decode` returns it
-- @tparam[opt] table opts as for `encode`
-- @treturn string JSON text
-- @raise when the document holds values JSON cannot carry (functions, sparse arrays)
function M.dump(doc, opts)
  local t = {}
  for k, v in pairs(doc) do t[k] = v end
  t.format, t.version = M.FORMAT, M.VERSION
  t.vertices = map(doc.vertices, vec3_tokens)
  t.heights = map(doc.heights, f32_token)
  t.textures = map(doc.textures, texture_entry)
  if type(doc.bounds) == "table" then
    local b = {}
    for k, v in pairs(doc.bounds) do b[k] = v end
    b.min, b.max, b.center = vec3_tokens(b.min), vec3_tokens(b.max), vec3_tokens(b.center)
    b.radius = f32_token(b.radius)
    t.bounds = b
  end
  if type(doc.roads) == "table" then
    t.roads = map(doc.roads, function(road)
      if type(road) ~= "table" then return road end
      local r = {}
      for k, v in pairs(road) do r[k] = v end
      r.lanes_left = map(road.lanes_left, f32_token)
      r.lanes_right = map(road.lanes_right, f32_token)
      return r
    end)
  end
  return M.encode(t, opts)
end

------------------------------------------------------------------------ JSON -> document

local function bad(path, msg)
  error({ path = path, msg = msg }, 0)
end

local NONFINITE = { ["Infinity"] = math.huge, ["-Infinity"] = -math.huge }

local function f32_value(v, path)
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return v end
    if v > FLT_MAX or v < -FLT_MAX then
      -- below FLT_MAX + half an ulp (2^103) a number still rounds to FLT_MAX
      if math.abs(v) >= FLT_MAX + 2.0 ^ 103 then bad(path, "out of single-precision range") end
      return v < 0 and -FLT_MAX or FLT_MAX
    end
    return f32(v * 1.0) -- (v + 0.0 would turn -0.0 into 0.0)
  end
  if type(v) == "string" then
    if NONFINITE[v] then return NONFINITE[v] end
    local hex = v == "NaN" and "7fc00000" or v:match("^NaN%(0x(%x%x%x%x%x%x%x%x)%)$")
    if hex then
      return float_from_bits(tonumber(hex, 16))
    end
    local shown = #v > 40 and (v:sub(1, 40) .. "...") or v
    if v:match("^%-?NaN") or v:match("^%-?Inf") then
      bad(path, string.format('number expected, got the string %q: a non-finite number is written "Infinity", '
        .. '"-Infinity", "NaN" or "NaN(0x" and its 32-bit pattern in 8 hex digits ")"', shown))
    end
    bad(path, string.format("number expected, got the string %q", shown))
  end
  bad(path, "number expected, got " .. (type(v) == "table" and "an array or object" or type(v)))
end

local function f32_list(list, path)
  if type(list) ~= "table" then return list end
  for i = 1, #list do list[i] = f32_value(list[i], path .. "[" .. i .. "]") end
  return list
end

-- null -> error; integral floats -> integers (keeping -0.0 a float)
local function normalise(v, path)
  if v == cjson_module.null then bad(path == "" and "document" or path, "null is not allowed") end
  if type(v) == "number" then
    if math.type(v) == "float" and v == math.floor(v) and not (v == 0 and 1 / v < 0) then
      return math.tointeger(v) or v
    end
    return v
  end
  if type(v) == "table" then
    for k, x in pairs(v) do
      v[k] = normalise(x, type(k) == "number" and (path .. "[" .. k .. "]")
        or (path == "" and tostring(k) or (path .. "." .. tostring(k))))
    end
  end
  return v
end

local function restore(doc)
  normalise(doc, "")
  if type(doc.vertices) == "table" then
    for i, v in ipairs(doc.vertices) do f32_list(v, "vertices[" .. i .. "]") end
  end
  f32_list(doc.heights, "heights")
  if type(doc.bounds) == "table" then
    local b = doc.bounds
    for _, k in ipairs { "min", "max", "center" } do f32_list(b[k], "bounds." .. k) end
    if b.radius ~= nil then b.radius = f32_value(b.radius, "bounds.radius") end
  end
  if type(doc.roads) == "table" then
    for i, road in ipairs(doc.roads) do
      if type(road) == "table" then
        f32_list(road.lanes_left, "roads[" .. i .. "].lanes_left")
        f32_list(road.lanes_right, "roads[" .. i .. "].lanes_right")
      end
    end
  end
  if type(doc.textures) == "table" then
    for i, name in ipairs(doc.textures) do
      if type(name) == "table" then
        local hex = name.hex
        if type(hex) ~= "string" or #hex % 2 ~= 0 or hex:find("%X") or next(name, next(name)) then
          bad("textures[" .. i .. "]", 'a name, false or {"hex": "<even number of hex digits>"} expected')
        end
        doc.textures[i] = hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
      end
    end
  end
  return doc
end

--- Rebuild a document from the JSON text `dump` wrote.
-- @tparam string text
-- @treturn[1] table the document (not yet checked against the model: `psdl.encode` does that)
-- @treturn[2] nil
-- @treturn[2] string what is wrong with the text
function M.undump(text)
  local ok, t = pcall(cjson.decode, text)
  if not ok then return nil, "not valid JSON: " .. tostring(t) end
  if type(t) ~= "table" or t.format ~= M.FORMAT then
    return nil, string.format('not a psdlkit document (expected "format": "%s")', M.FORMAT)
  end
  if t.version ~= M.VERSION then
    return nil, string.format("unsupported document version %s (this psdl reads %d)",
      tostring(t.version), M.VERSION)
  end
  t.format, t.version = nil, nil
  local rok, err = pcall(restore, t)
  if not rok then
    if type(err) == "table" then return nil, err.path .. ": " .. err.msg end
    error(err, 0)
  end
  return t
end

--- The number of a float32's bits (an integer 0..2^32-1), NaN payloads kept.
M.float_from_bits = float_from_bits

return M
