--- `city/<map>.inst` and `<map>_ai.inst`, placed models (docs/companion-formats.md §4; tables
-- in docs/companion.md): `psdl.inst.read/decode/encode/write/validate`.
--
-- Validation rules (severity): `room_range` (E: room 0, or >= R with the PSDL, §4.4),
-- `room_flag` (E with the PSDL: the room lacks flag 0x80, so the wheel probe ignores its
-- instances, §4.4 / §10 item 8), `room_contains` (W with the PSDL: the origin is more than
-- 1 m outside the room's perimeter), `axis` (E: a zero-length X axis), `zero_yaw` (W: a
-- compact axis with z exactly 0, the case WILK works around, §4.5), `name_length` (W: > 31
-- bytes), `empty_name` (E).
-- @module psdl.inst

local companion = require "psdl.companion"
local ipairs, math_sqrt = ipairs, math.sqrt

-- Distance in XZ from (x, z) to the room's perimeter polygon (0 when inside).
local function room_distance(doc, room, x, z)
  local per, verts = room.perimeter, doc.vertices
  local n = #per
  if n < 3 then return math.huge end
  local inside, best = false, math.huge
  for i = 1, n do
    local a, b = verts[per[i].vertex], verts[per[i % n + 1].vertex]
    if not a or not b then return math.huge end
    local ax, az, bx, bz = a[1], a[3], b[1], b[3]
    if (az > z) ~= (bz > z) and x < (bx - ax) * (z - az) / (bz - az) + ax then inside = not inside end
    local dx, dz = bx - ax, bz - az
    local l2 = dx * dx + dz * dz
    local s = l2 > 0 and math.max(0, math.min(1, ((x - ax) * dx + (z - az) * dz) / l2)) or 0
    local px, pz = ax + s * dx - x, az + s * dz - z
    local d = math_sqrt(px * px + pz * pz)
    if d < best then best = d end
  end
  return inside and 0 or best
end

local function validate(t, doc, opts)
  local P = companion.problems()
  local R = doc and companion.room_count(doc)
  for i, r in ipairs(t) do
    local p = "[" .. i .. "]"
    if r.room == 0 then
      P.error("room_range", p .. ".room", i, "room 0 is the no-room id (§4.4)")
    elseif R and r.room >= R then
      P.error("room_range", p .. ".room", i, "room %d: the PSDL has rooms 1..%d", r.room, R - 1)
    elseif doc then
      local room = doc.rooms[r.room]
      if room.flags & 0x80 == 0 then
        P.error("room_flag", p .. ".room", i, "room %d lacks flag 0x80 (instances), so nothing collides with "
          .. "this model (§4.4)", r.room)
      end
      local d = room_distance(doc, room, r.position[1], r.position[3])
      if d > 1 then
        P.warning("room_contains", p .. ".position", i, "origin %.1f m outside room %d (§4.4)", d, r.room)
      end
    end
    if #r.name == 0 then P.error("empty_name", p .. ".name", i, "no model name") end
    if #r.name > 31 then P.warning("name_length", p .. ".name", i, "%d bytes: keep names <= 31", #r.name) end
    local ax = r.x_axis
    if ax[1] == 0 and ax[2] == 0 and ax[3] == 0 then
      P.error("axis", p .. ".x_axis", i, "zero X axis")
    elseif r.compact and ax[3] == 0 then
      P.warning("zero_yaw", p .. ".x_axis", i, "compact axis with z = 0: WILK writes 1e-10 instead, reporting "
        .. "a crash otherwise (§4.5)")
    end
  end
  return P.result(opts.strict)
end

return companion.codec("inst", validate)
