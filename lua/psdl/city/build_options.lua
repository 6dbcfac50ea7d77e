--- The options of `City:build` and `City:save` (psdl.city), checked at the call.
-- @module psdl.city.build_options

local check = require "psdl.check"

local type, next, tostring = type, next, tostring
local huge = math.huge

local M = {}

--- The keys `City:build` and `City:save` take.
M.KEYS = { seed = true, strict = true, validate = true, drivable = true, gc_pause = true, progress = true }

--- What is wrong with an options table of `City:build` / `City:save`: an unknown key, a seed
-- that is no integer, finite number or string, a `progress` that is no function, a
-- `gc_pause` that is neither false nor a number in 0..1000.
-- @tparam table opts
-- @treturn string|nil the problem ("unknown option 'sede'"), nil when there is none
function M.problem(opts)
  for k in next, opts do
    if not M.KEYS[k] then return "unknown option '" .. tostring(k) .. "'" end
  end
  local seed = opts.seed
  if seed ~= nil and type(seed) ~= "string" and (type(seed) ~= "number" or seed ~= seed or seed == huge or seed == -huge) then
    return "seed: an integer, a finite number or a string expected, got "
      .. (type(seed) == "number" and check.shown(seed) or type(seed))
  end
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    return "progress: function expected, got " .. type(opts.progress)
  end
  local p = opts.gc_pause
  if p ~= nil and p ~= false and not (type(p) == "number" and p >= 0 and p <= 1000) then
    return "gc_pause: false or a number in 0..1000 expected, got " .. check.shown(p)
  end
end

return M
