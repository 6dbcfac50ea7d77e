--- Ground of psdl.city.blocks (step 3 of `fill`): fans over each room, cut again under a
-- height function so that inner points follow it.

local core = require "psdl.core"
local plan = require "psdl.plan"

local ipairs = ipairs
local abs, floor, max, min, huge = math.abs, math.floor, math.max, math.min, math.huge
local refs_level = core.refs_level

-- Installed by psdl.city.blocks (city/blocks/init.lua): M is the module table, Ctx the
-- context class of one `fill`, private the helpers shared between the blocks files.
return function(M, Ctx, private)

  -- ================================================================ ground

  -- Heights of the ground surface at plan points, from its triangles (flat rooms: constant).
  local function sampler(tris, flat_y)
    if flat_y then return function() return flat_y end end
    local grid = plan.grid(12)
    for ti, t in ipairs(tris) do
      grid:insert(ti, min(t[1], t[4], t[7]), min(t[3], t[6], t[9]), max(t[1], t[4], t[7]), max(t[3], t[6], t[9]))
    end
    return function(x, z)
      local l = grid:cell(x, z)
      local bestd, besty = huge, nil
      if l then
        for _, ti in ipairs(l) do
          local t = tris[ti]
          local ax, az, bx, bz, cx, cz = t[1], t[3], t[4], t[6], t[7], t[9]
          local d = (bz - cz) * (ax - cx) + (cx - bx) * (az - cz)
          if abs(d) > 1e-12 then
            local l1 = ((bz - cz) * (x - cx) + (cx - bx) * (z - cz)) / d
            local l2 = ((cz - az) * (x - cx) + (ax - cx) * (z - cz)) / d
            local l3 = 1 - l1 - l2
            local m = min(l1, l2, l3)
            if m >= -1e-6 then return l1 * t[2] + l2 * t[5] + l3 * t[8] end
            if -m < bestd then bestd, besty = -m, l1 * t[2] + l2 * t[5] + l3 * t[8] end
          end
        end
      end
      if besty then return besty end
      -- outside every triangle (a point on the rim): the nearest vertex
      local bd, by = huge, 0
      for _, t in ipairs(tris) do
        for k = 0, 6, 3 do
          local dx, dz = t[k + 1] - x, t[k + 3] - z
          local dd = dx * dx + dz * dz
          if dd < bd then bd, by = dd, t[k + 2] end
        end
      end
      return by
    end
  end

  -- Ground fans of a room over polygon pieces (hubs the decomposition adds follow the height
  -- function). With `flat_y` (every outline point at that height): returns nil, flat_y when
  -- every fan point is at it too, the ground being that plane; else the fans' triangles (x, y,
  -- z of three points each) as drawn, and nil.
  local function ground(ctx, r, pieces, texture, flat_y)
    local b = ctx.b
    local fans = {}
    local opts = ctx.height and { hub_height = function(x, z) return ctx:h(x, z, nil) end } or nil
    for _, g in ipairs(pieces) do
      local _, made = r:fan_refs(g.refs, texture, opts) -- the piece's references: no pooling again
      for _, refs in ipairs(made) do
        if #refs >= 3 then fans[#fans + 1] = refs end
      end
    end
    if flat_y then
      local y = refs_level(b.vpool, fans) -- every fan point's one height (nil: no fan point)
      if y == nil or y == flat_y then return nil, flat_y end
      flat_y = nil
    end
    local tris = {}
    for k = 1, #fans do fans[k] = b:flat_of(fans[k]) end -- the fan's points, x, y, z each
    for _, f in ipairs(fans) do
      local hx, hy, hz = f[1], f[2], f[3]
      for j = 3, #f // 3 do
        local i = 3 * j
        tris[#tris + 1] = { hx, hy, hz, f[i - 5], f[i - 4], f[i - 3], f[i - 2], f[i - 1], f[i] }
      end
    end
    return tris, nil
  end

  return {
    ground = ground,
    sampler = sampler,
  }
end
