--- Whole-package checks of an add-on city `.ar` (companion-formats.md, "CF"): the zip
-- container against the game reader's constraints (§8.2, read from the raw headers), every
-- file decoding with its codec and passing its validator (§2.9, §3.4, §4.4, §7, §9), the
-- text files' line formats (§6, §7.4), the cross-checks between the PSDL and the companion
-- files (§10 item 8, §5.3) and the files a city needs (§8.6).
--
-- Problems are `{severity = "error"|"warning", rule =, path = "<file>[: <record>]", message =}`,
-- like `psdl.validate`'s, so `psdl validate` prints them the same way.
-- @module psdl.package.validate

local string, table, math = string, table, math
local ipairs, pairs, type, tostring, require, pcall, tonumber = ipairs, pairs, type, tostring, require, pcall, tonumber
local utf8 = utf8
local string_format, unpack = string.format, string.unpack

local M = {}

--- Limits of what `check` unpacks (a guard against zip bombs, docs/package.md): the sum of the
-- sizes the central directory declares (`MAX_UNPACKED`, 128 MiB), one entry's declared size
-- (`MAX_ENTRY`, 64 MiB) and the declared ratio of a deflated entry (`MAX_RATIO`: deflate
-- cannot do better than about 1,032 to 1, so a larger ratio is a false size). The archive
-- itself may be at most `MAX_UNPACKED` bytes. They are checked on the central directory before
-- anything is unpacked; libzip then unpacks each entry to its declared size only (a longer
-- stream fails its size and CRC checks), so memory stays below about the archive plus
-- `MAX_UNPACKED` plus one entry. A packaged city is far below them (a London-scale package is
-- a few MB).
M.MAX_UNPACKED = 128 << 20
M.MAX_ENTRY = 64 << 20
M.MAX_RATIO = 1100

-- the zip structure (CF §8.2), from the raw bytes
-- Where the end-of-central-directory record starts (1-based), searched backwards from the last
-- 22 bytes over at most a 65,535-byte comment; nil when there is none. A record whose comment
-- length reaches exactly to the end of the file wins over one that does not.
local function find_end_record(bytes)
  local n = #bytes
  if n < 22 then return nil end
  local fallback
  for p = n - 21, math.max(1, n - 21 - 65535), -1 do
    if bytes:byte(p) == 0x50 and bytes:sub(p, p + 3) == "PK\5\6" then
      local clen = unpack("<I2", bytes, p + 20)
      if p + 21 + clen == n then return p end
      fallback = fallback or p
    end
  end
  return fallback
end

