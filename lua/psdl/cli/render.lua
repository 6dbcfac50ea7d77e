--- `psdl render FILE -o MAP.png|MAP.svg`: a top-down map of a city (see `psdl.render` for
-- the classes, colours, axes and layout).
--
-- Exit code: 0 written; 1 usage error (an unknown image format, a bad size); 2 the input is
-- not a PSDL file; 3 a file cannot be read or written (nothing is left behind).
-- @module psdl.cli.render

local common = require "psdl.cli.common"
local string, os, require, tonumber, math = string, os, require, tonumber, math

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Draw a top-down map of the city: PNG or SVG."

--- A map's scale for the summary: three decimals from 1 px/m up (`1898.125`), three
-- significant digits below (`0.884`, `0.00884`, `8.84e-10`: a map thousands of km across
-- keeps its exponent).
-- @tparam number scale pixels per metre
-- @treturn string
function M.scale_text(scale)
  if scale >= 1 then return common.num(math.floor(scale * 1000 + 0.5) / 1000) end
  return (string.format("%.3g", scale))
end

--- Longer description shown by `psdl render --help`.
M.description = "Draw a top-down map of a PSDL city (x to the right, z up): roads, intersections, "
  .. "sidewalks, crosswalks, dividers, block ground, walkways, roofs shaded by height, facades, "
  .. "tunnels (hatched), warp rooms (tinted) and room outlines, with a legend and a scale bar. "
  .. "--rooms writes each room's number at its centre; --problems marks what 'psdl validate' "
  .. "reports where it points (red discs: errors, orange diamonds: warnings)."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("file", "PSDL file.")
  cmd:option("-o --output", "Output image: .png or .svg."):argname("<out>"):count(1)
  cmd:option("--format", "Image format, when the extension does not say it."):choices { "png", "svg" }
  cmd:option("--size", "Pixels on the long side of the image, legend included (PNG 64-8192, SVG 64-16384).", "2048")
    :argname("<n>")
  cmd:flag("--rooms", "Write room numbers at the rooms' centres.")
  cmd:flag("--problems", "Mark validation errors and warnings where they point.")
  cmd:flag("--no-legend", "Leave out the legend band.")
  cmd:flag("--no-outlines", "Leave out the room outlines.")
  cmd:option("--supersample", "PNG: draw the fills N times larger and average them down (1-4; "
    .. "default 2 up to about 2900 x 2900 px, else 1)."):argname("<n>")
  cmd:flag("-q --quiet", "Print nothing on success.")
end

local function int_option(text, name, lo, hi)
  local n = math.tointeger(tonumber(text))
  if not n or n < lo or n > hi then
    common.failure("usage", string.format("%s: integer %d-%d expected, got %q", name, lo, hi, text))
  end
  return n
end

--- Run `psdl render`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local size = common.map_size(args.size, args.output, args.format)
  local ss = args.supersample and int_option(args.supersample, "--supersample", 1, 4) or nil
  local psdl = common.psdl()
  local render = require "psdl.render"
  common.refuse_overwrite({ args.file }, { { args.output, "-o" } })
  local _, ferr = render.format_of(args.output, args.format)
  if ferr then common.failure("usage", ferr) end
  local t0 = os.clock()
  local doc, msg, code = common.load(psdl, args.file)
  if not doc then common.failure(common.exit_for(code), msg) end
  local result, err, ecode = render.render(doc, {
    output = args.output, format = args.format, size = size, rooms = args.rooms, problems = args.problems,
    legend = not args.no_legend, perimeters = not args.no_outlines, supersample = ss,
    title = args.file:match("([^/\\]*)$"),
  })
  if not result then
    common.failure(common.exit_for(ecode), common.clean(err))
  end
  if not args.quiet then
    local p = result.problems
    local out = result.left_out or 0
    ctx.stdout:write(string.format("%s: %d x %d px, %s px/m, %s rooms, %s triangles%s%s (%.2f s)\n", args.output,
      result.width, result.height, M.scale_text(result.scale), common.int(result.rooms),
      common.int(result.triangles),
      p and string.format(", %s errors and %s warnings marked%s", common.int(p.errors), common.int(p.warnings),
        p.unplaced > 0 and string.format(" (%s without a place)", common.int(p.unplaced)) or "") or "",
      out > 0 and string.format("; %s %s beyond 1e9 m (or not finite) left out of the map", common.int(out),
        out == 1 and "vertex" or "vertices") or "",
      os.clock() - t0))
  end
  return ctx.exit.ok
end

return M
