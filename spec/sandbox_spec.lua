-- Specs for running city scripts from strangers (`psdl build`, lua/psdl/sandbox.lua): the
-- sandbox, --trust, --timeout, --max-memory, and the examples building under `psdl build`
-- from any folder without writing anything of their own.

local lfs = require "lfs"
local psdl = require "psdl"
local H = require "helper"
local run, files_in, q = H.cli, H.files_in, H.q

local ROOT = assert(psdl.real_path("."))
local BUILD = os.getenv("PSDL_BUILD_DIR") or "build"
if BUILD:sub(1, 1) ~= "/" then BUILD = ROOT .. "/" .. BUILD end

local function write(path, text) H.write_bytes(path, text) end
local function exists(path) return lfs.attributes(path) ~= nil end

-- A small valid city, then `extra` lines before `return city`.
local function city_script(extra)
  return table.concat({
    "local city = psdl.city.new{ blocks = false }",
    "local a, b = city:node(0, 0), city:node(120, 0)",
    "city:road(a, b)",
    extra or "",
    "return city",
  }, "\n")
end

describe("psdl build sandbox", function()
  it("builds a plain city script in the sandbox", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", city_script())
    local code, out, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
    assert.equal(0, code, err)
    assert.matches("city.psdl: ", out, 1, true)
    assert.is_truthy(psdl.read(dir .. "/city.psdl"))
  end)

  it("refuses os.execute, io.popen, writing files and os.exit, naming the script line and function", function()
    local dir = H.tmpdir(finally)
    local cases = {
      { 'os.execute("id > ' .. dir .. '/pwned")', "os.execute" },
      { 'io.popen("id")', "io.popen" },
      { 'local f = assert(io.open("' .. dir .. '/pwned", "w"))', "io.open for writing" },
      { 'assert(psdl.write_file("' .. dir .. '/pwned", "x"))', "writing files is not allowed" },
      { 'os.exit(7)', "os.exit" },
      { 'os.remove("' .. dir .. '/city.lua")', "os.remove" },
      { 'require("os")', "require \"os\"" },
      { 'load(string.dump(function() end))', "string.dump" },
      { 'assert(load("\27Lua", "x", "b"))', "binary chunks" },
    }
    for _, c in ipairs(cases) do
      write(dir .. "/city.lua", city_script(c[1]))
      local code, out, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
      assert.equal(2, code, c[1] .. ": " .. err)
      assert.equal("", out)
      assert.matches(dir .. "/city.lua:4:", err, 1, true)
      assert.matches(c[2], err, 1, true)
      assert.is_false(exists(dir .. "/pwned"), c[1])
      assert.is_false(exists(dir .. "/city.psdl"), c[1])
      assert.is_true(exists(dir .. "/city.lua"))
    end
  end)

  it("reads files under the script's folder only, and requires modules from it", function()
    local dir = H.tmpdir(finally)
    assert(lfs.mkdir(dir .. "/data"))
    write(dir .. "/data/width.txt", "14\n")
    write(dir .. "/streets.lua", "local M = {}\nfunction M.add(city, a, b) return city:road(a, b) end\nreturn M\n")
    write(dir .. "/city.lua", table.concat({
      "local streets = require 'streets'",
      "local w = tonumber(io.lines(SCRIPT_DIR .. '/data/width.txt')())",
      "local city = psdl.city.new{ blocks = false }",
      "streets.add(city, city:node(0, 0), city:node(w * 10, 0))",
      "return city",
    }, "\n"))
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
    assert.equal(0, code, err)
    -- outside the folder (also through a link and "..") is refused, for the library too
    local outside = H.tmpname(".txt")
    finally(function() os.remove(outside) end)
    write(outside, "secret")
    assert(lfs.link(outside, dir .. "/data/link.txt", true))
    for _, expr in ipairs {
      "io.open(" .. string.format("%q", outside) .. ")",
      "io.open(SCRIPT_DIR .. '/data/link.txt')",
      "io.open(SCRIPT_DIR .. '/data/../../" .. outside:match("[^/]*$") .. "')",
      "psdl.read(" .. string.format("%q", outside) .. ")",
    } do
      write(dir .. "/city.lua", city_script("local f, e = " .. expr .. "\nassert(f == nil, 'read')\nerror(e)"))
      local c, _, e = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
      assert.equal(2, c, expr)
      assert.matches("outside the script's folder", e, 1, true)
    end
    -- a module that is not in the folder
    write(dir .. "/city.lua", city_script("require 'lfs'"))
    local c, _, e = run("build", dir .. "/city.lua", "-o", dir .. "/x.psdl")
    assert.equal(2, c)
    assert.matches("city.lua:4: require \"lfs\"", e, 1, true)
  end)

  it("keeps the library read-only and hides the library's metatables", function()
    local dir = H.tmpdir(finally)
    for _, line in ipairs {
      "psdl.write = function() end",
      "psdl.city.new = nil",
      "getmetatable('').__index.rep = nil",
      "rawset(psdl, 'write', print)",
    } do
      write(dir .. "/city.lua", city_script(line))
      local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
      assert.equal(2, code, line)
      assert.matches("city.lua:4:", err, 1, true)
    end
    assert.equal("xx", string.rep("x", 2))
    assert.is_function(psdl.write)
  end)

  it("gives full access with --trust, where os.exit is an error instead of the end of psdl build", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", city_script("local f = assert(io.open(SCRIPT_DIR .. '/made', 'w')); f:write('x'); f:close()"))
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--trust")
    assert.equal(0, code, err)
    assert.is_true(exists(dir .. "/made"))
    write(dir .. "/city.lua", city_script("os.exit(7)"))
    code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/x.psdl", "--trust")
    assert.equal(2, code)
    assert.matches("city.lua:4: the script called os.exit(7)", err, 1, true)
    assert.is_false(exists(dir .. "/x.psdl"))
  end)

  -- `psdl build` of a city script running `body` (line 4) with --timeout 0.3 (and `trust`):
  -- stopped within 5 s, naming the line (`where`, default "city.lua:4: "), writing nothing
  local function times_out(dir, body, trust, where)
    write(dir .. "/city.lua", city_script(body))
    local t0 = os.clock()
    local args = { "build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--timeout", "0.3" }
    if trust then args[#args + 1] = "--trust" end
    local code, _, err = run(table.unpack(args))
    assert.equal(2, code, body)
    assert.matches((where or "city.lua:4: ") .. "the script ran longer than --timeout 0.3 s", err, 1, true)
    assert.is_true(os.clock() - t0 < 5)
    assert.is_false(exists(dir .. "/city.psdl"))
  end

  it("stops an endless script at --timeout, naming its line, even through pcall and coroutines", function()
    local dir = H.tmpdir(finally)
    for _, body in ipairs {
      "while true do end",
      "while true do pcall(function() while true do end end) end",
      "coroutine.wrap(function() while true do local ok = coroutine.resume(coroutine.create(function() while true do end end)) end end)()",
    } do
      times_out(dir, body)
    end
  end)

  it("stops a --trust script's endless coroutine at --timeout too (the real coroutine library)", function()
    -- before: a trusted script's coroutines were the real library's, never hooked: the loop
    -- ran on past any --timeout
    local dir = H.tmpdir(finally)
    write(dir .. "/spin.lua", "return function() while true do end end\n")
    for _, body in ipairs {
      "coroutine.wrap(function() while true do end end)()",
      "local ok, e = coroutine.resume(coroutine.create(function() while true do end end))",
    } do
      times_out(dir, body, true)
    end
    -- a module loaded with the real require, its loop in a coroutine: the module is no chunk
    -- of the box, so the script line that resumed it is named (spec/trust_lines_spec.lua)
    times_out(dir, "package.path = SCRIPT_DIR .. '/?.lua;' .. package.path; "
      .. "coroutine.resume(coroutine.create(require('spin')))", true)
    -- the real functions are back afterwards
    for _, f in ipairs { coroutine.create, coroutine.resume, coroutine.wrap } do
      assert.equal("C", debug.getinfo(f, "S").what)
    end
    local co = coroutine.wrap(function() coroutine.yield(1); return 2 end)
    assert.equal(1, co())
    assert.equal(2, co())
  end)

  it("names the line of a library call the script tail-called (`return psdl.f(x)`), saying it is approximate", function()
    -- before: "city.lua: bad argument #1 to 'encode' (...)": the tail call leaves no frame of
    -- the script, so no line
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", "local doc = { magic = 'PSD0' }\nlocal n = 1\nreturn psdl.encode(doc)\n")
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
    assert.equal(2, code)
    assert.matches("city.lua:3: bad argument #1 to 'encode' (vertices: table expected, got nil) (about this line: the "
      .. "error came from a call made with `return f(...)`, a tail call that leaves no line", err, 1, true)
    -- an error with a frame of the script keeps its exact line and no such note
    write(dir .. "/city.lua", "local doc = { magic = 'PSD0' }\nlocal b = psdl.encode(doc)\nreturn b\n")
    code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
    assert.equal(2, code)
    assert.matches("city.lua:2: bad argument #1 to 'encode'", err, 1, true)
    assert.not_matches("about this line", err, 1, true)
  end)

  it("stops a script at --max-memory, naming its line, and writes nothing", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", city_script("local t = {}\nfor i = 1, 1e8 do t[i] = {i} end"))
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--max-memory", "40")
    assert.equal(2, code)
    assert.matches("city.lua:5: the script used more than --max-memory 40 MB", err, 1, true)
    assert.is_false(exists(dir .. "/city.psdl"))
    -- one huge allocation, caught by the script: still stopped
    write(dir .. "/city.lua", city_script("local ok = pcall(string.rep, 'x', 200 * 1024 * 1024)"))
    code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--max-memory", "40")
    assert.equal(2, code)
    assert.matches("the script used more than --max-memory 40 MB", err, 1, true)
    -- height grids are C arrays in Lua memory: they count too (2048 x 2048 doubles: 32 MB each)
    write(dir .. "/city.lua", city_script("local keep = {}\nfor i = 1, 8 do keep[i] = psdl.terrain.new_nhtg{ width = 2047 } end"))
    code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--max-memory", "40")
    assert.equal(2, code)
    assert.matches("the script used more than --max-memory 40 MB", err, 1, true)
    assert.is_false(exists(dir .. "/city.psdl"))
    -- the limit is lifted afterwards
    assert.equal(100 * 1024 * 1024, #string.rep("x", 100 * 1024 * 1024))
  end)

  it("calls the host's poll while a script runs, outside the sandbox's rules, and stops the script when it says so", function()
    local sandbox = require "psdl.sandbox"
    local dir = H.tmpdir(finally)
    local outside = dir .. "/../outside-" .. tostring(os.time()) .. ".txt"
    finally(function() os.remove(outside) end)
    write(dir .. "/city.lua", "while true do pcall(function() while true do end end) end\n")
    local calls, opened = 0, nil
    local box = sandbox.new { script = dir .. "/city.lua", timeout = 60, psdl = psdl, poll = function()
      calls = calls + 1
      if calls == 3 then
        -- the host (e.g. psdl view's server) may write and read any file, and allocate freely
        assert(psdl.write_file(outside, string.rep("x", 1000)))
        local f = assert(io.open(outside, "rb")); opened = #f:read("a"); f:close()
      end
      return calls >= 5
    end }
    local chunk = assert(box:loadfile())
    local t0 = os.clock()
    local ok, msg, kind = box:run(chunk)
    assert.is_false(ok)
    assert.equal("superseded", kind)
    assert.matches("city.lua:1: the run was superseded", msg, 1, true)
    assert.equal(5, calls)
    assert.equal(1000, opened)
    assert.is_true(os.clock() - t0 < 5)
    -- the script itself still may not write
    write(dir .. "/city.lua", "assert(psdl.write_file(" .. string.format("%q", outside) .. ", 'y'))\n")
    box = sandbox.new { script = dir .. "/city.lua", psdl = psdl, poll = function() return false end }
    ok, msg = box:run(assert(box:loadfile()))
    assert.is_false(ok)
    assert.matches("writing files is not allowed", msg, 1, true)
    local f = assert(io.open(outside, "rb"))
    assert.equal(string.rep("x", 1000), f:read("a"))
    f:close()
  end)

  it("checks --timeout and --max-memory", function()
    assert.equal(1, (run("build", "x.lua", "--timeout", "soon")))
    assert.equal(1, (run("build", "x.lua", "--max-memory", "-5")))
  end)
end)

describe("examples under psdl build", function()
  local names = {}
  for name in lfs.dir("examples") do
    if name:match("%.lua$") then names[#names + 1] = name end
  end
  table.sort(names)

  it("finds all twelve examples", function()
    assert.is_true(#names >= 12)
  end)

  for _, name in ipairs(names) do
    it(name .. " builds from another folder and writes nothing but -o", function()
      local dir = H.tmpdir(finally)
      local cmd = string.format("cd %s && PSDL_BUILD_DIR=%s %s/scripts/psdl build %s/examples/%s -o out.psdl -q 2>&1",
        q(dir), q(BUILD), q(ROOT), q(ROOT), name)
      local p = assert(io.popen(cmd))
      local log = p:read("a")
      assert.is_true(p:close(), log)
      assert.same({ "out.psdl" }, files_in(dir))
      local doc = assert(psdl.read(dir .. "/out.psdl"))
      local _, _, counts = psdl.validate(doc)
      assert.equal(0, counts.errors)
    end)
  end

  it("reskin.lua runs as a program from another folder", function()
    local dir = H.tmpdir(finally)
    local cmd = string.format("cd %s && PSDL_BUILD_DIR=%s lua5.4 %s/examples/reskin.lua %s/spec/fixtures/grid_n3.psdl %s 2>&1",
      q(dir), q(BUILD), q(ROOT), q(ROOT), q(dir))
    local p = assert(io.popen(cmd))
    local log = p:read("a")
    p:close()
    assert.is_true(exists(dir .. "/grid_n3_reskinned.psdl"), log)
    assert.is_true(exists(dir .. "/grid_n3_reskinned.glb"), log)
  end)
end)

describe("psdl build sandbox, from a newcomer's test", function()
  it("refuses a pattern match that --timeout could not stop (it runs in C), naming the line", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", city_script('local x = string.rep("a", 30000):find(".-.-.-.-.-.-b")'))
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--timeout", "5")
    assert.equal(2, code)
    assert.matches("city.lua:4: string.find: a pattern with 6 repetitions", err, 1, true)
    -- ordinary patterns run, methods and library functions alike
    local ok = require("psdl.sandbox").pattern_cost_ok(string.rep("x", 100000), "^(%S+)%s+(.*)$")
    assert.is_true(ok)
    assert.is_true((require("psdl.sandbox").pattern_cost_ok(string.rep("x", 100000), "[a-z]-[%w-]*", false)))
  end)

  it("reads a relative file name under the script's folder and raises on io.open for writing", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/width.txt", "14\n")
    write(dir .. "/city.lua", city_script('local w = assert(io.open("width.txt")):read("l")\nassert(w == "14")'))
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "-q")
    assert.equal(0, code, err)
    write(dir .. "/city.lua", city_script('local f = io.open("made.txt", "w")'))
    code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
    assert.equal(2, code)
    assert.matches("city.lua:4: made.txt: io.open for writing", err, 1, true)
    assert.is_false(exists(dir .. "/made.txt"))
  end)
end)

describe("psdl.control.script_line (the limit hook's stack walk)", function()
  local control = require "psdl.control"

  it("names the innermost frame of a chunk in the table, from a level outwards", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/chunk.lua", "local f = ...\nlocal r = f()\nreturn r\n") -- (no tail call: its frame stays)
    local chunk = assert(loadfile(dir .. "/chunk.lua"))
    local chunks = { ["@" .. dir .. "/chunk.lua"] = "chunk.lua" }
    -- level 1 is the caller of script_line (the function below), the chunk one further out
    assert.equal("chunk.lua:2", chunk(function() return control.script_line(chunks, 1) end))
    assert.equal("chunk.lua:2", chunk(function() return control.script_line(chunks, 0) end))
    -- none of the chunks on the stack, or only from a level beyond them
    assert.is_nil(chunk(function() return control.script_line({ ["@other.lua"] = "other.lua" }, 1) end))
    assert.is_nil(chunk(function() return control.script_line(chunks, 50) end))
    -- another thread's stack
    local co = coroutine.create(function() chunk(function() coroutine.yield() end) end)
    assert(coroutine.resume(co))
    assert.equal("chunk.lua:2", control.script_line(chunks, 0, co))
    -- keys and values that are not strings are passed over
    assert.equal("chunk.lua:2", chunk(function()
      return control.script_line({ [1] = "x", [true] = "y", ["@" .. dir .. "/chunk.lua"] = "chunk.lua" }, 1)
    end))
    assert.is_nil(chunk(function() return control.script_line({ ["@" .. dir .. "/chunk.lua"] = 5 }, 1) end))
  end)

  it("raises naming the argument for hostile arguments", function()
    local cases = {
      { function() control.script_line(nil, 1) end, "#1" },
      { function() control.script_line({}, -1) end, "#2" },
      { function() control.script_line({}, 1.5) end, "#2" },
      { function() control.script_line({}, math.maxinteger) end, "#2" },
      { function() control.script_line({}, "x") end, "#2" },
      { function() control.script_line({}, 1, {}) end, "#3" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      assert.matches("bad argument " .. c[2], err, 1, true)
    end
  end)
end)

describe("psdl.control.heap_reserve", function()
  local control = require "psdl.control"

  it("raises naming the argument for sizes out of range, and reserves at most once", function()
    for _, bad in ipairs { 0, 15, 513, -1, 1.5, "x", math.maxinteger } do
      local ok, err = pcall(control.heap_reserve, bad)
      assert.is_false(ok, tostring(bad))
      assert.matches("bad argument #1", err, 1, true)
    end
    -- a test runner's heap is not a fresh process's: whatever the first call gave, a
    -- second one changes nothing
    assert.is_boolean(control.heap_reserve(16))
    assert.is_false(control.heap_reserve(16))
  end)
end)

describe("SCRIPT_DIR and reading files", function()
  it("is absolute, so that a script reads its data from any folder, sandboxed and trusted", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/data.txt", "120\n")
    write(dir .. "/city.lua", city_script(table.concat({
      "assert(SCRIPT_DIR:sub(1, 1) == '/', 'SCRIPT_DIR ' .. SCRIPT_DIR)",
      "assert(io.open(SCRIPT_DIR .. '/data.txt')):close()",
    }, "\n")))
    -- the script named relative to the current folder (the spec runs from the repository)
    local rel = string.rep("../", select(2, ROOT:gsub("/", ""))) .. dir:sub(2)
    for _, path in ipairs { rel .. "/city.lua", dir .. "/city.lua" } do
      for _, trust in ipairs { false, true } do
        local args = { "build", path, "-o", dir .. "/city.psdl" }
        if trust then table.insert(args, 2, "--trust") end
        local code, _, err = run(table.unpack(args))
        assert.equal(0, code, table.concat(args, " ") .. ": " .. err)
      end
    end
    -- sandboxed, a relative name is in the script's folder
    write(dir .. "/city.lua", city_script("assert(io.open('data.txt')):close()"))
    assert.equal(0, (run("build", rel .. "/city.lua", "-o", dir .. "/city.psdl")))
  end)

  it("stops a script that opens a file outside its folder at its line, naming the absolute folder", function()
    local dir = H.tmpdir(finally)
    local outside = H.tmpname(".txt")
    finally(function() os.remove(outside) end)
    write(outside, "secret")
    local rel = string.rep("../", select(2, ROOT:gsub("/", ""))) .. dir:sub(2)
    -- the script goes on after the call only if io.open returned
    write(dir .. "/city.lua", city_script("local f = io.open(" .. q(outside) .. ")\nerror('went on')"))
    local code, _, err = run("build", rel .. "/city.lua", "-o", dir .. "/city.psdl")
    assert.equal(2, code)
    assert.matches("city.lua:4: " .. outside .. ": outside the script's folder " .. psdl.real_path(dir) .. ":", err, 1, true)
    assert.not_matches("went on", err, 1, true)
    assert.is_nil(lfs.attributes(dir .. "/city.psdl"))
    -- a missing file in the folder is nil, message, as in plain Lua
    write(dir .. "/city.lua", city_script("assert(io.open('missing.txt') == nil, 'opened')"))
    assert.equal(0, (run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")))
  end)
end)

describe("psdl.control.tick", function()
  local control = require "psdl.control"
  if not control.tick then
    it("is absent without an interval timer (the sandbox uses a count hook)", function()
      assert.is_nil(control.tick_thread)
    end)
    return
  end

  -- Processor time spent in a Lua loop (the tick needs Lua code running to hook).
  local function spin(seconds)
    local t0, x = os.clock(), 0
    while os.clock() - t0 < seconds do x = x + 1 end
    return x
  end

  it("calls its check from a one-shot hook about every 10 ms of processor time, until stopped", function()
    local n = 0
    local prev = control.tick(function() n = n + 1 end)
    assert.is_nil(prev)
    spin(0.2)
    local fn = control.tick(nil)
    assert.is_function(fn)
    assert.is_true(n >= 5 and n <= 40, "ticks: " .. n)
    local after = n
    spin(0.05)
    assert.equal(after, n) -- stopped
    assert.is_nil(debug.gethook()) -- no hook left behind
  end)

  it("swaps the check for a nested run and gives the outer one back", function()
    local outer, inner = 0, 0
    local function f_outer() outer = outer + 1 end
    assert.is_nil(control.tick(f_outer))
    local prev_fn, prev_thread = control.tick(function() inner = inner + 1 end)
    assert.equal(f_outer, prev_fn)
    assert.equal(coroutine.running(), prev_thread)
    spin(0.1)
    control.tick(prev_fn, prev_thread)
    local seen = inner
    spin(0.1)
    control.tick(nil)
    assert.is_true(seen > 0 and outer > 0)
    assert.equal(seen, inner)
  end)

  it("hooks the thread it is told to, and a stop raised by the check ends that thread", function()
    local stop = setmetatable({}, { __tostring = function() return "stop" end })
    local co = coroutine.create(function() while true do end end)
    assert.is_nil(control.tick(function() error(stop, 0) end))
    local main = control.tick_thread(co)
    assert.equal(coroutine.running(), main)
    local ok, err = coroutine.resume(co)
    control.tick_thread(main)
    control.tick(nil)
    assert.is_false(ok)
    assert.equal(stop, err)
    assert.equal("dead", coroutine.status(co))
  end)

  it("raises naming the argument for hostile arguments", function()
    for _, c in ipairs{
      { function() control.tick(42) end, "#1" },
      { function() control.tick(function() end, {}) end, "#2" },
      { function() control.tick_thread("main") end, "#1" },
      { function() control.tick_thread() end, "#1" },
    } do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      assert.matches("bad argument " .. c[2], err, 1, true)
    end
    assert.is_nil(control.tick_thread(coroutine.create(print))) -- no tick running: nothing
  end)
end)
