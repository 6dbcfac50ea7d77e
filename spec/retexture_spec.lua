-- Batch texture editing: lua/psdl/retexture.lua (the operations on documents) and
-- lua/psdl/cli/retexture.lua (`psdl retexture`).
local psdl = require "psdl"
local retexture = require "psdl.retexture"
local diff = require "psdl.diff"
local cjson = require "cjson"
local lfs = require "lfs"
local H = require "helper"

local N2 = "spec/fixtures/grid_n2.psdl"

local function read(path) return assert(psdl.read(path or N2)) end

local deep_copy = H.deep_copy

-- The texture names every reference reads, by path: {["rooms[1].attributes[3]"] = "rinter_f|swalk_inter|rxwalk_f"}.
local function names_read(doc)
  local out = {}
  for _, ref in ipairs(retexture.references(doc)) do
    local names = {}
    for j = ref.value, ref.value + ref.span do names[#names + 1] = tostring(doc.textures[j]) end
    out[string.format("rooms[%d].attributes[%d]:%s", ref.room, ref.attribute, ref.kind)] = table.concat(names, "|")
  end
  return out
end

-- Byte offset (0-based) where the texture entries start, and the table's length in bytes.
local function texture_table(doc)
  local start = 8 + 4 + 12 * #doc.vertices + 4 + 4 * #doc.heights + 4
  local len = 0
  for _, name in ipairs(doc.textures) do len = len + (name and #name + 2 or 1) end
  return start, len
end

local run = H.cli

-- A temporary folder with copies of some fixtures; removed when the test ends.
local function tmpdir(files)
  local dir = H.tmpdir(finally)
  for _, f in ipairs(files or {}) do
    local dst = dir .. "/" .. (f.as or f.name)
    if f.as and f.as:find("/") then
      local sub = dir .. "/" .. f.as:match("^(.*)/")
      if not lfs.attributes(sub) then assert(lfs.mkdir(sub)) end
    end
    H.write_bytes(dst, f.bytes or H.read_bytes("spec/fixtures/" .. f.name))
  end
  return dir
end

-- A fixture document with its texture table grown to n slots (names "t<i>").
local function grown(n)
  local doc = read()
  for i = #doc.textures + 1, n do doc.textures[i] = "t" .. i end
  return doc
end

describe("psdl.retexture", function()
  describe("references", function()
    it("finds every texture attribute and divider texture with the slots its group reads", function()
      local doc = read()
      local by = {}
      for _, ref in ipairs(retexture.references(doc)) do
        by[string.format("%d.%d.%s", ref.room, ref.attribute, ref.kind)] = ref
      end
      -- room 1: texture 15 before a junction tunnel (n..n+5), texture 4 before fans, sidewalks, crosswalks
      assert.equal(15, by["1.1.texture"].value)
      assert.equal(5, by["1.1.texture"].span)
      assert.same({ "junction_tunnel" }, by["1.1.texture"].users)
      assert.equal(4, by["1.3.texture"].value)
      assert.equal(2, by["1.3.texture"].span)
      assert.same({ "road_fan", "sidewalk_strip", "crosswalk" }, by["1.3.texture"].users)
      -- room 7: a divided road, its divider group D..D+3
      assert.equal(11, by["7.2.divider"].value)
      assert.equal(3, by["7.2.divider"].span)
      -- room 9: facades read n, the sliver n
      assert.equal(8, by["9.3.texture"].value)
      assert.equal(0, by["9.3.texture"].span)
      -- rooms filter
      for _, ref in ipairs(retexture.references(doc, { [7] = true })) do assert.equal(7, ref.room) end
    end)

    it("counts how often each slot is a base and spanned", function()
      local use = retexture.usage(read())
      assert.equal(0, use[21].base) -- walk_f: unused in grid_n2
      assert.equal(0, use[21].spanned)
      assert.is_true(use[4].base >= 4)
      assert.is_true(use[6].spanned >= 4) -- the crosswalk slot of the intersection group
    end)
  end)

  describe("rename", function()
    it("changes only the texture table bytes", function()
      local before = H.read_bytes(N2)
      local doc = read()
      local report = assert(doc:rename_texture("swalk_f", "swalk_newname"))
      assert.equal("rename", report.op)
      assert.same({ { path = "textures[2]", from = "swalk_f", to = "swalk_newname" } }, report.changes)
      local after = psdl.encode(doc)
      local start, len_a = texture_table(read())
      local _, len_b = texture_table(doc)
      assert.equal(#before + #"swalk_newname" - #"swalk_f", #after)
      -- everything before the renamed entry (slot 2 starts after "r4_f\0" and its length byte) ...
      local entry2 = start + 1 + #"r4_f" + 1
      assert.equal(before:sub(1, entry2), after:sub(1, entry2))
      -- ... and everything after the texture table is byte-identical
      assert.equal(before:sub(start + len_a + 1), after:sub(start + len_b + 1))
      -- the structural diff sees exactly that
      local d = diff.diff(read(), doc)
      assert.equal(1, #d.differences)
      assert.equal("textures[2]", d.differences[1].path)
    end)

    it("renames every slot with the name and reports when none has it", function()
      local doc = read()
      doc.textures[23] = "r4_f"
      local report = assert(retexture.rename(doc, "r4_f", "r6_f"))
      assert.equal(2, #report.changes)
      assert.equal("r6_f", doc.textures[1])
      assert.equal("r6_f", doc.textures[23])
      report = assert(retexture.rename(doc, "nothere", "x"))
      assert.equal(0, #report.changes)
      assert.matches("no slot has that name", report.summary, 1, true)
    end)

    it("refuses a name the game cannot hold and leaves the document alone", function()
      local doc = read()
      local copy = deep_copy(doc)
      local ok, msg, code = retexture.rename(doc, "r4_f", string.rep("x", 32))
      assert.is_nil(ok)
      assert.equal("refused", code)
      assert.matches("1 to 31 characters", msg, 1, true)
      assert.is_nil((retexture.rename(doc, "r4_f", "")))
      assert.same(copy, doc)
    end)

    it("renames several names at once, so a map can swap two names", function()
      local doc = read()
      local report = assert(doc:rename_textures { r4_f = "swalk_f", swalk_f = "r4_f", nothere = "y" })
      assert.equal("swalk_f", doc.textures[1])
      assert.equal("r4_f", doc.textures[2])
      assert.equal(2, #report.changes)
      assert.matches("1 name not in the table", report.summary, 1, true)
    end)

    it("raises on misuse", function()
      assert.has_error(function() retexture.rename(read(), 1, "x") end,
        "bad argument #2 to 'rename' (string expected, got number)")
      assert.has_error(function() retexture.rename({}, "a", "b") end)
    end)
  end)

  describe("remap", function()
    it("changes only the data byte of each remapped texture attribute", function()
      local before = H.read_bytes(N2)
      local doc = read()
      local report = assert(doc:remap_texture(4, 1, { rooms = { 1, 2 } }))
      assert.equal(2, #report.changes)
      assert.same({ path = "rooms[1].attributes[3].value", from = 4, to = 1 }, report.changes[1])
      assert.same({ path = "rooms[2].attributes[1].value", from = 4, to = 1 }, report.changes[2])
      assert.matches("remap 4 -> 1: 2 references in rooms 1-2", report.summary, 1, true)
      local after = psdl.encode(doc)
      assert.equal(#before, #after)
      local diffs = {}
      for i = 1, #before do
        if before:byte(i) ~= after:byte(i) then diffs[#diffs + 1] = i end
      end
      assert.equal(2, #diffs)
      for _, i in ipairs(diffs) do
        assert.equal(4, before:byte(i))
        assert.equal(1, after:byte(i))
        assert.equal(0x50, before:byte(i - 2)) -- the texture header word 0x0050 just before
      end
      local d = diff.diff(read(), doc)
      assert.equal(2, #d.differences)
      assert.equal("rooms[1].attributes[3].value", d.differences[1].path)
    end)

    it("remaps divider textures too, and texture attributes only when asked", function()
      local doc = read()
      doc.textures[23], doc.textures[24], doc.textures[25], doc.textures[26] = "a", "b", "c", "d"
      local report = assert(retexture.remap(doc, 11, 23))
      assert.equal(2, #report.changes) -- rooms 7 and 8
      assert.equal(23, doc.rooms[7].attributes[2].divider_texture)
      report = assert(retexture.remap(doc, 1, 4, { dividers = false, textures = false }))
      assert.equal(0, #report.changes)
    end)

    it("writes a value past 255 through the header subtype, in the same number of words", function()
      local doc = grown(300)
      assert(retexture.remap(doc, 22, 299))
      local bytes = psdl.encode(doc)
      assert.equal(#psdl.encode(grown(300)), #bytes)
      local back = assert(psdl.decode(bytes))
      assert.equal(299, back.rooms[9].attributes[12].value)
    end)

    it("refuses a slot past 2047, past the table, a split group or a divider past 255", function()
      local doc = grown(300)
      local copy = deep_copy(doc)
      local ok, msg, code = retexture.remap(doc, 1, 2048)
      assert.is_nil(ok)
      assert.equal("refused", code)
      assert.matches("past the 2047 limit", msg, 1, true)
      ok, msg = retexture.remap(doc, 1, 301)
      assert.is_nil(ok)
      assert.matches("only 300 slots", msg, 1, true)
      -- a road group (n..n+2) at 299 would need 299..301
      ok, msg = retexture.remap(doc, 1, 299)
      assert.is_nil(ok)
      assert.matches("^remap 1 %-> 299: rooms%[5%]%.attributes%[3%]: .* would be split", msg)
      ok, msg = retexture.remap(doc, 11, 260)
      assert.is_nil(ok)
      assert.matches("rooms[7].attributes[2]: a divider texture cannot go past slot 255", msg, 1, true)
      assert.same(copy, doc)
    end)

    it("warns when references go past 511 and 767", function()
      local doc = grown(800)
      local report = assert(retexture.remap(doc, 22, 600))
      assert.equal(1, #report.warnings)
      assert.matches("past 511", report.warnings[1], 1, true)
      report = assert(retexture.remap(doc, 600, 780))
      assert.equal(1, #report.warnings)
      assert.matches("past 767", report.warnings[1], 1, true)
      report = assert(retexture.remap(doc, 780, 22))
      assert.equal(0, #report.warnings)
    end)
  end)

  describe("move_group", function()
    it("renumbers every reference so each still reads the same names", function()
      local doc = read()
      local before = names_read(doc)
      local report = assert(doc:move_texture_group(11, 19)) -- the divider group to the end
      assert.equal("move", report.op)
      assert.same({ "div_side", "div_flat", "div_top", "div_cap" },
        { doc.textures[19], doc.textures[20], doc.textures[21], doc.textures[22] })
      assert.equal("tun_l", doc.textures[11])
      assert.equal(19, doc.rooms[7].attributes[2].divider_texture)
      assert.equal(11, doc.rooms[1].attributes[1].value)
      assert.same(before, names_read(doc))
      local ok = psdl.validate(doc, { drivable = false }) -- the references (the fixture's geometry has holes)
      assert.is_true(ok)
      -- the diff lists the table and the renumbered references, nothing else
      for _, e in ipairs(diff.diff(read(), doc).differences) do
        assert.truthy(e.path:match("^textures%[") or e.path:match("%.value$") or e.path:match("%.divider_texture$"))
      end
    end)

    it("moves a group forwards and pads the table when the target is past its end", function()
      local doc = read()
      local before = names_read(doc)
      assert(retexture.move_group(doc, 1, 30))
      assert.equal(32, #doc.textures)
      assert.equal("r4_f", doc.textures[30])
      assert.equal(false, doc.textures[25])
      assert.same(before, names_read(doc))
    end)

    it("refuses a move that would split a group, naming the attribute", function()
      local doc = read()
      local copy = deep_copy(doc)
      local ok, msg, code = retexture.move_group(doc, 16, 2) -- the middle of the tunnel group 15..20
      assert.is_nil(ok)
      assert.equal("refused", code)
      assert.equal('rooms[1].attributes[1]: this texture attribute (read by junction_tunnel) reads '
        .. 'texture slots 15..20 ("tun_l" .. "tun_g"); moving slot 16 to 2 would split that group', msg)
      assert.same(copy, doc)
    end)

    it("refuses a divider group past slot 255 and anything past 2047", function()
      local doc = grown(300)
      local ok, msg = retexture.move_group(doc, 11, 280)
      assert.is_nil(ok)
      assert.matches("rooms[7].attributes[2]: moving slots 11..14 to 280..283 would move this divided "
        .. "road's divider texture from slot 11 to 280, past slot 255", msg, 1, true)
      ok, msg = retexture.move_group(doc, 1, 2046)
      assert.is_nil(ok)
      assert.matches("2047", msg, 1, true)
    end)
  end)

  describe("swap_groups", function()
    it("exchanges two groups of different lengths", function()
      local doc = read()
      local before = names_read(doc)
      local report = assert(doc:swap_texture_groups(1, 15)) -- road group (3) and tunnel group (6)
      assert.equal("swap", report.op)
      -- tunnel group 1..6, then old slots 4..14, then the road group 18..20
      assert.same({ "tun_l", "tun_r", "tun_c", "tun_ro", "tun_lo", "tun_g", "rinter_f" },
        { table.unpack(doc.textures, 1, 7) })
      assert.same({ "r4_f", "swalk_f", "r4_lo", "walk_f" }, { table.unpack(doc.textures, 18, 21) })
      assert.same(before, names_read(doc))
      assert.is_true((psdl.validate(doc, { drivable = false }))) -- the references (the fixture's geometry has holes)
    end)

    it("refuses overlapping groups", function()
      local ok, msg = retexture.swap_groups(read(), 1, 2)
      assert.is_nil(ok)
      assert.matches("overlap", msg, 1, true)
    end)
  end)

  describe("compact", function()
    it("drops unused slots and renumbers the references", function()
      local doc = read()
      table.insert(doc.textures, 1, "unused_a")
      doc.textures[#doc.textures + 1] = false
      for _, room in ipairs(doc.rooms) do
        for _, a in ipairs(room.attributes) do
          if a.type == "texture" then a.value = a.value + 1 end
          if a.type == "divided_road" then a.divider_texture = a.divider_texture + 1 end
        end
      end
      local before = names_read(doc)
      local report = assert(doc:compact_textures())
      -- unused_a, wall_b and walk_f (unused in grid_n2), the empty slot
      assert.same({ 1, 10, 22, 24 }, report.dropped)
      assert.equal(20, #doc.textures)
      assert.same(before, names_read(doc))
      assert.is_true((psdl.validate(doc, { drivable = false }))) -- the references (the fixture's geometry has holes)
      -- compacting again changes nothing
      assert.equal(0, #assert(retexture.compact(doc)).changes)
    end)
  end)

  describe("apply", function()
    it("applies operations in order, all or nothing", function()
      local doc = read()
      local copy = deep_copy(doc)
      local ok, msg = doc:retexture {
        { op = "rename", from = "r4_f", to = "r6_f" },
        { op = "remap", from = 4, to = 1 },
        { op = "move", from = 16, to = 2 },
      }
      assert.is_nil(ok)
      assert.matches("would split", msg, 1, true)
      assert.same(copy, doc)
      local reports = assert(doc:retexture {
        { op = "rename", map = { r4_f = "r6_f" } },
        { op = "swap", a = 1, b = 4 },
        { op = "compact" },
      })
      assert.equal(3, #reports)
      assert.equal("r6_f", doc.textures[4])
      -- misuse raises, with the document put back
      copy = deep_copy(doc)
      assert.has_error(function()
        doc:retexture { { op = "rename", from = "r6_f", to = "r7_f" }, { op = "frobnicate" } }
      end, "bad argument #1 to 'retexture' (ops[2]: unknown op frobnicate)")
      assert.has_error(function()
        doc:retexture { { op = "rename", from = "r6_f", to = "r7_f" }, { op = "remap", from = "x", to = 1 } }
      end, "bad argument #2 to 'remap' (integer texture slot expected, got x)")
      assert.same(copy, doc)
    end)
  end)
end)

describe("psdl retexture", function()
  it("renames in place, keeping a .bak of the original, and reports per file", function()
    local dir = tmpdir { { name = "grid_n2.psdl" } }
    local path = dir .. "/grid_n2.psdl"
    local code, out, err = run("retexture", path, "--rename", "r4_f=r6_f")
    assert.equal(0, code)
    assert.equal("", err)
    assert.matches(path .. ": changed, written (backup " .. path .. ".bak)\n", out, 1, true)
    assert.matches('  rename: 1 slot ("r4_f" -> "r6_f")\n', out, 1, true)
    assert.matches("1 file: 1 changed, 0 unchanged, 0 refused, 0 failed\n", out, 1, true)
    assert.equal(H.read_bytes(N2), H.read_bytes(path .. ".bak"))
    local doc = read(path)
    assert.equal("r6_f", doc.textures[1])
    local d = diff.diff(read(), doc)
    assert.equal(1, #d.differences)
  end)

  it("writes nothing with --dry-run", function()
    local dir = tmpdir { { name = "grid_n2.psdl" } }
    local path = dir .. "/grid_n2.psdl"
    local code, out = run("retexture", path, "--remap", "4=1", "--dry-run")
    assert.equal(0, code)
    assert.matches("would change (dry run)", out, 1, true)
    assert.matches("remap 4 -> 1: 4 references in rooms 1-4", out, 1, true)
    assert.matches("(dry run: nothing written)", out, 1, true)
    assert.equal(H.read_bytes(N2), H.read_bytes(path))
    assert.is_nil(lfs.attributes(path .. ".bak"))
  end)

  it("walks folders (recursively with -r) and writes under --out keeping the layout", function()
    local dir = tmpdir {
      { name = "grid_n2.psdl" }, { name = "grid_n3.psdl" }, { name = "grid_n2.psdl", as = "sub/x.PSDL" },
      { name = "README.md" },
    }
    local out_dir = dir .. "/out"
    local code, out = run("retexture", dir, "--rename", "wall_a=wall_q", "--out", out_dir)
    assert.equal(0, code)
    assert.matches("2 files: 2 changed", out, 1, true) -- not recursive: sub/ is skipped
    -- -r now finds the two copies under out/ too: writing out/ again would replace inputs
    local err
    code, out, err = run("retexture", dir, "-r", "--rename", "wall_a=wall_q", "--out", out_dir, "--json")
    assert.equal(1, code)
    assert.matches("refusing to overwrite an input", err, 1, true)
    local out_dir2 = dir .. "/out2"
    code, out = run("retexture", dir, "-r", "--rename", "wall_a=wall_q", "--out", out_dir2, "--json")
    assert.equal(0, code)
    local j = cjson.decode(out)
    assert.equal("psdlkit-retexture", j.format)
    assert.equal(5, j.summary.files) -- the two copies under out/ are found too
    assert.equal(out_dir2 .. "/sub/x.PSDL", j.files[#j.files].written)
    assert.equal("wall_q", read(out_dir2 .. "/sub/x.PSDL").textures[8])
    assert.equal(H.read_bytes(N2), H.read_bytes(dir .. "/grid_n2.psdl")) -- originals untouched
    assert.is_nil(lfs.attributes(dir .. "/grid_n2.psdl.bak"))
  end)

  it("leaves unchanged files alone and keeps no backup with --no-backup", function()
    local dir = tmpdir { { name = "grid_n2.psdl" } }
    local path = dir .. "/grid_n2.psdl"
    local code, out = run("retexture", path, "--rename", "nothere=x")
    assert.equal(0, code)
    assert.matches(path .. ": unchanged", out, 1, true)
    assert.is_nil(lfs.attributes(path .. ".bak"))
    code = run("retexture", path, "--rename", "r4_f=x", "--no-backup", "-q")
    assert.equal(0, code)
    assert.is_nil(lfs.attributes(path .. ".bak"))
    assert.equal("x", read(path).textures[1])
  end)

  it("refuses a splitting edit for that file with exit 1, naming file and attribute, and goes on", function()
    local big = grown(300)
    local dir = tmpdir { { name = "grid_n2.psdl" }, { name = "big.psdl", bytes = psdl.encode(big) } }
    local code, out, err = run("retexture", dir, "--remap", "11=260")
    assert.equal(1, code)
    assert.matches("psdl retexture: " .. dir .. "/big.psdl: refused: remap 11 -> 260: rooms[7].attributes[2]: "
      .. "a divider texture cannot go past slot 255", err, 1, true)
    assert.matches(dir .. "/grid_n2.psdl: refused: remap 11 -> 260: the texture table has only 22 slots", err, 1, true)
    assert.matches("2 files: 0 changed, 0 unchanged, 2 refused, 0 failed", out, 1, true)
    assert.equal(psdl.encode(big), H.read_bytes(dir .. "/big.psdl"))
  end)

  it("edits a file that already has validation errors when the edit adds none", function()
    local bytes = H.one_room({ 0x50, 30, 0x80 + 0x60 + 3 * 8 + 3, 0, 1, 2 }) -- texture 30 past the table
    local dir = tmpdir { { name = "bad.psdl", bytes = bytes } }
    local before = psdl.decode(bytes)
    assert.is_false((psdl.validate(before)))
    local code = run("retexture", dir .. "/bad.psdl", "--rename", "r4_f=r9_f")
    assert.equal(0, code)
    assert.equal("r9_f", read(dir .. "/bad.psdl").textures[1])
  end)

  it("reads mapping files and reports bad rows", function()
    local dir = tmpdir { { name = "grid_n2.psdl" } }
    H.write_bytes(dir .. "/map.txt", "# renames\nr4_f = r6_f\nswalk_f,swalk_g\n\nwall_a wall_b2\n")
    local code, out = run("retexture", dir .. "/grid_n2.psdl", "--map", dir .. "/map.txt")
    assert.equal(0, code)
    assert.matches('rename: 3 slots ("r4_f" -> "r6_f", "swalk_f" -> "swalk_g", "wall_a" -> "wall_b2")', out, 1, true)
    H.write_bytes(dir .. "/bad.txt", "r4_f=x\njust_one_word\n")
    local err
    code, _, err = run("retexture", dir .. "/grid_n2.psdl", "--map", dir .. "/bad.txt")
    assert.equal(2, code)
    assert.matches(dir .. "/bad.txt:2: expected 'old=new'", err, 1, true)
    code, _, err = run("retexture", dir .. "/grid_n2.psdl")
    assert.equal(1, code)
    assert.matches("nothing to do", err, 1, true)
    code, _, err = run("retexture", dir .. "/grid_n2.psdl", "--move", "x=3")
    assert.equal(1, code)
    assert.matches("--move \"x=3\": expected", err, 1, true)
  end)

  it("moves, swaps and compacts from the command line", function()
    local dir = tmpdir { { name = "grid_n6.psdl" } }
    local path = dir .. "/grid_n6.psdl"
    local before = names_read(read(path))
    local code, out = run("retexture", path, "--move", "11..14=19", "--swap", "1=4", "--compact")
    assert.equal(0, code)
    assert.matches("move slots 11..14", out, 1, true)
    assert.matches("swap slots 1..3", out, 1, true)
    assert.matches('compact: dropped 1 unused slot (9 "wall_b"), 22 -> 21 slots', out, 1, true)
    assert.same(before, names_read(read(path)))
  end)

  it("shows a progress line on stderr for more than a few files only with --progress off a terminal", function()
    local files = {}
    for i = 1, 5 do files[i] = { name = "grid_n2.psdl", as = "c" .. i .. ".psdl" } end
    local dir = tmpdir(files)
    local code, _, err = run("retexture", dir, "--rename", "r4_f=r6_f", "--dry-run")
    assert.equal(0, code)
    assert.equal("", err)
    code, _, err = run("retexture", dir, "--rename", "r4_f=r6_f", "--dry-run", "--progress")
    assert.equal(0, code)
    assert.matches("\r[", err, 1, true)
    assert.matches("5/5 " .. dir .. "/c5.psdl", err, 1, true)
  end)

  it("returns 2 for a file that is not PSDL and 3 for a missing one", function()
    local dir = tmpdir { { name = "x.psdl", bytes = "not a city" } }
    local code, _, err = run("retexture", dir .. "/x.psdl", "--rename", "a=b")
    assert.equal(2, code)
    assert.matches("bad_magic", err, 1, true)
    code = run("retexture", dir .. "/missing.psdl", "--rename", "a=b")
    assert.equal(3, code)
  end)
end)

describe("examples/reskin.lua", function()
  it("runs: renames, remaps, diffs, writes and exports", function()
    local dir = tmpdir()
    local build = os.getenv("PSDL_BUILD_DIR") or "build"
    local p = io.popen(string.format("PSDL_BUILD_DIR=%q lua5.4 examples/reskin.lua spec/fixtures/grid_n3.psdl %q 2>&1",
      build, dir))
    local out = p:read("a")
    assert.is_true(p:close(), out)
    assert.matches("remap 4 -> 1: 9 references in rooms 1-9", out, 1, true)
    assert.matches("refused as expected:\ttrue", out, 1, true)
    local doc = read(dir .. "/grid_n3_reskinned.psdl")
    assert.equal("r6_f", doc.textures[1])
    assert.is_not_nil(lfs.attributes(dir .. "/grid_n3_reskinned.glb"))
  end)
end)
