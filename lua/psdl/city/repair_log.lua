--- The log of a city's repairs (`psdl.city.repair`): one entry per road repaired or
-- dropped, with the script's number for it, its script line or network source, the reason,
-- the layout's message (its roads named by the script's numbers) and the middle of the road;
-- the report's `repairs` and `psdl build`'s warnings are made from it.
-- @module psdl.city.repair_log

local error, ipairs, setmetatable = error, ipairs, setmetatable
local sqrt = math.sqrt
local string_format = string.format
local drops = require "psdl.city.drops"
local plan_length, road_points = drops.plan_length, drops.road_points

local M = {}

local Log = {}
Log.__index = Log
M.Log = Log

--- A new log of repairs.
-- @tparam[opt] boolean strict true: `record` raises instead of recording
-- @treturn table log `{strict, entries = {...}}`
function M.new(strict)
  return setmetatable({ strict = strict and true or false, entries = {}, by_entry = setmetatable({}, { __mode = "k" }) },
    Log)
end

-- Middle of a road's path (plan), metres.
local function middle(r)
  local pts = road_points(r)
  local half = plan_length(pts) / 2
  local acc = 0
  for i = 2, #pts do
    local p, q = pts[i - 1], pts[i]
    local l = sqrt((q[1] - p[1]) ^ 2 + (q[2] - p[2]) ^ 2)
    if acc + l >= half and l > 0 then
      local t = (half - acc) / l
      return p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2])
    end
    acc = acc + l
  end
  return pts[1][1], pts[1][2]
end

--- "road 5 (Main) at city.lua:12": a road as the repair warnings name it, by the number the
-- script's `City:road` gave it (`number`: the roads dropped before it do not renumber it).
local function road_ref(r)
  local s = string_format("road %d", r.number or r.index)
  if r.name then s = s .. string_format(" (%s)", r.name) end
  if r.where then s = s .. " at " .. r.where end
  return s
end
M.road_ref = road_ref

-- A layout message with the roads it names ("road 4 at city.lua:9", "city.lua:9: road 4", as
-- psdl.city.network writes them, by their place in the city's list) named by the number the
-- script gave them instead, as the warnings' headers are: after a road is dropped the others
-- move up the list, and the same road would be "road 4" in one warning and "road 5" in the next.
local function renumbered(city, msg)
  if not city or not city.roads then return msg end
  local pairs_, k = {}, 0
  for _, q in ipairs(city.roads) do
    local num = q.number
    if num and num ~= q.index then
      local name = q.name and string_format(" (%s)", q.name) or ""
      local old_ref, new_ref = string_format("road %d%s", q.index, name), string_format("road %d%s", num, name)
      if q.where then
        pairs_[#pairs_ + 1] = { old_ref .. " at " .. q.where, new_ref .. " at " .. q.where }
        pairs_[#pairs_ + 1] = { q.where .. ": " .. old_ref, q.where .. ": " .. new_ref }
      end
    end
  end
  if #pairs_ == 0 then return msg end
  -- each old form becomes a placeholder first, then its new form (no chain of replacements)
  local function plain(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end
  for i, p in ipairs(pairs_) do
    k = k + 1
    msg = msg:gsub(plain(p[1]), "\1" .. i .. "\2")
  end
  for i, p in ipairs(pairs_) do msg = msg:gsub("\1" .. i .. "\2", (p[2]:gsub("%%", "%%%%"))) end
  return msg
end

--- Record a repair or a drop of a road (or raise, in strict mode).
-- @tparam table r the road (`City:road`)
-- @tparam string action "repaired" or "dropped"
-- @tparam string reason short reason (the key the summaries group by)
-- @tparam string detail the full message (what the layout said)
-- @tparam[opt] string stage default "layout"
-- @tparam[opt] boolean numbered `detail` names roads by their script numbers already (else
-- the layout's places in the list are turned into them)
-- @raise in strict mode: `detail` (which names the script line)
function Log:road(r, action, reason, detail, stage, numbered)
  if self.strict then error(detail, 0) end
  if not numbered then detail = renumbered(r.city, detail) end
  local x, z = middle(r)
  local e = { stage = stage or "layout", action = action, reason = reason, detail = detail, kind = "road",
              road = r.index, number = r.number or r.index, ref = road_ref(r), where = r.where, name = r.name, source = r.opts and r.opts.source,
              x = x, z = z, length = plan_length(road_points(r)) }
  self.entries[#self.entries + 1] = e
  self.by_entry[e] = r
  return e
end

--- Counts of the entries by action and reason: `{ ["repaired: bend eased"] = n, ... }`.
function Log:counts()
  local c = {}
  for _, e in ipairs(self.entries) do
    local k = e.action .. ": " .. e.reason
    c[k] = (c[k] or 0) + 1
  end
  return c
end

--- One warning line per entry, naming the script line (`psdl build` prints these).
-- @treturn table lines
function Log:lines()
  local out = {}
  for _, e in ipairs(self.entries) do
    out[#out + 1] = string_format("%s %s at %.1f, %.1f: %s", e.action == "dropped" and "dropped" or "repaired",
      e.reason, e.x or 0, e.z or 0, e.detail)
  end
  return out
end

return M
