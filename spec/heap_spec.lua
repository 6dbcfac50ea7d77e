-- control.heap_allocator (src/psdl_alloc.h, src/lpsdl_heap.c): the Lua state's fast allocator.
-- Each case runs in a fresh lua5.4 process, as scripts/psdl does: the allocator is switched
-- once per state and stays for the process.
local H = require "helper"

local build = os.getenv("PSDL_BUILD_DIR") or "./build"
local prelude = "package.path = './lua/?.lua;./lua/?/init.lua;' .. package.path; "
  .. "package.cpath = " .. string.format("%q", build .. "/?.so;") .. " .. package.cpath; "
  .. "local core = require 'psdl.control'; "

-- Run Lua code in a fresh process; its output (stdout and stderr) and whether it succeeded.
local function fresh(code)
  local out, ok = H.run("lua5.4 -e " .. H.q(prelude .. code))
  return out, ok
end

local core = require "psdl.control" -- (the process's switches: not in psdl.core)
local have = core.heap_allocator ~= nil

describe("psdl.control.heap_allocator", function()
  it("switches a state to the fast allocator, or says why not", function()
    local out, ok = fresh([[
      local name, why = core.heap_allocator()
      print(name or "none", why or "")
      print(core.heap_allocator() == name) -- again: the same answer
      local f0 = core.heap_allocator_counts()
      local t = {}
      for i = 1, 20000 do t[i] = { i, tostring(i) } end
      local f1, passed = core.heap_allocator_counts()
      print(name and f1 - f0 >= 40000 or not name and f1 == 0, passed)
    ]])
    assert.is_true(ok, out)
    local name, why = out:match("^(%S+) ?([^\n]*)\n")
    assert.is_truthy(name, out)
    if name == "none" then
      assert.matches("without a fast allocator", why, 1, true)
    else
      assert.equal("mimalloc", name)
    end
    assert.matches("\ntrue\ntrue\t0\n", out, 1, true)
    assert.is_true(have)
  end)

  it("composes with the memory guard chosen after it, and is refused after the guard", function()
    local out, ok = fresh([[
      core.heap_allocator()
      core.memory_limit(64 * 1024 * 1024)
      local used0 = core.memory_stats().used
      local keep = {}
      for i = 1, 20000 do keep[i] = { i, i * 2, i * 3 } end
      local used1 = core.memory_stats().used
      print(used1 - used0 > 20000 * 40)
      -- past the limit: refused and reported as such, the state goes on
      local ok, err = pcall(function() local big = {} for i = 1, 1e8 do big[i] = { i } end end)
      print(ok, core.memory_exceeded(), tostring(err):match("not enough memory") ~= nil)
      keep, err = nil, nil
      collectgarbage()
      core.memory_limit(0)
      print(core.memory_stats().used < used1 + 4 * 1024 * 1024)
      -- once the guard is in place the allocator under it stays as it is
      local again, why = core.heap_allocator()
      print(again == nil and (why:match("memory guard") or why:match("without")) ~= nil)
    ]])
    assert.is_true(ok, out)
    assert.equal("true\nfalse\ttrue\ttrue\ntrue\ntrue\n", out)
    out, ok = fresh([[
      core.memory_limit(0)
      print(core.heap_allocator())
    ]])
    assert.is_true(ok, out)
    assert.matches("^nil\t", out)
  end)

  it("builds the same bytes with either allocator (psdl build, PSDL_ALLOCATOR=libc)", function()
    local a, b = H.tmp(finally, ".psdl"), H.tmp(finally, ".psdl")
    local out, ok = H.run("scripts/psdl build examples/downtown.lua -o " .. H.q(a))
    assert.is_true(ok, out)
    out, ok = H.run("PSDL_ALLOCATOR=libc scripts/psdl build examples/downtown.lua -o " .. H.q(b))
    assert.is_true(ok, out)
    assert.equal(H.read_bytes(b), H.read_bytes(a))
  end)

  it("frees every block at lua_close, also those made before the switch", function()
    -- the process closes its state at the end of the -e chunk (lua.c): blocks of both
    -- allocators are freed through the wrapper, after psdl.core's unloading was refused
    local out, ok = fresh([[
      local before = {}
      for i = 1, 5000 do before[i] = { tostring(i) } end
      core.heap_allocator()
      local after = {}
      for i = 1, 5000 do after[i] = { tostring(i) } before[i][2] = after[i] end
      local psdl = require "psdl"
      local doc = assert(psdl.read("spec/fixtures/" .. ({ ]] .. "'" .. H.fixture_names()[1] .. "'" .. [[ })[1]))
      print(#doc.rooms > 0)
    ]])
    assert.is_true(ok, out)
    assert.equal("true\n", out)
  end)

  it("core.heap_keep: set once per process, by the first builder; the reserve's thresholds stay", function()
    local out, ok = fresh([[
      local psdl = require "psdl"
      local first = core.heap_keep()
      print(type(first), core.heap_keep())
      psdl.builder.new() -- its own call changes nothing now
      print(core.heap_keep())
    ]])
    assert.is_true(ok, out)
    assert.matches("^boolean\tfalse\nfalse\n$", out)
    out, ok = fresh([[
      core.heap_reserve(16)
      print(core.heap_keep())
    ]])
    assert.is_true(ok, out)
    assert.equal("false\n", out)
  end)
end)
