--- A small local HTTP server for `psdl view --watch`, on lua-socket (TCP) and its URL
-- parser (`socket.url`). It listens on 127.0.0.1 only, answers `GET` (and `HEAD`) with
-- whatever a handler returns, one request per connection (`Connection: close`), and never
-- reads a request body. Requests are handled one after the other between the watch loop's
-- file checks; that is plenty for one page polling a few times a second. A request whose
-- `Host:` header names anything but this machine (`127.0.0.1`, `localhost`, `[::1]`, with
-- or without the port) is refused with 403, so that a web page whose own name was made to
-- point at 127.0.0.1 (DNS rebinding) cannot read the city or the page.
-- @module psdl.serve

local string, table, tostring, tonumber, pcall, require, math = string, table, tostring, tonumber, pcall, require, math

local M = {}

local REASON = { [200] = "OK", [400] = "Bad Request", [403] = "Forbidden", [404] = "Not Found", [405] = "Method Not Allowed",
  [500] = "Internal Server Error" }

local MAX_HEADER_LINES = 100

local LOOPBACK = { ["127.0.0.1"] = true, ["localhost"] = true, ["[::1]"] = true }

--- Whether a request's `Host:` header value names this machine: `127.0.0.1`, `localhost`
-- or `[::1]` (any case, an optional trailing dot on `localhost`), with or without `:port`.
-- A request without the header (HTTP/1.0 tools) is accepted: browsers always send it.
-- @tparam string|nil host the header's value, nil when there was none
-- @treturn boolean
function M.loopback_host(host)
  if host == nil then return true end
  local name = host:match("^%s*(.-)%s*$"):lower()
  name = name:match("^(%[[^%]]*%]):%d+$") or name:match("^([^:%[]+):%d+$") or name
  name = name:gsub("^localhost%.$", "localhost")
  return LOOPBACK[name] == true
end

--- Start listening.
-- @tparam table opts `port` (0: any free port), `handler` (function(path, query) ->
--   status, content type, body), `log` (function(line), optional)
-- @treturn[1] table server with `port`, `url`, `step(timeout)` (wait up to `timeout`
--   seconds for a request and answer it) and `close()`
-- @return[2] nil
-- @treturn[2] string message (the port is taken, ...)
function M.listen(opts)
  local socket = require "socket"
  local url = require "socket.url"
  local srv, err = socket.bind("127.0.0.1", opts.port or 0)
  if not srv then return nil, string.format("cannot listen on 127.0.0.1:%s: %s", tostring(opts.port), tostring(err)) end
  local _, port = srv:getsockname()
  srv:settimeout(0)
  local server = { port = math.tointeger(tonumber(port)) }
  server.url = string.format("http://127.0.0.1:%s/", tostring(port))

  local function answer(client)
    client:settimeout(5)
    local line = client:receive("*l")
    if not line then return end
    local method, target = line:match("^(%u+) (%S+) HTTP/%d%.%d$")
    local status, ctype, body
    if not method then
      status, ctype, body = 400, "text/plain", "bad request line\n"
    else
      -- the header lines, up to the blank line (only Host is used)
      local host, hosts = nil, 0
      for _ = 1, MAX_HEADER_LINES do
        local h = client:receive("*l")
        if not h or h == "" then break end
        local value = h:match("^[Hh][Oo][Ss][Tt]:(.*)$")
        if value then host, hosts = value, hosts + 1 end
      end
      if hosts > 1 or not M.loopback_host(host) then
        status, ctype, body = 403, "text/plain", "this server answers requests for 127.0.0.1 or localhost only\n"
      elseif method ~= "GET" and method ~= "HEAD" then
        status, ctype, body = 405, "text/plain", "only GET and HEAD\n"
      else
        local parsed = url.parse(target) or {}
        local ok, s, c, b = pcall(opts.handler, url.unescape(parsed.path or "/"), parsed.query)
        if ok then
          status, ctype, body = s, c, b
        else
          status, ctype, body = 500, "text/plain", tostring(s) .. "\n"
        end
      end
    end
    body = body or ""
    local head = table.concat {
      "HTTP/1.1 ", tostring(status), " ", REASON[status] or "Status", "\r\n",
      "Content-Type: ", ctype or "application/octet-stream", "\r\n",
      "Content-Length: ", tostring(#body), "\r\n",
      "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
    }
    client:send(head)
    if method ~= "HEAD" then client:send(body) end
    if opts.log then opts.log(string.format("%s %s %d", tostring(method), tostring(target), status)) end
  end

  function server.step(timeout)
    local ready = socket.select({ srv }, nil, timeout)
    if not ready or not ready[1] then return end
    for _ = 1, 16 do
      local client = srv:accept()
      if not client then break end
      pcall(answer, client)
      client:close()
    end
  end

  function server.close()
    srv:close()
  end
  return server
end

return M
