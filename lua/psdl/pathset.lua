--- `*.pathset`, prop paths (docs/companion-formats.md §5.1; tables in docs/companion.md):
-- `psdl.pathset.read/decode/encode/write/validate`.
--
-- Validation rules (severity): `type` (E: not 0, 1 or 2), `empty_name` (E), `odd_pairs` (W:
-- a type-1 path with an odd point count; the last point is ignored), `few_points` (W: a
-- line strip of fewer than 2 points places nothing), `pad` (W: pad bytes not 0), `trailing` (W).
-- @module psdl.pathset

local companion = require "psdl.companion"
local ipairs = ipairs

local function validate(t, _, opts)
  local P = companion.problems()
  for i, p in ipairs(t.paths or {}) do
    local pp = "paths[" .. i .. "]"
    if p.type > 2 then P.error("type", pp .. ".type", i, "type %d: 0 points, 1 pairs, 2 line strip", p.type) end
    if #p.name == 0 then P.error("empty_name", pp .. ".name", i, "no model or texture name") end
    if p.type == 1 and #p.points % 2 == 1 then
      P.warning("odd_pairs", pp .. ".points", i, "%d points in a pair path: the last is ignored", #p.points)
    end
    if p.type == 2 and #p.points < 2 then
      P.warning("few_points", pp .. ".points", i, "%d points: a line strip needs 2", #p.points)
    end
    if (p.pad or 0) ~= 0 then P.warning("pad", pp .. ".pad", i, "pad bytes 0x%04x, write 0", p.pad) end
  end
  if t.trailing then P.warning("trailing", "trailing", nil, "%d bytes after the last path", #t.trailing) end
  return P.result(opts.strict)
end

return companion.codec("pathset", validate)
