-- Specs for "never destroy an input": every command with an output refuses an output that
-- is one of its inputs (by real path: links, ./ spellings, hard links), retexture edits each
-- file once and leaves links outside its folders and odd .bak files alone, and killed
-- writes leave no temporary files that accumulate.

local lfs = require "lfs"
local psdl = require "psdl"
local H = require "helper"
local run, files_in, q = H.cli, H.files_in, H.q

local ROOT = assert(psdl.real_path("."))
local BUILD = os.getenv("PSDL_BUILD_DIR") or "build"
if BUILD:sub(1, 1) ~= "/" then BUILD = ROOT .. "/" .. BUILD end
local N3 = "spec/fixtures/grid_n3.psdl"

describe("an output that is an input", function()
  it("is refused by every command with an output, through links and ./ spellings (exit 1, input intact)", function()
    local dir = H.tmpdir(finally)
    local city = dir .. "/city.psdl"
    H.write_bytes(city, H.read_bytes(N3))
    local json = dir .. "/city.json"
    assert.equal(0, (run("dump", city, "-o", json)))
    local script = dir .. "/city.lua"
    H.write_bytes(script, "local c = psdl.city.new{ blocks = false }\nc:road(c:node(0, 0), c:node(100, 0))\nreturn c\n")
    local osm = dir .. "/town.osm"
    H.write_bytes(osm, H.read_bytes("spec/fixtures/osm/" .. (function()
      for name in lfs.dir("spec/fixtures/osm") do if name:match("%.osm$") then return name end end
    end)()))
    assert(lfs.link(city, dir .. "/link.psdl", true))
    assert(lfs.link(city, dir .. "/hard.psdl"))
    local spellings = { city, dir .. "/./city.psdl", dir .. "/../" .. dir:match("[^/]*$") .. "/city.psdl",
      dir .. "/link.psdl", dir .. "/hard.psdl" }
    local cases = {}
    for _, same in ipairs(spellings) do
      cases[#cases + 1] = { city, { "dump", city, "-o", same } }
      cases[#cases + 1] = { city, { "render", city, "-o", same, "--format", "png" } }
      cases[#cases + 1] = { city, { "export", city, "-o", same, "--format", "glb" } }
      cases[#cases + 1] = { city, { "terrain", "export", city, "-o", same, "--format", "png" } }
    end
    cases[#cases + 1] = { json, { "undump", json, "-o", dir .. "/./city.json" } }
    cases[#cases + 1] = { script, { "build", script, "-o", dir .. "/./city.lua" } }
    local svg_script = dir .. "/map.svg" -- a script with an odd name, drawn over itself
    H.write_bytes(svg_script, H.read_bytes(script))
    cases[#cases + 1] = { svg_script, { "build", svg_script, "-o", dir .. "/x.psdl", "--preview", svg_script } }
    cases[#cases + 1] = { osm, { "osm", osm, "-o", osm } }
    cases[#cases + 1] = { osm, { "osm", osm, "--network-json", osm } }
    cases[#cases + 1] = { osm, { "osm", osm, "--svg", dir .. "/./town.osm" } }
    for _, c in ipairs(cases) do
      local before = H.read_bytes(c[1])
      local code, _, err = run(table.unpack(c[2]))
      local what = table.concat(c[2], " ")
      assert.equal(1, code, what .. ": " .. err)
      assert.matches("refusing to overwrite an input", err, 1, true)
      assert.equal(before, H.read_bytes(c[1]), what)
    end
    -- an .obj export whose .mtl would land on the input
    local code, _, err = run("export", city, "-o", dir .. "/city.obj", "--format", "obj")
    assert.equal(0, code, err)
    H.write_bytes(dir .. "/m.mtl", H.read_bytes(N3))
    code, _, err = run("export", dir .. "/m.mtl", "-o", dir .. "/m.obj")
    assert.equal(1, code)
    assert.matches("its .mtl", err, 1, true)
  end)

  it("lets retexture --out name the files' own folder only by refusing", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/a.psdl", H.read_bytes(N3))
    local code, _, err = run("retexture", dir, "--swap", "1=4", "--out", dir .. "/.")
    assert.equal(1, code)
    assert.matches("refusing to overwrite an input", err, 1, true)
    assert.equal(H.read_bytes(N3), H.read_bytes(dir .. "/a.psdl"))
    assert.same({ "a.psdl" }, files_in(dir))
  end)
end)

describe("psdl retexture over folders", function()
  it("edits a file once however many names reach it", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/a.psdl", H.read_bytes(N3))
    assert(lfs.link("a.psdl", dir .. "/b.psdl", true))
    local code, out, err = run("retexture", dir, dir .. "/a.psdl", dir .. "/./a.psdl", "--swap", "1=4")
    assert.equal(0, code, err)
    assert.matches("1 file: 1 changed", out, 1, true)
    assert.matches("the same file as", err, 1, true)
    -- swapped once: slot 1 now holds what slot 4 held
    local before, after = psdl.decode(H.read_bytes(N3)), assert(psdl.read(dir .. "/a.psdl"))
    assert.equal(before.textures[4], after.textures[1])
    assert.equal(before.textures[1], after.textures[4])
  end)

  it("skips a link that leads outside the folders given, unless --follow-links", function()
    local dir, other = H.tmpdir(finally), H.tmpdir(finally)
    H.write_bytes(other .. "/far.psdl", H.read_bytes(N3))
    assert(lfs.link(other .. "/far.psdl", dir .. "/far.psdl", true))
    local code, out, err = run("retexture", dir, "--swap", "1=4")
    assert.equal(0, code)
    assert.matches("0 files", out, 1, true)
    assert.matches("outside the folders given: skipped", err, 1, true)
    assert.equal(H.read_bytes(N3), H.read_bytes(other .. "/far.psdl"))
    code, out = run("retexture", dir, "--swap", "1=4", "--follow-links", "--no-backup")
    assert.equal(0, code)
    assert.matches("1 file: 1 changed", out, 1, true)
    assert.are_not.equal(H.read_bytes(N3), H.read_bytes(other .. "/far.psdl"))
  end)

  it("does not count a .bak that is a link, the file itself or not PSDL as the kept original", function()
    local dir = H.tmpdir(finally)
    local f = dir .. "/a.psdl"
    local elsewhere = H.tmpname(".txt")
    finally(function() os.remove(elsewhere) end)
    H.write_bytes(elsewhere, "precious")
    local setups = {
      { function() assert(lfs.link(elsewhere, f .. ".bak", true)) end, "is a symbolic link" },
      { function() assert(lfs.link(f, f .. ".bak")) end, "is the file itself" },
      { function() H.write_bytes(f .. ".bak", "notes") end, "is not a PSDL file" },
    }
    for _, s in ipairs(setups) do
      H.write_bytes(f, H.read_bytes(N3))
      os.remove(f .. ".bak")
      s[1]()
      local code, _, err = run("retexture", f, "--swap", "1=4")
      assert.equal(1, code, s[2])
      assert.matches(s[2], err, 1, true)
      assert.equal(H.read_bytes(N3), H.read_bytes(f))
    end
    assert.equal("precious", H.read_bytes(elsewhere))
    -- a real earlier original is kept
    os.remove(f .. ".bak")
    H.write_bytes(f .. ".bak", H.read_bytes(N3))
    local code, out = run("retexture", f, "--swap", "1=4")
    assert.equal(0, code)
    assert.matches("kept from an earlier edit", out, 1, true)
  end)
end)

describe("temporary files of atomic writes", function()
  it("removes stale temporary files of the same output whose process is gone", function()
    local dir = H.tmpdir(finally)
    local out = dir .. "/city.psdl"
    H.write_bytes(out .. ".tmp-999999999-AbC123", "half")        -- no such process
    H.write_bytes(out .. ".tmp-" .. "1" .. "-XyZ789", "alive")   -- pid 1 runs: kept
    H.write_bytes(dir .. "/other.psdl.tmp-999999999-AbC123", "x") -- another output: kept
    assert(psdl.write_file(out, "new"))
    assert.same({ "city.psdl", "city.psdl.tmp-1-XyZ789", "other.psdl.tmp-999999999-AbC123" }, files_in(dir))
    assert.equal("new", H.read_bytes(out))
  end)

  it("leaves nothing that accumulates when writes are killed with kill -9", function()
    local dir = H.tmpdir(finally)
    local script = string.format([[
      package.cpath = %q .. "/?.so;" .. package.cpath
      package.path = %q .. "/lua/?.lua;" .. %q .. "/lua/?/init.lua;" .. package.path
      local psdl = require "psdl"
      local s = string.rep("x", 20000000)
      while true do assert(psdl.write_file(%q, s)) end
    ]], BUILD, ROOT, ROOT, dir .. "/big.bin")
    H.write_bytes(dir .. "/writer.lua", script)
    for i = 1, 12 do
      os.execute(string.format("lua5.4 %s & pid=$!; sleep 0.%d; kill -9 $pid; wait $pid 2>/dev/null",
        q(dir .. "/writer.lua"), 1 + i % 5))
    end
    assert(psdl.write_file(dir .. "/big.bin", "done"))
    assert.same({ "big.bin", "writer.lua" }, files_in(dir))
  end)
end)

describe("outputs checked before any work", function()
  it("a missing or unwritable output folder stops every command with exit 3 before it writes anything", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/city.lua"
    H.write_bytes(script, "local c = psdl.city.new{ blocks = false }\nc:road(c:node(0, 0), c:node(100, 0))\nreturn c\n")
    local osm = "spec/fixtures/osm/tee.osm"
    local missing = dir .. "/nowhere/x"
    local cases = {
      -- the newcomer's case: the PSDL was written, then the preview failed
      { { "build", script, "-o", dir .. "/a.psdl", "--preview", missing .. ".png" }, "--preview" },
      { { "build", script, "-o", dir .. "/a.psdl", "--package", missing .. ".ar" }, "--package" },
      { { "build", script, "-o", dir, "--preview", dir .. "/a.png" }, "a folder, not a file" },
      { { "osm", osm, "-o", dir .. "/a.psdl", "--svg", missing .. ".svg" }, "--svg" },
      { { "osm", osm, "-o", dir .. "/a.psdl", "--network-json", missing .. ".json" }, "--network-json" },
      { { "osm", osm, "-o", missing .. ".psdl", "--preview", dir .. "/a.png" }, "-o" },
      { { "export", N3, "-o", missing .. ".obj" }, "-o" },
      { { "render", N3, "-o", missing .. ".png" }, "-o" },
      { { "dump", N3, "-o", missing .. ".json" }, "-o" },
      { { "terrain", "export", "spec/fixtures/terrain/ramp_4x6.nhtg", "-o", missing .. ".png" }, "-o" },
      { { "terrain", "import", "spec/fixtures/terrain/ramp_4x6.png", "-o", missing .. ".nhtg" }, "-o" },
      { { "package", N3, "-o", missing .. ".ar" }, "-o" },
      { { "view", N3, "-o", missing .. ".html" }, "-o" },
    }
    for _, case in ipairs(cases) do
      local code, _, err = run(table.unpack(case[1]))
      local cmd = table.concat(case[1], " ")
      assert.equal(3, code, cmd .. "\n" .. err)
      assert.matches(case[2], err, 1, true)
      assert.same({ "city.lua" }, files_in(dir), cmd)
    end
    local _, _, err = run("build", script, "-o", dir .. "/a.psdl", "--preview", missing .. ".png")
    assert.matches("--preview " .. missing .. ".png: the folder " .. dir .. "/nowhere does not exist", err, 1, true)
    if not H.sh("id -u"):match("^0\n") then -- root may write anywhere
      local ro = dir .. "/ro"
      assert(lfs.mkdir(ro))
      os.execute("chmod 555 " .. q(ro))
      local code
      code, _, err = run("build", script, "-o", dir .. "/a.psdl", "--preview", ro .. "/a.png")
      assert.equal(3, code)
      assert.matches("cannot write in the folder", err, 1, true)
      assert.is_nil(lfs.attributes(dir .. "/a.psdl"))
    end
  end)

  it("a folder given as the input is an I/O error (exit 3) in every command", function()
    local dir = H.tmpdir(finally)
    local out = dir .. "/out"
    for _, args in ipairs {
      { "build", dir, "-o", out .. ".psdl" }, { "osm", dir, "-o", out .. ".psdl" }, { "info", dir },
      { "validate", dir }, { "dump", dir, "-o", out .. ".json" }, { "undump", dir, "-o", out .. ".psdl" },
      { "render", dir, "-o", out .. ".png" }, { "export", dir, "-o", out .. ".obj" },
      { "terrain", "info", dir }, { "terrain", "import", dir, "-o", out .. ".nhtg" },
      { "view", dir, "-o", out .. ".html" }, { "package", dir, "-o", out .. ".ar" }, { "diff", dir, N3 },
    } do
      local code, _, err = run(table.unpack(args))
      assert.equal(3, code, table.concat(args, " ") .. "\n" .. err)
      assert.matches(dir, err, 1, true)
      assert.same({}, files_in(dir))
    end
  end)
end)

describe("an output that is a file the script loaded", function()
  it("is refused after the script ran, before anything is written (modules, data, heightmaps; both modes)", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/streets.lua", "return { add = function(c, a, b) c:road(a, b) end }\n")
    H.write_bytes(dir .. "/data.txt", "120\n")
    H.write_bytes(dir .. "/city.lua", table.concat({
      "local streets = require 'streets'",
      "local w = tonumber(io.lines(SCRIPT_DIR .. '/data.txt')())",
      "local city = psdl.city.new{ blocks = false }",
      "streets.add(city, city:node(0, 0), city:node(w, 0))",
      "return city",
    }, "\n"))
    local hm = dir .. "/hm.png"
    H.write_bytes(hm, H.read_bytes("spec/fixtures/terrain/ramp_4x6.png"))
    H.write_bytes(dir .. "/city3.lua", "local t = assert(psdl.terrain.load(SCRIPT_DIR .. '/hm.png'))\n"
      .. "local city = psdl.city.new{ blocks = false }\ncity:road(city:node(0, 0), city:node(100, 0))\nreturn city\n")
    -- a trusted script finds its modules through package.path
    H.write_bytes(dir .. "/city_t.lua", "package.path = SCRIPT_DIR .. '/?.lua;' .. package.path\n"
      .. H.read_bytes(dir .. "/city.lua"))
    H.write_bytes(dir .. "/city_ar.lua", "local f = assert(io.open('old.ar', 'rb')); f:close()\n"
      .. H.read_bytes(dir .. "/city.lua"))
    H.write_bytes(dir .. "/old.ar", "not really an archive")
    local keep = {}
    for _, f in ipairs { "streets.lua", "data.txt", "hm.png", "old.ar" } do keep[f] = H.read_bytes(dir .. "/" .. f) end
    local cases = {
      { "streets.lua", { "build", dir .. "/city.lua", "-o", dir .. "/streets.lua" } },
      { "data.txt", { "build", dir .. "/city.lua", "-o", dir .. "/./data.txt" } },
      { "streets.lua", { "build", "--trust", dir .. "/city_t.lua", "-o", dir .. "/streets.lua" } },
      { "data.txt", { "build", "--trust", dir .. "/city_t.lua", "-o", dir .. "/data.txt" } },
      { "hm.png", { "build", dir .. "/city3.lua", "-o", dir .. "/y.psdl", "--preview", hm } },
      { "hm.png", { "build", "--trust", dir .. "/city3.lua", "-o", dir .. "/y.psdl", "--preview", hm } },
      { "old.ar", { "package", dir .. "/city_ar.lua", "-o", dir .. "/old.ar" } },
    }
    for _, c in ipairs(cases) do
      local code, _, err = run(table.unpack(c[2]))
      local what = table.concat(c[2], " ")
      assert.equal(1, code, what .. ": " .. err)
      assert.matches("/" .. c[1] .. ", which the script " .. dir .. "/city", err, 1, true)
      assert.matches("refusing to overwrite an input", err, 1, true)
      assert.is_nil(lfs.attributes(dir .. "/y.psdl"), what)
      for f, bytes in pairs(keep) do assert.equal(bytes, H.read_bytes(dir .. "/" .. f), what .. ": " .. f) end
    end
    -- a file the script did not read is still a fine output
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/y.psdl")
    assert.equal(0, code, err)
  end)
end)
