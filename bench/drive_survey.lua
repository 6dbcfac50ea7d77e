--- Survey of the drivability rules (docs/validate.md) over real inputs: every example
-- script, the PSDL fixtures, OSM extracts and random towns of bench/city_fuzz.lua. Cities are
-- built without the validation gate (`build{validate = false}`) and then validated, so what
-- the rules find is listed instead of refusing the build.
--
--     lua5.4 bench/drive_survey.lua [--examples] [--fixtures] [--osm DIR] [--fuzz FIRST LAST]
--                                   [-v] [--rules r1,r2]
--
-- With no selection, everything (OSM from spec/fixtures/osm's two extracts). Prints one line
-- per input with its counts per drivability rule ("rule:E/W") and a tally per rule at the end;
-- -v lists each problem. Exit 0 (a survey, not a test).

package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
local BUILD = os.getenv("PSDL_BUILD_DIR") or "build"
package.cpath = (BUILD:sub(1, 1) == "/" and BUILD or "./" .. BUILD) .. "/?.so;" .. package.cpath

local psdl = require "psdl"

local DRIVE = {
  nonfinite = true, empty_city = true, perimeter_crossing = true, perimeter_spike = true, perimeter_kink = true,
  room_overlap = true, hole = true, edge_gap = true, floor_outside = true, unreachable = true,
}

local args = { ... }
local sel, verbose, osm_dir, f1, f2, only = {}, false, nil, 1, 60, nil
local i = 1
while i <= #args do
  local a = args[i]
  if a == "--examples" or a == "--fixtures" then sel[a:sub(3)] = true
  elseif a == "--osm" then sel.osm = true; osm_dir = args[i + 1]; i = i + 1
  elseif a == "--fuzz" then sel.fuzz = true; f1, f2 = tonumber(args[i + 1]), tonumber(args[i + 2]); i = i + 2
  elseif a == "-v" then verbose = true
  elseif a == "--rules" then only = {}; for r in args[i + 1]:gmatch("[^,]+") do only[r] = true end; i = i + 1
  else error("unknown argument " .. a) end
  i = i + 1
end
if not next(sel) then sel = { examples = true, fixtures = true, osm = true, fuzz = true } end

local tally, order = {}, {}
local function survey(label, doc, extra)
  local _, problems, counts = psdl.validate(doc)
  local by, keys = {}, {}
  local other_err = 0
  for _, p in ipairs(problems) do
    if DRIVE[p.rule] and (not only or only[p.rule]) then
      local e = by[p.rule]
      if not e then e = { 0, 0 }; by[p.rule] = e; keys[#keys + 1] = p.rule end
      if p.severity == "error" then e[1] = e[1] + 1 else e[2] = e[2] + 1 end
      local t = tally[p.rule]
      if not t then t = { e = 0, w = 0, inputs = {} }; tally[p.rule] = t; order[#order + 1] = p.rule end
      if p.severity == "error" then t.e = t.e + 1 else t.w = t.w + 1 end
      t.inputs[label] = true
      if verbose then
        print(string.format("    [%s] %s %s %s (%s): %s", label, p.severity, p.rule, p.path,
          p.x and string.format("%.2f, %.2f", p.x, p.z) or "-", p.message))
      end
    elseif p.severity == "error" then
      other_err = other_err + 1
    end
  end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = string.format("%s:%d/%d", k, by[k][1], by[k][2]) end
  print(string.format("%-40s rooms %5d  %s%s%s", label, #doc.rooms, #parts > 0 and table.concat(parts, " ") or "clean",
    other_err > 0 and string.format("  (+%d other errors)", other_err) or "", extra or ""))
end

-- Runs an example script with its validation gates off: builder finish() skips validation
-- and psdl.write only keeps the document (nothing is written). Returns the script's result
-- or the last document it built.
local function run_script(path)
  local captured
  local B = psdl.builder
  local orig_new, orig_write, orig_arg = B.new, psdl.write, arg
  B.new = function(...)
    local b = orig_new(...)
    local finish = b.finish
    b.finish = function(self, o)
      o = o or {}
      o.validate = false
      local d, r = finish(self, o)
      captured = d
      return d, r
    end
    return b
  end
  psdl.write = function(doc) captured = doc; return true end
  arg = { [0] = path, os.tmpname() }
  local env = setmetatable({ psdl = psdl, SEED = 1, arg = arg }, { __index = _G })
  local ok, res = pcall(function() return assert(loadfile(path, "t", env))() end)
  os.remove(arg[1])
  B.new, psdl.write, arg = orig_new, orig_write, orig_arg
  if not ok then error(res, 0) end
  if type(res) ~= "table" then res = captured end
  return res
end

if sel.examples then
  for file in io.popen("ls examples/*.lua"):lines() do
    local ok, res = pcall(run_script, file)
    if not ok then print(file .. ": script error: " .. tostring(res))
    else
      local doc = res
      if getmetatable(res) == psdl.city.City then
        local ok2, d = pcall(res.build, res, { validate = false })
        if not ok2 then print(file .. ": build error: " .. tostring(d)); doc = nil else doc = d end
      end
      if doc then survey(file, doc) end
    end
  end
end

if sel.fixtures then
  for file in io.popen("ls spec/fixtures/*.psdl"):lines() do survey(file, assert(psdl.read(file))) end
end

if sel.osm then
  local osm = require "psdl.osm"
  local list = {}
  if osm_dir then
    for file in io.popen("ls " .. osm_dir .. "/*.osm"):lines() do list[#list + 1] = file end
  else
    list = { "spec/fixtures/osm/houston-fourth-ward.osm", "spec/fixtures/osm/leeds-potternewton.osm" }
  end
  for _, file in ipairs(list) do
    local t0 = os.clock()
    local ok, net = pcall(osm.import, file)
    if not ok or not net then print(file .. ": import failed: " .. tostring(net))
    else
      local ok2, doc = pcall(function()
        local c = psdl.city.from_network(net, { style = "london", seed = 1 })
        c:blocks { buildings = false }
        return (c:build { validate = false })
      end)
      if not ok2 then print(file .. ": build failed: " .. tostring(doc):sub(1, 200))
      else survey(file, doc, string.format("  (%.1f s)", os.clock() - t0)) end
    end
  end
end

if sel.fuzz then
  local fuzz = dofile("bench/city_fuzz.lua")
  for seed = f1, f2 do
    local ok, doc = pcall(function()
      local net = fuzz.network(seed, {})
      local c = psdl.city.from_network(net, { style = seed % 2 == 0 and "sf" or "london", seed = seed })
      c:blocks { buildings = { floors = { 1, 6 } } }
      return (c:build { validate = false })
    end)
    if not ok then print("fuzz seed " .. seed .. ": build failed: " .. tostring(doc):sub(1, 200))
    else survey("fuzz seed " .. seed, doc) end
  end
end

print("\nper rule: errors / warnings / inputs")
table.sort(order)
for _, r in ipairs(order) do
  local t = tally[r]
  local names = {}
  for k in pairs(t.inputs) do names[#names + 1] = k end
  table.sort(names)
  print(string.format("  %-20s %5d / %5d  %d inputs: %s", r, t.e, t.w, #names, table.concat(names, ", ")))
end
