--- A table filled on first use: the builder's lazy document (`Builder:lazy_document`) and the
-- blocks report's building list (`report.building_list`) are made only when a caller first
-- reads, writes, iterates or measures them (`#`). Lua 5.4 has no `__next`: `rawget` and
-- `next` see an empty table until then.
-- @module psdl.lazy
local setmetatable, getmetatable, rawget, rawset, rawlen, next = setmetatable, getmetatable, rawget, rawset, rawlen, next

local M = {}

--- A table that `fill(t)` fills (with rawset) on its first access, after which its metatable
-- is removed and it is a plain table.
-- @tparam function fill called once with the table, its metatable already removed
-- @treturn table the table
-- @treturn function force: fills it now (does nothing once filled)
function M.table(fill)
  local proxy = {}
  local function force()
    if getmetatable(proxy) == nil then return end
    setmetatable(proxy, nil)
    fill(proxy)
  end
  setmetatable(proxy, {
    __index = function(t, k) force(); return rawget(t, k) end,
    __newindex = function(t, k, v) force(); rawset(t, k, v) end,
    __pairs = function(t) force(); return next, t, nil end,
    __len = function(t) force(); return rawlen(t) end,
  })
  return proxy, force
end

return M
