--- Structural diff of two PSDL documents.
--
-- `diff(a, b)` compares two documents (docs/document-model.md) part by part — header
-- fields, the vertex and height pools, the texture table, every room (flags, prop rule,
-- perimeter, attributes with their form fields), the bounds and the road records — and
-- lists each difference with its path, as the validator writes paths:
-- `rooms[12].attributes[3].vertices[2]`, `textures[4]`, `vertices[17]`, `roads[2].rooms[1]`.
--
-- Pools, perimeters, reference lists and road records are compared position by position
-- (a vertex inserted in the pool renumbers everything after it, and the diff says so).
-- The attributes of a room are aligned first (longest common subsequence), so one attribute
-- inserted or removed is reported as that, not as every attribute after it changing.
--
-- Numbers compare by value, except that a float 0 and -0 differ (their bytes do) and NaN
-- equals NaN. Because decoded documents carry their form fields, two documents with no
-- difference encode to the same bytes.
-- @module psdl.diff

local string, table, math = string, table, math
local type, ipairs, pairs, tostring, error, next, setmetatable =
  type, ipairs, pairs, tostring, error, next, setmetatable
local string_format = string.format

local M = {}

--- Form fields of attributes (docs/document-model.md), skipped with `ignore_form`.
M.FORM_FIELDS = { last = true, counted = true, subtype = true, count = true, data = true, header_high = true }

local ATTR_KEY_ORDER = {
  "type", "last", "counted", "subtype", "count", "data", "header_high", "cap", "value",
  "flags", "height1", "height2", "ceiling_start", "wall_mask", "mask1", "mask2", "top",
  "density", "bottom", "light", "height", "divider_type", "cap_start", "cap_end",
  "divider_texture", "divider_value", "u_repeat", "v_repeat", "words", "vertices",
}
local ROAD_KEY_ORDER = {
  "flags", "lanes_left", "lanes_right", "stop_lights", "start_crossroads", "end_crossroads", "rooms",
}
local RANK = {}
for i, k in ipairs(ATTR_KEY_ORDER) do RANK[k] = i end
for i, k in ipairs(ROAD_KEY_ORDER) do RANK[k] = RANK[k] or (100 + i) end

-- Scalar equality: by value; float zeros by sign; NaN equals NaN.
local function same(a, b)
  if a == b then
    if a == 0 and math.type(a) == "float" and math.type(b) == "float" then return 1 / a == 1 / b end
    return true
  end
  return type(a) == "number" and type(b) == "number" and a ~= a and b ~= b
end
M.same = same

local function is_vec3(t)
  return type(t) == "table" and #t == 3 and type(t[1]) == "number" and t[4] == nil and next(t, 3) == nil
end

