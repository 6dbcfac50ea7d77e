--- Builder benchmark: a grid city of N x N intersections 80 m apart joined by streets
-- (10 m carriageway, 3 m sidewalks, sections every 5 m), a block room in every face, a road
-- record per street.
--
--   lua5.4 bench/bench_builder.lua [N=20] [repeat=3] [coarse]
--
-- N = 20 gives 400 intersections, 760 street rooms and 361 blocks: 1,521 rooms (London
-- has about 1,341). Each block's outline holds every point of the streets and intersections
-- around it, as a city generator gives it; with `coarse` it has only its four corners, and
-- finish() must repair about 19,000 T-junctions (a stress test of the repair). Prints the
-- time of building and of finish(), best of `repeat` runs; PSDL_PHASES=1 splits finish().
-- Grids above 20 x 20 pass the vertex budget and are timed without validation (N = 63 has
-- about ten times the rooms of N = 20).
local here = (arg and arg[0] or "bench/bench_builder.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or here .. "/../build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"

local N = tonumber(arg and arg[1]) or 20
local runs = tonumber(arg and arg[2]) or 3
local coarse = arg and arg[3] == "coarse"
local spacing = 80

local function build()
  -- past ~28 x 28 the grid exceeds one PSDL's vertex budget: time it without the limit
  -- and without validation (such a document cannot be written)
  local budget = nil
  if N > 20 then budget = false end
  local b = psdl.builder.new{ style = "london", vertex_budget = budget }
  local P = { kind = "road", left = 5, right = 5, sidewalk_left = 3, sidewalk_right = 3 }
  local X = {}
  for i = 0, N - 1 do
    X[i] = {}
    for j = 0, N - 1 do
      local arms = {}
      local dirs = {}
      if i < N - 1 then arms[#arms + 1] = { dir = { 1, 0 }, profile = P }; dirs.e = #arms end
      if j < N - 1 then arms[#arms + 1] = { dir = { 0, 1 }, profile = P }; dirs.n = #arms end
      if i > 0 then arms[#arms + 1] = { dir = { -1, 0 }, profile = P }; dirs.w = #arms end
      if j > 0 then arms[#arms + 1] = { dir = { 0, -1 }, profile = P }; dirs.s = #arms end
      local _, info = b:intersection{ center = { i * spacing, 0, j * spacing }, arms = arms, radius = 4 }
      X[i][j] = { info = info, dirs = dirs }
    end
  end
  local S = {}
  for i = 0, N - 1 do
    S[i] = {}
    for j = 0, N - 1 do
      local a = X[i][j]
      S[i][j] = {}
      if i < N - 1 then
        local c = X[i + 1][j]
        local rooms, info = b:street{ from = { a.info, a.dirs.e }, to = { c.info, c.dirs.w }, profile = P,
                                      room = { prop_rule = 4 } }
        b:road_record{ rooms = rooms }
        S[i][j].e = info
      end
      if j < N - 1 then
        local c = X[i][j + 1]
        local rooms, info = b:street{ from = { a.info, a.dirs.n }, to = { c.info, c.dirs.s }, profile = P }
        b:road_record{ rooms = rooms }
        S[i][j].n = info
      end
    end
  end
  -- blocks: the face between four intersections
  local h = 5 + 3
  for i = 0, N - 2 do
    for j = 0, N - 2 do
      local x0, z0, x1, z1 = i * spacing + h, j * spacing + h, (i + 1) * spacing - h, (j + 1) * spacing - h
      local outline
      if coarse then
        outline = { { x0, 0.15, z0 }, { x0, 0.15, z1 }, { x1, 0.15, z1 }, { x1, 0.15, z0 } }
      else
        -- every street and intersection point on the face's rectangle, in angular order
        local pts = {}
        local cx, cz = (x0 + x1) / 2, (z0 + z1) / 2
        local function take(list)
          for _, p in ipairs(list) do
            local x, z = p[1], p[3]
            if (math.abs(x - x0) < 1e-6 or math.abs(x - x1) < 1e-6) and z > z0 - 1e-6 and z < z1 + 1e-6
               or (math.abs(z - z0) < 1e-6 or math.abs(z - z1) < 1e-6) and x > x0 - 1e-6 and x < x1 + 1e-6 then
              pts[#pts + 1] = { p, math.atan(z - cz, x - cx) }
            end
          end
        end
        for _, node in ipairs({ X[i][j], X[i + 1][j], X[i + 1][j + 1], X[i][j + 1] }) do take(node.info.outline) end
        for _, st in ipairs({ S[i][j].e, S[i][j].n, S[i][j + 1].e, S[i + 1][j].n }) do take(st.left); take(st.right) end
        table.sort(pts, function(a, c) return a[2] > c[2] end)
        outline = {}
        for k, q in ipairs(pts) do
          if k == 1 or math.abs(q[2] - pts[k - 1][2]) > 1e-9 then outline[#outline + 1] = q[1] end
        end
      end
      b:block{ outline = outline, texture = b.style.ground.grass[1] }
    end
  end
  return b
end

local best_build, best_finish, doc, report = math.huge, math.huge, nil, nil
for _ = 1, runs do
  collectgarbage()
  local t0 = os.clock()
  local b = build()
  local t1 = os.clock()
  doc, report = b:finish{ validate = N <= 20 }
  local t2 = os.clock()
  best_build = math.min(best_build, t1 - t0)
  best_finish = math.min(best_finish, t2 - t1)
end
print(string.format("grid %dx%d: %d rooms, %d vertices, %d road records, %d T-junctions repaired",
  N, N, report.rooms, report.vertices, #doc.roads, report.tjunctions.repaired))
print(string.format("build %.3f s + finish %.3f s = %.3f s (best of %d)", best_build, best_finish,
  best_build + best_finish, runs))
if os.getenv("PSDL_PHASES") then
  for _, p in ipairs(report.phases) do print(string.format("  finish: %-11s %.3f s", p[1], p[2])) end
end
