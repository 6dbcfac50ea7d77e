--- The cost bound of a Lua pattern match, for the sandbox (`psdl.sandbox` guards
-- `string.find`, `match`, `gmatch` and `gsub` with it, for the script and for the library
-- code it calls): Lua's matcher runs in C, where `--timeout` cannot stop it.
-- @module psdl.pattern_cost

local type, string, math = type, string, math

local M = {}

-- The place after a set `[...]` that starts at i (a ']' first, or after '^', is part of it).
local function set_end(pattern, i)
  local ssub, len = string.sub, #pattern
  local j = i + 1
  if ssub(pattern, j, j) == "^" then j = j + 1 end
  if ssub(pattern, j, j) == "]" then j = j + 1 end
  while j <= len and ssub(pattern, j, j) ~= "]" do
    if ssub(pattern, j, j) == "%" then j = j + 1 end
    j = j + 1
  end
  return j + 1
end

--- Largest number of matching steps a pattern may be expected to take in a sandbox.
M.STEPS = 1e9

-- What a pattern's bound is made of (M.ok): `f` factors of n, `q` optional items, `reps`
-- repetitions (for the message), `safe`: the longest subject it always runs on.
local function analyse(pattern, gmatch)
  -- (the real string functions: a method call here would come back through the guard)
  local ssub, sfind = string.sub, string.find
  if not sfind(pattern, "[%*%+%-%?%%]") then -- (plain text: one step a start)
    return { f = 0, q = 0, reps = 0, safe = math.huge, steps = M.STEPS }
  end
  local len = #pattern
  local i, anchored = 1, false
  if ssub(pattern, 1, 1) == "^" then anchored = not gmatch; i = 2 end
  local k, q, last_rep = 0, 0, false -- factors of n, optional items, the last item was a repetition
  local first -- what the first item (captures aside) is: "rep" when a repetition
  while i <= len do
    local c = ssub(pattern, i, i)
    local single = true
    if c == "(" or c == ")" then
      single = false
      i = i + 1
      if c == "(" then last_rep = false end
    elseif c == "%" then
      local d = ssub(pattern, i + 1, i + 1)
      if d == "b" then -- (a balance scans on, it does not branch: not counted)
        single, i = false, i + 4
      elseif d == "f" then -- a frontier: its set follows
        single, i = false, set_end(pattern, i + 2)
      elseif sfind(d, "^%d$") then
        k, single, i = k + 1, false, i + 2
      else
        i = i + 2
      end
    elseif c == "[" then -- a set: up to its closing bracket (a ']' first is part of it)
      i = set_end(pattern, i)
    elseif c == "$" and i == len then
      single, i = false, i + 1
    else
      i = i + 1
    end
    if single then
      local r = ssub(pattern, i, i)
      if r == "*" or r == "+" or r == "-" then
        k, i, last_rep = k + 1, i + 1, true
        first = first or "rep"
      else
        if r == "?" then q, i = q + 1, i + 1 end
        last_rep = false
      end
      first = first or "other"
    elseif c ~= ")" and c ~= "$" then
      last_rep = false
    end
  end
  if last_rep then k = k - 1 end -- (a final repetition ends the match)
  local starts = (not anchored and k >= 2 and first == "rep") and 1 or 0
  local f = k + starts
  local safe = math.huge
  if f >= 3 or q >= 16 then
    -- (f * log(n + 1) + q * log 2 <= log STEPS for every n up to safe)
    local room = math.log(M.STEPS, 10) - q * math.log(2, 10)
    if room < 0 then safe = -1 elseif f > 0 then safe = math.floor(10 ^ (room / f)) - 2 end
  end
  return { f = f, q = q, reps = k + (last_rep and 1 or 0), safe = safe, steps = M.STEPS }
end

-- Patterns seen (analyse's results, by gmatch or not), up to 4,096 of them.
local memo, memo_n = { [false] = {}, [true] = {} }, 0

--- Whether a pattern match is bounded enough to run in the sandbox. Lua's pattern matcher
-- runs in C, out of reach of the `--timeout` hook, and backtracks. The bound counted: each
-- unbounded repetition (`*`, `+`, `-`) or back-reference (`%1`) can take n + 1 ways (or
-- steps) on a subject of n bytes and each optional item (`?`) two, multiplied
-- (`("a"):rep(30000):find(".-.-.-.-.-.-b")` runs for hours, `("a"):rep(60):find(("a?"):rep(60)
-- .. ("a"):rep(60))` for ever); a final repetition (followed only by `)` and `$`) is not
-- counted (it ends the match, it does not backtrack into the rest); a pattern not anchored
-- with `^` (and every `gmatch`) is tried at each of the n + 1 starts, counted when it has two
-- or more repetitions and begins with one (`a*a*b`, `(.-)%1b`; one that begins with literal
-- text, `bad argument #%d+ to '[^']*' %((.*)%)$` as the library matches messages, starts
-- only where that text is). A match is refused when that exceeds `STEPS` with three or
-- more factors of n or 16 or more `?`; one or two repetitions (`^(%S+)%s+(.*)$`, `([^,]*),`) always
-- run: at most n² steps, as the library's own line parsing (a known gap: `("a"):rep(1e6)
-- :find("a*b")` takes minutes). Plain finds always run.
-- @tparam any subject
-- @tparam any pattern
-- @tparam[opt] boolean plain `string.find`'s plain flag
-- @tparam[opt] string name the function (`"gmatch"`: `^` is no anchor)
-- @treturn boolean
-- @treturn[opt] string why not
function M.ok(subject, pattern, plain, name)
  if plain or type(subject) ~= "string" or type(pattern) ~= "string" then return true end
  local gmatch = name == "gmatch"
  local a = memo[gmatch][pattern]
  if not a or a.steps ~= M.STEPS then
    a = analyse(pattern, gmatch)
    if memo_n >= 4096 then memo, memo_n = { [false] = {}, [true] = {} }, 0 end
    memo[gmatch][pattern], memo_n = a, memo_n + 1
  end
  local n = #subject
  if n <= a.safe then return true end
  if a.f * math.log(n + 1, 10) + a.q * math.log(2, 10) > math.log(M.STEPS, 10) then
    return false, string.format("a pattern with %d repetitions%s over %d bytes could run for hours (Lua's matcher "
      .. "is out of reach of --timeout): match shorter pieces (one line at a time)", a.reps,
      a.q > 0 and string.format(" and %d optional items", a.q) or "", n)
  end
  return true
end

return M
