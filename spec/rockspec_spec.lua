-- Spec for installing psdlkit like any Lua module: `luarocks make` of
-- rockspecs/psdlkit-scm-1.rockspec (CMake build type) into a temporary tree, then the
-- installed `psdl`, `psdl.core` and `psdl` command used from another folder.
-- Needs Debian's `luarocks` (scripts/deps.sh installs it); about a minute (a C build).

local lfs = require "lfs"
local psdl = require "psdl"
local H = require "helper"

local ROOT = assert(psdl.real_path("."))

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function sh(cmd)
  local p = assert(io.popen("(" .. cmd .. ") 2>&1; echo \"exit=$?\""))
  local out = p:read("a")
  p:close()
  return out
end

describe("rockspecs/psdlkit-scm-1.rockspec", function()
  it("installs psdl, psdl.core and the psdl command with luarocks make, used from another folder", function()
    local dir = H.tmpdir(finally)
    -- a copy of what the build needs, so the build folder luarocks makes stays out of the tree
    local out = sh(string.format("mkdir %s/src && cd %s && cp -R CMakeLists.txt src lua scripts rockspecs %s/src/",
      q(dir), q(ROOT), q(dir)))
    assert.matches("exit=0", out, 1, true)
    local tree = dir .. "/tree"
    out = sh(string.format("cd %s/src && luarocks --lua-version 5.4 make --tree %s --deps-mode none "
      .. "rockspecs/psdlkit-scm-1.rockspec", q(dir), q(tree)))
    assert.matches("exit=0", out, 1, true)
    assert.matches("psdlkit scm-1 is now installed", out, 1, true)
    -- from another folder, with the tree on the paths (`luarocks path`), and nothing of the
    -- clone: the modules resolve into the tree
    local elsewhere = dir .. "/elsewhere"
    assert(lfs.mkdir(elsewhere))
    H.write_bytes(elsewhere .. "/city.psdl", H.read_bytes(ROOT .. "/spec/fixtures/grid_n2.psdl"))
    local env = string.format("cd %s && eval \"$(luarocks --lua-version 5.4 --tree %s path)\" && ",
      q(elsewhere), q(tree))
    out = sh(env .. [[lua5.4 -e 'local p = require "psdl"
      print(package.searchpath("psdl", package.path)); print(package.searchpath("psdl.core", package.cpath))
      local doc = assert(p.read("city.psdl")); print("rooms " .. #doc.rooms)']])
    assert.matches("exit=0", out, 1, true)
    assert.matches(tree .. "/share/lua/5.4/psdl/init.lua", out, 1, true)
    assert.matches(tree .. "/lib/lua/5.4/psdl/core.so", out, 1, true)
    assert.matches("rooms 9", out, 1, true)
    out = sh(env .. q(tree .. "/bin/psdl") .. " info city.psdl")
    assert.matches("exit=0", out, 1, true)
    assert.matches("rooms            10 (9 records", out, 1, true)
    out = sh(env .. q(tree .. "/bin/psdl") .. " --version")
    assert.matches("psdl (psdlkit)", out, 1, true)
  end)
end)
