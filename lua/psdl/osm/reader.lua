--- OpenStreetMap XML reader: a streaming parse (Debian `lua-expat`, `require "lxp"`) of
-- an OSM 0.6 extract into plain tables.
--
-- The result (`data`):
--
--     data = {
--       nodes = { [id] = { lat, lon } },          -- degrees; id an integer
--       node_tags = { [id] = { k = v, ... } },    -- only nodes that carry tags
--       ways = { { id = 1, nds = { id, ... }, tags = { k = v }, line = 12 }, ... },
--       relations = { { id = 1, members = { { type = "way", ref = 5, role = "outer" } },
--                       tags = {}, line = 40 }, ... },
--       bounds = { minlat =, minlon =, maxlat =, maxlon = } or nil,
--       counts = { nodes =, ways =, relations =, deleted = },
--       duplicate_ways = { { id =, line =, first_line = }, ... },  -- a way id given again
--       name = "leeds.osm",
--     }
--
-- Ways and relations keep file order. Elements marked deleted (`visible="false"`, or JOSM's
-- `action="delete"`) are left out and counted in `counts.deleted`.
--
-- Errors (returned, never raised): `nil, message, code` with `code` one of
-- `"io"` (cannot read the file), `"xml"` (not well-formed XML: expat's message with the
-- line and column), `"not_osm"` (well-formed, but the root element is not `<osm>`), and
-- `"bad_osm"` (an OSM element without a usable id, a node without valid lat/lon, or a node
-- id given twice with different lat/lon; an exact repeat is the same node and is read once); the
-- message reads `"psdl: <code>: <name>:<line>:<column>: <detail>"`.
-- @module psdl.osm.reader

local lxp = require "lxp"

local function io_open(path, mode) return io.open(path, mode) end -- looked up per call: psdl.sandbox guards io.open
local tonumber, tostring, type, error, pcall = tonumber, tostring, type, error, pcall
local math_tointeger = math.tointeger
local string_format = string.format

local M = {}

--- Bytes read per parser call when streaming a file.
M.CHUNK = 1 << 16

local function integer(s)
  local n = tonumber(s)
  return n and math_tointeger(n)
end

local function degrees(s, limit)
  local n = tonumber(s)
  if not n or n ~= n or n < -limit or n > limit then return nil end
  return n
end

