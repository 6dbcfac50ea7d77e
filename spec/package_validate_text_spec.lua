-- `psdl validate X.ar` on damaged text files and duplicate names (issue 11, tester's defects):
-- every .aimap / roam.aimap(_p) section (CF §6.2-§6.4), the .mmhudmap keys (CF §7.4), escaped
-- bytes and every bad .cinfo line (CF §6.1), and decode errors naming the entry decoded.
local psdl = require "psdl"
local pkg = require "psdl.package"
local pvalidate = require "psdl.package.validate"
local H = require "helper"

local build_dir = os.getenv("PSDL_BUILD_DIR") or "./build"

-- the downtown example's package files, built once
local files
local function package_files()
  if not files then
    local env = setmetatable({ psdl = psdl, arg = { [0] = "examples/downtown.lua" } }, { __index = _G })
    local city = assert(loadfile("examples/downtown.lua", "t", env))()
    files = pkg.generate((city:build()), { name = "downtown" })
  end
  return files
end

-- the package with one file's bytes changed by `edit` (and `extra` entries appended)
local function archive(name, edit, extra)
  local out, hit = {}, false
  for _, f in ipairs(package_files()) do
    if f[1] == name then
      hit = true
      out[#out + 1] = { f[1], edit(f[2]) }
    else
      out[#out + 1] = f
    end
  end
  assert(name == nil or hit, "no file " .. tostring(name))
  for _, e in ipairs(extra or {}) do out[#out + 1] = e end
  return assert(pkg.ar_bytes(out))
end

local function replace(from, to)
  return function(b)
    local i, j = b:find(from, 1, true)
    assert(i, "text not found: " .. from)
    return b:sub(1, i - 1) .. to .. b:sub(j + 1)
  end
end

-- the error problems as "rule|path|message" strings
local function errors(bytes)
  local problems, counts = pvalidate.check(bytes)
  local t = {}
  for _, p in ipairs(problems) do
    if p.severity == "error" then t[#t + 1] = p.rule .. "|" .. p.path .. "|" .. p.message end
  end
  assert.equal(counts.errors, #t)
  return t
end

local function has(list, pattern)
  for _, s in ipairs(list) do if s:find(pattern) then return true end end
  return false
end

describe("psdl validate: text files of a package", function()
  it("the generated package has 0 errors", function()
    assert.same({}, errors(archive(nil)))
  end)

  it("names missing, unknown and misspelt aimap sections and non-numeric values, with lines", function()
    -- cut after [Ambient Types/Density]: three sections missing
    local cut = errors(archive("city/downtown.aimap", function(b) return b:match("^(.-)%[GoodWeather") end))
    assert.is_true(has(cut, "^aimap_missing|city/downtown.aimap|no %[GoodWeatherPedName / BadWeatherPedName%]"))
    assert.is_true(has(cut, "^aimap_missing|city/downtown.aimap|no %[Traffic Lights%]"))
    assert.equal(2, #cut)
    -- [Ped Pool] has a game default and retail London comments it out (CF §6.3): a warning
    local problems = pvalidate.check(archive("city/downtown.aimap", function(b) return b:match("^(.-)%[Ped Pool") end))
    local pool
    for _, p in ipairs(problems) do
      if p.rule == "aimap_missing" and p.message:find("Ped Pool", 1, true) then pool = p end
    end
    assert.is_table(pool)
    assert.equal("warning", pool.severity)
    -- a renamed section: unknown at line 1, and the real one missing
    local ren = errors(archive("city/downtown.aimap", replace("[Speed Limit]", "[Speed Lxmit]")))
    assert.is_true(has(ren, "^aimap_section|city/downtown.aimap: line 1|unknown section %[Speed Lxmit%]"))
    assert.is_true(has(ren, "^aimap_missing|city/downtown.aimap|no %[Speed Limit%]"))
    -- a word where a number is expected
    local fast = errors(archive("city/downtown.aimap", replace("[Speed Limit]\r\n15.00", "[Speed Limit]\r\nfast")))
    assert.same({ 'aimap_value|city/downtown.aimap: line 2|[Speed Limit]: value 1 "fast" is not a number (a number expected)' }, fast)
    -- a count larger than the rows, a short roster row
    local rows = errors(archive("city/downtown.aimap", replace("[Ambient Types/Density]\r\n4", "[Ambient Types/Density]\r\n6")))
    assert.is_true(has(rows, "^aimap_rows|city/downtown.aimap: line 8|%[Ambient Types/Density%]: count 6, but 4 rows"))
    local short = errors(archive("city/downtown.aimap", replace("va_bus_f 1.00 0", "va_bus_f")))
    assert.is_true(has(short, "^aimap_row|city/downtown.aimap: line 12|.*3 values expected, 1 found"))
  end)

  it("checks roam.aimap and roam.aimap_p row formats and counts", function()
    local cnt = errors(archive("race/downtown/roam.aimap", replace("[Police]\r\n", "[Police]\r\nmany\r\n")))
    assert.is_true(has(cnt, '^aimap_count|race/downtown/roam.aimap: line 8|%[Police%]: the count "many"'))
    local row = errors(archive("race/downtown/roam.aimap_p", replace(" 90.0 0 15 ", " 90.0 zero 15 ")))
    assert.is_true(has(row, '^aimap_row|race/downtown/roam.aimap_p: line 9|%[Police%] row 1: value 6 "zero" is not an integer'))
    local gone = errors(archive("race/downtown/roam.aimap", replace("[Hookmen]\r\n0\r\n", "")))
    assert.same({ "aimap_missing|race/downtown/roam.aimap|no [Hookmen] section (CF §6.3/§6.4)" }, gone)
    local flag = errors(archive("race/downtown/roam.aimap", replace("[AmbientLaneChanges]\r\n1", "[AmbientLaneChanges]\r\n7")))
    assert.is_true(has(flag, '^aimap_value|race/downtown/roam.aimap: line 2|.*0 or 1 expected'))
  end)

  it("checks each mmhudmap key's value count and numbers", function()
    local e = errors(archive("tune/downtown.mmhudmap", function(b)
      return replace("Size 0.210000 0.250000", "Size 0.21")(replace("ZoomOutDist 1195.000000", "ZoomOutDist banana")(b))
    end))
    assert.same({ "mmhudmap_value|tune/downtown.mmhudmap: line 3|Size takes 2 numbers, 1 found (CF §7.4)",
                  'mmhudmap_value|tune/downtown.mmhudmap: line 8|ZoomOutDist: "banana" is not a number' }, e)
    local open = errors(archive("tune/downtown.mmhudmap", replace("}\r\n", "")))
    assert.is_true(has(open, "^mmhudmap_block|tune/downtown.mmhudmap|the mmHudMap block has no closing"))
    local key = errors(archive("tune/downtown.mmhudmap", replace("\tZoomIn 0", "\tZoomInn 0")))
    assert.is_true(has(key, '^mmhudmap_key|tune/downtown.mmhudmap: line 5|unknown key "ZoomInn"'))
  end)

  it("escapes bad .cinfo bytes and reports every bad line, also through the CLI", function()
    local bytes = archive("tune/downtown.cinfo", function(b)
      return replace("BlitzCount", "Bl\1itzCount")(replace("MapName=", "Map\x9eName=")(b))
    end)
    local e = errors(bytes)
    assert.same({ 'cinfo_line|tune/downtown.cinfo: line 2|"Map\\x9eName=downtown" where MapName=... is expected '
                    .. "(CF §6.1: nine lines in a fixed order)",
                  'cinfo_line|tune/downtown.cinfo: line 4|"Bl\\x01itzCount=0" where BlitzCount=... is expected '
                    .. "(CF §6.1: nine lines in a fixed order)" }, e)
    local title = errors(archive("tune/downtown.cinfo", replace("LocalizedName=Downtown", "LocalizedName=Down\x9etown")))
    assert.is_true(has(title, '^cinfo_bytes|tune/downtown.cinfo: line 1|.*"Down\\x9etown"'))
    -- the CLI prints no raw byte
    local tmp = os.tmpname()
    local path = tmp .. ".ar"
    assert(psdl.write_file(path, bytes))
    local p = assert(io.popen("PSDL_BUILD_DIR='" .. build_dir .. "' lua5.4 scripts/psdl validate '" .. path .. "' 2>&1"))
    local out = p:read("a")
    p:close()
    os.remove(path)
    os.remove(tmp)
    assert.is_nil(out:find("\x9e", 1, true))
    assert.is_nil(out:find("\1", 1, true))
    assert.truthy(out:find("Map\\x9eName=downtown", 1, true))
    assert.truthy(out:find("FAILED: 2 errors", 1, true))
    assert.equal("caf\xc3\xa9 \\x9e \\xc3( \\x7f", pvalidate.escape("caf\xc3\xa9 \x9e \xc3( \x7f"))
  end)

  it("sorts problems by path with numbers in numeric order (intersections[2] before [12])", function()
    local problems = {}
    for _, j in ipairs { 12, 13, 18, 1, 3, 4, 2 } do
      problems[#problems + 1] = { severity = "warning", rule = "bai_dead_end",
        path = "city/x.bai: intersections[" .. j .. "].roads", message = "a single road ends here" }
    end
    problems[#problems + 1] = { severity = "error", rule = "x", path = "city/x.bai: roads[10]", message = "m" }
    local sorted, counts = pvalidate.finish(problems)
    local order = {}
    for _, p in ipairs(sorted) do order[#order + 1] = p.path:match("%[(%d+)%]") end
    assert.same({ "10", "1", "2", "3", "4", "12", "13", "18" }, order)
    assert.same({ errors = 1, warnings = 7 }, counts)
  end)

  it("names the entry whose bytes are decoded when names differ in case", function()
    -- a 1-byte case variant after the real PSDL: the real one is checked, the variant decoded
    local after = errors(archive(nil, nil, { { "CITY/Downtown.PSDL", "x" } }))
    assert.is_true(has(after, "^zip_duplicate|CITY/Downtown.PSDL|"))
    assert.is_true(has(after, "^decode|CITY/Downtown.PSDL|psdl: truncated"))
    assert.is_false(has(after, "^decode|city/downtown.psdl|"))
    -- the variant first in the directory: it is the one checked, under its own name; the real
    -- one decodes without error
    local out = {}
    out[1] = { "CITY/Downtown.PSDL", "x" }
    for _, f in ipairs(package_files()) do out[#out + 1] = f end
    local before = errors(assert(pkg.ar_bytes(out)))
    assert.is_true(has(before, "^zip_duplicate|city/downtown.psdl|.*only one of CITY/Downtown.PSDL and city/downtown.psdl"))
    assert.is_true(has(before, "^decode|CITY/Downtown.PSDL|psdl: truncated"))
    assert.is_false(has(before, "^decode|city/downtown.psdl|"))
    -- an exact duplicate: not unpacked, nothing decoded under either name
    -- (libzip refuses to write one: the variant's name bytes are patched, same length)
    local dup = archive(nil, nil, { { "CITY/Downtown.PSDL", "x" } })
    local patched, n = dup:gsub("CITY/Downtown%.PSDL", "city/downtown.psdl")
    assert.equal(2, n)
    local same = errors(patched)
    assert.is_true(has(same, "^zip_duplicate|city/downtown.psdl|"))
    assert.is_false(has(same, "^decode|"))
  end)
end)
