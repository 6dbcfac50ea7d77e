--- `psdl validate FILE...`: check files against the rules of psdl-format.md §3.
--
-- Each problem is one line, `FILE: <severity> <rule> <path>: <message>`, followed by a
-- summary line per file. Beyond 20 warnings of one rule the rest are counted in a
-- `... and N more <rule> warnings` line (unless `--all`). With `--json` every problem is
-- listed in one JSON document, each with its rule, severity, path, message, room ids
-- (`rooms`) and position (`x`, `z` in metres) where it has one. `--rules` lists every rule
-- with its severity instead (docs/validate.md describes them).
--
-- Exit code: 0 when every file is clean (no errors; with `--strict`, no warnings either),
-- 1 when a file fails the check, 2 when a file is not a PSDL file that can be decoded (or an
-- `.ar` that cannot be unpacked: not a zip, a damaged or duplicate-named entry, over the
-- unpacking limits of `psdl.package.validate`), 3 when a file cannot be read (the largest
-- applies).
-- @module psdl.cli.validate

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local string, math = string, math
local ipairs, pairs, type = ipairs, pairs, type

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Check files against the format's rules."

--- Warnings of one rule listed per file before the rest are only counted.
M.GROUP_AFTER = 20

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("files", "PSDL files, add-on packages (.ar: every file, the zip container and the "
    .. "cross-checks, docs/package.md), or companion files (.bai, .cpvs, .inst, .pathset, .pkg, .tex: "
    .. "docs/companion.md)."):args("*")
  cmd:flag("--strict", "Warnings fail the check too (and are passed on as strict to the validator).")
  cmd:flag("--all", ("List every warning (default: at most %d per rule and file)."):format(M.GROUP_AFTER))
  cmd:flag("--json", "Write the results as JSON (every problem listed, with room ids and positions).")
  cmd:flag("--rules", "List every rule with its severity (error, warning or error/warning by threshold) "
    .. "and what it finds, then exit.")
  cmd:flag("--no-drivable", "Check the format's rules only, not the drivability rules (holes, overlaps, floor "
    .. "outside its room, reachability, perimeter shape, numbers): for pieces of a city.")
end

local function plural(n, word)
  return string.format("%s %s%s", common.int(n), word, n == 1 and "" or "s")
end

--- Validate one document and sum up the result.
-- @tparam table psdl the `psdl` module
-- @tparam table doc
-- @tparam string file the file name (passed to the validator as `name`)
-- @tparam boolean strict
-- @tparam[opt] boolean drivable false: the format's rules only
-- @treturn table `{ok=, errors=, warnings=, problems=}`: `ok` is whether the file passes
function M.check(psdl, doc, file, strict, drivable)
  local _, problems, counts = psdl.validate(doc, { strict = strict, name = file, drivable = drivable })
  problems = problems or {}
  local errors, warnings = 0, 0
  for _, p in ipairs(problems) do
    if p.severity == "error" then errors = errors + 1 else warnings = warnings + 1 end
  end
  if type(counts) == "table" then
    errors, warnings = counts.errors or errors, counts.warnings or warnings
  end
  return {
    ok = errors == 0 and not (strict and warnings > 0),
    errors = errors, warnings = warnings, problems = problems,
  }
end

-- (paths and messages are escaped: a corrupted byte they quote reaches the terminal as \xNN)
local function problem_line(file, p)
  local esc = require("psdl.package.validate").escape
  local where = (p.path and p.path ~= "") and (" " .. esc(p.path)) or ""
  return string.format("%s: %s %s%s: %s\n", file, p.severity, p.rule, where, esc(p.message))
end

