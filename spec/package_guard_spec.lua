-- What `psdl package`, `psdl validate X.ar` and `psdl view X.ar` do with hostile inputs
-- (newcomer findings #11, #12, #6, #8): a room with one far vertex must not hang the
-- generators (psdl.package.room_grid), a PSDL with validation errors is refused (exit 2), an
-- archive without an end record is unreadable (exit 2, no missing-file cascade), and the
-- viewer lists a package's own problems.
local psdl = require "psdl"
local room_grid = require "psdl.package.room_grid"
local H = require "helper"

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"

-- `psdl ARGS` in a child process under `timeout` (a hang fails the spec instead of the suite):
-- output, exit code
local function sh_psdl(args, seconds)
  local out = H.sh(string.format("PSDL_BUILD_DIR=%s timeout -s KILL %d lua5.4 scripts/psdl %s", H.q(build_dir),
    seconds or 120, args))
  local code = tonumber(out:match("exit=(%d+)%s*$"))
  return out, code
end

-- examples/facade_rows.lua's document (it packages), built once
local rows_doc
local function rows()
  if not rows_doc then
    local script = "examples/facade_rows.lua"
    local env = setmetatable({ psdl = psdl, arg = { [0] = script } }, { __index = _G })
    local city = assert(loadfile(script, "t", env))()
    rows_doc = (city:build())
  end
  return psdl.decode(psdl.encode(rows_doc)) -- a fresh copy
end

describe("psdl.package.room_grid", function()
  it("returns the boxes near a box, and a huge box from every query without walking it", function()
    local g = room_grid.new(100)
    g:add({ 0, 0, 50, 50 }, 1)
    g:add({ 1000, 1000, 1050, 1050 }, 2)
    g:add({ 0, 0, 1e9, 60 }, 3) -- one far vertex: ~1e7 x 1 cells
    g:add({ -1e12, -1e12, 1e12, 1e12 }, 4)
    local function ids(b, margin)
      local seen, out = {}, {}
      g:query(b, margin, function(id) if not seen[id] then seen[id] = true; out[#out + 1] = id end end)
      table.sort(out)
      return out
    end
    local t0 = os.clock()
    assert.same({ 1, 3, 4 }, ids({ 10, 10, 20, 20 }, 1))
    assert.same({ 2, 3, 4 }, ids({ 1010, 1010, 1020, 1020 }, 0))
    assert.same({ 1, 2, 3, 4 }, ids({ -1e12, -1e12, 1e12, 1e12 }, 1)) -- a far query box
    assert.same({ 3, 4 }, ids({ 5e8, 5e8, 5e8 + 1, 5e8 + 1 }, 1))
    assert.is_true(os.clock() - t0 < 2, "the walks took " .. (os.clock() - t0) .. " s")
  end)
end)

describe("psdl package guards", function()
  it("packages a valid city with one vertex 1e9 m away instead of looping (#11)", function()
    local doc = rows()
    local v = doc.rooms[1].perimeter[1].vertex
    doc.vertices[v][1] = 1e9
    local _, problems, counts = psdl.validate(doc)
    assert.equal(0, counts.errors, problems[1] and problems[1].message)
    local dir = H.tmpdir(finally)
    local src, ar = dir .. "/far.psdl", dir .. "/far.ar"
    H.write_bytes(src, psdl.encode(doc))
    local out, code = sh_psdl("package " .. H.q(src) .. " -o " .. H.q(ar) .. " -q")
    assert.equal(0, code, out)
    local vout, vcode = sh_psdl("validate " .. H.q(ar))
    assert.is_true(vcode == 0 or vcode == 1, vout)
    assert.falsy(vout:find("missing_file", 1, true), vout)
  end)

  it("refuses a PSDL with validation errors: exit 2, the count and the first errors (#12)", function()
    local doc = rows()
    doc.textures = {}
    local _, _, counts = psdl.validate(doc)
    assert.is_true(counts.errors > 3)
    local dir = H.tmpdir(finally)
    local src, ar = dir .. "/bad.psdl", dir .. "/bad.ar"
    H.write_bytes(src, psdl.encode(doc))
    local out, code = sh_psdl("package " .. H.q(src) .. " -o " .. H.q(ar))
    assert.equal(2, code, out)
    assert.truthy(out:find("fails validation with " .. counts.errors .. " errors", 1, true), out)
    assert.truthy(out:find("the first 3:\n  error texture_index rooms[", 1, true), out)
    assert.falsy(io.open(ar, "rb"), "an archive was written")
  end)
end)

describe("psdl validate X.ar without an end record (#6)", function()
  it("exits 2 for an empty or cut archive, with one error and no missing .cinfo", function()
    local dir = H.tmpdir(finally)
    local empty, cut = dir .. "/empty.ar", dir .. "/cut.ar"
    H.write_bytes(empty, "")
    H.write_bytes(cut, "PK\3\4" .. string.rep("x", 200))
    for _, f in ipairs({ empty, cut }) do
      local code, out = H.cli("validate", f)
      assert.equal(2, code, out)
      assert.truthy(out:find("error zip_end_record", 1, true), out)
      assert.falsy(out:find("missing_file", 1, true), out)
      assert.truthy(out:find("FAILED: 1 error", 1, true), out)
    end
    local code, out = H.cli("validate", empty)
    assert.truthy(out:find("the file is empty (0 bytes)", 1, true), out)
    assert.equal(2, code)
  end)
end)

describe("psdl view X.ar (#8)", function()
  it("lists the package's own problems with the city's", function()
    local dir = H.tmpdir(finally)
    local ar, html = dir .. "/rows.ar", dir .. "/rows.html"
    local out, code = sh_psdl("package examples/facade_rows.lua -o " .. H.q(ar) .. " --seed 5 -q")
    assert.equal(0, code, out)
    -- a good package plus an archive comment: the game cannot open it (zip_comment)
    local bytes = H.read_bytes(ar)
    local bad = dir .. "/comment.ar"
    H.write_bytes(bad, bytes:sub(1, -3) .. string.pack("<I2", 5) .. "hello")
    local vcode, vout = H.cli("validate", bad)
    assert.equal(1, vcode, vout) -- readable, but with problems (docs/cli.md)
    local code1, vout1 = H.cli("view", ar, "-o", html)
    assert.equal(0, code1, vout1)
    local code2, vout2 = H.cli("view", bad, "-o", html)
    assert.equal(0, code2, vout2)
    local n1 = tonumber((vout1:match("([%d,]+) problems"):gsub(",", "")))
    local n2 = tonumber((vout2:match("([%d,]+) problems"):gsub(",", "")))
    -- the same city: one problem more, the comment the game's reader cannot get past
    assert.equal(n1 + 1, n2, vout1 .. vout2)
    -- and the good package's own warnings (dead ends in its .bai) are counted too
    local _, vcheck = H.cli("validate", ar)
    local warnings = tonumber(vcheck:match("(%d+) warnings?"))
    assert.is_true(n1 >= warnings, vout1 .. vcheck)
  end)
end)
