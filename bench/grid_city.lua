--- The benchmark grid city of bench/bench_city.lua as a function, shared by that benchmark
-- and the byte-identity guard (spec/digest.lua): a downtown-like network of n x n nodes
-- (blocks 110 m by 90 m, an avenue every fifth row, a boulevard every sixth column, a gently
-- curved street across the middle of each eighth block row), blocks with building rows of 2
-- to 8 floors unless `buildings` is false. bench/london_city.lua is the same network as a
-- `psdl build` script.
--
--   local make_city = dofile("bench/grid_city.lua")
--   local city = make_city(psdl, 19, true)   -- a psdl.city, not built yet
--
-- @tparam table psdl the psdl module
-- @tparam integer n nodes per side (19 gives about 1,440 rooms)
-- @tparam boolean buildings building rows on the blocks (false: ground only)
-- @treturn table the city (psdl.city), style "london", seed 1
return function(psdl, n, buildings)
  local city = psdl.city.new{ style = "london", seed = 1 }
  local node = {}
  for i = 0, n - 1 do
    node[i] = {}
    for j = 0, n - 1 do node[i][j] = city:node(i * 110, j * 90) end
  end
  for i = 0, n - 1 do
    for j = 0, n - 1 do
      if i < n - 1 then
        city:road(node[i][j], node[i + 1][j], { profile = j % 5 == 2 and "avenue" or "street" })
      end
      if j < n - 1 then
        if j % 8 == 4 and i % 2 == 1 then
          -- a gently curved street (via point 12 m off the straight line)
          city:road(node[i][j], node[i][j + 1], { via = { { i * 110 + 12, j * 90 + 45 } } })
        else
          city:road(node[i][j], node[i][j + 1], { profile = i % 6 == 3 and "boulevard" or "street" })
        end
      end
    end
  end
  city:blocks{ buildings = buildings and { floors = { 2, 8 } } or false }
  return city
end
