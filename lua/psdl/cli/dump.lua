--- `psdl dump FILE [--json] [-o OUT]`: write the whole document as JSON.
--
-- The JSON is the document model of docs/document-model.md plus
-- `"format": "psdlkit-document", "version": 1` (see `psdl.cli.docjson` for the exact
-- rules); `psdl undump` turns it back into the identical PSDL bytes. Companion files
-- (`.bai`, `.cpvs`, `.inst`, `.pathset`, PKG3, `.tex`) are written in the form of
-- `psdl.cli.companion` and come back identical too.
-- @module psdl.cli.dump

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Write the complete document as JSON."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("file", "PSDL or companion file (.bai, .cpvs, .inst, .pathset, .pkg, .tex).")
  cmd:flag("--json", "JSON output (the default, and so far the only format).")
  cmd:flag("--compact", "No indentation or line breaks.")
  cmd:option("-o --output", "Write to this file (atomically) instead of stdout."):argname("<path>")
end

--- Run `psdl dump`.
-- @tparam table args parsed arguments (`file`, `json`, `compact`, `output`)
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
-- @raise a `psdl.cli.common.failure` when the file cannot be read or decoded, or the
--   output cannot be written
function M.run(args, ctx)
  local psdl = common.psdl()
  common.refuse_overwrite({ args.file }, { { args.output, "-o" } })
  local companion = require "psdl.cli.companion"
  local bytes, rerr, rcode = common.read_file(args.file)
  if not bytes then common.failure(common.exit_for(rcode), rerr) end
  local text
  if companion.format_of(args.file, bytes) then
    local fmt, t, code = companion.load(args.file, bytes)
    if not fmt then common.failure(common.exit_for(code), t) end
    text = companion.dump(fmt, t, { compact = args.compact })
  else
    local doc, msg, code = psdl.decode(bytes)
    if not doc then common.failure(common.exit_for(code), args.file .. ": " .. common.clean(msg)) end
    text = docjson.dump(doc, { compact = args.compact })
  end
  if args.output and args.output ~= "-" then
    local ok, err = common.write_file_atomic(args.output, text)
    if not ok then common.failure("io", err) end
  else
    ctx.stdout:write(text)
  end
  return ctx.exit.ok
end

return M
