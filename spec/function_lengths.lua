--- Function lengths of the Lua modules (lua/): every function's first and last line as
-- `luac5.4 -l` reports them, its own length (lines, without the functions nested in it),
-- and the `-- long:` reason written at its top, if any.
--
--     lua5.4 spec/function_lengths.lua [LIMIT]     list the functions over LIMIT lines (150)
--
-- Run from the repository root. Used by spec/function_length_spec.lua.
local M = {}

--- The limit (lines of a function's own body) above which a function needs a reason.
M.LIMIT = 150

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- The Lua files under a folder, sorted.
-- @tparam string dir e.g. "lua"
-- @treturn {string,...}
function M.files(dir)
  local p = assert(io.popen("find " .. q(dir) .. " -name '*.lua' -type f | sort"))
  local list = {}
  for line in p:lines() do list[#list + 1] = line end
  p:close()
  return list
end

-- The name a function is defined under, from its first line ("M.run", "City:road",
-- "local note", "field = function"), or "function at line N".
local function name_of(line, n)
  local name = line:match("function%s+([%w_%.:]+)%s*%(")
  if name then return name end
  name = line:match("([%w_%.%[%]\"]+)%s*=%s*function%s*%(")
  if name then return name end
  return "function at line " .. n
end

-- The `-- long: reason` written on the function's first line or in the comment block right
-- above it.
local function reason_of(lines, first)
  local r = lines[first] and lines[first]:match("%-%-%s*long:%s*(.-)%s*$")
  if r then return r end
  local i = first - 1
  while i >= 1 and lines[i]:match("^%s*%-%-") do
    r = lines[i]:match("^%s*%-%-%-?%s*long:%s*(.-)%s*$")
    if r then return r end
    i = i - 1
  end
  return nil
end

--- Every function of a file: `{ file, name, first, last, span, own, reason }` (`span`: lines
-- from `function` to `end`; `own`: span less the spans of the functions nested directly in
-- it). Raises when luac5.4 cannot compile the file.
-- @tparam string path
-- @treturn table list
function M.functions(path)
  local p = assert(io.popen("luac5.4 -p -l " .. q(path) .. " 2>&1"))
  local out = p:read("a")
  p:close()
  local fns = {}
  for a, b in out:gmatch("\nfunction <[^>]-:(%d+),(%d+)>") do
    a, b = tonumber(a), tonumber(b)
    fns[#fns + 1] = { first = a, last = b, span = b - a + 1 }
  end
  if not out:find("main <", 1, true) then error(path .. ": " .. out) end
  local lines = {}
  local f = assert(io.open(path))
  for l in f:lines() do lines[#lines + 1] = l end
  f:close()
  table.sort(fns, function(x, y) return x.first < y.first end)
  -- own lines: subtract the direct children (functions inside, not inside another child)
  for i, fn in ipairs(fns) do
    fn.own = fn.span
    local j, child_end = i + 1, 0
    while fns[j] and fns[j].first <= fn.last do
      local c = fns[j]
      if c.first > child_end then
        fn.own = fn.own - c.span
        child_end = c.last
      end
      j = j + 1
    end
    fn.file = path
    fn.name = name_of(lines[fn.first] or "", fn.first)
    fn.reason = reason_of(lines, fn.first)
  end
  return fns
end

--- The functions of the files under `dir` whose own length is over `limit`.
-- @treturn table list, longest first
function M.long(dir, limit)
  limit = limit or M.LIMIT
  local list = {}
  for _, path in ipairs(M.files(dir)) do
    for _, fn in ipairs(M.functions(path)) do
      if fn.own > limit then list[#list + 1] = fn end
    end
  end
  table.sort(list, function(x, y) return x.own > y.own end)
  return list
end

if arg and arg[0] and arg[0]:match("function_lengths%.lua$") then
  local limit = tonumber(arg[1]) or M.LIMIT
  for _, fn in ipairs(M.long("lua", limit)) do
    print(string.format("%4d own %4d span  %s:%d  %s%s", fn.own, fn.span, fn.file, fn.first, fn.name,
      fn.reason and ("  -- long: " .. fn.reason) or ""))
  end
end

return M
