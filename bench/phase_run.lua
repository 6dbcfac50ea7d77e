--- One phase of the bench city's build alone (bench/blocks_phase.lua, bench/roads_phase.lua):
-- the module function `mod[field]` that city:build calls for the phase is wrapped, and the
-- city built as bench_city.lua builds it: the phase's best time over several builds, its Lua
-- allocation with the collector stopped, or the second build's phase run inside a coroutine
-- for callgrind's instruction count (`--toggle-collect=lua_resume`: nothing else in psdl
-- resumes a coroutine).
--
--   dofile("bench/phase_run.lua")(psdl, here, "psdl.city.blocks", "fill", "blocks.fill", buildings, arg)
--
-- @tparam table psdl the psdl module
-- @tparam string here the bench directory (grid_city.lua)
-- @tparam string mod, field the phase's function (`require(mod)[field]`)
-- @tparam string label the phase as printed
-- @tparam boolean buildings the default of the city's building rows
-- @tparam table args the command line: [N=19] [--buildings | --no-buildings] [--alloc |
-- --callgrind] [runs=5]
return function(psdl, here, mod, field, label, buildings, args)
  local grid_city = dofile(here .. "/grid_city.lua")
  local N, runs, mode = 19, 5, "time"
  do
    local pos = {}
    for _, a in ipairs(args or {}) do
      if a == "--no-buildings" then buildings = false
      elseif a == "--buildings" then buildings = true
      elseif a == "--alloc" then mode = "alloc"
      elseif a == "--callgrind" then mode = "callgrind"
      else pos[#pos + 1] = tonumber(a) end
    end
    N, runs = pos[1] or N, pos[2] or runs
  end

  local m = require(mod)
  local phase = m[field]
  local best, kb, wrap = math.huge, nil, false
  m[field] = function(...)
    if wrap then return coroutine.wrap(phase)(...) end
    local m0
    if mode == "alloc" then collectgarbage("stop"); m0 = collectgarbage("count") end
    local t0 = os.clock()
    local res = phase(...)
    local t = os.clock() - t0
    if mode == "alloc" then kb = collectgarbage("count") - m0; collectgarbage("restart") end
    if t < best then best = t end
    return res
  end

  local function build()
    local city = grid_city(psdl, N, buildings)
    collectgarbage()
    collectgarbage()
    city:build()
  end

  if mode == "callgrind" then
    build()
    wrap = true
    build()
    print(label .. " ran once in a coroutine (callgrind: --toggle-collect=lua_resume)")
  else
    for _ = 1, mode == "alloc" and 2 or runs do build() end
    print(string.format("city %d x %d nodes, %s: %s best %.4f s%s", N, N,
      buildings and "with buildings" or "ground only", label, best,
      kb and string.format(", %.0f KB allocated (collector stopped)", kb) or ""))
  end
end
