--- A London-scale city for the package benchmark (bench/bench_package.lua) and for trying
-- `psdl package` by hand: the 19 x 19 node network of bench/bench_city.lua (blocks 110 m by
-- 90 m, an avenue every fifth row, a boulevard every sixth column, gently curved streets),
-- with building rows of 2 to 8 floors: about 1,440 rooms. Also the viewer's benchmark city
-- (bench/bench_view.mjs). PSDL_BENCH_N sets N (19 by default) where the script may read the
-- environment (--trust, or loaded as plain Lua; a sandboxed script has no os.getenv).
--
--   scripts/psdl package bench/london_city.lua -o build/london_scale.ar
--   PSDL_BENCH_N=10 scripts/psdl view bench/london_city.lua --trust -o /tmp/city.html
local psdl = psdl or require "psdl"
local ok, env_n = pcall(function() return os.getenv("PSDL_BENCH_N") end)
local n = tonumber(ok and env_n or "") or 19
local city = psdl.city.new{ style = "london", seed = 1, name = "benchcity" }
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
