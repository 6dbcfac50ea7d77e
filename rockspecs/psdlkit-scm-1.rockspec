-- LuaRocks build of psdlkit: the Lua modules `psdl` and `psdl.*`, the C module
-- `psdl.core` and the `psdl` command, for Lua 5.4. From a clone:
--
--     luarocks --lua-version 5.4 make rockspecs/psdlkit-scm-1.rockspec
--
-- (add `--local` or `--tree DIR` to install outside the system tree). The build is the
-- project's CMake build (CMakeLists.txt) with the install folders pointed at the rock
-- tree; `cmake --install build` keeps working without LuaRocks. Needs a C compiler, CMake,
-- the Lua 5.4 headers and libpng (Debian: gcc make cmake liblua5.4-dev libpng-dev; mimalloc,
-- libmimalloc-dev, is used when found: docs/heap.md); the
-- Lua dependencies below are what the modules and the command use.
rockspec_format = "3.0"
package = "psdlkit"
version = "scm-1"
source = {
  url = "git+file://.", -- a clone; `luarocks make` builds the working tree
}
description = {
  summary = "Read, write, validate and generate Midtown Madness 2 city files (PSDL)",
  detailed = [[
A C99 core with a Lua 5.4 module and the `psdl` command: decode and encode PSDL byte for
byte, validate against the game's rules, edit textures, diff, export to OBJ/glTF, render
maps, build cities from Lua scripts or OpenStreetMap extracts, and read and write The Sims 2
terrain.]],
  license = "see the repository",
}
dependencies = {
  "lua == 5.4",
  "argparse",
  "lua-cjson",
  "luafilesystem",
  "luaexpat",
  "luasocket",
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    LUA_INCLUDE_DIR = "$(LUA_INCDIR)",
    PSDL_LUA_CMOD_DIR = "$(LIBDIR)",
    PSDL_LUA_LMOD_DIR = "$(LUADIR)",
    PSDL_BIN_DIR = "$(BINDIR)",
    PSDL_TESTS = "OFF",
  },
}
