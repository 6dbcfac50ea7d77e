--- PKG3 model packages such as `geometry/hudmap_<map>.pkg` (docs/companion-formats.md §7.2;
-- tables in docs/companion.md): `psdl.pkg.read/decode/encode/write/validate`.
--
-- Validation rules (severity): `missing_shaders` (E: geometry chunks but no `shaders`),
-- `shader_index` (E: a section's shader past the paint job's list), `geometry_first` (W:
-- a geometry chunk after `shaders`, unlike PKGIE's order the game loads), `fvf` (W: not
-- 0x112 or 0x102, the retail layouts), `primitive` (W: not 3), `texture_name` (W: > 31
-- bytes), `raw_chunk` (W: a geometry-named chunk the codec keeps raw).
-- With `opts.hudmap` (the minimap model `geometry/hudmap_<map>.pkg`, §7.1, §7.3):
-- `hudmap_lod` (E: no geometry chunk `H`, the LOD the game looks the map up at),
-- `hudmap_height` (E: a vertex at y >= 567 m, above the zoomed-in camera's near plane),
-- `hudmap_cover` (W with the PSDL: the mesh does not cover the city's XZ extent, so the
-- uncovered part reads as water), `hudmap_untextured` (W: a shader without a texture, which
-- may not show its colour and darkens at night).
-- @module psdl.pkg

local companion = require "psdl.companion"
local ipairs = ipairs

local function validate(t, doc, opts)
  local P = companion.problems()
  local shaders, seen_shaders, has_geometry = nil, false, false
  for _, c in ipairs(t.chunks or {}) do
    if c.shaders then shaders = c.shaders end
  end
  local per = shaders and shaders.paint_jobs[1] and #shaders.paint_jobs[1] or 0
  for i, c in ipairs(t.chunks or {}) do
    local cp = "chunks[" .. i .. "]"
    if c.shaders then
      seen_shaders = true
      for j, job in ipairs(c.shaders.paint_jobs) do
        for k, s in ipairs(job) do
          if s.texture and #s.texture > 31 then
            P.warning("texture_name", cp .. ".shaders.paint_jobs[" .. j .. "][" .. k .. "].texture", i,
              "%d bytes: keep names <= 31", #s.texture)
          end
        end
      end
    elseif c.geometry then
      has_geometry = true
      if seen_shaders then
        P.warning("geometry_first", cp, i, "geometry chunk %q after the shaders", c.name)
      end
      local g = c.geometry
      if g.fvf ~= 0x112 and g.fvf ~= 0x102 then
        P.warning("fvf", cp .. ".geometry.fvf", i, "fvf 0x%x: retail uses 0x112 or 0x102", g.fvf)
      end
      for s, sec in ipairs(g.sections) do
        if sec.shader > per then
          P.error("shader_index", cp .. ".geometry.sections[" .. s .. "].shader", i,
            "shader %d, a paint job has %d", sec.shader, per)
        end
        for k, pk in ipairs(sec.packets) do
          if pk.primitive ~= 3 then
            P.warning("primitive", cp .. ".geometry.sections[" .. s .. "].packets[" .. k .. "].primitive", i,
              "primitive %d: the game draws indexed triangle lists (3)", pk.primitive)
          end
        end
      end
    elseif c.data and c.name ~= "offset" and c.name ~= "xrefs" and c.name ~= "shaders" then
      P.warning("raw_chunk", cp, i, "chunk %q is kept as raw bytes (a layout the codec does not view)", c.name)
    end
  end
  if has_geometry and not shaders then
    P.error("missing_shaders", "chunks", nil, "geometry without a shaders chunk")
  end
  if opts.hudmap then
    local h
    for i, c in ipairs(t.chunks or {}) do
      if c.geometry and c.name:upper() == "H" then h = i end
    end
    if not h then
      P.error("hudmap_lod", "chunks", nil, "no geometry chunk \"H\": the game looks the hud map up at the high LOD (§7.2)")
    else
      local minx, minz, maxx, maxz, maxy = math.huge, math.huge, -math.huge, -math.huge, -math.huge
      for _, sec in ipairs(t.chunks[h].geometry.sections) do
        for _, pk in ipairs(sec.packets) do
          for _, v in ipairs(pk.vertices) do
            local p = v.position
            if p[1] < minx then minx = p[1] end
            if p[1] > maxx then maxx = p[1] end
            if p[3] < minz then minz = p[3] end
            if p[3] > maxz then maxz = p[3] end
            if p[2] > maxy then maxy = p[2] end
          end
        end
      end
      if maxy >= 567 then
        P.error("hudmap_height", "chunks[" .. h .. "].geometry", h, "a vertex at y = %g: the map camera looks down "
          .. "from 577 m with a 10 m near plane (§7.1)", maxy)
      end
      if doc and doc.vertices and #doc.vertices > 0 then
        local cx0, cz0, cx1, cz1 = math.huge, math.huge, -math.huge, -math.huge
        for _, v in ipairs(doc.vertices) do
          if v[1] < cx0 then cx0 = v[1] end
          if v[1] > cx1 then cx1 = v[1] end
          if v[3] < cz0 then cz0 = v[3] end
          if v[3] > cz1 then cz1 = v[3] end
        end
        local tol = 1
        if minx > cx0 + tol or minz > cz0 + tol or maxx < cx1 - tol or maxz < cz1 - tol then
          P.warning("hudmap_cover", "chunks[" .. h .. "].geometry", h, "the mesh spans x %g..%g, z %g..%g; the city "
            .. "spans x %g..%g, z %g..%g: the rest reads as water (§7.1)", minx, maxx, minz, maxz, cx0, cx1, cz0, cz1)
        end
      end
    end
    for _, c in ipairs(t.chunks or {}) do
      for j, job in ipairs(c.shaders and c.shaders.paint_jobs or {}) do
        for k, s in ipairs(job) do
          if not s.texture then
            P.warning("hudmap_untextured", "shaders.paint_jobs[" .. j .. "][" .. k .. "]", nil,
              "untextured shader: may not show its colour, darkens at night (§7.3)")
          end
        end
      end
    end
  end
  return P.result(opts.strict)
end

local M = companion.codec("pkg", validate)

--- The texture names a package's shaders use (each once, in order of first use): what the
-- package must ship as `texture/<name>.tex` (or find in the game).
-- @tparam table t a PKG table
-- @treturn table list of names
function M.textures(t)
  local list, seen = {}, {}
  for _, c in ipairs(t.chunks or {}) do
    for _, job in ipairs(c.shaders and c.shaders.paint_jobs or {}) do
      for _, s in ipairs(job) do
        if s.texture and not seen[s.texture:lower()] then
          seen[s.texture:lower()] = true
          list[#list + 1] = s.texture
        end
      end
    end
  end
  return list
end

return M