local function print_text(out, file, r, all, strict)
  local shown, hidden, hidden_order = {}, {}, {}
  for _, p in ipairs(r.problems) do
    local rule = p.rule
    if p.severity == "warning" and not all and (shown[rule] or 0) >= M.GROUP_AFTER then
      if not hidden[rule] then hidden_order[#hidden_order + 1] = rule end
      hidden[rule] = (hidden[rule] or 0) + 1
    else
      if p.severity == "warning" then shown[rule] = (shown[rule] or 0) + 1 end
      out:write(problem_line(file, p))
    end
  end
  for _, rule in ipairs(hidden_order) do
    out:write(string.format("%s: ... and %s more %s %s (--all lists them)\n", file,
      common.int(hidden[rule]), rule, hidden[rule] == 1 and "warning" or "warnings"))
  end
  out:write(string.format("%s: %s: %s, %s%s\n", file, r.ok and "ok" or "FAILED",
    plural(r.errors, "error"), plural(r.warnings, "warning"), strict and " (strict)" or ""))
end

local function plain(p)
  local t = {}
  for k, v in pairs(p) do t[k] = v end
  return t
end

--- Run `psdl validate`.
-- @tparam table args parsed arguments (`files`, `strict`, `all`, `json`)
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local psdl = common.psdl()
  if args.rules then
    local rules = require("psdl.core").rules()
    if args.json then
      ctx.stdout:write(docjson.encode({ format = "psdlkit-validate-rules", version = 1, rules = rules }))
    else
      local w = 0
      for _, r in ipairs(rules) do w = math.max(w, #r.name) end
      for _, r in ipairs(rules) do
        ctx.stdout:write(string.format("%-" .. w .. "s  %-13s  %s\n", r.name, r.severity, r.summary))
      end
    end
    return ctx.exit.ok
  end
  if #args.files == 0 then common.failure("usage", "validate: FILE expected (or --rules)") end
  local code = ctx.exit.ok
  local results = {}
  local clean, failed, unreadable = 0, 0, 0
  for _, file in ipairs(args.files) do
    local doc, msg, fcode
    local ar_result
    if file:lower():match("%.ar$") then
      local pv = require "psdl.package.validate"
      local bytes, rmsg
      local f = io.open(file, "rb")
      local size = f and f:seek("end")
      if f then f:close() end
      if size and size > pv.MAX_UNPACKED then
        -- not read at all: the archive alone is over the limit (docs/package.md)
        ar_result = { ok = false, errors = 1, warnings = 0, unreadable = true, problems = { {
          severity = "error", rule = "zip_too_large", path = "", message = string.format("the archive is %d bytes, "
            .. "more than the %d (%d MiB) psdl validate reads", size, pv.MAX_UNPACKED, pv.MAX_UNPACKED >> 20) } } }
      else
        bytes, rmsg = common.read_file(file)
      end
      if not ar_result and not bytes then
        msg, fcode = rmsg, "io"
      elseif not ar_result then
        local problems, counts, info = pv.check(bytes, file)
        -- an archive that cannot be unpacked is bad input (exit 2), as a PSDL that does not decode
        ar_result = { ok = counts.errors == 0 and not (args.strict and counts.warnings > 0), errors = counts.errors,
                      warnings = counts.warnings, problems = problems, unreadable = info.unreadable }
      end
    else
      -- a companion file (.bai, .cpvs, .inst, .pathset, .pkg, .tex: docs/companion.md) gets its
      -- format's own checks (without the PSDL cross-checks, which need the city: use the .ar)
      local companion = require "psdl.cli.companion"
      local bytes = common.read_file(file)
      local cfmt = bytes and companion.format_of(file, bytes)
      if cfmt then
        local f, t, ccode = companion.load(file, bytes)
        if not f then
          msg, fcode = t, ccode
        else
          local ok, problems, counts = psdl[cfmt].validate(t, nil, { strict = args.strict })
          ar_result = { ok = ok, errors = counts.errors, warnings = counts.warnings, problems = problems }
        end
      else
        doc, msg, fcode = common.load(psdl, file)
      end
    end
    -- a file's result r (an archive's, a companion's or a PSDL file's checks): counted, then
    -- listed in the JSON or printed
    local function report(r)
      if r.unreadable then
        unreadable = unreadable + 1
        code = math.max(code, ctx.exit.bad_input)
      elseif r.ok then clean = clean + 1 else
        failed = failed + 1
        code = math.max(code, ctx.exit.problems)
      end
      if args.json then
        local problems = {}
        for i, p in ipairs(r.problems) do problems[i] = plain(p) end
        results[#results + 1] = { file = file, ok = r.ok, errors = r.errors, warnings = r.warnings, problems = problems }
      else
        print_text(ctx.stdout, file, r, args.all, args.strict)
      end
    end
    if ar_result then
      report(ar_result)
    elseif not doc then
      unreadable = unreadable + 1
      code = math.max(code, ctx:fail(common.exit_for(fcode), msg))
      results[#results + 1] = { file = file, ok = false, error = { code = fcode, message = msg } }
    else
      report(M.check(psdl, doc, file, args.strict, not args.no_drivable))
    end
  end
  if args.json then
    ctx.stdout:write(docjson.encode({
      format = "psdlkit-validate", version = 1, strict = args.strict and true or false,
      files = results,
    }))
  elseif #args.files > 1 then
    ctx.stdout:write(string.format("%s: %s clean, %s failed%s\n", plural(#args.files, "file"),
      common.int(clean), common.int(failed),
      unreadable > 0 and (", " .. common.int(unreadable) .. " unreadable") or ""))
  end
  return code
end

return M
