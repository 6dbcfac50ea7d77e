--- `psdl.city.from_network`: a city from a road-network table (docs/network.md), the way in
-- of the importers. Every node and road is checked as the table gives it, and a bad one is
-- named by its place in the table (`nodes[7]`, `roads[3] (way 123)`) at the script line that
-- called `from_network`.
-- @module psdl.city.from_network

local check = require "psdl.check"

local type, error, ipairs, pairs, tostring, pcall = type, error, ipairs, pairs, tostring, pcall
local string_format, table_sort = string.format, table.sort
local huge = math.huge

local argerr = check.argerr
-- errors name the caller of `psdl.city.from_network` (psdl.check)
check.own(debug.getinfo(1, "S").source)

local M = {}

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- Keys of a network's node and road tables (docs/network.md): what the city reads, and what
-- an importer adds for its own reports (`source`, the OSM tags it kept), which the city
-- leaves alone. Any other key is a typo the city would silently ignore: refused.
M.NODE_KEYS = { x = true, z = true, y = true, dead_end = true, bridge = true, layer = true, name = true,
                source = true, roundabout = true, turning_circle = true }
M.ROAD_KEYS = { from = true, to = true, via = true, profile = true, lanes = true, width = true, oneway = true,
                sidewalk = true, bridge = true, tunnel = true, layer = true, name = true, source = true,
                -- (psdl.osm.network: kept for its reports, not read by the city)
                ref = true, highway = true, divided = true, median = true, roundabout = true, link = true,
                walkway = true }

-- Raise "place: msg" at the script line that called from_network.
local function fail(place, msg)
  check.raise(place .. ": " .. msg)
end

-- What is wrong with the keys and plain values of a node or road table `t` (`keys`: the
-- allowed ones), or nil: an unknown key, a `layer` that is no whole number, a `name` or
-- `source` that is neither string nor number, a flag that is no boolean.
local function entry_problem(t, keys, flags)
  for k in pairs(t) do
    if not keys[k] then return "unknown option " .. (type(k) == "string" and ("'" .. k .. "'") or check.shown(k)) end
  end
  local layer = t.layer
  if layer ~= nil and not (type(layer) == "number" and layer % 1 == 0 and layer > -huge and layer < huge) then
    return "layer: a whole number expected (OSM's layer: 1 and up on bridges, below 0 in tunnels), got "
      .. check.shown(layer)
  end
  for _, k in ipairs { "name", "source" } do
    local v = t[k]
    if v ~= nil and type(v) ~= "string" and type(v) ~= "number" then
      return k .. ": a string expected, got " .. check.shown(v)
    end
  end
  for _, k in ipairs(flags) do
    local v = t[k]
    if v ~= nil and type(v) ~= "boolean" then return k .. ": true or false expected, got " .. check.shown(v) end
  end
end

-- A message of `City:node` or `City:road` without its "bad argument #n to 'node' (...)" frame.
local function bare(err)
  return (tostring(err):gsub("^bad argument #%d to '%a+' %((.*)%)$", "%1"))
end

-- Keys of a node or road that must be booleans when given.
local NODE_FLAGS, ROAD_FLAGS = { "roundabout", "turning_circle" }, { "oneway" }

-- Sort key for network ids: numbers before strings, each in natural order.
local function id_less(p, q)
  local tp, tq = type(p), type(q)
  if tp ~= tq then return tp == "number" end
  return p < q
end