local function check_zip(bytes, add)
  local n = #bytes
  local e = find_end_record(bytes)
  if not e then
    add("error", "zip_end_record", "", n == 0 and "the file is empty (0 bytes): not a zip archive, nothing to unpack"
      or string_format("no end-of-central-directory record in the last 65,557 bytes (CF §8.2): the %d-byte file is "
        .. "not a zip archive or is cut short, and nothing in it can be unpacked", n))
    return nil, "no_end_record"
  end
  local disk, cd_disk, n_here, n_total, cd_size, cd_off, clen = unpack("<I2I2I2I2I4I4I2", bytes, e + 4)
  local after = n - (e + 21) -- bytes after the fixed 22-byte record
  if clen ~= 0 or after ~= 0 then
    -- the game reads the end record from the last 22 bytes only (CF §8.2): it cannot open this
    add("error", clen ~= 0 and "zip_comment" or "zip_end_record", "", string_format("%s: the end-of-central-"
      .. "directory record is not the last 22 bytes, and the game's reader looks only there (CF §8.2), so it "
      .. "cannot open the archive; write it again without %s (psdl package does; Info-ZIP: zip -z with an "
      .. "empty comment)", clen ~= 0 and string_format("an archive comment of %d byte%s", clen, clen == 1 and "" or "s")
      or string_format("%d byte%s after the end record", after, after == 1 and "" or "s"),
      clen ~= 0 and "the comment" or "them"))
  end
  if disk ~= 0 or cd_disk ~= 0 or n_here ~= n_total then
    add("error", "zip_multipart", "", "a multi-part archive (CF §8.2: single part only)")
  end
  if cd_off == 0xFFFFFFFF or cd_size == 0xFFFFFFFF or n_total == 0xFFFF then
    add("error", "zip64", "", "ZIP64 markers in the end record (CF §8.2)")
    return nil
  end
  if cd_off + cd_size > e - 1 then
    add("error", "zip_directory", "", "the central directory runs past the end record")
    return nil
  end
  local entries, pos = {}, cd_off + 1
  local seen, seen_low = {}, {} -- exact names; lower-case names -> the first entry's name
  for i = 1, n_total do
    if pos + 46 > n or bytes:sub(pos, pos + 3) ~= "PK\1\2" then
      add("error", "zip_directory", "", string_format("central header %d missing at offset 0x%x", i, pos - 1))
      return nil
    end
    local _, _, flags, method, _, _, crc, csize, usize, nlen, xlen, mlen, dstart, _, _, loff =
      unpack("<I2I2I2I2I2I2I4I4I4I2I2I2I2I2I4I4", bytes, pos + 4)
    local name = bytes:sub(pos + 46, pos + 45 + nlen)
    local where = name
    if xlen ~= 0 then add("error", "zip_extra_field", where, xlen .. " bytes of extra fields in the central header (CF §8.2)") end
    if mlen ~= 0 then add("warning", "zip_entry_comment", where, "an entry comment (keep the archive plain)") end
    if flags & 0x8 ~= 0 then add("error", "zip_data_descriptor", where, "data descriptor (flag bit 3, CF §8.2)") end
    if flags & 0x1 ~= 0 then add("error", "zip_encrypted", where, "encrypted entry") end
    if method ~= 0 and method ~= 8 then
      add("error", "zip_method", where, string_format("compression method %d: the game reads 0 (store) and 8 (deflate) only (CF §8.2)", method))
    end
    if dstart ~= 0 then add("error", "zip_multipart", where, "entry on disk " .. dstart) end
    if csize == 0xFFFFFFFF or usize == 0xFFFFFFFF or loff == 0xFFFFFFFF then
      add("error", "zip64", where, "ZIP64 sizes (CF §8.2)")
    end
    if name:sub(1, 1) == "/" or name:sub(1, 2) == "./" then
      add("error", "zip_name", where, "a name starting with '/' or './' (CF §8.2)")
    end
    do -- a ".." component climbs out of the game's folder when the archive is unpacked
      local norm = "/" .. name:gsub("\\", "/") .. "/"
      if norm:find("/../", 1, true) then
        add("error", "zip_name", where, "a '..' component in a name (it points outside the game's folder)")
      end
    end
    if name:find("\\", 1, true) then add("warning", "zip_name", where, "'\\' in a name (the game reads it as '/')") end
    if name:sub(-1) == "/" then add("error", "zip_directory_entry", where, "a directory entry (CF §8.2)") end
    local low = name:lower():gsub("\\", "/")
    if low:match("^tune/") and low:sub(-1) ~= "/" and not low:match("^tune/.*%.[^/]*$") then
      add("error", "zip_name", where, "a file under tune/ without an extension crashes stock MM2 (CF §8.2)")
    end
    if seen[name] then
      add("error", "zip_duplicate", where, "a second entry of the same name: the archive cannot be unpacked "
        .. "(which one the game reads is not known; keep one)")
      entries.duplicate = entries.duplicate or name
    elseif seen_low[low] then
      add("error", "zip_duplicate", where, "a second entry of the same name (case-insensitive: the game's "
        .. "names are): only one of " .. seen_low[low] .. " and " .. name .. " is read")
    end
    seen_low[low], seen[name] = seen_low[low] or name, true
    -- the local header: same name and method, no extra field (the game reads the data at
    -- local offset + 30 + name length, CF §8.2)
    local lp = loff + 1
    if lp + 30 > n or bytes:sub(lp, lp + 3) ~= "PK\3\4" then
      add("error", "zip_local_header", where, string_format("no local header at offset 0x%x", loff))
    else
      local _, lflags, lmethod, _, _, lcrc, lcsize, lusize, lnlen, lxlen = unpack("<I2I2I2I2I2I4I4I4I2I2", bytes, lp + 4)
      if lxlen ~= 0 then add("error", "zip_extra_field", where, lxlen .. " bytes of extra fields in the local header (CF §8.2)") end
      if bytes:sub(lp + 30, lp + 29 + lnlen) ~= name then add("error", "zip_local_header", where, "local and central names differ") end
      if lmethod ~= method then add("error", "zip_local_header", where, "local and central methods differ") end
      if lflags & 0x8 ~= 0 then add("error", "zip_data_descriptor", where, "data descriptor in the local header (CF §8.2)") end
      -- (with a data descriptor, reported above, the local CRC and sizes are zeros by design)
      if lflags & 0x8 == 0 and (lcrc ~= crc or lcsize ~= csize or lusize ~= usize) then
        add("error", "zip_local_header", where, "local header CRC or sizes differ from the central directory")
      end
    end
    entries[#entries + 1] = { name = name, low = low, size = usize, csize = csize, method = method }
    pos = pos + 46 + nlen + xlen + mlen
  end
  for i = 2, #entries do
    if entries[i - 1].low > entries[i].low then
      add("warning", "zip_order", entries[i].name, "the central directory is not sorted by lower-case name (CF §8.2: "
        .. "sorting is the safe choice)")
      break
    end
  end
  return entries
end

--- A string made safe to print: bytes below 0x20, 0x7f and bytes that are not part of a valid
-- UTF-8 sequence become `\xNN` (a corrupted byte in a file must not reach the terminal raw).
-- @tparam string s
-- @treturn string
function M.escape(s)
  s = tostring(s)
  if not s:find("[%z\1-\31\127-\255]") then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local b = s:byte(i)
    local len = (b >= 0xC2 and b <= 0xDF and 2) or (b >= 0xE0 and b <= 0xEF and 3) or (b >= 0xF0 and b <= 0xF4 and 4) or 1
    if b >= 0x20 and b < 0x7f then
      out[#out + 1] = string.char(b); i = i + 1
    elseif len > 1 and i + len - 1 <= n and s:sub(i + 1, i + len - 1):match("^[\128-\191]+$")
        and utf8.len(s:sub(i, i + len - 1)) == 1 then
      out[#out + 1] = s:sub(i, i + len - 1); i = i + len
    else
      out[#out + 1] = string_format("\\x%02x", b); i = i + 1
    end
  end
  return table.concat(out)
end
local escape = M.escape

-- line-format checks of the text files
local function check_crlf(name, text, add)
  if text:find("[^\r]\n") or text:sub(1, 1) == "\n" then
    add("error", "text_crlf", name, "line ends without CR (CF §1: CRLF everywhere; the .cinfo reader depends on it)")
  end
end

local function split_lines(text)
  local lines = {}
  local t = text:gsub("\r\n", "\n")
  if t:sub(-1) ~= "\n" then t = t .. "\n" end
  for line in t:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines
end

local CINFO = { "LocalizedName", "MapName", "RaceDir", "BlitzCount", "CircuitCount", "CheckpointCount",
                "BlitzNames", "CircuitNames", "CheckpointNames" }

--- Parse and check a `.cinfo` (CF §6.1). Every bad line is reported (its text escaped).
-- @treturn table|nil `{LocalizedName =, MapName =, ...}`, nil when a line does not match (the
--   game drops the city)
function M.cinfo(name, text, add)
  check_crlf(name, text, add)
  local lines = split_lines(text)
  local v, bad = {}, false
  for i, key in ipairs(CINFO) do
    local line = lines[i] or ""
    local where = name .. ": line " .. i
    local val = line:match("^" .. key .. "=(.*)$")
    if not val then
      add("error", "cinfo_line", where, string_format("\"%s\" where %s=... is expected (CF §6.1: nine lines in a "
        .. "fixed order)", escape(line), key))
      bad = true
    else
      if val == "" then add("error", "cinfo_empty", where, key .. " is empty: the whole file fails to parse (CF §6.1)"); bad = true end
      if i <= 3 and #val > 39 then add("error", "cinfo_length", where, key .. " longer than 39 characters") end
      if (i == 2 or i == 3) and val:find("%s") then add("error", "cinfo_word", where, key .. " must be one word") end
      if i >= 4 and i <= 6 and not val:match("^%-?%d+$") then
        add("error", "cinfo_count", where, string_format("%s must be an integer, not \"%s\"", key, escape(val)))
      end
      if val ~= "" and not utf8.len(val) then
        add("error", "cinfo_bytes", where, string_format("%s holds bytes that are not UTF-8 text: \"%s\"", key, escape(val)))
      end
      v[key] = val
    end
  end
  if bad or not v.MapName or v.MapName == "" then return nil end
  if v.MapName ~= v.RaceDir then add("warning", "cinfo_racedir", name, "MapName and RaceDir differ (CF §6.1: keep them equal)") end
  if v.MapName ~= v.MapName:lower() then add("error", "cinfo_case", name, "MapName must be lower case (CF §6.1)") end
  if v.MapName:find("london", 1, true) or v.MapName:find("sf", 1, true) then
    add("error", "cinfo_name", name, "MapName contains 'london' or 'sf' (PF §3.4, CF §6.1)")
  end
  return v
end

-- The sections of the aimap files (CF §6.3, §6.4): `kind` "value" (one line) or "list" (a
-- count line, then that many rows); `fields` the fields of the value line or of a row: "s" a
-- name, "f" a number, "d" an integer; `need` true when the file must have the section.
local ROSTER = { kind = "list", fields = { "s", "f", "d" } }
M.CITY_AIMAP = {
  ["Speed Limit"] = { kind = "value", fields = { "f" }, need = true },
  ["Ambients Drive On The Left"] = { kind = "value", fields = { "d" }, need = true, flag = true },
  ["Ambient Types/Density"] = { kind = "list", fields = ROSTER.fields, need = true },
  ["GoodWeatherPedName / BadWeatherPedName"] = { kind = "list", fields = { "s", "s" }, need = true },
  ["Traffic Lights"] = { kind = "value", fields = { "s", "s" }, need = true },
  -- retail London comments [Ped Pool] out and KM2CB does not write it (CF §6.3): the game
  -- uses its default (100), so a missing one is a warning
  ["Ped Pool"] = { kind = "value", fields = { "d" }, need = "warn" },
}
M.RACE_AIMAP = {
  ["AmbientLaneChanges"] = { kind = "value", fields = { "d" }, need = true, flag = true },
  ["Exceptions"] = { kind = "list", fields = { "d", "f", "f" }, need = true },
  ["Police"] = { kind = "list", fields = { "s", "f", "f", "f", "f", "d", "d", "f", "f" }, need = true },
  ["Opponent"] = { kind = "list", fields = { "s", "s", "f", "d", "f", "f", "d", "d", "d", "d", "d", "f" }, need = true },
  ["Hookmen"] = { kind = "list", fields = { "s", "s", "f", "f", "f", "f", "d" }, need = true },
  ["CopChaseDistance"] = { kind = "value", fields = { "f" } },
  ["Ambient Types/Density"] = ROSTER,
}

local FIELD_NAME = { s = "a name", f = "a number", d = "an integer" }

-- checks the fields of one line against a field list; returns the first problem or nil
local function check_fields(line, fields)
  local toks = {}
  for tok in line:gmatch("%S+") do toks[#toks + 1] = tok end
  if #toks < #fields then
    return string_format("%d values expected, %d found in \"%s\"", #fields, #toks, escape(line))
  end
  for k, f in ipairs(fields) do
    local tok = toks[k]
    if f == "f" and not tonumber(tok) then
      return string_format("value %d \"%s\" is not a number (%s expected)", k, escape(tok), FIELD_NAME[f])
    elseif f == "d" and not (tok:match("^[+-]?%d+$")) then
      return string_format("value %d \"%s\" is not an integer", k, escape(tok))
    end
  end
  return nil, toks
end

--- Check an aimap (CF §6.2-§6.4) against its section table (`M.CITY_AIMAP` or `M.RACE_AIMAP`):
-- every section is known and appears once, the needed ones are there, a value section has
-- its value line, a list section an integer count and that many rows, and every value has the
-- field count and types of the doc's formats. Problems name the file and line.
-- @treturn table the sections found (name -> line number)
function M.aimap(name, text, add, schema)
  check_crlf(name, text, add)
  local lines = split_lines(text)
  local found = {}
  local i, n = 1, #lines
  local function skip(k) -- next line that is not blank or a comment
    while k <= n and (lines[k]:match("^%s*$") or lines[k]:match("^%s*#")) do k = k + 1 end
    return k
  end
  local function at(k) return name .. ": line " .. k end
  i = skip(1)
  while i <= n do
    local line = lines[i]
    local sec = line:match("^%s*%[(.-)%]%s*$")
    if not sec then
      add("error", "aimap_line", at(i), string_format("\"%s\" is outside any section or beyond a list's count "
        .. "(CF §6.2)", escape(line)))
      i = skip(i + 1)
    else
      local spec = schema[sec]
      if not spec then
        add("error", "aimap_section", at(i), string_format("unknown section [%s] (CF §6.3/§6.4)", escape(sec)))
        -- skip its body up to the next section
        i = i + 1
        while i <= n and not lines[i]:match("^%s*%[.-%]%s*$") do i = i + 1 end
      else
        if found[sec] then
          add("error", "aimap_section", at(i), string_format("section [%s] again (first at line %d)", sec, found[sec]))
        end
        found[sec] = found[sec] or i
        local k = skip(i + 1)
        local nxt = lines[k]
        if not nxt or nxt:match("^%s*%[.-%]%s*$") then
          add("error", spec.kind == "list" and "aimap_count" or "aimap_value", at(i),
            string_format("[%s] has no %s line (CF §6.2)", sec, spec.kind == "list" and "count" or "value"))
          i = k
        elseif spec.kind == "value" then
          local msg, toks = check_fields(nxt, spec.fields)
          if msg then add("error", "aimap_value", at(k), "[" .. sec .. "]: " .. msg)
          elseif spec.flag and toks[1] ~= "0" and toks[1] ~= "1" then
            add("error", "aimap_value", at(k), string_format("[%s]: 0 or 1 expected, not \"%s\"", sec, escape(toks[1])))
          end
          i = skip(k + 1)
        else
          local cnt = nxt:match("^%s*(%d+)%s*$")
          if not cnt then
            add("error", "aimap_count", at(k), string_format("[%s]: the count \"%s\" is not a non-negative integer "
              .. "(CF §6.2)", sec, escape(nxt)))
            i = k + 1
            while i <= n and not lines[i]:match("^%s*%[.-%]%s*$") do i = i + 1 end
          else
            cnt = tonumber(cnt)
            local rows, r = 0, skip(k + 1)
            while rows < cnt and r <= n and not lines[r]:match("^%s*%[.-%]%s*$") do
              rows = rows + 1
              local msg = check_fields(lines[r], spec.fields)
              if msg then add("error", "aimap_row", at(r), string_format("[%s] row %d: %s", sec, rows, msg)) end
              r = skip(r + 1)
            end
            if rows < cnt then
              add("error", "aimap_rows", at(k), string_format("[%s]: count %d, but %d rows follow (CF §6.2)", sec, cnt, rows))
            end
            i = r
          end
        end
      end
    end
  end
  local missing = {}
  for sec, spec in pairs(schema) do
    if spec.need and not found[sec] then missing[#missing + 1] = sec end
  end
  table.sort(missing)
  for _, sec in ipairs(missing) do
    if schema[sec].need == "warn" then
      add("warning", "aimap_missing", name, string_format("no [%s] section: the game uses its default (CF §6.3)", sec))
    else
      add("error", "aimap_missing", name, string_format("no [%s] section (CF §6.3/§6.4)", sec))
    end
  end
  return found
end

-- the keys of the `mmHudMap` block (CF §7.4) and their number of numeric values
M.MMHUDMAP = { Size = 2, Pos = 2, ZoomIn = 1, ["Approach Rate"] = 1, ZoomInDist = 1, ZoomOutDist = 1,
               IconScaleMin = 1, IconScaleMax = 1, ZoomInDistFS = 1, ZoomOutDistFS = 1,
               IconScaleMinFS = 1, IconScaleMaxFS = 1, ["Ocean Color"] = 3 }

--- Check a `tune/<map>.mmhudmap` (CF §7.4): the `type: a` header, one `mmHudMap { }` block,
-- each key known, once, with its count of numbers. Problems name the file and line.
function M.mmhudmap(name, text, add)
  check_crlf(name, text, add)
  local lines = split_lines(text)
  local function at(k) return name .. ": line " .. k end
  if text:sub(1, 7) ~= "type: a" then add("error", "mmhudmap_header", at(1), "must start with 'type: a' (CF §7.4)") end
  local state, seen = "head", {}
  for k, line in ipairs(lines) do
    if k == 1 and line:match("^type: a%s*$") then -- the header
    elseif line:match("^%s*$") then -- blank
    elseif state == "head" then
      if line:match("^%s*mmHudMap%s*{%s*$") then state = "block"
      else add("error", "mmhudmap_block", at(k), string_format("\"%s\" where 'mmHudMap {' is expected (CF §7.4)", escape(line))) end
    elseif state == "block" then
      if line:match("^%s*}%s*$") then state = "done"
      else
        local toks = {}
        for tok in line:gmatch("%S+") do toks[#toks + 1] = tok end
        local key, first = toks[1], 2
        if not M.MMHUDMAP[key] and toks[2] and M.MMHUDMAP[key .. " " .. toks[2]] then key, first = key .. " " .. toks[2], 3 end
        local want = M.MMHUDMAP[key]
        if not want then
          add("error", "mmhudmap_key", at(k), string_format("unknown key \"%s\" (CF §7.4)", escape(toks[1])))
        else
          if seen[key] then add("error", "mmhudmap_key", at(k), string_format("%s again (first at line %d)", key, seen[key])) end
          seen[key] = seen[key] or k
          local got = #toks - first + 1
          if got ~= want then
            add("error", "mmhudmap_value", at(k), string_format("%s takes %d number%s, %d found (CF §7.4)", key, want,
              want == 1 and "" or "s", got))
          end
          for t = first, #toks do
            if not tonumber(toks[t]) then
              add("error", "mmhudmap_value", at(k), string_format("%s: \"%s\" is not a number", key, escape(toks[t])))
            end
          end
        end
      end
    else
      add("error", "mmhudmap_block", at(k), string_format("\"%s\" after the end of the mmHudMap block", escape(line)))
    end
  end
  if state == "head" then add("error", "mmhudmap_block", name, "no mmHudMap { } block (CF §7.4)")
  elseif state == "block" then add("error", "mmhudmap_block", name, "the mmHudMap block has no closing '}' (CF §7.4)") end
end

--- Check the bytes of an `.ar`.
-- @tparam string bytes
-- @tparam[opt] string label the archive's name for messages
-- @treturn table problems
-- @treturn table counts `{errors =, warnings =}`
-- @treturn table info `{map =, files = n}`
-- long: one archive, checked in the order the game reads it (directory, sizes, the
-- .cinfo, then every file by its extension); the per-format checks are in their codecs
function M.check(bytes, label)
  local psdl = require "psdl"
  local problems = {}
  local function add(sev, rule, path, msg)
    problems[#problems + 1] = { severity = sev, rule = rule, path = path, message = msg }
  end
  local info = { files = 0 }
  if #bytes > M.MAX_UNPACKED then
    add("error", "zip_too_large", "", string_format("the archive is %d bytes, more than the %d (%d MiB) psdl "
      .. "validate reads", #bytes, M.MAX_UNPACKED, M.MAX_UNPACKED >> 20))
    info.unreadable = true
    return M.finish(problems, info)
  end
  -- (no entries: the directory is damaged or not where the game looks; libzip may still read
  -- it, within MAX_UNPACKED, so the files are checked too)
  local entries, why = check_zip(bytes, add)
  if why == "no_end_record" then
    -- no zip reader (the game's, libzip) finds the directory without it: unreadable (exit 2),
    -- and the files it would hold are not reported missing one by one
    info.unreadable = true
    return M.finish(problems, info)
  end
  entries = entries or {}
  if entries.duplicate then
    add("error", "zip_read", "", "the archive is not unpacked: the name " .. entries.duplicate .. " occurs twice")
    info.unreadable = true
    return M.finish(problems, info)
  end
  -- declared sizes first: nothing is unpacked from an archive that would go over the limits
  local total, bomb = 0, false
  for _, e in ipairs(entries) do
    total = total + e.size
    if e.size > M.MAX_ENTRY then
      add("error", "zip_too_large", e.name, string_format("declares %d bytes unpacked, more than the %d (%d MiB) "
        .. "psdl validate unpacks for one file", e.size, M.MAX_ENTRY, M.MAX_ENTRY >> 20))
      bomb = true
    elseif e.method == 8 and e.size > 1 << 20 and e.size > M.MAX_RATIO * math.max(e.csize, 1) then
      add("error", "zip_ratio", e.name, string_format("declares %d bytes unpacked from %d: a ratio deflate cannot "
        .. "reach (more than %d to 1; a zip bomb or a false size)", e.size, e.csize, M.MAX_RATIO))
      bomb = true
    end
  end
  if total > M.MAX_UNPACKED then
    add("error", "zip_too_large", "", string_format("the entries declare %d bytes unpacked, more than the %d "
      .. "(%d MiB) psdl validate unpacks", total, M.MAX_UNPACKED, M.MAX_UNPACKED >> 20))
    bomb = true
  end
  if bomb then
    info.unreadable = true
    return M.finish(problems, info)
  end
  local got, err = require("psdl.core").zip_read(bytes, M.MAX_UNPACKED)
  if not got then
    add("error", "zip_read", "", "the archive does not unpack: " .. tostring(err))
    info.unreadable = true
    return M.finish(problems, info)
  end
  info.files = #got
  -- by lower-case '/' name: the first entry of that name (in directory order) is checked; a
  -- later case variant (already a zip_duplicate error) is decoded on its own, under its own name
  local by, real, extra = {}, {}, {}
  for _, e in ipairs(got) do
    local low = e.name:lower():gsub("\\", "/")
    if by[low] == nil then by[low], real[low] = e.data, e.name
    else extra[#extra + 1] = e end
  end
  -- the entry name a lower-case name stands for (messages name the entry whose bytes are read)
  local function nm(low) return real[low] or low end
  -- the city: its .cinfo
  local cinfos = {}
  for name in pairs(by) do
    if name:match("^tune/[^/]+%.cinfo$") then cinfos[#cinfos + 1] = name end
  end
  table.sort(cinfos)
  if #cinfos == 0 then
    add("error", "missing_file", "tune/<map>.cinfo", "no .cinfo: the game does not list the city (CF §6.1, §8.6)")
    return M.finish(problems, info)
  end
  local cities = {}
  for _, cname in ipairs(cinfos) do
    local v = M.cinfo(nm(cname), by[cname], add)
    local map = v and v.MapName and v.MapName:lower()
    if map then
      info.map = info.map or map
      local race = (v.RaceDir or map):lower()
      cities[#cities + 1] = { map = map, race = race }
      local function need(name, sev, why)
        if not by[name] then add(sev, "missing_file", name, why) end
        return by[name]
      end
      local pbytes = need("city/" .. map .. ".psdl", "error", "the city's geometry (CF §8.6)")
      local bbytes = need("city/" .. map .. ".bai", "error", "no traffic, no pedestrians, the start at (0, 20, 0) (CF §2.9)")
      local cbytes = need("city/" .. map .. ".cpvs", "error", "stock MM2 has no missing-PVS fallback (CF §3.1)")
      local hbytes = need("geometry/hudmap_" .. map .. ".pkg", "error", "stock MM2 crashes at the first map toggle (CF §7.1)")
      need("tune/" .. map .. ".mmhudmap", "warning", "minimap parameters (CF §7.4)")
      local am = need("city/" .. map .. ".aimap", "warning", "ambient setup (CF §6.3)")
      local r1 = need("race/" .. race .. "/roam.aimap", "warning", "cruise setup (CF §6.4)")
      local r2 = need("race/" .. race .. "/roam.aimap_p", "warning", "cruise setup, professional (CF §6.4)")
      if am then M.aimap(nm("city/" .. map .. ".aimap"), am, add, M.CITY_AIMAP) end
      if r1 then M.aimap(nm("race/" .. race .. "/roam.aimap"), r1, add, M.RACE_AIMAP) end
      if r2 then M.aimap(nm("race/" .. race .. "/roam.aimap_p"), r2, add, M.RACE_AIMAP) end
      local mh = by["tune/" .. map .. ".mmhudmap"]
      if mh then M.mmhudmap(nm("tune/" .. map .. ".mmhudmap"), mh, add) end
      local doc
      if pbytes then
        local d, msg = psdl.decode(pbytes)
        if not d then add("error", "decode", nm("city/" .. map .. ".psdl"), msg)
        else
          doc = d
          local _, probs = psdl.validate(d, { name = map })
          for _, p in ipairs(probs or {}) do
            if p.severity == "error" then add("error", "psdl_" .. p.rule, nm("city/" .. map .. ".psdl") .. ": " .. (p.path or ""), p.message) end
          end
        end
      end
      local tables = {}
      local function decode(fmt, name, b, vopts)
        name = nm(name)
        local t, msg = psdl[fmt].decode(b)
        if not t then add("error", "decode", name, msg); return nil end
        local _, probs = psdl[fmt].validate(t, doc, vopts)
        for _, p in ipairs(probs or {}) do
          add(p.severity, fmt .. "_" .. p.rule, name .. (p.path and p.path ~= "" and (": " .. p.path) or ""), p.message)
        end
        return t
      end
      if bbytes then tables.bai = decode("bai", "city/" .. map .. ".bai", bbytes) end
      if cbytes then tables.cpvs = decode("cpvs", "city/" .. map .. ".cpvs", cbytes) end
      local ai = by["city/" .. map .. "_ai.inst"]
      if ai then tables.inst = decode("inst", "city/" .. map .. "_ai.inst", ai) end
      local inst = by["city/" .. map .. ".inst"]
      if inst then decode("inst", "city/" .. map .. ".inst", inst) end
      if hbytes then
        -- the minimap checks of psdl.pkg (chunk H, height, cover), then its textures in the archive
        local pkg = decode("pkg", "geometry/hudmap_" .. map .. ".pkg", hbytes, { hudmap = true })
        for _, tex in ipairs(pkg and psdl.pkg.textures(pkg) or {}) do
          local tn = tex:lower()
          if not (by["texture/" .. tn .. ".tex"] or by["texture/" .. tn .. ".tga"] or by["texture/" .. tn .. ".bmp"]) then
            add("error", "missing_texture", nm("geometry/hudmap_" .. map .. ".pkg"),
              "shader texture " .. tex .. " is not in the archive (texture/" .. tex .. ".tex)")
          end
        end
      end
      -- prop rules (CF §5.3): the pair read and checked as the game reads it (psdl.propcsv); the
      -- rules with both rows go to the cross-check against the PSDL's road records
      local pr = by["city/" .. map .. "/proprules.csv"]
      local pd = by["city/" .. map .. "/propdefs.csv"]
      if (pr == nil) ~= (pd == nil) then
        add("error", "prop_csv_pair", "city/" .. map .. "/", "propdefs.csv and proprules.csv are read as a pair (CF §5.3)")
      end
      local full = {}
      if pr and pd then
        local propcsv = psdl.propcsv
        local rules_t = propcsv.parse(pr)
        local _, probs = propcsv.validate(propcsv.parse(pd), rules_t)
        for _, p in ipairs(probs or {}) do
          add(p.severity, "propcsv_" .. p.rule, "city/" .. map .. "/" .. (p.path or ""), p.message)
        end
        local col = 1
        for i, cname in ipairs(rules_t.columns) do if cname == "rulename" then col = i; break end end
        local sides = {}
        for _, row in ipairs(rules_t.rows) do
          local num, side = (row[col] or ""):lower():match("^n(%d%d)(%a+)$")
          if num and (side == "left" or side == "right") then
            local r = tonumber(num)
            sides[r] = (sides[r] or 0) | (side == "left" and 1 or 2)
          end
        end
        for r, m in pairs(sides) do if m == 3 then full[r] = true end end
      end
      if doc then
        local ppath = require "psdl.package"
        for _, msg in ipairs(ppath.cross_check(doc, map, { bai = tables.bai, cpvs = tables.cpvs, inst = tables.inst,
                                                          proprules = full })) do
          add("error", "cross_check", msg:match("^([^:]+)") or "", msg:gsub("^[^:]+: ", ""))
        end
      end
    end
  end
  -- files the game does not read for these cities (CF §8.4) are named (not when no .cinfo
  -- parsed: then every file would be named, the .cinfo errors say why)
  for name in pairs(by) do
    if #cities > 0 and name:sub(-1) ~= "/" and not M.known_file(name, cities) then
      add("warning", "unknown_file", name, "not a file the game reads for this city (CF §8.4: tune/<map>.*, "
        .. "city/<map>.*, city/<map>/*, race/<RaceDir>/*, geometry/*.pkg, texture/*.tex|tga|bmp): shipped for "
        .. "nothing, or it overrides another add-on's file of the same name")
    end
  end
  -- every other known file decodes
  for name, data in pairs(by) do
    local fmt
    if name:match("%.tex$") then fmt = "tex" elseif name:match("%.pathset$") then fmt = "pathset" end
    if fmt then
      name = nm(name)
      local t, msg = psdl[fmt].decode(data)
      if not t then add("error", "decode", name, msg) else
        local _, probs = psdl[fmt].validate(t)
        for _, p in ipairs(probs or {}) do add(p.severity, fmt .. "_" .. p.rule, name .. (p.path and p.path ~= "" and (": " .. p.path) or ""), p.message) end
      end
    end
  end
  -- the later case variants of a name: decoded by their extension, under their own names
  local DECODERS = { psdl = true, bai = true, cpvs = true, inst = true, pkg = true, tex = true, pathset = true }
  for _, e in ipairs(extra) do
    local ext = e.name:lower():match("%.([%w_]+)$")
    if ext and DECODERS[ext] then
      local dec = ext == "psdl" and psdl.decode or psdl[ext].decode
      local ok, t, msg = pcall(dec, e.data)
      if not ok or not t then add("error", "decode", e.name, tostring(ok and msg or t)) end
    end
  end
  return M.finish(problems, info)
end

local CITY_EXT = { psdl = "the city's geometry (PSDL)", bai = "AI roads and intersections (CF §2)",
                   cpvs = "visibility sets (CF §3)", aimap = "ambient traffic setup (CF §6.3)",
                   inst = "placed models (CF §4)", sky = "sky model (CF §8.4)", water = "water rooms (CF §8.4)" }
local CITY_DIR = { ["propdefs.csv"] = "prop definitions (CF §5.3)", ["proprules.csv"] = "prop rules (CF §5.3)",
                   ["props.pathset"] = "prop paths (CF §5)", ["decals.pathset"] = "decal paths (CF §5)" }

--- What a file of an add-on is, by its name (the tree of CF §8.4), or nil when the game does
-- not read it for any of the cities.
-- @tparam string name lower-case, '/'-separated
-- @tparam table cities `{ {map =, race =}, ... }` (from the archive's `tune/<map>.cinfo`)
-- @treturn string|nil
function M.describe(name, cities)
  for _, c in ipairs(cities) do
    local m = c.map
    if name == "tune/" .. m .. ".cinfo" then return "registers the city in the game's list (CF §6.1)" end
    if name == "tune/" .. m .. ".mmhudmap" then return "minimap parameters (CF §7.4)" end
    if name == "city/" .. m .. "_ai.inst" then return "placed traffic signs (CF §4.5)" end
    if name == "city/" .. m .. "_fog.csv" then return "fog per time and weather (CF §8.4)" end
    if name == "geometry/hudmap_" .. m .. ".pkg" then return "minimap model (CF §7)" end
    local ext = name:sub(1, #m + 6) == "city/" .. m .. "." and name:sub(#m + 7)
    if ext and CITY_EXT[ext] then return CITY_EXT[ext] end
    if ext and ext:match("^lt%d%d$") then return "lighting (CF §8.4)" end
    if name:sub(1, #m + 6) == "city/" .. m .. "/" and CITY_DIR[name:sub(#m + 7)] then return CITY_DIR[name:sub(#m + 7)] end
    if name:sub(1, #c.race + 6) == "race/" .. c.race .. "/" and not name:find("/", #c.race + 7, true) then
      if name:match("/roam%.aimap$") then return "cruise setup (CF §6.4)" end
      if name:match("/roam%.aimap_p$") then return "cruise setup, professional (CF §6.4)" end
      return "race file (CF §8.4)"
    end
    if name:match("^texture/hudmap_" .. m .. "_%d+%.tex$") then return "minimap texture tile (CF §9)" end
  end
  if name:match("^texture/[^/]+%.tex$") or name:match("^texture/[^/]+%.tga$") or name:match("^texture/[^/]+%.bmp$")
      or name:match("^jpg/[^/]+%.jpg$") then
    return "texture (CF §9)"
  end
  if name:match("^geometry/[^/]+%.pkg$") then return "model (PKG3, CF §8.4)" end
  if name:match("^bound/[^/]+%.bnd$") or name:match("^bound/[^/]+%.bbnd$") then return "collision bound (CF §8.4)" end
  return nil
end

--- True when the game reads a file of this name for one of the cities (`describe`).
function M.known_file(name, cities)
  return M.describe(name, cities) ~= nil
end

--- The entries of an archive from its central directory (nothing unpacked), for `psdl info`.
-- @tparam string bytes
-- @treturn table|nil `{ {name, size, csize, method}, ... }`
-- @treturn table problems found reading the directory
-- @treturn table cities `{ {map =, race =} }` from the names `tune/<map>.cinfo` (RaceDir = map)
function M.entries(bytes)
  local problems = {}
  local entries = check_zip(bytes, function(sev, rule, path, msg)
    problems[#problems + 1] = { severity = sev, rule = rule, path = path, message = msg }
  end)
  local cities = {}
  for _, e in ipairs(entries or {}) do
    local m = e.low:match("^tune/([^/]+)%.cinfo$")
    if m then cities[#cities + 1] = { map = m, race = m } end
  end
  return entries, problems, cities
end

--- Escape, sort (errors first, then by path with its numbers in numeric order, then by
-- message) and count a package's problems.
-- @tparam table problems `{ {severity, rule, path, message}, ... }` (sorted in place)
-- @param info passed through
-- @treturn table problems
-- @treturn table `{errors =, warnings =}`
-- @return info
function M.finish(problems, info)
  for _, p in ipairs(problems) do
    p.path, p.message = escape(p.path or ""), escape(p.message or "")
  end
  -- paths in numeric order (intersections[2] before intersections[12]): numbers padded to
  -- 20 digits for the comparison
  local keys = {}
  local function key(path)
    local k = keys[path]
    if not k then
      k = path:gsub("%d+", function(d) return #d < 20 and string.rep("0", 20 - #d) .. d or d end)
      keys[path] = k
    end
    return k
  end
  table.sort(problems, function(a, b)
    if a.severity ~= b.severity then return a.severity == "error" end
    if a.path ~= b.path then
      local ka, kb = key(a.path), key(b.path)
      if ka ~= kb then return ka < kb end
      return a.path < b.path
    end
    return a.message < b.message
  end)
  local e, w = 0, 0
  for _, p in ipairs(problems) do if p.severity == "error" then e = e + 1 else w = w + 1 end end
  return problems, { errors = e, warnings = w }, info
end

return M
