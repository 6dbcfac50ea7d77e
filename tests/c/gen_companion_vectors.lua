-- tests/c/gen_companion_vectors.lua -- writes tests/c/companion_vectors.h from spec/companion_vectors.lua.
-- Run from the repository root: lua5.4 tests/c/gen_companion_vectors.lua > tests/c/companion_vectors.h
package.path = "./spec/?.lua;" .. package.path
local V = require "companion_vectors"
local ex = { { "bai", V.bai_example() }, { "cpvs", V.cpvs_example }, { "inst", V.inst_example .. V.inst_full },
  { "pathset", V.pathset_example }, { "pkg", V.pkg_example() }, { "tex", V.tex_example() } }
io.write("/* companion_vectors.h -- the minimal examples of docs/companion-formats.md as bytes (§2.12\n",
 " * .bai, §3.6 .cpvs, §4.6 .inst plus one full-matrix record, §5.2 .pathset, §7.3 PKG3, §9 .tex).\n",
 " * Generated from spec/companion_vectors.lua (string.pack from the documented layouts) with\n",
 " * `lua5.4 tests/c/gen_companion_vectors.lua > tests/c/companion_vectors.h`. */\n",
 "#ifndef COMPANION_VECTORS_H\n#define COMPANION_VECTORS_H\n\n")
for _, e in ipairs(ex) do
  io.write(("static const unsigned char vec_%s[%d] = {"):format(e[1], #e[2]))
  for i = 1, #e[2] do
    if (i - 1) % 16 == 0 then io.write("\n   ") end
    io.write((" 0x%02x,"):format(e[2]:byte(i)))
  end
  io.write("\n};\n\n")
end
io.write("#endif\n")
