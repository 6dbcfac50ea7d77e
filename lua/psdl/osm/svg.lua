--- An SVG picture of a road network (docs/network.md), for looking at what an import
-- produced before a city is built from it: road corridors drawn at the width the clean-up
-- assumed (so overlaps show as darker paint), centre lines, one-way arrows, junctions,
-- dead ends, bridges, tunnels and building footprints. North is up.
-- @module psdl.osm.svg

local network = require "psdl.osm.network"

local ipairs, pairs, type, tostring, tonumber, require = ipairs, pairs, type, tostring, tonumber, require
local string_format, table_concat, table_sort = string.format, table.concat, table.sort
local math_max, math_floor = math.max, math.floor

local M = {}

--- Colours by profile.
M.colours = {
  street = "#4a7bd0", one_sided = "#6f9be0", alley = "#9b6bc4", avenue = "#e08a2e",
  boulevard = "#3fa66a", freeway = "#d04a4a",
}

local function esc(s)
  return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

local function num(v)
  local s = string_format("%.2f", v)
  s = s:gsub("0+$", ""):gsub("%.$", "")
  if s == "-0" then s = "0" end
  return s
end

--- Render a network as SVG text.
-- @tparam table net network table
-- @tparam[opt] table opts `width` (pixels, default 1200), `dimensions` (overrides, as the
--   option of `psdl.osm.network`), `title` (text in the corner), `labels` (road names, default
--   false), `nodes` (draw node markers, default true)
-- @treturn string SVG
function M.render(net, opts)
  opts = opts or {}
  local dims = require("psdl.osm.fit").resolve(opts.dimensions)
  local b = net.bounds or { min_x = -100, min_z = -100, max_x = 100, max_z = 100 }
  local margin = 20
  local x0, z0, x1, z1 = b.min_x - margin, b.min_z - margin, b.max_x + margin, b.max_z + margin
  local w, h = x1 - x0, z1 - z0
  local px = opts.width or 1200
  local py = math_max(1, math_floor(px * h / w + 0.5))
  local out = {}
  local function put(...) out[#out + 1] = string_format(...) end
  put('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="%s %s %s %s">', px, py,
    num(x0), num(-z1), num(w), num(h))
  put('<defs><marker id="arrow" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="4" markerHeight="4" '
    .. 'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#222"/></marker></defs>')
  put('<rect x="%s" y="%s" width="%s" height="%s" fill="#f7f5ef"/>', num(x0), num(-z1), num(w), num(h))
  if net.bounds then
    put('<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#bbb" stroke-dasharray="4 4"/>',
      num(b.min_x), num(-b.max_z), num(b.max_x - b.min_x), num(b.max_z - b.min_z))
  end

  -- buildings
  put('<g fill="#c9c3b8" stroke="#8a8377" stroke-width="0.4">')
  for _, bd in ipairs(net.buildings or {}) do
    local pts = {}
    for _, p in ipairs(bd.outline) do pts[#pts + 1] = num(p[1]) .. "," .. num(-p[2]) end
    put('<polygon points="%s"/>', table_concat(pts, " "))
  end
  put("</g>")

  local nodes = net.nodes
  local function road_points(r)
    local a, z = nodes[r.from], nodes[r.to]
    local pts = { num(a.x) .. "," .. num(-a.z) }
    for _, v in ipairs(r.via or {}) do pts[#pts + 1] = num(v[1]) .. "," .. num(-v[2]) end
    pts[#pts + 1] = num(z.x) .. "," .. num(-z.z)
    return table_concat(pts, " ")
  end

  -- corridors, lowest layer first: tunnels, at grade, bridges
  local order = {}
  for i, r in ipairs(net.roads) do order[#order + 1] = i end
  local function level(r) return r.layer or (r.bridge and 1) or (r.tunnel and -1) or 0 end
  table_sort(order, function(p, q)
    local lp, lq = level(net.roads[p]), level(net.roads[q])
    if lp ~= lq then return lp < lq end
    return p < q
  end)
  for _, i in ipairs(order) do
    local r = net.roads[i]
    local width = network.footprint(r, dims)
    local colour = M.colours[r.profile] or "#777"
    local pts = road_points(r)
    if r.bridge then
      -- a deck: opaque, with a dark rim, over what it crosses
      put('<polyline points="%s" fill="none" stroke="#333" stroke-width="%s" stroke-linejoin="round"/>', pts,
        num(width + 2))
      put('<polyline points="%s" fill="none" stroke="#f7f5ef" stroke-width="%s" stroke-linejoin="round"/>', pts,
        num(width))
    end
    put('<polyline points="%s" fill="none" stroke="%s" stroke-opacity="%s" stroke-width="%s" '
      .. 'stroke-linejoin="round"%s/>', pts, colour, r.tunnel and "0.25" or "0.5", num(width),
      r.tunnel and ' stroke-dasharray="6 3"' or "")
  end
  -- centre lines
  for _, i in ipairs(order) do
    local r = net.roads[i]
    put('<polyline points="%s" fill="none" stroke="#222" stroke-width="0.6"%s/>', road_points(r),
      r.oneway and ' marker-mid="url(#arrow)" marker-end="url(#arrow)"' or "")
  end

  if opts.nodes ~= false then
    local degree = {}
    for _, r in ipairs(net.roads) do
      degree[r.from] = (degree[r.from] or 0) + 1
      degree[r.to] = (degree[r.to] or 0) + 1
    end
    local ids = {}
    for id in pairs(nodes) do ids[#ids + 1] = tostring(id) end
    table_sort(ids)
    for _, sid in ipairs(ids) do
      local id = nodes[sid] and sid or tonumber(sid)
      local n = nodes[id]
      local d = degree[id] or 0
      local fill = d >= 3 and "#c0392b" or d == 1 and "#2c3e50" or "#fff"
      put('<circle cx="%s" cy="%s" r="%s" fill="%s" stroke="#222" stroke-width="0.4"/>', num(n.x), num(-n.z),
        d >= 3 and "2.2" or "1.4", fill)
      if n.roundabout then
        put('<circle cx="%s" cy="%s" r="6" fill="none" stroke="#c0392b" stroke-width="0.8"/>', num(n.x), num(-n.z))
      end
    end
  end

  if opts.labels then
    local shown = {}
    for _, r in ipairs(net.roads) do
      if r.name and not shown[r.name] then
        shown[r.name] = true
        local a = nodes[r.from]
        put('<text x="%s" y="%s" font-size="5" font-family="sans-serif" fill="#000">%s</text>', num(a.x + 2),
          num(-a.z - 2), esc(r.name))
      end
    end
  end

  -- legend and attribution (sizes in metres of the drawing, scaled from the width)
  local fs = w / 80
  local y = -z1 + fs * 1.5
  local counts = {}
  for _, r in ipairs(net.roads) do counts[r.profile] = (counts[r.profile] or 0) + 1 end
  if opts.title then
    put('<text x="%s" y="%s" font-size="%s" font-family="sans-serif" fill="#000">%s</text>', num(x0 + fs),
      num(y), num(fs * 1.2), esc(opts.title))
    y = y + fs * 1.6
  end
  for _, p in ipairs({ "street", "one_sided", "alley", "avenue", "boulevard", "freeway" }) do
    if counts[p] then
      put('<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.6"/>', num(x0 + fs), num(y - fs * 0.8),
        num(fs * 1.6), num(fs * 0.9), M.colours[p])
      put('<text x="%s" y="%s" font-size="%s" font-family="sans-serif" fill="#000">%s (%d)</text>',
        num(x0 + fs * 3), num(y), num(fs), p, counts[p])
      y = y + fs * 1.3
    end
  end
  put('<text x="%s" y="%s" font-size="%s" font-family="sans-serif" fill="#333" text-anchor="end">%s</text>',
    num(x1 - fs), num(-z0 - fs * 0.6), num(fs * 0.8), esc(net.attribution or "© OpenStreetMap contributors"))
  put("</svg>")
  return table_concat(out, "\n") .. "\n"
end

return M
