--- Shared helpers for the busted specs: hand-built PSDL byte strings (string.pack, the
-- bounds-checked little-endian model), fixture paths, temporary files.
local H = {}

local pack = string.pack

--- Folder of the shared fixtures copied into the repository.
H.fixtures_dir = "spec/fixtures"

--- Names of the fixture files (sorted).
function H.fixture_names()
  local lfs = require "lfs"
  local names = {}
  for name in lfs.dir(H.fixtures_dir) do
    if name:match("%.psdl$") then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

--- Whole contents of a file (binary).
function H.read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

--- Write bytes to a path (binary).
function H.write_bytes(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

local tmp_count = 0

--- Asserts that every neighbour link of a document has its reverse (room r lists room n:
-- room n lists room r somewhere), naming the first link that has none.
function H.assert_symmetric(doc)
  local luassert = require "luassert"
  for r, room in ipairs(doc.rooms) do
    for k, p in ipairs(room.perimeter) do
      if p.neighbour > 0 then
        local back = false
        for _, q in ipairs(doc.rooms[p.neighbour].perimeter) do
          if q.neighbour == r then back = true; break end
        end
        luassert.is_true(back, string.format("room %d point %d lists room %d, which does not list it back", r, k,
          p.neighbour))
      end
    end
  end
end

--- A fresh temporary path, unique across processes (spec suites running at once); the
-- caller removes it (finally). os.tmpname reserves a name no other process holds (mkstemp);
-- ours spells its random part (after "lua_") as two decimal digits a character, the byte
-- modulo 100 (one-to-one on letters and digits; a name with letters could contain "sf" or
-- "london", which the city-name check flags), then a per-process counter. The reserved
-- file stays until the process ends, so no other run is given the same name.
local reserved = {}
function H.tmpname(suffix)
  local p = os.tmpname()
  reserved[#reserved + 1] = p
  tmp_count = tmp_count + 1
  local dir, base = p:match("^(.*)/([^/]*)$")
  base = (base or p):match("[^_]*$")
  local digits = base:gsub(".", function(c) return string.format("%02d", c:byte() % 100) end)
  return string.format("%s/psdlkit_test_%s_%d%s", dir or "/tmp", digits, tmp_count, suffix or "")
end
-- the reserved names go when the Lua state closes (the end of the busted run)
setmetatable(reserved, { __gc = function(t) for _, p in ipairs(t) do os.remove(p) end end })

--- Build a PSD0 file from a description. All indices are raw file values (0-based).
-- @tparam table t fields: vertices {{x,y,z}...} (default: 8 vertices on a grid),
--   heights {h...} (default {0, 5, 10}), textures {"name" | false ...} (default 8 names),
--   rooms {{perimeter = {{v, n}...}, words = {w...}}...} (default one room),
--   flags {room0, room1...}, props {room0, room1...}, roads {bytes...} (use H.road),
--   first_road_room (default 0), magic (default "PSD0"), target (default 2),
--   bounds {minx,miny,minz,maxx,maxy,maxz,cx,cy,cz,r}, tail (extra bytes at the end)
-- @treturn string the file's bytes
function H.psdl(t)
  t = t or {}
  local out = {}
  local function put(fmt, ...) out[#out + 1] = pack(fmt, ...) end
  put("<c4I4", t.magic or "PSD0", t.target or 2)
  local verts = t.vertices or {
    {0, -0.15, 0}, {0, 0, 0}, {10, 0, 0}, {10, 0, 10}, {0, 0, 10},
    {5, 0, 5}, {0, 0.15, 20}, {10, 0.15, 20},
  }
  put("<I4", #verts)
  for _, v in ipairs(verts) do put("<fff", v[1], v[2], v[3]) end
  local heights = t.heights or {0, 5, 10}
  put("<I4", #heights)
  for _, h in ipairs(heights) do put("<f", h) end
  local tex = t.textures or {"r4_f", "swalk_f", "r4_lo", "div_side", "div_flat", "div_top", "div_cap", "tun_g"}
  put("<I4", #tex + 1)
  for _, name in ipairs(tex) do
    if name then put("<s1", name .. "\0") else put("<B", 0) end
    if t.magic == "PSD1" and name then put("<B", 7) end
  end
  local rooms = t.rooms or { { perimeter = {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, words = {0x80 + 0x50, 1} } }
  put("<I4I4", #rooms + 1, t.first_road_room or 0)
  for _, r in ipairs(rooms) do
    put("<I4I4", #r.perimeter, #r.words)
    for _, p in ipairs(r.perimeter) do put("<I2I2", p[1], p[2]) end
    for _, w in ipairs(r.words) do put("<I2", w) end
  end
  for i = 0, #rooms do put("<B", (t.flags or {})[i + 1] or (i == 0 and 0 or 4)) end
  for i = 0, #rooms do put("<B", (t.props or {})[i + 1] or (i == 0 and 0xCD or 0)) end
  local b = t.bounds or {0, -0.15, 0, 10, 0.15, 20, 5, 0, 10, 12}
  put("<ffffffffff", table.unpack(b))
  local roads = t.roads or {}
  put("<I4", #roads)
  for _, r in ipairs(roads) do out[#out + 1] = r end
  if t.tail then out[#out + 1] = t.tail end
  return table.concat(out)
end

--- One road record's bytes (§1.7). Fields: flags, left {f...}, right {f...}, stop {a,b},
-- start {4 vertex idx}, finish {4 vertex idx}, rooms {signed ids}.
function H.road(r)
  local out = { pack("<I4BB", r.flags or 0, #(r.left or {}), #(r.right or {})) }
  for _, v in ipairs(r.left or {}) do out[#out + 1] = pack("<f", v) end
  for _, v in ipairs(r.right or {}) do out[#out + 1] = pack("<f", v) end
  local s, e = r.start or {0, 0, 0, 0}, r.finish or {0, 0, 0, 0}
  out[#out + 1] = pack("<BBI2I2I2I2I2I2I2I2B", (r.stop or {0, 0})[1], (r.stop or {0, 0})[2],
    s[1], s[2], s[3], s[4], e[1], e[2], e[3], e[4], #(r.rooms or {}))
  for _, id in ipairs(r.rooms or {}) do out[#out + 1] = pack("<i2", id) end
  return table.concat(out)
end

--- A file whose only room holds the given attribute words (texture value 1 first unless
-- opts.no_texture), for attribute decoding tests.
function H.one_room(words, opts)
  opts = opts or {}
  local w = {}
  if not opts.no_texture then w[1], w[2] = 0x50, 1 end
  for _, x in ipairs(words) do w[#w + 1] = x end
  return H.psdl{ rooms = { { perimeter = {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, words = w } } }
end

--- A file-like object that collects what is written to it (`:text()` gives it back): the
-- command line's own (psdl.cli.common.sink).
function H.collector() return require("psdl.cli.common").sink() end

--- Run the `psdl` command line in-process: exit code, stdout text, stderr text.
function H.cli(...)
  local out, err = H.collector(), H.collector()
  local code = require("psdl.cli").main({ ... }, { stdout = out, stderr = err })
  return code, out.text(), err.text()
end

--- Does a file (or folder) exist at path?
function H.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

--- A deep copy of a value (tables copied recursively; keys shared).
function H.deep_copy(t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, v in pairs(t) do c[k] = H.deep_copy(v) end
  return c
end

--- The error f raises (asserting that it raises) as a string, and the line of the call to
-- err_of (for messages that must name the caller's line).
function H.err_of(f)
  local line = debug.getinfo(2, "l").currentline
  local ok, e = pcall(f)
  assert(not ok, "no error")
  return tostring(e), line
end

--- A string quoted for the POSIX shell.
function H.q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- Run a shell command, its stderr joined to its stdout: the output, whether it succeeded,
-- the exit code.
function H.run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok, code
end

-- Paths to remove when the running test ends. busted keeps one `finally` callback a test (a
-- later call replaces the earlier one), so every call registers the whole list; a list a
-- test's own `finally` displaced goes with the next test's.
local trash = {}

--- Remove these paths (files, or folders with all they hold) when the running test ends:
-- pass busted's `finally` (a spec-file global that modules cannot see).
function H.cleanup(finally, ...)
  for i = 1, select("#", ...) do trash[#trash + 1] = (select(i, ...)) end
  finally(function()
    local lfs = require "lfs"
    for _, p in ipairs(trash) do
      if lfs.symlinkattributes(p, "mode") == "directory" then os.execute("rm -rf " .. H.q(p)) else os.remove(p) end
    end
    trash = {}
  end)
end

--- A fresh temporary path (H.tmpname), removed when the running test ends.
function H.tmp(finally, suffix)
  local p = H.tmpname(suffix)
  H.cleanup(finally, p)
  return p
end

--- A fresh empty folder, removed with everything in it when the running test ends.
function H.tmpdir(finally)
  local lfs = require "lfs"
  local dir, tries = nil, 0
  repeat -- a fresh name (an old run's folder may linger)
    dir, tries = H.tmpname("_dir"), tries + 1
  until lfs.mkdir(dir) or tries > 50
  assert(lfs.attributes(dir, "mode") == "directory", dir)
  H.cleanup(finally, dir)
  return dir
end

--- Names in a folder (without . and ..), sorted.
function H.files_in(dir)
  local lfs = require "lfs"
  local names = {}
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

--- Run a shell command: its stdout and stderr together, then a last line "exit=N".
function H.sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"exit=$?\""))
  local out = p:read("a")
  p:close()
  return out
end

--- Room flags of psdl-format.md §2.3 the city specs test.
H.FLAG = { subterranean = 0x02, standard = 0x04, road = 0x08, intersection = 0x10, warp = 0x40 }

--- Plan polygon {x, z} of a room's perimeter, consecutive repeated vertices dropped
-- (psdl.plan.room_poly).
H.perimeter_poly = require("psdl.plan").room_poly

--- Plan bounding box of {x, z} points: x0, z0, x1, z1.
function H.bbox(poly)
  local b = require("psdl.plan").box()
  for _, p in ipairs(poly) do b:add(p[1], p[2]) end
  return b.u0, b.v0, b.u1, b.v1
end

local ROAD_TYPES = { road = true, divided_road = true, walkway = true }

--- The road attributes of a room (road, divided road, walkway), in order.
function H.road_attrs(room)
  local list = {}
  for _, a in ipairs(room.attributes) do
    if ROAD_TYPES[a.type] then list[#list + 1] = a end
  end
  return list
end

--- Indices of the intersection rooms (flag 0x10) of a document.
function H.intersection_rooms(doc)
  local out = {}
  for id, room in ipairs(doc.rooms) do
    if room.flags & H.FLAG.intersection ~= 0 then out[#out + 1] = id end
  end
  return out
end

return H
