-- Hostile city scripts against the sandbox's limits (lua/psdl/sandbox.lua): each is refused
-- or stopped by --timeout / --max-memory with a message naming the script line, and the host
-- goes on.

local sandbox = require "psdl.sandbox"
local H = require "helper"

-- Run `code` as city.lua in a fresh box with small limits; returns ok, message, kind. A case
-- that must reach the memory limit gets a long time limit (a loaded machine may take more
-- than a second of CPU to fill 64 MB).
local function run_code(code, finally, kind)
  local dir = H.tmpdir(finally)
  H.write_bytes(dir .. "/city.lua", code)
  local box = sandbox.new { script = dir .. "/city.lua", timeout = kind == "memory" and 60 or 1,
    max_memory = 64 * 1024 * 1024 }
  local fn = assert(box:loadfile())
  return box:run(fn)
end

describe("hostile scripts in the sandbox", function()
  local cases = {
    { "string.rep bomb", 'local s = string.rep("x", 1 << 40)\nreturn #s', "city.lua:1: ", "resulting string too large" },
    { "memory through many strings", 'local t = {}\nfor i = 1, 1e8 do t[i] = ("x"):rep(10000) .. i end', "city.lua:2: ",
      "--max-memory 64 MB", "memory" },
    { "deep recursion", 'local function f(n) return 1 + f(n + 1) end\nreturn f(1)', "city.lua:1: ", "stack overflow" },
    { "huge format width", 'return string.format("%99999d", 1)', "city.lua:1: ", "invalid conversion" },
    { "huge table.concat", 'local t = {}\nfor i = 1, 200 do t[i] = ("x"):rep(1 << 20) end\nreturn #table.concat(t)',
      "city.lua:", "--max-memory 64 MB", "memory" },
    { "endless coroutine", 'local co = coroutine.wrap(function() while true do end end)\nco()', "city.lua:1: ",
      "--timeout 1 s", "timeout" },
    { "binary chunk", 'local f, e = load("\\27LuaT\\0", "x", "b")\nerror(e)', "city.lua:2: ", "load of binary chunks" },
    { "binary chunk as text", 'local f, e = load("\\27LuaT\\0")\nerror(e)', "city.lua:2: ", "binary" },
    { "string.dump", 'local s = string.dump(function() end)\nreturn s', "city.lua:1: ", "string.dump is not available" },
    { "__gc", 'setmetatable({}, { __gc = function() end })', "city.lua:1: ", "__gc metamethod is not available" },
    { "error object whose __tostring loops",
      'error(setmetatable({}, { __tostring = function() while true do end end }))', "city.lua:1: ", "--timeout 1 s",
      "timeout" },
    { "__close that loops", 'local x <close> = setmetatable({}, { __close = function() while true do end end })\nreturn 1',
      "city.lua:1: ", "--timeout 1 s", "timeout" },
    { "table.sort comparator that loops",
      'local t = {}\nfor i = 1, 100 do t[i] = i end\ntable.sort(t, function() while true do end end)', "city.lua:3: ",
      "--timeout 1 s", "timeout" },
    { "catastrophic pattern, several repetitions", 'local r = ("a"):rep(30000):find(".-.-.-.-.-.-b")\nreturn r', "city.lua:1: ",
      "6 repetitions over 30000 bytes" },
    { "catastrophic pattern, optional items on a short subject",
      'local r = ("a"):rep(60):find(("a?"):rep(60) .. ("a"):rep(60))\nreturn r', "city.lua:1: ", "60 optional items" },
    { "catastrophic pattern, back-reference", 'local r = ("a"):rep(100000):match("(.-)%1b")\nreturn r', "city.lua:1: ",
      "2 repetitions over 100000 bytes" },
    { "catastrophic pattern, two repetitions tried at every start", 'local r = ("a"):rep(1e6):gsub("a*a*b", "")\nreturn r',
      "city.lua:1: ", "2 repetitions over 1000000 bytes" },
    { "catastrophic pattern through gmatch", 'for x in ("a"):rep(1e5):gmatch("^a-a-a-b") do end', "city.lua:1: ",
      "string.gmatch" },
  }
  for _, case in ipairs(cases) do
    it(case[1] .. " is refused or stopped, naming the script line", function()
      local t0 = os.clock()
      local ok, msg, kind = run_code(case[2], finally, case[5])
      assert.is_false(ok)
      assert.matches(case[3], msg, 1, true)
      assert.matches(case[4], msg, 1, true)
      assert.equals(case[5] or "error", kind, msg)
      assert.is_true(os.clock() - t0 < 90, "took " .. (os.clock() - t0) .. " s")
    end)
  end

  it("keeps the string metatable out of reach", function()
    local ok, a, b = run_code('return getmetatable(""), pcall(function() local s = ""; s.x = 1 end)', finally)
    assert.is_true(ok)
    assert.is_nil(a)
    assert.is_false(b)
  end)

  it("lets ordinary patterns run on long subjects", function()
    local ok, n = run_code(table.concat({
      'local s = ("word, 12.5\\n"):rep(20000)',
      'local n = 0',
      'for line in s:gmatch("([^\\n]*)\\n") do',
      '  local a, b = line:match("^(%S+)%s+(.*)$")',
      '  for cell in (line .. ","):gmatch("([^,]*),") do n = n + 1 end',
      'end',
      'assert(("  x  "):rep(10000):match("^%s*(.-)%s*$"))',
      'return n',
    }, "\n"), finally)
    assert.is_true(ok, tostring(n))
    assert.equals(40000, n)
  end)
end)
