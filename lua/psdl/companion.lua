--- The shared plumbing of the companion-file codecs (`psdl.bai`, `psdl.cpvs`, `psdl.inst`,
-- `psdl.pathset`, `psdl.pkg`, `psdl.tex`): read, decode, encode, write and validate with the
-- conventions of `psdl.read` / `psdl.write` (docs/companion.md).
--
-- The byte work is in C (`psdl.core.<format>_decode/_encode`, src/lpsdl_companion.c); this
-- file adds file input, atomic output and the problem-list helpers the validators use.
-- @module psdl.companion

local core = require "psdl.core"

local type, error, tostring, pairs, ipairs = type, error, tostring, pairs, ipairs
local string_format, table_concat = string.format, table.concat
local function io_open(path, mode) return io.open(path, mode) end -- looked up per call: psdl.sandbox guards io.open

local M = {}

--- The format a buffer's magic names: `"bai"`, `"cpvs"`, `"pathset"`, `"pkg"`, `"psdl"`,
-- or nil (`.inst` and `.tex` have no magic).
-- @tparam string bytes
-- @treturn ?string
M.detect = core.companion_detect

--- The format a file name's extension names (`"bai"`, `"cpvs"`, `"inst"`, `"pathset"`,
-- `"pkg"`, `"tex"`, `"psdl"`), or nil.
-- @tparam string name
-- @treturn ?string
function M.format_of_name(name)
  local ext = tostring(name):lower():match("%.([%w_]+)$")
  local known = { bai = "bai", cpvs = "cpvs", inst = "inst", pathset = "pathset", pkg = "pkg",
    tex = "tex", psdl = "psdl" }
  return ext and known[ext] or nil
end

--- A problem list with the shape `psdl.validate` uses.
-- @treturn table list with methods `error(rule, path, record, fmt, ...)`,
--   `warning(...)` and `result(strict)` returning `ok, problems, counts`
function M.problems()
  local list, nerr, nwarn = {}, 0, 0
  local P = {}
  local function add(sev, rule, path, record, fmt, ...)
    local msg = select("#", ...) > 0 and string_format(fmt, ...) or fmt
    list[#list + 1] = { severity = sev, rule = rule, path = path or "", record = record, message = msg }
    if sev == "error" then nerr = nerr + 1 else nwarn = nwarn + 1 end
  end
  function P.error(...) add("error", ...) end
  function P.warning(...) add("warning", ...) end
  function P.result(strict)
    -- errors first, each group in the order found
    local sorted = {}
    for _, p in ipairs(list) do if p.severity == "error" then sorted[#sorted + 1] = p end end
    for _, p in ipairs(list) do if p.severity ~= "error" then sorted[#sorted + 1] = p end end
    local ok = nerr == 0 and not (strict and nwarn > 0)
    return ok, sorted, { errors = nerr, warnings = nwarn }
  end
  return P
end

-- "<n> problems: <path>: <message>; ..." for the first few failures (as `psdl.write` says it).
local summary = require("psdl.document").summary

--- Build the module of one format.
-- @tparam string name `"bai"`, `"cpvs"`, ...
-- @tparam function validate `validate(t, psdl_doc, opts)` returning `ok, problems, counts`
-- @treturn table `{decode, encode, read, write, validate, name}`
function M.codec(name, validate)
  local decode, encode = core[name .. "_decode"], core[name .. "_encode"]
  local C = { name = name }

  --- Decode bytes into the table of docs/companion.md.
  -- @treturn table, or nil, message, code
  function C.decode(bytes)
    if type(bytes) ~= "string" then
      error("bad argument #1 to 'decode' (string expected, got " .. type(bytes) .. ")", 2)
    end
    return decode(bytes)
  end

  --- Encode a table into bytes; raises for a value the format cannot hold.
  C.encode = encode

  --- Read and decode a file.
  -- @treturn table, or nil, message, code (`"io"` when the file cannot be read)
  function C.read(path)
    if type(path) ~= "string" then
      error("bad argument #1 to 'read' (string expected, got " .. type(path) .. ")", 2)
    end
    local f, err = io_open(path, "rb")
    if not f then return nil, name .. ": io: " .. err, "io" end
    local bytes, rerr = f:read("a")
    f:close()
    if not bytes then return nil, name .. ": io: " .. path .. ": " .. tostring(rerr), "io" end
    local t, msg, code = decode(bytes)
    if not t then return nil, msg .. " in " .. path, code end
    return t
  end

  --- Check the format's invariants (docs/companion-formats.md).
  -- @tparam table t
  -- @tparam[opt] table psdl_doc the city's PSDL document, for the checks that need it
  -- @tparam[opt] table opts `strict` (warnings fail too); per format: `hudmap` (pkg)
  -- @treturn boolean ok, table problems, table counts
  function C.validate(t, psdl_doc, opts)
    if type(t) ~= "table" then
      error("bad argument #1 to 'validate' (table expected, got " .. type(t) .. ")", 2)
    end
    if psdl_doc ~= nil and type(psdl_doc) ~= "table" then
      error("bad argument #2 to 'validate' (table expected, got " .. type(psdl_doc) .. ")", 2)
    end
    return validate(t, psdl_doc, opts or {})
  end

  --- Validate, encode and write atomically.
  -- @tparam table t
  -- @tparam string path
  -- @tparam[opt] table opts `force` (write despite errors), `strict`, `psdl` (the city's
  --   PSDL document for the cross-checks), `hudmap` (pkg: the minimap checks)
  -- @treturn true, or nil, message, code (`"invalid"` or `"io"`)
  function C.write(t, path, opts)
    if type(t) ~= "table" then
      error("bad argument #1 to 'write' (table expected, got " .. type(t) .. ")", 2)
    end
    if type(path) ~= "string" then
      error("bad argument #2 to 'write' (string expected, got " .. type(path) .. ")", 2)
    end
    opts = opts or {}
    for k in pairs(opts) do
      if k ~= "force" and k ~= "strict" and k ~= "psdl" and k ~= "hudmap" then
        error(string_format("bad argument #3 to 'write' (unknown option '%s')", tostring(k)), 2)
      end
    end
    local bytes = encode(t)
    if not opts.force then
      local ok, problems, counts = validate(t, opts.psdl, { strict = opts.strict, hudmap = opts.hudmap })
      if not ok then
        return nil, name .. ": invalid: " .. path .. ": " .. summary(problems, counts, opts.strict), "invalid"
      end
    end
    local ok, msg, code = core.write_file(path, bytes)
    if not ok then return nil, msg, code end
    return true
  end

  return C
end

------------------------------------------------------------------------ small geometry helpers

--- Length of {x, y, z}.
function M.norm(v) return math.sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) end

--- Distance between two points.
function M.dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

--- The PSDL room-count field R of a document (room 0 included).
function M.room_count(doc) return #doc.rooms + 1 end

return M
