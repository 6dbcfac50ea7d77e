--- The road graph the OSM importer cleans up: nodes with positions, edges with polylines
-- and road attributes, and the edit operations the clean-up passes use (split, merge,
-- join, remove). Internal to the OSM importer; `psdl.osm.network` turns it into the
-- network table of docs/network.md.
--
-- A node: `{ k = n, id = "123", x =, z =, edges = { edge, ... } }` (`k` is a creation
-- counter that orders everything deterministically). An edge: `{ k = n, a = node, b = node,
-- pts = { {x, z}, ... }, attr = {...}, src = { "way 1", ... } }`; `pts[1]` is at `a` and
-- `pts[#pts]` at `b`; a one-way edge runs from `a` to `b`. `attr` holds the road fields
-- of docs/network.md plus internal ones (`rank`, `class`).
-- @module psdl.osm.graph

local G = require "psdl.osm.geometry"

local setmetatable, ipairs, pairs, table_sort, table_concat, tostring, type, next =
  setmetatable, ipairs, pairs, table.sort, table.concat, tostring, type, next
local math_sqrt = math.sqrt
local table_move = table.move
local tonumber, assert = tonumber, assert

local M = {}

local Graph = {}
Graph.__index = Graph

--- A new empty graph.
function M.new()
  return setmetatable({ nodes = {}, edges = {}, nk = 0, ek = 0, synthetic = {} }, Graph)
end

