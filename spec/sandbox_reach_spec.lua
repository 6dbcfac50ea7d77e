-- What a sandboxed city script can reach (lua/psdl/sandbox.lua, docs/city.md "Sandbox";
-- newcomer finding 0 of 2026-12-02: `require "psdl.sandbox"` gave a trusted box whose env
-- held the host's os, `require "psdl.core"` gave the write switch and the memory limit).
--
-- The audit walks every table the script can reach: its globals, the library behind each
-- read-only view, every module of psdl.sandbox.MODULES, the objects library calls hand back
-- (a city, its document, a builder) and what every library function returns when called
-- with no argument, with their metatables, recursively; none may be the host's os, io,
-- debug, package, load, require, string/table/math tables, a file handle, psdl.core,
-- psdl.control or psdl.sandbox. And the library files the sandbox can run must not call
-- what the sandbox's switches do not cover (os.execute, io.popen, os.remove, lfs.mkdir, ...)
-- nor keep io.open from before the sandbox guards it.

local lfs = require "lfs"
local psdl = require "psdl"
local sandbox = require "psdl.sandbox"
local core = require "psdl.core"
local control = require "psdl.control"
local H = require "helper"
local run = H.cli

local function write(path, text) H.write_bytes(path, text) end
local function exists(path) return lfs.attributes(path) ~= nil end

-- The switches psdl.control holds (none of them may be in psdl.core).
local CONTROL = { "deny_writes", "memory_limit", "memory_stats", "memory_exceeded", "tick", "tick_thread",
  "script_line", "default_interrupt", "heap_reserve", "heap_keep", "heap_allocator", "heap_allocator_counts" }

-- Every value a sandboxed script must never hold, with its name.
local function forbidden_values()
  local bad = {}
  local function ban(v, name)
    if (type(v) == "table" or type(v) == "function" or type(v) == "userdata") and bad[v] == nil then bad[v] = name end
  end
  local given = { ["os.time"] = true, ["os.clock"] = true, ["os.date"] = true } -- the sandbox's os
  for _, lib in ipairs { "os", "io", "debug", "package" } do
    ban(_G[lib], lib)
    for k, v in pairs(_G[lib]) do
      if not given[lib .. "." .. tostring(k)] then ban(v, lib .. "." .. tostring(k)) end
    end
  end
  for k, v in pairs(package.loaded) do
    if type(k) == "string" and not k:match("^psdl") and type(v) == "table" then ban(v, "package.loaded." .. k) end
  end
  local file_mt = debug.getmetatable(io.stdout)
  ban(file_mt, "a file handle's metatable")
  for k, v in pairs(file_mt.__index) do ban(v, "file:" .. k) end
  for _, name in ipairs { "require", "load", "loadfile", "dofile", "collectgarbage", "getmetatable",
    "setmetatable", "_G" } do
    ban(_G[name], name)
  end
  ban(string.dump, "string.dump")
  ban(getmetatable(""), "the string metatable")
  ban(core, "psdl.core")
  ban(control, "psdl.control")
  for _, k in ipairs(CONTROL) do ban(control[k], "psdl.control." .. k) end
  ban(sandbox, "psdl.sandbox")
  for k, v in pairs(sandbox) do ban(v, "psdl.sandbox." .. k) end
  for _, name in ipairs { "psdl.cli", "psdl.cli.common", "psdl.cli.build", "psdl.cli.source", "psdl.view",
    "psdl.watch", "psdl.serve", "psdl.package" } do
    ban(require(name), name)
  end
  return bad
end

-- Walk v (tables by next, their metatables, userdata's metatables) and list every path to a
-- forbidden value. `real` maps a library view to the table it shows.
local function walk(v, path, bad, real, seen, hits)
  if real and real[v] then v = real[v] end
  if bad[v] then
    hits[#hits + 1] = path .. " is " .. bad[v]
    return
  end
  local t = type(v)
  if t ~= "table" and t ~= "userdata" then return end
  if seen[v] then return end
  seen[v] = true
  if t == "table" then
    for k, x in next, v do
      walk(k, path .. "[key " .. tostring(k) .. "]", bad, real, seen, hits)
      walk(x, path .. "." .. tostring(k), bad, real, seen, hits)
    end
  end
  local mt = debug.getmetatable(v)
  if mt then walk(mt, path .. "<metatable>", bad, real, seen, hits) end
end

-- A sandbox box for a script in dir (the script's text), and the result of running it.
local function run_box(dir, text, opts)
  write(dir .. "/city.lua", text)
  local o = { script = dir .. "/city.lua", timeout = 60 }
  for k, v in pairs(opts or {}) do o[k] = v end
  local box = sandbox.new(o)
  local fn = assert(box:loadfile())
  return box, box:run(fn)
end

-- The psdl.* module names under lua/psdl/.
local function library_modules()
  local names = {}
  local function scan(dir, prefix)
    for f in lfs.dir(dir) do
      local full = dir .. "/" .. f
      if f:sub(1, 1) ~= "." then
        if lfs.attributes(full, "mode") == "directory" then
          scan(full, prefix .. "." .. f)
        elseif f:match("%.lua$") then
          names[#names + 1] = f == "init.lua" and prefix or prefix .. "." .. f:sub(1, -5)
        end
      end
    end
  end
  scan("lua/psdl", "psdl")
  table.sort(names)
  return names
end

describe("sandbox reachability", function()
  local bad = forbidden_values()

  it("psdl.core holds none of the process's switches; psdl.control holds them all", function()
    for _, k in ipairs(CONTROL) do
      assert.is_nil(rawget(core, k), "psdl.core." .. k)
      if k ~= "tick" and k ~= "tick_thread" or control.tick then
        assert.is_function(control[k], "psdl.control." .. k)
      end
    end
  end)

  it("the script's require gives the public modules only (psdl.sandbox.MODULES) as views, refusing the rest",
    function()
      local dir = H.tmpdir(finally)
      local allowed = {}
      for _, name in ipairs(sandbox.MODULES) do allowed[name] = true end
      assert.is_true(allowed["psdl.city"] and allowed["psdl"] and not allowed["psdl.core"])
      local names = library_modules()
      names[#names + 1] = "psdl.core" -- (the C module)
      local lines = { "local got = {}" }
      for _, name in ipairs(names) do
        lines[#lines + 1] = string.format("got[%q] = select(2, pcall(require, %q))", name, name)
      end
      lines[#lines + 1] = "return got"
      local box, ok, got = run_box(dir, table.concat(lines, "\n"))
      assert.is_true(ok, got)
      local leaked = {}
      for _, name in ipairs(names) do
        local v = got[name]
        if allowed[name] then
          assert.equal("table", type(v), name .. ": " .. tostring(v))
          assert.is_truthy(box.views.real[v], name .. " is a read-only view")
        else
          if type(v) ~= "string" or not v:find('require "' .. name .. '": not available in a sandboxed city script', 1, true) then
            leaked[#leaked + 1] = name .. " -> " .. tostring(v)
          end
        end
      end
      assert.same({}, leaked)
      for _, name in ipairs { "psdl.core", "psdl.control", "psdl.sandbox", "psdl.cli", "psdl.cli.common" } do
        assert.is_string(got[name], name)
      end
    end)

  it("no table reachable from the script's globals, the public modules or library results is a host capability",
    function()
      local dir = H.tmpdir(finally)
      -- inside the box: every library function called with no argument (cheap: errors are
      -- caught), its results kept; a small city built, its document and a builder kept
      local text = [[
local found, seen, calls = {}, {}, 0
local function visit(t, depth)
  if seen[t] or depth > 4 then return end
  seen[t] = true
  for k, v in pairs(t) do
    if type(v) == "table" then
      found[#found + 1] = v
      visit(v, depth + 1)
    elseif type(v) == "function" then
      calls = calls + 1
      local r = table.pack(pcall(v))
      for i = 2, r.n do found[#found + 1] = r[i] end
    end
  end
end
visit(psdl, 0)
for _, name in ipairs(MODULES) do visit(require(name), 0) end
local city = psdl.city.new{}
local a, b, c = city:node(0, 0), city:node(120, 0), city:node(120, 120)
city:road(a, b)
city:road(b, c)
local doc, report = city:build()
found[#found + 1] = city
found[#found + 1] = doc
found[#found + 1] = report
found[#found + 1] = psdl.builder.new{}
found[#found + 1] = psdl.decode(psdl.encode(doc))
found[#found + 1] = _ENV
return found, calls
]]
      local box, ok, found, calls = run_box(dir, text, { globals = { MODULES = { table.unpack(sandbox.MODULES) } } })
      assert.is_true(ok, found)
      assert.is_true(calls > 100, "functions called: " .. tostring(calls))
      local hits, seen = {}, {}
      -- the globals (views replaced by the library tables they show)
      walk(box.env, "_ENV", bad, box.views.real, seen, hits)
      for _, name in ipairs(sandbox.MODULES) do
        walk(require(name), "require(" .. name .. ")", bad, nil, seen, hits)
      end
      for i, v in ipairs(found) do walk(v, "found[" .. i .. "]", bad, box.views.real, seen, hits) end
      assert.same({}, hits)
      -- the walk finds a leak: a library table holding psdl.core (seen through its view), a
      -- trusted box's globals
      local leaky = sandbox.new { script = dir .. "/city.lua", psdl = { util = { c = core } } }
      hits, seen = {}, {}
      walk(leaky.env, "_ENV", bad, leaky.views.real, seen, hits)
      assert.same({ "_ENV.psdl.util.c is psdl.core" }, hits)
      hits, seen = {}, {}
      walk(sandbox.new { script = dir .. "/city.lua", trust = true }.env, "_ENV", bad, nil, seen, hits)
      assert.is_true(#hits > 0)
    end)

  it("the library files a sandboxed script can run call nothing the sandbox's switches miss", function()
    -- the modules loaded by the public ones and by the library functions that load lazily
    local prog = "package.path = './lua/?.lua;./lua/?/init.lua;' .. package.path; package.cpath = "
      .. string.format("%q", (os.getenv("PSDL_BUILD_DIR") or "./build") .. "/?.so;")
      .. " .. package.cpath; for _, n in ipairs { '" .. table.concat(sandbox.MODULES, "', '") .. "' } do require(n) end "
      .. "for _, n in ipairs { 'psdl.diff', 'psdl.export', 'psdl.render', 'psdl.osm' } do require(n) end "
      .. "for k in pairs(package.loaded) do if k:match('^psdl') then print(k) end end"
    local out, ok = H.run("lua5.4 -e " .. H.q(prog))
    assert.is_true(ok, out)
    local loaded = {}
    for name in out:gmatch("[^\n]+") do loaded[#loaded + 1] = name end
    table.sort(loaded)
    assert.is_true(#loaded > 40, out)
    local problems = {}
    local uncovered = { "os%.execute", "io%.popen", "os%.remove", "os%.rename", "os%.exit", "os%.tmpname",
      "os%.getenv", "io%.output", "io%.write", "lfs%.mkdir", "lfs%.rmdir", "lfs%.touch", "lfs%.link",
      "lfs%.lock", "lfs%.chdir", "package%.loadlib", "debug%.sethook", "debug%.setlocal", "debug%.setupvalue" }
    for _, name in ipairs(loaded) do
      local path = package.searchpath(name, "./lua/?.lua;./lua/?/init.lua")
      if path then
        local n = 0
        for line in io.lines(path) do
          n = n + 1
          local code = line:gsub("%-%-.*$", "")
          for _, p in ipairs(uncovered) do
            if code:find("%f[%w_.]" .. p .. "%f[^%w_]") then problems[#problems + 1] = path .. ":" .. n .. ": " .. line end
          end
          -- io.open kept in a local when the module loads escapes the guarded copy the
          -- sandbox puts in io.open while the script runs
          if code:find("%f[%w_.]io%.open%s*[^%s(]") or code:find("%f[%w_.]io%.open%s*$") then
            problems[#problems + 1] = path .. ":" .. n .. ": " .. line
          end
        end
      end
    end
    assert.same({}, problems)
  end)

  it("the reproducers of the escape are refused with the script line, and nothing is written", function()
    local dir = H.tmpdir(finally)
    local city = "local city = psdl.city.new{ blocks = false }\ncity:road(city:node(0, 0), city:node(100, 0))\nreturn city\n"
    local cases = {
      { 'local box = require("psdl.sandbox").new{ script = SCRIPT_DIR .. "/city.lua", trust = true }\n'
        .. 'box.env.os.execute("id > ' .. dir .. '/pwned")\n', 'require "psdl.sandbox": not available' },
      { 'local core = require("psdl.core")\ncore.deny_writes(false)\n'
        .. 'assert(core.write_file("' .. dir .. '/../pwned_' .. dir:match("[^/]*$") .. '", "x"))\n',
        'require "psdl.core": not available' },
      { 'require("psdl.control").memory_limit(0)\n', 'require "psdl.control": not available' },
      { 'require("psdl.cli.common").read_file("/etc/hostname")\n', 'require "psdl.cli.common": not available' },
    }
    for _, c in ipairs(cases) do
      write(dir .. "/city.lua", c[1] .. city)
      local code, out, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
      assert.equal(2, code, c[1] .. ": " .. err)
      assert.equal("", out)
      assert.matches(dir .. "/city.lua:1: " .. c[2], err, 1, true)
      assert.matches("--trust gives full access", err, 1, true)
      assert.is_false(exists(dir .. "/pwned"))
      assert.is_false(exists(dir .. "/../pwned_" .. dir:match("[^/]*$")))
      assert.is_false(exists(dir .. "/city.psdl"))
    end
    -- psdl.write and City:save inside the sandbox are still refused
    for _, line in ipairs { 'assert(psdl.write(city:build(), "' .. dir .. '/out.psdl"))',
      'assert(city:save("' .. dir .. '/out.psdl"))' } do
      write(dir .. "/city.lua", "local city = psdl.city.new{ blocks = false }\n"
        .. "city:road(city:node(0, 0), city:node(100, 0))\n" .. line .. "\nreturn city\n")
      local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl")
      assert.equal(2, code, line)
      assert.matches(dir .. "/city.lua:3:", err, 1, true)
      assert.matches("writing files is not allowed in a sandboxed city script", err, 1, true)
      assert.is_false(exists(dir .. "/out.psdl"))
      assert.is_false(exists(dir .. "/city.psdl"))
    end
  end)

  it("--max-memory holds: the script cannot lift it", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", "local t = {} for i = 1, 6e6 do t[i] = i end\n"
      .. "local city = psdl.city.new{ blocks = false }\ncity:road(city:node(0, 0), city:node(100, 0))\nreturn city\n")
    local code, _, err = run("build", dir .. "/city.lua", "--max-memory", "50", "-o", dir .. "/city.psdl")
    assert.equal(2, code, err)
    assert.matches(dir .. "/city.lua:1: the script used more than --max-memory 50 MB", err, 1, true)
    assert.is_false(exists(dir .. "/city.psdl"))
  end)

  it("--trust still gives the script the full library and the host's os", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/city.lua", 'local s = require("psdl.sandbox")\nassert(require("psdl.core").write_file("'
      .. dir .. '/trusted.txt", "x"))\nassert(os.execute("true"))\n'
      .. "local city = psdl.city.new{ blocks = false }\ncity:road(city:node(0, 0), city:node(100, 0))\nreturn city\n")
    local code, _, err = run("build", dir .. "/city.lua", "--trust", "-o", dir .. "/city.psdl")
    assert.equal(0, code, err)
    assert.is_true(exists(dir .. "/trusted.txt"))
    assert.is_true(exists(dir .. "/city.psdl"))
  end)
end)
