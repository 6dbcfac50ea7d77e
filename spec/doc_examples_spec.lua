-- Spec: the Lua examples a newcomer copies first run as written (newcomer F2): the
-- README's city script (`psdl build`) and its "From Lua" snippet, docs/lua-api.md's
-- first example and docs/retexture.md's document methods. Each ```lua block is taken from the page itself; only the output file
-- name is pointed into a temporary folder. Also: psdl.write reports a folder or a missing
-- folder before the document's validation problems.

local psdl = require "psdl"
local H = require "helper"

-- The ```lua blocks of a page, in order.
local function lua_blocks(page)
  local text, blocks = H.read_bytes(page), {}
  for code in text:gmatch("\n```lua\n(.-)\n```") do blocks[#blocks + 1] = code end
  return blocks
end

-- Run a snippet as a user's program from the repository root: its own globals, its own
-- `package` (the example sets package.path itself), `print` collected.
local function run_snippet(code, name)
  local printed = {}
  local env = setmetatable({ print = function(...) printed[#printed + 1] = table.concat({ ... }, "\t") end,
    package = setmetatable({}, { __index = package }) }, { __index = _G })
  local chunk = assert(load(code, "=" .. name, "t", env))
  local ok, err = pcall(chunk)
  return ok, err, printed
end

-- The snippet with `psdl.write(doc, "NAME")` writing into `dir` instead.
local function redirect(code, dir)
  local n
  code, n = code:gsub('psdl%.write%(doc, "([^"]*)"', function(p) return 'psdl.write(doc, "' .. dir .. "/"
    .. p:match("[^/]*$") .. '"' end)
  assert.is_true(n >= 1, "the snippet writes a file")
  return code
end

describe("documented examples", function()
  it("docs/lua-api.md's first example runs as written and writes a city that validates", function()
    local dir = H.tmpdir(finally)
    local code = lua_blocks("docs/lua-api.md")[1]
    assert.truthy(code and code:find("psdl.read", 1, true), "the first ```lua block reads a file")
    local ok, err, printed = run_snippet(redirect(code, dir), "lua-api.md")
    assert.is_true(ok, tostring(err))
    assert.equal(0, #printed - 1, "no validation problem printed: " .. table.concat(printed, "\n"))
    local doc = assert(psdl.read(dir .. "/reskinned.psdl"))
    assert.is_true((psdl.validate(doc)))
  end)

  it("the README's 'From Lua' snippet runs as written", function()
    local dir = H.tmpdir(finally)
    local blocks = lua_blocks("README.md")
    local code
    for _, b in ipairs(blocks) do if b:find('require "psdl"', 1, true) then code = b end end
    assert.truthy(code, "the README has a From Lua block")
    local ok, err = run_snippet(redirect(code, dir), "README.md")
    assert.is_true(ok, tostring(err))
    local doc = assert(psdl.read(dir .. "/reskinned.psdl"))
    assert.is_true((psdl.validate(doc)))
  end)

  it("docs/retexture.md's Lua example runs as written on the repository's grid_n3", function()
    local dir = H.tmpdir(finally)
    local code
    for _, b in ipairs(lua_blocks("docs/retexture.md")) do if b:find("rename_texture", 1, true) then code = b end end
    assert.truthy(code, "retexture.md has a Lua example")
    local ok, err, printed = run_snippet(redirect(code, dir), "retexture.md")
    assert.is_true(ok, tostring(err))
    local doc = assert(psdl.read(dir .. "/reskinned_grid.psdl"))
    assert.equal(#doc:texture_references(), #printed)
    assert.is_true((psdl.validate(doc, { drivable = false })))
    local names = {}
    for _, t in ipairs(doc.textures) do if t then names[t] = true end end
    for _, t in ipairs { "r6_f", "swalk_stone", "wall_brick", "grass_wet" } do assert.is_true(names[t], t) end
    for _, t in ipairs { "r4_f", "swalk_f", "wall_a", "grass_f" } do assert.is_nil(names[t], t) end
    -- the geometry is the fixture's, untouched
    local original = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    assert.same(original.vertices, doc.vertices)
    assert.equal(#original.rooms, #doc.rooms)
  end)

  it("the README's city script builds with psdl build", function()
    local dir = H.tmpdir(finally)
    local code
    for _, b in ipairs(lua_blocks("README.md")) do if b:find("psdl.city.new", 1, true) then code = b end end
    assert.truthy(code, "the README has a city script")
    H.write_bytes(dir .. "/corner.lua", code .. "\n")
    local rc, out, err = H.cli("build", dir .. "/corner.lua", "-o", dir .. "/corner.psdl", "-q")
    assert.equal(0, rc, out .. err)
    assert.is_true((psdl.validate(assert(psdl.read(dir .. "/corner.psdl")))))
  end)
end)

describe("psdl.write to a path that cannot be a file", function()
  it("names the path before any validation problem (a folder, a missing folder)", function()
    local dir = H.tmpdir(finally)
    -- a codec fixture with validation errors: the path problem comes first anyway
    local bad = assert(psdl.read("spec/fixtures/grid_n3.psdl"))
    for _, doc in ipairs { bad, assert(psdl.read("spec/fixtures/clean/street.psdl")) } do
      local ok, msg, code = psdl.write(doc, dir)
      assert.is_nil(ok)
      assert.equal("io", code)
      assert.equal("psdl: io: " .. dir .. ": Is a directory (a file name expected)", msg)
      ok, msg, code = psdl.write(doc, dir .. "/missing/a.psdl")
      assert.is_nil(ok)
      assert.equal("io", code)
      assert.equal("psdl: io: " .. dir .. "/missing/a.psdl: No such file or directory (the folder " .. dir
        .. "/missing does not exist)", msg)
    end
    -- a file in the current folder, and an existing folder, are still written
    local ok, msg = psdl.write(assert(psdl.read("spec/fixtures/clean/street.psdl")), dir .. "/ok.psdl")
    assert.is_true(ok, msg)
    -- write_checked, too
    local _, _, _, checked = require("psdl.document").check(bad, {}, true)
    local cok, cmsg, ccode = require("psdl.document").write_checked(checked, dir)
    assert.is_nil(cok)
    assert.equal("io", ccode)
    assert.matches("Is a directory", cmsg, 1, true)
  end)
end)
