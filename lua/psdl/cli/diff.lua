--- `psdl diff A B`: structural differences between two PSDL files.
--
-- One line per difference, `<path>: <a> -> <b>` (or `added`/`removed`), with paths as
-- `validate` writes them (`rooms[12].attributes[3].vertices[2]`), then a count per part.
-- Nothing is printed when the documents are equal. `--json` writes every difference with
-- its values.
--
-- Exit code (as diff(1)): 0 the documents are equal, 1 they differ (or a usage error),
-- 2 a file is not a PSDL file that can be decoded, 3 a file cannot be read.
-- @module psdl.cli.diff

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local string, math, table = string, math, table
local ipairs, require, tonumber = ipairs, require, tonumber

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Structural differences between two PSDL files (exit 0 when equal)."

--- Differences listed by default before the rest are only counted.
M.DEFAULT_LIMIT = 500

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("a", "First PSDL file.")
  cmd:argument("b", "Second PSDL file.")
  cmd:flag("--json", "Write the differences as JSON (all of them, with their values).")
  cmd:option("--limit", ("Differences to list (default %d; 0 lists all)."):format(M.DEFAULT_LIMIT))
    :argname("<n>"):convert(function(s)
      local n = math.tointeger(tonumber(s))
      if not n or n < 0 then return nil, "--limit: a number >= 0 expected" end
      return n
    end)
  cmd:flag("--ignore-form", "Ignore how attributes are stored (the form fields last, counted, "
    .. "subtype, count, data, header_high).")
  cmd:flag("-q --quiet", "Print nothing; only the exit status tells.")
end

local function line(diff, e)
  local num = function(x) return common.num(x) end
  local path = e.path
  if e.path_b then path = path .. " (" .. e.path_b .. " in b)" end
  if e.kind == "added" then
    return string.format("%s: added %s\n", path, diff.value_text(e.b, num))
  elseif e.kind == "removed" then
    return string.format("%s: removed %s\n", path, diff.value_text(e.a, num))
  end
  return string.format("%s: %s -> %s\n", path, diff.value_text(e.a, num), diff.value_text(e.b, num))
end

--- Run `psdl diff`.
-- @tparam table args parsed arguments (`a`, `b`, `json`, `limit`, `ignore_form`, `quiet`)
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local psdl = common.psdl()
  local diff = require "psdl.diff"
  local docs, code = {}, ctx.exit.ok
  for i, file in ipairs { args.a, args.b } do
    local doc, msg, fcode = common.load(psdl, file)
    if not doc then
      code = math.max(code, ctx:fail(common.exit_for(fcode), msg))
    end
    docs[i] = doc
  end
  if code ~= ctx.exit.ok then return code end
  local result = diff.diff(docs[1], docs[2], { ignore_form = args.ignore_form })
  local status = result.equal and ctx.exit.ok or 1
  if args.quiet then return status end

  if args.json then
    local list = {}
    for i, e in ipairs(result.differences) do
      list[i] = { path = e.path, path_b = e.path_b, kind = e.kind, section = e.section, a = e.a, b = e.b }
    end
    ctx.stdout:write(docjson.encode({
      format = "psdlkit-diff", version = 1, a = args.a, b = args.b, equal = result.equal,
      counts = docjson.object(result.counts), differences = list,
    }))
    return status
  end

  if result.equal then return status end
  local limit = args.limit or M.DEFAULT_LIMIT
  local out = ctx.stdout
  out:write("--- ", args.a, "\n+++ ", args.b, "\n")
  local n = #result.differences
  for i, e in ipairs(result.differences) do
    if limit > 0 and i > limit then
      out:write(string.format("... and %s more (--limit 0 lists all)\n", common.int(n - limit)))
      break
    end
    out:write(line(diff, e))
  end
  local parts = {}
  for _, s in ipairs(diff.SECTIONS) do
    if result.counts[s] then parts[#parts + 1] = string.format("%s %s", s, common.int(result.counts[s])) end
  end
  out:write(string.format("%s difference%s: %s\n", common.int(n), n == 1 and "" or "s", table.concat(parts, ", ")))
  return status
end

return M
