--- Byte-identity guard: SHA-256 digests of generated cities, kept in spec/data/digests.txt
-- (one "HEX  NAME" line per city, sorted by name). The cities are every example script
-- (examples/*.lua, built with `psdl build`), the benchmark cities of bench/bench_city.lua
-- (bench/grid_city.lua at 19 x 19 nodes, the London-scale one, with and without buildings,
-- and 6 x 6), bench/london_city.lua through `psdl build`, and the imports of the shared OSM
-- extracts (`psdl osm`; spec/osm_extracts_spec.lua builds those and checks them here, so the
-- imports run once per suite).
--
-- A deliberate change of the output: regenerate the file with
--
--   lua5.4 spec/digest_update.lua
--
-- and commit it on its own, the message saying why the bytes changed.
--
-- Hashing uses `sha256sum` (GNU coreutils, on every Debian system).
local H = require "helper"

local D = {}

--- Path of the digest file (relative to the repository root).
D.FILE = "spec/data/digests.txt"

--- Examples that are not standalone cities (none today; a name here is skipped).
D.SKIP_EXAMPLES = {}

--- The OSM extracts whose imports are guarded (the list of spec/osm_extracts_spec.lua).
D.OSM = {
  "spec/fixtures/osm/leeds-potternewton.osm", "spec/fixtures/osm/houston-fourth-ward.osm",
  "spec/data/osm/ankara-bahcelievler.osm", "spec/data/osm/cuenca-centro.osm", "spec/data/osm/nairobi-chiromo.osm",
  "spec/data/osm/orange-nsw.osm", "spec/data/osm/philadelphia-temple.osm",
  "spec/data/osm/porto-fernao-magalhaes.osm", "spec/data/osm/prague-karlovo-namesti.osm",
  "spec/data/osm/rosemead-ca.osm", "spec/data/osm/suwon-ajou.osm", "spec/data/osm/taipei-xinyi.osm",
}

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- SHA-256 of a file's bytes as 64 lowercase hex digits (raises when sha256sum fails).
function D.sha256_file(path)
  local p = assert(io.popen("sha256sum -b " .. q(path) .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  local hex = out:match("^(%x+)")
  if not ok or not hex or #hex ~= 64 then error("sha256sum " .. path .. ": " .. out, 2) end
  return hex
end

--- SHA-256 of a byte string (written to a temporary file for sha256sum).
function D.sha256(bytes)
  local tmp = H.tmpname(".bin")
  H.write_bytes(tmp, bytes)
  local ok, hex = pcall(D.sha256_file, tmp)
  os.remove(tmp)
  if not ok then error(hex, 2) end
  return hex
end

--- The recorded digests: NAME -> HEX (an empty table when the file does not exist).
function D.load()
  local t = {}
  local f = io.open(D.FILE, "rb")
  if not f then return t end
  for line in f:lines() do
    local hex, name = line:match("^(%x+)  (.+)$")
    if hex then t[name] = hex end
  end
  f:close()
  return t
end

--- Names of the example scripts (sorted).
function D.examples()
  local lfs = require "lfs"
  local names = {}
  for name in lfs.dir("examples") do
    if name:match("%.lua$") and not D.SKIP_EXAMPLES[name] then names[#names + 1] = "examples/" .. name end
  end
  table.sort(names)
  return names
end

--- Build one city script with `psdl build` into `out` (raises with the command's messages).
-- (The script is given by its absolute path: with a relative one, `psdl build` looks for
-- the script's own modules in the wrong folder, e.g. examples/reskin.lua's require "junctions".)
function D.build_script(script, out)
  local path = script:sub(1, 1) == "/" and script or require("lfs").currentdir() .. "/" .. script
  local code, stdout, stderr = H.cli("build", path, "-o", out, "-q")
  if code ~= 0 then error("psdl build " .. script .. " exited " .. code .. ": " .. stderr .. stdout, 2) end
end

--- Import one OSM extract with `psdl osm` into `out` (raises with the command's messages).
function D.import_osm(file, out)
  local code, stdout, stderr = H.cli("osm", file, "-o", out, "-q")
  if code ~= 0 then error("psdl osm " .. file .. " exited " .. code .. ": " .. stderr .. stdout, 2) end
end

--- The benchmark grid cities: list of { name, n, buildings }.
D.GRID = {
  { name = "bench/bench_city.lua 19x19 buildings", n = 19, buildings = true },
  { name = "bench/bench_city.lua 19x19 ground", n = 19, buildings = false },
  { name = "bench/bench_city.lua 6x6 buildings", n = 6, buildings = true },
}

--- Bytes of one benchmark grid city (built and encoded in this process).
function D.grid_bytes(g)
  local psdl = require "psdl"
  local city = dofile("bench/grid_city.lua")(psdl, g.n, g.buildings)
  local doc = city:build()
  return assert(psdl.encode(doc))
end

--- Every guarded city except the OSM imports: list of { name, digest = function() -> hex }.
function D.cases()
  local list = {}
  local scripts = D.examples()
  scripts[#scripts + 1] = "bench/london_city.lua"
  for _, script in ipairs(scripts) do
    list[#list + 1] = { name = script, digest = function()
      local out = H.tmpname(".psdl")
      local ok, err = pcall(D.build_script, script, out)
      local hex = ok and D.sha256_file(out)
      os.remove(out)
      if not ok then error(err, 0) end
      return hex
    end }
  end
  for _, g in ipairs(D.GRID) do
    list[#list + 1] = { name = g.name, digest = function() return D.sha256(D.grid_bytes(g)) end }
  end
  return list
end

--- Name under which an OSM import is recorded.
function D.osm_name(file) return "psdl osm " .. file end

--- Assert that a built file matches its recorded digest (for specs; busted's assert).
function D.check(name, path)
  local want = D.load()[name]
  local got = D.sha256_file(path)
  assert(want, name .. ": no digest recorded in " .. D.FILE .. " (run lua5.4 spec/digest_update.lua)")
  assert(got == want, name .. ": output bytes changed (sha256 " .. got .. ", recorded " .. want
    .. "); a deliberate change: lua5.4 spec/digest_update.lua, in its own commit")
end

return D
