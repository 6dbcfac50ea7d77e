-- What a sandboxed city script can learn about paths outside its folder
-- (lua/psdl/sandbox.lua, Box:readable): nothing but that they are outside. Every function
-- the script can reach (its globals, the library's views, the methods of the objects
-- library calls hand back) is called with paths outside the folder that exist and with the
-- same paths missing; the answers must be the same, the path aside.

local lfs = require "lfs"
local sandbox = require "psdl.sandbox"
local H = require "helper"

local function write(path, text) H.write_bytes(path, text) end

-- The script: it collects the functions it can reach and calls each with every argument
-- shape of ARGS for a path P, for every pair of PAIRS (existing first), and returns the
-- answers as text.
local PROBE = [==[
local PAIRS = ...
local funcs, seen = {}, {}
local function collect(v, name, depth)
  if seen[v] or depth > 6 then return end
  if type(v) == "function" then
    seen[v] = true
    funcs[#funcs + 1] = { name = name, f = v }
  elseif type(v) == "table" then
    seen[v] = true
    local keys = {}
    pcall(function() for k in pairs(v) do keys[#keys + 1] = k end end)
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      local ok, x = pcall(function() return v[k] end)
      if ok then collect(x, name .. "." .. tostring(k), depth + 1) end
    end
  end
end
-- (Lua's own pure functions, whose answers are made from the string itself: string.upper of
-- two names differs; they never look at a file)
local pure = { print = true, string = true, table = true, math = true, utf8 = true, tostring = true,
  tonumber = true, select = true, type = true, rawlen = true, rawequal = true, rawget = true, rawset = true,
  next = true, pairs = true, ipairs = true, error = true, assert = true, setmetatable = true,
  getmetatable = true, _G = true }
local g = {}
for k, v in pairs(_G) do if not pure[k] then g[k] = v end end
for _, m in ipairs { "psdl.city", "psdl.builder", "psdl.geom", "psdl.terrain", "psdl.osm", "psdl.styles",
  "psdl.retexture", "psdl.companion", "psdl.bai", "psdl.cpvs", "psdl.inst", "psdl.pathset", "psdl.pkg",
  "psdl.tex", "psdl.propcsv" } do
  g[m] = require(m)
end
local b = psdl.builder.new{ style = "london" }
local city = psdl.city.new{ blocks = false }
city:road(city:node(0, 0), city:node(120, 0))
local doc = city:build()
g.b, g.city, g.doc = b, city, doc
collect(g, "_G", 0)
table.sort(funcs, function(x, y) return x.name < y.name end)
local function shapes(P)
  return {
    { P }, { {}, P }, { doc, P }, { b, P }, { city, P }, { P, "r" }, { P, "mode" },
    { { output = P } }, { doc, { output = P } }, { { heightmap = P, path = P, file = P } }, { { terrain = P } },
  }
end
local out = {}
for _, set in ipairs(PAIRS) do
  for _, fn in ipairs(funcs) do
    for i = 1, #shapes("") do
      -- (the missing paths first: a function whose first call differs from later ones,
      -- Builder.settle, then shows as a difference between the two missing paths)
      local answers = {}
      for j, at in ipairs { 2, 3, 1 } do
        local P = set[at]
        local r = table.pack(pcall(fn.f, table.unpack(shapes(P)[i])))
        local parts = {}
        for k = 1, r.n do parts[k] = type(r[k]) == "string" and r[k] or type(r[k]) end
        local text = table.concat(parts, " | "):gsub("0x%x+", "0x")
        local s, e = text:find(P, 1, true)
        while s do
          text = text:sub(1, s - 1) .. "<P>" .. text:sub(e + 1)
          s, e = text:find(P, s + 3, true)
        end
        answers[at] = text
      end
      out[#out + 1] = { fn.name, i, set[1], answers[1], answers[2], answers[3] }
    end
  end
end
return out, #funcs
]==]

describe("a sandboxed script and paths outside its folder", function()
  it("gets the same answer from every function it can reach for an outside path that exists and one that does not", function()
    local top = H.tmpdir(finally)
    local dir = top .. "/city"
    assert(lfs.mkdir(dir))
    assert(lfs.mkdir(top .. "/outdir_q"))
    write(top .. "/exists_q.txt", "outside\n")
    write(top .. "/exists_q.psdl", H.read_bytes(H.fixtures_dir .. "/" .. H.fixture_names()[1]))
    write(dir .. "/data.txt", "inside\n")
    -- links inside the folder: to an existing and to missing outside files, and to the
    -- folder above
    assert(lfs.link(top .. "/exists_q.txt", dir .. "/link_q", true))
    assert(lfs.link(top .. "/exists_r.txt", dir .. "/link_r", true))
    assert(lfs.link(top .. "/exists_s.txt", dir .. "/link_s", true))
    assert(lfs.link(top, dir .. "/up", true))
    -- {an outside path that exists, two that do not}: names of one length, one letter apart
    local pairs_ = {
      { "../exists_q.txt", "../exists_r.txt", "../exists_s.txt" },
      { top .. "/exists_q.txt", top .. "/exists_r.txt", top .. "/exists_s.txt" },
      { top .. "/exists_q.psdl", top .. "/exists_r.psdl", top .. "/exists_s.psdl" },
      { "../outdir_q", "../outdir_r", "../outdir_s" },
      { "../outdir_q/", "../outdir_r/", "../outdir_s/" },
      { "link_q", "link_r", "link_s" },
      { "up/exists_q.txt", "up/exists_r.txt", "up/exists_s.txt" },
      { "up/city/../exists_q.txt", "up/city/../exists_r.txt", "up/city/../exists_s.txt" },
      { "/etc/passwd", "/etc/passwe", "/etc/passwf" },
      { "/etc", "/etd", "/ete" },
    }
    write(dir .. "/probe.lua", PROBE)
    local box = sandbox.new { script = dir .. "/probe.lua", timeout = 600 }
    local fn = assert(box:loadfile())
    local ok, out, nfuncs = box:run(fn, pairs_)
    assert.is_true(ok, tostring(out))
    assert.is_true(nfuncs > 200, tostring(nfuncs)) -- the walk found the library
    -- a difference: the existing path answered otherwise than the missing ones, which
    -- answered alike (functions that read the string itself as data, the decoders, answer
    -- each name differently and are not file probes)
    local differ = {}
    for _, r in ipairs(out) do
      if r[4] ~= r[5] and r[5] == r[6] then
        differ[#differ + 1] = string.format("%s shape %d (%s): %s  VS  %s", r[1], r[2], r[3], r[4], r[5])
      end
    end
    assert.same({}, differ)
    -- and the outside paths were refused, not read: io.open of each gives the one message
    local saw = 0
    for _, r in ipairs(out) do
      if r[1] == "_G.io.open" and r[2] == 1 then
        assert.matches("outside the script's folder", r[4], 1, true)
        saw = saw + 1
      end
    end
    assert.equals(#pairs_, saw)
  end)
end)
