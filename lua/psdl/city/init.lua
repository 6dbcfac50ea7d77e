--- City generation from a road network: nodes and roads in, a PSDL document out.
--
-- A script describes the network (nodes with optional heights, roads between them with
-- optional via points, a profile each, per-road overrides, tunnels and bridges) and how to
-- fill the faces between the roads (`blocks`); `build` turns it into rooms with
-- `psdl.builder`: an intersection room at every node where three or more roads meet, a
-- bend room where two roads meet at a sharp angle (`bend_angle`), a transition room where
-- the profile changes, a turning circle at a dead end, road rooms of about `room_length`
-- metres along smooth centre lines through the gentler nodes, tunnel bores (subterranean +
-- warp rooms) behind walled cuts, bridge decks (warp rooms) with railings between ramps,
-- a road record per road run with lane counts, flags (0x40 sidewalks, 0x08 divided, 0x10
-- alley, 0x20 freeway) and a prop rule on its first room, then block rooms for every bounded
-- face of the network and a ground apron around it (`psdl.city.blocks`), and finally
-- perimeters, neighbour links, flags and bounds (`Builder:finish`). Randomness (prop rules
-- drawn from the style's themes, buildings) comes from one seeded generator: the same
-- script with the same seed gives the same bytes.
--
-- Axes and units follow docs/network.md: metres, x east, z north, y up. A road's left and
-- right are seen travelling from its `from` node to its `to` node.
--
-- @module psdl.city
-- @usage
-- local psdl = require "psdl"
-- local city = psdl.city.new{ style = "london", seed = 7 }
-- local a, b = city:node(0, 0), city:node(240, 0)
-- local c = city:node(240, 180, { y = 3 })
-- city:road(a, b, { profile = "avenue" })
-- city:road(b, c, { via = { { 300, 90 } } })
-- city:road(c, a, { profile = "street" })
-- city:blocks{ buildings = { floors = { 2, 8 } } }
-- local doc, report = city:build()
-- assert(psdl.write(doc, "triangle.psdl"))

local builder = require "psdl.builder"
local styles = require "psdl.styles"
local profiles = require "psdl.city.profiles"
local options = require "psdl.city.options"
local random = require "psdl.city.random"
local road = require "psdl.city.road"
local repair = require "psdl.city.repair"
local heights = require "psdl.city.height"
local check = require "psdl.check"
local plan_box = require("psdl.plan").box

local type, error, ipairs, pairs, tostring, pcall, require, setmetatable, getmetatable, select =
  type, error, ipairs, pairs, tostring, pcall, require, setmetatable, getmetatable, select
local sqrt, floor, max, min, huge = math.sqrt, math.floor, math.max, math.min, math.huge
local string_format, table_concat = string.format, table.concat
local os_clock = os.clock

local argerr, where = check.argerr, check.where
-- argument errors and the script lines of nodes and roads name the caller of this file's
-- functions (psdl.check)
check.own(debug.getinfo(1, "S").source)

local M = {}

M.PROFILES = profiles.PROFILES
M.random = random
M.profiles = profiles

local City = {}
City.__index = City
M.City = City

local OPTS = { style = true, seed = true, name = true, spacing = true, room_length = true, radius = true,
               bend_angle = true, dead_end = true, margin = true, props = true, profiles = true, height = true,
               terrain = true, terrain_opts = true, transition = true, arc_step = true, max_angle = true,
               blocks = true, package = true, strict = true, auto_junctions = true, run_rooms = true,
               max_extent = true }

--- The allowed range of the city's angle options, degrees: `{low, high, why}`. `max_angle`
-- (7.5 by default) is the most a road turns between two cross-sections: below 0.5 a curve
-- needs thousands of them, above 90 it is no curve; `arc_step` (15 by default) is the step of
-- an intersection's curb arcs: the core takes no step below 1, and above 90 a corner is one
-- chord.
M.ANGLE_RANGES = {
  max_angle = { 0.5, 90, "the most a road turns between two cross-sections (default 7.5)" },
  arc_step = { 1, 90, "the step of an intersection's curb arcs (default 15)" },
}

--- A new, empty city.
-- @tparam[opt] table opts
--
-- * `style`: "london" (default), "sf" or a style table (lua/psdl/styles/); the texture
--   names of every road, intersection, divider, tunnel, facade, roof and ground;
-- * `seed`: integer or string (default 1); `psdl build --seed` overrides it;
-- * `name`: the city name for validation (names holding `london` or `sf` warn, §3.4);
-- * `max_extent` (m, `MAX_EXTENT` = 5,000; false: no limit): `build` refuses a road network
--   wider or deeper than this, naming the script line of the road reaching furthest out;
-- * `spacing` (m, 20): largest distance between road cross-sections on straight stretches
--   (curves get more: one every 7.5 degrees of turn);
-- * `room_length` (m, 100): road rooms are about this long (a road shorter than 1.5 times
--   it is one room);
-- * `run_rooms` (false): road rooms may span a through node (where two roads of the same
--   profile, textures and divider continue each other), so a run of roads between junctions
--   needs as few rooms as `room_length` allows (`psdl package` uses it for an OSM extract with
--   more rooms than a package may hold);
-- * `radius` (m, 5): curb radius at intersection corners;
-- * `bend_angle` (degrees, 45): where two roads of the same profile meet at a node at a
--   smaller turn, one road runs smoothly through it; at a larger turn the node gets a bend
--   room;
-- * `transition` (m, 5): half the length of a bend or transition room;
-- * `dead_end`: "cul_de_sac" (default: a turning circle room) or "open" (the road stops);
-- * `margin` (m, 40): width of the ground apron around the network;
-- * `props`: prop rules: false (none), or a table profile name → rule number, theme name or
--   list of theme names of the style's `proprules.themes`, or a function(road) → any of those;
--   default: each profile's themes (street: residential; avenue: high street / downtown;
--   boulevard: main road / banners; alleys and freeways none);
-- * `profiles`: extra or replaced profiles, name → definition (see `psdl.city.profiles`);
-- * `height`: function(x, z) → y for nodes and via points without y, or a
--   `psdl.terrain` Terrain (its `height` method is used); roads climb evenly between them;
--   each value must be nil or a number within ±65,536 m (`psdl.city.height`: the build
--   stops at a NaN or 1e9 naming the function's script line, the point and the value; the
--   same for `terrain`);
-- * `terrain`: a `psdl.terrain` Terrain or a function(x, z) → y the whole city lies on
--   (`psdl.city.terrain`): nodes and via points without y, road centre lines between the
--   intersections, block ground, and terrain ground rooms out to the terrain's extent;
--   `terrain_opts`: `{blend, extent, cell, room_cells, max_points, texture, apron_cell,
--   planar_tol, ground}` (`psdl.city.terrain.setup`);
-- * `max_angle` (degrees, 7.5; 0.5..90): the most a road turns between two cross-sections;
--   `arc_step` (degrees, 15; 1..90): the step of an intersection's curb arcs (`ANGLE_RANGES`);
-- * `blocks = false`: build roads and intersections only;
-- * `auto_junctions = true`: where two roads at grade cross without a shared node, a
--   junction is inserted (both roads split there), and a road whose body a node of other
--   roads lies on is split at that node; without it (the default) `build` refuses such a
--   network with an error naming both script lines. Bridges and tunnels cross freely;
-- * `package`: settings for `psdl package` (`psdl.package.generate`: `name`, `title`,
--   `left_hand`, `density`, `speed`, `police`, `vehicles`, `peds`, `lights`, `dressing`);
--   command-line options override them.
-- @treturn City
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "new", "table expected, got " .. type(opts)) end
  for k in pairs(opts) do
    if not OPTS[k] then argerr(1, "new", "unknown option '" .. tostring(k) .. "'") end
  end
  local ok, style = pcall(profiles.style, opts.style or "london", 1)
  if not ok then argerr(1, "new", style) end
  local sbad = type(opts.style) == "table" and options.style_problem(style)
  if sbad then argerr(1, "new", sbad) end
  local ptab = {}
  for k, v in pairs(profiles.PROFILES) do ptab[k] = v end
  if opts.profiles ~= nil and type(opts.profiles) ~= "table" then
    argerr(1, "new", "profiles: a table of profile name -> profile table expected, got " .. check.shown(opts.profiles))
  end
  for k, v in pairs(opts.profiles or {}) do
    if type(v) ~= "table" then argerr(1, "new", "profiles." .. tostring(k) .. ": table expected") end
    local m = profiles.keys_problem(v) or options.prop_problem(v.props, style, "props")
    if m then argerr(1, "new", "profiles." .. tostring(k) .. ": " .. m) end
    ptab[k] = v
  end
  for k in pairs(opts.profiles or {}) do -- (each profile's values, as a road of it would have them)
    local ok2, e = pcall(profiles.resolve, style, ptab, { profile = k }, "profiles." .. tostring(k) .. ": ")
    if not ok2 then argerr(1, "new", tostring(e)) end
  end
  local height = opts.height
  local on_terrain
  if opts.terrain ~= nil then
    if opts.height ~= nil then
      argerr(1, "new", "height or terrain, not both (height: node heights only; terrain: the whole city lies on it)")
    end
    local ok, t = pcall(require("psdl.city.terrain").setup, opts.terrain, opts.terrain_opts)
    if not ok then argerr(1, "new", tostring(t)) end
    on_terrain, height = t, t.height
  elseif opts.terrain_opts ~= nil then
    argerr(1, "new", "terrain_opts: only with terrain")
  end
  if type(height) == "table" and height.height then
    local t = height
    height = function(x, z) return t:height(x, z) end
  elseif height ~= nil and type(height) ~= "function" then
    argerr(1, "new", "height: function(x, z) or a psdl.terrain Terrain expected")
  end
  -- every height psdl.city asks for is checked where it asks (psdl.city.height): a NaN or a
  -- height of 1e9 m names the function's script line, the point and the value
  if height then
    local given = opts.terrain or opts.height
    local label = heights.label(type(given) == "function" and given or nil,
      type(given) == "function" and (opts.terrain and "the terrain function" or "the height function")
      or (opts.terrain and "the terrain's height" or "the height Terrain"), heights.script_line())
    height = heights.checked(height, label)
    if on_terrain then on_terrain.height = height end
  end
  for _, k in ipairs({ "spacing", "room_length", "radius", "bend_angle", "margin", "transition" }) do
    local v = opts[k]
    local lo = k == "spacing" and 0.5 or 0 -- (spacing: sections at least 0.5 m apart)
    if v ~= nil and (type(v) ~= "number" or v ~= v or v < lo or v == huge) then
      argerr(1, "new", string_format("%s: a number >= %s expected, got %s", k, lo, check.shown(v)))
    end
  end
  -- degrees, passed on to every street and intersection: refused here, at the script line,
  -- rather than by the builder deep in the build (ANGLE_RANGES)
  for _, k in ipairs({ "max_angle", "arc_step" }) do
    local range = M.ANGLE_RANGES[k]
    local m = opts[k] ~= nil and check.num_problem(opts[k], k .. " (degrees)", "number", range[1], range[2])
    if m then argerr(1, "new", m .. "; " .. k .. " is " .. range[3]) end
  end
  -- (values only the build reads: checked here, never "repaired" there; psdl.city.options)
  local bad = options.new_problem(opts, style)
  if bad then argerr(1, "new", bad) end
  local seed = opts.seed
  if seed ~= nil and type(seed) ~= "string" and (type(seed) ~= "number" or seed ~= seed or seed == huge or seed == -huge) then
    argerr(1, "new", "seed: an integer, a finite number or a string expected, got "
      .. (type(seed) == "number" and check.shown(seed) or type(seed)))
  end
  local max_extent = opts.max_extent
  if max_extent == nil then max_extent = M.MAX_EXTENT end
  if max_extent and (type(max_extent) ~= "number" or not (max_extent > 0)) then
    argerr(1, "new", "max_extent: false or a positive number of metres expected, got " .. tostring(max_extent))
  end
  local city = setmetatable({
    style = style, style_name = type(opts.style) == "string" and opts.style or style.style or "london",
    seed = opts.seed == nil and 1 or opts.seed, name = opts.name,
    spacing = opts.spacing or 20, room_length = opts.room_length or 100, radius = opts.radius or 5,
    bend_angle = opts.bend_angle or 45, dead_end = opts.dead_end, margin = opts.margin or 40,
    transition = opts.transition or 5, arc_step = opts.arc_step, max_angle = opts.max_angle,
    props = opts.props, package = opts.package, profile_table = ptab, height_fn = height, terrain = on_terrain,
    auto_junctions = opts.auto_junctions and true or false, run_rooms = opts.run_rooms and true or false,
    max_extent = max_extent, nodes = {}, roads = {}, node_by_id = {},
    specs = {}, -- resolved profiles by profiles.resolve_key (City:road)
  }, City)
  if on_terrain then -- road centre lines follow the ground (psdl.city.terrain)
    local drape, fn, blend = require("psdl.city.terrain").drape, on_terrain.height, on_terrain.blend
    local tol = on_terrain.planar_tol
    city.drape = function(samples, ctrl, spline)
      if spline then spline.planar_tol = spline.planar_tol or tol end
      return drape(samples, ctrl, fn, blend, spline)
    end
  end
  if opts.blocks == false then city.block_opts = false end
  city.strict = opts.strict and true or false
  return city
end

--- The largest east or north coordinate of a node or via point, metres (2^16 = 65,536): a
-- PSDL stores positions as 32-bit floats (psdl-format.md §1.2), whose steps are 4 mm just
-- below this and grow with distance (8 mm up to 131 km, 64 m at 1e9 m), so a city further
-- out loses its curb and crosswalk detail and then whole rooms; the game's own cities lie
-- within a few kilometres of the origin, and a whole city spans at most `MAX_EXTENT`.
M.MAX_COORDINATE = 65536

-- Raises (at the script's line) when a method is called with a dot (`city.node(0, 0)`): the
-- numbers then arrive one place along, and the message says to use the colon.
local function method_call(self, fname, args)
  if getmetatable(self) ~= City then
    argerr(1, fname, string_format("a city expected, got %s: call it with a colon, city:%s(%s), not city.%s(...)",
      type(self), fname, args, fname))
  end
end

local NODE_OPTS = { y = true, name = true, id = true, tunnel = true, bridge = true, junction = true, dead_end = true,
                    radius = true, textures = true, min_distance = true, x = true, z = true, where = true }

--- Add a node.
-- @tparam number|table x east (m), or a table `{x =, z =, y =, ...}` with the options
-- @tparam[opt] number z north (m)
-- @tparam[opt] table opts `y` (m; default the city's `height`, else 0), `name`, `id` (for
-- `road` and reports; default the node's number), `junction = true` (an intersection room
-- even where two roads meet), `dead_end` ("cul_de_sac" or "open"), `radius` (corner radius
-- here), `textures` (intersection group: a key of the style's `intersections`, a style entry
-- or a group), `tunnel = true | {height, height2, textures, walls}` (an underground
-- junction: junction-tunnel walls and ceiling; only tunnel roads may meet here, without a
-- ramp at this end), `bridge = true` (a junction on a bridge deck: only bridge roads)
-- @treturn table the node (pass it to `road`)
function City:node(x, z, opts)
  method_call(self, "node", "x, z")
  if type(x) == "table" then
    opts = x
    x, z = opts.x, opts.z
  end
  opts = opts or {}
  if type(x) ~= "number" or type(z) ~= "number" or x ~= x or z ~= z or x == huge or x == -huge
     or z == huge or z == -huge then
    local bad, name = x, "x"
    if type(x) == "number" and x == x and x ~= huge and x ~= -huge then bad, name = z, "z" end
    argerr(1, "node", string_format("finite numbers x and z expected, got %s %s",
      (type(bad) == "number" or type(bad) == "string") and check.shown(bad) or type(bad), name))
  end
  if math.abs(x) > M.MAX_COORDINATE or math.abs(z) > M.MAX_COORDINATE then
    argerr(1, "node", string_format("(%.6g, %.6g) lies too far out: x and z within +-%d m "
      .. "(psdl.city.MAX_COORDINATE: 32-bit float positions lose their centimetres further out)", x, z, M.MAX_COORDINATE))
  end
  if type(opts) ~= "table" then argerr(3, "node", "table expected, got " .. type(opts)) end
  for k in pairs(opts) do
    if not NODE_OPTS[k] then argerr(3, "node", "unknown option '" .. tostring(k) .. "'") end
  end
  local y = opts.y
  if y ~= nil then
    local m = check.num_problem(y, "y", "number", -M.MAX_COORDINATE, M.MAX_COORDINATE)
    if m then argerr(3, "node", m) end
  end
  local bad = options.node_problem(opts, self.style)
  if bad then argerr(3, "node", bad) end
  local idx = #self.nodes + 1
  local id = opts.id
  if id == nil then id = idx end
  if self.node_by_id[id] then argerr(3, "node", "id " .. tostring(id) .. " is already taken") end
  local n = { index = idx, id = id, x = x, z = z, y0 = y, name = opts.name, opts = opts, city = self,
              where = opts.where or where() }
  self.nodes[idx] = n
  self.node_by_id[id] = n
  self.built = nil
  return n
end

local ROAD_OPTS = { profile = true, via = true, lanes = true, lane_width = true, width = true, sidewalk = true,
                    sidewalk_width = true, sidewalk_left = true, sidewalk_right = true, median = true,
                    divider = true, divider_textures = true, divider_height = true, divider_repeats = true,
                    textures = true, style = true, oneway = true, crosswalk = true, tunnel = true, bridge = true,
                    name = true, prop_rule = true, source = true, layer = true, where = true }

--- Highest bridge deck and deepest tunnel bore, metres (`psdl.city.tunnel.MAX_LEVEL`, 100).
M.MAX_LEVEL = require("psdl.city.tunnel").MAX_LEVEL

-- A node from a node handle or an id.
function City:resolve_node(v, n, fname)
  if type(v) == "table" and v.city == self then return v end
  local node = self.node_by_id[v]
  if node then return node end
  if type(v) == "table" and v.city then argerr(n, fname, "the node belongs to another city") end
  argerr(n, fname, "a node of this city (or its id) expected, got " .. tostring(v))
end

--- Add a road between two nodes.
-- @param a the from node (or its id)
-- @param b the to node (or its id)
-- @tparam[opt] table opts
--
-- * `profile`: "street" (default), "one_sided", "alley", "walkway", "avenue",
--   "boulevard", "freeway", a name from the city's `profiles`, or a profile table;
-- * `via`: shape points `{ {x, z}, {x, z, y}, ... }` between the nodes (a smooth curve
--   passes through them; missing heights are interpolated);
-- * overrides: `lanes` (total), `lane_width`, `width` (carriageway, m), `sidewalk`
--   ("both", "left", "right", "none", or metres), `sidewalk_width`, `sidewalk_left`,
--   `sidewalk_right`, `median`, `divider` ("elevated", "flat", "wedge", "none"),
--   `divider_textures` (a key of the style's `dividers` or a table), `textures` (a key of the
--   style's `roads` such as "lanes4", a style entry, a builder group or a texture name),
--   `style` (another style for this road's textures), `oneway`;
-- * `crosswalk` (m, or false): crosswalk depth where this road meets an intersection;
-- * `tunnel = true | {depth = 9, ramp = 60, ceiling = "curved", height = 7, height2 = 7,
--   textures, walls, wall_height, wall_height2}`: the road dips into a bore (subterranean +
--   warp rooms, curved ceiling) between walled cuts of `ramp` metres at each end whose node is
--   at grade; `depth` is below the end nodes' heights;
-- * `bridge = true | {height = 8, ramp = 60, railing, ramp_railing, railing_height,
--   railing_height2}`: the road climbs ramps with low railings at each end whose node is at
--   grade to a deck `height` metres up (warp rooms, bridge railings); `height = 0`: the whole
--   road is a deck at its nodes' heights (over water);
-- * `name` (for messages), `prop_rule` (a number 0..255, `psdl.core.limits.prop_rule`, or a theme name: the road's run gets it on
--   its first room).
-- @treturn table the road
function City:road(a, b, opts)
  method_call(self, "road", "a, b")
  local na = self:resolve_node(a, 1, "road")
  local nb = self:resolve_node(b, 2, "road")
  if na == nb then argerr(2, "road", "a road needs two different nodes (both are node " .. tostring(na.id) .. ")") end
  opts = opts or {}
  if type(opts) ~= "table" then argerr(3, "road", "table expected, got " .. type(opts)) end
  for k in pairs(opts) do
    if not ROAD_OPTS[k] then argerr(3, "road", "unknown option '" .. tostring(k) .. "'") end
  end
  local via = {}
  if opts.via ~= nil then
    if type(opts.via) ~= "table" then argerr(3, "road", "via: a list of {x, z} or {x, z, y} points expected") end
    for i, v in ipairs(opts.via) do
      if type(v) ~= "table" or type(v[1]) ~= "number" or type(v[2]) ~= "number"
         or (v[3] ~= nil and type(v[3]) ~= "number") then
        argerr(3, "road", string_format("via[%d]: {x, z} or {x, z, y} expected", i))
      end
      for c = 1, 3 do
        local x = v[c]
        if x ~= nil and (x ~= x or x == math.huge or x == -math.huge) then
          argerr(3, "road", string_format("via[%d][%d]: finite number expected, got %s", i, c, x ~= x and "nan" or tostring(x)))
        end
      end
      if math.abs(v[1]) > M.MAX_COORDINATE or math.abs(v[2]) > M.MAX_COORDINATE
         or (v[3] and math.abs(v[3]) > M.MAX_COORDINATE) then
        argerr(3, "road", string_format("via[%d]: (%.6g, %.6g%s) lies too far out: x, z and y within +-%d m "
          .. "(psdl.city.MAX_COORDINATE: 32-bit float positions lose their centimetres further out)", i, v[1], v[2],
          v[3] and string_format(", y %.6g", v[3]) or "", M.MAX_COORDINATE))
      end
      via[i] = { v[1], v[2], v[3] }
    end
  end
  if #via == 0 and math.abs(na.x - nb.x) < 0.01 and math.abs(na.z - nb.z) < 0.01 then
    argerr(2, "road", string_format("a road needs length: nodes %s and %s are both at (%g, %g)",
      tostring(na.id), tostring(nb.id), na.x, na.z))
  end
  local idx = #self.roads + 1
  -- (`number` stays: `index` is renumbered when psdl.city.repair drops a road before it)
  local r = { index = idx, number = idx, a = na, b = nb, via = via, opts = opts, name = opts.name, city = self,
              where = opts.where or where() }
  -- a centre line that crosses itself is a mistake of the script, never repaired (docs/city.md)
  if #via >= 2 then
    local pts = { { na.x, na.z, i = 0 } }
    for i, v in ipairs(via) do pts[#pts + 1] = { v[1], v[2], i = i } end
    pts[#pts + 1] = { nb.x, nb.z, i = #via + 1 }
    local x, z, j1, j2, i1, i2 = require("psdl.city.network").self_crossing(pts)
    if x then
      local function lab(k)
        if k == 0 then return "node " .. tostring(na.id) end
        if k == #via + 1 then return "node " .. tostring(nb.id) end
        return string_format("via[%d]", k)
      end
      error(string_format("%s crosses itself at (%.1f, %.1f): its centre line from %s to %s meets the one from %s "
        .. "to %s; move or remove via points, or make it two roads with a junction node there",
        require("psdl.city.network").road_label(r), x, z, lab(j1), lab(j2), lab(i1), lab(i2)), 0)
    end
  end
  local bad = options.road_problem(opts, self.style)
  if bad then argerr(3, "road", bad) end
  -- roads asking for the same profile share its resolution (read only from here on): at
  -- 7,000 roads one table of ~0.9 KB each was a sixth of the live heap of a build
  local skey = profiles.resolve_key(opts)
  local spec = skey and self.specs[skey]
  if not spec then
    local ok
    ok, spec = pcall(profiles.resolve, self.style, self.profile_table, opts, "")
    if not ok then argerr(3, "road", tostring(spec)) end
    if skey then self.specs[skey] = spec end
  end
  r.spec = spec
  if type(opts.prop_rule) == "number" then -- (a theme name is drawn when the city is built)
    local ok2, e = pcall(profiles.prop_rule, opts.prop_rule, spec.style)
    if not ok2 then argerr(3, "road", tostring(e)) end
  end
  local function part(v, what)
    if v == nil or v == false then return nil end
    if v == true then return {} end
    if type(v) ~= "table" then argerr(3, "road", what .. ": true or a table expected") end
    local m = require("psdl.city.tunnel").options_problem(v, what, M.MAX_COORDINATE)
    if m then argerr(3, "road", m) end
    return v
  end
  r.tunnel = part(opts.tunnel, "tunnel")
  r.bridge = part(opts.bridge, "bridge")
  if r.tunnel and r.bridge then argerr(3, "road", "a road is a tunnel or a bridge, not both") end
  self.roads[idx] = r
  self.built = nil
  return r
end

--- How to fill the faces of the network: every bounded face becomes a block room (ground
-- fans; building rows along its edges, roofs, facades, facade bounds, slivers on slopes;
-- parks and plazas without buildings), and a ground apron surrounds the whole network
-- (`psdl.city.blocks`).
-- @tparam[opt] table opts `buildings` (false, or `{floors = {min, max}, floor_height,
-- bay_width, setback, gap = {min, max}, depth = {min, max}, facades}`), `margin` (m, the
-- apron; default the city's), `overrides` (`{ {point = {x, z}, park = true | plaza = true |
-- buildings = {...}}, ... }`), `room` and `apron` (splitting limits of block and apron rooms,
-- `{max_area, max_points, max_length, step}`: `psdl.city.blocks.DEFAULTS`; larger ones give
-- fewer, larger rooms); `false` builds no blocks
-- @treturn City self
function City:blocks(opts)
  method_call(self, "blocks", "{...}")
  if opts == false then self.block_opts = false; return self end
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "blocks", "table or false expected, got " .. type(opts)) end
  local m = require("psdl.city.blocks.options").problem(opts, M.MAX_COORDINATE)
  if m then argerr(1, "blocks", m) end
  self.block_opts = opts
  self.block_where = where() -- (warnings about its overrides name this line)
  self.built = nil
  return self
end

--- The largest span of a city's road network on either axis, metres (5,000, the limit of
-- `psdl.osm.extent`): a street network that large usually needs more than the game's 2,047
-- rooms (docs/osm.md, "Area limit"). `psdl.city.new{max_extent = m | false}` changes it.
M.MAX_EXTENT = require("psdl.osm.extent").LIMIT

-- Refuse a network wider or deeper than `self.max_extent`, before any room is made: the
-- message gives the span in km and names the road (script line) reaching furthest from the
-- median of the nodes, the usual culprit (a typo'd coordinate, a road off into the distance).
local function check_extent(self)
  local limit = self.max_extent
  if not limit then return end
  local box = plan_box()
  for _, r in ipairs(self.roads) do
    box:add(r.a.x, r.a.z); box:add(r.b.x, r.b.z)
    for _, v in ipairs(r.via) do box:add(v[1], v[2]) end
  end
  local minx, minz, maxx, maxz = box.u0, box.v0, box.u1, box.v1
  if maxx - minx <= limit and maxz - minz <= limit then return end
  local xs, zs = {}, {}
  for i, n in ipairs(self.nodes) do xs[i], zs[i] = n.x, n.z end
  table.sort(xs); table.sort(zs)
  -- (the median, of an even count the mean of the two middle values: x = 0 and 30000 give 15000)
  local h = #xs // 2 + 1
  local mx, mz = xs[h], zs[h]
  if #xs % 2 == 0 then mx, mz = (xs[h - 1] + xs[h]) / 2, (zs[h - 1] + zs[h]) / 2 end
  local worst, wd, wx, wz
  for _, r in ipairs(self.roads) do
    local function far(x, z)
      local d = math.max(math.abs(x - mx), math.abs(z - mz))
      if not wd or d >= wd then worst, wd, wx, wz = r, d, x, z end
    end
    far(r.a.x, r.a.z); far(r.b.x, r.b.z)
    for _, v in ipairs(r.via) do far(v[1], v[2]) end
  end
  error(string_format("%sthe road network spans %.2f km east-west by %.2f km north-south, more than the %.2f km a "
    .. "city can span (the game's 2,047 rooms; docs/osm.md, \"Area limit\"): roads[%d]%s reaches x = %.0f, z = %.0f m, "
    .. "%.2f km from the middle of the nodes (their median, x = %.0f, z = %.0f m); psdl.city.new{max_extent = metres} raises the limit",
    worst.where and (worst.where .. ": ") or "", (maxx - minx) / 1000, (maxz - minz) / 1000, limit / 1000,
    worst.index, worst.name and (" (" .. tostring(worst.name) .. ")") or "", wx, wz, wd / 1000, mx, mz), 0)
end

-- What the script most likely gave by mistake, as build warnings (the layout then drops
-- one of the roads with a warning of its own, which does not say why): two nodes at one
-- place (same x, z and y) that roads use, and a road given twice (the same two nodes and
-- via points). Each names the nodes or roads and their script lines.
local function coincidences(self)
  local out, at, used, seen = {}, {}, {}, {}
  local groups = {} -- {first, others...} in the order found
  for _, r in ipairs(self.roads) do used[r.a], used[r.b] = true, true end
  local function line(t) return t.where and (" (" .. t.where .. ")") or "" end
  local function add(map, key, item)
    local g = map[key]
    if g then
      if #g == 1 then groups[#groups + 1] = g end
      g[#g + 1] = item
    else
      map[key] = { item }
    end
  end
  for _, n in ipairs(self.nodes) do
    if used[n] then add(at, string_format("%.17g,%.17g,%s", n.x, n.z, tostring(n.y0)), n) end
  end
  for _, r in ipairs(self.roads) do
    local a, b = r.a, r.b
    local pts = {}
    for i, v in ipairs(r.via) do pts[i] = string_format("%.17g,%.17g", v[1], v[2]) end
    local ends = { a.index, b.index }
    if a.index > b.index then -- (the same road given from its other end: its via points reversed)
      ends = { b.index, a.index }
      for i = 1, #pts // 2 do pts[i], pts[#pts + 1 - i] = pts[#pts + 1 - i], pts[i] end
    end
    add(seen, ends[1] .. "-" .. ends[2] .. ":" .. table_concat(pts, ";"), r)
  end
  for _, g in ipairs(groups) do
    local first, names = g[1], {}
    local road = first.number ~= nil
    for k = 2, #g do names[#names + 1] = tostring(road and g[k].number or g[k].id) .. line(g[k]) end
    local many = #g > 2
    local last = g[#g]
    if road then
      out[#out + 1] = string_format("%sroad%s %s %s road %d%s again: the same nodes %s and %s, along the same line "
        .. "(give it once)", last.where and (last.where .. ": ") or "", many and "s" or "", table_concat(names, ", "),
        many and "are" or "is", first.number, line(first), tostring(first.a.id), tostring(first.b.id))
    else
      out[#out + 1] = string_format("%snodes %s%s and %s are %s at (%g, %g): roads meeting there need one node (use "
        .. "the same node for each road)", last.where and (last.where .. ": ") or "", tostring(first.id), line(first),
        table_concat(names, ", "), many and "all" or "both", first.x, first.z)
    end
  end
  return out
end

-- The build itself (City:build without the collector tuning).
local function build(self, opts)
  if #self.roads == 0 then error("the city has no roads (add some with city:road(a, b))", 0) end
  check_extent(self)
  local warnings = coincidences(self) -- (before the layout drops one of the pair)
  local t0 = os_clock()
  local seed = opts.seed
  if seed == nil then seed = self.seed end
  local rng = random.seeded(seed)
  local progress = opts.progress
  if progress then progress("city: roads") end
  -- roads the layout cannot build as given are repaired or dropped (psdl.city.repair)
  local log = self.repair_log or repair.log()
  self.repair_log, log.strict = log, (opts.strict or self.strict) and true or false
  repair.prepare(self, log)
  local varied = heights.nodes(self)
  if varied then heights.grades(self, require("psdl.city.network").road_label) end -- (a 130 km climb: named here)
  local b, info = repair.run(self, log, function()
    local b = builder.new{ style = self.style, name = self.name }
    local info = road.build_roads(self, b, rng)
    -- rooms that overlap are repaired now, before any block is built around them
    repair.overlap_failures(self, b)
    return b, info
  end)
  road.release(self) -- (the roads phase's working data: not marked again in the later phases)
  local t1 = os_clock()
  local block_report, terrain_report
  if progress then progress("city: blocks") end
  if self.block_opts ~= false then
    local blocks = require "psdl.city.blocks"
    local bo = self.block_opts or {}
    local brng = rng:derive("blocks")
    local margin = bo.margin or self.margin
    local tr, tplan, cterrain = self.terrain, nil, nil
    if tr and tr.ground then -- terrain ground: the apron out to the ground grid's inner edge
      cterrain = require "psdl.city.terrain"
      margin = math.max(tonumber(margin) or 0, 1)
      tplan = cterrain.plan(tr, b, margin)
    end
    local ok2, rep2 = check.pcall(blocks.fill, b, {
      style = self.style, rng = brng:fn(), margin = margin,
      buildings = bo.buildings or false, overrides = bo.overrides, room = bo.room, apron = bo.apron, height = varied and heights.blocks(self) or nil,
      footprints = self.footprints, apron_ring = tplan and tplan.ring,
      apron_ground = tplan and cterrain.apron_limits(tr, tplan), apron_texture = tplan and tr.texture,
      ground_limits = tplan and cterrain.apron_limits(tr, tplan),
    })
    if not ok2 then
      -- (a bad height names the height function, not the stage that asked for it)
      error(heights.is_error(rep2) and rep2 or "blocks: " .. tostring(rep2), 0)
    end
    block_report = rep2
    -- an override whose point is in no block is not applied: a warning, the build goes on
    for _, m in ipairs(rep2.missed_overrides or {}) do
      warnings[#warnings + 1] = string_format("%scity:blocks overrides[%d]: its point (%g, %g) lies in no block (on a "
        .. "road or an intersection, outside the network or in a hole), so it is not applied; move the point inside "
        .. "the block it is for", self.block_where and (self.block_where .. ": ") or "", m.index, m.x, m.z)
    end
    -- footprints whose height or levels were ignored (from_network)
    if self.footprint_notes and rep2.warnings then
      for _, w in ipairs(self.footprint_notes) do rep2.warnings[#rep2.warnings + 1] = w end
      rep2.footprint_heights_ignored = #self.footprint_notes
    end
    if tplan then
      local tex = tr.texture or styles.ground(self.style, "grass")
      local ok3, rooms = check.pcall(cterrain.ground, b, tr, tplan, tex)
      if not ok3 then error(heights.is_error(rooms) and rooms or "terrain: " .. tostring(rooms), 0) end
      terrain_report = { cell = tplan.cell, rooms = #rooms, room_list = rooms, apron_rooms = #rep2.apron_rooms,
                         extent = tplan.extent, rect = tplan.rect, network = tplan.box,
                         grid = { #tplan.xs, #tplan.zs } }
    end
  end
  local t2 = os_clock()
  if progress then progress("city: finish") end
  self.last_builder = b -- (psdl.city.repair maps validation errors back to roads)
  local doc, rep = b:finish{ strict = opts.strict and true or false, validate = opts.validate, drivable = opts.drivable,
                              order = "blocks_first" }
  local t3 = os_clock()
  local kinds = { road = 0, intersection = 0, block = 0, tunnel = 0, bridge = 0 }
  for _, r in ipairs(b.rooms) do
    kinds[r.kind] = (kinds[r.kind] or 0) + 1
    if r.is_tunnel then kinds.tunnel = kinds.tunnel + 1 end
    if r.is_bridge then kinds.bridge = kinds.bridge + 1 end
  end
  local problems, counts = rep.problems or {}, rep.counts or { errors = 0, warnings = 0 }
  local report = {
    rooms = rep.rooms, vertices = rep.vertices, heights = rep.heights, textures = rep.textures,
    roads = rep.roads, kinds = kinds, nodes = info.classes, runs = #info.runs, blocks = block_report,
    terrain = terrain_report,
    problems = problems, counts = counts, checked = rep.checked, tjunctions = rep.tjunctions, seed = seed, builder = b,
    seconds = { roads = t1 - t0, blocks = t2 - t1, finish = t3 - t2, total = t3 - t0 }, phases = rep.phases,
    run_list = info.runs, repairs = log.entries, warnings = warnings,
  }
  self.built = { doc = doc, report = report }
  return doc, report
end

--- The collector's pause during `City:build` (percent; lua5.4 takes at most 1,023): a
-- collection cycle starts when the heap reaches this share of what the last cycle left live.
-- 1,000 against 400 before (issue 13, round 6: bench/README.md "Issue 13, round 6: growth"):
-- the 60 x 60 bench city (14,395 rooms) builds 13 % faster, the 19 x 19 as fast, peak RSS
-- per 1,000 rooms with buildings stays within 20 MiB.
M.GC_PAUSE = 1000

--- Build the city: roads, intersections, blocks, then `Builder:finish`.
-- @tparam[opt] table opts `seed` (overrides the city's), `strict` (true: warnings are
-- errors too; default false: warnings are reported), `validate` (default true), `drivable`
-- (false: the format's rules only, for pieces that are no whole city; see `psdl.validate`),
-- `gc_pause` (the collector's pause while building, `GC_PAUSE` = 1,000 by default: most of
-- what a build allocates stays live until it ends (the rooms, their outlines, the network),
-- so a collection in it finds little to free, and the default pause of 200 spends a third
-- of the time collecting; a cycle starts once the heap is 10 times what the last one left,
-- which bounds the heap a series of repair attempts can pile up; the build runs the incremental collector, restores the previous pause and leaves the
-- collector in incremental mode: switching lua5.4 back to generational mode would be a full
-- collection of the heap, 0.07-0.1 s after a London-scale city; false leaves the collector
-- alone), `progress`
-- (function(stage) called with "city: roads", "city: blocks", "city: finish")
-- @treturn table the document (docs/document-model.md; `psdl.write` takes it)
-- @treturn table the report: `rooms`, `vertices`, `heights`, `textures`, `roads` (road
-- records), `kinds` (rooms by kind: road, intersection, block, tunnel, bridge), `nodes`
-- (nodes by class: junction, bend, transition, dead_end, open, through), `runs`,
-- `blocks` (what `psdl.city.blocks` returned, or nil when it is not available or off),
-- `terrain` (with the `terrain` option: `{cell, rooms, room_list, apron_rooms, extent,
-- rect, network, grid}` of the terrain ground),
-- `problems` (validation warnings), `counts` (`{errors, warnings}`), `checked` (the
-- document's bytes as validated, `Builder:finish`; nil with `validate = false`),
-- `tjunctions`, `seed`, `seconds` (`{roads, blocks, finish, total}`), `repairs`
-- (`psdl.city.repair`), `warnings` (strings: what the build left out but went on without, an
-- override of `city:blocks` whose point lies in no block; `psdl build` prints them)
-- @raise with a message naming the script line of the node or road at fault, or when the
-- document does not validate
function City:build(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr(1, "build", "table expected, got " .. type(opts)) end
  local bad = require("psdl.city.build_options").problem(opts)
  if bad then argerr(1, "build", bad) end
  local pause = opts.gc_pause
  if pause == nil then pause = M.GC_PAUSE end
  if not pause then return repair.validated(self, opts, build) end
  -- incremental from here on (the collector stays so: a long-running program, a watch loop,
  -- keeps collecting; generational mode could only be had back with a full collection)
  collectgarbage("incremental")
  local prev = collectgarbage("setpause", pause)
  local ok, doc, report = pcall(repair.validated, self, opts, build)
  collectgarbage("setpause", prev)
  if not ok then error(doc, 0) end
  return doc, report
end

--- Build (if needed) and write the city atomically; refuses a city with validation errors.
-- @tparam string path
-- @tparam[opt] table opts `seed`, `strict` (warnings refuse too), as for `build`
-- @treturn[1] true
-- @treturn[1] table the report
-- @treturn[2] nil
-- @treturn[2] string message
-- @treturn[2] string code
function City:save(path, opts)
  if type(path) ~= "string" then argerr(1, "save", "path expected") end
  opts = opts or {}
  if type(opts) ~= "table" then argerr(2, "save", "table expected, got " .. type(opts)) end
  local bad = require("psdl.city.build_options").problem(opts)
  if bad then argerr(2, "save", bad) end
  local doc, report = self:build(opts)
  -- (just built: the bytes finish validated are written, not converted and checked again)
  local document = require "psdl.document"
  local wopts = { strict = opts.strict, name = self.name, drivable = opts.drivable }
  local ok, err, code
  if report.checked then
    ok, err, code = document.write_checked(report.checked, path, wopts)
  else
    ok, err, code = document.write(doc, path, wopts)
  end
  if not ok then return nil, err, code end
  return true, report
end

--- One paragraph about a built city (what `psdl build` prints).
-- @tparam table report from `build`
-- @tparam[opt] string label a file name to start with
-- @treturn string lines, newline-separated, no final newline
function M.summary(report, label)
  if type(report) ~= "table" or type(report.kinds) ~= "table" then
    argerr(1, "summary", "the report of City:build expected, got " .. (type(report) == "table"
      and "a table without its kinds" or type(report)))
  end
  if label ~= nil and type(label) ~= "string" then argerr(2, "summary", "string expected, got " .. type(label)) end
  local function int(n)
    local s = string_format("%d", n or 0)
    return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
  end
  local function fmt_m(x) return (string_format("%.1f", x):gsub("%.0$", "")) end
  local k = report.kinds
  local lines = {}
  lines[#lines + 1] = string_format("%s%s rooms (%s road, %s intersection, %s block; %s tunnel, %s bridge), "
    .. "%s vertices, %s heights, %s textures, %s road records",
    label and (label .. ": ") or "", int(report.rooms), int(k.road), int(k.intersection), int(k.block),
    int(k.tunnel), int(k.bridge), int(report.vertices), int(report.heights), int(report.textures), int(report.roads))
  local nc = report.nodes or {}
  lines[#lines + 1] = string_format("  network: %s junctions, %s bends, %s transitions, %s dead ends, %s open ends, "
    .. "%s through nodes; %s road runs", int(nc.junction), int(nc.bend), int(nc.transition), int(nc.dead_end),
    int(nc.open), int(nc.through), int(report.runs))
  local bl = report.blocks
  if bl then
    lines[#lines + 1] = string_format("  blocks: %s blocks, %s buildings, %s parks%s", int(bl.blocks), int(bl.buildings),
      int(bl.parks), bl.apron and ", ground apron" or "")
  else
    lines[#lines + 1] = "  blocks: none (blocks = false)"
  end
  local tg = report.terrain
  if tg then
    local e = tg.extent
    lines[#lines + 1] = string_format("  terrain: ground out to x %s..%s, z %s..%s: %s apron rooms, %s grid rooms "
      .. "(%s m cells)", fmt_m(e[1]), fmt_m(e[3]), fmt_m(e[2]), fmt_m(e[4]), int(tg.apron_rooms), int(tg.rooms),
      fmt_m(tg.cell))
  end
  local c = report.counts or {}
  lines[#lines + 1] = string_format("  validation: %s errors, %s warnings", int(c.errors), int(c.warnings))
  for i, p in ipairs(report.problems or {}) do
    if i > 10 then
      lines[#lines + 1] = string_format("    (and %s more)", int(#report.problems - 10))
      break
    end
    lines[#lines + 1] = string_format("    %s %s %s: %s", p.severity, p.rule, p.path, p.message)
  end
  local s = report.seconds or {}
  lines[#lines + 1] = string_format("  seed %s; built in %.3f s (roads %.3f, blocks %.3f, finish %.3f)",
    tostring(report.seed), s.total or 0, s.roads or 0, s.blocks or 0, s.finish or 0)
  return table_concat(lines, "\n")
end

--- Tallest building a network's footprint may ask for (m); see `psdl.city.footprints`.
M.MAX_BUILDING_HEIGHT = require("psdl.city.footprints").MAX_BUILDING_HEIGHT

--- A city from a road-network table (docs/network.md; `psdl.city.from_network`).
-- @tparam table net
-- @tparam[opt] table opts options of `new`
-- @treturn City
function M.from_network(net, opts)
  return require("psdl.city.from_network").city(M, net, opts)
end

return M
