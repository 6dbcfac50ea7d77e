--- Ways that go back over themselves: an out-and-back way (nodes A, B, A: a dead-end street
-- mapped there and back), a lollipop mapped round its ring and back down its stem (A, B, C,
-- D, B, A), a spur that doubles back on its last stretch. Each segment a way travels a second
-- time (the same two nodes, either direction) is the same piece of road: it is left out, so
-- the way becomes one road to its far end (the stem and ring of a lollipop, a dead end to B),
-- instead of a flat loop from A back to A that the clean-up could only remove with its whole
-- length (`psdl.osm.clean.loops`).
--
-- A one-way way that comes back over a stretch is driven both ways there: that stretch
-- becomes a two-way road (`both`), the rest keeps its direction.
-- @module psdl.osm.retrace

local type = type

local M = {}

--- The runs of a way's node list without the segments it travels a second time.
-- @tparam table refs the way's nodes in order: OSM node ids (integers) and clip points
--   (tables, `psdl.osm.network`'s points where the way leaves the area; never retraced)
-- @tparam boolean oneway the way is one-way: runs are also cut where a retraced stretch
--   begins or ends, so that `both` holds for a whole run
-- @treturn nil when no segment is travelled twice (the way stays as it is)
-- @treturn[2] table `{ {refs = {...}, both = boolean}, ... }`: the runs of two or more
--   nodes, in order; `both` when the way comes back over (some of, with `oneway` all of) it
-- @treturn[2] integer how many segments were left out
function M.runs(refs, oneway)
  local n = #refs
  -- a retrace revisits a node: most ways revisit none (a closed way only its first)
  local seen, again = {}, false
  for i = 1, n do
    local r = refs[i]
    if type(r) == "number" then
      if seen[r] then again = true; break end
      seen[r] = true
    end
  end
  if not again then return nil end
  -- the segments in order: retraced (a second time over the same two nodes) or not, and
  -- whether a later segment comes back over it
  local first = {} -- first[a][b] = index of the first segment between nodes a and b
  local retraced, back = {}, {}
  local left = 0
  for i = 1, n - 1 do
    local a, b = refs[i], refs[i + 1]
    if type(a) == "number" and type(b) == "number" then
      if a > b then a, b = b, a end
      local row = first[a]
      if not row then row = {}; first[a] = row end
      local j = row[b]
      if j then
        retraced[i], back[j] = true, true
        left = left + 1
      else
        row[b] = i
      end
    end
  end
  if left == 0 then return nil end
  local runs, cur, both = {}, nil, false
  local function close()
    if cur and #cur >= 2 then runs[#runs + 1] = { refs = cur, both = both } end
    cur, both = nil, false
  end
  for i = 1, n - 1 do
    if retraced[i] then
      close()
    else
      if cur and oneway and (back[i] or false) ~= both then close() end
      if not cur then cur = { refs[i] } end
      cur[#cur + 1] = refs[i + 1]
      both = both or back[i] or false
    end
  end
  close()
  return runs, left
end

return M