-- A parser for one input: `feed(chunk)`, then `finish()`; both return true or
-- nil, message, code.
local function new_parser(name)
  local data = {
    nodes = {}, node_tags = {}, ways = {}, relations = {},
    counts = { nodes = 0, ways = 0, relations = 0, deleted = 0 }, name = name, duplicate_ways = {},
  }
  local way_line = {} -- way id -> line of its first <way>, to name a repeated id
  local nodes, node_tags, ways, relations, counts = data.nodes, data.node_tags, data.ways,
    data.relations, data.counts
  local depth = 0
  local current -- the element that collects <tag>, <nd>, <member> children
  local current_kind
  local err -- first error met inside a callback: { message, code, line, col }
  local parser

  local function fail(code, detail)
    if not err then
      local line, col = parser:pos()
      err = { code = code, detail = detail, line = line, col = col }
    end
    parser:stop()
  end

  local function deleted(attrs)
    return attrs.visible == "false" or attrs.action == "delete"
  end

  local callbacks = {
    StartElement = function(p, el, attrs)
      depth = depth + 1
      if depth == 1 then
        if el ~= "osm" then
          return fail("not_osm", string_format("the root element is <%s>, not <osm>", el))
        end
        data.version, data.generator = attrs.version, attrs.generator
        return
      end
      if el == "node" then
        local id = integer(attrs.id)
        if not id then return fail("bad_osm", "<node> without a valid id") end
        current, current_kind = nil, "node"
        if deleted(attrs) then counts.deleted = counts.deleted + 1 return end
        local lat, lon = degrees(attrs.lat, 90), degrees(attrs.lon, 180)
        if not lat or not lon then
          return fail("bad_osm", string_format("node %d: lat/lon missing or out of range (lat=%s, lon=%s)",
            id, tostring(attrs.lat), tostring(attrs.lon)))
        end
        local seen = nodes[id]
        if seen then
          -- an exact repeat (extracts glued together) is the same node; a node id that
          -- names two places cannot be resolved without guessing which one the ways meant
          if seen[1] ~= lat or seen[2] ~= lon then
            return fail("bad_osm", string_format("node %d appears twice with different lat/lon (first lat=%s, lon=%s; "
              .. "here lat=%s, lon=%s)", id, tostring(seen[1]), tostring(seen[2]), tostring(attrs.lat), tostring(attrs.lon)))
          end
        else
          nodes[id] = { lat, lon }
          counts.nodes = counts.nodes + 1
        end
        current = { id = id, tags = nil }
      elseif el == "way" then
        local id = integer(attrs.id)
        if not id then return fail("bad_osm", "<way> without a valid id") end
        current, current_kind = nil, "way"
        if deleted(attrs) then counts.deleted = counts.deleted + 1 return end
        current = { id = id, nds = {}, tags = {}, line = (p:pos()) }
        if way_line[id] then -- both are read; the caller warns (psdl osm names file:line)
          data.duplicate_ways[#data.duplicate_ways + 1] = { id = id, line = current.line, first_line = way_line[id] }
        else
          way_line[id] = current.line
        end
        ways[#ways + 1] = current
        counts.ways = counts.ways + 1
      elseif el == "relation" then
        local id = integer(attrs.id)
        if not id then return fail("bad_osm", "<relation> without a valid id") end
        current, current_kind = nil, "relation"
        if deleted(attrs) then counts.deleted = counts.deleted + 1 return end
        current = { id = id, members = {}, tags = {}, line = (p:pos()) }
        relations[#relations + 1] = current
        counts.relations = counts.relations + 1
      elseif el == "tag" then
        if current then
          local k, v = attrs.k, attrs.v
          if k == nil or v == nil then return fail("bad_osm", "<tag> without k or v") end
          if current_kind == "node" then
            local t = current.tags
            if not t then t = {} current.tags = t node_tags[current.id] = t end
            t[k] = v
          else
            current.tags[k] = v
          end
        end
      elseif el == "nd" then
        if current and current_kind == "way" then
          local ref = integer(attrs.ref)
          if not ref then return fail("bad_osm", string_format("way %d: <nd> without a valid ref", current.id)) end
          local nds = current.nds
          nds[#nds + 1] = ref
        end
      elseif el == "member" then
        if current and current_kind == "relation" then
          local ref = integer(attrs.ref)
          if not ref then
            return fail("bad_osm", string_format("relation %d: <member> without a valid ref", current.id))
          end
          local m = current.members
          m[#m + 1] = { type = attrs.type, ref = ref, role = attrs.role or "" }
        end
      elseif el == "bounds" and depth == 2 then
        local b = {
          minlat = degrees(attrs.minlat, 90), minlon = degrees(attrs.minlon, 180),
          maxlat = degrees(attrs.maxlat, 90), maxlon = degrees(attrs.maxlon, 180),
        }
        if b.minlat and b.minlon and b.maxlat and b.maxlon and b.minlat < b.maxlat and b.minlon < b.maxlon then
          data.bounds = b
        end
      end
    end,
    EndElement = function(_, el)
      depth = depth - 1
      if el == "node" or el == "way" or el == "relation" then current, current_kind = nil, nil end
    end,
  }
  parser = lxp.new(callbacks)

  local function result(ok, msg, line, col)
    if ok then return true end
    pcall(parser.close, parser)
    if err then
      return nil, string_format("psdl: %s: %s:%d:%d: %s", err.code, name, err.line, err.col, err.detail), err.code
    end
    return nil, string_format("psdl: xml: %s:%d:%d: %s", name, line or 0, col or 0, tostring(msg)), "xml"
  end

  local P = {}
  function P.feed(chunk)
    return result(parser:parse(chunk))
  end
  function P.finish()
    local ok, msg, line, col = parser:parse()
    if not ok then return result(ok, msg, line, col) end
    pcall(parser.close, parser)
    return data
  end
  return P
end

--- Parse OSM XML held in a string.
-- @tparam string text the XML
-- @tparam[opt="input"] string name used in error messages
-- @treturn table data (see the module description)
-- @return[2] nil
-- @treturn[2] string message
-- @treturn[2] string code
function M.parse(text, name)
  if type(text) ~= "string" then
    error("bad argument #1 to 'parse' (string expected, got " .. type(text) .. ")", 2)
  end
  local P = new_parser(name or "input")
  local ok, msg, code = P.feed(text)
  if not ok then return nil, msg, code end
  return P.finish()
end

--- Read an OSM XML file, streaming it through the parser in chunks.
-- @tparam string path
-- @treturn table data
-- @return[2] nil
-- @treturn[2] string message
-- @treturn[2] string code (`"io"`, `"xml"`, `"not_osm"`, `"bad_osm"`)
function M.read(path)
  if type(path) ~= "string" then
    error("bad argument #1 to 'read' (string expected, got " .. type(path) .. ")", 2)
  end
  local f, oerr = io_open(path, "rb")
  if not f then return nil, "psdl: io: " .. tostring(oerr), "io" end
  local P = new_parser(path)
  while true do
    local chunk, rerr = f:read(M.CHUNK)
    if chunk == nil then
      if rerr then
        f:close()
        return nil, "psdl: io: " .. path .. ": " .. tostring(rerr), "io"
      end
      break
    end
    local ok, msg, code = P.feed(chunk)
    if not ok then
      f:close()
      return nil, msg, code
    end
  end
  f:close()
  return P.finish()
end

return M
