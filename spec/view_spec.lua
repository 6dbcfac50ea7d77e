-- Specs for the viewer's Lua side: the payload (psdl.view), the page, `psdl view` and
-- `psdl build --watch` on the command line, the watch helper and the local HTTP server.
-- The page itself is tested in a browser by viewer/tests (scripts/test runs both).

local psdl = require "psdl"
local view = require "psdl.view"
local export = require "psdl.export"
local watch = require "psdl.watch"
local serve = require "psdl.serve"
local cli = require "psdl.cli"
local cjson = require "cjson"
local H = require "helper"

local function sink()
  local parts = {}
  return { write = function(self, ...) for _, s in ipairs { ... } do parts[#parts + 1] = tostring(s) end return self end,
    flush = function(self) return self end, text = function() return table.concat(parts) end }
end

local function run(argv)
  local out, err = sink(), sink()
  local code = cli.main(argv, { stdout = out, stderr = err })
  return code, out.text(), err.text()
end

-- Decode a payload: meta and buffers as Lua lists.
local SIZE = { f32 = 4, u32 = 4, u16 = 2, u8 = 1 }
local FMT = { f32 = "<f", u32 = "<I4", u16 = "<I2", u8 = "B" }
local function decode(bytes)
  assert.equal("PSDLVIEW", bytes:sub(1, 8))
  local format, n = string.unpack("<I4I4", bytes, 9)
  assert.equal(view.FORMAT, format)
  local meta = cjson.decode(bytes:sub(17, 16 + n))
  local base = 16 + n
  base = base + (-base) % 4
  local buffers = {}
  for name, b in pairs(meta.buffers) do
    local list = {}
    local at = base + b.offset + 1
    for i = 1, b.count do list[i] = string.unpack(FMT[b.type], bytes, at + (i - 1) * SIZE[b.type]) end
    buffers[name] = list
  end
  return meta, buffers
end

local function list(x) return type(x) == "table" and x or {} end

describe("psdl.view payload", function()
  local doc = assert(psdl.read("spec/fixtures/grid_n3.psdl"))

  it("holds every drawn triangle once, indexed, with its room, role and type", function()
    local bytes, stats = view.payload(doc, { name = "grid_n3" })
    local meta, b = decode(bytes)
    local mesh = export.build(doc)
    assert.equal(mesh.stats.triangles, stats.triangles)
    assert.equal(3 * mesh.stats.triangles, #b.index)
    -- points a primitive repeats are stored once
    assert.is_true(#b.position // 3 < mesh.stats.vertices)
    assert.equal(#b.position // 3, #b.room)
    assert.equal(2 * #b.room, #b.info)
    local nv = #b.room
    for _, i in ipairs(b.index) do assert.is_true(i >= 0 and i < nv) end
    for _, r in ipairs(b.room) do assert.is_true(r >= 1 and r <= #doc.rooms) end
    for k = 1, #b.info, 2 do
      assert.is_true(b.info[k] < #view.roles)
      assert.is_true(b.info[k + 1] < #view.types)
    end
    -- groups cover the index, in material order
    local covered = 0
    for _, g in ipairs(meta.groups) do
      assert.equal(covered, g.start)
      covered = covered + g.count
    end
    assert.equal(#b.index, covered)
    -- the triangles of each room are the ones export draws for it
    local per_room = {}
    for t = 1, #b.index, 3 do
      local r = b.room[b.index[t] + 1]
      per_room[r] = (per_room[r] or 0) + 1
    end
    local rooms = export.build(doc, { attribute_counts = true }).stats.attributes
    for r = 1, #doc.rooms do
      local want = 0
      for _, n in pairs(rooms[r] or {}) do want = want + n end
      assert.equal(want, per_room[r] or 0, "room " .. r)
    end
    -- and cover the same surface: twice the area of each room's triangles
    local function area2(P, I, first, zsign)
      local function v(k) return P[3 * k + 1], P[3 * k + 2], zsign * P[3 * k + 3] end
      local ax, ay, az = v(I[first])
      local bx, by, bz = v(I[first + 1])
      local cx, cy, cz = v(I[first + 2])
      local ux, uy, uz, wx, wy, wz = bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az
      return math.sqrt((uy * wz - uz * wy) ^ 2 + (uz * wx - ux * wz) ^ 2 + (ux * wy - uy * wx) ^ 2)
    end
    local got = {}
    for t = 1, #b.index, 3 do
      local r = b.room[b.index[t] + 1]
      got[r] = (got[r] or 0) + area2(b.position, b.index, t, -1)
    end
    for _, g in ipairs(mesh.groups) do
      local want = 0
      for _, p in ipairs(g.prims) do
        for t = 1, #p.idx, 3 do want = want + area2(p.pos, p.idx, t, 1) end
      end
      assert.near(want, got[g.room] or 0, 1e-3 * want + 1e-6, "room " .. g.room)
    end
  end)

  it("mirrors z into the page's right-handed axes", function()
    local meta, b = decode((view.payload(doc)))
    for i = 1, 5 do
      local v = doc.vertices[i]
      assert.near(v[1], b.vertices[3 * i - 2], 1e-3)
      assert.near(v[2], b.vertices[3 * i - 1], 1e-3)
      assert.near(-v[3], b.vertices[3 * i], 1e-3)
    end
    assert.is_true(meta.bounds.min[3] <= meta.bounds.max[3])
  end)

  it("describes each room: kind from its flags, perimeter, neighbours, attributes, road records", function()
    local meta, b = decode((view.payload(doc)))
    assert.equal(#doc.rooms, #meta.rooms)
    assert.equal(#doc.rooms + 1, #b.room_attributes_offsets)
    for r, room in ipairs(doc.rooms) do
      local m = meta.rooms[r]
      -- the attributes: JSON text of their own, per room
      local o = b.room_attributes_offsets
      m.attributes = cjson.decode(string.char(table.unpack(b.room_attributes, o[r] + 1, o[r + 1])))
      assert.equal(r, m.id)
      assert.equal(room.flags, m.flags)
      assert.equal(room.prop_rule, m.prop_rule)
      assert.equal(view.kind(room.flags), m.kind)
      assert.equal(#room.perimeter, #list(m.perimeter))
      for k, p in ipairs(room.perimeter) do
        assert.equal(p.vertex - 1, m.perimeter[k])
        assert.equal(p.neighbour, m.neighbours[k])
      end
      assert.equal(#room.attributes, #list(m.attributes))
      for a, attr in ipairs(room.attributes) do assert.equal(attr.type, m.attributes[a].type) end
    end
    -- every room of a road record lists the record
    for k, rec in ipairs(doc.roads) do
      for _, id in ipairs(rec.rooms) do
        local found = false
        for _, x in ipairs(list(meta.rooms[math.abs(id)].roads)) do if x == k - 1 then found = true end end
        assert.is_true(found, "room " .. id .. " lists road record " .. k)
      end
    end
    assert.equal(3, view.kind(0x42)); assert.equal(1, view.kind(0x14)); assert.equal(0, view.kind(0x0C))
    assert.equal(2, view.kind(0x04))
  end)

  it("places the validator's problems where they point", function()
    local d2 = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local meta = decode((view.payload(d2)))
    local _, problems = psdl.validate(d2)
    assert.equal(#problems, #meta.problems)
    local found
    for _, p in ipairs(meta.problems) do
      if p.rule == "light_range" and p.path == "rooms[9].attributes[11]" then found = p end
    end
    assert.truthy(found)
    assert.equal(9, found.room)
    assert.equal("warning", found.severity)
    -- at the facade bound's first vertex
    local v = d2.vertices[d2.rooms[9].attributes[11].vertices[1]]
    assert.near(v[1], found.at[1], 1e-3)
    assert.near(-v[3], found.at[3], 1e-3)
  end)

  it("carries texture images for the materials that have one, and UVs then", function()
    local name = doc.textures[1]
    local meta, b = decode((view.payload(doc, { images = { [name] = "data:image/png;base64,AAAA" } })))
    local with = 0
    for _, m in ipairs(meta.materials) do if m.image then with = with + 1; assert.equal(name, m.texture) end end
    assert.equal(1, with)
    assert.equal(2 * #b.room, #b.uv)
    local _, b2 = decode((view.payload(doc)))
    assert.is_nil(b2.uv)
  end)

  it("carries a package's AI lanes (.bai) and visibility sets (.cpvs)", function()
    local bai = { roads = { { side_a = { lanes = { { { 0, 1, 2 }, { 10, 1, 2 }, { 20, 1, 5 } } } },
      side_b = { lanes = { { { 0, 1, -2 }, { 10, 1, -2 } } } } } }, intersections = {} }
    local cpvs = { rooms = #doc.rooms + 1, rows = { [1] = { visible = { 1, 2, 5 } }, [3] = { visible = { 3 } } } }
    local meta, b = decode((view.payload(doc, { bai = bai, cpvs = cpvs })))
    assert.same({ roads = 1, lanes = 2, intersections = 0 }, meta.bai)
    -- three segments, z mirrored
    assert.same({ 0, 1, -2, 10, 1, -2, 10, 1, -2, 20, 1, -5, 0, 1, 2, 10, 1, 2 }, b.lanes)
    assert.same({ 1, 2, 5, 3 }, b.cpvs_ids)
    assert.equal(#doc.rooms + 1, #b.cpvs_offsets)
    assert.same({ 0, 3, 3, 4, 4 }, { table.unpack(b.cpvs_offsets, 1, 5) })
    local plain = decode((view.payload(doc)))
    assert.is_nil(plain.bai)
    assert.is_nil(plain.buffers.lanes)
  end)

  it("refuses what is not a document", function()
    assert.has_error(function() view.payload(42) end)
  end)
end)

describe("psdl.view page", function()
  it("embeds the deflated payload in the template", function()
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local html, stats = assert(view.html(doc, { name = "a<b>.psdl" }))
    assert.equal(#html, stats.bytes)
    assert.is_nil(html:find("<!--PSDL:DATA-->", 1, true))
    assert.truthy(html:find("<title>a&lt;b&gt;.psdl - psdl view</title>", 1, true))
    local b64 = html:match('<script id="psdl%-data" type="application/octet%-stream">([^<]*)</script>')
    assert.truthy(b64)
    local zlib = require "zlib"
    local raw = zlib.inflate()(require("mime").unb64(b64))
    assert.equal((view.payload(doc, { name = "a<b>.psdl" })), raw)
  end)
end)

describe("psdl view (command)", function()
  it("writes the page of a PSDL file and refuses to overwrite its input", function()
    local out = H.tmpname(".html")
    finally(function() os.remove(out) end)
    local code, text = run { "view", "spec/fixtures/grid_n2.psdl", "-o", out }
    assert.equal(0, code)
    assert.truthy(text:find("9 rooms", 1, true))
    assert.truthy(H.read_bytes(out):find('id="psdl-data"', 1, true))
    local code2, _, err = run { "view", "spec/fixtures/grid_n2.psdl", "-o", "spec/fixtures/grid_n2.psdl" }
    assert.equal(1, code2)
    assert.truthy(err:find("is the input", 1, true))
    local code3, _, err3 = run { "view", "spec/fixtures/grid_n2.psdl", "-o", out .. ".txt" }
    assert.equal(1, code3)
    assert.truthy(err3:find(".html", 1, true))
  end)

  it("builds a script and imports an OSM extract first", function()
    local out = H.tmpname(".html")
    finally(function() os.remove(out) end)
    local code, text = run { "view", "spec/fixtures/osm/crossroads.osm", "-o", out }
    assert.equal(0, code, text)
    local script = H.tmpname(".lua")
    finally(function() os.remove(script) end)
    H.write_bytes(script, "local c = psdl.city.new{}\nlocal a = c:node(0, 0)\nc:road(a, c:node(100, 0))\n"
      .. "c:road(a, c:node(0, 'x'))\nreturn c\n")
    local code2, _, err = run { "view", script, "-o", out }
    assert.equal(2, code2)
    assert.truthy(err:find(script .. ":4:", 1, true), err)
  end)

  it("opens a package (.ar): the city inside with its AI lanes and visibility sets", function()
    local dir = H.tmpname("")
    local script, ar, out = dir .. "-street.lua", dir .. "-street.ar", dir .. "-street.html"
    finally(function() for _, f in ipairs { script, ar, out } do os.remove(f) end end)
    H.write_bytes(script, "local c = psdl.city.new{ style = 'london', seed = 1 }\nlocal a = c:node(0, 0)\n"
      .. "local b = c:node(120, 0)\nc:road(a, b)\nc:road(b, c:node(240, 0))\nc:road(b, c:node(120, 120))\nreturn c\n")
    local pcode, ptext, perr = run { "package", script, "-o", ar, "-q" }
    assert.equal(0, pcode, ptext .. perr)
    local code, text, err = run { "view", ar, "-o", out }
    assert.equal(0, code, err)
    assert.truthy(text:find("AI lanes, visibility", 1, true), text)
    local html = H.read_bytes(out)
    local b64 = html:match('<script id="psdl%-data" type="application/octet%-stream">([^<]*)</script>')
    local meta = decode(require("zlib").inflate()(require("mime").unb64(b64)))
    -- the PSDL, lanes and rows of the archive
    local files = {}
    for _, e in ipairs(assert(require("psdl.core").zip_read(H.read_bytes(ar), 1 << 30))) do files[e.name:lower()] = e.data end
    local name
    for f in pairs(files) do name = name or f:match("^city/([^/]+)%.psdl$") end
    local doc = assert(psdl.decode(files["city/" .. name .. ".psdl"]))
    local bai = assert(psdl.bai.decode(files["city/" .. name .. ".bai"]))
    assert.equal(#doc.rooms, meta.stats.rooms)
    assert.equal(#bai.roads, meta.bai.roads)
    assert.equal(#doc.rooms, meta.cpvs.rows)
    -- --watch does not take a package; what is not a package is refused naming it
    local wcode, _, werr = run { "view", ar, "--watch" }
    assert.equal(1, wcode)
    assert.truthy(werr:find("is a package", 1, true), werr)
    H.write_bytes(ar, "not a zip")
    local bcode, _, berr = run { "view", ar, "-o", out }
    assert.equal(2, bcode)
    assert.truthy(berr:find(ar .. ": not a readable package", 1, true), berr)
    local archive = require "psdl.package.archive"
    local none = assert(require("psdl.core").zip_build({ { "tune/x.txt", "x" } }, 6))
    local _, why = archive.read(none, "none.ar")
    assert.equal("none.ar: no city/<map>.psdl in the package", why)
    local psdl_bytes = files["city/" .. name .. ".psdl"]
    local two = assert(require("psdl.core").zip_build({ { "city/a.psdl", psdl_bytes }, { "city/b.psdl", psdl_bytes } }, 6))
    _, why = archive.read(two, "two.ar")
    assert.equal("two.ar: 2 cities (a, b) and no .cinfo naming one of them", why)
    -- a lone city without .bai: viewed, with a note
    local lone = archive.read(assert(require("psdl.core").zip_build({ { "city/a.psdl", psdl_bytes } }, 6)), "lone.ar")
    assert.equal("a", lone.map)
    assert.equal(#doc.rooms, #lone.doc.rooms)
    assert.is_nil(lone.bai)
    assert.equal("lone.ar: no city/a.bai (shown without it)", lone.notes[1])
  end)

  it("finds texture images by name, without regard to case", function()
    local out = H.tmpname(".html")
    local dir = H.tmpname("")
    local lfs = require "lfs"
    assert(lfs.mkdir(dir))
    finally(function() os.remove(out); for f in lfs.dir(dir) do os.remove(dir .. "/" .. f) end; lfs.rmdir(dir) end)
    local doc = assert(psdl.read("spec/fixtures/grid_n2.psdl"))
    local name = doc.textures[1]
    H.write_bytes(dir .. "/" .. name:upper() .. ".PNG", "\137PNG fake")
    -- the game's own format: a 512 x 256 RGB888 .tex goes in at its 256 x 128 level
    local other
    for _, t in ipairs(doc.textures) do if type(t) == "string" and t ~= name then other = t; break end end
    local px = string.rep("\10\20\30", 512 * 256)
    assert(psdl.tex.write(psdl.tex.from_pixels { width = 512, height = 256, format = 17, pixels = px, flags = 1 },
      dir .. "/" .. other .. ".tex"))
    local code, text = run { "view", "spec/fixtures/grid_n2.psdl", "-o", out, "--textures", dir }
    assert.equal(0, code)
    assert.truthy(text:find("textures: 2 found", 1, true), text)
    local b64 = H.read_bytes(out):match('<script id="psdl%-data" type="application/octet%-stream">([^<]*)</script>')
    local meta, b = decode(require("zlib").inflate()(require("mime").unb64(b64)))
    local raw, image
    for _, m in ipairs(meta.materials) do
      if m.texture == other then raw = m.raw end
      if m.texture == name then image = m.image end
    end
    assert.truthy(image:match("^data:image/png;base64,"))
    assert.same({ 256, 128, 17, true, false }, { raw.width, raw.height, raw.format, raw.clamp_u, raw.clamp_v })
    assert.equal(256 * 128 * 3, #b[raw.texels])
    assert.equal(10, b[raw.texels][1])
  end)
end)

describe("psdl build --watch", function()
  it("builds again when the script or a module it requires changes, and survives a broken edit", function()
    local dir = H.tmpname("")
    local lfs = require "lfs"
    assert(lfs.mkdir(dir))
    local script, mod, out = dir .. "/city.lua", dir .. "/widths.lua", dir .. "/city.psdl"
    finally(function() for f in lfs.dir(dir) do os.remove(dir .. "/" .. f) end; lfs.rmdir(dir) end)
    H.write_bytes(mod, "return { n = 1 }\n")
    local function city(extra)
      -- a module in the script's own folder (what the sandbox lets a script require)
      return "local w = require 'widths'\nlocal c = psdl.city.new{}\nlocal prev = c:node(0, 0)\n"
        .. "for i = 1, w.n do local n = c:node(i * 100, 0); c:road(prev, n); prev = n end\n"
        .. (extra or "") .. "return c\n"
    end
    H.write_bytes(script, city())
    local builds = {}
    local step = 0
    local args = { script = script, output = out, size = "2048", quiet = true, watch = true }
    args.watch_stop = function()
      -- called between polls: edit the files one after the other
      local rooms = #assert(psdl.read(out)).rooms
      step = step + 1
      if step == 1 then builds[1] = rooms; H.write_bytes(mod, "return { n = 3 }\n")
      elseif builds[2] == nil and rooms ~= builds[1] then builds[2] = rooms; H.write_bytes(script, city("error('boom')\n"))
      elseif builds[2] and step > 40 then return true end
      return step > 200
    end
    local err = sink()
    local code = require("psdl.cli.build").run(args, setmetatable({ stdout = sink(), stderr = err, exit = cli.exit },
      { __index = { fail = function() end, note = function() end } }))
    assert.equal(0, code)
    assert.truthy(builds[2], "rebuilt after the module changed")
    assert.is_true(builds[2] > builds[1])
    assert.truthy(err.text():find(script .. ":5: boom", 1, true), err.text())
    assert.truthy(err.text():find("the last good", 1, true))
    assert.equal(builds[2], #assert(psdl.read(out)).rooms)
  end)
end)

describe("psdl.watch", function()
  it("sees a change of contents, a new file and a removed one", function()
    local a = H.tmpname(".lua")
    finally(function() os.remove(a) end)
    H.write_bytes(a, "x")
    local snap = watch.snapshot { a }
    assert.is_nil(watch.changed(snap))
    H.write_bytes(a, "y") -- same size, same second
    assert.equal(a, watch.changed(snap))
    snap = watch.snapshot { a }
    os.remove(a)
    assert.equal(a, watch.changed(snap))
    snap = watch.snapshot { a }
    H.write_bytes(a, "z")
    assert.equal(a, watch.changed(snap))
  end)
end)

describe("psdl.watch.loop", function()
  it("sees a save made while a build ran when the build returns its snapshot from before", function()
    local a = H.tmpname(".lua")
    finally(function() os.remove(a) end)
    H.write_bytes(a, "v1")
    local built, polls = {}, 0
    watch.loop {
      interval = 0.01,
      wait = function() polls = polls + 1 end,
      stop = function() return #built >= 2 or polls > 20 end,
      build = function()
        local before = watch.snapshot { a }
        local f = io.open(a, "rb"); built[#built + 1] = f:read("a"); f:close()
        if #built == 1 then H.write_bytes(a, "v2") end -- saved while the first build runs
        return { a }, before
      end,
    }
    assert.same({ "v1", "v2" }, built)
  end)
end)

describe("psdl.serve", function()
  it("answers GET on 127.0.0.1 with what the handler returns, and 404/405/400 otherwise", function()
    local socket = require "socket"
    local seen = {}
    local server = assert(serve.listen { port = 0, handler = function(path, query)
      seen[#seen + 1] = path
      if path == "/state" then return 200, "application/json", '{"version":3}' end
      return 404, "text/plain", "not found\n"
    end })
    finally(function() server.close() end)
    assert.truthy(server.url:match("^http://127%.0%.0%.1:%d+/$"))
    local function ask(request)
      local c = assert(socket.connect("127.0.0.1", server.port))
      c:send(request)
      server.step(1)
      c:settimeout(2)
      local reply = c:receive("*a")
      c:close()
      return reply
    end
    local r = ask("GET /state?x=1 HTTP/1.1\r\nHost: 127.0.0.1:" .. server.port .. "\r\n\r\n")
    assert.truthy(r:match("^HTTP/1.1 200 OK\r\n"))
    assert.truthy(r:find("Content-Length: 13\r\n", 1, true))
    assert.truthy(r:find('\r\n\r\n{"version":3}$'))
    assert.equal("/state", seen[1])
    assert.truthy(ask("GET /nothing%20here HTTP/1.1\r\n\r\n"):match("^HTTP/1.1 404"))
    assert.equal("/nothing here", seen[2])
    assert.truthy(ask("POST /state HTTP/1.1\r\n\r\n"):match("^HTTP/1.1 405"))
    assert.truthy(ask("nonsense\r\n\r\n"):match("^HTTP/1.1 400"))
    assert.is_nil(serve.listen { port = server.port, handler = function() end })
  end)

  it("refuses a Host header that names another machine (DNS rebinding), accepts the loopback names", function()
    local socket = require "socket"
    local calls = 0
    local server = assert(serve.listen { port = 0, handler = function()
      calls = calls + 1
      return 200, "text/plain", "city\n"
    end })
    finally(function() server.close() end)
    local function ask(host)
      local c = assert(socket.connect("127.0.0.1", server.port))
      c:send("GET /payload HTTP/1.1\r\n" .. (host and ("Host: " .. host .. "\r\n") or "") .. "\r\n")
      server.step(1)
      c:settimeout(2)
      local reply = c:receive("*a")
      c:close()
      return reply
    end
    for _, host in ipairs { "evil.com", "evil.com:" .. server.port, "127.0.0.1.evil.com", "localhost.evil.com",
      "10.0.0.1", "[::2]:80", "" } do
      local r = ask(host)
      assert.truthy(r:match("^HTTP/1.1 403 Forbidden\r\n"), host)
      assert.truthy(r:find("127.0.0.1 or localhost only", 1, true), host)
    end
    assert.equal(0, calls)
    -- two Host headers: refused as well
    local c = assert(socket.connect("127.0.0.1", server.port))
    c:send("GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.com\r\n\r\n")
    server.step(1)
    c:settimeout(2)
    assert.truthy(c:receive("*a"):match("^HTTP/1.1 403"))
    c:close()
    for _, host in ipairs { "127.0.0.1", "127.0.0.1:" .. server.port, "localhost", "LocalHost:" .. server.port,
      "[::1]:" .. server.port, false } do
      assert.truthy(ask(host or nil):match("^HTTP/1.1 200 OK\r\n"), tostring(host))
    end
    assert.equal(6, calls)
  end)
end)

describe("a multi-line script error (newcomer F1)", function()
  -- two streets that do not meet: finish() raises "does not validate (strict):" and the
  -- problem on the next line
  local UNREACH = "local b = psdl.builder.new{ style = 'sf' }\n"
    .. "b:street{ path = { {0,0,0}, {100,0,0} } }\n"
    .. "b:street{ path = { {0,0,50}, {100,0,50} } }\n"
    .. "return (b:finish())\n"

  it("is printed whole by psdl build and psdl view", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/unreach.lua"
    H.write_bytes(script, UNREACH)
    local code, _, err = run { "build", script, "-o", dir .. "/u.psdl" }
    assert.equal(2, code)
    assert.truthy(err:find(script .. ":4: the built document does not validate (strict):\n  error unreachable rooms[2]: "
      .. "road room 2 cannot be reached", 1, true), err)
    local vcode, _, verr = run { "view", script, "-o", dir .. "/u.html" }
    assert.equal(2, vcode)
    assert.truthy(verr:find("(strict):\n  error unreachable rooms[2]", 1, true), verr)
    -- any script error keeps its lines
    H.write_bytes(script, 'error("first line\\nsecond line")\n')
    local _, _, err2 = run { "build", script, "-o", dir .. "/u.psdl" }
    assert.equal("psdl build: " .. script .. ":1: first line\nsecond line\n", err2)
  end)

  it("is capped at common.MAX_MESSAGE_LINES lines, saying how many more", function()
    local common = require "psdl.cli.common"
    local lines = {}
    for i = 1, 100 do lines[i] = "line " .. i end
    local m = common.message(table.concat(lines, "\n") .. "\n\n")
    local got = {}
    for l in (m .. "\n"):gmatch("([^\n]*)\n") do got[#got + 1] = l end
    assert.equal(common.MAX_MESSAGE_LINES + 1, #got)
    assert.equal("line 1", got[1])
    assert.equal("line " .. common.MAX_MESSAGE_LINES, got[common.MAX_MESSAGE_LINES])
    assert.equal("  ... and " .. (100 - common.MAX_MESSAGE_LINES) .. " more lines", got[#got])
    assert.equal("a\nb", common.message("a\nb\n"))
    local long = common.message(string.rep("x", common.MAX_MESSAGE_LINE + 7))
    assert.equal(string.rep("x", common.MAX_MESSAGE_LINE) .. " ... (7 more characters)", long)
    local dir = H.tmpdir(finally)
    local script = dir .. "/many.lua"
    H.write_bytes(script, "local t = {} for i = 1, 100 do t[i] = 'problem ' .. i end error(table.concat(t, '\\n'))\n")
    local _, _, err = run { "build", script, "-o", dir .. "/m.psdl" }
    assert.truthy(err:find("\nproblem 40\n  ... and 60 more lines\n$"), err)
  end)

  it("reaches the --watch page whole: /state's error message", function()
    local socket = require "socket"
    local dir = H.tmpdir(finally)
    local script = dir .. "/unreach.lua"
    H.write_bytes(script, UNREACH)
    local out = sink()
    local state, client, step = nil, nil, 0
    local args = { city = script, port = "0", watch = true, quiet = true }
    args.watch_stop = function()
      step = step + 1
      local port = out.text():match("serving http://127%.0%.0%.1:(%d+)/")
      if not client and port then
        client = assert(socket.connect("127.0.0.1", tonumber(port)))
        client:send("GET /state HTTP/1.1\r\nHost: 127.0.0.1:" .. port .. "\r\n\r\n")
        return false -- the loop's wait answers it
      end
      if client then
        client:settimeout(2)
        local reply = client:receive("*a")
        client:close()
        state = cjson.decode(reply:match("\r\n\r\n(.*)$"))
        return true
      end
      return step > 50
    end
    local code = require("psdl.cli.view").run(args, setmetatable({ stdout = out, stderr = sink(), exit = cli.exit },
      { __index = { fail = function() end, note = function() end } }))
    assert.equal(0, code)
    assert.truthy(state, "the /state answer")
    assert.truthy(state.error.message:find("(strict):\n  error unreachable rooms[2]: road room 2", 1, true),
      state.error.message)
    assert.equal(script, state.error.file)
    assert.equal(4, state.error.line)
  end)
end)
