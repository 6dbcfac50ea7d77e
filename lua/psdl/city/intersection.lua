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

local function build_junction(city, b, n)
  local ends = n.ends
  local arms = {}
  local deg = #ends
  for i, e in ipairs(ends) do
    local spec = e.road.spec
    local cw = 0
    if n.class == "junction" and deg >= 3 then
      cw = e.road.opts.crosswalk
      if cw == nil then cw = spec.crosswalk end
      if cw == false then cw = 0 end
    end
    local md = n.opts.min_distance
    if md == nil and deg == 2 then md = city.transition or 5 end
    arms[i] = { dir = e.dir, profile = arm_profile(e), crosswalk = cw, min_distance = md }
    e.arm = i
  end
  local room = { name = n.name or string_format("%s %s", n.class, tostring(n.id)), tunnel = n.underground,
                 bridge = n.elevated and not n.underground }
  local tunnel_opts = tunnel.junction_options(city, n)
  local textures = styles.intersection(city.style, n.opts.textures)
  local ok, r, info = check.pcall(builder.trusted.intersection, b, {
    center = { n.x, n.y, n.z }, arms = arms, radius = n.opts.radius or city.radius or 5,
    arc_step = city.arc_step, textures = textures, room = room, tunnel = tunnel_opts })
  if not ok then error(string_format("%s: %s", network.node_label(n), tostring(r)), 0) end
  n.room, n.junction = r, info
  n.rooms = { r }
end

--- Build the intersection room of node n (classified, `n.ends` with their arms) into a
-- builder; sets `n.room`, `n.junction` (what `Builder:intersection` reports) and `n.rooms`.
-- @tparam table city
-- @tparam table b a `psdl.builder` Builder
-- @tparam table n the node
-- @raise "<node label>: <the builder's message>"
M.build = build_junction

return M
