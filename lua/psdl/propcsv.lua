--- `city/<map>/propdefs.csv` and `proprules.csv`, the street props the game places along
-- PSDL roads (docs/companion-formats.md §5.3): read them the way the game's `parCsvFile`
-- does and check the pair against a PSDL document.
--
-- Reading rules (§5.3, [GAME: LLM-PROP]): the first line names the columns (at most 16,
-- matched case-insensitively); every line is cut at `#`; a line longer than 255 bytes is
-- read in pieces of 255 (the game reads it with a 256-byte buffer: our reading of "is
-- split"); a cell ends at a comma or a control character, and a control character also ends
-- the line (CR of CRLF included); an empty cell between two commas is a real, empty cell;
-- lines without any cell text are skipped.
--
-- Validation rules (severity): `columns` (E: a required column missing, or more than 16),
-- `number` (E: start, distance, maxUse, minLerp or maxLerp not a number), `distance` (E:
-- distance <= 0, the walk along the curb would not advance [INFER]), `lerp` (W: minLerp >
-- maxLerp or outside 0..1), `missing_rule` (E with the PSDL: a road record with flag 0x40
-- whose first room has prop rule N != 0 and no `nNNleft` or `nNNright` row: MM2 quits),
-- `missing_propdef` (E: a rule row names a propdef that does not exist: MM2 quits),
-- `empty_file` (W: a trailing empty file cell, a variant that places nothing),
-- `no_files` (E: a propdef without any file), `duplicate` (W: a name defined twice),
-- `long_line` (W: a line over 255 bytes, split by the game), `spaces` (W: a name or file
-- cell with leading or trailing spaces, which the game keeps as part of the name).
-- @module psdl.propcsv

local companion = require "psdl.companion"
local ipairs, type, tonumber, tostring, string_format = ipairs, type, tonumber, tostring, string.format

local M = {}

--- Parse CSV text as the game does.
-- @tparam string text
-- @treturn table `{columns = {"name", ...} (lower case), rows = {{cells..., line = n}, ...},
--   long_lines = {line numbers}}`
function M.parse(text)
  local lines, long = {}, {}
  local n = 0
  for raw in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if #raw > 255 then long[#long + 1] = n end
    local pos = 1
    repeat
      lines[#lines + 1] = { text = raw:sub(pos, pos + 254), line = n }
      pos = pos + 255
    until pos > #raw
  end
  local out = { columns = nil, rows = {}, long_lines = long }
  for _, l in ipairs(lines) do
    local s = l.text:gsub("#.*$", "")
    s = s:match("^([^%c]*)") -- a control character ends the line
    if s:find("%S") then
      local cells = {}
      for cell in (s .. ","):gmatch("([^,]*),") do cells[#cells + 1] = cell end
      if not out.columns then
        out.columns = {}
        for i, c in ipairs(cells) do out.columns[i] = c:lower() end
      else
        cells.line = l.line
        out.rows[#out.rows + 1] = cells
      end
    end
  end
  out.columns = out.columns or {}
  return out
end

local function index(columns)
  local ix = {}
  for i, c in ipairs(columns) do if not ix[c] then ix[c] = i end end
  return ix
end

local DEF_REQUIRED = { "name", "start", "distance", "maxuse", "minlerp", "maxlerp", "file1" }
local RULE_REQUIRED = { "rulename", "prop1" }

--- Check a propdefs/proprules pair (texts or `parse` results), optionally against the PSDL.
-- @tparam string|table propdefs
-- @tparam string|table proprules
-- @tparam[opt] table psdl_doc the city's document (for `missing_rule`)
-- @tparam[opt] table opts `strict`
-- @treturn boolean ok, table problems (`path` = "propdefs.csv:<line>" or "proprules.csv:<line>"), table counts
function M.validate(propdefs, proprules, psdl_doc, opts)
  opts = opts or {}
  local P = companion.problems()
  local defs = type(propdefs) == "string" and M.parse(propdefs) or propdefs
  local rules = type(proprules) == "string" and M.parse(proprules) or proprules
  for _, f in ipairs { { "propdefs.csv", defs, DEF_REQUIRED }, { "proprules.csv", rules, RULE_REQUIRED } } do
    local name, t, req = f[1], f[2], f[3]
    local ix = index(t.columns)
    for _, c in ipairs(req) do
      if not ix[c] then P.error("columns", name .. ":1", nil, "column %q missing", c) end
    end
    if #t.columns > 16 then P.error("columns", name .. ":1", nil, "%d columns: the game reads 16", #t.columns) end
    for _, n in ipairs(t.long_lines or {}) do
      P.warning("long_line", name .. ":" .. n, nil, "longer than 255 bytes: the game splits it")
    end
  end

  local dix, names = index(defs.columns), {}
  for k, row in ipairs(defs.rows) do
    local at = "propdefs.csv:" .. row.line
    local nm = row[dix.name or 1] or ""
    for i = 1, 4 do
      local c = (i == 1) and (dix.name or 1) or dix["file" .. (i - 1)]
      if c and row[c] and row[c]:find("^%s") or (c and row[c] and row[c]:find("%s$")) then
        P.warning("spaces", at, k, "cell %q has spaces around it: the game keeps them in the name", row[c])
      end
    end
    if names[nm:lower()] then P.warning("duplicate", at, k, "propdef %q defined again", nm) end
    names[nm:lower()] = true
    local vals = {}
    for _, c in ipairs { "start", "distance", "maxuse", "minlerp", "maxlerp" } do
      local cell = dix[c] and row[dix[c]]
      local v = cell and tonumber(cell:match("^[-+]?%d*%.?%d+[eE]?[-+]?%d*") or "")
      if dix[c] and not v then
        P.error("number", at, k, "%s of %q: %q is not a number", c, nm, tostring(cell))
      end
      vals[c] = v
    end
    if vals.distance and vals.distance <= 0 then
      P.error("distance", at, k, "distance %g of %q: the walk along the curb would not advance", vals.distance, nm)
    end
    if vals.minlerp and vals.maxlerp and (vals.minlerp > vals.maxlerp or vals.minlerp < 0 or vals.maxlerp > 1) then
      P.warning("lerp", at, k, "lerp %g..%g of %q: 0 (curb) <= min <= max <= 1 (building line)", vals.minlerp,
        vals.maxlerp, nm)
    end
    local files, last = 0, nil
    for i = 1, 4 do
      local c = dix["file" .. i]
      if c and row[c] ~= nil then
        last = row[c]
        if row[c] ~= "" then files = files + 1 end
      end
    end
    if files == 0 then P.error("no_files", at, k, "propdef %q names no model", nm) end
    if last == "" and files > 0 then
      P.warning("empty_file", at, k, "propdef %q ends with an empty file cell: a variant that places nothing", nm)
    end
  end

  local rix, rows = index(rules.columns), {}
  for k, row in ipairs(rules.rows) do
    local rn = (row[rix.rulename or 1] or ""):lower()
    rows[rn] = true
    for i = 1, 8 do
      local c = rix["prop" .. i]
      local p = c and row[c]
      if p and p ~= "" and not names[p:lower()] then
        P.error("missing_propdef", "proprules.csv:" .. row.line, k, "rule %s names propdef %q, which propdefs.csv "
          .. "does not define: MM2 quits (§5.3)", rn, p)
      end
    end
  end

  if psdl_doc then
    local reported = {}
    for i, road in ipairs(psdl_doc.roads or {}) do
      local first = road.rooms and road.rooms[1]
      if (road.flags or 0) & 0x40 ~= 0 and first then
        local room = psdl_doc.rooms[first < 0 and -first or first]
        local n = room and room.prop_rule or 0
        if n ~= 0 and not reported[n] then
          for _, side in ipairs { "left", "right" } do
            local rn = string_format("n%02d%s", n, side)
            if not rows[rn] then
              reported[n] = true
              P.error("missing_rule", "proprules.csv", nil, "road record %d (flag 0x40) has prop rule %d in its "
                .. "first room but proprules.csv has no row %s: MM2 quits (§5.3)", i, n, rn)
            end
          end
        end
      end
    end
  end
  return P.result(opts.strict)
end

return M
