--- `psdl view CITY [-o CITY.html] [--open] [--textures DIR] [--watch [--port N]]`: the city
-- in an interactive 3D page (docs/viewer.md).
--
-- CITY is a PSDL file, a city script (.lua, built as `psdl build` does), an OpenStreetMap
-- extract (.osm, imported as `psdl osm -o` does) or a package (.ar, as `psdl package`
-- writes it: the city inside, with its AI lanes (.bai) and visibility sets (.cpvs)). The page is one self-contained HTML file:
-- three.js, the viewer and the city's geometry inside (`psdl.view`); it needs no network.
--
-- With `--watch` the command serves the page on http://127.0.0.1:PORT/ and builds again
-- whenever the input (or a file the script loaded) changes; the open page loads the new
-- city in place, keeping the camera. A build that fails is shown over the page, naming the
-- script line, and the last good city stays on screen.
--
-- Exit code: 0 written (or the watch ended); 1 usage error; 2 the input cannot be read or
-- built; 3 a file cannot be written, or the port cannot be opened.
-- @module psdl.cli.view

local common = require "psdl.cli.common"
local source = require "psdl.cli.source"
local string, os, io, require, tonumber, tostring, type, math, pcall, ipairs, pairs =
  string, os, io, require, tonumber, tostring, type, math, pcall, ipairs, pairs

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "The city in an interactive 3D page (one HTML file), optionally rebuilt live."

--- Longer description shown by `psdl view --help`.
M.description = "Write one self-contained HTML page showing the city in 3D (three.js): orbit, fly and "
  .. "drive cameras, click a surface to inspect its room, layers by attribute type and room kind, "
  .. "perimeters, neighbour links, road records, and the validation problems. CITY is a .psdl file, a "
  .. "city script (.lua), an OpenStreetMap extract (.osm) or a package (.ar: with its AI lanes and visibility). --watch serves the page on 127.0.0.1 and "
  .. "rebuilds when the script (or a file it loads) changes: the open page reloads the city in place."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("city", "City: .psdl, a city script (.lua), an OSM extract (.osm) or a package (.ar, from "
    .. "psdl package: its city with the AI lanes and visibility sets).")
  cmd:option("-o --output", "Page to write (default: the city's name with .html, in the current folder)."):argname("<html>")
  cmd:flag("--open", "Open the page (or, with --watch, its address) in the system's browser.")
  cmd:option("--textures", "Folder of the game's textures (NAME.tex as in the game's texture folder, "
    .. "or .png/.jpg): draw the city with them instead of colours by role."):argname("<dir>")
  cmd:option("--bai", "The city's AI road network (.bai) for the lanes layer (default: NAME.bai next to "
    .. "a NAME.psdl, as psdl package --dir writes it)."):argname("<file>")
  cmd:option("--cpvs", "The city's visibility sets (.cpvs) to show what the selected room sees (default: "
    .. "NAME.cpvs next to a NAME.psdl)."):argname("<file>")
  cmd:option("--seed", "Seed of a script's or an extract's city (an integer)."):argname("<n>")
  cmd:flag("--watch", "Serve the page on 127.0.0.1 and rebuild it when the input changes (Ctrl-C stops).")
  cmd:option("--port", "Port of --watch's server (0: any free port).", "8642"):argname("<n>")
  cmd:flag("-q --quiet", "Print nothing on success.")
end

local IMAGE_EXTS = { { "png", "image/png" }, { "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" } }

--- Largest side of a `.tex` level put into the page (the first mip level at most this big):
-- a city's textures stay a few MB.
M.TEX_SIDE = 256

-- Formats of .tex whose texels the page expands (§9; 2 "P8A8" has no documented layout).
local TEX_FORMATS = { [1] = true, [6] = true, [14] = true, [15] = true, [16] = true, [17] = true, [18] = true }

