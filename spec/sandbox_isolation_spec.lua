-- What a sandboxed city script leaves behind for the host and for the scripts built after it
-- in the same process (lua/psdl/sandbox.lua; `psdl view --watch` builds script after script
-- and runs its HTTP server from the sandbox's poll while a script builds).

local lfs = require "lfs"
local sandbox = require "psdl.sandbox"
local H = require "helper"

local function write(path, text) H.write_bytes(path, text) end
local function exists(path) return lfs.attributes(path) ~= nil end

-- Run the script at `path` in a fresh box; returns box:run's results.
local function run_box(path, opts)
  opts = opts or {}
  opts.script = path
  local box = sandbox.new(opts)
  local fn = assert(box:loadfile())
  return box:run(fn)
end

describe("the string methods while a sandboxed script runs", function()
  it("are the library's guarded ones, never the script's own string table, for the library and the host's poll", function()
    local dir = H.tmpdir(finally)
    local out = dir .. "/../" .. "sandbox_isolation_pwned.txt"
    finally(function() os.remove(out) end)
    -- the script replaces string.match and string.format in its own `string`: before the
    -- fix, ("..."):match in the host's poll (the HTTP server of view --watch) ran the
    -- script's function outside the sandbox, where library writes are allowed
    write(dir .. "/city.lua", table.concat({
      "local real = string.match",
      "CALLS = 0",
      "string.match = function(s, p, ...)",
      "  CALLS = CALLS + 1",
      string.format("  pcall(psdl.write_file, %q, 'pwned')", out),
      "  return nil",
      "end",
      "string.format = function() return 'x' end",
      "local b = psdl.builder.new{ style = 'london' }", -- styles.load uses ("..."):match
      "local t = os.clock() while os.clock() - t < 0.15 do end",
      "assert(('abc'):match('b') == 'b', 'method call went to the script string.match')",
      "local own = string.match('abc', 'b')",
      "return CALLS, own, type(b)",
    }, "\n"))
    local polls, host_matches = 0, 0
    local ok, calls, own, kind = run_box(dir .. "/city.lua", { poll = function()
      polls = polls + 1
      if ("GET / HTTP/1.1"):match("^(%u+) ") == "GET" then host_matches = host_matches + 1 end
      return false
    end })
    assert.is_true(ok, tostring(calls))
    assert.equals(1, calls)  -- only the script's own call
    assert.is_nil(own)
    assert.equals("table", kind)
    assert.is_true(polls > 0)
    assert.equals(polls, host_matches)
    assert.is_false(exists(out))
    -- and the host's string methods are its own again afterwards
    assert.equals(string.match, getmetatable("").__index.match)
    assert.equals("b", ("abc"):match("b"))
  end)
end)
