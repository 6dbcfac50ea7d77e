--- Atomic calls of psdl.builder: every public call that adds to a builder (rooms, attribute
-- records, vertices, heights, texture groups, road records) either completes or leaves the
-- builder exactly as it was before the call, then re-raises the call's error unchanged (same
-- message, same script line). A call that fails part-way (the vertex budget reached in the
-- middle of a street, a bad point found late) therefore never poisons the calls after it:
-- after `pcall(b.street, b, bad)` a valid street builds and `finish` gives the bytes of a
-- builder that never saw the bad call.
--
-- How: the outermost such call notes the builder's counts (rooms, groups, road records,
-- `clamped`, the vertex and height pools' `count`, the store's `mark`); on an error it drops
-- everything after them (`pool:truncate`, `store:truncate`, src/psdl_store.c). Calls made
-- inside a call (a street's rooms and attributes, a callback such as `hub_height` calling
-- the builder) are undone with the outermost one. Not undone: a document of an earlier
-- `finish` made during the call (it shows the builder as finished, which is right), and
-- Room tables of the failed call that a callback kept (they are no rooms of the builder any
-- more: the read API refuses them).
local check = require "psdl.check"

local pcall, error, ipairs, type, getmetatable = pcall, error, ipairs, type, getmetatable
check.own(debug.getinfo(1, "S").source)

-- Builder methods that add to the builder in more than one step. `vertex`, `height`,
-- `textures`, `texture` and `road_record` check everything, then add one entry: atomic as
-- they are, so they skip the guard's cost (they are called often).
local BUILDER_CALLS = { "room", "street", "intersection", "block", "building", "vertices_flat" }
-- Room methods (they add attribute records, vertices, heights, groups).
local ROOM_CALLS = { "road", "divided_road", "divided_refs", "walkway", "sidewalk", "sliver", "crosswalk",
                     "road_fan", "fan", "fan_refs", "facade_bound", "facade", "roof", "tunnel", "junction_tunnel",
                     "texture" }

-- Drops what was added to builder b after the counts given.
local function undo(b, nrooms, ngroups, nrecords, clamped, nv, nh, srooms, srecs, srefs)
  local rooms, groups, by_key, records = b.rooms, b.groups, b.group_by_key, b.records
  for i = #rooms, nrooms + 1, -1 do rooms[i] = nil end
  for i = #groups, ngroups + 1, -1 do
    by_key[groups[i].key] = nil
    groups[i] = nil
  end
  for i = #records, nrecords + 1, -1 do records[i] = nil end
  b.clamped = clamped
  b.vpool:truncate(nv)
  b.hpool:truncate(nh)
  b.store:truncate(srooms, srecs, srefs)
end

local function after(b, nrooms, ngroups, nrecords, clamped, nv, nh, srooms, srecs, srefs, ok, ...)
  b.atomic_depth = 0
  if not ok then
    local e = ...
    undo(b, nrooms, ngroups, nrecords, clamped, nv, nh, srooms, srecs, srefs)
    error(e, 0) -- the message already carries its position (or none, as raised)
  end
  return ...
end

-- Runs f(...) for builder b as one atomic call (see the module's text).
local function guarded(b, f, ...)
  local srooms, srecs, srefs = b.store:mark()
  local nrooms, ngroups, nrecords, clamped = #b.rooms, #b.groups, #b.records, b.clamped
  local nv, nh = b.vpool:count(), b.hpool:count()
  b.atomic_depth = 1
  return after(b, nrooms, ngroups, nrecords, clamped, nv, nh, srooms, srecs, srefs, pcall(f, ...))
end
check.guard(guarded)

-- (the end of `attempt`: undone on failure, the results passed on)
local function attempted(b, nrooms, ngroups, nrecords, clamped, nv, nh, srooms, srecs, srefs, ok, ...)
  if not ok then undo(b, nrooms, ngroups, nrecords, clamped, nv, nh, srooms, srecs, srefs) end
  return ok, ...
end

-- pcall(f, ...) for builder b, undoing what it added to b when it fails (whatever
-- `atomic_depth` is): psdl.city's unit of work (`M.trusted.attempt`).
local function attempt(b, f, ...)
  local srooms, srecs, srefs = b.store:mark()
  return attempted(b, #b.rooms, #b.groups, #b.records, b.clamped, b.vpool:count(), b.hpool:count(), srooms, srecs,
    srefs, pcall(f, ...))
end

-- Installed by psdl.builder (builder/init.lua) after the other parts: wraps their calls.
return function(M, Builder, Room, P)
  for _, name in ipairs(BUILDER_CALLS) do
    local f = Builder[name]
    Builder[name] = function(self, ...)
      if type(self) ~= "table" or getmetatable(self) ~= Builder or self.atomic_depth ~= 0 then
        return f(self, ...)
      end
      return guarded(self, f, self, ...)
    end
  end
  for _, name in ipairs({ "street", "junction" }) do -- (psdl.city's calls, builder/init.lua)
    local f = M.trusted[name]
    M.trusted[name] = function(self, ...)
      if self.atomic_depth ~= 0 then return f(self, ...) end
      return guarded(self, f, self, ...)
    end
  end
  --- For psdl.city (`trusted.phase(b, f, ...)`): runs f(...) as one atomic unit of its own
  -- making: the builder's calls inside skip their own guard (`atomic_depth` 1), and
  -- `trusted.attempt(b, g, ...)` inside undoes what a failed g added (`pcall`'s results).
  -- The city's roads phase: a failure it lists undoes that node or run, and any other
  -- failure throws the builder away (psdl.city.repair builds again into a new one), so the
  -- per-call guard would only repeat that work. Restores `atomic_depth` and re-raises an
  -- error unchanged.
  M.trusted.attempt = attempt
  M.trusted.phase = function(b, f, ...)
    local depth = b.atomic_depth
    b.atomic_depth = 1
    return (function(ok, ...)
      b.atomic_depth = depth
      if not ok then error((...), 0) end
      return ...
    end)(pcall(f, ...))
  end
  for _, name in ipairs(ROOM_CALLS) do
    local f = Room[name]
    Room[name] = function(self, ...)
      local b = type(self) == "table" and getmetatable(self) == Room and self.builder
      if not b or b.atomic_depth ~= 0 then return f(self, ...) end
      return guarded(b, f, self, ...)
    end
  end
end
