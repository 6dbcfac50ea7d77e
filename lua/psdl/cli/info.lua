--- `psdl info FILE...`: what a PSDL file holds and how close it is to the format's limits.
--
-- Per file: magic, size, counts (vertices, heights, texture slots, rooms, attributes,
-- attribute words, road records), bounds, a texture-table summary and the texture table
-- itself (slot numbers and names, as --remap/--move/--swap of retexture take them), the number of
-- attributes per type, the number of rooms per flag byte, and each limit of
-- psdl-format.md §3.2 as `value / limit (percent)`. `--json` writes the same as JSON.
-- A file that cannot be read or decoded gets a message on stderr (and, with `--json`, an
-- entry with an `"error"`); the other files are still shown.
-- @module psdl.cli.info

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local string, math, table = string, math, table
local ipairs, pairs, type, tostring = ipairs, pairs, type, tostring

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Counts, statistics and distance to the format's limits."

--- Attribute type names in the order of their type numbers (junction tunnels are type 9
-- like tunnels).
M.TYPE_ORDER = {
  "road", "sidewalk_strip", "walkway", "sliver", "crosswalk", "road_fan", "fan",
  "facade_bound", "divided_road", "tunnel", "junction_tunnel", "texture", "facade", "roof",
  "unknown",
}

--- Room flag bits and their names (psdl-format.md §1.6).
M.ROOM_FLAGS = {
  { 0x01, "unused" }, { 0x02, "subterranean" }, { 0x04, "standard" }, { 0x08, "road" },
  { 0x10, "intersection" }, { 0x20, "special_bound" }, { 0x40, "warp" }, { 0x80, "instance" },
}

--- Limits of psdl-format.md §3.2 that `info` measures, those of the format from
-- `psdl.limits` (read when first asked for: `psdl --help` loads this module without the C
-- core).
-- @treturn table
function M.limits()
  local core = require("psdl.core").limits
  return {
    vertices_safe = core.vertex_budget, -- V + 512 generated collision vertices must fit 16 bits
    vertices = 65536,           -- addressable by the u16 vertex references (indices 0..65,535)
    perimeter = core.perimeter, -- perimeter count held in one byte at runtime
    texture_slots_rendered = core.texture_rendered, -- more are "not rendered properly" (WILK)
    texture_slots_stock = core.texture_stock, -- more and stock MM2 cannot load the city (WILK)
    texture_slots = core.texture_value, -- largest texture value
    rooms = 32767,              -- road records keep room ids as i16
    strip_sections = 256,       -- 256-entry stack buffers when drawing a strip
    road_rooms = 255,           -- u8 count per road record
  }
end

