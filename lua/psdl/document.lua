--- Validate, encode and write a document on ONE conversion of the Lua table to C.
--
-- `psdl.validate` and `psdl.write` are this module's `validate` and `write`. The core's
-- `validate` converts the document once and, asked to, returns the bytes of the document it
-- just checked: `write` writes those. `Builder:finish` checks with the bytes too and keeps
-- them in its report (`report.checked`), so a city that was just built is written with
-- `write_checked` without converting or validating it again (`City:save`, `psdl build`).
--
-- A checked document is `{bytes = string, problems = list, errors = n, warnings = m,
-- drivable = boolean}`: the bytes of a document and the problems the core found in it
-- (without the name check, which depends on the name a caller writes under).
-- @module psdl.document

local core = require "psdl.core"

local type, tostring, pcall, error, ipairs, pairs = type, tostring, pcall, error, ipairs, pairs
local string_format, table_concat = string.format, table.concat

local M = {}

-- Raise when opts holds a key that is not an option of fname (a misspelt option would
-- otherwise be ignored without a word).
local function check_options(opts, allowed, fname, argn)
  for k in pairs(opts) do
    if not allowed[k] then
      error(string_format("bad argument #%d to '%s' (unknown option '%s')", argn, fname, tostring(k)), 3)
    end
  end
end
M.check_options = check_options

-- Last path component without a ".psdl" extension ("cities/london.psdl" -> "london").
local function base_name(name)
  local base = name:match("([^/\\]*)$") or name
  return (base:gsub("%.[Pp][Ss][Dd][Ll]$", ""))
end

-- The one problem (rule "encodable") for the core's refusal to encode a document:
-- "bad argument #1 to 'validate' (rooms[1].flags: 300 is out of range)" -> path, detail.
local function encode_problem(msg)
  msg = tostring(msg)
  local inner = msg:match("^bad argument #%d+ to '[^']*' %((.*)%)$") or msg
  local path, detail = inner:match("^([%w_%.%[%]]+): (.*)$")
  return { severity = "error", rule = "encodable", message = detail or inner, path = path or "" }
end

