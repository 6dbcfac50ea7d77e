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
-- @module psdl.city.blocks.apron

local ipairs = ipairs
local sqrt, floor, ceil, max, min, huge = math.sqrt, math.floor, math.ceil, math.max, math.min, math.huge
local table_sort = table.sort

local M = {}

-- squared plan distance from (x, z) to segment a-b ({x, y, z} points)
local function d2seg(x, z, ax, az, bx, bz)
  local dx, dz = bx - ax, bz - az
  local l2 = dx * dx + dz * dz
  local t = l2 > 0 and ((x - ax) * dx + (z - az) * dz) / l2 or 0
  if t < 0 then t = 0 elseif t > 1 then t = 1 end
  local ex, ez = ax + t * dx - x, az + t * dz - z
  return ex * ex + ez * ez
end

-- The distance field of some outlines (rings of {x, y, z}): squared plan distances at the
-- corners of a grid reaching two cells past the band, kept only below (margin + 1.5 cell)².
local function new_field(outlines, margin, cell)
  local x0, z0, x1, z1 = huge, huge, -huge, -huge
  for _, H in ipairs(outlines) do
    for _, p in ipairs(H) do
      if p[1] < x0 then x0 = p[1] end
      if p[1] > x1 then x1 = p[1] end
      if p[3] < z0 then z0 = p[3] end
      if p[3] > z1 then z1 = p[3] end
    end
  end
  if x0 > x1 then return nil end
  local pad = margin + 2 * cell
  local ni, nj = ceil((x1 - x0 + 2 * pad) / cell), ceil((z1 - z0 + 2 * pad) / cell)
  local reach = margin + 1.5 * cell
  return { d = {}, gx = x0 - pad, gz = z0 - pad, ni = ni, nj = nj, W = ni + 1, cell = cell, margin = margin,
           reach = reach, reach2 = reach * reach }
end

-- Lower the field to the distance from segment a-b (plan points).
local function add_segment(F, ax, az, bx, bz)
  local d, gx, gz, cell, W, reach, reach2 = F.d, F.gx, F.gz, F.cell, F.W, F.reach, F.reach2
  local i0 = max(0, floor((min(ax, bx) - reach - gx) / cell))
  local i1 = min(F.ni, ceil((max(ax, bx) + reach - gx) / cell))
  local j0 = max(0, floor((min(az, bz) - reach - gz) / cell))
  local j1 = min(F.nj, ceil((max(az, bz) + reach - gz) / cell))
  for j = j0, j1 do
    local z = gz + j * cell
    local row = j * W
    for i = i0, i1 do
      local e = d2seg(gx + i * cell, z, ax, az, bx, bz)
      if e < reach2 then
        local old = d[row + i]
        if not old or e < old then d[row + i] = e end
      end
    end
  end
end

