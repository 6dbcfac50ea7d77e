--- `psdl export FILE -o OUT.obj|OUT.gltf|OUT.glb`: the city as triangles, the way the game
-- draws it at full detail (see `psdl.export` for what each attribute becomes).
--
-- OBJ writes a `.mtl` next to the `.obj`; `.gltf` embeds its buffer as base64 unless
-- `--bin` (then a `.bin` next to it); `.glb` is one binary file. One mesh per room (a node
-- `room N` each) unless `--merge`; `--rooms 1-20,35` exports only those rooms. Each
-- texture name is one material, a plain colour derived from the name, or the image
-- `<name>.png`/`.jpg` found in `--textures DIR`.
--
-- Exit code: 0 written; 1 usage error (an unknown format, a bad room list); 2 the input is
-- not a PSDL file; 3 a file cannot be read or written.
-- @module psdl.cli.export

local common = require "psdl.cli.common"
local string, os, table, require = string, os, table, require

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Export the city as triangles: OBJ (+ .mtl), glTF or GLB."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("file", "PSDL file.")
  cmd:option("-o --output", "Output file: .obj (with a .mtl), .gltf or .glb."):argname("<out>"):count(1)
  cmd:option("--format", "Output format, when the extension does not say it."):choices { "obj", "gltf", "glb" }
  cmd:option("--rooms", "Rooms to export, e.g. 1-20,35 (default: all)."):argname("<list>")
  cmd:flag("--merge", "One mesh for the whole city (default: one mesh per room).")
  cmd:option("--textures", "Folder with <texture name>.png or .jpg images to use (default: a plain "
    .. "colour per name)."):argname("<dir>")
  cmd:flag("--bin", ".gltf: write the buffer to a .bin file next to it (default: embedded base64).")
  cmd:flag("--double-sided", "glTF: mark materials double-sided (default: back faces are culled, as "
    .. "in the game).")
  cmd:flag("--keep-axes", "Write the file's coordinates unchanged (default: z mirrored, so that the "
    .. "left-handed game city is not mirrored in right-handed viewers).")
  cmd:flag("-q --quiet", "Print nothing on success.")
end

--- Run `psdl export`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local psdl = common.psdl()
  local export = require "psdl.export"
  local stem = args.output:gsub("%.[^./]*$", "")
  common.refuse_overwrite({ args.file }, { { args.output, "-o" }, { stem .. ".mtl", "-o (its .mtl)" },
    { stem .. ".bin", "-o (its .bin)" } })
  local _, ferr = export.format_of(args.output, args.format)
  if ferr then common.failure("usage", ferr) end
  local doc, msg, code = common.load(psdl, args.file)
  if not doc then common.failure(common.exit_for(code), msg) end
  local rooms
  if args.rooms then
    local err
    rooms, err = export.parse_rooms(args.rooms, #doc.rooms)
    if not rooms then common.failure("usage", "--rooms: " .. err) end
  end
  local t0 = os.clock()
  local stats, err, ecode = export.export(doc, args.output, {
    format = args.format, rooms = rooms, merge = args.merge, textures = args.textures,
    bin = args.bin, double_sided = args.double_sided, keep_axes = args.keep_axes,
    source = args.file:match("([^/\\]*)$"),
  })
  if not stats then
    common.failure(common.exit_for(ecode), common.clean(err))
  end
  if not args.quiet then
    local out, tris = stats.left_out or 0, stats.left_out_triangles or 0
    ctx.stdout:write(string.format("%s: %s rooms, %s triangles, %s vertices, %s materials%s (%.2f s)\n",
      table.concat(stats.files, " + "), common.int(stats.rooms), common.int(stats.triangles),
      common.int(stats.vertices), common.int(stats.materials),
      (out > 0 or tris > 0) and string.format("; %s %s beyond 1e9 m (or not finite) left out, with the %s %s "
        .. "using them", common.int(out), out == 1 and "vertex" or "vertices", common.int(tris),
        tris == 1 and "triangle" or "triangles") or "",
      os.clock() - t0))
  end
  return ctx.exit.ok
end

return M
