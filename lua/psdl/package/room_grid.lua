-- psdl.package.room_grid: a sparse grid of square cells that buckets boxes (rooms, road rooms)
-- so that the companion generators (bai_gen culling lists, cpvs_gen `close` rooms) look only at
-- the boxes near a room instead of at every box.
--
-- Every walk is bounded by what the grid actually holds, never by the size of a box: a box
-- that spans more than MAX_CELLS cells (a room with one far vertex, e.g. x = 1e9 m, which the
-- PSDL format allows and `psdl validate` only warns about) is kept in an "oversize" list that
-- every query returns, and a query visits only the occupied rows and cells inside its range
-- (found by walking the range or the occupied cells, whichever is fewer). A query returns a
-- superset of the boxes within `margin` cells; callers filter by their real distance, so the
-- result does not depend on the bucketing.
local math, pairs, ipairs = math, pairs, ipairs
local floor, max, min = math.floor, math.max, math.min

local M = {}

--- Largest number of cells one box is bucketed into; bigger boxes go to the oversize list.
M.MAX_CELLS = 4096

local Grid = {}
Grid.__index = Grid

--- A new empty grid.
-- @param cell cell side in metres (> 0)
-- @return Grid with :add(box, id) and :query(box, margin, fn)
function M.new(cell)
  return setmetatable({ cell = cell, rows = {}, oversize = {}, nrows = 0,
                        lo_i = math.huge, hi_i = -math.huge, lo_j = math.huge, hi_j = -math.huge }, Grid)
end

--- Bucket `id` in every cell its box touches (or in the oversize list).
-- @param b box {minx, minz, maxx, maxz} in metres; an empty box (minx > maxx) or NaN is skipped
-- @param id any value; a cell holds an id once per consecutive add (the caller's ids ascend)
function Grid:add(b, id)
  if not (b[1] <= b[3] and b[2] <= b[4]) then return end
  local c = self.cell
  -- (the count in floating point, from the box: integer cell indices of a 1e12 m box would
  -- overflow when multiplied)
  if ((b[3] - b[1]) / c + 2.0) * ((b[4] - b[2]) / c + 2.0) > M.MAX_CELLS then
    local o = self.oversize
    if o[#o] ~= id then o[#o + 1] = id end
    return
  end
  local i0, i1, j0, j1 = floor(b[1] / c), floor(b[3] / c), floor(b[2] / c), floor(b[4] / c)
  local rows = self.rows
  for i = i0, i1 do
    local row = rows[i]
    if not row then row = { n = 0 }; rows[i] = row; self.nrows = self.nrows + 1 end
    for j = j0, j1 do
      local list = row[j]
      if not list then
        list = {}; row[j] = list
        row.n = row.n + 1
      end
      if list[#list] ~= id then list[#list + 1] = id end
    end
  end
  self.lo_i, self.hi_i = min(self.lo_i, i0), max(self.hi_i, i1)
  self.lo_j, self.hi_j = min(self.lo_j, j0), max(self.hi_j, j1)
end

--- Call fn(id) for every id bucketed in the cells within `margin` cells of box b, then for
-- every oversize id (ids may repeat; the caller dedups). The walk is clamped to the occupied
-- cells, so its cost is bounded by the grid's contents whatever the box's size.
-- @param b box {minx, minz, maxx, maxz} in metres
-- @param margin whole cells added on each side
function Grid:query(b, margin, fn)
  if b[1] <= b[3] and b[2] <= b[4] and self.nrows > 0 then
    local c = self.cell
    local i0 = max(floor(b[1] / c) - margin, self.lo_i)
    local i1 = min(floor(b[3] / c) + margin, self.hi_i)
    local j0 = max(floor(b[2] / c) - margin, self.lo_j)
    local j1 = min(floor(b[4] / c) + margin, self.hi_j)
    local function visit_row(row)
      if (j1 + 0.0) - j0 < row.n then
        for j = j0, j1 do
          local list = row[j]
          if list then for _, id in ipairs(list) do fn(id) end end
        end
      else
        for j, list in pairs(row) do
          if j ~= "n" and j >= j0 and j <= j1 then for _, id in ipairs(list) do fn(id) end end
        end
      end
    end
    if i0 <= i1 and j0 <= j1 then
      local rows = self.rows
      if (i1 + 0.0) - i0 < self.nrows then
        for i = i0, i1 do
          local row = rows[i]
          if row then visit_row(row) end
        end
      else
        for i, row in pairs(rows) do
          if i >= i0 and i <= i1 then visit_row(row) end
        end
      end
    end
  end
  for _, id in ipairs(self.oversize) do fn(id) end
end

return M
