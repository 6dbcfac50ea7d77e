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
local document = require "psdl.document"

local function io_open(path, mode) return io.open(path, mode) end -- looked up per call: psdl.sandbox guards io.open
local type, tostring, error, pairs, require, getmetatable, setmetatable =
  type, tostring, error, pairs, require, getmetatable, setmetatable

local M = {}

local core_encode = core.encode

--- Version of the library (the C core's `PSDL_VERSION`).
M._VERSION = core._VERSION
--- Module name.
M._NAME = "psdl"

--- Stable status names: `status[code + 1]` for a C status code (`"ok"`, `"truncated"`, ...).
M.status = core.status_names

--- The valid attribute `type` strings of the document model.
M.attribute_types = core.attribute_types
--- The format's limits as integers (from psdl.h; docs/lua-api.md lists them): `vertex_budget`
-- (65,024 vertices, §3.2), `perimeter` (255 points a room, §3.2), `texture_value` (2,047,
-- §2.3), `texture_rendered` (511) and `texture_stock` (767, §3.2), `divider_texture` (255,
-- §2.4 0x8), `lane_values` (255 a side, §1.7), `prop_rule` (255, §1.6).
M.limits = core.limits

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
function M.encode(doc)
  local ok, bytes = pcall(core_encode, doc)
  if ok then return bytes end
  -- (called through pcall, Lua names the C function by its module path: 'psdl.core.encode')
  if type(bytes) == "string" then
    error((bytes:gsub("^bad argument #(%d+) to 'psdl%.core%.encode'", "bad argument #%1 to 'encode'")), 2)
  end
  error(bytes, 0)
end

--- Read and decode a PSDL file.
-- @tparam string path file name
-- @tparam[opt] table limits as for `decode`
-- @treturn table document
-- @return[2] nil
-- @treturn[2] string message: `"psdl: io: <path>: <strerror>"` or a decode message
-- @treturn[2] string code: `"io"`, `"nomem"` or a decode status name
function M.read(path, limits)
  if type(path) ~= "string" then
    error("bad argument #1 to 'read' (string expected, got " .. type(path) .. ")", 2)
  end
  if limits ~= nil and type(limits) ~= "table" then
    error("bad argument #2 to 'read' (table expected, got " .. type(limits) .. ")", 2)
  end
  local f, err = io_open(path, "rb")
  if not f then return nil, "psdl: io: " .. err, "io" end
  -- read and decoded in C: no Lua string of the whole file (src/lpsdl.c, decode_file)
  local doc, msg, code = core.decode_file(f, path, limits)
  f:close()
  if doc then return M.document(doc) end
  return doc, msg, code
end

--- Check a document against the format's rules (psdl-format.md §3) and the drivability
-- rules of docs/validate.md: `psdl.document.validate` (lua/psdl/document.lua).
-- @function validate
M.validate = document.validate

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
-- (its arguments checked here: an error from the C function itself would be named after
-- whichever loaded table Lua finds it in first, e.g. 'psdl.core.write_file')
function M.write_file(path, bytes)
  if type(path) ~= "string" then
    error("bad argument #1 to 'write_file' (string expected, got " .. type(path) .. ")", 2)
  end
  if type(bytes) ~= "string" then
    error("bad argument #2 to 'write_file' (string expected, got " .. type(bytes) .. ")", 2)
  end
  return core.write_file(path, bytes)
end

--- The canonical absolute name of an existing file or folder: symbolic links, `.` and `..`
-- resolved (POSIX `realpath`). Two names of one file give the same string.
-- @function real_path
-- @tparam string path
-- @treturn string absolute name
-- @return[2] nil
-- @treturn[2] string message `"psdl: io: <path>: <reason>"`
-- @treturn[2] string code `"io"`
M.real_path = core.real_path

--- Validate, encode and write a document atomically, on one conversion of the document:
-- `psdl.document.write` (lua/psdl/document.lua).
-- @function write
M.write = document.write

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
-- (lua/psdl/export/).
-- @tparam table doc
-- @tparam string path output file; its extension picks the format unless `opts.format`
-- @tparam[opt] table opts see `psdl.export.export`
-- @treturn table statistics
-- @return[2] nil, message, code
function M.export(doc, path, opts) return require("psdl.export").export(doc, path, opts) end

--- Draw a top-down map of a document: PNG or SVG (lua/psdl/render/).
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
