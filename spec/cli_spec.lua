-- Specs for the `psdl` command line (lua/psdl/cli): driven through main() with in-memory
-- streams, plus one smoke test of scripts/psdl.
-- Run from the repository root; PSDL_BUILD_DIR names the build directory (default build).

local cjson = require "cjson"
local lfs = require "lfs"
local psdl = require "psdl"
local cli = require "psdl.cli"
local docjson = require "psdl.cli.docjson"

local FIXTURE_DIR = "spec/fixtures"
-- a city the builder made (examples/street.lua) that passes every rule, the drivability
-- rules included; the synthetic codec fixtures have holes by construction (README there)
local CLEAN = FIXTURE_DIR .. "/clean/street.psdl"

local function fixtures()
  local list = {}
  for name in lfs.dir(FIXTURE_DIR) do
    if name:match("%.psdl$") then list[#list + 1] = FIXTURE_DIR .. "/" .. name end
  end
  table.sort(list)
  return list
end

local H = require "helper"
local slurp, spit = H.read_bytes, H.write_bytes

local run = H.cli

-- Files to remove when the running test ends.
local function cleanup(...) H.cleanup(finally, ...) end

-- A fresh temporary path, removed when the test ends.
local function tmpname(suffix) return H.tmp(finally, suffix) end

local function count(s, pattern)
  local n = 0
  for _ in s:gmatch(pattern) do n = n + 1 end
  return n
end

-- Write a document to a temporary PSDL file (returns its path; removed when the test ends).
local function write_doc(doc)
  local path = tmpname(".psdl")
  spit(path, psdl.encode(doc))
  return path
end

-- Expected counts from spec/fixtures/README.md.
local README = {
  ["grid_n2.psdl"] = { rooms = 9, vertices = 120, heights = 4, roads = 4, bytes = 3120 },
  ["grid_n3.psdl"] = { rooms = 25, vertices = 320, heights = 7, roads = 12, bytes = 7994 },
  ["grid_n4_nopaths.psdl"] = { rooms = 49, vertices = 608, heights = 8, roads = 0, bytes = 14336 },
  ["grid_n6.psdl"] = { rooms = 121, vertices = 1532, heights = 8, roads = 60, bytes = 37692 },
  ["grid_n20.psdl"] = { rooms = 1521, vertices = 18952, heights = 8, roads = 760, bytes = 468436 },
}

describe("psdl command line", function()
  describe("main()", function()
    it("lists the commands for --help and returns 0", function()
      local code, out, err = run("--help")
      assert.equal(0, code)
      assert.equal("", err)
      assert.matches("Usage: psdl", out, 1, true)
      for _, verb in ipairs { "info", "validate", "dump", "undump" } do
        assert.matches("\n   " .. verb .. " ", out, 1, true)
      end
    end)

    it("shows a command's own help for `info --help`", function()
      local code, out = run("info", "--help")
      assert.equal(0, code)
      assert.matches("Usage: psdl info", out, 1, true)
      assert.matches("--json", out, 1, true)
    end)

    it("returns 1 with the usage on stderr for an unknown command, without exiting", function()
      local code, out, err = run("frobnicate")
      assert.equal(cli.exit.usage, code)
      assert.equal(1, code)
      assert.equal("", out)
      assert.matches("Usage: psdl", err, 1, true)
      assert.matches("\npsdl: unknown command 'frobnicate'\n", err, 1, true)
      assert.not_matches("\n\n", err, 1, true) -- (no blank line before the message)
    end)

    it("returns 1 when a required argument is missing or an option is unknown", function()
      local code, _, err = run("info")
      assert.equal(1, code)
      assert.matches("Usage: psdl info", err, 1, true)
      assert.matches("missing argument 'files'", err, 1, true)
      code, _, err = run("undump", "x.json")
      assert.equal(1, code)
      assert.matches("-o", err, 1, true)
      code = run("validate", "--bogus", FIXTURE_DIR .. "/grid_n2.psdl")
      assert.equal(1, code)
    end)

    it("returns 1 when no command is given", function()
      local code, _, err = run()
      assert.equal(1, code)
      assert.matches("command", err, 1, true)
    end)

    it("dispatches a command added to the list and reports its unexpected errors as internal (4)", function()
      package.preload["psdl.cli.boom"] = function()
        return {
          summary = "Fail on purpose.",
          configure = function(cmd) cmd:argument("what") end,
          run = function(args) error("kaboom " .. args.what) end,
        }
      end
      table.insert(cli.commands, "boom")
      finally(function()
        table.remove(cli.commands)
        package.preload["psdl.cli.boom"], package.loaded["psdl.cli.boom"] = nil, nil
      end)
      local code, _, err = run("boom", "now")
      assert.equal(cli.exit.internal, code)
      assert.equal(4, code)
      assert.matches("^psdl boom: internal error: .*kaboom now", err)
      assert.matches("stack traceback", err, 1, true)
    end)

    it("has the documented exit codes", function()
      assert.same({ ok = 0, usage = 1, problems = 1, bad_input = 2, io = 3, internal = 4 }, cli.exit)
    end)
  end)

  describe("info", function()
    it("shows magic, size and counts of a fixture", function()
      local code, out, err = run("info", FIXTURE_DIR .. "/grid_n2.psdl")
      assert.equal(0, code)
      assert.equal("", err)
      assert.matches("^spec/fixtures/grid_n2.psdl\n", out)
      assert.matches("magic%s+PSD0 %(target size 2%)", out)
      assert.matches("size%s+3,120 bytes", out)
      assert.matches("vertices%s+120\n", out)
      assert.matches("rooms%s+10 %(9 records %+ room 0%)", out)
      assert.matches("road records%s+4\n", out)
      assert.matches("attribute types", out, 1, true)
      assert.matches("room flags", out, 1, true)
      assert.matches("vertices%s+120 / 65,024%s+0.2 %%  safe budget", out)
      assert.matches("largest perimeter", out, 1, true)
      assert.matches("texture slots%s+%d+ / 2,047", out)
    end)

    it("gives the counts of spec/fixtures/README.md for every fixture as JSON", function()
      local files = fixtures()
      local code, out = run("info", "--json", table.unpack(files))
      assert.equal(0, code)
      local result = cjson.decode(out)
      assert.equal("psdlkit-info", result.format)
      assert.equal(#files, #result.files)
      for i, f in ipairs(result.files) do
        local expect = README[files[i]:match("[^/]+$")]
        assert.equal(files[i], f.file)
        assert.equal("PSD0", f.magic)
        if expect then
          assert.equal(expect.bytes, f.size)
          assert.equal(expect.vertices, f.counts.vertices)
          assert.equal(expect.heights, f.counts.heights)
          assert.equal(expect.rooms, f.counts.room_records)
          assert.equal(expect.rooms + 1, f.counts.rooms)
          assert.equal(expect.roads, f.counts.road_records)
        end
      end
    end)

    it("counts attributes and attribute words like the encoder does", function()
      for _, file in ipairs(fixtures()) do
        local bytes = slurp(file)
        local doc = assert(psdl.decode(bytes))
        local s = require("psdl.cli.info").stats(doc, #bytes)
        -- the same document without attribute streams is 2 bytes shorter per word
        local attributes = 0
        for _, room in ipairs(doc.rooms) do
          attributes = attributes + #room.attributes
          room.attributes = {}
        end
        assert.equal(attributes, s.counts.attributes)
        assert.equal((#bytes - #psdl.encode(doc)) // 2, s.counts.attribute_words)
        local sum = 0
        for _, t in ipairs(s.attribute_types) do sum = sum + t.count end
        assert.equal(attributes, sum)
      end
    end)

    it("lists attribute types in type order and room flags by value", function()
      local _, out = run("info", "--json", FIXTURE_DIR .. "/grid_n6.psdl")
      local f = cjson.decode(out).files[1]
      local order = {}
      for i, t in ipairs(require("psdl.cli.info").TYPE_ORDER) do order[t] = i end
      for i = 2, #f.attribute_types do
        assert.is_true(order[f.attribute_types[i - 1].type] < order[f.attribute_types[i].type])
      end
      local rooms = 0
      for i, e in ipairs(f.room_flags) do
        if i > 1 then assert.is_true(f.room_flags[i - 1].flags < e.flags) end
        rooms = rooms + e.rooms
      end
      assert.equal(121, rooms)
      for _, l in ipairs(f.limits) do
        assert.is_number(l.value)
        assert.is_number(l.limit)
        assert.is_number(l.percent)
      end
    end)

    it("reports a bad file with exit code 2 and goes on with the others", function()
      local bad = tmpname(".psdl")
      spit(bad, "PSD0\2\0\0\0\255\255\0\0")
      local code, out, err = run("info", bad, FIXTURE_DIR .. "/grid_n2.psdl")
      assert.equal(cli.exit.bad_input, code)
      assert.matches("^psdl info: " .. bad:gsub("%p", "%%%0") .. ": ", err)
      assert.matches("spec/fixtures/grid_n2.psdl\n", out, 1, true)
    end)

    it("returns 3 for a file that does not exist, and lists it with its error in JSON", function()
      local code, out, err = run("info", "--json", "no/such/file.psdl")
      assert.equal(cli.exit.io, code)
      assert.matches("^psdl info: no/such/file.psdl", err)
      local f = cjson.decode(out).files[1]
      assert.equal("io", f.error.code)
    end)
  end)

  describe("validate", function()
    it("passes a clean city and prints a summary per file", function()
      local copy = tmpname(".psdl")
      spit(copy, slurp(CLEAN))
      local code, out = run("validate", CLEAN, copy)
      assert.equal(0, code)
      for _, file in ipairs({ CLEAN, copy }) do
        assert.matches(file .. ": ok: 0 errors, 0 warnings", out, 1, true)
      end
      assert.matches("2 files: 2 clean, 0 failed\n", out, 1, true)
    end)

    it("fails the synthetic fixtures on their drivability defects only (holes, floor outside rooms)", function()
      local files = fixtures()
      local code, out = run("validate", table.unpack(files))
      assert.equal(cli.exit.problems, code)
      for _, file in ipairs(files) do assert.matches(file .. ": FAILED: [%d,]+ errors, ", out) end
      local rules = {}
      for rule in out:gmatch(": error ([%w_]+) ") do rules[rule] = true end
      assert.same({ hole = true, floor_outside = true }, rules)
      -- the format's rules alone pass them
      local ok, problems = psdl.validate(assert(psdl.read(files[1])), { drivable = false })
      assert.is_true(ok, problems[1] and problems[1].message)
    end)

    it("fails files with warnings under --strict (exit 1)", function()
      local file = tmpname("_london.psdl") -- the city name draws a warning (§3.4)
      spit(file, slurp(CLEAN))
      local code, out = run("validate", "--strict", file)
      assert.equal(cli.exit.problems, code)
      assert.matches("_london.psdl: FAILED: 0 errors, 1 warning %(strict%)\n$", out)
    end)

    it("prints one line per problem: FILE: severity rule path: message", function()
      local _, out = run("validate", FIXTURE_DIR .. "/grid_n2.psdl")
      assert.matches("spec/fixtures/grid_n2.psdl: warning [%w_]+ rooms%[%d+%][^:]*: [^\n]+\n", out)
    end)

    it("groups warnings of one rule beyond 20 unless --all", function()
      local file = FIXTURE_DIR .. "/grid_n6.psdl"
      local doc = assert(psdl.decode(slurp(file)))
      local _, problems = psdl.validate(doc, { name = file })
      local per_rule, warnings = {}, 0
      for _, p in ipairs(problems) do
        if p.severity == "warning" then
          warnings = warnings + 1
          per_rule[p.rule] = (per_rule[p.rule] or 0) + 1
        end
      end
      local _, out = run("validate", file)
      local listed, hidden = 0, 0
      for rule, n in pairs(per_rule) do
        local shown = count(out, ": warning " .. rule .. " ")
        assert.equal(math.min(n, 20), shown)
        listed = listed + shown
        if n > 20 then
          assert.matches(file .. ": ... and " .. (n - 20) .. " more " .. rule .. " warning", out, 1, true)
          hidden = hidden + n - 20
        end
      end
      assert.is_true(hidden > 0)
      assert.equal(warnings, listed + hidden)

      local _, all = run("validate", "--all", file)
      assert.equal(warnings, count(all, ": warning "))
      assert.not_matches("... and", all, 1, true)
    end)

    it("exits 1 and lists the error for a file with an out-of-range vertex", function()
      local doc = assert(psdl.decode(slurp(CLEAN)))
      doc.rooms[3].perimeter[2].vertex = #doc.vertices + 1
      local path = write_doc(doc)
      local code, out = run("validate", path)
      assert.equal(1, code)
      assert.matches(path .. ": error [%w_]+ rooms%[3%]%.perimeter%[2%]", out)
      assert.matches(path .. ": FAILED: 1 error, ", out, 1, true)
    end)

    it("writes every problem as JSON with --json, with rooms and positions", function()
      local file = FIXTURE_DIR .. "/grid_n6.psdl"
      local code, out = run("validate", "--json", file)
      assert.equal(cli.exit.problems, code)
      local r = cjson.decode(out)
      assert.equal("psdlkit-validate", r.format)
      local f = r.files[1]
      assert.is_false(f.ok)
      assert.equal(f.errors + f.warnings, #f.problems)
      assert.truthy(f.problems[1].rule and f.problems[1].path and f.problems[1].message)
      local hole
      for _, p in ipairs(f.problems) do if p.rule == "hole" then hole = p; break end end
      assert.truthy(hole, "a hole in grid_n6")
      assert.equal("number", type(hole.x))
      assert.equal("number", type(hole.z))
      assert.is_true(#hole.rooms >= 1)
      -- the clean city: ok, nothing listed
      local code2, out2 = run("validate", "--json", CLEAN)
      assert.equal(0, code2)
      assert.same({}, cjson.decode(out2).files[1].problems)
    end)

    it("lists every rule with its severity (--rules)", function()
      local code, out = run("validate", "--rules")
      assert.equal(0, code)
      for _, rule in ipairs({ "vertex_index", "missing_last", "hole", "room_overlap", "floor_outside", "unreachable",
                              "perimeter_crossing", "perimeter_spike", "perimeter_kink", "nonfinite", "empty_city",
                              "edge_gap", "city_name", "encodable" }) do
        assert.matches("\n" .. rule .. " +[ew]", "\n" .. out)
      end
      assert.matches("hole +error/warning", out)
      -- every rule name the C validator reports is listed
      local listed = {}
      for name in out:gmatch("([%w_]+) +[ew][rwa]") do listed[name] = true end
      for _, src in ipairs({ "src/psdl_validate.c", "src/psdl_drivable.c" }) do
        local text = slurp(src)
        for name in text:gmatch('report%(&?[vc], [^"]-"([%w_]+)"') do
          assert.truthy(listed[name], name .. " (" .. src .. ") missing from --rules")
        end
      end
      local _, js = run("validate", "--rules", "--json")
      assert.is_true(#cjson.decode(js).rules >= 50)
    end)

    it("returns 2 for a file that cannot be decoded and still checks the others", function()
      local bad = tmpname(".psdl")
      spit(bad, "not a psdl file")
      local code, out, err = run("validate", bad, CLEAN)
      assert.equal(cli.exit.bad_input, code)
      assert.matches("^psdl validate: ", err)
      assert.matches("street.psdl: ok", out, 1, true)
      assert.matches("1 unreadable", out, 1, true)
    end)
  end)

  describe("dump and undump", function()
    -- dump FILE to JSON, undump it, and return the JSON text and the rebuilt bytes
    local function round_trip(file)
      local json, out = tmpname(".json"), tmpname(".psdl")
      local code, stdout, err = run("dump", file, "--json", "-o", json)
      assert.equal(0, code, err)
      assert.equal("", stdout)
      local ucode, _, uerr = run("undump", json, "-o", out)
      code = ucode
      assert.equal(0, code, uerr)
      return slurp(json), slurp(out), uerr
    end

    for _, file in ipairs(fixtures()) do
      it("gives back the identical bytes of " .. file, function()
        local _, bytes = round_trip(file)
        assert.is_true(slurp(file) == bytes, "bytes differ")
      end)
    end

    it("writes to stdout by default, the same text as with -o", function()
      local file = FIXTURE_DIR .. "/grid_n3.psdl"
      local code, out = run("dump", file)
      assert.equal(0, code)
      local json = round_trip(file)
      assert.equal(json, out)
    end)

    it("marks the JSON as a psdlkit document and keeps empty lists as arrays", function()
      local code, out = run("dump", FIXTURE_DIR .. "/grid_n4_nopaths.psdl")
      assert.equal(0, code)
      assert.matches('^{\n  "format": "psdlkit%-document",\n  "version": 1,\n', out)
      assert.matches('"roads": []', out, 1, true)
      local t = cjson.decode(out)
      assert.equal(1, t.version)
      assert.equal(608, #t.vertices)
    end)

    it("rebuilds a document equal to the decoded one", function()
      local bytes = slurp(FIXTURE_DIR .. "/grid_n2.psdl")
      local _, json = run("dump", FIXTURE_DIR .. "/grid_n2.psdl")
      local doc = assert(docjson.undump(json))
      assert.same(assert(psdl.decode(bytes)), doc)
      assert.equal("integer", math.type(doc.rooms[1].perimeter[1].vertex))
      assert.equal(bytes, psdl.encode(doc))
    end)

    it("keeps empty attribute, lane and room lists, odd floats and non-UTF-8 names", function()
      local doc = assert(psdl.decode(slurp(FIXTURE_DIR .. "/grid_n2.psdl")))
      local function f32bits(bits) return (string.unpack("<f", string.pack("<I4", bits))) end
      doc.rooms[2].attributes = {}
      doc.roads[1].lanes_left = {}
      doc.roads[2].rooms = {}
      doc.heights[1] = -0.0
      doc.heights[2] = f32bits(0x7fc00001) -- a NaN with a payload
      doc.vertices[1] = { math.huge, -math.huge, f32bits(0x00000001) } -- inf and a denormal
      doc.vertices[2] = { 0.1, 1 / 3, 123456.789 }
      doc.textures[1] = "caf\xe9 \0 \"/\\"
      local file = write_doc(doc)
      local json, bytes = round_trip(file)
      assert.is_true(slurp(file) == bytes, "bytes differ")
      assert.matches('"lanes_left": []', json, 1, true)
      assert.matches('"attributes": []', json, 1, true)
      assert.matches('"rooms": []', json, 1, true)
      assert.matches('"Infinity", "-Infinity"', json, 1, true)
      assert.matches('"NaN(0x7fc00001)"', json, 1, true)
      assert.matches('"hex": "636166e9', json, 1, true)
    end)

    it("writes the file even when it has validation errors, with a note", function()
      local doc = assert(psdl.decode(slurp(CLEAN)))
      doc.rooms[3].perimeter[2].vertex = #doc.vertices + 1
      local file = write_doc(doc)
      local _, bytes, err = round_trip(file)
      assert.is_true(slurp(file) == bytes, "bytes differ")
      assert.matches("^psdl undump: note: .*: written with 1 validation error ", err)
    end)

    it("refuses JSON that is not a psdlkit document (exit 2)", function()
      local json, out = tmpname(".json"), tmpname(".psdl")
      spit(json, '{"magic": "PSD0"}')
      local code, _, err = run("undump", json, "-o", out)
      assert.equal(cli.exit.bad_input, code)
      assert.matches('^psdl undump: .*not a psdlkit document', err)
      spit(json, "{ not json")
      code, _, err = run("undump", json, "-o", out)
      assert.equal(2, code)
      assert.matches("not valid JSON", err, 1, true)
      assert.is_nil(io.open(out, "rb"))
    end)

    it("reports a document the encoder cannot write as bad input (exit 2)", function()
      local _, json_text = run("dump", FIXTURE_DIR .. "/grid_n2.psdl")
      local t = cjson.decode(json_text)
      t.rooms[1].perimeter[1].vertex = "five"
      local json, out = tmpname(".json"), tmpname(".psdl")
      spit(json, cjson.encode(t))
      local code, _, err = run("undump", json, "-o", out)
      assert.equal(2, code)
      assert.matches("^psdl undump: ", err)
      assert.matches("perimeter", err, 1, true)
    end)

    it("handles a Midnight Club PSD1 file without bounds and roads", function()
      local doc = assert(psdl.decode(slurp(FIXTURE_DIR .. "/grid_n2.psdl")))
      doc.magic, doc.bounds, doc.roads = "PSD1", nil, nil
      doc.materials = {}
      for i = 1, #doc.textures do doc.materials[i] = i % 7 end
      doc.textures[3] = false -- an empty slot has no material byte
      doc.materials[3] = 0
      local file = write_doc(doc)
      local json, bytes = round_trip(file)
      assert.is_true(slurp(file) == bytes, "bytes differ")
      assert.matches('"materials": [1, 2, 0, 4', json, 1, true)
      assert.not_matches('"bounds"', json, 1, true)
      local code, out = run("info", file)
      assert.equal(0, code)
      assert.matches("magic%s+PSD1", out)
      assert.matches("road records%s+0 %(no road section%)", out)
      assert.matches("bounds%s+none", out)
      local _, jout = run("info", "--json", file)
      local f = cjson.decode(jout).files[1]
      local stripped = assert(psdl.decode(slurp(file)))
      for _, room in ipairs(stripped.rooms) do room.attributes = {} end
      assert.equal((#bytes - #psdl.encode(stripped)) // 2, f.counts.attribute_words)
    end)

    it("returns 3 when the input cannot be read or the output cannot be written", function()
      local code, _, err = run("dump", "no/such/file.psdl")
      assert.equal(cli.exit.io, code)
      assert.matches("^psdl dump: no/such/file.psdl", err)
      code = run("dump", FIXTURE_DIR .. "/grid_n2.psdl", "-o", "/nonexistent-dir/x.json")
      assert.equal(3, code)
      code = run("undump", "no/such/file.json", "-o", "/tmp/never-written.psdl")
      assert.equal(3, code)
    end)

    it("returns 2 when dumping a file that is not PSDL", function()
      local bad = tmpname(".psdl")
      spit(bad, "PSD9")
      local code, out, err = run("dump", bad)
      assert.equal(2, code)
      assert.equal("", out)
      assert.matches("^psdl dump: ", err)
    end)
  end)

  describe("scripts/psdl", function()
    it("runs as a program and prints its help", function()
      local p = assert(io.popen("scripts/psdl --help 2>&1"))
      local out = p:read("a")
      local ok, how, code = p:close()
      assert.matches("Usage: psdl", out, 1, true)
      assert.is_true(ok)
      assert.equal("exit", how)
      assert.equal(0, code)
    end)
  end)
end)

describe("psdl command line, from a newcomer's test", function()
  it("refuses two outputs of one command that are the same file, however spelt", function()
    local out = tmpname(".svg")
    local dir, name = out:match("^(.*)/([^/]*)$")
    local code, _, err = run("build", "examples/street.lua", "-o", out, "--preview", dir .. "/./" .. name, "-q")
    assert.equal(1, code)
    assert.truthy(err:find("are the same file", 1, true), err)
    assert.is_nil(io.open(out, "rb"))
  end)

  it("takes a negative number after a long option as its value (western longitudes, --seed -1)", function()
    assert.same({ "osm", "x.osm", "--bbox=-75.162,39.976,-75.153,39.985", "--seed=-1", "-o", "y" },
      cli.join_negative_values({ "osm", "x.osm", "--bbox", "-75.162,39.976,-75.153,39.985", "--seed", "-1", "-o", "y" }))
    local out = tmpname(".psdl")
    local code, _, err = run("build", "examples/street.lua", "--seed", "-1", "-o", out, "-q")
    assert.equal(0, code, err)
  end)

  it("lists the problems of a city that does not validate, errors first, without library source positions", function()
    local script = tmpname(".lua")
    spit(script, "local city = psdl.city.new{ blocks = false }\n"
      .. "city:road(city:node(0, 0), city:node(200, 0))\n"
      .. "city:road(city:node(100, -100), city:node(100, 100))\n"
      .. "return city\n")
    local code, _, err = run("build", script, "-o", tmpname(".psdl"))
    assert.is_true(code == 1 or code == 2, err)
    assert.falsy(err:find("lua/psdl/", 1, true), err)
    -- either the crossing is refused naming the script lines, or the overlap is listed
    assert.truthy(err:find(script .. ":2", 1, true) or err:find("\n  error room_overlap", 1, true), err)
  end)
end)
