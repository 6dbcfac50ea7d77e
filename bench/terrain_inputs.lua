--- Inputs for bench/terrain_bench.sh: an N x N 16-bit PNG heightmap and an NHTG of
-- (N - 1) x (N - 1) tiles, rolling hills plus deterministic noise (so that the PNG does not
-- compress to nothing), heights 300..~460 m.
--   lua5.4 bench/terrain_inputs.lua N OUT.png OUT.nhtg
local build = os.getenv("PSDL_BUILD_DIR") or "./build"
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = build .. "/?.so;" .. package.cpath
local T = require "psdl.terrain"
local n, png_path, nhtg_path = tonumber(arg[1]), arg[2], arg[3]
assert(n and png_path and nhtg_path, "usage: lua5.4 bench/terrain_inputs.lua N OUT.png OUT.nhtg")
local seed = 12345
local function noise()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
local sin, cos = math.sin, math.cos
local nhtg = T.new_nhtg { width = n - 1, heights = function(i, j)
  return 380 + 40 * sin(i / 97) * cos(j / 131) + 30 * sin((i + j) / 53) + noise() * 2
end }
assert(T.write_file(nhtg_path, T.encode_nhtg(nhtg)))
local png = assert(T.encode_heightmap(nhtg, { format = "png", cell_size = 10 }))
assert(T.write_file(png_path, png))
