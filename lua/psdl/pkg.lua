--- PKG3 model packages such as `geometry/hudmap_<map>.pkg` (docs/companion-formats.md §7.2;
-- tables in docs/companion.md): `psdl.pkg.read/decode/encode/write/validate`.
--
-- Validation rules (severity): `missing_shaders` (E: geometry chunks but no `shaders`),
-- `shader_index` (E: a section's shader past the paint job's list), `geometry_first` (W:
-- a geometry chunk after `shaders`, unlike PKGIE's order the game loads), `fvf` (W: not
-- 0x112 or 0x102, the retail layouts), `primitive` (W: not 3), `texture_name` (W: > 31
-- bytes), `raw_chunk` (W: a geometry-named chunk the codec keeps raw).
-- @module psdl.pkg

local companion = require "psdl.companion"
local ipairs = ipairs

local function validate(t, _, opts)
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
  return P.result(opts.strict)
end

return companion.codec("pkg", validate)
