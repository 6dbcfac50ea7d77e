--- Regenerate spec/data/digests.txt (the byte-identity guard, spec/digest.lua): builds every
-- guarded city and writes its SHA-256. Run from the repository root after a deliberate change
-- of the output, and commit the file on its own with the reason in the message:
--
--   lua5.4 spec/digest_update.lua          (PSDL_BUILD_DIR selects the build folder)
local build = os.getenv("PSDL_BUILD_DIR") or "./build"
package.path = "./lua/?.lua;./lua/?/init.lua;./spec/?.lua;" .. package.path
package.cpath = build .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local D = require "digest"
local H = require "helper"

local old, new = D.load(), {}
for _, c in ipairs(D.cases()) do new[c.name] = c.digest() end
for _, file in ipairs(D.OSM) do
  local out = H.tmpname(".psdl")
  D.import_osm(file, out)
  new[D.osm_name(file)] = D.sha256_file(out)
  os.remove(out)
end
local names, lines, changed = {}, {}, 0
for name in pairs(new) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do
  lines[#lines + 1] = new[name] .. "  " .. name
  if old[name] ~= new[name] then
    changed = changed + 1
    print((old[name] and "changed " or "new     ") .. name)
  end
end
for name in pairs(old) do if not new[name] then changed = changed + 1; print("removed " .. name) end end
assert(psdl.write_file(D.FILE, table.concat(lines, "\n") .. "\n"))
print(string.format("%s: %d digests, %d changed", D.FILE, #names, changed))