-- One level of a .tex file for the page (see psdl.view.payload), or nil and why not.
local function tex_image(psdl, path)
  local t, err = psdl.tex.read(path)
  if not t then return nil, common.clean(err) end
  if not TEX_FORMATS[t.format] or type(t.levels) ~= "table" or not t.levels[1] then
    return nil, string.format("%s: format %s is not drawn", path, tostring(t.format))
  end
  local k = 1
  local w, h = t.width, t.height
  while (w > M.TEX_SIDE or h > M.TEX_SIDE) and t.levels[k + 1] do
    k, w, h = k + 1, math.max(1, w // 2), math.max(1, h // 2)
  end
  local flags = t.flags or 0
  return { width = w, height = h, format = t.format, texels = t.levels[k], palette = t.palette,
    clamp_u = flags & 0x1 ~= 0, clamp_v = flags & 0x10000 ~= 0 }
end

-- The images of the document's textures in dir: `NAME.tex` (the game's own, §9), `.png`,
-- `.jpg` or `.jpeg`, any case. Returns images (for psdl.view.payload), found, missing,
-- notes (files that could not be used).
local function texture_images(psdl, doc, dir)
  local lfs = require "lfs"
  local mode = lfs.attributes(dir, "mode")
  if mode ~= "directory" then common.failure("io", "--textures: " .. dir .. " is not a folder (the game's "
    .. "texture folder with NAME.tex, or .png/.jpg images; docs/viewer.md)") end
  local by_lower = {}
  for name in lfs.dir(dir) do by_lower[name:lower()] = name end
  local mime = require "mime"
  local images, found, missing, notes = {}, 0, 0, {}
  for _, name in ipairs(doc.textures or {}) do
    if type(name) == "string" and name ~= "" and images[name] == nil then
      local file = by_lower[(name .. ".tex"):lower()]
      if file then
        local img, why = tex_image(psdl, dir .. "/" .. file)
        images[name] = img or false
        if not img then notes[#notes + 1] = why end
      end
      for _, e in ipairs(IMAGE_EXTS) do
        file = not images[name] and by_lower[(name .. "." .. e[1]):lower()]
        if file then
          local data = common.read_file(dir .. "/" .. file)
          if data then images[name] = "data:" .. e[2] .. ";base64," .. mime.b64(data) end
        end
      end
      if images[name] then found = found + 1 else missing = missing + 1 end
      if images[name] == false then images[name] = nil end
    end
  end
  return images, found, missing, notes
end

-- The package files shown with the city: `--bai`/`--cpvs`, else NAME.bai/NAME.cpvs next to
-- a NAME.psdl. A file named on the command line that cannot be read is a failure; one
-- found next to the city is a note.
local function package_files(psdl, args, ctx, inside)
  local out = {}
  for k, v in pairs(inside or {}) do out[k] = v end
  local base = source.kind(args.city) == "psdl" and args.city:gsub("%.[^./]*$", "") or nil
  for _, ext in ipairs { "bai", "cpvs" } do
    local path, given = args[ext], args[ext] ~= nil
    if not path and base and not out[ext] then
      local f = io.open(base .. "." .. ext, "rb")
      if f then f:close(); path = base .. "." .. ext end
    end
    if path then
      local t, err = psdl[ext].read(path)
      if t then
        out[ext] = t
      elseif given then
        common.failure("bad_input", common.clean(err))
      else
        ctx:note(common.clean(err) .. " (shown without it)")
      end
    end
  end
  return out
end

-- A package (`psdl package`'s .ar) is viewed as the city inside with its lanes and
-- visibility sets.
local function is_package(path)
  return path:lower():match("%.ar$") ~= nil
end

-- The document of a package, its .bai/.cpvs (`{bai =, cpvs =}`) and the archive's bytes; a
-- failure naming the archive when it holds no readable city.
local function package_city(path, ctx)
  local bytes, err, code = common.read_file(path)
  if not bytes then common.failure(common.exit_for(code), common.clean(err)) end
  local city, why = require("psdl.package.archive").read(bytes, path)
  if not city then
    -- not a zip at all (empty, cut short): the words `psdl validate X.ar` uses
    local okc, problems = pcall(require("psdl.package.validate").check, bytes, path)
    for _, p in ipairs(okc and problems or {}) do
      if p.rule == "zip_end_record" then common.failure("bad_input", path .. ": " .. p.message) end
    end
    common.failure("bad_input", why)
  end
  for _, n in ipairs(city.notes) do ctx:note(n) end
  return city.doc, { bai = city.bai, cpvs = city.cpvs }, bytes
end

-- The problems shown for a package: the city's own (`psdl.validate`, placed on its rooms) and
-- then the package's (`psdl.package.validate.check`, what `psdl validate X.ar` reports: the
-- zip structure, missing files, the companion files), less its copy of the city's errors.
local function package_problems(psdl, doc, bytes, name)
  local _, problems = psdl.validate(doc, { name = name })
  local list = {}
  for _, p in ipairs(problems or {}) do list[#list + 1] = p end
  local okc, more = pcall(require("psdl.package.validate").check, bytes, name)
  if not okc then
    list[#list + 1] = { severity = "error", rule = "package_check", path = "",
                        message = "the package cannot be checked: " .. common.clean(more) }
    return list
  end
  for _, p in ipairs(more or {}) do
    if not tostring(p.rule):match("^psdl_") then list[#list + 1] = p end
  end
  return list
end

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Open a file or address in the system's browser ($BROWSER, else xdg-open). The browser
-- runs on in the background; a command that exits with a failure within 2 s (no display,
-- a missing program, BROWSER=/bin/false) counts as not opened. Returns true, or false and
-- why (a message for the note).
local function open_in_browser(target)
  local browser = os.getenv("BROWSER")
  local cmd, what
  if browser and browser ~= "" then
    cmd = browser:gsub("%%s", function() return shell_quote(target) end)
    if cmd == browser then cmd = browser .. " " .. shell_quote(target) end
    what = "$BROWSER (" .. browser .. ") failed"
  elseif os.execute("command -v xdg-open >/dev/null 2>&1") then
    cmd = "xdg-open " .. shell_quote(target)
    what = "xdg-open failed (no display or no browser set up?)"
  else
    return false, "no browser found (set BROWSER or install xdg-utils)"
  end
  -- started in the background, watched for up to 2 s: still running means it started
  local script = "{ " .. cmd .. "\n} >/dev/null 2>&1 </dev/null & p=$!; i=0; while [ $i -lt 20 ]; do "
    .. "if ! kill -0 $p 2>/dev/null; then wait $p; exit $?; fi; sleep 0.1; i=$((i+1)); done; exit 0"
  if os.execute(script) then return true end
  return false, "could not open a browser: " .. what
end

local function default_output(path)
  local base = path:match("([^/\\]*)$"):gsub("%.[^.]*$", "")
  return base .. ".html"
end

local function same_file(a, b)
  local lfs = require "lfs"
  local ia, ib = lfs.attributes(a), lfs.attributes(b)
  return ia and ib and ia.ino == ib.ino and ia.dev == ib.dev
end

--- Run `psdl view`.
-- @tparam table args parsed arguments
-- @tparam table ctx the command context (see `psdl.cli`)
-- @treturn integer exit code
function M.run(args, ctx)
  local seed = common.seed(args.seed)
  local port = math.tointeger(tonumber(args.port))
  if not port or port < 0 or port > 65535 then
    common.failure("usage", string.format("--port: an integer 0-65535 expected, got %q", args.port))
  end
  local out = args.output or (not args.watch and default_output(args.city)) or nil
  if out and (out == args.city or same_file(out, args.city)) then
    common.failure("usage", "-o " .. out .. " is the input: the input is never overwritten")
  end
  if out and not out:lower():match("%.html?$") then
    common.failure("usage", "-o: the page is HTML: name it .html, got " .. out)
  end
  common.check_outputs({ { out, "-o" } }) -- before the city is built
  local psdl = common.psdl()
  local view = require "psdl.view"
  local ok, terr = view.template()
  if not ok then common.failure("internal", terr) end
  local name = args.city:match("([^/\\]*)$")
  if args.watch then
    if is_package(args.city) then
      common.failure("usage", "--watch rebuilds a script or an extract: " .. args.city .. " is a package (view it without --watch)")
    end
    return M.watch(args, ctx, psdl, port, seed, name)
  end

  local doc, inside, problems
  if is_package(args.city) then
    local bytes
    doc, inside, bytes = package_city(args.city, ctx)
    problems = package_problems(psdl, doc, bytes, name)
  else
    doc = source.document(psdl, args.city, { seed = seed, validate = false, outputs = { { out, "-o" } } })
  end
  local images
  if args.textures then
    local found, missing, notes
    images, found, missing, notes = texture_images(psdl, doc, args.textures)
    for _, n in ipairs(notes) do ctx:note(n) end
    if not args.quiet then
      ctx.stdout:write(string.format("textures: %d found in %s, %d not found (drawn by role)\n", found,
        args.textures, missing))
    end
  end
  local pkg = package_files(psdl, args, ctx, inside)
  local html, stats = view.html(doc, { name = name, images = images, bai = pkg.bai, cpvs = pkg.cpvs,
                                         problems = problems })
  if not html then common.failure("internal", stats) end
  local wok, err, code = common.write_file_atomic(out, html)
  if not wok then common.failure(common.exit_for(code), err) end
  if not args.quiet then
    ctx.stdout:write(string.format("%s: %s rooms, %s triangles, %s problems%s%s, %.1f MB\n", out, common.int(stats.rooms),
      common.int(stats.triangles), common.int(stats.problems), pkg.bai and ", AI lanes" or "",
      pkg.cpvs and ", visibility" or "", stats.bytes / 1e6))
  end
  if args.open then
    local opened, why = open_in_browser(out)
    if not opened then ctx:note(why .. "; open " .. out .. " yourself") end
  end
  return ctx.exit.ok
end

--- `psdl view --watch`: serve the page and rebuild on changes (runs until ended).
-- @treturn integer exit code
function M.watch(args, ctx, psdl, port, seed, name)
  local view = require "psdl.view"
  local serve = require "psdl.serve"
  local watch = require "psdl.watch"
  local cjson = require "cjson"
  local WATCH = { interval = 300 }
  local current = { version = 0 }
  local empty = { rooms = {}, vertices = {}, heights = {}, textures = {}, roads = {} }

  local socket = require "socket"
  local server
  -- The files the last build read: a save of one of them supersedes a build that runs.
  local watched = { args.city }
  -- The build that runs: `snap` (the watched files when it started), `next_serve`,
  -- `next_look` (times), `changed` (the file whose save superseded it).
  local running

  -- Called by the sandbox about every 10 ms of processor time while a script builds: answer
  -- waiting requests (the last good city and its state), and abandon the build (true) when
  -- a watched file was saved again.
  local function poll()
    local r = running
    if not r then return false end
    local now = socket.gettime()
    if server and now >= r.next_serve then
      server.step(0)
      r.next_serve = socket.gettime() + 0.02
    end
    if now >= r.next_look then
      r.next_look = now + WATCH.interval / 1000
      r.changed = watch.changed(r.snap)
      if r.changed then return true end
    end
    return false
  end

  local function build_once()
    local files
    local ok, err = pcall(function()
      local doc
      doc, files = source.document(psdl, args.city, { seed = seed, validate = false, poll = poll,
        outputs = { { args.output, "-o" } } })
      local images = args.textures and (texture_images(psdl, doc, args.textures)) or nil
      local pkg = package_files(psdl, args, ctx)
      local payload, stats = view.payload(doc, { name = name, images = images, watch = WATCH, bai = pkg.bai,
        cpvs = pkg.cpvs })
      current.payload = view.deflate(payload)
      current.stats = stats
      current.error = nil
      if args.output then
        local html = assert(view.page(payload, name))
        local wok, werr = common.write_file_atomic(args.output, html)
        if not wok then common.failure("io", werr) end
      end
      if not args.quiet then
        ctx.stdout:write(string.format("psdl view: built %s: %s rooms, %s triangles, %s problems\n", name,
          common.int(stats.rooms), common.int(stats.triangles), common.int(stats.problems)))
      end
    end)
    if not ok and running.changed then return nil end -- superseded: the caller builds again
    if not ok then
      local msg = common.is_failure(err) and err.msg or ("internal error: " .. tostring(err))
      local file, line = source.location(msg)
      current.error = { message = msg, file = file, line = line }
      files = source.kind(args.city) == "script" and source.last_files or { args.city }
      ctx.stderr:write(string.format("psdl view: %s (the page keeps the last good city)\n", msg))
    end
    current.version = current.version + 1
    if ctx.stdout.flush then ctx.stdout:flush() end
    return files
  end

  -- Build until a build ends without a newer save of its files superseding it. Returns the
  -- files to watch and the snapshot of the watched files taken before the build.
  local function build()
    while true do
      local now = socket.gettime()
      running = { snap = watch.snapshot(watched), next_serve = now, next_look = now + WATCH.interval / 1000 }
      local files = build_once()
      local changed, before = running.changed, running.snap
      running = nil
      if not changed then
        watched = files or watched
        return files, before -- a save during the build is seen by the next poll
      end
      if not args.quiet then
        ctx.stdout:write(string.format("psdl view: %s changed while building: that build is abandoned, building again\n",
          changed))
        if ctx.stdout.flush then ctx.stdout:flush() end
      end
    end
  end

  local function page()
    if current.payload then return assert(view.page(current.payload, name, true)) end
    -- no good build yet: an empty city under the error
    return assert(view.page(view.payload(empty, { name = name, watch = WATCH, error = current.error, problems = {} }), name))
  end

  local err
  -- listening before the first build: requests are answered while it runs (from `poll`)
  server, err = serve.listen {
    port = port,
    handler = function(path)
      if path == "/" or path == "/index.html" then
        return 200, "text/html; charset=utf-8", page()
      elseif path == "/state" then
        return 200, "application/json", cjson.encode { version = current.version, error = current.error or cjson.null,
          building = running ~= nil }
      elseif path == "/payload" then
        if not current.payload then return 404, "text/plain", "no city built yet\n" end
        return 200, "application/octet-stream", current.payload
      end
      return 404, "text/plain", "not found\n"
    end,
  }
  if not server then common.failure("io", err) end
  local files, before = build()
  ctx.stdout:write(string.format("psdl view: serving %s (watching %s; Ctrl-C stops)\n", server.url, args.city))
  if ctx.stdout.flush then ctx.stdout:flush() end
  if args.open then
    local opened, why = open_in_browser(server.url)
    if not opened then ctx:note(why .. "; open " .. server.url .. " yourself") end
  end
  local first = true
  watch.loop {
    fallback = { args.city },
    build = function()
      if first then first = false; return files, before end
      return build()
    end,
    wait = function(seconds)
      local t_end = socket.gettime() + seconds
      repeat
        server.step(math.max(0, t_end - socket.gettime()))
      until socket.gettime() >= t_end
    end,
    changed = function(p)
      if not args.quiet then
        ctx.stdout:write(string.format("psdl view: %s changed, building again\n", p))
        if ctx.stdout.flush then ctx.stdout:flush() end
      end
    end,
    stop = args.watch_stop,
  }
  server.close()
  return ctx.exit.ok
end

return M
