--- Ground of psdl.city.blocks (step 3 of `fill`): fans over each room, cut again under a
-- height function so that inner points follow it.

local core = require "psdl.core"
local plan = require "psdl.plan"

local ipairs = ipairs
local abs, floor, max, min, huge = math.abs, math.floor, math.max, math.min, math.huge
local block_ground = core.block_ground
local string_format = string.format

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
  -- function), in one C call (psdl.core.block_ground, src/psdl_ground.c): for each piece what
  -- `Room:fan_refs` does, no Lua table per fan. `level`: true for the first piece's own
  -- height (one piece: the room's outline) or nil. `checked`: the pieces were tested for
  -- crossings already. Returns nil and the height when every fan point is at the level (the
  -- ground being that plane); else the fans' triangles (x, y, z of three points each, hub
  -- first) and nil.
  local function ground(ctx, r, pieces, texture, level, checked)
    local b = ctx.b
    if b.pending_doc then b.pending_doc() end -- a finished document not yet made is made now
    local hub = ctx.hub_height
    if hub == nil and ctx.height then
      hub = function(x, z) return ctx:h(x, z, nil) end
      ctx.hub_height = hub
    end
    local lists = { nil } -- (made at the size of the usual room of one piece)
    for k = 1, #pieces do lists[k] = pieces[k].refs end
    local res, k = block_ground(b.store, r.serial, texture.index, b.vpool, lists, level, hub, b.snap, checked,
      b.budget or nil)
    if res then
      if type(res) == "number" then return nil, res end
      return res, nil
    end
    if res == false then r:check_budget() end -- (raises: over the vertex budget)
    -- piece k refused (a bad reference, a crossing, no area, a hub out of range): the builder's
    -- own call raises its message
    r:fan_refs(pieces[k].refs, texture, hub and { hub_height = hub } or nil)
    error(string_format("psdl.city.blocks: the ground of piece %d of %s was refused", k, r:label()), 0)
  end

  return {
    ground = ground,
    sampler = sampler,
  }
end
