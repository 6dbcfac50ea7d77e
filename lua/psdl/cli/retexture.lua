--- `psdl retexture PATH... [operations]`: batch texture editing of PSDL files.
--
-- PATH is a file or a folder (its `*.psdl` files; with `--recursive` its subfolders' too).
-- Operations, applied to each file in this order, all or nothing per file (see
-- `psdl.retexture` for their exact meaning and checks):
--
--     --rename OLD=NEW, --map FILE   rename textures (all the renames at once)
--     --remap A=B [--rooms LIST]     point references from slot A to slot B
--     --move A[..Z]=T                move the group starting at slot A so it starts at T
--     --swap A[..Z]=B[..Y]           exchange two groups
--     --compact                      drop unused slots, renumbering the references
--
-- A mapping file has one rename per line, `old=new`, `old,new` or `old new`; `#` starts a
-- comment. Files are written atomically in place, with a copy of the original as
-- `FILE.bak` (unless `--no-backup`; an existing `.bak` is kept, so it always holds the oldest
-- original; a `.bak` that is a symbolic link, a hard link to the file or not a PSDL file is
-- reported and the file refused), or under `--out DIR` (refused when a target is one of the
-- inputs); `--dry-run` writes nothing. Each file is edited once however many names reach it
-- (compared by real path); a symbolic link in a folder that leads outside the folders
-- given is skipped with a note unless `--follow-links`.
-- Files the edit does not change are not written. An edit that would add a validation
-- error, split a texture group, put a divider texture past slot 255 or a reference past
-- 2047 is refused for that file (the file is left alone). Each file gets a report of what
-- changed, and a summary follows; a progress line goes to stderr when there are more than
-- a few files and stderr is a terminal (or with `--progress`).
--
-- Exit code: 0 every file edited (or unchanged); 1 usage error, or an edit was refused;
-- 2 a file is not a PSDL file that can be decoded; 3 a file cannot be read or written.
-- @module psdl.cli.retexture

local common = require "psdl.cli.common"
local docjson = require "psdl.cli.docjson"
local string, math, table, io = string, math, table, io
local ipairs, pairs, require, pcall, tonumber, type, tostring =
  ipairs, pairs, require, pcall, tonumber, type, tostring

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "Rename, remap, move or compact textures in files and folders."

--- More files than this show a progress line (on a terminal).
M.PROGRESS_AFTER = 3

local function slot_range(text)
  local a, b = text:match("^%s*(%d+)%s*%.%.%s*(%d+)%s*$")
  if a then
    a, b = math.tointeger(tonumber(a)), math.tointeger(tonumber(b))
    if a and b and a >= 1 and b >= a then return a, b - a + 1 end
    return nil
  end
  a = text:match("^%s*(%d+)%s*$")
  a = a and math.tointeger(tonumber(a))
  if a and a >= 1 then return a, nil end
  return nil
end

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("paths", "PSDL files or folders."):args("+")
  cmd:option("--rename", "Rename texture OLD to NEW (repeatable)."):argname("<old=new>"):count("*")
  cmd:option("--map", "File of renames, one 'old=new' per line (repeatable)."):argname("<file>"):count("*")
  cmd:option("--remap", "Point texture references from slot A to slot B (repeatable)."):argname("<a=b>")
    :count("*")
  cmd:option("--rooms", "Rooms --remap applies to, e.g. 1-20,35 (default: all)."):argname("<list>")
  cmd:option("--move", "Move the group starting at slot A (A..Z: slots A to Z) so it starts at "
    .. "slot T (repeatable)."):argname("<a[..z]=t>"):count("*")
  cmd:option("--swap", "Exchange the groups starting at slots A and B (repeatable)."):argname("<a[..z]=b[..y]>")
    :count("*")
  cmd:flag("--compact", "Drop texture slots no reference uses, renumbering the references.")
  cmd:flag("-r --recursive", "Look for *.psdl files in the folders' subfolders too.")
  cmd:flag("-n --dry-run", "Report what would change; write nothing.")
  cmd:option("--out", "Write the edited files under this folder instead of in place."):argname("<dir>")
  cmd:flag("--follow-links", "Also edit *.psdl files (and, with -r, walk folders) that symbolic links in "
    .. "the folders lead to outside them.")
  cmd:flag("--no-backup", "When writing in place, keep no FILE.bak copy of the original.")
  cmd:flag("--json", "Write the reports as JSON.")
  cmd:flag("--progress", "Show a progress line on stderr even when it is not a terminal.")
  cmd:flag("-q --quiet", "Only the summary, refusals and errors.")
end

------------------------------------------------------------------------ operations

local function parse_pair(text, what)
  local a, b = text:match("^(.-)=(.*)$")
  if not a then common.failure("usage", string.format("%s %q: expected A=B", what, text)) end
  return a, b
end

--- Read a mapping file of renames.
-- @tparam string path
-- @tparam table map receives `[old] = new`
-- @tparam table origin receives `[old] = "file:line"` (for conflicting rows)
function M.read_map(path, map, origin)
  local text, err, code = common.read_file(path)
  if not text then common.failure(common.exit_for(code), "--map: " .. err) end
  local n = 0
  for raw in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local line = raw:gsub("\r$", ""):gsub("#.*$", ""):match("^%s*(.-)%s*$")
    if line ~= "" then
      local old, new = line:match("^(.-)%s*[=,]%s*(.-)$")
      if not old then old, new = line:match("^(%S+)%s+(%S+)$") end
      if not old or old == "" or new == "" then
        common.failure("bad_input", string.format("%s:%d: expected 'old=new', got %q", path, n, line))
      end
      local where = path .. ":" .. n
      if map[old] ~= nil and map[old] ~= new then
        common.failure("usage", string.format("%s: %q is renamed to both %q (%s) and %q", where, old,
          map[old], origin[old], new))
      end
      map[old], origin[old] = new, where
    end
  end
end

--- The list of operations the arguments ask for (see `psdl.retexture.apply`).
-- @tparam table args parsed arguments
-- @treturn table ops
function M.operations(args)
  local ops = {}
  local map, origin, any = {}, {}, false
  for _, path in ipairs(args.map or {}) do
    M.read_map(path, map, origin)
    any = true
  end
  for _, text in ipairs(args.rename or {}) do
    local old, new = parse_pair(text, "--rename")
    if old == "" then common.failure("usage", string.format("--rename %q: empty name", text)) end
    if map[old] ~= nil and map[old] ~= new then
      common.failure("usage", string.format("--rename %q: %q is renamed to both %q (%s) and %q", text,
        old, map[old], origin[old], new))
    end
    map[old], origin[old] = new, "--rename"
    any = true
  end
  if any then ops[#ops + 1] = { op = "rename", map = map } end

  local rooms
  if args.rooms then
    local err
    rooms, err = require("psdl.export").parse_rooms(args.rooms)
    if not rooms then common.failure("usage", "--rooms: " .. err) end
    if #(args.remap or {}) == 0 then common.failure("usage", "--rooms applies to --remap only") end
  end
  for _, text in ipairs(args.remap or {}) do
    local a, b = parse_pair(text, "--remap")
    local from, to = math.tointeger(tonumber(a)), math.tointeger(tonumber(b))
    if not from or not to then
      common.failure("usage", string.format("--remap %q: expected two texture slots A=B", text))
    end
    if from < 1 or to < 1 then
      common.failure("usage", string.format("--remap %q: slot %d: texture slots start at 1 (psdl info lists them)",
        text, from < 1 and from or to))
    end
    local max = require("psdl.retexture").MAX_VALUE
    if from > max or to > max then
      common.failure("usage", string.format("--remap %q: slot %d: texture slots run from 1 to %d (psdl info lists them)",
        text, from > max and from or to, max))
    end
    ops[#ops + 1] = { op = "remap", from = from, to = to, rooms = rooms }
  end
  for _, text in ipairs(args.move or {}) do
    local a, b = parse_pair(text, "--move")
    local from, len = slot_range(a)
    local to, tlen = slot_range(b)
    if not from or not to or tlen then
      common.failure("usage", string.format("--move %q: expected A=T or A..Z=T (texture slots)", text))
    end
    ops[#ops + 1] = { op = "move", from = from, to = to, length = len }
  end
  for _, text in ipairs(args.swap or {}) do
    local a, b = parse_pair(text, "--swap")
    local x, lx = slot_range(a)
    local y, ly = slot_range(b)
    if not x or not y then
      common.failure("usage", string.format("--swap %q: expected A=B or A..Z=B..Y (texture slots)", text))
    end
    ops[#ops + 1] = { op = "swap", a = x, b = y, length_a = lx, length_b = ly }
  end
  if args.compact then ops[#ops + 1] = { op = "compact" } end
  if #ops == 0 then
    common.failure("usage", "nothing to do: give --rename, --map, --remap, --move, --swap or --compact")
  end
  return ops
end

------------------------------------------------------------------------ files

-- The files to edit: {path =, rel =, real =} (rel: path under the folder given, for --out;
-- real: the file's canonical name). Each file is edited once however many names reach it
-- (the same file named twice, a link to a file of the same tree): a non-repeatable edit
-- such as --swap 1=4 applied twice would silently undo itself. A symbolic link found in a
-- folder that leads outside every folder given is skipped with a note unless
-- `follow_links`; links to subfolders are walked (with -r) only with `follow_links`.
local function collect(paths, recursive, follow_links, ctx)
  local lfs = require "lfs"
  local psdl = common.psdl()
  local files, code, missing = {}, ctx.exit.ok, 0
  local seen = {}      -- real path -> the name it was first met under
  local walked = {}    -- real paths of folders walked (a loop of links ends here)
  local roots = {}     -- real paths of the folders given
  local function inside(real)
    for _, root in ipairs(roots) do
      if real == root or real:sub(1, #root + 1) == (root == "/" and "/" or root .. "/") then return true end
    end
    return false
  end
  local function add(path, rel, real)
    if seen[real] then
      ctx:note(string.format("%s: the same file as %s: edited once", path, seen[real]))
      return
    end
    seen[real] = path
    files[#files + 1] = { path = path, rel = rel, real = real }
  end
  local function walk(dir, rel)
    local rdir = psdl.real_path(dir)
    if rdir then
      if walked[rdir] then return end
      walked[rdir] = true
    end
    local names = {}
    local ok, iter, state = pcall(lfs.dir, dir)
    if not ok then
      code = math.max(code, ctx:fail("io", tostring(iter)))
      missing = missing + 1
      return
    end
    for name in iter, state do
      if name ~= "." and name ~= ".." then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do
      local path = dir .. "/" .. name
      local lmode = lfs.symlinkattributes(path, "mode")
      local mode = lmode == "link" and lfs.attributes(path, "mode") or lmode
      local real = lmode == "link" and psdl.real_path(path) or nil
      if lmode == "link" and mode == "directory" then
        if recursive then
          if follow_links then
            walk(path, rel .. name .. "/")
          else
            ctx:note(string.format("%s: a link to a folder: skipped (--follow-links walks it)", path))
          end
        end
      elseif mode == "directory" then
        if recursive then walk(path, rel .. name .. "/") end
      elseif name:lower():match("%.psdl$") and mode == "file" then
        if lmode == "link" and not follow_links and not (real and inside(real)) then
          ctx:note(string.format("%s: a link to %s, outside the folders given: skipped (--follow-links "
            .. "edits it)", path, tostring(real)))
        else
          add(path, rel .. name, real or psdl.real_path(path) or path)
        end
      end
    end
  end
  for _, p in ipairs(paths) do
    if lfs.attributes(p, "mode") == "directory" then roots[#roots + 1] = psdl.real_path(p) end
  end
  for _, p in ipairs(paths) do
    local mode = lfs.attributes(p, "mode")
    if mode == "directory" then
      walk((p:gsub("/+$", "")), "")
    elseif mode then
      add(p, p:match("([^/]*)$"), psdl.real_path(p) or p)
    else
      code = math.max(code, ctx:fail("io", p .. ": No such file or directory"))
      missing = missing + 1
    end
  end
  return files, code, missing
end

local function mkdirs(path)
  local lfs = require "lfs"
  local sofar = path:sub(1, 1) == "/" and "/" or ""
  for part in path:gmatch("[^/]+") do
    sofar = sofar .. part
    if not lfs.attributes(sofar, "mode") then
      local ok, err = lfs.mkdir(sofar)
      if not ok then return nil, sofar .. ": " .. tostring(err) end
    end
    sofar = sofar .. "/"
  end
  return true
end

local function error_keys(psdl, doc)
  local _, problems, counts = psdl.validate(doc)
  local keys = {}
  for _, p in ipairs(problems or {}) do
    if p.severity == "error" then keys[p.rule .. "|" .. (p.path or "")] = p end
  end
  return keys, counts.errors
end

------------------------------------------------------------------------ progress

local function progress_bar(ctx, enabled, total)
  local shown = false
  local bar = {}
  function bar.show(k, name)
    if not enabled then return end
    local width = 24
    local done = math.floor(width * (k - 1) / total + 0.5)
    local text = string.format("\r[%s%s] %d/%d %s", string.rep("#", done), string.rep(".", width - done),
      k, total, name)
    if #text > 79 then text = text:sub(1, 76) .. "..." end
    ctx.stderr:write(text, string.rep(" ", math.max(0, 80 - #text)))
    shown = true
  end
  function bar.clear()
    if shown then
      ctx.stderr:write("\r", string.rep(" ", 80), "\r")
      shown = false
    end
  end
  return bar
end

local function stderr_is_tty(ctx)
  if ctx.stderr ~= io.stderr then return false end
  local ok, term = pcall(require, "term")
  return ok and type(term.isatty) == "function" and term.isatty(io.stderr) or false
end

------------------------------------------------------------------------ command

--- Edit one file. Returns a result table for the report.
-- @tparam table psdl
-- @tparam table file `{path =, rel =}`
-- @tparam table ops
-- @tparam table args
-- @treturn table `{file =, status = "changed"|"unchanged"|"refused"|"error", code =, message =,
--   reports =, written =, backup =}`
function M.edit_file(psdl, file, ops, args)
  local r = { file = file.path, status = "unchanged" }
  local bytes, err, code = common.read_file(file.path)
  if not bytes then
    r.status, r.code, r.message = "error", "io", err
    return r
  end
  local doc, derr, dcode = psdl.decode(bytes)
  if not doc then
    r.status, r.code, r.message = "error", dcode, file.path .. ": " .. common.clean(derr)
    return r
  end
  local before = error_keys(psdl, doc)
  local reports, rmsg = psdl.retexture.apply(doc, ops)
  if not reports then
    r.status, r.code, r.message = "refused", "refused", file.path .. ": refused: " .. rmsg
    return r
  end
  r.reports = reports
  local changed = false
  for _, rep in ipairs(reports) do if #rep.changes > 0 then changed = true end end
  if not changed then return r end
  local after, nafter = error_keys(psdl, doc)
  local new = {}
  for k, p in pairs(after) do if not before[k] then new[#new + 1] = p end end
  if #new > 0 then
    table.sort(new, function(x, y) return x.path < y.path end)
    r.status, r.code = "refused", "refused"
    r.message = string.format("%s: refused: the edit would add %d validation error%s: %s%s: %s", file.path,
      #new, #new == 1 and "" or "s", new[1].path ~= "" and (new[1].path .. ": ") or "", new[1].rule,
      new[1].message)
    return r
  end
  r.status = "changed"
  if args.dry_run then return r end
  local target = file.path
  if args.out then
    target = args.out:gsub("/+$", "") .. "/" .. file.rel
    local dir = target:match("^(.*)/[^/]*$")
    if dir then
      local ok, merr = mkdirs(dir)
      if not ok then
        r.status, r.code, r.message = "error", "io", merr
        return r
      end
    end
  elseif not args.no_backup then
    -- the backup holds the original: an existing FILE.bak (from an earlier edit) is kept
    local bak = file.path .. ".bak"
    local lfs = require "lfs"
    local bmode = lfs.symlinkattributes(bak, "mode")
    if bmode then
      -- only a plain file holding an earlier PSDL original counts as the kept original
      local why
      if bmode == "link" then
        why = "is a symbolic link"
      elseif bmode ~= "file" then
        why = "is not a plain file"
      elseif common.same_file(bak, file.path) then
        why = "is the file itself (a hard link)"
      else
        local old = common.read_file(bak)
        if not old or not psdl.decode(old) then why = "is not a PSDL file (not a copy of the original)" end
      end
      if why then
        r.status, r.code = "refused", "refused"
        r.message = string.format("%s: refused: the backup %s %s, so it cannot be the kept original; move it "
          .. "away (or use --no-backup or --out)", file.path, bak, why)
        return r
      end
      r.backup_kept = true
    else
      local ok, berr = psdl.write_file(bak, bytes)
      if not ok then
        r.status, r.code, r.message = "error", "io", common.clean(berr)
        return r
      end
    end
    r.backup = bak
  end
  -- errors the file already had do not stop the write; the edit added none
  local ok, werr, wcode = psdl.write(doc, target, { force = nafter > 0 })
  if not ok then
    r.status, r.code, r.message = "error", wcode, common.clean(werr)
    return r
  end
  r.written = target
  return r
end

local function print_result(out, r, quiet, dry_run)
  if r.status == "error" or r.status == "refused" then return end -- printed by ctx:fail
  if quiet then return end
  local what
  if r.status == "unchanged" then
    what = "unchanged"
  elseif dry_run then
    what = "would change (dry run)"
  else
    what = "changed, written" .. (r.written ~= r.file and (" to " .. r.written) or "") ..
      (r.backup and (" (backup " .. r.backup .. (r.backup_kept and ", kept from an earlier edit" or "") .. ")") or "")
  end
  out:write(r.file, ": ", what, "\n")
  for _, rep in ipairs(r.reports or {}) do
    out:write("  ", rep.summary, "\n")
    for _, w in ipairs(rep.warnings) do out:write("  warning: ", w, "\n") end
  end
end

local function json_result(r)
  local ops = {}
  for i, rep in ipairs(r.reports or {}) do
    local changes = {}
    for j, c in ipairs(rep.changes) do changes[j] = { path = c.path, from = c.from, to = c.to } end
    ops[i] = { op = rep.op, summary = rep.summary, changes = changes, warnings = rep.warnings }
  end
  return {
    file = r.file, status = r.status, written = r.written, backup = r.backup, operations = ops,
    error = r.message and { code = r.code, message = r.message } or nil,
  }
end

--- Run `psdl retexture`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local psdl = common.psdl()
  local ops = M.operations(args)
  if args.out and args.dry_run then common.failure("usage", "--out and --dry-run together: nothing would be written") end
  local files, code, missing = collect(args.paths, args.recursive, args.follow_links, ctx)
  if args.out then
    -- an output that lands on an input (--out naming the files' own folder) would edit in
    -- place without a .bak: refuse before anything is written
    local reals = {}
    for _, file in ipairs(files) do reals[#reals + 1] = file.path end
    for _, file in ipairs(files) do
      common.refuse_overwrite(reals, { { args.out:gsub("/+$", "") .. "/" .. file.rel, "--out" } },
        { folders_made = true })
    end
  end
  local bar = progress_bar(ctx, #files > M.PROGRESS_AFTER and (args.progress or stderr_is_tty(ctx)), #files)
  -- paths that could not be read at all count as failed files too
  local counts = { changed = 0, unchanged = 0, refused = 0, failed = missing }
  local results = {}
  for k, file in ipairs(files) do
    bar.show(k, file.path)
    local r = M.edit_file(psdl, file, ops, args)
    bar.clear()
    if r.status == "error" then
      counts.failed = counts.failed + 1
      code = math.max(code, ctx:fail(common.exit_for(r.code), r.message))
    elseif r.status == "refused" then
      counts.refused = counts.refused + 1
      code = math.max(code, ctx:fail("problems", r.message))
    else
      counts[r.status] = counts[r.status] + 1
    end
    if args.json then
      results[#results + 1] = json_result(r)
    else
      print_result(ctx.stdout, r, args.quiet, args.dry_run)
    end
  end
  bar.clear()
  if args.json then
    ctx.stdout:write(docjson.encode({
      format = "psdlkit-retexture", version = 1, dry_run = args.dry_run and true or false,
      files = results, summary = {
        files = #files + missing, changed = counts.changed, unchanged = counts.unchanged,
        refused = counts.refused, failed = counts.failed,
      },
    }))
  else
    ctx.stdout:write(string.format("%s file%s: %s %s, %s unchanged, %s refused, %s failed%s\n",
      common.int(#files + missing), #files + missing == 1 and "" or "s", common.int(counts.changed),
      args.dry_run and "would change" or "changed", common.int(counts.unchanged),
      common.int(counts.refused), common.int(counts.failed),
      args.dry_run and " (dry run: nothing written)" or ""))
  end
  return code
end

return M