--- Names of the bits set in a room flag byte, joined with `|` (`"-"` for none).
-- @tparam integer flags
-- @treturn string
function M.flag_names(flags)
  local names = {}
  for _, f in ipairs(M.ROOM_FLAGS) do
    if flags & f[1] ~= 0 then names[#names + 1] = f[2] end
  end
  return #names > 0 and table.concat(names, "|") or "-"
end

local function sections(a)
  local n = type(a.vertices) == "table" and #a.vertices or 0
  if a.type == "road" then return n // 4 end
  if a.type == "divided_road" then return n // 6 end
  if a.type == "sidewalk_strip" or a.type == "walkway" then return n // 2 end
  return nil
end

-- Bytes of everything but the attribute streams, to derive the total attribute words
-- from the file size (the document model keeps attributes decoded, not their words).
local function non_attribute_bytes(doc)
  local psd1 = doc.magic == "PSD1"
  local n = 8 + 4 + 12 * #doc.vertices + 4 + 4 * #doc.heights + 4
  for _, name in ipairs(doc.textures) do
    if name then n = n + #name + 2 + (psd1 and 1 or 0) else n = n + 1 end
  end
  n = n + 8 + 2 * (#doc.rooms + 1)
  for _, room in ipairs(doc.rooms) do n = n + 8 + 4 * #room.perimeter end
  if doc.bounds or doc.roads then
    n = n + 40 + 4
    for _, road in ipairs(doc.roads or {}) do
      n = n + 25 + 4 * (#road.lanes_left + #road.lanes_right) + 2 * #road.rooms
    end
  end
  return n
end

local function limit(rows, name, value, max, note, where)
  rows[#rows + 1] = {
    name = name, value = value, limit = max, note = note, where = where,
    percent = math.floor(value / max * 1000 + 0.5) / 10,
  }
end

--- Statistics of one document (the table `--json` writes for a file).
-- @tparam table doc a decoded document
-- @tparam[opt] integer size the file size in bytes (needed for `attribute_words`)
-- @treturn table `{magic, target_size, size, first_road_room, room0, counts, bounds,
--   has_roads, textures, attribute_types, room_flags, limits}`; `attribute_types` and `room_flags`
--   are lists (`{type=, count=}`, `{flags=, names=, rooms=}`) in type and flag order,
--   `limits` a list of `{name, value, limit, percent, note, where}`.
function M.stats(doc, size)
  local s = {
    magic = doc.magic, target_size = doc.target_size, size = size,
    first_road_room = doc.first_road_room, room0 = doc.room0,
  }

  -- textures
  local names, empty_slots, empty_names, duplicates, long_names = 0, 0, 0, 0, 0
  local longest, seen = nil, {}
  for slot, name in ipairs(doc.textures) do
    if name == false then
      empty_slots = empty_slots + 1
    else
      names = names + 1
      if name == "" then empty_names = empty_names + 1 end
      if seen[name] then duplicates = duplicates + 1 else seen[name] = slot end
      if #name > 31 then long_names = long_names + 1 end
      if not longest or #name > longest.length then
        longest = { length = #name, name = name, slot = slot }
      end
    end
  end
  -- the texture table itself: slot numbers (what --remap/--move/--swap take) and names
  local slots = {}
  for slot, name in ipairs(doc.textures) do slots[slot] = { slot = slot, name = name or nil, empty = not name or nil } end
  s.texture_table = slots
  s.textures = {
    slots = #doc.textures, names = names, empty_slots = empty_slots,
    empty_names = empty_names, duplicates = duplicates, longest = longest,
    names_over_31_chars = long_names,
  }

  -- rooms and attributes
  local attributes, type_count, flag_count = 0, {}, {}
  local max_perimeter, max_perimeter_room = 0, nil
  local max_sections, max_sections_where = 0, nil
  for r, room in ipairs(doc.rooms) do
    flag_count[room.flags] = (flag_count[room.flags] or 0) + 1
    if #room.perimeter > max_perimeter then
      max_perimeter, max_perimeter_room = #room.perimeter, r
    end
    attributes = attributes + #room.attributes
    for a, attr in ipairs(room.attributes) do
      type_count[attr.type] = (type_count[attr.type] or 0) + 1
      local n = sections(attr)
      if n and n > max_sections then
        max_sections, max_sections_where = n, { room = r, attribute = a }
      end
    end
  end

  local max_road_rooms, max_road_rooms_road = 0, nil
  for i, road in ipairs(doc.roads or {}) do
    if #road.rooms > max_road_rooms then max_road_rooms, max_road_rooms_road = #road.rooms, i end
  end

  local words
  if size then
    local bytes = size - non_attribute_bytes(doc)
    if bytes >= 0 and bytes % 2 == 0 then words = bytes // 2 end
  end

  s.counts = {
    vertices = #doc.vertices, heights = #doc.heights, texture_slots = #doc.textures,
    rooms = #doc.rooms + 1, room_records = #doc.rooms, attributes = attributes,
    attribute_words = words, road_records = doc.roads and #doc.roads or 0,
  }
  s.bounds = doc.bounds
  s.has_roads = doc.roads ~= nil

  local types, listed = {}, {}
  for _, t in ipairs(M.TYPE_ORDER) do
    listed[t] = true
    if type_count[t] then types[#types + 1] = { type = t, count = type_count[t] } end
  end
  local others = {}
  for t in pairs(type_count) do if not listed[t] then others[#others + 1] = t end end
  table.sort(others, function(a, b) return tostring(a) < tostring(b) end)
  for _, t in ipairs(others) do types[#types + 1] = { type = t, count = type_count[t] } end
  s.attribute_types = types

  local flags = {}
  for f in pairs(flag_count) do flags[#flags + 1] = f end
  table.sort(flags)
  s.room_flags = {}
  for i, f in ipairs(flags) do
    s.room_flags[i] = { flags = f, names = M.flag_names(f), rooms = flag_count[f] }
  end

  local L, rows = M.limits(), {}
  limit(rows, "vertices", #doc.vertices, L.vertices_safe, "safe budget")
  limit(rows, "vertices", #doc.vertices, L.vertices, "addressable")
  limit(rows, "largest perimeter", max_perimeter, L.perimeter, "points",
    max_perimeter_room and { room = max_perimeter_room })
  limit(rows, "texture slots", #doc.textures, L.texture_slots_rendered, "rendered properly")
  limit(rows, "texture slots", #doc.textures, L.texture_slots_stock, "stock MM2")
  limit(rows, "texture slots", #doc.textures, L.texture_slots, "largest value")
  limit(rows, "rooms", #doc.rooms, L.rooms, "highest room id (i16 in road records)")
  limit(rows, "rooms", #doc.rooms, require("psdl.package.cpvs_gen").MAX_ROOM_ID,
    "a package (.ar) holds; psdl package X.osm fits an extract")
  limit(rows, "largest strip", max_sections, L.strip_sections, "sections", max_sections_where)
  limit(rows, "largest road", max_road_rooms, L.road_rooms, "rooms",
    max_road_rooms_road and { road = max_road_rooms_road })
  s.limits = rows
  return s
end

------------------------------------------------------------------------ text output

local function vec(v)
  return string.format("(%s, %s, %s)", common.num(v[1]), common.num(v[2]), common.num(v[3]))
end

local function where_text(w)
  if not w then return "" end
  if w.attribute then return string.format("rooms[%d].attributes[%d]", w.room, w.attribute) end
  if w.room then return string.format("rooms[%d]", w.room) end
  if w.road then return string.format("roads[%d]", w.road) end
  return ""
end

local function plural(n, word)
  return string.format("%s %s%s", common.int(n), word, n == 1 and "" or "s")
end

local function print_text(out, file, s)
  local c, t = s.counts, s.textures
  local function line(label, fmt, ...)
    out:write(string.format("  %-16s " .. fmt .. "\n", label, ...))
  end
  out:write(file, "\n")
  line("magic", "%s (target size %d)", s.magic, s.target_size)
  line("size", "%s bytes", common.int(s.size))
  line("vertices", "%s", common.int(c.vertices))
  line("heights", "%s", common.int(c.heights))
  line("texture slots", "%s (%s names, %s empty)", common.int(c.texture_slots),
    common.int(t.names), common.int(t.empty_slots))
  line("rooms", "%s (%s records + room 0)", common.int(c.rooms), common.int(c.room_records))
  line("attributes", "%s (%s words)", common.int(c.attributes), common.int(c.attribute_words))
  line("road records", "%s%s", common.int(c.road_records), s.has_roads and "" or " (no road section)")
  line("first road room", "%s", common.int(s.first_road_room))
  if s.room0 then
    line("room 0", "flags 0x%02x, prop rule 0x%02x", s.room0.flags, s.room0.prop_rule)
  end
  if s.bounds then
    line("bounds", "min %s max %s", vec(s.bounds.min), vec(s.bounds.max))
    line("", "sphere centre %s radius %s", vec(s.bounds.center), common.num(s.bounds.radius))
  else
    line("bounds", "none (no bounds or road section)")
  end
  local longest = t.longest
    and string.format("longest %d chars (slot %d, %q)", t.longest.length, t.longest.slot, t.longest.name)
    or "no names"
  line("textures", "%s, %s, %s, %s", plural(t.names, "name"), plural(t.empty_slots, "empty slot"),
    plural(t.duplicates, "duplicate"), longest)
  if t.empty_names > 0 then line("", "%s (\"\")", plural(t.empty_names, "empty name")) end
  if t.names_over_31_chars > 0 then
    line("", "%s longer than 31 characters", plural(t.names_over_31_chars, "name"))
  end
  out:write("  texture table    slot name (the numbers psdl retexture --remap/--move/--swap take)\n")
  if #s.texture_table == 0 then out:write("    (no textures)\n") end
  local cells = {}
  for _, e in ipairs(s.texture_table) do
    local name = e.empty and "(empty)" or string.format("%q", e.name):sub(2, -2)
    cells[#cells + 1] = string.format("%5d %-18s", e.slot, name)
    if #cells == 3 then
      out:write("  ", (table.concat(cells, " "):gsub("%s+$", "")), "\n")
      cells = {}
    end
  end
  if #cells > 0 then out:write("  ", (table.concat(cells, " "):gsub("%s+$", "")), "\n") end
  out:write("  attribute types\n")
  if #s.attribute_types == 0 then out:write("    (none)\n") end
  for _, e in ipairs(s.attribute_types) do
    out:write(string.format("    %-20s %9s\n", e.type, common.int(e.count)))
  end
  out:write("  room flags\n")
  if #s.room_flags == 0 then out:write("    (no rooms)\n") end
  for _, e in ipairs(s.room_flags) do
    out:write(string.format("    0x%02x %-25s %7s\n", e.flags, e.names, common.int(e.rooms)))
  end
  out:write("  limits\n")
  for _, l in ipairs(s.limits) do
    local w = where_text(l.where)
    out:write(string.format("    %-17s %8s / %-7s %6.1f %%  %s%s%s\n", l.name, common.int(l.value),
      common.int(l.limit), l.percent, l.note, w ~= "" and ", " .. w or "",
      l.value > l.limit and "  OVER" or ""))
  end
end

------------------------------------------------------------------------ command

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("files", "PSDL or companion files (.bai, .cpvs, .inst, .pathset, .pkg, .tex)."):args("+")
  cmd:flag("--json", "Write the statistics as JSON (one document listing every file).")
end

local function json_stats(s)
  -- single-precision bounds: write them as the file holds them
  if s.bounds then
    local b = {}
    for _, k in ipairs { "min", "max", "center" } do
      b[k] = {}
      for i = 1, 3 do b[k][i] = docjson.float32(s.bounds[k][i]) end
    end
    b.radius = docjson.float32(s.bounds.radius)
    s.bounds = b
  end
  return s
end

--- What an add-on package (`.ar`, a zip) holds, read from its central directory (nothing is
-- unpacked): each entry's name, sizes and what the game does with it
-- (`psdl.package.validate.describe`; `psdl validate` checks the contents).
-- @tparam string bytes
-- @treturn[1] table `{kind = "package", maps = {...}, files = n, size =, compressed =,
--   entries = { {name, size, compressed, method, what}, ... }, problems = { {severity, rule,
--   path, message}, ... }}`: problems are what the directory shows that the game's reader
--   rejects (CF §8.2: an archive comment, extra fields, directory entries, ...), the same
--   rules `psdl validate` reports
-- @treturn[2] nil
-- @treturn[2] string why it is not a readable zip (no end-of-central-directory record, a
--   damaged directory)
function M.package_stats(bytes)
  local pv = require "psdl.package.validate"
  local entries, problems, cities = pv.entries(bytes)
  if not entries then
    return nil, "not a readable zip archive: " .. ((problems[1] or {}).message or "no central directory")
  end
  local s = { kind = "package", maps = {}, files = #entries, size = 0, compressed = 0, entries = {}, problems = {} }
  for _, c in ipairs(cities) do s.maps[#s.maps + 1] = c.map end
  for _, e in ipairs(entries) do
    s.size, s.compressed = s.size + e.size, s.compressed + e.csize
    local what = pv.describe(e.low, cities) or "not read by the game for this city"
    if e.name:sub(-1) == "/" then what = "a directory entry (the game's reader wants none, CF §8.2)" end
    s.entries[#s.entries + 1] = { name = e.name, size = e.size, compressed = e.csize,
                                  method = e.method == 8 and "deflate" or e.method == 0 and "store" or tostring(e.method),
                                  what = what }
  end
  -- what the directory shows that the game's reader rejects (comment, extra fields, ...): info
  -- still lists the contents; psdl validate checks them all
  for _, p in ipairs(problems) do
    s.problems[#s.problems + 1] = { severity = p.severity, rule = p.rule, path = p.path, message = p.message }
  end
  return s
end

-- The directory problems that make an archive one that cannot be unpacked as it is (info then
-- exits 2); the others (an archive comment, extra fields, ...) are read by unzip tools and
-- only refused by the game's reader (psdl validate's errors).
local DAMAGED = { zip_local_header = true, zip_directory = true, zip_duplicate = true, zip_multipart = true }

--- Print `package_stats` as text.
function M.print_package(out, file, s)
  out:write(string.format("%s: MM2 add-on package (zip), %s files, %s bytes unpacked (%s in the archive)\n", file,
    common.int(s.files), common.int(s.size), common.int(s.compressed)))
  out:write(string.format("  map%s: %s\n", #s.maps == 1 and "" or "s",
    #s.maps > 0 and table.concat(s.maps, ", ") or "none (no tune/<map>.cinfo: the game does not list it)"))
  local w = 0
  for _, e in ipairs(s.entries) do w = math.max(w, #e.name) end
  for _, e in ipairs(s.entries) do
    out:write(string.format("  %-" .. w .. "s %12s  %-7s  %s\n", e.name, common.int(e.size), e.method, e.what))
  end
  for _, p in ipairs(s.problems or {}) do
    local pv = require "psdl.package.validate"
    out:write(string.format("  %s %s%s: %s\n", p.severity, p.rule, p.path ~= "" and (" " .. pv.escape(p.path)) or "",
      pv.escape(p.message)))
  end
  out:write("  (psdl validate checks every file and the cross-checks)\n")
end

--- The text files of a package (docs/package.md, CF §5-§7), by extension: what each is, for
-- the message `info` gives instead of "bad_magic" (it reads PSDL files, packages and their
-- binary files).
M.TEXT_FILES = {
  aimap = "an AI map (the city's traffic or a race's roaming settings, CF §6.3-§6.4)",
  aimap_p = "a race's AI map (CF §6.4)",
  cinfo = "the city info (its name and race lists, CF §6.1)",
  mmhudmap = "the HUD map settings (CF §7.4)",
  csv = "a prop table (propdefs.csv or proprules.csv, CF §5.3)",
}

-- For a file that does not decode as a PSDL: what it is when it is a package's text file
-- (by extension) or any text, else nil.
local function text_file_message(file, bytes)
  local ext = file:lower():match("%.([%w_]+)$")
  local what = ext and M.TEXT_FILES[ext]
  if not what then
    local head = bytes:sub(1, 512)
    if #head == 0 or head:find("[^\t\n\r\32-\126\128-\255]") then return nil end
    what = "a text file"
  end
  return string.format("%s: %s, not a PSDL: psdl info reads PSDL files (.psdl), packages (.ar) and their binary "
    .. "files (.bai, .cpvs, .inst, .pkg, .tex); read it as text (`psdl validate X.ar` checks the text files inside a "
    .. "package)", file, what)
end

--- Run `psdl info`.
-- @tparam table args parsed arguments (`files`, `json`)
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local psdl = common.psdl()
  local code = ctx.exit.ok
  local results, shown = {}, 0
  local companion = require "psdl.cli.companion"
  for _, file in ipairs(args.files) do
    local doc, size, fcode
    local bytes, rerr, rcode = common.read_file(file)
    -- a file's stats (or the failure), printed or kept for JSON
    local function other(s, err, ecode, printer, to_json)
      if not s then
        code = math.max(code, ctx:fail(common.exit_for(ecode), err))
        results[#results + 1] = { file = file, error = { code = ecode, message = err } }
      elseif args.json then
        s.file = file
        results[#results + 1] = to_json and to_json(s) or s
      else
        if shown > 0 then ctx.stdout:write("\n") end
        shown = shown + 1
        printer(ctx.stdout, file, s)
      end
    end
    if bytes and (file:lower():match("%.ar$") or bytes:sub(1, 4) == "PK\3\4") then
      local s, err = M.package_stats(bytes)
      other(s, s == nil and (file .. ": " .. err) or nil, "bad_input", M.print_package)
      -- a damaged entry (the game's reader rejects it): the list is still shown, but the
      -- package cannot be unpacked as it is, exit 2 as docs/cli.md says
      for _, p in ipairs(s and s.problems or {}) do
        if DAMAGED[p.rule] then code = math.max(code, ctx.exit.bad_input) break end
      end
      goto continue
    end
    local cfmt = bytes and companion.format_of(file, bytes)
    if cfmt then
      local ok, t, csize = companion.load(file, bytes)
      if not ok then other(nil, t, csize)
      else other(companion.stats(cfmt, t, csize), nil, nil, companion.print_text) end
      goto continue
    end
    if bytes then
      doc, size, fcode = psdl.decode(bytes)
      if doc then size = #bytes
      else
        size = fcode == "bad_magic" and text_file_message(file, bytes) or (file .. ": " .. common.clean(size))
      end
    else
      doc, size, fcode = nil, rerr, rcode
    end
    if not doc then other(nil, size, fcode)
    else other(M.stats(doc, size), nil, nil, print_text, json_stats) end
    ::continue::
  end
  if args.json then
    ctx.stdout:write(docjson.encode({ format = "psdlkit-info", version = 1, files = results }))
  end
  return code
end

return M