-- The core's check of a document: problems, errors, warnings and, when want_bytes, the
-- bytes of the document just checked (nil when it cannot be encoded: the single problem
-- then has rule "encodable"). `validate` is core.validate (doc: a document table) or a
-- room store's validate (doc: the store, box: its assembled document).
local function core_check(doc, drivable, want_bytes, validate, box)
  -- called straight from pcall, so that a raise carries no position (luaL_error names the
  -- caller's line, and pcall has none)
  local ok, problems, nerr, nwarn, bytes
  if box then ok, problems, nerr, nwarn, bytes = pcall(validate, doc, box, want_bytes, not drivable)
  else ok, problems, nerr, nwarn, bytes = pcall(core.validate, doc, want_bytes, not drivable) end
  if not ok then return { encode_problem(problems) }, 1, 0, nil end
  return problems, nerr, nwarn, bytes
end

-- The verdict on a checked document written or shown under `opts.name`: a name containing
-- "london" or "sf" adds a `city_name` warning (psdl-format.md §3.4). Returns good, the
-- problems (the checked list, or a copy with the warning), counts.
local function verdict(problems, nerr, nwarn, opts)
  local name = opts.name
  if type(name) == "string" then
    local base = base_name(name):lower()
    if base:find("london", 1, true) or base:find("sf", 1, true) then
      local list = {}
      for i, p in ipairs(problems) do list[i] = p end
      list[#list + 1] = {
        severity = "warning", rule = "city_name", path = "",
        message = string_format("city name %q contains %q: the game special-cases such cities "
          .. "(hand-placed warps or room flags, psdl-format.md §3.4); rename the city",
          base, base:find("london", 1, true) and "london" or "sf"),
      }
      problems, nwarn = list, nwarn + 1
    end
  end
  local good = nerr == 0 and not (opts.strict and nwarn > 0)
  return good, problems, { errors = nerr, warnings = nwarn }
end

--- Check a document, with its bytes from the same conversion.
-- @tparam table doc
-- @tparam table opts `strict`, `name`, `drivable` as for `validate`
-- @tparam[opt] boolean want_bytes also return the checked document
-- @treturn boolean good
-- @treturn table problems
-- @treturn table counts `{errors, warnings}`
-- @treturn table|nil the checked document `{bytes, problems, errors, warnings, drivable}`
--   (want_bytes, and the document could be encoded)
function M.check(doc, opts, want_bytes)
  local drivable = opts.drivable ~= false
  local problems, nerr, nwarn, bytes = core_check(doc, drivable, want_bytes)
  local good, list, counts = verdict(problems, nerr, nwarn, opts)
  local checked = bytes and { bytes = bytes, problems = problems, errors = nerr, warnings = nwarn,
                              drivable = drivable } or nil
  return good, list, counts, checked
end

--- Check a document the builder assembled in C from its room store (`Builder:finish`), as
-- `check` does a document table: the same problems, counts and checked bytes.
-- @param store the builder's room store (core.store)
-- @param box the assembled document (store:assemble + store:complete; released here), or the
--   one problem `{severity = "error", rule = "encodable", ...}` the assembly found
-- @tparam table opts `strict`, `name`, `drivable` as for `validate`
-- @tparam[opt] boolean want_bytes also return the checked document
-- @return as `check`
function M.check_assembled(store, box, opts, want_bytes)
  local drivable = opts.drivable ~= false
  local problems, nerr, nwarn, bytes
  if type(box) == "table" then
    problems, nerr, nwarn = { box }, 1, 0
  else
    problems, nerr, nwarn, bytes = core_check(store, drivable, want_bytes, store.validate, box)
  end
  local good, list, counts = verdict(problems, nerr, nwarn, opts)
  local checked = bytes and { bytes = bytes, problems = problems, errors = nerr, warnings = nwarn,
                              drivable = drivable } or nil
  return good, list, counts, checked
end

--- Check a document against the format's rules (psdl-format.md §3).
--
-- Each problem is a table `{severity = "error"|"warning", rule = "vertex_index", path =
-- "rooms[3].attributes[2].vertices[1]", message = "...", room = 3, attribute = 2, road = nil}`
-- (`room`, `attribute`, `road` only when they apply; `attribute` and `road` 1-based).
-- A document that cannot be encoded at all gives a single error with rule `"encodable"`
-- whose message is the one `encode` would raise.
-- @tparam table doc document
-- Besides the format's rules (§3) it runs the drivability rules of docs/validate.md (holes,
-- overlaps, floor outside its room, reachability, perimeter shape, numbers); each problem
-- then also has `rooms` ({room[, other room]}) and its position `x`, `z` in metres.
-- @tparam[opt] table opts `strict` (warnings count as failures too), `name` (city or file
-- name: one containing "london" or "sf" gets a `"city_name"` warning, §3.4), `drivable`
-- (false: the format's rules only, for fragments of a city and the synthetic codec fixtures)
-- @treturn boolean ok: no errors (and no warnings when `opts.strict`)
-- @treturn table problems, errors first as the core reports them
-- @treturn table counts `{errors = n, warnings = m}`
function M.validate(doc, opts)
  if type(doc) ~= "table" then
    error("bad argument #1 to 'validate' (table expected, got " .. type(doc) .. ")", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #2 to 'validate' (table expected, got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  check_options(opts, { strict = true, name = true, drivable = true }, "validate", 2)
  local good, problems, counts = M.check(doc, opts, false)
  return good, problems, counts
end

--- One line about the failures of a check: "<n> problems: <path>: <message>; ..." (the
-- first three; with `strict`, warnings count too). Also used by the companion formats.
-- @tparam table problems
-- @tparam table counts `{errors, warnings}`
-- @tparam[opt] boolean strict
-- @treturn string
local function summary(problems, counts, strict)
  local parts, shown = {}, 0
  for _, p in ipairs(problems) do
    if p.severity == "error" or strict then
      shown = shown + 1
      if shown > 3 then break end
      parts[#parts + 1] = (p.path ~= "" and p.path .. ": " or "") .. p.message
    end
  end
  local n = counts.errors + (strict and counts.warnings or 0)
  local more = n > 3 and string_format(" (and %d more)", n - 3) or ""
  return string_format("%d problem%s: %s%s", n, n == 1 and "" or "s", table_concat(parts, "; "), more)
end

-- The checked bytes when the verdict (opts: force, validate, strict, name) lets them be
-- written under path; else nil, message, "invalid".
local function verdict_bytes(checked, path, opts)
  if not opts.force and opts.validate ~= false then
    local good, problems, counts = verdict(checked.problems, checked.errors, checked.warnings,
      { strict = opts.strict, name = opts.name or path })
    if not good then
      return nil, "psdl: invalid: " .. path .. ": " .. summary(problems, counts, opts.strict), "invalid"
    end
  end
  return checked.bytes
end

M.summary = summary

-- A target path that cannot be written whatever the document: a folder, or a file in a
-- folder that does not exist. Reported before the validation (whose problems would hide
-- it): nil, "psdl: io: ...", "io"; nothing when the path looks writable (core.write_file
-- reports the rest).
local function path_problem(path)
  local ok, lfs = pcall(require, "lfs")
  if not ok then return nil end
  if lfs.attributes(path, "mode") == "directory" then
    return "psdl: io: " .. path .. ": Is a directory (a file name expected)"
  end
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" and lfs.attributes(dir, "mode") == nil then
    return "psdl: io: " .. path .. ": No such file or directory (the folder " .. dir .. " does not exist)"
  end
end

local WRITE_OPTIONS = { force = true, validate = true, strict = true, name = true, drivable = true }

-- Raises (at the caller of write/bytes) for arguments of the wrong type.
local function write_args(doc, path, opts, fname)
  if type(doc) ~= "table" then
    error("bad argument #1 to '" .. fname .. "' (table expected, got " .. type(doc) .. ")", 3)
  end
  if type(path) ~= "string" then
    error("bad argument #2 to '" .. fname .. "' (string expected, got " .. type(path) .. ")", 3)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #3 to '" .. fname .. "' (table expected, got " .. type(opts) .. ")", 3)
  end
end

-- The bytes `write` writes (its arguments checked), or nil, message, code.
local function bytes_of(doc, path, opts)
  local bad = path_problem(path)
  if bad then return nil, bad, "io" end
  if opts.force or opts.validate == false then
    -- called straight from pcall: the raise then carries no position (see core_check)
    local ok, bytes = pcall(core.encode, doc)
    if ok then return bytes end
    return nil, "psdl: invalid: " .. path .. ": " .. summary({ encode_problem(bytes) }, { errors = 1, warnings = 0 }),
      "invalid"
  end
  local good, problems, counts, checked = M.check(doc, { strict = opts.strict, name = opts.name or path,
                                                         drivable = opts.drivable }, true)
  if not checked then -- (not encodable: its one problem says why)
    return nil, "psdl: invalid: " .. path .. ": " .. summary(problems, counts, opts.strict), "invalid"
  end
  return verdict_bytes(checked, path, opts)
end

--- Validate, encode and write a document atomically.
--
-- The bytes go to a temporary file in the target's folder, which is then renamed over the
-- target, so readers see the old file or the new one, never a part. On any failure the
-- temporary file is removed and an existing target is left untouched.
-- @tparam table doc document
-- @tparam string path file name
-- @tparam[opt] table opts `force` or `validate = false` (write even if validation finds
-- errors), `strict` (refuse on warnings too), `name` (city name for the check; default `path`),
-- `drivable` (false: check the format's rules only, see `validate`)
-- @treturn boolean true
-- @return[2] nil
-- @treturn[2] string message: `"psdl: invalid: <path>: N problems: ..."` or `"psdl: io: ..."`
-- @treturn[2] string code: `"invalid"` or `"io"`
-- A document that cannot be encoded at all (a reference past 65,536 vertices, a field out of
-- its range) is `"invalid"` even with `force`: its one problem says where.
-- (A folder, or a missing folder, is reported as `"io"` before the document is validated.)
function M.write(doc, path, opts)
  write_args(doc, path, opts, "write")
  check_options(opts or {}, WRITE_OPTIONS, "write", 3)
  local bytes, err, code = bytes_of(doc, path, opts or {})
  if not bytes then return nil, err, code end
  return core.write_file(path, bytes)
end

--- What `write` would write, without writing: the bytes, or its failure (a command that
-- writes several files makes them all before it writes any: `psdl.cli.outputs`).
-- @tparam table doc document
-- @tparam string path the file the bytes are for (messages, the default city name, the
--   folder check)
-- @tparam[opt] table opts as for `write`
-- @treturn string bytes
-- @return[2] nil, message, code as `write`
function M.bytes(doc, path, opts)
  write_args(doc, path, opts, "bytes")
  check_options(opts or {}, WRITE_OPTIONS, "bytes", 3)
  return bytes_of(doc, path, opts or {})
end

--- Write a document checked before (`Builder:finish`'s `report.checked`, passed on by
-- `City:build`) without converting or validating it again: the verdict is made from the
-- problems found then, with this call's `strict` and `name`.
-- @tparam table checked `{bytes, problems, errors, warnings, drivable}` (`check`)
-- @tparam string path
-- @tparam[opt] table opts as for `write`; `drivable` must be what the check used
-- @return as `write`
-- @raise when `checked` is no checked document or was checked with other `drivable`
function M.write_checked(checked, path, opts)
  if type(checked) ~= "table" or type(checked.bytes) ~= "string" or type(checked.problems) ~= "table" then
    error("bad argument #1 to 'write_checked' (a checked document {bytes, problems, ...} expected)", 2)
  end
  if type(path) ~= "string" then
    error("bad argument #2 to 'write_checked' (string expected, got " .. type(path) .. ")", 2)
  end
  opts = opts or {}
  check_options(opts, WRITE_OPTIONS, "write_checked", 3)
  if (opts.drivable ~= false) ~= checked.drivable then
    error("bad argument #3 to 'write_checked' (drivable: the document was checked with drivable = "
      .. tostring(checked.drivable) .. ")", 2)
  end
  local bad = path_problem(path)
  if bad then return nil, bad, "io" end
  local bytes, err, code = verdict_bytes(checked, path, opts)
  if not bytes then return nil, err, code end
  return core.write_file(path, bytes)
end

--- What `write_checked` would write, without writing (as `bytes` for `write`).
-- @tparam table checked as for `write_checked`
-- @tparam string path
-- @tparam[opt] table opts as for `write_checked`
-- @treturn string bytes
-- @return[2] nil, message, code
function M.checked_bytes(checked, path, opts)
  opts = opts or {}
  local bad = path_problem(path)
  if bad then return nil, bad, "io" end
  return verdict_bytes(checked, path, opts)
end

return M