--- Add a node. `id` defaults to a synthetic id `prefix .. n` (prefix "n").
function Graph:node(x, z, id, prefix)
  self.nk = self.nk + 1
  if not id then
    prefix = prefix or "n"
    local c = (self.synthetic[prefix] or 0) + 1
    self.synthetic[prefix] = c
    id = prefix .. c
  end
  local n = { k = self.nk, id = id, x = x, z = z, edges = {} }
  self.nodes[n] = true
  local nl = self.nlist -- (creation counters grow: the sorted list stays sorted)
  if nl then nl[#nl + 1] = n end
  return n
end

--- Add an edge from a to b along pts (whose ends are set to the nodes' positions).
function Graph:edge(a, b, pts, attr, src)
  self.ek = self.ek + 1
  pts[1] = { a.x, a.z }
  pts[#pts] = { b.x, b.z }
  local e = { k = self.ek, a = a, b = b, pts = pts, attr = attr, src = src }
  self.edges[e] = true
  local el = self.elist
  if el then el[#el + 1] = e end
  local ae = a.edges
  ae[#ae + 1] = e
  if b ~= a then
    local be = b.edges
    be[#be + 1] = e
  end
  return e
end

local function detach(n, e)
  local list = n.edges
  for i = #list, 1, -1 do
    if list[i] == e then table.remove(list, i) end
  end
end

--- Remove an edge (its nodes stay).
function Graph:remove_edge(e)
  if e.dead then return end
  e.dead = true
  self.edges[e] = nil
  self.elist_gone = true
  detach(e.a, e)
  if e.b ~= e.a then detach(e.b, e) end
end

--- Remove a node and its edges.
function Graph:remove_node(n)
  while #n.edges > 0 do self:remove_edge(n.edges[1]) end
  n.dead = true
  self.nodes[n] = nil
  self.nlist_gone = true
end

--- Length of an edge (cached until its points change).
function M.len(e)
  local l = e.len
  if not l then
    l = G.length(e.pts)
    e.len = l
  end
  return l
end

-- The members of `set` sorted by creation, kept between calls in `self[key]` (items are
-- appended as they are made, which keeps the order; removed ones are filtered out when
-- `self[gone]` says some went): a copy the caller may keep while the graph changes.
local function sorted(self, set, key, gone)
  local list = self[key]
  if not list then
    list = {}
    for x in pairs(set) do list[#list + 1] = x end
    table_sort(list, function(p, q) return p.k < q.k end)
    self[key], self[gone] = list, false
  elseif self[gone] then
    local j = 0
    for i = 1, #list do
      local x = list[i]
      if set[x] then j = j + 1; list[j] = x end
    end
    for i = #list, j + 1, -1 do list[i] = nil end
    self[gone] = false
  end
  return table_move(list, 1, #list, 1, {})
end

--- The edges of the graph sorted by creation (deterministic order): a new list each call,
-- O(edges) (the order is kept between calls).
function Graph:edge_list()
  return sorted(self, self.edges, "elist", "elist_gone")
end

--- The nodes of the graph sorted by creation (a new list each call, O(nodes)).
function Graph:node_list()
  return sorted(self, self.nodes, "nlist", "nlist_gone")
end

--- Degree of a node (a self-loop counts twice).
function M.degree(n)
  local d = 0
  for _, e in ipairs(n.edges) do d = d + (e.a == e.b and 2 or 1) end
  return d
end

--- The other end of edge e seen from node n.
function M.other(e, n)
  if e.a == n then return e.b end
  return e.a
end

--- The polyline of e oriented away from node n (a new array when reversed).
function M.pts_from(e, n)
  if e.a == n then return e.pts end
  return G.reversed(e.pts)
end

--- Move a node, keeping the end points of its edges on it.
function Graph:move(n, x, z)
  n.x, n.z = x, z
  for _, e in ipairs(n.edges) do
    if e.a == n then e.pts[1] = { x, z } end
    if e.b == n then e.pts[#e.pts] = { x, z } end
    e.len = nil
  end
end

--- Merge node `gone` into node `keep`, which moves to (x, z): every edge of `gone` ends at
-- `keep` afterwards. Edges between the two become self-loops (the caller deals with them).
function Graph:merge(keep, gone, x, z)
  if keep == gone then
    self:move(keep, x or keep.x, z or keep.z)
    return keep
  end
  for _, e in ipairs(gone.edges) do
    local was_loop = e.a == e.b
    if e.a == gone then e.a = keep end
    if e.b == gone then e.b = keep end
    -- a self-loop of `gone` is listed once; an edge newly joining keep to itself is
    -- already in keep's list
    if not (e.a == keep and e.b == keep and not was_loop) then
      keep.edges[#keep.edges + 1] = e
    end
  end
  gone.edges = {}
  gone.dead = true
  gone.merged_into = keep
  self.nodes[gone] = nil
  self.nlist_gone = true
  keep.absorbed = (keep.absorbed or 0) + 1 + (gone.absorbed or 0)
  if gone.roundabout then keep.roundabout = true end
  if gone.turning_circle then keep.turning_circle = true end
  if gone.contact and not keep.contact then keep.contact = gone.contact end
  if gone.foot then keep.foot = true end
  if gone.boundary and not keep.osm then keep.boundary = true end
  self:move(keep, x or keep.x, z or keep.z)
  return keep
end

--- Split edge e at a point of its polyline: segment i (from pts[i] to pts[i+1]) at
-- parameter t. The point becomes node `at` (moved there unless `keep_node`), or a new
-- node. Returns the node and the two new edges (first from e.a, second to e.b); e is
-- removed.
function Graph:split(e, i, t, at, keep_node, prefix)
  local pts = e.pts
  local a, b = pts[i], pts[i + 1]
  local x, z = a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])
  local n = at or self:node(x, z, nil, prefix or "s")
  if at and not keep_node then self:move(n, x, z) end
  local first, second = {}, {}
  for j = 1, i do first[#first + 1] = pts[j] end
  first[#first + 1] = { n.x, n.z }
  second[1] = { n.x, n.z }
  for j = i + 1, #pts do second[#second + 1] = pts[j] end
  -- drop a repeated point next to the cut
  if #first > 2 and G.dist(first[#first - 1][1], first[#first - 1][2], n.x, n.z) < 1e-6 then
    table.remove(first, #first - 1)
  end
  if #second > 2 and G.dist(second[2][1], second[2][2], n.x, n.z) < 1e-6 then
    table.remove(second, 2)
  end
  self:remove_edge(e)
  local e1 = self:edge(e.a, n, first, e.attr, e.src)
  local e2 = self:edge(n, e.b, second, e.attr, e.src)
  e1.chain, e2.chain = e.chain, e.chain
  return n, e1, e2
end

--- Split edge e at arc length s (returns an existing end node when s is within tol of an
-- end). Returns the node and the two pieces (nil pieces when an end node was used).
function Graph:split_at(e, s, tol, prefix)
  tol = tol or 0
  local L = M.len(e)
  if s <= tol then return e.a end
  if s >= L - tol then return e.b end
  local _, _, i, t = G.at(e.pts, s)
  return self:split(e, i, t, nil, nil, prefix)
end

--- Whether two edges carry the same road (every exported field but `source`).
function M.same_road(p, q)
  for _, f in ipairs(M.ROAD_FIELDS) do
    if p[f] ~= q[f] then return false end
  end
  return true
end

--- The attribute fields compared by `same_road`.
M.ROAD_FIELDS = { "profile", "highway", "lanes", "width", "oneway", "sidewalk", "bridge", "tunnel",
  "layer", "name", "ref", "divided", "roundabout", "link", "walkway" }

--- Reverse an edge in place (sides swap: a left sidewalk becomes a right one). Raises for
-- a one-way edge (its direction is the direction of travel).
function Graph:reverse(e)
  assert(not e.attr.oneway, "cannot reverse a one-way edge")
  e.a, e.b = e.b, e.a
  e.pts = G.reversed(e.pts)
  local sw = e.attr.sidewalk
  if sw == "left" or sw == "right" then
    local attr = {}
    for k, v in pairs(e.attr) do attr[k] = v end
    attr.sidewalk = sw == "left" and "right" or "left"
    e.attr = attr
  end
end

--- Join the two edges at a node of degree 2 into one (when `force` is false they must
-- carry the same road; one-way edges must run through the node). Returns the new edge,
-- or nil.
function Graph:join(n, force, attr)
  if #n.edges ~= 2 then return nil end
  local e1, e2 = n.edges[1], n.edges[2]
  if e1 == e2 or e1.a == e1.b or e2.a == e2.b then return nil end
  if not force and not M.same_road(e1.attr, e2.attr) then return nil end
  -- orient e1 into n and e2 out of n
  if e1.b ~= n then
    if e2.b == n then e1, e2 = e2, e1
    elseif not e1.attr.oneway then self:reverse(e1)
    else return nil end
  end
  if e2.a ~= n then
    if e2.attr.oneway then return nil end
    self:reverse(e2)
  end
  if e1.b ~= n or e2.a ~= n then return nil end
  if e1.attr.oneway ~= e2.attr.oneway and not force then return nil end
  local a, b = e1.a, e2.b
  local pts = {}
  for i = 1, #e1.pts do pts[#pts + 1] = e1.pts[i] end
  for i = 2, #e2.pts do pts[#pts + 1] = e2.pts[i] end
  local src = M.union(e1.src, e2.src)
  local keep = attr or e1.attr
  self:remove_edge(e1)
  self:remove_edge(e2)
  n.dead = true
  self.nodes[n] = nil
  self.nlist_gone = true
  local e = self:edge(a, b, pts, keep, src)
  e.chain = e1.chain == e2.chain and e1.chain or nil
  return e
end

--- Union of two source lists (sorted, no repeats).
function M.union(p, q)
  local seen, out = {}, {}
  for _, list in ipairs({ p, q }) do
    for _, s in ipairs(list) do
      if not seen[s] then seen[s] = true out[#out + 1] = s end
    end
  end
  table_sort(out, function(x, y)
    local nx, ny = tonumber(x:match("%d+$")), tonumber(y:match("%d+$"))
    if x:match("^%a+") ~= y:match("^%a+") then return x < y end
    if nx and ny and nx ~= ny then return nx < ny end
    return x < y
  end)
  return out
end

--- "way 1, way 2" from a source list.
function M.source_text(src)
  return table_concat(src, ", ")
end

--- Copy of an attribute table with some fields changed.
function M.with(attr, changes)
  local t = {}
  for k, v in pairs(attr) do t[k] = v end
  for k, v in pairs(changes) do
    if v == M.NIL then t[k] = nil else t[k] = v end
  end
  return t
end

--- Marker for `with`: remove the field.
M.NIL = setmetatable({}, { __tostring = function() return "nil" end })

M.Graph = Graph
return M
