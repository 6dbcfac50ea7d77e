--- The outer edge of a city's ground apron: the line `margin` metres out from the road
-- network's outlines, so that the apron follows the roads instead of filling the network's
-- bounding box (a lone 3.3 km diagonal road needed over 2,000 apron rooms in its box; along
-- the road the number of rooms grows with its length).
--
-- The distance from the network is sampled on a square grid (cells of `cell` metres; 0 inside
-- an outline), and the rings are the contour at `margin` (marching squares, the saddle cells
-- decided by the cell's mean, points interpolated on the grid edges): closed, simple, never
-- crossing each other, each at least `margin - cell` from every outline. Land that the band
-- encloses without touching (a bay of a concave network wider than twice the margin) stays
-- inside the ring: only outer rings are returned.
--
-- The per-element work (distance grid, contour tracing, nearest points of the parts) is C:
-- `psdl.core.apron_rings` (src/psdl_apron.c; src/psdl_apron.h fixes every step of the method).
-- @module psdl.city.blocks.apron

local core = require "psdl.core"

local M = {}

--- The rings of the apron's outer edge around some network outlines. Parts of the network
-- further apart than twice the margin would get rings of their own, and no ground would link
-- them (the validator's `unreachable` rule: the game walks neighbour links to find the car):
-- each part is joined to the nearest other part by a straight strip of apron (the segment
-- between their closest outline points, `margin` wide each side), in rounds until one ring
-- is left.
-- @tparam table outlines rings of points `{x, y, z}` (the plan is x, z), any winding
-- @tparam number margin metres (> 0)
-- @tparam number cell grid spacing, metres (> 0; at most `margin / 2` is sensible)
-- @raise when the distance grid would exceed 4.2 million corners (a cell far too small)
-- @treturn table rings, each a list of `{x, z}` in retail winding (S < 0, psdl-format §4.2),
--   no two consecutive points equal (one ring, unless joining failed)
function M.rings(outlines, margin, cell)
  return core.apron_rings(outlines, margin, cell)
end

return M