--- A city from a road-network table (docs/network.md): `nodes` keyed by id
-- (`{x, z, y, dead_end, bridge, layer}`; `dead_end`: "cul_de_sac" or "open" where one road
-- ends; a `bridge` node without `y` is at the deck height of its `layer`), `roads`
-- (`{from, to, via, profile, lanes, width, oneway, sidewalk, bridge,
-- tunnel, layer, name, source}`), `buildings` (kept as `footprints` for the blocks).
-- Nodes are added in id order (numbers, then strings), roads in list order, so the same
-- table gives the same city. `auto_junctions` is on unless `opts` turns it off: an
-- importer's network crosses only at shared nodes (docs/network.md), and what is left (a dead
-- end a step from another road) is resolved rather than refused.
-- @tparam table city_mod the `psdl.city` module
-- @tparam table net
-- @tparam[opt] table opts options of `new`
-- @treturn City
function M.city(city_mod, net, opts)
  if type(net) ~= "table" or type(net.nodes) ~= "table" or type(net.roads) ~= "table" then
    argerr(1, "from_network", "a network table with nodes and roads expected (docs/network.md)")
  end
  if type(opts) == "table" and opts.auto_junctions == nil then
    opts = copy(opts)
    opts.auto_junctions = true
  elseif opts == nil then
    opts = { auto_junctions = true }
  end
  local city = city_mod.new(opts)
  local ids = {}
  for id in pairs(net.nodes) do
    if type(id) ~= "number" and type(id) ~= "string" then argerr(1, "from_network", "node ids must be numbers or strings") end
    ids[#ids + 1] = id
  end
  table_sort(ids, id_less)
  for _, id in ipairs(ids) do
    local n = net.nodes[id]
    if type(n) ~= "table" or type(n.x) ~= "number" or type(n.z) ~= "number" then
      argerr(1, "from_network", "nodes[" .. tostring(id) .. "]: {x =, z =} expected")
    end
    local place = "nodes[" .. tostring(id) .. "]"
    if n.dead_end ~= nil and n.dead_end ~= "cul_de_sac" and n.dead_end ~= "open" then
      argerr(1, "from_network", place .. ".dead_end: \"cul_de_sac\" or \"open\" expected")
    end
    local m = entry_problem(n, M.NODE_KEYS, NODE_FLAGS)
    if m then fail(place, m) end
    -- a node on a bridge deck (`bridge = true`) is at the deck height of its `layer` unless it
    -- says otherwise (psdl.city.tunnel.deck_height: 8 m for layer 1, 7 m more per layer)
    local y = n.y
    if n.bridge and y == nil then y = require("psdl.city.tunnel").deck_height(n.layer) end
    -- (a network's name may be a number; a city's is a string)
    local name = n.name ~= nil and tostring(n.name) or nil
    local ok, node = check.pcall(city.node, city, n.x, n.z, { y = y, id = id, name = name, dead_end = n.dead_end,
                                                              bridge = n.bridge and true or nil, where = place })
    if not ok then fail(place, bare(node)) end
    -- (psdl.city.repair brings such a node down to the ground with its last bridge road)
    if n.bridge and n.y == nil then node.deck_height = true end
  end
  for i, r in ipairs(net.roads) do
    if type(r) ~= "table" then argerr(1, "from_network", "roads[" .. i .. "]: table expected") end
    for _, k in ipairs { "from", "to" } do
      local id = r[k]
      if id == nil then argerr(1, "from_network", string_format("roads[%d]: %s missing (a node id expected)", i, k)) end
      if not city.node_by_id[id] then
        argerr(1, "from_network", string_format("roads[%d]: %s = %s: no such node in nodes", i, k, check.shown(id)))
      end
    end
    local a, b = city.node_by_id[r.from], city.node_by_id[r.to]
    local m = entry_problem(r, M.ROAD_KEYS, ROAD_FLAGS)
    local src = (type(r.source) == "string" or type(r.source) == "number") and r.source
    local place = "roads[" .. i .. "]" .. (src and (" (" .. src .. ")") or "")
    if m then fail(place, m) end
    local o = { profile = r.profile, lanes = r.lanes, width = r.width, oneway = r.oneway,
                name = r.name ~= nil and tostring(r.name) or nil,
                source = r.source, via = r.via, where = place }
    if r.sidewalk ~= nil then o.sidewalk = r.sidewalk end
    if r.bridge then o.bridge = r.bridge end
    -- a bridge above layer 1 (`layer` 2, 3, ...) has a higher deck, unless it sets its height
    if r.bridge and type(r.layer) == "number" and r.layer >= 2 then
      local h = require("psdl.city.tunnel").deck_height(r.layer)
      if r.bridge == true then o.bridge = { height = h }
      elseif type(r.bridge) == "table" and r.bridge.height == nil then
        o.bridge = copy(r.bridge)
        o.bridge.height = h
      end
    end
    if r.tunnel then o.tunnel = r.tunnel end
    -- via points of the network are {x, z} or {x, z, y}, as here
    local ok, err = check.pcall(city.road, city, a, b, o)
    if not ok then
      local msg = bare(err)
      -- (a message naming the road's place already, as "roads[3] (way 7): road 3 crosses itself")
      if msg:sub(1, #place) ~= place then msg = place .. ": " .. msg end
      check.raise(msg)
    end
  end
  city.footprints, city.footprint_notes = require("psdl.city.footprints").check(net.buildings)
  return city
end

return M
