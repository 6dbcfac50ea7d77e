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

-- A script that changes everything it can reach: every library module it may require, the
-- objects library calls hand back (a builder and its style, styles.load's tables, a city,
-- its document and report), every field (numbers +1, strings changed, functions that raise,
-- tables emptied), a marker field in every table and a metatable whose __index raises on
-- every table that takes one. Writes the library refuses are skipped (pcall).
local MUTATOR = [[
local roots = { psdl = psdl }
local styles = require "psdl.styles"
for _, m in ipairs { "psdl.city", "psdl.builder", "psdl.geom", "psdl.terrain", "psdl.osm", "psdl.styles",
  "psdl.styles.london", "psdl.styles.sf", "psdl.retexture", "psdl.companion", "psdl.bai", "psdl.cpvs",
  "psdl.inst", "psdl.pathset", "psdl.pkg", "psdl.tex", "psdl.propcsv" } do
  roots[m] = require(m)
end
local b = psdl.builder.new{ style = "london" }
roots.b, roots.b_style = b, b.style
roots.s1, roots.s2 = styles.load("london"), styles.load(require "psdl.styles.sf")
roots.s3 = styles.load(roots["psdl.styles.london"])
local city = psdl.city.new{ style = "london", blocks = false }
city:road(city:node(0, 0), city:node(120, 0))
roots.city = city
pcall(function() roots.doc, roots.rep = city:build() end)
local seen, count = {}, 0
local function junk(v)
  local t = type(v)
  if t == "number" then return v + 1 elseif t == "string" then return v .. "X" elseif t == "boolean" then return not v
  elseif t == "function" then return function() error("A's function ran") end end
  return {}
end
local evil_mt = { __index = function() error("A's __index ran") end, A_MARK = true }
local function mutate(t, depth)
  if type(t) ~= "table" or seen[t] or depth > 14 then return end
  seen[t] = true
  local keys = {}
  pcall(function() for k in pairs(t) do keys[#keys + 1] = k end end)
  for _, k in ipairs(keys) do
    local v = t[k]
    mutate(v, depth + 1)
    if pcall(function() t[k] = junk(v) end) then count = count + 1 end
    pcall(rawset, t, k, junk(v))
  end
  pcall(function() t.A_WAS_HERE = true end)
  pcall(setmetatable, t, evil_mt)
end
for _, r in pairs(roots) do mutate(r, 0) end
return count
]]

-- Every table of the library's state (psdl.library_state's walk), for the checks below.
local function library_tables()
  local snap = require("psdl.library_state").snapshot()
  local list = {}
  for t in pairs(snap.tables) do list[#list + 1] = t end
  return list
end

describe("the library's shared state across sandboxed scripts in one process", function()
  local psdl = require "psdl"
  local source = require "psdl.cli.source"
  local function bytes(path)
    local _, rep = source.script_document(psdl, path, { decode = false })
    return assert(rep.checked and rep.checked.bytes)
  end

  it("is back as it was when a script that changed everything it could reach ends: later scripts build the same bytes", function()
    local dir = H.tmpdir(finally)
    for _, name in ipairs { "street", "avenue", "downtown", "facade_rows" } do
      write(dir .. "/" .. name .. ".lua", H.read_bytes("examples/" .. name .. ".lua"))
    end
    write(dir .. "/mutator.lua", MUTATOR)
    local alone = {}
    for _, name in ipairs { "street", "avenue", "downtown", "facade_rows" } do alone[name] = bytes(dir .. "/" .. name .. ".lua") end
    local london = require "psdl.styles.london"
    local road_before = london.roads.lanes2.surface
    -- the mutator changed hundreds of fields it reached
    local changed = source.run_script(psdl, dir .. "/mutator.lua")
    assert.is_true(changed > 300, tostring(changed))
    -- the host sees its library as before
    assert.equals(road_before, london.roads.lanes2.surface)
    for _, t in ipairs(library_tables()) do
      assert.is_nil(rawget(t, "A_WAS_HERE"))
      local mt = debug.getmetatable(t)
      assert.is_true(mt == nil or rawget(mt, "A_MARK") == nil)
    end
    for _, name in ipairs { "street", "avenue", "downtown", "facade_rows" } do
      assert.equals(alone[name], bytes(dir .. "/" .. name .. ".lua"), name .. " after the mutator")
    end
  end)

  it("is back too when the script stopped at --timeout or failed", function()
    local dir = H.tmpdir(finally)
    write(dir .. "/street.lua", H.read_bytes("examples/street.lua"))
    local alone = bytes(dir .. "/street.lua")
    write(dir .. "/loop.lua", MUTATOR:gsub("return count", "while true do end"))
    write(dir .. "/fail.lua", MUTATOR:gsub("return count", "error('after the changes')"))
    local box = sandbox.new { script = dir .. "/loop.lua", timeout = 0.5 }
    local ok, msg, kind = box:run(assert(box:loadfile()))
    assert.is_false(ok)
    assert.equals("timeout", kind, msg)
    assert.equals(alone, bytes(dir .. "/street.lua"))
    assert.has_error(function() source.run_script(psdl, dir .. "/fail.lua") end)
    assert.equals(alone, bytes(dir .. "/street.lua"))
  end)

  it("takes in a library module first loaded while a script runs, as it was loaded", function()
    local state = require "psdl.library_state"
    local name = "psdl.city.tunnel"
    local kept = package.loaded[name]
    package.loaded[name] = nil
    finally(function() package.loaded[name] = kept end)
    local host_searchers = package.searchers
    local snap = state.snapshot()
    local unwatch = state.watch_loads(snap)
    assert.are_not.equal(host_searchers, package.searchers)
    local mod = require(name)
    unwatch()
    assert.is_not_nil(snap.tables[mod])
    local field = next(mod)
    local before = mod[field]
    mod[field] = "changed"
    mod.added = true
    state.restore(snap)
    assert.equals(before, mod[field])
    assert.is_nil(rawget(mod, "added"))
    assert.equals(host_searchers, package.searchers) -- (the host's list is back)
  end)
end)
