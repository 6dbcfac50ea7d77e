--- A playable add-on city from a PSDL document: every companion file the game needs, cross-
-- checked, packed into a zip-format `.ar` (companion-formats.md, "CF"; docs/package.md).
--
--     local package = require "psdl.package"
--     local files, report = package.generate(doc, { name = "mycity" })
--     assert(package.write_ar(files, "mycity.ar"))
--
-- Files (CF §8.4), names sorted as the archive stores them:
--
-- | file | from |
-- | --- | --- |
-- | `city/<map>.psdl` | the document (flag 0x80 added on rooms that hold `_ai.inst` signs) |
-- | `city/<map>.bai` | `psdl.package.bai_gen` |
-- | `city/<map>.cpvs` | `psdl.package.cpvs_gen` (rays in C) |
-- | `city/<map>.aimap`, `race/<map>/roam.aimap`, `roam.aimap_p`, `tune/<map>.cinfo`, `tune/<map>.mmhudmap` | `psdl.package.text` |
-- | `geometry/hudmap_<map>.pkg`, `texture/hudmap_<map>_NN.tex` | `psdl.package.minimap` |
-- | `city/<map>/propdefs.csv`, `proprules.csv` | `psdl.package.dressing` (when the PSDL uses prop rules) |
-- | `city/<map>_ai.inst` | `psdl.package.dressing` (`dressing = true`) |
--
-- Environment files (`.ltNN`, fog, sky) are not written: they are copies of a retail city's
-- files, which only the player's install has (CF §8.4).
-- @module psdl.package

local string, table, math, os = string, table, math, os
local ipairs, pairs, type, error, tostring, require, pcall = ipairs, pairs, type, error, tostring, require, pcall
local string_format, concat = string.format, table.concat

local bai_gen = require "psdl.package.bai_gen"
local cpvs_gen = require "psdl.package.cpvs_gen"
local text = require "psdl.package.text"
local minimap = require "psdl.package.minimap"
local dressing = require "psdl.package.dressing"

local M = {}

