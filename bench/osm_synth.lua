--- A synthetic OpenStreetMap extract of any size, for the importer's benchmark and specs:
-- a grid town of `cols` x `rows` blocks of `block` metres, built the way OSM maps a real
-- one, so every part of the clean-up has work to do:
--
-- * every block side is its own `highway=residential` way (thousands of ways), with a
--   shape point half way; every 7th street is one-way, alternating directions;
-- * every 5th row is an avenue mapped as two one-way `highway=primary` carriageways
--   16 m apart (a dual carriageway), with the cross streets noded on both;
-- * at every 6th intersection off the avenues a roundabout (`junction=roundabout`, a
--   ring of 12 nodes, radius `ring` metres) whose four streets end on the ring;
-- * a motorway (two one-way carriageways 24 m apart) along the middle of one block row,
--   running 120 m past the town at both ends, on bridges (`bridge=yes`, `layer=1`, 60 m
--   long) wherever it passes over a street, with no shared node (grade separated);
-- * four buildings per block with `building:levels`.
--
--     local synth = dofile("bench/osm_synth.lua")
--     local xml, info = synth.generate{ cols = 40, rows = 40 }
--
-- `info` gives the counts (`ways`, `nodes`, `roundabouts`, `avenues`, `bridges`, ...).

local M = {}

local LAT0, LON0 = 51.5, -0.1
local M_PER_DEG_LAT = 111320
local M_PER_DEG_LON = 111320 * math.cos(math.rad(LAT0))