-- Distance 0 at the corners inside an outline (scanlines along each grid row).
local function fill_inside(F, H)
  local d, gx, gz, cell, W = F.d, F.gx, F.gz, F.cell, F.W
  local n = #H
  local rows = {}
  for k = 1, n do
    local a, b = H[k], H[k % n + 1]
    local az, bz = a[3], b[3]
    if az ~= bz then
      local lo, hi = min(az, bz), max(az, bz)
      for j = max(0, ceil((lo - gz) / cell)), min(F.nj, floor((hi - gz) / cell)) do
        local z = gz + j * cell
        if (az <= z) ~= (bz <= z) then -- half-open: each crossing counted once
          local x = a[1] + (z - az) * (b[1] - a[1]) / (bz - az)
          local l = rows[j]
          if not l then l = {}; rows[j] = l end
          l[#l + 1] = x
        end
      end
    end
  end
  for j, xs in pairs(rows) do
    table_sort(xs)
    local row = j * W
    for k = 1, #xs - 1, 2 do
      for i = max(0, ceil((xs[k] - gx) / cell)), min(F.ni, floor((xs[k + 1] - gx) / cell)) do
        d[row + i] = 0
      end
    end
  end
end

-- The outer rings of the field's contour at its margin.
local function contour(F)
  local d, gx, gz, cell, W, ni, nj, margin, reach = F.d, F.gx, F.gz, F.cell, F.W, F.ni, F.nj, F.margin, F.reach
  local m2 = margin * margin
  local function val(i, j) -- distance at a corner (far corners: beyond the margin)
    local e = d[j * W + i]
    if not e then return reach end
    return sqrt(e)
  end
  -- contour points on grid edges, shared by the two cells beside each edge
  local points = {}
  local function edge_point(i, j, horizontal)
    local key = (j * W + i) * 2 + (horizontal and 1 or 0)
    local p = points[key]
    if p then return key end
    local i2, j2 = horizontal and i + 1 or i, horizontal and j or j + 1
    local va, vb = val(i, j), val(i2, j2)
    local t = (va ~= vb) and (margin - va) / (vb - va) or 0.5
    if t < 0 then t = 0 elseif t > 1 then t = 1 end
    local xa, za = gx + i * cell, gz + j * cell
    points[key] = { xa + t * (i2 - i) * cell, za + t * (j2 - j) * cell }
    return key
  end
  -- each cell's segments run with the inside on their left: from an edge whose corners go
  -- in -> out (walking round the cell counter-clockwise) to one going out -> in
  local nxt = {}
  for j = 0, nj - 1 do
    local row, up = j * W, (j + 1) * W
    for i = 0, ni - 1 do
      local e00, e10, e11, e01 = d[row + i], d[row + i + 1], d[up + i + 1], d[up + i]
      local c00, c10 = e00 ~= nil and e00 < m2, e10 ~= nil and e10 < m2
      local c11, c01 = e11 ~= nil and e11 < m2, e01 ~= nil and e01 < m2
      if not (c00 == c10 and c10 == c11 and c11 == c01) then
        -- edges counter-clockwise: bottom, right, top, left, with their corner pairs
        local E = {
          { c00, c10, i, j, true }, { c10, c11, i + 1, j, false },
          { c11, c01, i, j + 1, true }, { c01, c00, i, j, false },
        }
        local outs, ins = {}, {}
        for k = 1, 4 do
          local e = E[k]
          if e[1] and not e[2] then outs[#outs + 1] = k
          elseif e[2] and not e[1] then ins[#ins + 1] = k end
        end
        local pairs_ = {}
        if #outs == 1 then
          pairs_[1] = { outs[1], ins[1] }
        else -- a saddle: joined through the middle when the cell's mean is inside
          local mean = (val(i, j) + val(i + 1, j) + val(i + 1, j + 1) + val(i, j + 1)) / 4
          local joined = mean < margin
          for _, o in ipairs(outs) do
            -- the next (joined) or previous (apart) out -> in edge round the cell
            local step = joined and 1 or -1
            local k = o
            repeat k = (k - 1 + step) % 4 + 1 until E[k][2] and not E[k][1]
            pairs_[#pairs_ + 1] = { o, k }
          end
        end
        for _, pr in ipairs(pairs_) do
          local a, b = E[pr[1]], E[pr[2]]
          nxt[edge_point(a[3], a[4], a[5])] = edge_point(b[3], b[4], b[5])
        end
      end
    end
  end
  -- chain the segments into loops; keep the outer ones (counter-clockwise, inside on the left)
  local keys = {}
  for k in pairs(nxt) do keys[#keys + 1] = k end
  table_sort(keys)
  local used, rings = {}, {}
  for _, k0 in ipairs(keys) do
    if not used[k0] then
      local ring, k = {}, k0
      while k and not used[k] do
        used[k] = true
        local p = points[k]
        local q = ring[#ring]
        if not q or q[1] ~= p[1] or q[2] ~= p[2] then ring[#ring + 1] = p end
        k = nxt[k]
      end
      while #ring > 1 and ring[1][1] == ring[#ring][1] and ring[1][2] == ring[#ring][2] do ring[#ring] = nil end
      local s = 0
      for a = 1, #ring do
        local p, q = ring[a], ring[a % #ring + 1]
        s = s + p[1] * q[2] - q[1] * p[2]
      end
      if #ring >= 3 and s > 0 then -- outer: reversed to retail winding
        local out = {}
        for a = #ring, 1, -1 do out[#out + 1] = ring[a] end
        rings[#rings + 1] = out
      end
    end
  end
  return rings
end

-- Is (x, z) inside ring ({x, z} points)? (crossing number)
local function inside(ring, x, z)
  local c, n = false, #ring
  local p = ring[n]
  for i = 1, n do
    local q = ring[i]
    if (q[2] > z) ~= (p[2] > z) and x < q[1] + (z - q[2]) * (p[1] - q[1]) / (p[2] - q[2]) then c = not c end
    p = q
  end
  return c
end

--- The rings of the apron's outer edge around some network outlines. Parts of the network
-- further apart than twice the margin would get rings of their own, and no ground would link
-- them (the validator's `unreachable` rule: the game walks neighbour links to find the car):
-- each part is joined to the nearest other part by a straight strip of apron (the segment
-- between their closest outline points, `margin` wide each side), in rounds until one ring
-- is left.
-- @tparam table outlines rings of points `{x, y, z}` (the plan is x, z), any winding
-- @tparam number margin metres (> 0)
-- @tparam number cell grid spacing, metres (> 0; at most `margin / 2` is sensible)
-- @treturn table rings, each a list of `{x, z}` in retail winding (S < 0, psdl-format §4.2),
--   no two consecutive points equal (one ring, unless joining failed)
function M.rings(outlines, margin, cell)
  local F = new_field(outlines, margin, cell)
  if not F then return {} end
  for _, H in ipairs(outlines) do
    local n = #H
    for k = 1, n do
      local a, b = H[k], H[k % n + 1]
      add_segment(F, a[1], a[3], b[1], b[3])
    end
  end
  for _, H in ipairs(outlines) do fill_inside(F, H) end
  local rings = contour(F)
  -- a bucket grid of the outline points (each with its outline), for the nearest points
  local B = 2 * margin
  local buckets = {}
  for k, H in ipairs(outlines) do
    for _, p in ipairs(H) do
      local key = floor(p[1] / B) * 1000003 + floor(p[3] / B)
      local l = buckets[key]
      if not l then l = {}; buckets[key] = l end
      l[#l + 1] = { p, k }
    end
  end
  local span = ceil(max(F.ni, F.nj) * cell / B) + 1
  for _ = 1, #outlines do
    if #rings <= 1 then break end
    -- the ring of each outline (by its first point), and the points of each ring
    local group, count = {}, {}
    for k, H in ipairs(outlines) do
      local p = H[1]
      for g, ring in ipairs(rings) do
        if inside(ring, p[1], p[3]) then
          group[k] = g
          count[g] = (count[g] or 0) + #H
          break
        end
      end
    end
    local largest, ln = nil, -1
    for g = 1, #rings do
      if (count[g] or 0) > ln then largest, ln = g, count[g] or 0 end
    end
    -- each ring's outline point nearest to a point of another ring (buckets searched in
    -- growing squares), joined to it; the largest ring waits for the others to join it
    local added = 0
    for g = 1, #rings do
      local best, bp, bq = huge, nil, nil
      if g == largest then goto next_ring end
      for k, H in ipairs(outlines) do
        if group[k] == g then
          for _, p in ipairs(H) do
            local bx, bz = floor(p[1] / B), floor(p[3] / B)
            for r = 0, span do
              if r > 1 and ((r - 1) * B) ^ 2 >= best then break end
              for i = bx - r, bx + r do
                for j = bz - r, bz + r do
                  if i == bx - r or i == bx + r or j == bz - r or j == bz + r then
                    local l = buckets[i * 1000003 + j]
                    if l then
                      for _, e in ipairs(l) do
                        local q, h = e[1], group[e[2]]
                        if h and h ~= g then
                          local dx, dz = q[1] - p[1], q[3] - p[3]
                          local dd = dx * dx + dz * dz
                          if dd < best then best, bp, bq = dd, p, q end
                        end
                      end
                    end
                  end
                end
              end
            end
          end
        end
      end
      if bp then
        add_segment(F, bp[1], bp[3], bq[1], bq[3])
        added = added + 1
      end
      ::next_ring::
    end
    if added == 0 then break end
    rings = contour(F)
  end
  return rings
end

return M
