--- Road records of psdl.builder: `Builder:road_record` (§1.7).
local check = require "psdl.check"


local type, ipairs = type, ipairs
local huge = math.huge
local getmetatable = getmetatable
local string_format = string.format
local argerr, num_problem, opt_problem = check.argerr, check.num_problem, check.opt_problem
check.own(debug.getinfo(1, "S").source)

-- Installed by psdl.builder (builder/init.lua): M is the module table, Builder and Room the
-- classes, P the builder's private helpers shared between its files.
return function(M, Builder, Room, P)

  --- A road record (§1.7) for rooms of one road run, in order; `finish` fills the crossroads
  -- from the first section of the first room's road attribute and the last section of the
  -- last room's.
  -- @tparam table o `rooms` (Room list), `flags` (default: 0x40 with sidewalks, 0x08 divided,
  -- 0x10 walkway), `lanes_left`, `lanes_right` (lists of lane values, default `{0.5}`),
  -- `stop_lights` (`{0, 0}`)
  local RECORD_KEYS = { rooms = true, flags = true, lanes_left = true, lanes_right = true, stop_lights = true }

  function Builder:road_record(o)
    if type(o) ~= "table" or type(o.rooms) ~= "table" or #o.rooms == 0 then argerr(1, "road_record", "rooms expected") end
    if #o.rooms > 255 then
      argerr(1, "road_record", string_format("rooms: %d rooms, a road record lists at most 255 (a one-byte count, "
        .. "psdl-format.md §1.7)", #o.rooms))
    end
    for i, r in ipairs(o.rooms) do
      if getmetatable(r) ~= Room or r.builder ~= self or self.rooms[r.serial] ~= r then
        argerr(1, "road_record", "rooms[" .. i .. "]: Room of this builder expected")
      end
    end
    local m = P.unknown_key(o, RECORD_KEYS) or opt_problem(o.flags, "flags", "int", 0, 255)
    for _, f in ipairs({ "lanes_left", "lanes_right", "stop_lights" }) do
      local list = o[f]
      if m then break end
      if list ~= nil then
        if type(list) ~= "table" then m = string_format("%s: list of numbers expected, got %s", f, type(list)); break end
        for i = 1, #list do
          local v = list[i] -- (the name built only for a message)
          if not (type(v) == "number" and v > -huge and v < huge) then
            m = num_problem(v, string_format("%s[%d]", f, i))
            break
          end
        end
      end
    end
    if m then argerr(1, "road_record", m) end
    self.records[#self.records + 1] = o
    return o
  end

  -- `Builder:road_record` for psdl.city (`M.trusted.road_record`, psdl.city.road): the rooms
  -- are the ones its streets just made, the lanes and flags its resolved profile's; nothing
  -- is checked again.
  M.trusted.road_record = function(self, o)
    self.records[#self.records + 1] = o
    return o
  end
end