--- Generate the XML.
-- @tparam[opt] table opts `cols` (default 20), `rows` (20), `block` (metres, 100),
--   `ring` (roundabout radius, 22), `buildings` (true), `motorway` (true), `angle`
--   (degrees: the town turned counter-clockwise, 0)
-- @treturn string OSM XML
-- @treturn table info
function M.generate(opts)
  opts = opts or {}
  local cols, rows = opts.cols or 20, opts.rows or 20
  local B = opts.block or 100
  local ring_r = opts.ring or 22
  local want_buildings = opts.buildings ~= false
  local want_motorway = opts.motorway ~= false

  local out = {}
  local nodes_xml, ways_xml = {}, {}
  local next_node, next_way = 1, 1
  local info = { ways = 0, nodes = 0, roundabouts = 0, avenues = 0, bridges = 0, buildings = 0, streets = 0 }

  local rot = math.rad(opts.angle or 0)
  local cr, sr = math.cos(rot), math.sin(rot)
  local function node(x, z)
    x, z = x * cr - z * sr, x * sr + z * cr
    local id = next_node
    next_node = next_node + 1
    nodes_xml[#nodes_xml + 1] = string.format('  <node id="%d" version="1" lat="%.8f" lon="%.8f"/>', id,
      LAT0 + z / M_PER_DEG_LAT, LON0 + x / M_PER_DEG_LON)
    info.nodes = info.nodes + 1
    return id
  end
  local function way(refs, tags)
    local id = next_way
    next_way = next_way + 1
    local parts = { string.format('  <way id="%d" version="1">', id) }
    for _, r in ipairs(refs) do parts[#parts + 1] = string.format('    <nd ref="%d"/>', r) end
    local keys = {}
    for k in pairs(tags) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      parts[#parts + 1] = string.format('    <tag k="%s" v="%s"/>', k, tostring(tags[k]))
    end
    parts[#parts + 1] = "  </way>"
    ways_xml[#ways_xml + 1] = table.concat(parts, "\n")
    info.ways = info.ways + 1
    return id
  end

  local avenue_row = function(j) return j % 5 == 2 and j > 0 and j < rows end
  local motorway_row = want_motorway and math.floor(rows / 2) + 0.5 or nil
  local function roundabout_at(i, j)
    return i % 6 == 3 and j % 6 == 4 and i < cols and j < rows and not avenue_row(j)
      and not avenue_row(j - 1) and not avenue_row(j + 1)
  end

  -- grid nodes (for avenue rows: one per carriageway); roundabouts: ring nodes
  local grid = {}      -- grid[i][j] = node id at an ordinary intersection
  local ring_att = {}  -- ring_att[i][j] = { east =, north =, west =, south = } ring node ids
  local avenue = {}    -- avenue[i][j] = { north = id, south = id } on avenue rows
  for i = 0, cols do
    grid[i], ring_att[i], avenue[i] = {}, {}, {}
    for j = 0, rows do
      local x, z = i * B, j * B
      if avenue_row(j) then
        avenue[i][j] = { north = node(x, z + 8), south = node(x, z - 8) }
      elseif roundabout_at(i, j) then
        local ids = {}
        for k = 0, 11 do
          local a = k * math.pi / 6
          ids[k] = node(x + ring_r * math.cos(a), z + ring_r * math.sin(a))
        end
        local refs = {}
        for k = 0, 12 do refs[#refs + 1] = ids[k % 12] end
        way(refs, { highway = "residential", junction = "roundabout", name = "Circus " .. i .. "-" .. j })
        info.roundabouts = info.roundabouts + 1
        ring_att[i][j] = { east = ids[0], north = ids[3], west = ids[6], south = ids[9] }
      else
        grid[i][j] = node(x, z)
      end
    end
  end

  local function street_name(kind, k) return string.format("%s %d", kind, k) end

  -- horizontal block sides (rows), avenues as two carriageways
  for j = 0, rows do
    if avenue_row(j) then
      info.avenues = info.avenues + 1
      local north, south = {}, {}
      for i = 0, cols do north[#north + 1] = avenue[i][j].north end
      for i = cols, 0, -1 do south[#south + 1] = avenue[i][j].south end
      -- carriageways split every 4 blocks, as mappers do
      local function emit(list, dir)
        local k = 1
        while k < #list do
          local last = math.min(#list, k + 4)
          local refs = {}
          for q = k, last do refs[#refs + 1] = list[q] end
          way(refs, { highway = "primary", oneway = "yes", name = street_name("Avenue", j), lanes = 2 })
          k = last
        end
      end
      emit(north, "east")
      emit(south, "west")
    else
      local oneway = j % 7 == 4
      for i = 0, cols - 1 do
        local a = ring_att[i][j] and ring_att[i][j].east or grid[i][j]
        local b = ring_att[i + 1][j] and ring_att[i + 1][j].west or grid[i + 1][j]
        local mid = node((i + 0.5) * B, j * B + 0.3)
        local refs = { a, mid, b }
        if oneway and j % 2 == 1 then refs = { b, mid, a } end
        way(refs, { highway = "residential", name = street_name("Row", j), oneway = oneway and "yes" or nil })
        info.streets = info.streets + 1
      end
    end
  end
  -- vertical block sides (columns)
  for i = 0, cols do
    local oneway = i % 7 == 4
    for j = 0, rows - 1 do
      local refs = {}
      local a = ring_att[i][j] and ring_att[i][j].north or (avenue[i][j] and avenue[i][j].north) or grid[i][j]
      local b = ring_att[i][j + 1] and ring_att[i][j + 1].south or (avenue[i][j + 1] and avenue[i][j + 1].south)
        or grid[i][j + 1]
      refs[1] = a
      refs[2] = node(i * B + 0.3, (j + 0.5) * B)
      refs[3] = b
      if avenue[i][j] then
        -- the piece across the avenue's median belongs to this block side too
        table.insert(refs, 1, avenue[i][j].south)
      end
      if oneway and i % 2 == 1 then
        local rev = {}
        for k = #refs, 1, -1 do rev[#rev + 1] = refs[k] end
        refs = rev
      end
      way(refs, { highway = "residential", name = street_name("Column", i), oneway = oneway and "yes" or nil })
      info.streets = info.streets + 1
    end
  end

  -- the motorway: two carriageways, bridges over every column street
  if motorway_row then
    local zc = motorway_row * B
    for _, side in ipairs({ { dz = 12, dir = 1 }, { dz = -12, dir = -1 } }) do
      local z = zc + side.dz
      local xs = {}
      -- nodes: at-grade points half way between columns, bridge ends 30 m either side of a column
      local points = {}
      points[#points + 1] = { x = -1.2 * B }
      for i = 0, cols do
        points[#points + 1] = { x = i * B - 30, bridge_start = true }
        points[#points + 1] = { x = i * B + 30, bridge_end = true }
      end
      points[#points + 1] = { x = cols * B + 1.2 * B }
      if side.dir < 0 then
        local rev = {}
        for k = #points, 1, -1 do rev[#rev + 1] = points[k] end
        points = rev
      end
      local ids = {}
      for k, p in ipairs(points) do ids[k] = node(p.x, z) end
      for k = 1, #points - 1 do
        local p, q = points[k], points[k + 1]
        local on_bridge = math.abs(((p.x + q.x) / 2) / B - math.floor(((p.x + q.x) / 2) / B + 0.5)) < 0.2
        local tags = { highway = "motorway", oneway = "yes", ref = "M1", lanes = 3 }
        if on_bridge then
          tags.bridge, tags.layer = "yes", 1
          info.bridges = info.bridges + 1
        end
        way({ ids[k], ids[k + 1] }, tags)
      end
    end
  end

  -- buildings: four per block, away from the streets
  if want_buildings then
    for i = 0, cols - 1 do
      for j = 0, rows - 1 do
        local x0, z0 = i * B, j * B
        local skip = motorway_row and math.abs((j + 0.5) - motorway_row) < 0.6
        if not skip then
          for q = 0, 3 do
            local bx = x0 + 22 + (q % 2) * 32
            local bz = z0 + 22 + math.floor(q / 2) * 32
            local w, h = 22, 22
            local refs = { node(bx, bz), node(bx + w, bz), node(bx + w, bz + h), node(bx, bz + h) }
            refs[5] = refs[1]
            way(refs, { building = "yes", ["building:levels"] = 2 + (i + j + q) % 6 })
            info.buildings = info.buildings + 1
          end
        end
      end
    end
  end

  out[1] = "<?xml version='1.0' encoding='UTF-8'?>"
  out[2] = '<osm version="0.6" generator="psdlkit bench/osm_synth.lua">'
  out[3] = table.concat(nodes_xml, "\n")
  out[4] = table.concat(ways_xml, "\n")
  out[5] = "</osm>"
  return table.concat(out, "\n") .. "\n", info
end

return M
