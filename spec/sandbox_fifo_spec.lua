-- Specs for a script that waits on a pipe (newcomer round 6, #10): a sandboxed script's
-- io.open, io.lines and psdl.read refuse a FIFO (or socket, device) inside its folder before
-- opening it, naming the path and the script line; and `--timeout`, which counts processor
-- time, has a wall-clock backstop for a run blocked in the system (a --trust script opening a
-- FIFO), which ends the process with a message (psdl.control.wall_limit).

local H = require "helper"

local function fifo_dir()
  local dir = H.tmpdir(finally)
  local out, ok = H.run("mkfifo " .. H.q(dir .. "/fifo"))
  assert(ok, out)
  return dir
end

describe("a FIFO in the script's folder", function()
  for _, case in ipairs {
    { "io.open", 'local f = io.open("fifo")\nreturn f' },
    { "io.lines", 'for l in io.lines("fifo") do end\nreturn nil' },
    { "psdl.read", 'local d = psdl.read("fifo")\nreturn d' },
    { "a link to it", 'local f = io.open("link")\nreturn f' },
  } do
    it("is refused by a sandboxed " .. case[1] .. ", naming the path and the line, without blocking", function()
      local dir = fifo_dir()
      assert(H.run("ln -s fifo " .. H.q(dir .. "/link")))
      H.write_bytes(dir .. "/s.lua", case[2] .. "\n")
      local code, _, err = H.cli("build", dir .. "/s.lua", "-o", dir .. "/s.psdl", "--timeout", "5")
      assert.equal(2, code, err)
      assert.matches("s.lua:1: [^\n]*/[fifolnk]+: not a regular file %(a named pipe%): a sandboxed city script reads only "
        .. "regular files", err)
      assert.is_false(H.exists(dir .. "/s.psdl"))
    end)
  end
end)

describe("the wall-clock backstop of --timeout", function()
  it("ends a --trust run blocked on a FIFO, with a message, exit 2", function()
    local dir = fifo_dir()
    H.write_bytes(dir .. "/s.lua", 'local f = io.open(SCRIPT_DIR .. "/fifo")\nreturn f\n')
    -- the backstop made short for the test: 1 x --timeout 1 + 1 s
    local driver = dir .. "/driver.lua"
    H.write_bytes(driver, table.concat({
      'package.path = "lua/?.lua;lua/?/init.lua;" .. package.path',
      'package.cpath = (os.getenv("PSDL_BUILD_DIR") or "build") .. "/?.so;" .. package.cpath',
      'local source = require "psdl.cli.source"',
      "source.WALL_FACTOR, source.WALL_EXTRA = 1, 1",
      'os.exit(require("psdl.cli").main({ "build", arg[1], "-o", arg[2], "--trust", "--timeout", "1" }))', "" }, "\n"))
    local t0 = os.time()
    local out = H.sh("timeout 60 lua5.4 " .. H.q(driver) .. " " .. H.q(dir .. "/s.lua") .. " " .. H.q(dir .. "/s.psdl"))
    assert.matches("exit=2\n$", out)
    assert.matches("s.lua: stopped after 2 s of real time, the backstop of --timeout 1 (1 x its processor seconds "
      .. "+ 1 s): the script or its build waited for something, a file or a pipe", out, 1, true)
    assert.is_true(os.time() - t0 < 50)
    assert.is_false(H.exists(dir .. "/s.psdl"))
  end)
end)
