--- OpenStreetMap import: read an OSM XML extract and turn it into the road network table
-- of docs/network.md (nodes, roads, buildings, bounds), cleaned up so that city
-- generation can build rooms from it without overlaps.
--
--     local osm = require "psdl.osm"
--     local net, report = assert(osm.import("leeds.osm", { bbox = { -1.53, 53.81, -1.52, 53.82 } }))
--     for reason, n in pairs(report.skipped) do print(n, reason) end
--
-- What happens, in order (`psdl.osm.network`, `psdl.osm.clean`):
--
-- 1. **Reading** (`psdl.osm.reader`): lua-expat streams the XML; nodes, ways, tags,
--    relations and `<bounds>` are kept. Malformed XML and non-OSM files fail with the
--    line and column.
-- 2. **Selection**: `highway=*` ways become roads (`psdl.osm.tags` maps classes to
--    profiles and reads `lanes`, `width`, `oneway`, `sidewalk`, `bridge`, `tunnel`,
--    `layer`); `building=*` closed ways and multipolygons become buildings; everything
--    else is counted in `report.skipped` by reason. Ways are cut where they reference
--    nodes missing from the extract.
-- 3. **Clipping** to `bbox` (or, by default, to the extract's `<bounds>`): roads are cut
--    at the edge (a node where they leave), buildings kept when their centre is inside.
-- 4. **Projection** (`psdl.osm.projection`): transverse Mercator around the centre of
--    the area, x east, z north, metres.
-- 5. **Graph**: ways are split at every node two of them share (and where one crosses
--    itself); ends are nodes; other points become `via`.
-- 6. **Clean-up** (`psdl.osm.clean`): close nodes merged, dead ends snapped onto roads
--    they almost touch, unnoded at-grade crossings joined, roundabouts kept as rings or
--    collapsed into one node, dual carriageways merged into one divided road, slivers and
--    acute junctions resolved, junctions too close for their roads merged, short dead ends and loops
--    too small for their width removed, each bridge or tunnel made one road long enough for
--    its ramps at grade (or its crossing made at grade), remaining overlaps dropped with a
--    reason, shape points simplified. Every change is counted in `report.changes`; every
--    road dropped is listed in `report.dropped` with the reason. `psdl.osm.fit` holds the
--    model (road widths as `psdl.city` builds them, junction reach, ramps) and
--    `psdl.osm.check` the checks the result passes.
--
-- Errors: `read`/`parse`/`import` return `nil, message, code` for files that cannot be
-- read (`"io"`) or are not OSM XML (`"xml"`, `"not_osm"`, `"bad_osm"`); wrong arguments
-- and unknown options raise.
-- @module psdl.osm

local reader = require "psdl.osm.reader"
local network = require "psdl.osm.network"

local type, error, require, pcall, pairs, ipairs, tostring = type, error, require, pcall, pairs, ipairs, tostring

local M = {}

--- Read an OSM XML file (`psdl.osm.reader.read`).
-- @function read
-- @tparam string path
-- @treturn table data
-- @return[2] nil, message, code
M.read = reader.read

--- Parse OSM XML from a string (`psdl.osm.reader.parse`).
-- @function parse
-- @tparam string text
-- @tparam[opt] string name for messages
-- @treturn table data
-- @return[2] nil, message, code
M.parse = reader.parse

--- Default options of `network` and `import`.
--
-- * `bbox = {minlon, minlat, maxlon, maxlat}`: clip to this area (degrees).
-- * `clip = true`: without `bbox`, clip to the file's `<bounds>` when it has one.
-- * `origin = {lat =, lon =}`: the point that becomes x = 0, z = 0 (default: the centre
--   of the clip area, else of the data).
-- * `scale = 1`: multiply every distance (a real town is tighter than the game's 5 m lanes
--   and 5 m sidewalks; 1.5 gives its streets more room).
-- * `walkways = false`: keep footways, paths, steps, cycleways, pedestrian streets as
--   alleys marked `walkway = true` (sidewalks and crossings mapped as footways are never
--   kept: they belong to their street).
-- * `driveways = false`: keep `service=driveway|parking_aisle|drive-through`.
-- * `profiles = { [highway] = profile | false }`: override the profile of a class (false
--   skips it).
-- * `buildings = true`: collect building footprints.
-- * `cleanup = true`: false gives the raw graph (split at shared nodes only).
-- * `merge_distance = 2`: nodes closer than this (metres) become one.
-- * `snap_distance = 3`: a dead end this close to another road is joined to it.
-- * `simplify = 0.5`: tolerance of the shape-point simplification (metres).
-- * `min_angle = 25`: degrees; two roads leaving a junction closer than this are
--   separated (the lesser one re-attached where they part).
-- * `min_road_length = 3`: metres of plain road every road keeps between the space its
--   two junctions need.
-- * `dual_carriageways = true`, `dual_max_separation = 40`, `dual_min_length = 30`:
--   merge two opposite one-way roads of the same class and name whose centre lines run
--   within this distance of each other over at least this length.
-- * `roundabouts = "auto"`: `"keep"` rings, `"collapse"` them into one node, or `"auto"`:
--   keep a ring when its junctions fit on it, grow it to the game's widths when its approach
--   roads leave the room, collapse it otherwise.
-- * `elevated = true`: viaducts running along (or long ones crossing) the roads below become
--   elevated roads (`psdl.osm.elevated`); false: the clean-up's bridge model for all.
-- * `dimensions = { lane = 5, sidewalk = 5, walkway = 3, crosswalk = 3, divider = {...} }`:
--   the cross-section the checks assume (`network.footprint`).
-- * `progress = function(stage) end`: called at the start of each stage.
-- * `max_extent = false`: metres; when set, an area (the `bbox`, else the `<bounds>` it is
--   clipped to, else the extent of the drivable ways kept) larger than this on one side is
--   refused before it is projected (`network` returns nil, message, "bad_input";
--   `psdl.osm.extent`, whose `LIMIT` of 5,000 m `psdl osm` uses). With a `bbox` the report
--   gets `area_note` when the ways cover under a quarter of the box.
M.defaults = network.defaults

--- Build the network of data read by `read` or `parse`.
-- @tparam table data
-- @tparam[opt] table opts see `defaults`
-- @treturn table network (docs/network.md), with `origin`, `projection`, `scale` and
--   `attribution` added
-- @treturn table report `{ input = {nodes, ways, relations, deleted}, skipped = {[reason]
--   = n}, changes = {[what] = n}, dropped = {{source, reason}...}, warnings = {...},
--   counts = {nodes, junctions, dead_ends, roads, by_profile, buildings, length},
--   timings = {...}, area_note = string|nil }`
-- @return[2] nil, message, "bad_input" when the area is over `opts.max_extent`
function M.network(data, opts)
  if type(data) ~= "table" or type(data.nodes) ~= "table" or type(data.ways) ~= "table" then
    error("bad argument #1 to 'network' (OSM data from psdl.osm.read expected)", 2)
  end
  return network.build(data, opts)
end

--- Read an OSM file and build its network.
-- @tparam string path
-- @tparam[opt] table opts see `defaults`
-- @treturn table network
-- @treturn table report (with `timings.read`)
-- @return[2] nil, message, code
function M.import(path, opts)
  local t0 = os.clock()
  local data, msg, code = reader.read(path)
  if not data then return nil, msg, code end
  local t_read = os.clock() - t0
  local net, report, code2 = network.build(data, opts)
  if not net then return nil, report, code2 end
  report.timings.read = t_read
  return net, report
end

--- The width a road is expected to take (carriageway, sidewalks, divider) in the
-- importer's dimension model (`psdl.osm.network.footprint`).
-- @function footprint
M.footprint = network.footprint

--- An SVG picture of a network (`psdl.osm.svg.render`).
-- @tparam table net
-- @tparam[opt] table opts
-- @treturn string
function M.svg(net, opts)
  return require("psdl.osm.svg").render(net, opts)
end

--- Check the guarantees of a cleaned network (`psdl.osm.check.run`): returns a list of
-- problems, empty when every at-grade crossing is a node, no two roads overlap in plan,
-- and every road is long enough for its junctions.
-- @tparam table net
-- @tparam[opt] table opts `dimensions`, `min_angle`, `min_road_length`
-- @treturn table problems `{ {kind =, message =, roads = {i, j}, nodes = {...}} ... }`
function M.check(net, opts)
  return require("psdl.osm.check").run(net, opts)
end

--- Read a network back from the JSON `psdl osm --network-json` writes (format
-- `"psdlkit-network"`): node ids are strings, `via` points `{x, z}` arrays.
-- @tparam string text
-- @treturn table network (with `report` when the file has one)
-- @return[2] nil, message, `"bad_input"`
function M.decode_network(text)
  if type(text) ~= "string" then
    error("bad argument #1 to 'decode_network' (string expected, got " .. type(text) .. ")", 2)
  end
  local cjson = require("cjson").new()
  local ok, doc = pcall(cjson.decode, text)
  if not ok then return nil, "psdl: bad_input: not JSON: " .. tostring(doc), "bad_input" end
  if type(doc) ~= "table" or doc.format ~= "psdlkit-network" then
    return nil, "psdl: bad_input: not a psdlkit network (format \"psdlkit-network\" expected)", "bad_input"
  end
  if type(doc.nodes) ~= "table" or type(doc.roads) ~= "table" then
    return nil, "psdl: bad_input: a network needs nodes and roads", "bad_input"
  end
  local null = cjson.null
  local function clean(t)
    if type(t) ~= "table" then return t end
    for k, v in pairs(t) do
      if v == null then t[k] = nil else clean(v) end
    end
    return t
  end
  clean(doc)
  for i, r in ipairs(doc.roads) do
    if doc.nodes[r.from] == nil or doc.nodes[r.to] == nil then
      return nil, string.format("psdl: bad_input: roads[%d]: unknown node %s", i,
        tostring(doc.nodes[r.from] == nil and r.from or r.to)), "bad_input"
    end
  end
  doc.format, doc.version = nil, nil
  doc.buildings = doc.buildings or {}
  return doc
end

--- The projection module (`psdl.osm.projection`).
M.projection = require "psdl.osm.projection"

--- Tag interpretation (`psdl.osm.tags`).
M.tags = require "psdl.osm.tags"

return M
