--- `psdl.city.from_network`: a city from a road-network table (docs/network.md), the way in
-- of the importers. Every node and road is checked as the table gives it, and a bad one is
-- named by its place in the table (`nodes[7]`, `roads[3] (way 123)`) at the script line that
-- called `from_network`.
-- @module psdl.city.from_network

local check = require "psdl.check"

local type, error, ipairs, pairs, tostring, pcall = type, error, ipairs, pairs, tostring, pcall
local string_format, table_sort = string.format, table.sort

local argerr = check.argerr
-- errors name the caller of `psdl.city.from_network` (psdl.check)
check.own(debug.getinfo(1, "S").source)

local M = {}

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

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
    if n.dead_end ~= nil and n.dead_end ~= "cul_de_sac" and n.dead_end ~= "open" then
      argerr(1, "from_network", "nodes[" .. tostring(id) .. "].dead_end: \"cul_de_sac\" or \"open\" expected")
    end
    -- a node on a bridge deck (`bridge = true`) is at the deck height of its `layer` unless it
    -- says otherwise (psdl.city.tunnel.deck_height: 8 m for layer 1, 7 m more per layer)
    local y = n.y
    if n.bridge and y == nil then y = require("psdl.city.tunnel").deck_height(n.layer) end
    local node = city:node(n.x, n.z, { y = y, id = id, name = n.name, dead_end = n.dead_end,
                                       bridge = n.bridge and true or nil, where = "nodes[" .. tostring(id) .. "]" })
    -- (psdl.city.repair brings such a node down to the ground with its last bridge road)
    if n.bridge and n.y == nil then node.deck_height = true end
  end
  for i, r in ipairs(net.roads) do
    if type(r) ~= "table" then argerr(1, "from_network", "roads[" .. i .. "]: table expected") end
    local a, b = city.node_by_id[r.from], city.node_by_id[r.to]
    if not a or not b then
      argerr(1, "from_network", string_format("roads[%d]: node %s not in nodes", i, tostring(not a and r.from or r.to)))
    end
    local o = { profile = r.profile, lanes = r.lanes, width = r.width, oneway = r.oneway, name = r.name,
                source = r.source, via = r.via, where = "roads[" .. i .. "]" .. (r.source and (" (" .. r.source .. ")") or "") }
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
    local ok, err = pcall(city.road, city, a, b, o)
    if not ok then
      local msg = tostring(err):gsub("^bad argument #%d to 'road' %((.*)%)$", "%1")
      -- (a message naming the road's place already, as "roads[3] (way 7): road 3 crosses itself")
      if msg:sub(1, #o.where) ~= o.where then msg = string_format("roads[%d]: %s", i, msg) end
      check.raise(msg)
    end
  end
  city.footprints, city.footprint_notes = require("psdl.city.footprints").check(net.buildings)
  return city
end


return M
