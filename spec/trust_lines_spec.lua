-- Script lines of errors and stops that leave no frame of the script on the stack they are
-- raised on (lua/psdl/sandbox.lua: Box:line, Box:inside, Box:coroutines): an error a module
-- loaded by --trust's real `require` raises, a loop inside such a module's coroutine, an
-- error without a position (`error(msg, 0)`), and a coroutine the box made that something
-- resumes past the box's `coroutine.resume` (C code's `lua_resume`, a resume kept from
-- before the run). Stop 23's "older --trust gaps".

local sandbox = require "psdl.sandbox"
local H = require "helper"
local run = H.cli

local function city_script(extra)
  return table.concat({
    "local city = psdl.city.new{ blocks = false }",
    "local a, b = city:node(0, 0), city:node(120, 0)",
    "city:road(a, b)",
    extra,
    "return city",
  }, "\n")
end

describe("script lines of errors and stops off the script's stack", function()
  it("an error a --trust module raises (or re-raises from its coroutine) names the script line that called it", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/mod.lua", table.concat({
      "local M = {}",
      "function M.go()",
      "  local ok, err = coroutine.resume(coroutine.create(function() local t; return t.x end))",
      "  if not ok then error(err, 0) end",
      "end",
      "function M.plain() error('no position', 0) end",
      "return M",
    }, "\n"))
    local head = "package.path = SCRIPT_DIR .. '/?.lua;' .. package.path; local m = require('mod'); "
    for _, c in ipairs {
      { "m.go()", "city.lua:4: " .. dir .. "/mod.lua:3: attempt to index a nil value (local 't')" },
      { "m.plain()", "city.lua:4: no position" },
    } do
      H.write_bytes(dir .. "/city.lua", city_script(head .. c[1]))
      local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--trust")
      assert.equal(2, code, err)
      assert.matches(c[2], err, 1, true)
    end
  end)

  it("an error without a position raised in the script names its line, sandboxed or trusted", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/city.lua", city_script("local function f() error('plain', 0) end\nf()"))
    for _, trust in ipairs { false, true } do
      local args = { "build", dir .. "/city.lua", "-o", dir .. "/city.psdl" }
      if trust then args[#args + 1] = "--trust" end
      local code, _, err = run(table.unpack(args))
      assert.equal(2, code, err)
      assert.matches("city.lua:4: plain", err, 1, true)
    end
  end)

  it("a loop in a --trust module's coroutine stops at --timeout with the script line that resumed it", function()
    local dir = H.tmpdir(finally)
    H.write_bytes(dir .. "/spin.lua", "return function() while true do end end\n")
    H.write_bytes(dir .. "/city.lua", city_script("package.path = SCRIPT_DIR .. '/?.lua;' .. package.path; "
      .. "coroutine.resume(coroutine.create(require('spin')))"))
    local code, _, err = run("build", dir .. "/city.lua", "-o", dir .. "/city.psdl", "--trust", "--timeout", "0.3")
    assert.equal(2, code, err)
    assert.matches("city.lua:4: the script ran longer than --timeout 0.3 s", err, 1, true)
  end)

  it("a coroutine the box made is stopped at --timeout when resumed past the box's resume (as lua_resume from C)", function()
    local dir = H.tmpdir(finally)
    local script = dir .. "/city.lua"
    H.write_bytes(script, "return 1\n")
    -- the real resume, kept from before the run: the box's `coroutine.resume` never sees it
    local real_resume = coroutine.resume
    for _, trust in ipairs { true, false } do
      local box = sandbox.new { script = script, trust = trust, timeout = 0.3 }
      local t0 = os.clock()
      local ok, msg, kind = box:run(function()
        local co = box.env.coroutine.create(function()
          -- first run by the box's resume for 50 ms (the tick hooks the coroutine then, and
          -- takes the hook off it when it fires: the box's resume puts it back)
          local t = os.clock()
          while os.clock() - t < 0.05 do end
          coroutine.yield()
          -- (bounded, so that without the hook the run ends, and the spec fails, in 5 s)
          t = os.clock()
          while os.clock() - t < 5 do end
          return "not stopped"
        end)
        assert(box.env.coroutine.resume(co))
        local rok, rerr = real_resume(co)
        if not rok then error(rerr, 0) end
        return rerr
      end)
      assert.is_false(ok, tostring(msg))
      assert.equal("timeout", kind)
      assert.matches("the script ran longer than --timeout 0.3 s", msg, 1, true)
      assert.is_true(os.clock() - t0 < 4)
    end
  end)
end)
