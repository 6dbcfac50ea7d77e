--- The benchmark city of bench/bench_city.lua as a city script (the same network: N x N
-- nodes, blocks 110 m by 90 m, avenues, boulevards, curved streets, building rows of 2-8
-- floors), for `psdl view` and bench/bench_view.mjs:
--
--   scripts/psdl build bench/view_city.lua -o /tmp/bench_city.psdl     (N = 19 by default)
--   PSDL_BENCH_N=10 scripts/psdl view bench/view_city.lua -o /tmp/city.html
local n = tonumber(os.getenv("PSDL_BENCH_N")) or 19
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
        city:road(node[i][j], node[i][j + 1], { via = { { i * 110 + 12, j * 90 + 45 } } })
      else
        city:road(node[i][j], node[i][j + 1], { profile = i % 6 == 3 and "boulevard" or "street" })
      end
    end
  end
end
city:blocks{ buildings = { floors = { 2, 8 } } }
return city
