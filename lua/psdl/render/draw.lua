--- Drawing of psdl.render: the page layout (map, legend band, scale bar) and the drawing
-- operations of a scene and its legend, shared by the PNG and SVG outputs.

local table, math = table, math
local type, ipairs, pairs, tostring, error, require, tonumber, next, select, setmetatable, utf8 =
  type, ipairs, pairs, tostring, error, require, tonumber, next, select, setmetatable, utf8
local floor, ceil, sqrt, abs, huge, max, min = math.floor, math.ceil, math.sqrt, math.abs, math.huge,
  math.max, math.min
local string_format, concat = string.format, table.concat

-- Installed by psdl.render (render/init.lua): M is the module table, private the helpers shared
-- between its files.
-- core.text_width (the rasterizer's glyph advance), the core loaded when first drawn
local function text_width(n, ls) return require("psdl.core").text_width(n, ls) end

return function(M, private)
  local CLASS, ROOF_LEVELS, finite = private.CLASS, private.ROOF_LEVELS, private.finite
  local inside, roof_color = private.inside, private.roof_color

  local function fmt_num(x)
    local s = string_format("%.2f", x):gsub("0+$", ""):gsub("%.$", "")
    if s == "-0" then s = "0" end
    return s
  end

  local function nice_length(maxlen)
    -- the largest 1, 2, 5 x 10^k not above maxlen
    if not (maxlen > 0) then return 1 end
    local p = 10 ^ floor(math.log(maxlen, 10))
    for _, m in ipairs { 5, 2, 1 } do
      if m * p <= maxlen then return m * p end
    end
    return p
  end

  -- Legend items for a scene: {kind =, label =, ...}.
  local function legend_items(scene, opts)
    local items = {}
    for _, c in ipairs(M.classes) do
      if scene.counts[c.name] then
        local label = c.label
        if c.name == "roof" then
          local lo, hi = scene.roof_min, scene.roof_max
          if lo then
            label = (hi - lo >= 0.05) and string_format("roof %s-%s m", fmt_num(lo), fmt_num(hi))
              or string_format("roof %s m", fmt_num(lo))
          end
        end
        items[#items + 1] = { kind = "fill", class = c.name, label = label }
      end
    end
    if #scene.facades > 0 then items[#items + 1] = { kind = "line", class = "facade", label = "facade" } end
    if opts.perimeters ~= false and next(scene.outlines) then
      items[#items + 1] = { kind = "line", class = "perimeter", label = "room outline" }
    end
    local pc = scene.problems
    if pc then
      items[#items + 1] = { kind = "marker", severity = "error",
        label = string_format("%d error%s", pc.errors, pc.errors == 1 and "" or "s") }
      items[#items + 1] = { kind = "marker", severity = "warning",
        label = string_format("%d warning%s", pc.warnings, pc.warnings == 1 and "" or "s") }
      if pc.unplaced > 0 then
        items[#items + 1] = { kind = "note", label = string_format("(%d without a place)", pc.unplaced) }
      end
    end
    items[#items + 1] = { kind = "scale" }
    items[#items + 1] = { kind = "axes" }
    return items
  end

  -- Flow the legend items into rows for an image `width` wide. Returns the band height and
  -- sets each item's x, y (relative to the band's top-left), w.
  local function legend_flow(items, title, width, ls, scale_len_px)
    local pad, gap, sw = 8 * ls, 14 * ls, 10 * ls
    local line_h = max(sw, 7 * ls)
    local y = pad
    if title then y = y + 7 * ls + 6 * ls end
    local x = pad
    local rows = 1
    for _, it in ipairs(items) do
      local w
      if it.kind == "scale" then
        w = scale_len_px + 6 * ls + text_width(#it.text, ls)
      elseif it.kind == "axes" then
        w = 16 * ls + text_width(2, ls)
      elseif it.kind == "note" then
        w = text_width(#it.label, ls)
      else
        w = sw + 4 * ls + text_width(#it.label, ls)
      end
      if x > pad and x + w > width - pad then
        x = pad
        y = y + line_h + 6 * ls
        rows = rows + 1
      end
      it.x, it.y, it.w = x, y, w
      x = x + w + gap
    end
    -- the axes item reaches a little below its row
    return y + line_h + pad + 4 * ls, rows
  end

  --- Image size and world-to-pixel transform for a scene.
  -- @treturn table layout `{width, height, scale, ox, oy, minx, maxz, legend_y, legend_h,
  --   ls, items, title}`
  local function layout(scene, opts)
    local size = opts.size or 2048
    local minx, minz, maxx, maxz = scene.bounds[1], scene.bounds[2], scene.bounds[3], scene.bounds[4]
    local ww, wh = maxx - minx, maxz - minz
    if ww < 1 then minx, maxx = minx - (1 - ww) / 2, maxx + (1 - ww) / 2; ww = 1 end
    if wh < 1 then minz, maxz = minz - (1 - wh) / 2, maxz + (1 - wh) / 2; wh = 1 end
    local margin = max(4, floor(size / 64))
    -- scale of the legend's font and of the largest room numbers
    local ls = size < 1000 and 1 or min(4, 2 + (size - 1000) // 1500)
    local legend = opts.legend ~= false and size >= 256 -- no room for a legend below that
    local items = legend and legend_items(scene, opts) or {}
    local title = legend and opts.title or nil

    local function scale_bar(s, width)
      -- about a fifth of the image width, at most 300 px at ls 1
      local target = min(width / 5, 150 * ls) / s
      local len = nice_length(target)
      return len, len * s
    end
    local function legend_height(width, s)
      if not legend then return 0 end
      local len, px = scale_bar(s, width)
      for _, it in ipairs(items) do
        if it.kind == "scale" then
          it.text = len >= 1000 and (fmt_num(len / 1000) .. " km") or (fmt_num(len) .. " m")
          it.len, it.px = len, px
        end
      end
      return (legend_flow(items, title, width, ls, px))
    end

    -- landscape: the width is the long side
    local W = size
    local s = (W - 2 * margin) / ww
    local L = legend_height(W, s)
    local H = ceil(wh * s) + 2 * margin + L
    if H > size then
      -- portrait: the height is the long side; the legend's rows depend on the width
      H = size
      local min_w = legend and min(size, 240 * ls) or 16
      L = legend_height(size, (size - 2 * margin) / max(ww, wh))
      for _ = 1, 5 do
        s = max(1, H - 2 * margin - L) / wh
        W = max(min_w, ceil(ww * s) + 2 * margin)
        local L2 = legend_height(W, s)
        if L2 == L then break end
        L = L2
      end
      s = min(max(1, H - 2 * margin - L) / wh, (W - 2 * margin) / ww)
      for _, it in ipairs(items) do
        if it.kind == "scale" then it.px = it.len * s end
      end
    end
    W, H = floor(W), floor(H)
    local ox = (W - ww * s) / 2
    local oy = margin + ((H - L - 2 * margin) - wh * s) / 2
    return {
      width = W, height = H, scale = s, ox = ox, oy = oy, minx = minx, maxz = maxz,
      legend_y = H - L, legend_h = L, ls = ls, items = items, title = title, margin = margin,
    }
  end

  ------------------------------------------------------------------------ drawing operations

  -- Operations in final pixel coordinates, shared by the PNG and SVG writers:
  --   {op = "fill", class =, room =, color =, xy = {...}, stripes = {period, duty, dx, dy, phase}}
  --   {op = "poly", class =, room =, color =, xy = {...}, stripes =}
  --   {op = "stroke", class =, segs = {...}, width =, color =}
  --   {op = "text", x =, y =, text =, scale =, color =, halo =, anchor = "start"|"middle"}
  --   {op = "marker", x =, y =, r =, shape =, color =, outline_width =, outline =, title =}
  --   {op = "rect", x0 =, y0 =, x1 =, y1 =, color =}
  -- `layer`: "fill" ops are drawn supersampled (PNG); "over" ops at the final size.

  local function hatch(ls)
    local d = 0.70710678118654752
    return { period = 7 * ls, duty = 0.32, dx = d, dy = d, phase = 0 }
  end

  local function sorted_keys(t)
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = k end
    table.sort(keys)
    return keys
  end

  -- long: the map's draw list in paint order (roof shades, fills by tier, lines, room
  -- numbers, problem markers); the order is the picture, so the steps stay in one place
  local function build_ops(scene, L, opts)
    local ops = {}
    local s, ox, oy, minx, maxz = L.scale, L.ox, L.oy, L.minx, L.maxz
    local function X(x) return ox + (x - minx) * s end
    local function Y(z) return oy + (maxz - z) * s end
    local function project(list)
      local out = {}
      for i = 1, #list, 2 do out[i], out[i + 1] = X(list[i]), Y(list[i + 1]) end
      return out
    end

    -- roof shades
    local rmin, rmax = huge, -huge
    for _, hl in pairs(scene.roof_heights) do
      for _, h in ipairs(hl) do
        if finite(h) then
          if h < rmin then rmin = h end
          if h > rmax then rmax = h end
        end
      end
    end
    local function roof_level(h)
      if not finite(h) or rmax - rmin < 0.05 then return floor(ROOF_LEVELS / 2) end
      return floor((h - rmin) / (rmax - rmin) * (ROOF_LEVELS - 1) + 0.5)
    end

    local cw_period = max(1.0 * s, 5) -- one white bar per metre across, at least 5 px
    for _, c in ipairs(M.classes) do
      local name = c.name
      local byroom = scene.fills[name]
      if byroom then
        for _, r in ipairs(sorted_keys(byroom)) do
          local list = byroom[r]
          if name == "roof" then
            local hl = scene.roof_heights[r]
            local by_level = {}
            for t = 1, #list // 6 do
              local lv = roof_level(hl[t])
              local xy = by_level[lv] or {}
              by_level[lv] = xy
              local k = (t - 1) * 6
              local m = #xy
              for j = 1, 6, 2 do xy[m + j], xy[m + j + 1] = X(list[k + j]), Y(list[k + j + 1]) end
            end
            for _, lv in ipairs(sorted_keys(by_level)) do
              ops[#ops + 1] = { op = "fill", layer = "fill", class = "roof", level = lv, room = r,
                color = roof_color(lv), xy = by_level[lv] }
            end
          elseif name == "crosswalk" then
            local tl = scene.cross_t[r]
            for t = 1, #list // 6 do
              local k = (t - 1) * 6
              local xy = { X(list[k + 1]), Y(list[k + 2]), X(list[k + 3]), Y(list[k + 4]), X(list[k + 5]), Y(list[k + 6]) }
              local t0, t1, t2 = tl[3 * t - 2], tl[3 * t - 1], tl[3 * t]
              -- the gradient of the texture's v across the triangle: the crosswalk's long axis
              local e1x, e1y, e2x, e2y = xy[3] - xy[1], xy[4] - xy[2], xy[5] - xy[1], xy[6] - xy[2]
              local d1, d2 = t1 - t0, t2 - t0
              local det = e1x * e2y - e1y * e2x
              local stripes
              if det ~= 0 and finite(d1) and finite(d2) then
                local gx, gy = (d1 * e2y - d2 * e1y) / det, (d2 * e1x - d1 * e2x) / det
                local gl = sqrt(gx * gx + gy * gy)
                local len = 0 -- the crosswalk's length along the gradient, in pixels
                if gl > 0 and finite(gl) then
                  gx, gy = gx / gl, gy / gl
                  -- the start of the crosswalk: the vertex with the smallest v
                  local tmin, bx, by = t0, xy[1], xy[2]
                  if t1 < tmin then tmin, bx, by = t1, xy[3], xy[4] end
                  if t2 < tmin then tmin, bx, by = t2, xy[5], xy[6] end
                  local tmax = max(t0, t1, t2)
                  len = (tmax - tmin) / gl
                  if len >= 2 * cw_period then
                    stripes = { period = cw_period, duty = 0.5, dx = gx, dy = gy,
                      phase = -(bx * gx + by * gy) - cw_period * 0.25 }
                  end
                end
              end
              ops[#ops + 1] = { op = "fill", layer = "fill", class = "crosswalk", room = r,
                color = stripes and c.color or ((c.color & 0xFFFFFF00) | 0xB0), xy = xy, stripes = stripes }
            end
          else
            ops[#ops + 1] = { op = "fill", layer = "fill", class = name, room = r, color = c.color, xy = project(list) }
          end
        end
      end
      if name == "tunnel" then
        for _, r in ipairs(sorted_keys(scene.underground)) do
          ops[#ops + 1] = { op = "poly", layer = "fill", class = "tunnel", room = r, color = c.color,
            xy = project(scene.underground[r]), stripes = "hatch" }
        end
      elseif name == "warp" then
        for _, r in ipairs(sorted_keys(scene.warp)) do
          ops[#ops + 1] = { op = "poly", layer = "fill", class = "warp", room = r, color = c.color,
            xy = project(scene.warp[r]) }
        end
      end
    end
    -- Fills from the lowest tier up (a bridge over a road, a road over a tunnel), by class
    -- within a tier; the tunnel hatching and warp tint go over everything.
    local tiers = scene.tiers
    for i, o in ipairs(ops) do
      o.seq = i
      o.tier = (o.class == "tunnel" or o.class == "warp") and huge or (tiers[o.room] or 0)
      if o.class == "tunnel" then o.stripes = "hatch" end
    end
    table.sort(ops, function(a, b)
      if a.tier ~= b.tier then return a.tier < b.tier end
      local ca, cb = CLASS[a.class].order, CLASS[b.class].order
      if ca ~= cb then return ca < cb end
      return a.seq < b.seq
    end)
    scene.roof_min, scene.roof_max = rmin <= rmax and rmin or nil, rmin <= rmax and rmax or nil

    -- lines
    local lw = max(1, s * 0.25)
    if lw > 2.5 * L.ls then lw = 2.5 * L.ls end
    if #scene.facades > 0 then
      ops[#ops + 1] = { op = "stroke", layer = "over", class = "facade", segs = project(scene.facades), width = lw,
        color = M.colors.facade }
    end
    if opts.perimeters ~= false then
      local segs = {}
      for _, r in ipairs(sorted_keys(scene.outlines)) do
        local pts = scene.outlines[r]
        local n = #pts // 2
        for i = 1, n do
          local j = i % n + 1
          local m = #segs
          segs[m + 1], segs[m + 2], segs[m + 3], segs[m + 4] = X(pts[2 * i - 1]), Y(pts[2 * i]), X(pts[2 * j - 1]),
            Y(pts[2 * j])
        end
      end
      if #segs > 0 then
        local polys = {}
        for _, r in ipairs(sorted_keys(scene.outlines)) do polys[#polys + 1] = { room = r, xy = project(scene.outlines[r]) } end
        ops[#ops + 1] = { op = "stroke", layer = "over", class = "perimeter", segs = segs, width = 1.0,
          color = M.colors.perimeter, polys = polys }
      end
    end

    -- room numbers
    local label_at = {} -- where each room's label is: {px, py, half its width}
    if opts.rooms then
      -- one scale for all numbers: the largest (up to the legend's) at which three rooms in
      -- four hold their number; a room too small for it gets the smallest
      local labels = {}
      for _, r in ipairs(sorted_keys(scene.centers)) do
        local bw, bh = 0, 0
        local pts = scene.outlines[r]
        if pts then
          local x0, x1, z0, z1 = huge, -huge, huge, -huge
          for i = 1, #pts, 2 do
            x0, x1 = min(x0, pts[i]), max(x1, pts[i])
            z0, z1 = min(z0, pts[i + 1]), max(z1, pts[i + 1])
          end
          bw, bh = (x1 - x0) * s, (z1 - z0) * s
        end
        labels[#labels + 1] = { room = r, text = tostring(r), bw = bw, bh = bh }
      end
      local function fits(l, sc) return text_width(#l.text, sc) <= 0.7 * l.bw and 7 * sc <= 0.6 * l.bh end
      local scale = 1
      for try = L.ls, 2, -1 do
        local n = 0
        for _, l in ipairs(labels) do if fits(l, try) then n = n + 1 end end
        if n >= 0.75 * #labels then scale = try; break end
      end
      -- place the labels of small rooms first; a label that would cover one already placed
      -- moves along its room's long axis (a long road's centre may be under a bridge's label)
      table.sort(labels, function(a, b)
        if a.bw * a.bh ~= b.bw * b.bh then return a.bw * a.bh < b.bw * b.bh end
        return a.room < b.room
      end)
      local CELL = 32
      local grid = {}
      local function cells(b, fn)
        for gy = floor(b[2] / CELL), floor(b[4] / CELL) do
          for gx = floor(b[1] / CELL), floor(b[3] / CELL) do
            if fn(gy * 1048576 + gx) then return true end
          end
        end
        return false
      end
      local function collides(b)
        return cells(b, function(key)
          for _, o in ipairs(grid[key] or {}) do
            if b[1] < o[3] and o[1] < b[3] and b[2] < o[4] and o[2] < b[4] then return true end
          end
          return false
        end)
      end
      local function add(b)
        cells(b, function(key)
          local list = grid[key] or {}
          grid[key] = list
          list[#list + 1] = b
          return false
        end)
      end
      for _, l in ipairs(labels) do
        local sc = fits(l, scale) and scale or 1
        local c = scene.centers[l.room]
        local tw = text_width(#l.text, sc)
        local pts = scene.outlines[l.room]
        local function box(px, py)
          return { px - tw / 2 - 1, py - 3.5 * sc - 1, px + tw / 2 + 1, py + 3.5 * sc + 1 }
        end
        local px, py = X(c[1]), Y(c[2])
        if not (px > -1000 and px < L.width + 1000 and py > -1000 and py < L.height + 1000) then goto next_label end
        local b = box(px, py)
        if pts and collides(b) then
          local alongx = l.bw >= l.bh
          local extent = (alongx and l.bw or l.bh) / s
          for _, f in ipairs { 0.25, -0.25, 0.38, -0.38, 0.12, -0.12 } do
            local x, z = c[1] + (alongx and f * extent or 0), c[2] + (alongx and 0 or f * extent)
            if inside(pts, x, z) then
              local qx, qy = X(x), Y(z)
              local qb = box(qx, qy)
              if not collides(qb) then px, py, b = qx, qy, qb; break end
            end
          end
        end
        add(b)
        label_at[l.room] = { px, py, tw / 2 }
        ops[#ops + 1] = { op = "text", layer = "over", class = "room-id", room = l.room, text = l.text, scale = sc,
          x = floor(px - tw / 2 + 0.5), y = floor(py - 3.5 * sc + 0.5), cx = px, cy = py,
          color = M.colors.text, halo = M.colors.halo, anchor = "middle" }
        ::next_label::
      end
    end

    -- problem markers: one per place and severity, errors on top
    if #scene.markers > 0 then
      local seen, list = {}, {}
      -- about 2 m across on the map, 5 to 8 legend-font pixels
      local r = min(3.5 * L.ls + 0.5, max(2.5, 2.0 * s))
      for _, m in ipairs(scene.markers) do
        local px, py = X(m.x), Y(m.z)
        if not (px > -1000 and px < L.width + 1000 and py > -1000 and py < L.height + 1000) then goto next_marker end
        -- a problem of a whole room sits at its centre, or beside the room's number when shown
        local at = m.room and label_at[m.room]
        if at then px, py = at[1] + at[3] + r + 2, at[2] end
        local key = string_format("%s:%d:%d", m.severity, floor(px + 0.5), floor(py + 0.5))
        local e = seen[key]
        if e then
          e.count = e.count + 1
          if e.count <= 8 then e.titles[#e.titles + 1] = m.text end
        else
          e = { x = px, y = py, severity = m.severity, count = 1, titles = { m.text } }
          seen[key] = e
          list[#list + 1] = e
        end
        ::next_marker::
      end
      for pass = 1, 2 do
        local want = pass == 1 and "warning" or "error"
        for _, e in ipairs(list) do
          if e.severity == want then
            if e.count > 8 then e.titles[#e.titles + 1] = string_format("(and %d more)", e.count - 8) end
            ops[#ops + 1] = { op = "marker", layer = "over", class = want, x = e.x, y = e.y,
              r = want == "error" and r or r + 0.5, shape = want == "error" and "disc" or "diamond",
              color = M.colors[want], outline_width = min(max(1, 0.75 * L.ls), max(1, r / 4)),
              outline = M.colors.marker_outline,
              title = concat(e.titles, "\n") }
          end
        end
      end
    end
    return ops
  end

  -- Legend operations (in the band under the map).
  local function legend_ops(scene, L, all)
    if L.legend_h <= 0 then return end
    local ops = setmetatable({}, { __newindex = function(_, _, o)
      o.legend = true
      all[#all + 1] = o
    end, __len = function() return #all end })
    local ls = L.ls
    local y0 = L.legend_y
    local W = L.width
    local C = M.colors
    ops[#ops + 1] = { op = "rect", layer = "over", class = "legend", x0 = 0, y0 = y0, x1 = W, y1 = L.height,
      color = C.legend }
    ops[#ops + 1] = { op = "rect", layer = "over", class = "legend", x0 = 0, y0 = y0, x1 = W, y1 = y0 + max(1, ls // 1),
      color = C.legend_rule }
    local pad = 8 * ls
    if L.title then
      ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = pad, y = y0 + pad, text = L.title,
        scale = ls, color = C.text }
    end
    local sw = 10 * ls
    local line_h = max(sw, 7 * ls)
    for _, it in ipairs(L.items) do
      local x, y = it.x, y0 + it.y
      local ty = y + floor((line_h - 7 * ls) / 2)
      if it.kind == "fill" then
        local c = CLASS[it.class]
        local sq = { x, y, x + sw, y, x + sw, y + sw, x, y + sw }
        if it.class == "roof" then
          local third = sw / 3
          for k = 0, 2 do
            local lv = floor(k * (ROOF_LEVELS - 1) / 2 + 0.5)
            ops[#ops + 1] = { op = "poly", layer = "over", class = "roof", level = lv, color = roof_color(lv),
              xy = { x + k * third, y, x + (k + 1) * third, y, x + (k + 1) * third, y + sw, x + k * third, y + sw } }
          end
        elseif it.class == "crosswalk" then
          ops[#ops + 1] = { op = "poly", layer = "over", class = "road", color = CLASS.road.color, xy = sq }
          ops[#ops + 1] = { op = "poly", layer = "over", class = "crosswalk", color = c.color, xy = sq,
            stripes = { period = 3 * ls, duty = 0.5, dx = 1, dy = 0, phase = -x } }
        elseif it.class == "tunnel" then
          ops[#ops + 1] = { op = "poly", layer = "over", class = "road", color = CLASS.road.color, xy = sq }
          ops[#ops + 1] = { op = "poly", layer = "over", class = "tunnel", color = c.color, xy = sq, stripes = "hatch-legend" }
        elseif it.class == "warp" then
          ops[#ops + 1] = { op = "poly", layer = "over", class = "road", color = CLASS.road.color, xy = sq }
          ops[#ops + 1] = { op = "poly", layer = "over", class = "warp", color = c.color, xy = sq }
        else
          ops[#ops + 1] = { op = "poly", layer = "over", class = it.class, color = c.color, xy = sq }
        end
        ops[#ops + 1] = { op = "stroke", layer = "over", class = "legend", width = 1,
          segs = { x, y, x + sw, y, x + sw, y, x + sw, y + sw, x + sw, y + sw, x, y + sw, x, y + sw, x, y },
          color = 0x00000040 }
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x + sw + 4 * ls, y = ty, text = it.label,
          scale = ls, color = C.text }
      elseif it.kind == "line" then
        local color = it.class == "facade" and C.facade or 0x000000A0
        ops[#ops + 1] = { op = "stroke", layer = "over", class = it.class, width = it.class == "facade" and 2 * ls or ls,
          segs = { x, y + sw / 2, x + sw, y + sw / 2 }, color = color }
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x + sw + 4 * ls, y = ty, text = it.label,
          scale = ls, color = C.text }
      elseif it.kind == "marker" then
        local r = 3.5 * ls + 0.5
        ops[#ops + 1] = { op = "marker", layer = "over", class = it.severity, x = x + sw / 2, y = y + sw / 2,
          r = it.severity == "error" and r or r + 0.5, shape = it.severity == "error" and "disc" or "diamond",
          color = C[it.severity], outline_width = max(1, 0.75 * ls), outline = 0x555555FF }
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x + sw + 4 * ls, y = ty, text = it.label,
          scale = ls, color = C.text }
      elseif it.kind == "note" then
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = x, y = ty, text = it.label, scale = ls,
          color = C.text }
      elseif it.kind == "scale" then
        local by = y + sw / 2
        local px = it.px
        ops[#ops + 1] = { op = "stroke", layer = "over", class = "legend", width = max(1, ls),
          segs = { x, by, x + px, by, x, by - 3 * ls, x, by + 3 * ls, x + px, by - 3 * ls, x + px, by + 3 * ls,
            x + px / 2, by - 2 * ls, x + px / 2, by },
          color = C.text }
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = floor(x + px + 6 * ls), y = ty,
          text = it.text, scale = ls, color = C.text }
      elseif it.kind == "axes" then
        -- an arrow up labelled +z, an arrow right labelled +x, from a corner at the row's bottom
        local cx, cy = x + ls, y + line_h
        local len, a = 12 * ls, 3 * ls
        ops[#ops + 1] = { op = "stroke", layer = "over", class = "legend", width = max(1, ls),
          segs = { cx, cy, cx, cy - len, cx, cy - len, cx - a, cy - len + a, cx, cy - len, cx + a, cy - len + a,
            cx, cy, cx + len, cy, cx + len, cy, cx + len - a, cy - a, cx + len, cy, cx + len - a, cy + a },
          color = C.text }
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = floor(cx + 5 * ls), y = floor(cy - 13 * ls),
          text = "+z", scale = ls, color = C.text }
        ops[#ops + 1] = { op = "text", layer = "over", class = "legend", x = floor(cx + 14 * ls),
          y = floor(cy - 3.5 * ls), text = "+x", scale = ls, color = C.text }
      end
    end
  end

  ------------------------------------------------------------------------ PNG

  return {
    build_ops = build_ops,
    fmt_num = fmt_num,
    hatch = hatch,
    layout = layout,
    legend_ops = legend_ops,
  }
end
