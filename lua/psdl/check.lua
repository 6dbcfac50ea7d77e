--- Argument checkers shared by the builder and city modules (lua/psdl/builder/,
-- lua/psdl/city/): each `*_problem` function returns nil when a value is fine, else a message
-- naming the field (for `argerr`), and `argerr` raises "bad argument #n to 'fname' (message)"
-- at the first caller outside the files registered with `own`, so that an argument error
-- points at the script's line however deep in the library the check sits. `where` names that
-- line ("script.lua:12") for messages raised later; `pcall` runs library code whose errors the
-- caller words itself (the errors raised here then carry no position to strip).
--
-- @module psdl.check
local core = require "psdl.core"
local geom = require "psdl.geom"

local type, error, ipairs, pcall = type, error, ipairs, pcall
local abs, min, huge = math.abs, math.min, math.huge
local string_format = string.format
local debug_getinfo = debug.getinfo
local coroutine_running = coroutine.running

local C = {}

-- Sources (debug.getinfo(...).source) of the files whose frames `raise` skips.
local OWN = { [debug_getinfo(1, "S").source] = true }

-- Functions of the registered files that call `pcall` to undo a failed call and re-raise its
-- error (psdl.builder's atomic calls): `raise` looks through their pcall frame.
local GUARDS = setmetatable({}, { __mode = "k" })

--- Register the calling file as one whose frames an argument error skips (its callers are
-- blamed instead). Call as `check.own(debug.getinfo(1, "S").source)` at the top of a module.
-- @tparam string source the module's chunk source
function C.own(source) OWN[source] = true end

--- Register a function of a registered file that runs a call under `pcall` and re-raises its
-- error unchanged (psdl.builder's atomic calls): `raise` and `where` skip its pcall frame, so
-- that an error inside still points at the script's line.
-- @tparam function f
function C.guard(f) GUARDS[f] = true end

-- Per coroutine, how many `C.pcall`s are running: while one is, errors raised here carry no
-- position (the caller of `C.pcall` words the message itself).
local BARE = setmetatable({}, { __mode = "k" })

-- The level, as `error` and `debug.getinfo` count in the function calling this one (1: that
-- function), of the first frame from level `from` up that is outside the registered files
-- (the last frame when all are inside).
local function outside(from)
  local level = from + 1 -- counted here, one frame deeper
  while true do
    local info = debug_getinfo(level, "S")
    if not info then return level - 2 end
    if not OWN[info.source] then
      -- the pcall of a registered guard (C.guard) is part of the guarded call
      local up = info.what == "C" and debug_getinfo(level + 1, "f")
      if not (up and GUARDS[up.func]) then return level - 1 end
    end
    level = level + 1
  end
end

-- Raises msg at the first caller outside the registered files, so that an argument error
-- points at the script's line however deep in the builder the check sits; without a
-- position inside `C.pcall`.
local function raise(msg)
  if (BARE[coroutine_running()] or 0) > 0 then error(msg, 0) end
  error(msg, outside(2))
end

--- "script.lua:12": the line of the first caller outside the registered files (the script
-- line that made a node or road, for messages raised later), or nil when that caller is a C
-- function.
-- @treturn string|nil
local function where()
  local info = debug_getinfo(outside(2), "Sl")
  if not info or info.what == "C" then return nil end
  return string_format("%s:%d", info.short_src or "?", info.currentline or 0)
end

-- (the end of bare_pcall: one call less in its coroutine, its results passed on)
local function bare_done(co, ...)
  BARE[co] = BARE[co] - 1
  return ...
end

--- `pcall(f, ...)`, except that the errors raised by this module inside f (argument errors
-- of the builder and the city) carry no `file.lua:N:` position: for a caller that catches
-- them and raises its own message (naming a road, a node, a stage) instead.
-- @treturn boolean ok @return f's results, or the error
local function bare_pcall(f, ...)
  local co = coroutine_running()
  BARE[co] = (BARE[co] or 0) + 1
  return bare_done(co, pcall(f, ...))
end

--- Raise "bad argument #n to 'fname' (msg)" at the first caller outside the registered files.
-- @tparam integer n argument number @tparam string fname function name @tparam string msg what is wrong
local function argerr(n, fname, msg)
  raise(string_format("bad argument #%d to '%s' (%s)", n, fname, msg))
end

-- ---------------------------------------------------------------- argument checks
-- Each returns nil when the value is fine, else what is wrong with it (for argerr).

local FLT_MAX = 3.4028234663852886e38 -- coordinates are stored as float32 (§1.2)
-- The largest |x|, |y| or |z| of a point the builder takes (m, 2^16; PSDL_MAX_COORDINATE in
-- src/psdl.h, which core.flatten_points applies): float32 positions are 4 mm apart just below
-- it and lose their centimetres beyond; psdl.city.MAX_COORDINATE is the same.
local MAX_COORD = 65536

-- A value as messages show it.
local function shown(v)
  if type(v) == "number" then
    if v ~= v then return "nan" end
    return string_format("%.14g", v)
  end
  if type(v) == "string" then return string_format("%q", v) end
  return type(v)
end

local RULE_TEXT = { number = "finite number", positive = "positive number", nonneg = "non-negative number",
                    int = "integer" }

-- A number: rule "number" (any finite), "positive" (> 0), "nonneg" (>= 0) or "int" (a
-- whole number); lo / hi: optional bounds.
local function num_problem(v, name, rule, lo, hi)
  rule = rule or "number"
  if type(v) == "number" and v > -huge and v < huge -- the usual case, passing: no message to build
     and (rule == "number" or (rule == "positive" and v > 0) or (rule == "nonneg" and v >= 0)
          or (rule == "int" and v % 1 == 0))
     and (not lo or v >= lo) and (not hi or v <= hi) then
    return nil
  end
  if type(v) ~= "number" then -- (a string shown quoted: "8" is no number)
    return string_format("%s: %s expected, got %s", name, RULE_TEXT[rule], type(v) == "string" and shown(v) or type(v))
  end
  if v ~= v or v == huge or v == -huge then
    return string_format("%s: finite number expected, got %s", name, shown(v))
  end
  if (rule == "positive" and not (v > 0)) or (rule == "nonneg" and v < 0) or (rule == "int" and v % 1 ~= 0) then
    return string_format("%s: %s expected, got %s", name, RULE_TEXT[rule], shown(v))
  end
  if (lo and v < lo) or (hi and v > hi) then
    return string_format("%s: %s in %s..%s expected, got %s", name, RULE_TEXT[rule], lo and shown(lo) or "",
      hi and shown(hi) or "", shown(v))
  end
end

-- An optional number (nil is fine).
local function opt_problem(v, name, rule, lo, hi)
  if v == nil then return nil end
  return num_problem(v, name, rule, lo, hi)
end

local AXES = { "x", "y", "z" }

-- A point {x, y, z} of numbers within +-MAX_COORD (y may be nil: 0).
local function point_problem(p, name)
  if type(p) ~= "table" then
    return string_format("%s: 3-D point {x, y, z} expected, got %s", name, type(p))
  end
  local x, y, z = p[1], p[2], p[3]
  if type(x) ~= "number" or type(z) ~= "number" or (y ~= nil and type(y) ~= "number") then
    local got = "a malformed table"
    if #p == 0 then got = "an empty table"
    elseif #p == 2 and type(x) == "number" and type(y) == "number" then
      got = string_format("a 2-D point {%s, %s}", shown(x), shown(y))
    end
    return string_format("%s: 3-D point {x, y, z} expected, got %s", name, got)
  end
  for k = 1, 3 do
    local v = p[k]
    if v ~= nil and not (v >= -MAX_COORD and v <= MAX_COORD) then
      if v ~= v or v == huge or v == -huge then return string_format("%s: %s is not a finite number", name, AXES[k]) end
      return string_format("%s: %s = %s lies too far out: coordinates within +-%d m (psdl.builder.MAX_COORDINATE: "
        .. "32-bit float positions lose their centimetres further out)", name, AXES[k], shown(v), MAX_COORD)
    end
  end
end

local flatten_points = core.flatten_points

-- A list of at least `min` points. When it passes: nil and the points as a flat x, y, z
-- array (one pass in C, for the caller to reuse).
local function points_problem(list, name, min)
  if type(list) ~= "table" then return string_format("%s: list of points expected, got %s", name, type(list)) end
  local flat, bad = flatten_points(list)
  if not flat then
    return point_problem(list[bad], name .. "[" .. bad .. "]") or string_format("%s[%d]: bad point", name, bad)
  end
  if min and #list < min then
    return string_format("%s: %d or more points expected, got %d", name, min, #list)
  end
  return nil, flat
end

-- A plan direction {x, z}, finite and not zero.
local function dir_problem(d, name)
  if type(d) ~= "table" or type(d[1]) ~= "number" or type(d[2]) ~= "number" then
    return string_format("%s: plan direction {x, z} expected, got %s", name, type(d) == "table" and "a malformed table" or type(d))
  end
  local m = num_problem(d[1], name .. "[1]") or num_problem(d[2], name .. "[2]")
  if m then return m end
  if d[1] * d[1] + d[2] * d[2] < 1e-24 then return name .. ": zero direction" end
end

-- A simple polygon (with holes): no two edges cross. flat: x, y, z of the outer ring then the
-- holes (starts: 1-based hole starts, or nil); names the edges as the caller's lists do.
local function crossing_problem(flat, starts, name, hole_name)
  local e1, e2 = core.self_crossing(flat, starts)
  if not e1 then return nil end
  local function where(e)
    if not starts or e < starts[1] then return nil, e end
    local h = #starts
    while starts[h] > e do h = h - 1 end
    return h, e - starts[h] + 1
  end
  local h1, k1 = where(e1)
  local h2, k2 = where(e2)
  if h1 == h2 then
    return string_format("%s: self-intersecting polygon (edges %d and %d cross)",
      h1 and string_format("%s[%d]", hole_name, h1) or name, k1, k2)
  end
  return string_format("%s edge %d crosses %s edge %d", h1 and string_format("%s[%d]", hole_name, h1) or name, k1,
    h2 and string_format("%s[%d]", hole_name, h2) or name, k2)
end

-- Checks a polygon with holes given as points (outline at least 3 points, finite, with
-- area; holes each 3 points or more, inside the outline; no edges crossing). Returns the
-- problem or nil; for a polygon without holes that passes, also nil, its flat x, y, z and
-- its signed area (for the caller to reuse).
local polygon_points = core.polygon_points
local function polygon_problem(outline, holes, name, hole_name)
  if type(outline) == "table" and (holes == nil or (type(holes) == "table" and #holes == 0)) then
    -- the usual case in one C pass (points checked and flattened, area, crossing); anything
    -- wrong goes the long way below, which names it
    local outer, area, e1 = polygon_points(outline)
    if outer and not e1 and #outline >= 3 and abs(area) > 1e-9 then return nil, outer, area end
  end
  local m, outer = points_problem(outline, name, 3)
  if m then return m end
  m = crossing_problem(outer, nil, name, hole_name)
  if m then return m end
  local area = core.signed_area(outer)
  if abs(area) <= 1e-9 then return name .. ": the polygon has no area" end
  if holes == nil or (type(holes) == "table" and #holes == 0) then return nil, outer, area end
  local flat, starts = {}, nil
  for i = 1, #outer do flat[i] = outer[i] end
  if holes ~= nil then
    if type(holes) ~= "table" then return string_format("%s: list of rings expected, got %s", hole_name, type(holes)) end
    for h, ring in ipairs(holes) do
      local hn = string_format("%s[%d]", hole_name, h)
      local hf
      m, hf = points_problem(ring, hn, 3)
      if m then return m end
      if abs(core.signed_area(hf)) <= 1e-9 then return hn .. ": the polygon has no area" end
      starts = starts or {}
      starts[#starts + 1] = #flat // 3 + 1
      for i = 1, #hf do flat[#flat + 1] = hf[i] end
    end
  end
  m = crossing_problem(flat, starts, name, hole_name)
  if m then return m end
  for h, ring in ipairs(starts and holes or {}) do -- no edges cross: a hole is inside or out
    local k = core.first_outside(outer, geom.flatten(ring), true, 0)
    if k then return string_format("%s[%d]: point %d lies outside %s", hole_name, h, k, name) end
  end
end

-- A private option key: `Builder:block` has checked the outline and holes it passes to
-- `Builder:room` and `Room:fan` (no script can set it).

C.FLT_MAX = FLT_MAX
C.MAX_COORDINATE = MAX_COORD
-- The widest a road's carriageway, median or sidewalk may be (m): psdl.builder.MAX_WIDTH and
-- psdl.city.profiles.MAX_WIDTH.
C.MAX_WIDTH = 100
C.argerr = argerr
C.shown = shown
C.num_problem = num_problem
C.opt_problem = opt_problem
C.point_problem = point_problem
C.flatten_points = flatten_points
C.points_problem = points_problem
C.dir_problem = dir_problem
C.crossing_problem = crossing_problem
C.polygon_problem = polygon_problem
C.polygon_points = polygon_points
C.raise = raise
C.where = where
C.pcall = bare_pcall
C.AXES = AXES
C.RULE_TEXT = RULE_TEXT

return C
