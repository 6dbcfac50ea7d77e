--- Differential check of the validator: every problem core.validate finds in a set of PSDL
-- files and in perturbed copies of them, one line each, for comparing two trees' cores
-- (a change to src/psdl_validate.c or src/psdl_drivable.c that must report the same).
--
--   TREE=/tmp/base lua5.4 bench/validate_diff.lua a.psdl b.psdl ... > /tmp/old.txt
--   TREE=.         lua5.4 bench/validate_diff.lua a.psdl b.psdl ... > /tmp/new.txt
--   cmp /tmp/old.txt /tmp/new.txt
--
-- Each file is checked as read, then in 6 variants made with a fixed seed: vertices moved
-- (3 cm to 100 m), perimeter corners dropped, neighbours scrambled, vertices collapsed onto
-- others, perimeters reversed, rooms turned into warp rooms. A line holds the document and
-- variant, severity, rule, path, room, attribute, road, rooms, position (17 digits) and the
-- message; the last line of each document counts its errors and warnings.
local tree = os.getenv("TREE") or "."
package.path = tree .. "/lua/?.lua;" .. tree .. "/lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("PSDL_BUILD_DIR") or tree .. "/build") .. "/?.so;" .. package.cpath
local psdl = require "psdl"
local core = require "psdl.core"

-- xorshift32: the same numbers in every tree and run
local seed = 2463534242
local function rnd(n)
  seed = seed ~ (seed << 13) & 0xffffffff
  seed = seed ~ (seed >> 17)
  seed = seed ~ (seed << 5) & 0xffffffff
  return seed % n + 1
end

local function copy(t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, v in pairs(t) do c[k] = copy(v) end
  return c
end

local variants = {
  function(doc) -- vertices moved
    local v = doc.vertices
    for _ = 1, math.max(1, #v // 40) do
      local p = v[rnd(#v)]
      local d = ({ 0.03, 0.3, 2, 100 })[rnd(4)]
      p[1], p[3] = p[1] + d * (rnd(3) - 2), p[3] + d * (rnd(3) - 2)
    end
  end,
  function(doc) -- perimeter corners dropped
    for _ = 1, math.max(1, #doc.rooms // 20) do
      local per = doc.rooms[rnd(#doc.rooms)].perimeter
      if #per > 3 then table.remove(per, rnd(#per)) end
    end
  end,
  function(doc) -- neighbours scrambled
    for _ = 1, math.max(1, #doc.rooms // 10) do
      local per = doc.rooms[rnd(#doc.rooms)].perimeter
      per[rnd(#per)].neighbour = rnd(#doc.rooms + 1) - 1
    end
  end,
  function(doc) -- vertices collapsed onto others
    local v = doc.vertices
    for _ = 1, math.max(1, #v // 60) do
      local a, b = v[rnd(#v)], v[rnd(#v)]
      a[1], a[2], a[3] = b[1], b[2], b[3]
    end
  end,
  function(doc) -- perimeters reversed
    for _ = 1, math.max(1, #doc.rooms // 15) do
      local per = doc.rooms[rnd(#doc.rooms)].perimeter
      for i = 1, #per // 2 do per[i], per[#per + 1 - i] = per[#per + 1 - i], per[i] end
    end
  end,
  function(doc) -- warp rooms
    for _ = 1, math.max(1, #doc.rooms // 10) do
      local r = doc.rooms[rnd(#doc.rooms)]
      r.flags = r.flags | 0x40
    end
  end,
}

local function show(name, doc)
  local problems, nerr, nwarn = core.validate(doc)
  for _, p in ipairs(problems) do
    local rooms = p.rooms and table.concat(p.rooms, ",") or "-"
    local pos = p.x and string.format("%.17g,%.17g", p.x, p.z) or "-"
    io.write(string.format("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, p.severity, p.rule, p.path,
      tostring(p.room), tostring(p.attribute), tostring(p.road), rooms, pos, p.message))
  end
  io.write(string.format("%s\t%d errors, %d warnings\n", name, nerr, nwarn))
end

for _, file in ipairs(arg) do
  local doc = assert(psdl.read(file))
  show(file, doc)
  for k, change in ipairs(variants) do
    local d = copy(doc)
    change(d)
    show(file .. "#" .. k, d)
  end
end
