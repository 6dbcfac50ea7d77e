--- Batch texture editing on a document: rename texture names, remap texture references,
-- move or swap whole texture groups, drop unused names (psdl-format.md §2.3).
--
-- A texture attribute `{type = "texture", value = n}` makes slot `n` the base of a *group*
-- for the attributes after it in the room: road and divided road strips read n..n+2
-- (surface, sidewalk, low detail), crosswalks n+2, sidewalk strips n+1, tunnels n..n+5,
-- everything else n. A divided road's `divider_texture` D is a second kind of reference,
-- in its own one-byte field, to the divider group: slots D..D+3 (side walls, flat/bevel,
-- top, caps). Every slot a reference's group spans must stay together, in order, through
-- any edit: that is what "splitting a group" means here.
--
-- Operations (each a function taking the document first, and a document method of the
-- same operation, e.g. `doc:rename_texture("r4_f", "r6_f")`):
--
-- * `rename(doc, old, new)`: every slot named `old` is named `new`. Only the texture table
--   changes.
-- * `rename_map(doc, {[old] = new, ...})`: several renames at once (simultaneously).
-- * `remap(doc, from, to [, {rooms =, textures =, dividers =}])`: references with value
--   `from` (texture attributes and divider textures, optionally only in some rooms) point at
--   `to` instead. The table does not change.
-- * `move_group(doc, from, to [, {length =}])`: the group of slots `from .. from+length-1`
--   is taken out of the table and put back so that it starts at slot `to`; the slots in
--   between close up or make room, as when moving rows in a list. `to` past the end of the
--   table pads it with empty slots. Every reference is renumbered.
-- * `swap_groups(doc, a, b [, {length_a =, length_b =}])`: two groups exchange places
--   (the slots between them shift when the lengths differ); references are renumbered.
-- * `compact(doc)`: slots no reference's group spans (unused names, empty slots) are
--   dropped and references renumbered.
--
-- A group's length, when not given, is one more than the largest offset any reference
-- based at its first slot reads (1 when no reference is based there).
--
-- Every operation checks before it changes anything. It refuses, returning `nil, message,
-- "refused"` and leaving the document untouched, an edit that would split a group, put a
-- divider texture past slot 255, put a reference past the 2047 limit, point a reference at
-- a slot the table does not have, or make a group run past the end of the table (when it
-- did not already). Messages name the room and attribute (`rooms[7].attributes[2]: ...`).
-- Misuse (a wrong argument type) raises. On success an operation returns a report:
-- `{op =, summary =, changes = {{path =, from =, to =}...}, warnings = {...}}`;
-- `changes` is empty when nothing changed. Warnings note references newly past 511 ("not
-- rendered properly") and 767 ("stock MM2 cannot load it").
--
-- Decoded documents keep their form fields, so only the bytes that hold what changed are
-- re-encoded differently: a rename changes the texture table, a remap the data word (or
-- header subtype) of each changed texture attribute and the divider byte of each changed
-- divided road.
-- @module psdl.retexture

local check = require "psdl.check"
local LIMITS = require("psdl.core").limits

local string, table, math = string, table, math
local type, ipairs, pairs, error, tostring, pcall = type, ipairs, pairs, error, tostring, pcall
local string_format = string.format

local M = {}

--- Largest texture value (3-bit subtype + data byte, §2.3).
M.MAX_VALUE = LIMITS.texture_value
--- Largest divider texture value (one byte, §2.4 0x8).
M.MAX_DIVIDER = LIMITS.divider_texture
--- Reference values past which a warning is given, and why (§3.2).
M.WARN_LIMITS = {
  { LIMITS.texture_rendered, "reported not to render properly" },
  { LIMITS.texture_stock, "stock MM2 is reported not to load it without MM2Hook" },
}
--- Highest slot offset each attribute type reads from its group base (§2.3).
M.SPAN = {
  road = 2, divided_road = 2, crosswalk = 2, sidewalk_strip = 1, tunnel = 5,
  junction_tunnel = 5, walkway = 0, road_fan = 0, fan = 0, roof = 0, facade = 0,
  sliver = 0, facade_bound = 0,
}
--- Highest slot offset a divider texture reads (D..D+3: sides, flat/bevels, top, caps).
M.DIVIDER_SPAN = 3

-- Raise "bad argument" at the first caller outside this file (psdl.check).
check.own(debug.getinfo(1, "S").source)
local function argcheck(cond, n, fname, msg)
  if not cond then check.argerr(n, fname, msg) end
end

local function check_doc(doc, fname)
  argcheck(type(doc) == "table" and type(doc.textures) == "table" and type(doc.rooms) == "table",
    1, fname, "document expected")
end

local function check_slot(v, n, fname)
  argcheck(math.type(v) == "integer" or (type(v) == "number" and v == math.floor(v)), n, fname,
    "integer texture slot expected, got " .. tostring(v))
  v = math.tointeger(v)
  argcheck(v >= 1, n, fname, "texture slot must be at least 1, got " .. v)
  return v
end

-- The arguments of an operation from one slot to another (remap, move_group), checked:
-- from, to and opts (a table; {} when absent).
local function slot_args(doc, from, to, opts, fname)
  check_doc(doc, fname)
  from = check_slot(from, 2, fname)
  to = check_slot(to, 3, fname)
  argcheck(opts == nil or type(opts) == "table", 4, fname, "table expected")
  return from, to, opts or {}
end

local function refused(msg)
  return nil, msg, "refused"
end

local function quote(name)
  if name == false or name == nil then return "(empty)" end
  return string_format("%q", name)
end

local function range_text(a, b)
  if a == b then return tostring(a) end
  return a .. ".." .. b
end

------------------------------------------------------------------------ references

--- Every texture reference of a document.
-- @tparam table doc
-- @tparam[opt] table rooms a set `{[id] = true}` of room ids to look at (default all)
-- @treturn table list of `{kind = "texture"|"divider", room =, attribute =, attr =, value =,
--   span =, users = {type, ...}}`: `span` is the highest offset the group is read at
--   (0 when nothing reads it), `users` the attribute types that read it
function M.references(doc, rooms)
  local refs = {}
  for r, room in ipairs(doc.rooms) do
    if not rooms or rooms[r] then
      local cur
      for a, attr in ipairs(room.attributes or {}) do
        local t = attr.type
        if t == "texture" then
          cur = nil
          local v = attr.value
          if math.type(v) == "integer" and v > 0 then
            cur = { kind = "texture", room = r, attribute = a, attr = attr, value = v, span = 0, users = {} }
            refs[#refs + 1] = cur
          end
        else
          local s = M.SPAN[t]
          if cur and s then
            if s > cur.span then cur.span = s end
            local u = cur.users
            if u[#u] ~= t then u[#u + 1] = t end
          end
          if t == "divided_road" and math.type(attr.divider_texture) == "integer" and attr.divider_texture > 0 then
            refs[#refs + 1] = {
              kind = "divider", room = r, attribute = a, attr = attr, value = attr.divider_texture,
              span = M.DIVIDER_SPAN, users = { "divider" },
            }
          end
        end
      end
    end
  end
  return refs
end

--- Which slots the references use: for each slot, how many references are based there and
-- how many groups span it.
-- @tparam table doc
-- @treturn table `{[slot] = {base = n, spanned = m}}` for every slot 1..#doc.textures
function M.usage(doc)
  local use = {}
  local n = #doc.textures
  for i = 1, n do use[i] = { base = 0, spanned = 0 } end
  for _, ref in ipairs(M.references(doc)) do
    local v = ref.value
    if use[v] then use[v].base = use[v].base + 1 end
    for j = v, math.min(n, v + ref.span) do use[j].spanned = use[j].spanned + 1 end
  end
  return use
end

local function ref_path(ref)
  return string_format("rooms[%d].attributes[%d]", ref.room, ref.attribute)
end

local function ref_field(ref)
  return ref.kind == "divider" and "divider_texture" or "value"
end

local function ref_what(ref)
  if ref.kind == "divider" then return "divider" end
  if #ref.users == 0 then return "texture attribute" end
  return "texture attribute (read by " .. table.concat(ref.users, ", ") .. ")"
end

-- Set a texture attribute's value. A non-canonical stored form (subtype/data fields) is
-- kept when it is the 16-bit subtype-0 form, otherwise dropped for the canonical one.
local function set_texture_value(attr, v)
  attr.value = v
  if attr.subtype ~= nil or attr.data ~= nil then
    if (attr.subtype or 0) == 0 and v <= 0xFFFF then
      attr.subtype, attr.data = 0, v
    else
      attr.subtype, attr.data = nil, nil
    end
  end
end

local function set_ref(ref, v)
  if ref.kind == "divider" then ref.attr.divider_texture = v else set_texture_value(ref.attr, v) end
end

-- Counts of texture references above each warning limit.
local function over_limits(refs, value_of)
  local counts = {}
  for i, lim in ipairs(M.WARN_LIMITS) do
    local c = 0
    for _, ref in ipairs(refs) do
      if ref.kind == "texture" and value_of(ref) > lim[1] then c = c + 1 end
    end
    counts[i] = c
  end
  return counts
end

local function limit_warnings(refs, new_value)
  local before = over_limits(refs, function(ref) return ref.value end)
  local after = over_limits(refs, new_value)
  local warnings = {}
  for i, lim in ipairs(M.WARN_LIMITS) do
    if after[i] > before[i] then
      warnings[#warnings + 1] = string_format(
        "%d texture reference%s past %d (was %d): %s (psdl-format.md §3.2)",
        after[i], after[i] == 1 and "" or "s", lim[1], before[i], lim[2])
    end
  end
  return warnings
end

------------------------------------------------------------------------ permutations

-- Check and apply a renumbering of the slots. new_of[i] is the new slot of old slot i
-- (nil: dropped, only for slots no group spans); size the new table's size.
local function permute(doc, new_of, size, opname, summary)
  local n = #doc.textures
  local refs = M.references(doc)
  -- checks first: nothing changes unless everything passes
  for _, ref in ipairs(refs) do
    local v = ref.value
    if v <= n then
      local nv = new_of[v]
      local last = math.min(n, v + ref.span)
      for j = v + 1, last do
        if new_of[j] ~= nv + (j - v) then
          return refused(string_format(
            "%s: this %s reads texture slots %s (%s); %s would split that group",
            ref_path(ref), ref_what(ref), range_text(v, last), quote(doc.textures[v]) ..
              (last > v and " .. " .. quote(doc.textures[last]) or ""), opname))
        end
      end
      if ref.kind == "divider" and nv > M.MAX_DIVIDER then
        return refused(string_format(
          "%s: %s would move this divided road's divider texture from slot %d to %d, past slot %d "
            .. "(it is one byte, psdl-format.md §2.4 0x8)", ref_path(ref), opname, v, nv, M.MAX_DIVIDER))
      end
      if nv + (last - v) > M.MAX_VALUE then
        return refused(string_format(
          "%s: %s would move this %s to slots %s, past the %d limit (psdl-format.md §2.3)",
          ref_path(ref), opname, ref_what(ref), range_text(nv, nv + last - v), M.MAX_VALUE))
      end
    end
  end
  if size > M.MAX_VALUE then
    return refused(string_format("%s would make the texture table %d slots long, past the %d limit "
      .. "(psdl-format.md §2.3)", opname, size, M.MAX_VALUE))
  end
  local warnings = limit_warnings(refs, function(ref)
    return ref.value <= n and new_of[ref.value] or ref.value
  end)
  local rendered = LIMITS.texture_rendered
  if size > rendered and n <= rendered then
    warnings[#warnings + 1] = string_format("the texture table grows to %d slots, past %d", size, rendered)
  end

  -- apply
  local changes = {}
  local old_tex, old_mat = doc.textures, doc.materials
  local tex, mat = {}, old_mat and {} or nil
  for i = 1, size do
    tex[i] = false
    if mat then mat[i] = 0 end
  end
  for i = 1, n do
    local j = new_of[i]
    if j then
      tex[j] = old_tex[i]
      if mat then mat[j] = old_mat[i] end
    end
  end
  for i = 1, math.max(n, size) do
    if old_tex[i] ~= tex[i] then
      changes[#changes + 1] = { path = string_format("textures[%d]", i), from = old_tex[i], to = tex[i] }
      if old_tex[i] == nil then changes[#changes].from = nil end
      if tex[i] == nil then changes[#changes].to = nil end
    end
  end
  -- replace the arrays in place so that other holders of doc.textures see the change
  for i = 1, math.max(n, size) do old_tex[i] = tex[i] end
  if mat then for i = 1, math.max(n, size) do old_mat[i] = mat[i] end end
  for _, ref in ipairs(refs) do
    local v = ref.value
    if v <= n and new_of[v] ~= v then
      set_ref(ref, new_of[v])
      changes[#changes + 1] = { path = ref_path(ref) .. "." .. ref_field(ref), from = v, to = new_of[v] }
    end
  end
  return { op = opname, summary = summary, changes = changes, warnings = warnings }
end

-- A group's length: one more than the largest offset read from references based at slot.
local function group_length(doc, slot)
  local len = 1
  for _, ref in ipairs(M.references(doc)) do
    if ref.value == slot then len = math.max(len, ref.span + 1) end
  end
  return len
end

------------------------------------------------------------------------ operations

--- Rename a texture: every slot named `old` gets the name `new`.
-- @tparam table doc
-- @tparam string old
-- @tparam string new 1..31 characters, no NUL
-- @treturn table report (no changes when no slot is named `old`)
-- @return[2] nil, message, `"refused"` for a name the game cannot hold
-- @raise on a wrong argument type
function M.rename(doc, old, new)
  check_doc(doc, "rename")
  argcheck(type(old) == "string", 2, "rename", "string expected, got " .. type(old))
  argcheck(type(new) == "string", 3, "rename", "string expected, got " .. type(new))
  if new == "" or #new > 31 or new:find("\0", 1, true) then
    return refused(string_format("cannot rename %s to %s: a texture name has 1 to 31 characters "
      .. "and no NUL (psdl-format.md §1.3)", quote(old), quote(new)))
  end
  local changes, slots = {}, {}
  if old ~= new then
    for i, name in ipairs(doc.textures) do
      if name == old then
        doc.textures[i] = new
        changes[#changes + 1] = { path = string_format("textures[%d]", i), from = old, to = new }
        slots[#slots + 1] = i
      end
    end
  end
  local summary
  if #slots > 0 then
    summary = string_format("rename %s -> %s: slot%s %s", quote(old), quote(new),
      #slots == 1 and "" or "s", table.concat(slots, ", "))
  else
    summary = string_format("rename %s -> %s: no slot has that name", quote(old), quote(new))
  end
  return { op = "rename", summary = summary, changes = changes, warnings = {} }
end

--- Rename several textures at once: `map` is `{[old] = new, ...}`, applied to every slot
-- simultaneously (so `{a = "b", b = "a"}` swaps two names).
-- @tparam table doc
-- @tparam table map
-- @treturn table report
-- @return[2] nil, message, `"refused"` for a name the game cannot hold
function M.rename_map(doc, map)
  check_doc(doc, "rename_map")
  argcheck(type(map) == "table", 2, "rename_map", "table expected, got " .. type(map))
  local olds = {}
  for old, new in pairs(map) do
    argcheck(type(old) == "string" and type(new) == "string", 2, "rename_map",
      "string keys and values expected")
    if new == "" or #new > 31 or new:find("\0", 1, true) then
      return refused(string_format("cannot rename %s to %s: a texture name has 1 to 31 characters "
        .. "and no NUL (psdl-format.md §1.3)", quote(old), quote(new)))
    end
    olds[#olds + 1] = old
  end
  table.sort(olds)
  local changes, hits = {}, {}
  for i, name in ipairs(doc.textures) do
    local new = name and map[name]
    if new and new ~= name then
      doc.textures[i] = new
      changes[#changes + 1] = { path = string_format("textures[%d]", i), from = name, to = new }
      hits[name] = (hits[name] or 0) + 1
    end
  end
  local parts, missing = {}, 0
  for _, old in ipairs(olds) do
    if hits[old] then
      parts[#parts + 1] = string_format("%s -> %s", quote(old), quote(map[old]))
    elseif old ~= map[old] then
      missing = missing + 1
    end
  end
  local summary = string_format("rename: %d slot%s%s%s", #changes, #changes == 1 and "" or "s",
    #parts > 0 and (" (" .. table.concat(parts, ", ") .. ")") or "",
    missing > 0 and string_format("; %d name%s not in the table", missing, missing == 1 and "" or "s") or "")
  return { op = "rename", summary = summary, changes = changes, warnings = {} }
end

--- Point the references with value `from` at `to`.
-- @tparam table doc
-- @tparam integer from
-- @tparam integer to
-- @tparam[opt] table opts `rooms` (a set `{[id]=true}` or a list of room ids: only these
--   rooms), `textures` (default true: texture attributes), `dividers` (default true:
--   divider textures)
-- @treturn table report
-- @return[2] nil, message, `"refused"`
function M.remap(doc, from, to, opts)
  from, to, opts = slot_args(doc, from, to, opts, "remap")
  local rooms = opts.rooms
  argcheck(rooms == nil or type(rooms) == "table", 4, "remap", "rooms: table expected")
  if rooms and type(rooms[1]) == "number" then -- a list of ids
    local set = {}
    for _, id in ipairs(rooms) do set[id] = true end
    rooms = set
  end
  local n = #doc.textures
  local what = string_format("remap %d -> %d", from, to)
  if to > M.MAX_VALUE then
    return refused(string_format("%s: slot %d is past the %d limit (psdl-format.md §2.3)", what, to, M.MAX_VALUE))
  end
  if to > n then
    return refused(string_format("%s: the texture table has only %d slots", what, n))
  end
  local selected = {}
  for _, ref in ipairs(M.references(doc, rooms)) do
    if ref.value == from and ((ref.kind == "texture" and opts.textures ~= false)
        or (ref.kind == "divider" and opts.dividers ~= false)) then
      selected[#selected + 1] = ref
    end
  end
  for _, ref in ipairs(selected) do
    if ref.kind == "divider" and to > M.MAX_DIVIDER then
      return refused(string_format("%s: %s: a divider texture cannot go past slot %d (it is one byte, "
        .. "psdl-format.md §2.4 0x8)", what, ref_path(ref), M.MAX_DIVIDER))
    end
    -- the group must fit the table as well as it did before
    local fitted = math.max(0, math.min(ref.span, n - from))
    if to + fitted > n then
      return refused(string_format(
        "%s: %s: this %s reads slots %s; at %d its group would need slots %s, past the end of "
          .. "the table (%d slots): the group would be split", what, ref_path(ref), ref_what(ref),
        range_text(from, from + ref.span), to, range_text(to, to + fitted), n))
    end
  end
  local warnings = limit_warnings(selected, function() return to end)
  local changes, rooms_changed = {}, {}
  if from ~= to then
    for _, ref in ipairs(selected) do
      set_ref(ref, to)
      changes[#changes + 1] = { path = ref_path(ref) .. "." .. ref_field(ref), from = from, to = to }
      rooms_changed[ref.room] = true
    end
  end
  local ids = {}
  for id in pairs(rooms_changed) do ids[#ids + 1] = id end
  table.sort(ids)
  local summary = string_format("%s: %d reference%s%s", what, #changes, #changes == 1 and "" or "s",
    #ids > 0 and (" in room" .. (#ids == 1 and " " or "s ") .. M.room_list_text(ids)) or "")
  return { op = "remap", summary = summary, changes = changes, warnings = warnings }
end

--- Move the group of slots `from .. from+length-1` so that it starts at slot `to`.
-- @tparam table doc
-- @tparam integer from first slot of the group
-- @tparam integer to its first slot afterwards
-- @tparam[opt] table opts `length` (default: inferred from the references based at `from`)
-- @treturn table report
-- @return[2] nil, message, `"refused"`
function M.move_group(doc, from, to, opts)
  from, to, opts = slot_args(doc, from, to, opts, "move_group")
  local n = #doc.textures
  local len = opts.length and check_slot(opts.length, 4, "move_group") or group_length(doc, from)
  local last = from + len - 1
  local opname = string_format("moving slot%s %s to %s", len == 1 and "" or "s", range_text(from, last),
    range_text(to, to + len - 1))
  if last > n then
    return refused(string_format("%s: the texture table has only %d slots", opname, n))
  end
  if to + len - 1 > M.MAX_VALUE then
    return refused(string_format("%s: the group would end past the %d limit (psdl-format.md §2.3)",
      opname, M.MAX_VALUE))
  end
  -- the list without the group, padded up to `to`, then the group
  local order = {}
  for i = 1, n do if i < from or i > last then order[#order + 1] = i end end
  local rest = #order
  local new_of = {}
  local head = math.min(to - 1, rest)
  for k = 1, head do new_of[order[k]] = k end
  for k = 0, len - 1 do new_of[from + k] = to + k end
  for k = head + 1, rest do new_of[order[k]] = k + len end
  local size = math.max(n, to + len - 1)
  local report, msg, code = permute(doc, new_of, size, opname,
    string_format("move slot%s %s (%s) to %s", len == 1 and "" or "s", range_text(from, last), quote(doc.textures[from]),
      range_text(to, to + len - 1)))
  if not report then return nil, msg, code end
  report.op = "move"
  return report
end

--- Exchange two groups: `a .. a+length_a-1` and `b .. b+length_b-1`.
-- @tparam table doc
-- @tparam integer a first slot of one group
-- @tparam integer b first slot of the other
-- @tparam[opt] table opts `length_a`, `length_b` (default: inferred)
-- @treturn table report
-- @return[2] nil, message, `"refused"`
function M.swap_groups(doc, a, b, opts)
  check_doc(doc, "swap_groups")
  a = check_slot(a, 2, "swap_groups")
  b = check_slot(b, 3, "swap_groups")
  argcheck(opts == nil or type(opts) == "table", 4, "swap_groups", "table expected")
  opts = opts or {}
  local la = opts.length_a and check_slot(opts.length_a, 4, "swap_groups") or group_length(doc, a)
  local lb = opts.length_b and check_slot(opts.length_b, 4, "swap_groups") or group_length(doc, b)
  if a > b then a, b, la, lb = b, a, lb, la end
  local n = #doc.textures
  local opname = string_format("swapping slots %s and %s", range_text(a, a + la - 1), range_text(b, b + lb - 1))
  if a + la - 1 >= b then
    return refused(string_format("%s: the groups overlap", opname))
  end
  if b + lb - 1 > n then
    return refused(string_format("%s: the texture table has only %d slots", opname, n))
  end
  -- new order: before a, group b, between, group a, after b
  local order = {}
  for i = 1, a - 1 do order[#order + 1] = i end
  for i = b, b + lb - 1 do order[#order + 1] = i end
  for i = a + la, b - 1 do order[#order + 1] = i end
  for i = a, a + la - 1 do order[#order + 1] = i end
  for i = b + lb, n do order[#order + 1] = i end
  local new_of = {}
  for k, i in ipairs(order) do new_of[i] = k end
  local report, msg, code = permute(doc, new_of, n, opname,
    string_format("swap slots %s (%s) and %s (%s)", range_text(a, a + la - 1), quote(doc.textures[a]),
      range_text(b, b + lb - 1), quote(doc.textures[b])))
  if not report then return nil, msg, code end
  report.op = "swap"
  return report
end

--- Drop the slots no reference's group spans, renumbering the references.
-- @tparam table doc
-- @treturn table report (`dropped` lists the old slots removed)
-- @return[2] nil, message, `"refused"`
function M.compact(doc)
  check_doc(doc, "compact")
  local n = #doc.textures
  local used = {}
  for _, ref in ipairs(M.references(doc)) do
    for j = ref.value, math.min(n, ref.value + ref.span) do used[j] = true end
  end
  local new_of, k, dropped = {}, 0, {}
  for i = 1, n do
    if used[i] then k = k + 1; new_of[i] = k else dropped[#dropped + 1] = i end
  end
  local names = {}
  for i, s in ipairs(dropped) do
    if i > 8 then names[#names + 1] = "..." break end
    names[#names + 1] = string_format("%d %s", s, quote(doc.textures[s]))
  end
  local summary = #dropped == 0 and "compact: every slot is used"
    or string_format("compact: dropped %d unused slot%s (%s), %d -> %d slots", #dropped,
      #dropped == 1 and "" or "s", table.concat(names, ", "), n, k)
  if #dropped == 0 then return { op = "compact", summary = summary, changes = {}, warnings = {}, dropped = {} } end
  local report, msg, code = permute(doc, new_of, k, "compacting the texture table", summary)
  if not report then return nil, msg, code end
  -- the table shrank: slots past k were set to nil by permute
  report.op = "compact"
  report.dropped = dropped
  return report
end

------------------------------------------------------------------------ batches

-- Everything an operation may change, to put back when a later operation of a batch fails.
local function snapshot(doc)
  local s = { textures = {}, materials = doc.materials and {} or nil, attrs = {} }
  for i, v in ipairs(doc.textures) do s.textures[i] = v end
  if s.materials then for i, v in ipairs(doc.materials) do s.materials[i] = v end end
  for _, room in ipairs(doc.rooms) do
    for _, attr in ipairs(room.attributes or {}) do
      if attr.type == "texture" then
        s.attrs[#s.attrs + 1] = { attr, "value", attr.value, attr.subtype, attr.data }
      elseif attr.type == "divided_road" then
        s.attrs[#s.attrs + 1] = { attr, "divider_texture", attr.divider_texture }
      end
    end
  end
  return s
end

local function restore(doc, s)
  local t = doc.textures
  for i = #t, 1, -1 do t[i] = nil end
  for i, v in ipairs(s.textures) do t[i] = v end
  if s.materials then
    local m = doc.materials
    for i = #m, 1, -1 do m[i] = nil end
    for i, v in ipairs(s.materials) do m[i] = v end
  end
  for _, e in ipairs(s.attrs) do
    local attr = e[1]
    attr[e[2]] = e[3]
    if e[2] == "value" then attr.subtype, attr.data = e[4], e[5] end
  end
end

--- Apply several operations in order, all or nothing.
-- @tparam table doc
-- @tparam table ops list of `{op = "rename", from = old, to = new}` (or `map = {[old] = new}`),
--   `{op = "remap", from =, to =, rooms =}`, `{op = "move", from =, to =, length =}`,
--   `{op = "swap", a =, b =, length_a =, length_b =}`, `{op = "compact"}`
-- @treturn table list of the operations' reports
-- @return[2] nil, message, `"refused"` (the document is as it was)
function M.apply(doc, ops)
  check_doc(doc, "apply")
  argcheck(type(ops) == "table", 2, "apply", "table expected")
  local saved = snapshot(doc)
  local reports = {}
  for i, op in ipairs(ops) do
    argcheck(type(op) == "table", 2, "apply", string_format("ops[%d]: table expected", i))
    local report, msg, code
    local function run()
      if op.op == "rename" and op.map then
        report, msg, code = M.rename_map(doc, op.map)
      elseif op.op == "rename" then
        report, msg, code = M.rename(doc, op.from, op.to)
      elseif op.op == "remap" then
        report, msg, code = M.remap(doc, op.from, op.to, { rooms = op.rooms })
      elseif op.op == "move" then
        report, msg, code = M.move_group(doc, op.from, op.to, { length = op.length })
      elseif op.op == "swap" then
        report, msg, code = M.swap_groups(doc, op.a, op.b, { length_a = op.length_a, length_b = op.length_b })
      elseif op.op == "compact" then
        report, msg, code = M.compact(doc)
      else
        error(string_format("bad argument #2 to 'apply' (ops[%d]: unknown op %s)", i, tostring(op.op)), 0)
      end
    end
    -- misuse in an operation raises, after the document is put back as it was
    local ok, err = pcall(run)
    if not ok then
      restore(doc, saved)
      error(err, 0)
    end
    if not report then
      restore(doc, saved)
      return nil, msg, code
    end
    reports[#reports + 1] = report
  end
  return reports
end

------------------------------------------------------------------------ helpers

--- Room ids as compact text: `{1, 2, 3, 7}` -> `"1-3, 7"`.
-- @tparam table ids sorted list
-- @treturn string
function M.room_list_text(ids)
  local parts, i = {}, 1
  while i <= #ids do
    local j = i
    while j < #ids and ids[j + 1] == ids[j] + 1 do j = j + 1 end
    parts[#parts + 1] = j > i and (ids[i] .. "-" .. ids[j]) or tostring(ids[i])
    i = j + 1
  end
  return table.concat(parts, ", ")
end

--- Document methods (installed on documents by `psdl.read`/`psdl.decode`):
-- `doc:rename_texture(old, new)`, `doc:rename_textures(map)`, `doc:remap_texture(from, to, opts)`,
-- `doc:move_texture_group(from, to, opts)`, `doc:swap_texture_groups(a, b, opts)`,
-- `doc:compact_textures()`, `doc:retexture(ops)`, `doc:texture_references(rooms)`.
-- (a method's errors name the method and count its arguments after the document:
-- `doc:rename_textures("x")` -> "bad argument #1 to 'rename_textures'", not rename_map's #2)
local function method(f, fname, name)
  local function pass(ok, ...)
    if ok then return ... end
    local e = ...
    if type(e) == "string" then
      e = e:gsub("bad argument #(%d+) to '" .. fname .. "'", function(n)
        n = tonumber(n)
        if n == 1 then return "calling '" .. name .. "' on a bad document" end
        return string.format("bad argument #%d to '%s'", n - 1, name)
      end)
    end
    error(e, 0)
  end
  return function(...) return pass(pcall(f, ...)) end
end

M.methods = {
  rename_texture = method(M.rename, "rename", "rename_texture"),
  rename_textures = method(M.rename_map, "rename_map", "rename_textures"),
  remap_texture = method(M.remap, "remap", "remap_texture"),
  move_texture_group = method(M.move_group, "move_group", "move_texture_group"),
  swap_texture_groups = method(M.swap_groups, "swap_groups", "swap_texture_groups"),
  compact_textures = method(M.compact, "compact", "compact_textures"),
  retexture = method(M.apply, "apply", "retexture"),
  texture_references = method(M.references, "references", "texture_references"),
}

return M
