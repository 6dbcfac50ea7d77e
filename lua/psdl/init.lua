--- psdlkit: read, write and check Midtown Madness 2 PSDL city files.
--
-- `require "psdl"` gives the codec of the C module `psdl.core` plus file helpers.
-- Documents are plain Lua tables (docs/document-model.md).
--
-- Errors follow Lua's two channels (docs style §4.6):
--
-- * misuse raises: a wrong argument, or a document `encode` cannot represent, raises
--   `bad argument #1 to 'encode' (rooms[3].attributes[2].vertices[1]: ...)`;
-- * bad data and the environment return `fail`: `nil, message, code`, where `code` is a
--   stable name (`"truncated"`, `"bad_magic"`, ..., `"io"`, `"invalid"`) and `message`
--   reads `"psdl: <code>: <detail>"`.
--
-- @module psdl
-- @usage
-- local psdl = require "psdl"
-- local doc = assert(psdl.read("city.psdl"))
-- doc.rooms[1].flags = 0x04
-- assert(psdl.write(doc, "out.psdl"))

local core = require "psdl.core"

local function io_open(path, mode) return io.open(path, mode) end -- looked up per call: psdl.sandbox guards io.open
local type, tostring, pcall, error, ipairs, pairs, require, getmetatable, setmetatable =
  type, tostring, pcall, error, ipairs, pairs, require, getmetatable, setmetatable
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

