-- The OpenStreetMap clean-up's work grows about linearly with dense inputs (newcomer
-- finding #7): a long straight way of short steps and many close parallel ways. Bounded on
-- the clean-up's own work counter (`psdl.osm.fit.stats`), not on wall time.

local osm = require "psdl.osm"
local fit = require "psdl.osm.fit"

-- Write an extract of `ways` parallel north-south ways of `n` nodes each, `dlat` degrees
-- between nodes and `dlon` degrees between ways; returns its path.
local function extract(ways, n, dlat, dlon)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write('<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6">\n')
  for w = 0, ways - 1 do
    for i = 1, n do
      f:write(string.format('<node id="%d" lat="%.9f" lon="%.9f"/>\n', w * n + i, 50 + i * dlat, 14 + w * dlon))
    end
  end
  for w = 0, ways - 1 do
    f:write(string.format('<way id="%d">', w + 1))
    for i = 1, n do f:write(string.format('<nd ref="%d"/>', w * n + i)) end
    f:write('<tag k="highway" v="residential"/></way>\n')
  end
  f:write("</osm>\n")
  f:close()
  return path
end

local function pairs_looked_at(path)
  local before = fit.stats.crossing_pairs
  local net, report = osm.import(path)
  os.remove(path)
  assert(net, report)
  return fit.stats.crossing_pairs - before, net
end

describe("osm clean-up on dense inputs", function()
  it("looks at a bounded number of segment pairs for a 20,000-node straight way", function()
    local work, net = pairs_looked_at(extract(1, 20000, 1e-6, 0))
    assert.is_true(#net.roads >= 1)
    -- all-pairs within 50 m cells would be about 20,000 x 900 = 18 million
    assert.is_true(work < 20000 * 40, "crossing pairs looked at: " .. work)
  end)

  it("looks at a bounded number of segment pairs for 100 parallel ways of 100 nodes", function()
    local work, net = pairs_looked_at(extract(100, 100, 1e-5, 1e-5))
    assert.is_true(#net.roads >= 1)
    -- 50 m cells: about 10,000 x 3,000 pairs in each of several rounds
    assert.is_true(work < 10000 * 100, "crossing pairs looked at: " .. work)
  end)
end)
