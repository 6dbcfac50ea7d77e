--- `texture/*.tex` textures (docs/companion-formats.md §9; tables in docs/companion.md):
-- `psdl.tex.read/decode/encode/write/validate`, and `psdl.tex.from_pixels`.
--
-- Validation rules (severity): `power_of_two` (E: "Bad resolution" in the game), `format`
-- (E: not a format MM2 reads: 1, 2, 6, 14, 15, 16, 17, 18), `mip_chain` (W: not the full
-- chain, §9), `flags` (W: bits other than clamp U/V, which MM2 ignores), `trailing` (W).
-- @module psdl.tex

local companion = require "psdl.companion"
local core = require "psdl.core"
local type, error = type, error

local MM2_FORMATS = { [1] = true, [2] = true, [6] = true, [14] = true, [15] = true, [16] = true,
  [17] = true, [18] = true }

local function pow2(n) return n > 0 and n & (n - 1) == 0 end

local function full_chain(w, h)
  local n = 1
  while w > 1 and h > 1 do w, h, n = w // 2, h // 2, n + 1 end
  return n
end

local function validate(t, _, opts)
  local P = companion.problems()
  if not pow2(t.width) or not pow2(t.height) then
    P.error("power_of_two", "width", nil, "%dx%d: sides must be powers of two (§9)", t.width, t.height)
  end
  if not MM2_FORMATS[t.format] then
    P.error("format", "format", nil, "format %d is not one MM2 reads (§9)", t.format)
  end
  local levels = t.levels and #t.levels or (t.mips == 0 and full_chain(t.width, t.height) or t.mips)
  if levels ~= full_chain(t.width, t.height) then
    P.warning("mip_chain", "mips", nil, "%d levels, the full chain has %d (§9)", levels, full_chain(t.width, t.height))
  end
  if (t.flags or 0) & ~0x10001 ~= 0 then
    P.warning("flags", "flags", nil, "flags 0x%x: MM2 reads only 0x1 and 0x10000 (§9)", t.flags)
  end
  if t.trailing then P.warning("trailing", "trailing", nil, "%d bytes after the last level", #t.trailing) end
  return P.result(opts.strict)
end

local M = companion.codec("tex", validate)

--- A texture table with the full mip chain from top-level texels (2 x 2 box filter in C).
-- @tparam table spec `width`, `height` (powers of two), `format` (17 RGB888 or 18
--   RGBA8888), `pixels` (row 0 first, sampled at v = 0), optional `flags` (default 0x10001:
--   clamp U and V, as the minimap tiles want, §7.3)
-- @treturn table texture for `psdl.tex.encode`
function M.from_pixels(spec)
  if type(spec) ~= "table" then
    error("bad argument #1 to 'from_pixels' (table expected, got " .. type(spec) .. ")", 2)
  end
  local levels = core.tex_mipchain(spec.width, spec.height, spec.format, spec.pixels)
  return { width = spec.width, height = spec.height, format = spec.format, mips = #levels, unknown = 1,
    flags = spec.flags or 0x10001, levels = levels }
end

return M
