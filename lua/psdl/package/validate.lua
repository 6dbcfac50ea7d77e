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
local function check_zip(bytes, add)
  local n = #bytes
  if n < 22 or bytes:sub(n - 21, n - 18) ~= "PK\5\6" then
    add("error", "zip_end_record", "", "the end-of-central-directory record is not the last 22 bytes: an archive "
      .. "comment or not a zip (CF §8.2: the game looks only there)")
    return nil
  end
  local disk, cd_disk, n_here, n_total, cd_size, cd_off, clen = unpack("<I2I2I2I2I4I4I2", bytes, n - 17)
  if clen ~= 0 then add("error", "zip_comment", "", "archive comment of " .. clen .. " bytes (CF §8.2)") end
  if disk ~= 0 or cd_disk ~= 0 or n_here ~= n_total then
    add("error", "zip_multipart", "", "a multi-part archive (CF §8.2: single part only)")
  end
  if cd_off == 0xFFFFFFFF or cd_size == 0xFFFFFFFF or n_total == 0xFFFF then
    add("error", "zip64", "", "ZIP64 markers in the end record (CF §8.2)")
    return nil
  end
  if cd_off + cd_size > n - 22 then
    add("error", "zip_directory", "", "the central directory runs past the end record")
    return nil
  end
  local entries, pos = {}, cd_off + 1
  local seen = {}
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
    if low:match("^tune/") and not low:match("^tune/.*%.[^/]*$") then
      add("error", "zip_name", where, "a file under tune/ without an extension crashes stock MM2 (CF §8.2)")
    end
    if seen[name] then
      add("error", "zip_duplicate", where, "a second entry of the same name: the archive cannot be unpacked "
        .. "(which one the game reads is not known; keep one)")
      entries.duplicate = entries.duplicate or name
    elseif seen[low] then
      add("error", "zip_duplicate", where, "a second entry of the same name (case-insensitive: the game's "
        .. "names are): only one of " .. seen[low] .. " and " .. name .. " is read")
    end
    seen[low], seen[name] = seen[low] or name, name
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
      if lcrc ~= crc or lcsize ~= csize or lusize ~= usize then
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

-- line-format checks of the text files
local function check_crlf(name, text, add)
  if text:find("[^\r]\n") or text:sub(1, 1) == "\n" then
    add("error", "text_crlf", name, "line ends without CR (CF §1: CRLF everywhere; the .cinfo reader depends on it)")
  end
end

local CINFO = { "LocalizedName", "MapName", "RaceDir", "BlitzCount", "CircuitCount", "CheckpointCount",
                "BlitzNames", "CircuitNames", "CheckpointNames" }

