--- `psdl view CITY [-o CITY.html] [--open] [--textures DIR] [--watch [--port N]]`: the city
-- in an interactive 3D page (docs/viewer.md).
--
-- CITY is a PSDL file, a city script (.lua, built as `psdl build` does) or an OpenStreetMap
-- extract (.osm, imported as `psdl osm -o` does). The page is one self-contained HTML file:
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
local string, os, io, require, tonumber, tostring, type, math, pcall, ipairs =
  string, os, io, require, tonumber, tostring, type, math, pcall, ipairs

local M = {}

--- One-line description shown by `psdl --help`.
M.summary = "The city in an interactive 3D page (one HTML file), optionally rebuilt live."

--- Longer description shown by `psdl view --help`.
M.description = "Write one self-contained HTML page showing the city in 3D (three.js): orbit, fly and "
  .. "drive cameras, click a surface to inspect its room, layers by attribute type and room kind, "
  .. "perimeters, neighbour links, road records, and the validation problems. CITY is a .psdl file, a "
  .. "city script (.lua) or an OpenStreetMap extract (.osm). --watch serves the page on 127.0.0.1 and "
  .. "rebuilds when the script (or a file it loads) changes: the open page reloads the city in place."

--- Declare the command's arguments.
-- @tparam table cmd the argparse command
function M.configure(cmd)
  cmd:argument("city", "City: .psdl, a city script (.lua) or an OSM extract (.osm).")
  cmd:option("-o --output", "Page to write (default: the city's name with .html, in the current folder)."):argname("<html>")
  cmd:flag("--open", "Open the page (or, with --watch, its address) in the system's browser.")
  cmd:option("--textures", "Folder of the game's textures (PNG or JPEG named after the texture): draw "
    .. "the city with them instead of colours by role."):argname("<dir>")
  cmd:option("--seed", "Seed of a script's or an extract's city (an integer)."):argname("<n>")
  cmd:flag("--watch", "Serve the page on 127.0.0.1 and rebuild it when the input changes (Ctrl-C stops).")
  cmd:option("--port", "Port of --watch's server (0: any free port).", "8642"):argname("<n>")
  cmd:flag("-q --quiet", "Print nothing on success.")
end

local IMAGE_EXTS = { { "png", "image/png" }, { "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" } }

-- Data URLs of the images named after the document's textures in dir.
local function texture_images(doc, dir)
  local lfs = require "lfs"
  local mode = lfs.attributes(dir, "mode")
  if mode ~= "directory" then common.failure("io", "--textures: " .. dir .. " is not a folder") end
  local by_lower = {}
  for name in lfs.dir(dir) do by_lower[name:lower()] = name end
  local mime = require "mime"
  local images, found, missing = {}, 0, 0
  for _, name in ipairs(doc.textures or {}) do
    if type(name) == "string" and name ~= "" and not images[name] then
      local got
      for _, e in ipairs(IMAGE_EXTS) do
        local file = by_lower[(name .. "." .. e[1]):lower()]
        if file then
          local data = common.read_file(dir .. "/" .. file)
          if data then
            images[name] = "data:" .. e[2] .. ";base64," .. mime.b64(data)
            got = true
            break
          end
        end
      end
      if got then found = found + 1 else missing = missing + 1 end
    end
  end
  return images, found, missing
end

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Open a file or address in the system's browser ($BROWSER, else xdg-open); false when
-- there is none.
local function open_in_browser(target)
  local browser = os.getenv("BROWSER")
  local cmd
  if browser and browser ~= "" then
    cmd = browser:gsub("%%s", function() return shell_quote(target) end)
    if cmd == browser then cmd = browser .. " " .. shell_quote(target) end
  elseif os.execute("command -v xdg-open >/dev/null 2>&1") then
    cmd = "xdg-open " .. shell_quote(target)
  else
    return false
  end
  return os.execute(cmd .. " >/dev/null 2>&1 &") and true or false
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
  local seed
  if args.seed then
    seed = math.tointeger(tonumber(args.seed))
    if not seed then common.failure("usage", string.format("--seed: an integer expected, got %q", args.seed)) end
  end
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
  local psdl = common.psdl()
  local view = require "psdl.view"
  local ok, terr = view.template()
  if not ok then common.failure("internal", terr) end
  local name = args.city:match("([^/\\]*)$")
  if args.watch then return M.watch(args, ctx, psdl, port, seed, name) end

  local doc = source.document(psdl, args.city, { seed = seed })
  local images
  if args.textures then
    local found, missing
    images, found, missing = texture_images(doc, args.textures)
    if not args.quiet then
      ctx.stdout:write(string.format("textures: %d found in %s, %d not found (drawn by role)\n", found,
        args.textures, missing))
    end
  end
  local html, stats = view.html(doc, { name = name, images = images })
  if not html then common.failure("internal", stats) end
  local wok, err, code = common.write_file_atomic(out, html)
  if not wok then common.failure(common.exit_for(code), err) end
  if not args.quiet then
    ctx.stdout:write(string.format("%s: %s rooms, %s triangles, %s problems, %.1f MB\n", out, common.int(stats.rooms),
      common.int(stats.triangles), common.int(stats.problems), stats.bytes / 1e6))
  end
  if args.open and not open_in_browser(out) then
    ctx:note("no browser found (set BROWSER or install xdg-utils): open " .. out .. " yourself")
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

  local function build()
    local files
    local ok, err = pcall(function()
      local doc
      doc, files = source.document(psdl, args.city, { seed = seed })
      local images = args.textures and (texture_images(doc, args.textures)) or nil
      local payload, stats = view.payload(doc, { name = name, images = images, watch = WATCH })
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

  local function page()
    if current.payload then return assert(view.page(current.payload, name, true)) end
    -- no good build yet: an empty city under the error
    return assert(view.page(view.payload(empty, { name = name, watch = WATCH, error = current.error, problems = {} }), name))
  end

  local server, err
  local files = build()
  server, err = serve.listen {
    port = port,
    handler = function(path)
      if path == "/" or path == "/index.html" then
        return 200, "text/html; charset=utf-8", page()
      elseif path == "/state" then
        return 200, "application/json", cjson.encode { version = current.version, error = current.error or cjson.null }
      elseif path == "/payload" then
        if not current.payload then return 404, "text/plain", "no city built yet\n" end
        return 200, "application/octet-stream", current.payload
      end
      return 404, "text/plain", "not found\n"
    end,
  }
  if not server then common.failure("io", err) end
  ctx.stdout:write(string.format("psdl view: serving %s (watching %s; Ctrl-C stops)\n", server.url, args.city))
  if ctx.stdout.flush then ctx.stdout:flush() end
  if args.open and not open_in_browser(server.url) then
    ctx:note("no browser found (set BROWSER or install xdg-utils): open " .. server.url .. " yourself")
  end
  local first = true
  watch.loop {
    fallback = { args.city },
    build = function()
      if first then first = false; return files end
      return build()
    end,
    wait = function(seconds)
      local socket = require "socket"
      local t_end = socket.gettime() + seconds
      repeat
        server.step(math.max(0, t_end - socket.gettime()))
      until socket.gettime() >= t_end
    end,
    changed = function(p)
      if not args.quiet then ctx.stdout:write(string.format("psdl view: %s changed, building again\n", p)) end
    end,
    stop = args.watch_stop,
  }
  server.close()
  return ctx.exit.ok
end

return M
