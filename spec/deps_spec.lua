-- Specs for scripts/deps.sh (sourced by scripts/run and scripts/test): missing Debian
-- packages are installed, waiting while another apt process holds the lock, and the
-- package list has what the project needs (luarocks for the rockspec check).
-- apt-get, dpkg-query and sudo are stand-ins on PATH: nothing is installed for real.

local lfs = require "lfs"
local H = require "helper"
local q = H.q

local function script(path, text)
  H.write_bytes(path, "#!/bin/sh\n" .. text)
  os.execute("chmod +x " .. q(path))
end

-- Fake tools in dir: apt-get fails `locked` times with a lock message, then succeeds;
-- every call is logged to dir/apt.log.
local function fakes(dir, locked)
  script(dir .. "/dpkg-query", "exit 1\n") -- nothing installed
  script(dir .. "/sudo", 'exec "$@"\n')
  H.write_bytes(dir .. "/count", "0")
  script(dir .. "/apt-get", string.format([[
echo "apt-get $*" >> %s/apt.log
n=$(cat %s/count); echo $((n + 1)) > %s/count
if [ "$n" -lt %d ]; then
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
exit 0
]], dir, dir, dir, locked))
end

local function run(dir, env)
  local cmd = string.format("cd %s && PATH=%s:$PATH PSDL_APT_RETRY_SLEEP=0 %s bash -c '. scripts/deps.sh; "
    .. "psdl_install_deps; echo status=$?' 2>&1", q(lfs.currentdir()), q(dir), env or "")
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return out
end

describe("scripts/deps.sh", function()
  it("waits for the apt lock with a message and retries", function()
    local dir = H.tmpdir(finally)
    fakes(dir, 2)
    local out = run(dir)
    assert.matches("status=0", out, 1, true)
    assert.matches("another apt/dpkg process holds the package lock; waiting", out, 1, true)
    local log = H.read_bytes(dir .. "/apt.log")
    local calls = {}
    for line in log:gmatch("[^\n]+") do calls[#calls + 1] = line end
    assert.equal(4, #calls) -- update locked twice, update, install
    assert.matches("DPkg::Lock::Timeout=", calls[1], 1, true)
    assert.matches(" update ", calls[3] .. " ", 1, true)
    assert.matches(" install ", calls[4], 1, true)
    assert.matches(" luarocks", calls[4], 1, true)
  end)

  it("gives up with a message when the lock stays held past PSDL_APT_LOCK_WAIT", function()
    local dir = H.tmpdir(finally)
    fakes(dir, 1000)
    local out = run(dir, "PSDL_APT_LOCK_WAIT=0")
    assert.matches("status=1", out, 1, true)
    assert.matches("still holds the package lock", out, 1, true)
  end)
end)