local function sorted_keys(a, b, skip)
  local keys, seen = {}, {}
  for _, t in ipairs { a, b } do
    if type(t) == "table" then
      for k in pairs(t) do
        if type(k) == "string" and not seen[k] and not (skip and skip[k]) then
          seen[k] = true
          keys[#keys + 1] = k
        end
      end
    end
  end
  table.sort(keys, function(x, y)
    local rx, ry = RANK[x] or 1000, RANK[y] or 1000
    if rx ~= ry then return rx < ry end
    return x < y
  end)
  return keys
end

-- The differ: collects entries {path, kind, a, b, section [, path_b]}.
local Differ = {}
Differ.__index = Differ

function Differ:add(kind, path, a, b)
  local e = { section = self.section, kind = kind, path = path, a = a, b = b }
  if self.path_b then e.path_b = self.path_b(path) end
  local out = self.out
  out[#out + 1] = e
end

-- Compare two values of any shape at path.
function Differ:value(path, a, b, skip)
  local ta, tb = type(a), type(b)
  if ta == "table" and tb == "table" then
    if is_vec3(a) and is_vec3(b) then
      if not (same(a[1], b[1]) and same(a[2], b[2]) and same(a[3], b[3])) then self:add("changed", path, a, b) end
      return
    end
    local na, nb = #a, #b
    for i = 1, math.min(na, nb) do self:value(string_format("%s[%d]", path, i), a[i], b[i]) end
    for i = nb + 1, na do self:add("removed", string_format("%s[%d]", path, i), a[i], nil) end
    for i = na + 1, nb do self:add("added", string_format("%s[%d]", path, i), nil, b[i]) end
    for _, k in ipairs(sorted_keys(a, b, skip)) do
      self:value(path .. "." .. k, a[k], b[k])
    end
  elseif ta == "table" or tb == "table" then
    if a == nil then self:add("added", path, nil, b)
    elseif b == nil then self:add("removed", path, a, nil)
    else self:add("changed", path, a, b) end
  elseif not same(a, b) then
    if a == nil then self:add("added", path, nil, b)
    elseif b == nil then self:add("removed", path, a, nil)
    else self:add("changed", path, a, b) end
  end
end

-- A pool (vertices, heights, textures, materials): position by position.
function Differ:pool(name, a, b)
  a, b = a or {}, b or {}
  local na, nb = #a, #b
  for i = 1, math.min(na, nb) do
    local x, y = a[i], b[i]
    if type(x) == "table" or type(y) == "table" then
      self:value(string_format("%s[%d]", name, i), x, y)
    elseif not same(x, y) then
      self:add("changed", string_format("%s[%d]", name, i), x, y)
    end
  end
  for i = nb + 1, na do self:add("removed", string_format("%s[%d]", name, i), a[i], nil) end
  for i = na + 1, nb do self:add("added", string_format("%s[%d]", name, i), nil, b[i]) end
end

-- A canonical text of an attribute, for aligning attribute lists.
local function key_of(attr, skip)
  if type(attr) ~= "table" then return tostring(attr) end
  local parts = {}
  for _, k in ipairs(sorted_keys(attr, nil, skip)) do
    local v = attr[k]
    if type(v) == "table" then
      local items = {}
      for i, x in ipairs(v) do items[i] = string_format("%.17g", x) end
      parts[#parts + 1] = k .. "=[" .. table.concat(items, ",") .. "]"
    elseif type(v) == "number" then
      parts[#parts + 1] = k .. "=" .. (v ~= v and "nan" or string_format("%.17g", v)) ..
        ((v == 0 and math.type(v) == "float" and 1 / v < 0) and "-" or "")
    else
      parts[#parts + 1] = k .. "=" .. tostring(v)
    end
  end
  return table.concat(parts, ";")
end

-- Pairs (i, j) aligning lists ka and kb of keys: a longest common subsequence; unmatched
-- runs between matches are paired position by position, the rest is removed (j = nil) or
-- added (i = nil).
local function align(ka, kb)
  local na, nb = #ka, #kb
  local pre = 0
  while pre < na and pre < nb and ka[pre + 1] == kb[pre + 1] do pre = pre + 1 end
  local suf = 0
  while suf < na - pre and suf < nb - pre and ka[na - suf] == kb[nb - suf] do suf = suf + 1 end
  local pairs_out = {}
  for i = 1, pre do pairs_out[#pairs_out + 1] = { i, i } end
  -- LCS table over the middle parts
  local a0, b0 = pre, pre
  local ma, mb = na - pre - suf, nb - pre - suf
  local L = {}
  for i = 0, ma do L[i] = {} ; L[i][mb + 1] = 0 end
  for j = 0, mb + 1 do L[ma + 1] = L[ma + 1] or {} ; L[ma + 1][j] = 0 end
  for i = ma, 1, -1 do
    local row, next_row = L[i], L[i + 1]
    for j = mb, 1, -1 do
      if ka[a0 + i] == kb[b0 + j] then
        row[j] = next_row[j + 1] + 1
      else
        local x, y = next_row[j], row[j + 1]
        row[j] = x >= y and x or y
      end
    end
  end
  local i, j = 1, 1
  local run_a, run_b = {}, {}
  local function flush()
    local k = math.min(#run_a, #run_b)
    for t = 1, k do pairs_out[#pairs_out + 1] = { run_a[t], run_b[t] } end
    for t = k + 1, #run_a do pairs_out[#pairs_out + 1] = { run_a[t], nil } end
    for t = k + 1, #run_b do pairs_out[#pairs_out + 1] = { nil, run_b[t] } end
    run_a, run_b = {}, {}
  end
  while i <= ma and j <= mb do
    if ka[a0 + i] == kb[b0 + j] then
      flush()
      pairs_out[#pairs_out + 1] = { a0 + i, b0 + j }
      i, j = i + 1, j + 1
    elseif L[i + 1][j] >= L[i][j + 1] then
      run_a[#run_a + 1] = a0 + i
      i = i + 1
    else
      run_b[#run_b + 1] = b0 + j
      j = j + 1
    end
  end
  for t = i, ma do run_a[#run_a + 1] = a0 + t end
  for t = j, mb do run_b[#run_b + 1] = b0 + t end
  flush()
  for t = 1, suf do pairs_out[#pairs_out + 1] = { na - suf + t, nb - suf + t } end
  return pairs_out
end
M.align = align

function Differ:attributes(r, a, b)
  local skip = self.skip_form
  local prefix = string_format("rooms[%d].attributes", r)
  local list
  if #a == #b then
    list = {}
    for i = 1, #a do list[i] = { i, i } end
  else
    local ka, kb = {}, {}
    for i, x in ipairs(a) do ka[i] = key_of(x, skip) end
    for i, x in ipairs(b) do kb[i] = key_of(x, skip) end
    list = align(ka, kb)
  end
  for _, p in ipairs(list) do
    local i, j = p[1], p[2]
    if i and j then
      local x, y = a[i], b[j]
      local path = string_format("%s[%d]", prefix, i)
      if i ~= j then
        local pb = string_format("%s[%d]", prefix, j)
        self.path_b = function(s) return pb .. s:sub(#path + 1) end
      end
      if type(x) ~= "table" or type(y) ~= "table" or x.type ~= y.type then
        self:add("changed", path, x, y)
      else
        self:value(path, x, y, skip)
      end
      self.path_b = nil
    elseif i then
      self:add("removed", string_format("%s[%d]", prefix, i), a[i], nil)
    else
      self:add("added", string_format("%s[%d]", prefix, j), nil, b[j])
    end
  end
end

function Differ:room(r, a, b)
  local p = string_format("rooms[%d]", r)
  self:value(p .. ".flags", a.flags, b.flags)
  self:value(p .. ".prop_rule", a.prop_rule, b.prop_rule)
  self:value(p .. ".perimeter", a.perimeter or {}, b.perimeter or {})
  self:attributes(r, a.attributes or {}, b.attributes or {})
end

--- Compare two documents.
-- @tparam table a
-- @tparam table b
-- @tparam[opt] table opts `ignore_form` (skip attribute form fields: `last`, `counted`,
--   `subtype`, `count`, `data`, `header_high`), `sections` (a set of section names to
--   compare, default all: `header`, `vertices`, `heights`, `textures`, `rooms`, `bounds`,
--   `roads`)
-- @treturn table `{equal = bool, differences = {...}, counts = {[section] = n}}`; each
--   difference is `{section =, kind = "changed"|"added"|"removed", path =, a =, b =
--   [, path_b =]}` (`a`/`b` nil for added/removed; `path_b` the path in `b` when an aligned
--   attribute sits at another position there)
-- @raise when a or b is not a document
function M.diff(a, b, opts)
  if type(a) ~= "table" or type(a.rooms) ~= "table" then
    error("bad argument #1 to 'diff' (document expected, got " .. type(a) .. ")", 2)
  end
  if type(b) ~= "table" or type(b.rooms) ~= "table" then
    error("bad argument #2 to 'diff' (document expected, got " .. type(b) .. ")", 2)
  end
  opts = opts or {}
  local d = setmetatable({ out = {}, skip_form = opts.ignore_form and M.FORM_FIELDS or nil }, Differ)
  local want = opts.sections
  local function section(name) d.section = name; return not want or want[name] end

  if section("header") then
    d:value("magic", a.magic, b.magic)
    d:value("target_size", a.target_size, b.target_size)
    d:value("first_road_room", a.first_road_room, b.first_road_room)
    d:value("room0", a.room0, b.room0)
  end
  if section("vertices") then d:pool("vertices", a.vertices, b.vertices) end
  if section("heights") then d:pool("heights", a.heights, b.heights) end
  if section("textures") then
    d:pool("textures", a.textures, b.textures)
    if a.materials or b.materials then d:pool("materials", a.materials, b.materials) end
  end
  if section("rooms") then
    local ra, rb = a.rooms, b.rooms
    for r = 1, math.min(#ra, #rb) do d:room(r, ra[r], rb[r]) end
    for r = #rb + 1, #ra do d:add("removed", string_format("rooms[%d]", r), ra[r], nil) end
    for r = #ra + 1, #rb do d:add("added", string_format("rooms[%d]", r), nil, rb[r]) end
  end
  if section("bounds") then d:value("bounds", a.bounds, b.bounds) end
  if section("roads") then
    local ra, rb = a.roads, b.roads
    if ra == nil or rb == nil then
      d:value("roads", ra, rb)
    else
      for i = 1, math.min(#ra, #rb) do d:value(string_format("roads[%d]", i), ra[i], rb[i]) end
      for i = #rb + 1, #ra do d:add("removed", string_format("roads[%d]", i), ra[i], nil) end
      for i = #ra + 1, #rb do d:add("added", string_format("roads[%d]", i), nil, rb[i]) end
    end
  end

  local counts = {}
  for _, e in ipairs(d.out) do counts[e.section] = (counts[e.section] or 0) + 1 end
  return { equal = #d.out == 0, differences = d.out, counts = counts }
end

--- Order in which sections are listed.
M.SECTIONS = { "header", "vertices", "heights", "textures", "rooms", "bounds", "roads" }

--- Short text for a value in a difference (`(1, 2, 3)`, `"r4_f"`, `road (5 sections)`).
-- @param v
-- @tparam[opt] function num number formatter (default `%.9g`)
-- @treturn string
function M.value_text(v, num)
  num = num or function(x) return string_format("%.9g", x) end
  local t = type(v)
  if v == nil then return "(none)" end
  if v == false then return "false (empty slot)" end
  if t == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    return num(v)
  end
  if t == "string" then return string_format("%q", v) end
  if t ~= "table" then return tostring(v) end
  if is_vec3(v) then return string_format("(%s, %s, %s)", num(v[1]), num(v[2]), num(v[3])) end
  if type(v.type) == "string" then -- an attribute
    local n = type(v.vertices) == "table" and #v.vertices or 0
    local extra = ""
    if v.type == "texture" then extra = " " .. tostring(v.value)
    elseif n > 0 then extra = string_format(" (%d vert%s)", n, n == 1 and "ex" or "ices") end
    return "<" .. v.type .. extra .. ">"
  end
  if v.perimeter then
    return string_format("<room: flags 0x%02x, %d perimeter points, %d attributes>", v.flags or 0,
      #(v.perimeter or {}), #(v.attributes or {}))
  end
  if v.lanes_left then
    return string_format("<road record: %d rooms>", #(v.rooms or {}))
  end
  if v.vertex then return string_format("{vertex %s, neighbour %s}", tostring(v.vertex), tostring(v.neighbour)) end
  if #v > 0 then
    local items = {}
    for i, x in ipairs(v) do
      if i > 8 then items[#items + 1] = "..." break end
      items[i] = M.value_text(x, num)
    end
    return "[" .. table.concat(items, ", ") .. "]"
  end
  local keys = sorted_keys(v, nil)
  local items = {}
  for _, k in ipairs(keys) do items[#items + 1] = k .. " = " .. M.value_text(v[k], num) end
  return "{" .. table.concat(items, ", ") .. "}"
end

return M
