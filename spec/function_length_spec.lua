-- File and function lengths in lua/ (spec/function_lengths.lua): no file over 800 lines, no
-- function longer than 150 lines of its own (functions nested in it counted apart) without a
-- `-- long: reason` comment at its top (issue 13 §3). A new long one fails here until it is
-- split or says why not.
local F = require "function_lengths"
local H = require "helper"

-- Long functions in code other sessions are reworking today; they get their reason (or their
-- split) there. Keyed "file name".
local PENDING = {
}

describe("function lengths", function()
  it("measures a function's own lines, its nested functions apart, and reads its reason", function()
    local dir = H.tmpdir(finally)
    local path = dir .. "/sample.lua"
    local f = assert(io.open(path, "w"))
    f:write(table.concat({
      "local M = {}",                       -- 1
      "-- what it does",                    -- 2
      "-- long: a reason",                  -- 3
      "function M.outer(x)",                -- 4
      "  local function inner(y)",          -- 5
      "    return y + 1",                   -- 6
      "  end",                              -- 7
      "  return inner(x)",                  -- 8
      "end",                                -- 9
      "local g = function() return 1 end",  -- 10
      "return M",                           -- 11
    }, "\n") .. "\n")
    f:close()
    local fns = F.functions(path)
    assert.equal(3, #fns)
    assert.same({ "M.outer", 4, 9, 6, 3, "a reason" },
      { fns[1].name, fns[1].first, fns[1].last, fns[1].span, fns[1].own, fns[1].reason })
    assert.same({ "inner", 5, 7, 3, 3 }, { fns[2].name, fns[2].first, fns[2].last, fns[2].span, fns[2].own })
    assert.is_nil(fns[2].reason)
    assert.same({ "g", 10, 1 }, { fns[3].name, fns[3].first, fns[3].own })
  end)

  it("no function in lua/ is over " .. F.LIMIT .. " lines without a `-- long:` reason at its top", function()
    local bad, seen = {}, {}
    for _, fn in ipairs(F.long("lua")) do
      local key = fn.file .. " " .. fn.name
      seen[key] = true
      if not fn.reason and not PENDING[key] then
        bad[#bad + 1] = string.format("%s:%d %s: %d lines", fn.file, fn.first, fn.name, fn.own)
      end
    end
    assert.same({}, bad)
    -- a pending entry that is no longer long is taken off the list
    for key in pairs(PENDING) do
      if not seen[key] then error("PENDING lists " .. key .. ", which is no longer over the limit") end
    end
  end)

  it("no file in lua/ is over 800 lines", function()
    local bad = {}
    for _, path in ipairs(F.files("lua")) do
      local n = 0
      for _ in io.lines(path) do n = n + 1 end
      if n > 800 then bad[#bad + 1] = path .. ": " .. n .. " lines" end
    end
    assert.same({}, bad)
  end)
end)
