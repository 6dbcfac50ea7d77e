--- Lua VM instructions of one `psdl` command, in millions (a count hook every 1,000
-- instructions; load-independent, unlike CPU seconds). C kernels count nothing.
--
--     lua5.4 bench/vm_count.lua TREE psdl-arguments...
--
-- TREE is the source tree whose lua/ and build/ run the command; prints the figure last.
local root = assert(arg[1], "usage: lua5.4 bench/vm_count.lua TREE psdl-arguments...")
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/?.so;" .. package.cpath
collectgarbage("incremental")
local args = {}
for i = 2, #arg do args[#args + 1] = arg[i] end
local cli = require "psdl.cli"
cli.root, cli.build_dir = root, root .. "/build"
local count = 0
debug.sethook(function() count = count + 1 end, "", 1000)
local rc = cli.main(args)
debug.sethook()
if rc ~= 0 and rc ~= true and rc ~= nil then io.stderr:write("exit status " .. tostring(rc) .. "\n") end
print(string.format("%.1f", count / 1000))