--- Version of the library (the C core's `PSDL_VERSION`).
M._VERSION = core._VERSION
--- Module name.
M._NAME = "psdl"

--- Stable status names: `status[code + 1]` for a C status code (`"ok"`, `"truncated"`, ...).
M.status = core.status_names

--- The valid attribute `type` strings of the document model.
M.attribute_types = core.attribute_types

--- Decode PSDL bytes into a document.
-- @function decode
-- @tparam string bytes the file's contents
-- @tparam[opt] table limits `max_vertices`, `max_rooms`, `max_attr_words`
-- @treturn table document
-- @return[2] nil
-- @treturn[2] string message, e.g. `"psdl: truncated: need 4 bytes for ... at offset 0x1f30"`
-- @treturn[2] string code, e.g. `"truncated"`
function M.decode(bytes, limits)
  local doc, msg, code = core.decode(bytes, limits)
  if doc then return M.document(doc) end
  return doc, msg, code
end

--- Encode a document into PSDL bytes (no validation beyond what the format can hold).
-- @function encode
-- @tparam table doc document
-- @treturn string bytes
-- @raise `bad argument #1 to 'encode' (<path>: <problem>)` for a value the format cannot hold
M.encode = core.encode

--- Read and decode a PSDL file.
-- @tparam string path file name
-- @tparam[opt] table limits as for `decode`
-- @treturn table document
-- @return[2] nil
-- @treturn[2] string message: `"psdl: io: <path>: <strerror>"` or a decode message
-- @treturn[2] string code: `"io"` or a decode status name
function M.read(path, limits)
  if type(path) ~= "string" then
    error("bad argument #1 to 'read' (string expected, got " .. type(path) .. ")", 2)
  end
  local f, err = io_open(path, "rb")
  if not f then return nil, "psdl: io: " .. err, "io" end
  local bytes, rerr = f:read("a")
  f:close()
  if not bytes then return nil, "psdl: io: " .. path .. ": " .. tostring(rerr), "io" end
  return M.decode(bytes, limits)
end

-- Last path component without a ".psdl" extension ("cities/london.psdl" -> "london").
local function base_name(name)
  local base = name:match("([^/\\]*)$") or name
  return (base:gsub("%.[Pp][Ss][Dd][Ll]$", ""))
end

-- validate's work: the problems, the counts and, when want_bytes, the encoded bytes of the
-- document just checked (so write converts the document once).
local function check(doc, opts, want_bytes)
  local ok, problems, nerr, nwarn, bytes = pcall(function()
    return core.validate(doc, want_bytes, opts.drivable == false)
  end)
  if not ok then
    -- the raise message without the position luaL_error prefixes (a line of this file)
    local msg = tostring(problems):gsub("^[^\n]-:%d+: ", "", 1)
    -- "bad argument #1 to 'validate' (rooms[1].flags: 300 is out of range)" -> path, detail
    local inner = msg:match("^bad argument #%d+ to '[^']*' %((.*)%)$") or msg
    local path, detail = inner:match("^([%w_%.%[%]]+): (.*)$")
    problems = { {
      severity = "error", rule = "encodable", message = detail or inner, path = path or "",
    } }
    nerr, nwarn = 1, 0
  end
  local name = opts.name
  if type(name) == "string" then
    local base = base_name(name):lower()
    if base:find("london", 1, true) or base:find("sf", 1, true) then
      problems[#problems + 1] = {
        severity = "warning", rule = "city_name", path = "",
        message = string_format("city name %q contains %q: the game special-cases such cities "
          .. "(hand-placed warps or room flags, psdl-format.md §3.4); rename the city",
          base, base:find("london", 1, true) and "london" or "sf"),
      }
      nwarn = nwarn + 1
    end
  end
  local good = nerr == 0 and not (opts.strict and nwarn > 0)
  return good, problems, { errors = nerr, warnings = nwarn }, bytes
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
  return check(doc, opts, false)
end

-- "<n> errors: <path>: <message>; ..." for the first few failures.
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

--- Replace a file with bytes, atomically: a temporary file in the same folder is written,
-- synced, given the old file's permissions and renamed over the target, so a failure leaves
-- an existing file untouched and no temporary file behind. A symbolic link is followed; a
-- device or pipe (`/dev/stdout`) is written directly.
-- @function write_file
-- @tparam string path file name
-- @tparam string bytes contents
-- @treturn boolean true
-- @return[2] nil
-- @treturn[2] string message `"psdl: io: <path>: <reason>"`
-- @treturn[2] string code `"io"`
M.write_file = core.write_file

--- The canonical absolute name of an existing file or folder: symbolic links, `.` and `..`
-- resolved (POSIX `realpath`). Two names of one file give the same string.
-- @function real_path
-- @tparam string path
-- @treturn string absolute name
-- @return[2] nil
-- @treturn[2] string message `"psdl: io: <path>: <reason>"`
-- @treturn[2] string code `"io"`
M.real_path = core.real_path

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
-- @raise as `encode` when validation is skipped and the document cannot be encoded
function M.write(doc, path, opts)
  if type(doc) ~= "table" then
    error("bad argument #1 to 'write' (table expected, got " .. type(doc) .. ")", 2)
  end
  if type(path) ~= "string" then
    error("bad argument #2 to 'write' (string expected, got " .. type(path) .. ")", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #3 to 'write' (table expected, got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  check_options(opts, { force = true, validate = true, strict = true, name = true, drivable = true }, "write", 3)
  local bytes
  if not opts.force and opts.validate ~= false then
    local ok, problems, counts
    ok, problems, counts, bytes = check(doc, { strict = opts.strict, name = opts.name or path, drivable = opts.drivable }, true)
    if not ok then
      return nil, "psdl: invalid: " .. path .. ": " .. summary(problems, counts, opts.strict), "invalid"
    end
  end
  return core.write_file(path, bytes or core.encode(doc))
end

------------------------------------------------------------------------ texture editing, diff, export

--- Texture editing on documents: `psdl.retexture.rename(doc, old, new)`, `remap`,
-- `move_group`, `swap_groups`, `compact`, `apply` (lua/psdl/retexture.lua).
M.retexture = require "psdl.retexture"

--- Terrain: The Sims 2 neighbourhood terrain (NHTG) in packages, heightmaps, height
-- sampling (lua/psdl/terrain.lua).
M.terrain = require "psdl.terrain"

--- Geometry kernels over point lists: centre lines, cross-sections, fans, facades,
-- intersections, pools, measures (lua/psdl/geom.lua).
M.geom = require "psdl.geom"

--- Build documents from shapes: `psdl.builder.new{style = "london"}`, then rooms, streets,
-- intersections, blocks, buildings and `finish()` (lua/psdl/builder/).
M.builder = require "psdl.builder"

--- City generation from a road network: `psdl.city.new{style = "london", seed = 1}`, then
-- `node`, `road`, `blocks` and `build()` / `save(path)`; `psdl.city.from_network(net)` takes
-- the network table of docs/network.md (lua/psdl/city/init.lua).
M.city = require "psdl.city"

--- Companion files (docs/companion.md): `psdl.bai`, `psdl.cpvs`, `psdl.inst`,
-- `psdl.pathset`, `psdl.pkg`, `psdl.tex`, each with `read`, `decode`, `encode`, `write` and
-- `validate`; `psdl.companion.detect(bytes)` names a file's format from its magic.
M.companion = require "psdl.companion"
M.bai = require "psdl.bai"
M.cpvs = require "psdl.cpvs"
M.inst = require "psdl.inst"
M.pathset = require "psdl.pathset"
M.pkg = require "psdl.pkg"
M.tex = require "psdl.tex"
--- The game's street-prop CSV pair (`propdefs.csv`, `proprules.csv`): `parse`, `validate`.
M.propcsv = require "psdl.propcsv"

--- Structural diff of two documents (lua/psdl/diff.lua).
-- @tparam table a
-- @tparam table b
-- @tparam[opt] table opts see `psdl.diff.diff`
-- @treturn table `{equal =, differences =, counts =}`
function M.diff(a, b, opts) return require("psdl.diff").diff(a, b, opts) end

--- Export a document as triangles: OBJ (+ .mtl), glTF 2.0 (.gltf) or GLB
-- (lua/psdl/export.lua).
-- @tparam table doc
-- @tparam string path output file; its extension picks the format unless `opts.format`
-- @tparam[opt] table opts see `psdl.export.export`
-- @treturn table statistics
-- @return[2] nil, message, code
function M.export(doc, path, opts) return require("psdl.export").export(doc, path, opts) end

--- Draw a top-down map of a document: PNG or SVG (lua/psdl/render.lua).
-- @tparam table doc
-- @tparam[opt] table opts `output` (file to write atomically; `.png` or `.svg`), `format`,
--   `size`, `rooms`, `problems`, `legend`, `perimeters`, `title`, ... (see
--   `psdl.render.render`)
-- @treturn table result `{format =, bytes =, width =, height =, scale =, pixel =, ...}`
-- @return[2] nil, message, code
function M.render(doc, opts) return require("psdl.render").render(doc, opts) end

--- OpenStreetMap import (lua/psdl/osm.lua): `psdl.osm.import(path, opts)` reads an OSM
-- XML extract and returns the cleaned road network of docs/network.md and a report.
-- Loaded on first use (it needs lua-expat).
M.osm = setmetatable({}, { __index = function(_, k) return require("psdl.osm")[k] end })

--- Methods of documents returned by `read` and `decode` (`doc:rename_texture(...)`,
-- `doc:remap_texture(...)`, `doc:move_texture_group(...)`, `doc:swap_texture_groups(...)`,
-- `doc:compact_textures()`, `doc:retexture(ops)`, `doc:texture_references()`,
-- `doc:diff(other)`, `doc:export(path, opts)`, `doc:render(opts)`).
M.document_methods = {}
for name, fn in pairs(M.retexture.methods) do M.document_methods[name] = fn end
M.document_methods.diff = M.diff
M.document_methods.export = M.export
M.document_methods.render = M.render

local Document = { __index = M.document_methods }

--- Give a document (for example one built by hand) the document methods.
-- @tparam table doc
-- @treturn table doc
function M.document(doc)
  if getmetatable(doc) == nil then setmetatable(doc, Document) end
  return doc
end

return M