--- Parse and check a `.cinfo` (CF §6.1).
-- @treturn table|nil `{LocalizedName =, MapName =, ...}`
function M.cinfo(name, text, add)
  check_crlf(name, text, add)
  local lines = {}
  for line in (text:gsub("\r\n", "\n") .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local v = {}
  for i, key in ipairs(CINFO) do
    local line = lines[i] or ""
    local val = line:match("^" .. key .. "=(.*)$")
    if not val then
      add("error", "cinfo_line", name .. ": line " .. i, string_format("%q expected as %s=... (CF §6.1: nine lines in a fixed order)", line, key))
      return nil
    end
    if val == "" then add("error", "cinfo_empty", name .. ": line " .. i, key .. " is empty: the whole file fails to parse (CF §6.1)") end
    if i <= 3 and #val > 39 then add("error", "cinfo_length", name .. ": line " .. i, key .. " longer than 39 characters") end
    if (i == 2 or i == 3) and val:find("%s") then add("error", "cinfo_word", name .. ": line " .. i, key .. " must be one word") end
    if i >= 4 and i <= 6 and not val:match("^%-?%d+$") then add("error", "cinfo_count", name .. ": line " .. i, key .. " must be an integer") end
    v[key] = val
  end
  if v.MapName ~= v.RaceDir then add("warning", "cinfo_racedir", name, "MapName and RaceDir differ (CF §6.1: keep them equal)") end
  if v.MapName ~= v.MapName:lower() then add("error", "cinfo_case", name, "MapName must be lower case (CF §6.1)") end
  if v.MapName:find("london", 1, true) or v.MapName:find("sf", 1, true) then
    add("error", "cinfo_name", name, "MapName contains 'london' or 'sf' (PF §3.4, CF §6.1)")
  end
  return v
end

--- Check an aimap's grammar (CF §6.2): list sections have a count line and that many rows.
function M.aimap(name, text, add, lists)
  check_crlf(name, text, add)
  local lines = {}
  for line in (text:gsub("\r\n", "\n")):gmatch("([^\n]*)\n?") do lines[#lines + 1] = line end
  local i = 1
  local found = {}
  while i <= #lines do
    local sec = lines[i]:match("^%[(.-)%]%s*$")
    if sec then
      found[sec] = true
      if lists[sec] then
        local cnt = tonumber((lines[i + 1] or ""):match("^%s*(%-?%d+)"))
        if not cnt or cnt < 0 then
          add("error", "aimap_count", name .. ": [" .. sec .. "]", "a list section needs a count line (CF §6.2)")
        else
          local rows = 0
          for k = i + 2, i + 1 + cnt do
            local l = lines[k]
            if l and l ~= "" and not l:match("^%[") and not l:match("^#") then rows = rows + 1 end
          end
          if rows < cnt then
            add("error", "aimap_rows", name .. ": [" .. sec .. "]", string_format("count %d, but %d rows follow (CF §6.2)", cnt, rows))
          end
          i = i + 1 + cnt
        end
      end
    end
    i = i + 1
  end
  return found
end

local CITY_LISTS = { ["Ambient Types/Density"] = true, ["GoodWeatherPedName / BadWeatherPedName"] = true }
local RACE_LISTS = { Exceptions = true, Police = true, Opponent = true, Hookmen = true, ["Ambient Types/Density"] = true }

--- Check the bytes of an `.ar`.
-- @tparam string bytes
-- @tparam[opt] string label the archive's name for messages
-- @treturn table problems
-- @treturn table counts `{errors =, warnings =}`
-- @treturn table info `{map =, files = n}`
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
  local entries = check_zip(bytes, add) or {}
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
  local by = {}
  for _, e in ipairs(got) do by[e.name:lower():gsub("\\", "/")] = e.data end
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
    local v = M.cinfo(cname, by[cname], add)
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
      if am then M.aimap("city/" .. map .. ".aimap", am, add, CITY_LISTS) end
      if r1 then M.aimap("race/" .. race .. "/roam.aimap", r1, add, RACE_LISTS) end
      if r2 then M.aimap("race/" .. race .. "/roam.aimap_p", r2, add, RACE_LISTS) end
      local mh = by["tune/" .. map .. ".mmhudmap"]
      if mh then
        check_crlf("tune/" .. map .. ".mmhudmap", mh, add)
        if mh:sub(1, 7) ~= "type: a" then add("error", "mmhudmap_header", "tune/" .. map .. ".mmhudmap", "must start with 'type: a' (CF §7.4)") end
        if not mh:find("mmHudMap%s*{") then add("error", "mmhudmap_block", "tune/" .. map .. ".mmhudmap", "no mmHudMap { } block (CF §7.4)") end
      end
      local doc
      if pbytes then
        local d, msg = psdl.decode(pbytes)
        if not d then add("error", "decode", "city/" .. map .. ".psdl", msg)
        else
          doc = d
          local _, probs = psdl.validate(d, { name = map })
          for _, p in ipairs(probs or {}) do
            if p.severity == "error" then add("error", "psdl_" .. p.rule, "city/" .. map .. ".psdl: " .. (p.path or ""), p.message) end
          end
        end
      end
      local tables = {}
      local function decode(fmt, name, b, vopts)
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
            add("error", "missing_texture", "geometry/hudmap_" .. map .. ".pkg",
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
  -- files the game does not read for these cities (CF §8.4) are named
  for name in pairs(by) do
    if not M.known_file(name, cities) then
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
      local t, msg = psdl[fmt].decode(data)
      if not t then add("error", "decode", name, msg) else
        local _, probs = psdl[fmt].validate(t)
        for _, p in ipairs(probs or {}) do add(p.severity, fmt .. "_" .. p.rule, name .. (p.path and p.path ~= "" and (": " .. p.path) or ""), p.message) end
      end
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

function M.finish(problems, info)
  table.sort(problems, function(a, b)
    if a.severity ~= b.severity then return a.severity == "error" end
    if a.path ~= b.path then return a.path < b.path end
    return a.message < b.message
  end)
  local e, w = 0, 0
  for _, p in ipairs(problems) do if p.severity == "error" then e = e + 1 else w = w + 1 end end
  return problems, { errors = e, warnings = w }, info
end

return M
