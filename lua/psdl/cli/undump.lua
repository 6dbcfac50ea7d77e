--- `psdl undump FILE.json -o FILE.psdl`: rebuild a PSDL file from `psdl dump` JSON.
--
-- The output is written even when the document has validation errors (a dump of any
-- decodable file must come back byte for byte); their number is noted on stderr. A
-- document the encoder cannot write at all (a wrong field, an index that does not fit
-- its width) is bad input (exit 2). The write is atomic (`psdl.write`).
-- @module psdl.cli.undump

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local io, string = io, string
local pcall, type, ipairs, tostring = pcall, type, ipairs, tostring

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Rebuild a PSDL file from the JSON of psdl dump."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("file", "JSON file written by psdl dump (- for stdin).")
  cmd:option("-o --output", "PSDL file to write (- for standard output)."):argname("<path>"):count(1)
end

--- Undump a companion file (JSON of `psdl.cli.companion`): encode and write atomically,
-- even with validation errors (noted on stderr), like a PSDL document.
function M.run_companion(args, ctx, obj)
  local companion = require "psdl.cli.companion"
  local fmt, t = companion.undump(obj)
  if not fmt then common.failure("bad_input", args.file .. ": " .. t) end
  local psdl = common.psdl()
  local eok, bytes = pcall(psdl[fmt].encode, t)
  if not eok then
    common.failure("bad_input", args.file .. ": cannot encode the " .. fmt .. " table: " .. common.clean(bytes))
  end
  if args.output == "-" then
    local wok, werr = ctx.stdout:write(bytes)
    if not wok then common.failure("io", "standard output: " .. tostring(werr)) end
    return ctx.exit.ok
  end
  local ok, werr, wcode = psdl.write_file(args.output, bytes)
  if not ok then common.failure(common.exit_for(wcode), common.clean(werr)) end
  local _, _, counts = psdl[fmt].validate(t)
  if counts.errors > 0 then
    ctx:note(string.format("%s: written with %d validation error%s", args.output, counts.errors,
      counts.errors == 1 and "" or "s"))
  end
  return ctx.exit.ok
end

--- A message about a document path (`rooms[3].perimeter[1].vertex: ...`) with the same
-- place as the JSON file counts it appended: the messages count from 1 as the Lua document
-- does, the JSON arrays from 0 (`rooms[3]` is the JSON `"rooms"` array's element 2; room 0
-- is `"room0"`).
-- @tparam string msg
-- @treturn string
function M.json_place(msg)
  local path = msg:match("([%a_][%w_]*%[%d+%][%w_%.%[%]]*)")
  if not path then return msg end
  local json = path:gsub("%[(%d+)%]", function(n) return "[" .. (tonumber(n) - 1) .. "]" end)
  return msg .. string.format(" [%s counts from 1 as Lua does: in the JSON file it is %s, arrays counting from 0]",
    path, json)
end

--- Run `psdl undump`.
-- @tparam table args parsed arguments (`file`, `output`)
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
-- @raise a `psdl.cli.common.failure` on unreadable or bad input and on write errors
function M.run(args, ctx)
  local text, err
  common.refuse_overwrite({ args.file }, { { args.output, "-o" } })
  if args.file == "-" then
    text = (ctx.stdin or io.stdin):read("a")
    if not text then common.failure("io", "cannot read stdin") end
  else
    text, err = common.read_file(args.file)
    if not text then common.failure("io", err) end
  end
  local companion = require "psdl.cli.companion"
  local cok, obj = pcall(require("cjson").decode, text)
  if cok and type(obj) == "table" and obj.format == companion.FORMAT then
    return M.run_companion(args, ctx, obj)
  end
  local doc, msg = docjson.undump(text)
  if not doc then common.failure("bad_input", args.file .. ": " .. M.json_place(msg)) end

  local psdl = common.psdl()
  local vok, verr, problems, counts = pcall(psdl.validate, doc)
  if not vok then
    common.failure("bad_input", args.file .. ": not a valid document: " .. M.json_place(common.clean(verr)))
  end
  local errors = type(counts) == "table" and counts.errors
  if not errors then
    errors = 0
    for _, p in ipairs(problems or {}) do
      if p.severity == "error" then errors = errors + 1 end
    end
  end

  if args.output == "-" then
    local eok, bytes = pcall(psdl.encode, doc)
    if not eok then
      common.failure("bad_input", args.file .. ": cannot encode the document: " .. M.json_place(common.clean(bytes)))
    end
    local wok, werr = ctx.stdout:write(bytes)
    if not wok then common.failure("io", "standard output: " .. tostring(werr)) end
    return ctx.exit.ok
  end
  local wok, written, werr, wcode = pcall(psdl.write, doc, args.output, { force = true })
  if not wok then
    common.failure("bad_input", args.file .. ": cannot encode the document: " .. M.json_place(common.clean(written)))
  end
  if not written and wcode == "invalid" then -- (forced: only a document the encoder refuses)
    local prefix = "psdl: invalid: " .. args.output .. ": 1 problem: "
    local what = werr:sub(1, #prefix) == prefix and werr:sub(#prefix + 1) or werr
    common.failure("bad_input", args.file .. ": cannot encode the document: " .. M.json_place(common.clean(what)))
  end
  if not written then common.failure(common.exit_for(wcode), common.clean(werr)) end
  if errors > 0 then
    ctx:note(string.format("%s: written with %d validation error%s (psdl validate lists them)",
      args.output, errors, errors == 1 and "" or "s"))
  end
  return ctx.exit.ok
end

return M
