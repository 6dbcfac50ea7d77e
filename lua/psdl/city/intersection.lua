--- Intersection rooms of a `psdl.city` (city-layout.md §1.4): one room at every node where
-- three or more roads meet (a junction), where two roads meet at a sharp angle (a bend) or
-- with different profiles (a transition), and a turning circle at a dead end; the arms are
-- the ends of the roads at the node (`psdl.city.network`), the room is built by
-- `Builder:intersection`.
--
-- Internal to `psdl.city` (`psdl.city.road` calls `build`).
-- @module psdl.city.intersection

local builder = require "psdl.builder"
local network = require "psdl.city.network"
local tunnel = require "psdl.city.tunnel"
local styles = require "psdl.styles"
local check = require "psdl.check"

local type, error, ipairs, tostring, pcall = type, error, ipairs, tostring, pcall
local string_format = string.format

local M = {}

local function arm_profile(e)
  local bp = e.road.spec.builder
  if e.at == "a" then return bp end
  return network.mirrored(bp)
end

local trusted_junction = builder.trusted.junction

local function build_junction(city, b, n)
  local ends = n.ends
  local deg = #ends
  local crossing = n.class == "junction" and deg >= 3
  local md = n.opts.min_distance
  if md == nil and deg == 2 then md = city.transition or 5 end
  -- the arms flat, 5 values each (core.junction_store): dx, dz, profile, crosswalk, min_distance
  -- (made at the size of four arms, the usual most: no growth on the way)
  local arms = { nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil }
  for i, e in ipairs(ends) do
    local cw = 0
    if crossing then
      cw = e.road.opts.crosswalk
      if cw == nil then cw = e.road.spec.crosswalk end
      if cw == false then cw = 0 end
    end
    local d, q = e.dir, 5 * i
    arms[q - 4], arms[q - 3], arms[q - 2], arms[q - 1], arms[q] = d[1], d[2], arm_profile(e), cw or 0, md or 0
    e.arm = i
  end
  local textures = styles.intersection(city.style, n.opts.textures)
  local ok, r, distance, sections = check.pcall(trusted_junction, b, n.x, n.y, n.z, arms, n.opts.radius or city.radius or 5,
    city.arc_step, textures, n.name or string_format("%s %s", n.class, tostring(n.id)), n.underground,
    n.elevated and not n.underground, tunnel.junction_options(city, n))
  if not ok then error(string_format("%s: %s", network.node_label(n), tostring(r)), 0) end
  -- what psdl.city.road reads of the intersection: per arm (n.ends[i].arm = i) where its road
  -- starts (m from the node) and its end section (a flat x, y, z array, outward left to right)
  n.room, n.junction = r, { distance = distance, sections = sections }
  n.rooms = { r }
end

--- Build the intersection room of node n (classified, `n.ends` with their arms) into a
-- builder (one `builder.trusted.junction` call); sets `n.room`, `n.junction` (`{distance =
-- {m per arm}, sections = {flat x, y, z per arm}}`) and `n.rooms`.
-- @tparam table city
-- @tparam table b a `psdl.builder` Builder
-- @tparam table n the node
-- @raise "<node label>: <the builder's message>"
M.build = build_junction

return M
