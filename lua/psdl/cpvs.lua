--- `city/<map>.cpvs`, the potentially visible sets (docs/companion-formats.md §3; tables in
-- docs/companion.md): `psdl.cpvs.read/decode/encode/write/validate`.
--
-- Validation rules (severity): `cpvs_count` (E with the PSDL: rooms ~= R, i.e. n ~= R + 1,
-- §3.4), `row_count` (E: fewer rows than rooms - 1), `row_room` (E: a visible id >= rooms,
-- so the row decompresses past ceil(R/4) bytes), `row_buffer` (E: a visible id >= 2048:
-- past the game's 512-byte row buffer, §3.3), `sees_itself` (E with the PSDL for a room
-- with attributes, W otherwise: the room is not drawn from inside), `draw_cap` (W: more than
-- 512 visible rooms, §3.4), `trailing` (W).
-- @module psdl.cpvs

local companion = require "psdl.companion"
local ipairs = ipairs

local function validate(t, doc, opts)
  local P = companion.problems()
  local R = t.rooms or 0
  local PR = doc and companion.room_count(doc)
  if PR and R ~= PR then
    P.error("cpvs_count", "rooms", nil, "%d rooms (n = %d), the PSDL room count is %d: n must be R + 1 (§3.4)",
      R, R + 1, PR)
  end
  local rows = t.rows or {}
  if #rows < R - 1 then P.error("row_count", "rows", nil, "%d rows, %d expected", #rows, R - 1) end
  if t.trailing then P.warning("trailing", "trailing", nil, "%d bytes after the last row", #t.trailing) end
  for r = 1, R - 1 do
    local row = rows[r]
    if row then
      local path = "rows[" .. r .. "].visible"
      local self, maxid, n = false, -1, 0
      for _, id in ipairs(row.visible) do
        if id == r then self = true end
        if id > maxid then maxid = id end
        if id ~= 0 then n = n + 1 end
      end
      if maxid >= R then
        P.error("row_room", path, r, "room %d is visible but the city has rooms 1..%d: the row overruns "
          .. "ceil(R/4) = %d bytes (§3.4)", maxid, R - 1, (R + 3) // 4)
      end
      if maxid >= 2048 then
        P.error("row_buffer", path, r, "room %d is visible: rows past 512 bytes overrun the game's buffer (§3.3)",
          maxid)
      end
      if not self then
        local room = doc and doc.rooms[r]
        if room and #room.attributes > 0 then
          P.error("sees_itself", path, r, "room %d does not see itself: its own geometry is not drawn (§3.4)", r)
        elseif not doc then
          P.warning("sees_itself", path, r, "room %d does not see itself (§3.4)", r)
        end
      end
      if n > 512 then
        P.warning("draw_cap", path, r, "%d visible rooms: the game draws at most 512, in id order (§3.4)", n)
      end
    end
  end
  return P.result(opts.strict)
end

return companion.codec("cpvs", validate)
