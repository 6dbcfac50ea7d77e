--- Who holds the live Lua heap: a walk over everything reachable from the registry and from
-- the locals of the functions on the calling thread's stack, each object counted once, under
-- the first path that reached it (breadth first), cut to `depth` names (`roads.[#].spec`:
-- every road's spec together; `[#]` stands for any integer key). Bytes are estimated the way
-- lua5.4 lays objects out on x86-64: a table 56 bytes, 16 per array slot and 24 per hash node
-- (the hash rounded up to a power of two), a string 24 plus its length, a closure or a full
-- userdata's header 40 (a userdata's own block is not seen: psdl's stores and pools keep
-- theirs in C). Weak keys and weak values are not followed. Used by bench/city_growth.lua
-- `--heap N --holders K` (issue 13, growth: what stays live between the phases of a build).
--
--   local holders = dofile("bench/lua_heap.lua")
--   for _, h in ipairs(holders(4, 20)) do print(h.path, h.objects, h.bytes) end
--
-- @tparam integer depth names kept per path (locals count as one: `L3:b`)
-- @tparam integer top how many holders to return, largest first
-- @tparam[opt] integer level the first stack level whose locals are roots (default 3: the
-- caller of the function that calls this)
-- @treturn table list of `{path =, objects =, bytes =}`
return function(depth, top, level)
  local seen, queue, head = {}, {}, 1
  local agg = {}
  seen[seen], seen[queue], seen[agg] = true, true, true
  local function push(v, path, d)
    local tv = type(v)
    if (tv == "table" or tv == "function" or tv == "userdata" or tv == "thread") and not seen[v] then
      seen[v] = true
      queue[#queue + 1] = { v, path, d }
    end
  end
  for lv = level or 3, 200 do
    local info = debug.getinfo(lv, "S")
    if not info then break end
    local i = 1
    while true do
      local name, v = debug.getlocal(lv, i)
      if not name then break end
      push(v, string.format("L%d:%s", lv, name), 1)
      i = i + 1
    end
  end
  push(debug.getregistry(), "REG", 0)
  while queue[head] do
    local item = queue[head]
    queue[head], head = nil, head + 1
    local v, path, d = item[1], item[2], item[3]
    local bytes = 0
    local function child(c, name)
      if type(c) == "string" and not seen[c] then
        seen[c] = true
        bytes = bytes + 24 + #c
      end
      push(c, d < depth and (path .. "." .. name) or path, d + 1)
    end
    local tv = type(v)
    if tv == "table" then
      local mt = getmetatable(v)
      local mode = type(mt) == "table" and rawget(mt, "__mode")
      local weak_k = type(mode) == "string" and mode:find("k")
      local weak_v = type(mode) == "string" and mode:find("v")
      local an, hn = rawlen(v), 0
      for k, x in next, v do
        if not (math.type(k) == "integer" and k >= 1 and k <= an) then hn = hn + 1 end
        if not weak_k then child(k, "<key>") end
        if not weak_v then child(x, type(k) == "string" and k or (math.type(k) == "integer" and "[#]" or "[" .. type(k) .. "]")) end
      end
      if mt then child(mt, "<mt>") end
      local hs = hn > 0 and 1 or 0
      while hs < hn do hs = hs * 2 end
      bytes = bytes + 56 + 16 * an + 24 * hs
    elseif tv == "function" then
      local i = 1
      while true do
        local name, uv = debug.getupvalue(v, i)
        if not name then break end
        child(uv, "^" .. (name ~= "" and name or "?"))
        i = i + 1
      end
      bytes = bytes + 40
    elseif tv == "userdata" then
      local mt = getmetatable(v)
      if mt then child(mt, "<mt>") end
      local n = 1
      while true do
        local uv, ok = debug.getuservalue(v, n)
        if not ok then break end
        child(uv, "<uv>")
        n = n + 1
      end
      bytes = bytes + 40
    else
      bytes = bytes + 200 -- a thread (its stack is not walked)
    end
    local a = agg[path]
    if not a then
      a = { path = path, objects = 0, bytes = 0 }
      agg[path] = a
    end
    a.objects, a.bytes = a.objects + 1, a.bytes + bytes
  end
  local list = {}
  for _, a in pairs(agg) do list[#list + 1] = a end
  table.sort(list, function(x, y) return x.bytes > y.bytes end)
  for i = #list, top + 1, -1 do list[i] = nil end
  return list
end