--- Most rooms a packaged city may have: a visibility row describes room ids below 2,048 only
-- (the game's 512-byte row buffer, CF §3.3; §11 q6 open). What happens beyond it: an OSM
-- extract packaged by `psdl package x.osm` or `psdl osm --package` is built in coarser rooms
-- and then simplified until it fits (`psdl.osm.city.build`'s `max_rooms`, reported); a city
-- script or a PSDL with more rooms is refused by `generate` with a message naming the limit and
-- the fix (the CLI exits 2, docs/package.md).
M.MAX_ROOMS = cpvs_gen.MAX_ROOM_ID

--- The refusal of a city with more than `MAX_ROOMS` rooms (nil when it fits).
-- @tparam table doc
-- @treturn string|nil
function M.too_many_rooms(doc)
  local n = #doc.rooms
  if n <= M.MAX_ROOMS then return nil end
  return string_format("the city has %d rooms; a package holds at most %d (a visibility row describes room ids "
    .. "below 2,048 only: the game's 512-byte row buffer, CF §3.3). Fewer rooms: an OSM extract is fitted by "
    .. "'psdl package x.osm' or 'psdl osm --package' itself; a city script can ask for longer road rooms "
    .. "(psdl.city.new{room_length = 400, run_rooms = true, dead_end = \"open\"}), larger block rooms (city:blocks{room = "
    .. "{max_area = 1e9, max_length = 1e6}}) or fewer roads; a PSDL given as it is must be split into smaller "
    .. "cities", n, M.MAX_ROOMS)
end

--- The warning for a city just written or read that has more rooms than a package holds
-- (nil when it fits): `psdl osm`, `psdl build` and `psdl info` print it so that the limit is
-- met where the city is made, not only when `psdl package` refuses it (docs/package.md).
-- @tparam integer rooms the city's room count (room 0 not counted)
-- @tparam[opt] string source the input the city came from (an .osm names the direct route)
-- @treturn string|nil
function M.room_warning(rooms, source)
  if rooms <= M.MAX_ROOMS then return nil end
  local fix
  if source and source:lower():match("%.osm$") then
    fix = string_format("'psdl package %s' fits the extract itself, or import a smaller --bbox", source)
  else
    fix = "fewer or longer rooms (docs/package.md), or an OSM extract packaged directly with 'psdl package X.osm'"
  end
  return string_format("%d rooms: more than the %d a package (.ar add-on) can hold, so 'psdl package' will "
    .. "refuse this city; %s", rooms, M.MAX_ROOMS, fix)
end

M.bai_gen, M.cpvs_gen, M.text, M.minimap, M.dressing = bai_gen, cpvs_gen, text, minimap, dressing

local function clock()
  local ok, socket = pcall(require, "socket")
  if ok and socket.gettime then return socket.gettime() end
  return os.clock()
end

local function copy_doc_rooms_flags(doc)
  -- a shallow copy whose rooms can take new flags without touching the caller's document
  local rooms = {}
  for i, r in ipairs(doc.rooms) do
    local c = {}
    for k, v in pairs(r) do c[k] = v end
    rooms[i] = c
  end
  local d = {}
  for k, v in pairs(doc) do d[k] = v end
  d.rooms = rooms
  return d
end

--- Cross-checks between the PSDL and the companion tables (CF §10 item 8, §2.9, §3.4, §4.4,
-- §5.3). Every problem names the file and the room, road or record.
-- @tparam table doc PSDL document
-- @tparam string map
-- @tparam table t `{bai =, cpvs =, inst =, proprules = {[rule] = true}}` (any may be nil)
-- @treturn table problems: strings
function M.cross_check(doc, map, t)
  local P = {}
  local function add(fmt, ...) P[#P + 1] = string_format(fmt, ...) end
  local R = #doc.rooms + 1
  local bai, cpvs = t.bai, t.cpvs
  local bname, cname = "city/" .. map .. ".bai", "city/" .. map .. ".cpvs"
  if bai then
    if bai.cull_rooms ~= R then
      add("%s: %d culling lists, the PSDL room-count field is %d (CF §2.2)", bname, bai.cull_rooms, R)
    end
    for id = 0, R - 1 do
      if not bai.near[id] then add("%s: no near list for room %d (CF §2.10)", bname, id) end
      if not bai["in"][id] then add("%s: no in list for room %d (CF §2.10)", bname, id) end
    end
    if #bai.roads ~= #(doc.roads or {}) then
      add("%s: %d AI roads for %d PSDL road records (CF §2.8: one per record)", bname, #bai.roads, #(doc.roads or {}))
    end
    local listed = {}
    for k, road in ipairs(bai.roads) do
      local rec = doc.roads[k]
      for j, room in ipairs(road.rooms) do
        if room < 1 or room >= R then add("%s: road %d lists room %d, not a room of the PSDL (R = %d)", bname, k, room, R) end
        if listed[room] then add("%s: room %d is listed by roads %d and %d (CF §10 item 8)", bname, room, listed[room], k) end
        listed[room] = k
        local rr = rec and rec.rooms[j]
        if rr and (rr < 0 and -rr or rr) ~= room then
          add("%s: road %d room %d is %d, PSDL road record %d has %d there (CF §2.8)", bname, k, j, room, k, rr)
        end
      end
    end
    for id, r in ipairs(doc.rooms) do
      if r.flags & 0x08 ~= 0 and r.flags & 0x10 == 0 and not listed[id] then
        add("%s: road room %d (flag 0x08) is listed by no AI road (CF §10 item 8)", bname, id)
      end
    end
    local named = {}
    for i, it in ipairs(bai.intersections) do
      if it.room < 1 or it.room >= R then add("%s: intersection %d is in room %d, not a room of the PSDL", bname, i, it.room)
      elseif doc.rooms[it.room].flags & 0x10 ~= 0 then
        if named[it.room] then add("%s: junction room %d is named by intersections %d and %d", bname, it.room, named[it.room], i) end
        named[it.room] = i
      end
    end
    for id, r in ipairs(doc.rooms) do
      if r.flags & 0x10 ~= 0 and not named[id] then
        add("%s: junction room %d (flag 0x10) is named by no intersection (CF §10 item 8)", bname, id)
      end
    end
  end
  if cpvs then
    if cpvs.rooms ~= R then add("%s: %d rooms (n = %d), the PSDL has R = %d (CF §3.4: n = R + 1)", cname, cpvs.rooms, cpvs.rooms + 1, R) end
    for id = 1, R - 1 do
      local row = cpvs.rows[id]
      local sees = false
      for _, t2 in ipairs(row and row.visible or {}) do
        if t2 == id then sees = true end
        if t2 >= R then add("%s: row of room %d lists room %d >= R = %d", cname, id, t2, R) end
      end
      if not sees then add("%s: room %d does not see itself (CF §3.4)", cname, id) end
    end
  end
  if t.inst then
    for i, rec in ipairs(t.inst) do
      local r = doc.rooms[rec.room]
      if not r then add("city/%s_ai.inst: record %d is in room %d, not a room of the PSDL", map, i, rec.room)
      elseif r.flags & 0x80 == 0 then
        add("city/%s_ai.inst: record %d is in room %d, which lacks room flag 0x80 (CF §4.4)", map, i, rec.room)
      end
    end
  end
  local used, where = dressing.used_rules(doc)
  for _, rule in ipairs(used) do
    if not (t.proprules and t.proprules[rule]) then
      add("city/%s/proprules.csv: no rows n%02dleft/n%02dright for prop rule %d of road record %d (CF §5.3: MM2 quits)",
        map, rule, rule, rule, where[rule])
    end
  end
  return P
end

--- Generate every file of the add-on.
-- @tparam table doc PSDL document (not changed)
-- @tparam table opts settings of `psdl.package.text` (`name` required; `title`, `left_hand`,
--   `density`, `speed`, `police`, ...), `dressing` (true: `_ai.inst` stop signs), `seed`
--   (visibility sampling), `cpvs` (options of `psdl.package.cpvs_gen`), `progress`
--   (function(phase, done, total)), `minimap` (options of `psdl.package.minimap`)
-- @treturn table files: `{ {name, bytes}, ... }` sorted by lower-cased name (CF §8.2)
-- @treturn table report `{map, rooms, roads, intersections, start, notes, cpvs = info,
--   minimap = info, seconds = {bai, cpvs, minimap, text, encode, total} (wall clock),
--   cpu = {bai, cpvs, minimap, text, encode} (processor seconds, all threads)}`
-- @raise with a message naming the file and record when something cannot be generated or a
--   cross-check fails
function M.generate(doc, opts)
  opts = opts or {}
  local psdl = require "psdl"
  local t0 = clock()
  local topts = {}
  for _, k in ipairs({ "name", "title", "left_hand", "density", "speed", "police", "vehicles", "peds", "lights" }) do
    topts[k] = opts[k]
  end
  local too_many = M.too_many_rooms(doc)
  if too_many then error(too_many, 0) end
  local s = text.settings(topts)
  local map = s.name
  local work = copy_doc_rooms_flags(doc)
  local seconds, cpu = {}, {}
  local t, ct = clock(), os.clock()
  local bai, binfo = bai_gen.generate(work, { left_hand = s.left_hand })
  seconds.bai, cpu.bai = clock() - t, os.clock() - ct
  local inst
  if opts.dressing then
    local holders
    inst, holders = dressing.stop_signs(work, bai)
    for room in pairs(holders) do work.rooms[room].flags = work.rooms[room].flags | 0x80 end
  end
  local rules = dressing.used_rules(work)
  local propdefs, proprules
  local rule_set = {}
  if #rules > 0 then
    propdefs, proprules = dressing.prop_csvs(rules)
    for _, r in ipairs(rules) do rule_set[r] = true end
  end
  t, ct = clock(), os.clock()
  local cpvs_opts = {}
  for k, v in pairs(opts.cpvs or {}) do cpvs_opts[k] = v end
  cpvs_opts.seed = cpvs_opts.seed or opts.seed
  if opts.progress then cpvs_opts.progress = function(d, n) opts.progress("visibility", d, n) end end
  local cpvs, cinfo = cpvs_gen.generate(work, cpvs_opts)
  seconds.cpvs, cpu.cpvs = clock() - t, os.clock() - ct
  local problems = M.cross_check(work, map, { bai = bai, cpvs = cpvs, inst = inst, proprules = rule_set })
  if #problems > 0 then
    error("cross-check failed: " .. problems[1] .. (#problems > 1 and string_format(" (and %d more)", #problems - 1) or ""), 0)
  end
  t, ct = clock(), os.clock()
  local mm, minfo = minimap.generate(work, map, opts.minimap)
  seconds.minimap, cpu.minimap = clock() - t, os.clock() - ct
  t, ct = clock(), os.clock()
  -- mean street height for the hud camera (CF §7.4)
  local sy, n = 0, 0
  for _, road in ipairs(bai.roads) do
    for _, o in ipairs(road.origin) do sy, n = sy + o[2], n + 1 end
  end
  local files = {}
  local function add(name, bytes) files[#files + 1] = { name, bytes } end
  add("tune/" .. map .. ".cinfo", text.cinfo(s))
  add("tune/" .. map .. ".mmhudmap", text.mmhudmap(n > 0 and sy / n or 0))
  add("city/" .. map .. ".aimap", text.city_aimap(s))
  local roam = text.roam_aimap(s, bai, binfo.start)
  add("race/" .. map .. "/roam.aimap", roam)
  add("race/" .. map .. "/roam.aimap_p", roam)
  seconds.text, cpu.text = clock() - t, os.clock() - ct
  t, ct = clock(), os.clock()
  local function enc(codec, tbl, fname)
    local ok, bytes = pcall(codec.encode, tbl)
    if not ok then error(string_format("%s: %s", fname, tostring(bytes)), 0) end
    return bytes
  end
  local psdl_bytes = psdl.encode(work)
  add("city/" .. map .. ".psdl", psdl_bytes)
  add("city/" .. map .. ".bai", enc(psdl.bai, bai, "city/" .. map .. ".bai"))
  add("city/" .. map .. ".cpvs", enc(psdl.cpvs, cpvs, "city/" .. map .. ".cpvs"))
  add("geometry/hudmap_" .. map .. ".pkg", enc(psdl.pkg, mm.pkg, "geometry/hudmap_" .. map .. ".pkg"))
  for _, tx in ipairs(mm.textures) do
    add("texture/" .. tx.name .. ".tex", enc(psdl.tex, tx.tex, "texture/" .. tx.name .. ".tex"))
  end
  if propdefs then
    add("city/" .. map .. "/propdefs.csv", propdefs)
    add("city/" .. map .. "/proprules.csv", proprules)
  end
  if inst then add("city/" .. map .. "_ai.inst", enc(psdl.inst, inst, "city/" .. map .. "_ai.inst")) end
  seconds.encode, cpu.encode = clock() - t, os.clock() - ct
  table.sort(files, function(a, b) return a[1]:lower() < b[1]:lower() end)
  seconds.total = clock() - t0
  return files, {
    map = map, rooms = #doc.rooms, roads = #bai.roads, intersections = #bai.intersections, start = binfo.start,
    notes = binfo.notes, cpvs = cinfo, minimap = minfo, seconds = seconds, cpu = cpu, signs = inst and #inst or 0,
    prop_rules = rules, files = #files,
    bai = bai, cpvs_table = cpvs, document = work,
  }
end

--- The `.ar` bytes of a file list (CF §8.2: deflate level 6, no comment, no extra fields).
-- @tparam table files as `generate` returns them
-- @treturn string bytes
-- @return[2] nil, message, code
function M.ar_bytes(files)
  return require("psdl.core").zip_build(files, 6)
end

--- Write the `.ar` atomically.
-- @tparam table files as `generate` returns them
-- @tparam string path
-- @treturn true | nil, message, code
function M.write_ar(files, path)
  local bytes, err, code = M.ar_bytes(files)
  if not bytes then return nil, "psdl: " .. code .. ": " .. err, code end
  return require("psdl").write_file(path, bytes)
end

--- Write the unpacked tree under `dir` (folders created as needed; each file atomically).
-- @tparam table files
-- @tparam string dir
-- @treturn true | nil, message, code
function M.write_dir(files, dir)
  local lfs = require "lfs"
  local psdl = require "psdl"
  for _, f in ipairs(files) do
    local path = dir .. "/" .. f[1]
    local acc = ""
    for part in (dir .. "/" .. f[1]):gmatch("([^/]+)/") do
      acc = acc == "" and (dir:sub(1, 1) == "/" and "/" .. part or part) or acc .. "/" .. part
      if not lfs.attributes(acc, "mode") then
        local ok, err = lfs.mkdir(acc)
        if not ok then return nil, "psdl: io: " .. acc .. ": " .. tostring(err), "io" end
      end
    end
    local ok, err, code = psdl.write_file(path, f[2])
    if not ok then return nil, err, code end
  end
  return true
end

return M
