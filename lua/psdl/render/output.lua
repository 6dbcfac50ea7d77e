--- Outputs of psdl.render: PNG through the C rasterizer (psdl.core) and SVG text.

local table, math = table, math
local type, ipairs, pairs, tostring, error, require, tonumber, next, select, setmetatable, utf8 =
  type, ipairs, pairs, tostring, error, require, tonumber, next, select, setmetatable, utf8
local floor, ceil, sqrt, abs, huge, max, min = math.floor, math.ceil, math.sqrt, math.abs, math.huge,
  math.max, math.min
local string_format, concat = string.format, table.concat

-- Installed by psdl.render (render/init.lua): M is the module table, private the helpers shared
-- between its files.
return function(M, private)
  local CLASS, ROOF_LEVELS, finite = private.CLASS, private.ROOF_LEVELS, private.finite
  local fmt_num, hatch, roof_color = private.fmt_num, private.hatch, private.roof_color

  local function png_bytes(ops, L, opts, core)
    local W, H = L.width, L.height
    -- the supersampled canvas stays within 32 Mpixels (128 MiB) by default, within the
    -- canvas limits (16384 px a side, 64 Mpixels) when asked for more
    local ss = opts.supersample or 2
    local budget = opts.supersample and (1 << 26) or (1 << 25)
    while ss > 1 and (max(W, H) * ss > 16384 or W * H * ss * ss > budget) do ss = ss - 1 end
    if W * H > (1 << 26) then -- (render refuses a size above PNG_MAX_SIZE before)
      error(string_format("bad argument #2 to 'render' (a PNG map of %d x %d px is above the 64 Mpixel canvas "
        .. "limit (about 8192 x 8192): use a smaller size, or SVG)", W, H), 0)
    end
    local hi, err, code = core.canvas_new(W * ss, H * ss, M.colors.background)
    if not hi then return nil, err, code end
    local function scaled(xy)
      if ss == 1 then return xy end
      local out = {}
      for i = 1, #xy do out[i] = xy[i] * ss end
      return out
    end
    local function paint(o, k)
      local st = o.stripes
      if st == "hatch" then return hatch(L.ls * k) end
      if st == "hatch-legend" then return hatch(L.ls * k * 0.6) end
      if st and k ~= 1 then
        return { period = st.period * k, duty = st.duty, dx = st.dx, dy = st.dy, phase = st.phase * k }
      end
      return st
    end
    local covered = {}
    for _, o in ipairs(ops) do
      if o.layer == "fill" then
        local n
        if o.op == "fill" then
          n = hi:triangles(scaled(o.xy), o.color, paint(o, ss))
        else
          n = hi:polygon(scaled(o.xy), o.color, paint(o, ss))
        end
        covered[o.class] = (covered[o.class] or 0) + n
      end
    end
    local c = hi
    if ss > 1 then
      c = hi:downsample(ss)
      hi:close()
    end
    for _, o in ipairs(ops) do
      if o.layer == "over" then
        if o.op == "stroke" then
          c:stroke(o.segs, o.width, o.color)
        elseif o.op == "text" then
          c:text(o.x, o.y, o.text, o.scale, o.color, o.halo)
        elseif o.op == "marker" then
          c:marker(o.x, o.y, o.r, o.shape, o.color, o.outline_width, o.outline)
        elseif o.op == "rect" then
          c:rect(floor(o.x0), floor(o.y0), floor(o.x1), floor(o.y1), o.color)
        elseif o.op == "poly" or o.op == "fill" then
          local method = o.op == "poly" and c.polygon or c.triangles
          method(c, o.xy, o.color, paint(o, 1))
        end
      end
    end
    local bytes, err, code = c:png(opts.compression or 6)
    c:close()
    if not bytes then return nil, err, code end
    return { bytes = bytes, supersample = ss, covered = covered }
  end

  ------------------------------------------------------------------------ SVG

  local function hex(rgba) return string_format("#%06x", rgba >> 8) end
  local function opacity(rgba)
    local a = rgba & 255
    if a == 255 then return nil end
    return fmt_num(a / 255)
  end

  local function xml_escape(s)
    s = s:gsub("[%z\1-\8\11\12\14-\31]", "?")
    if not utf8.len(s) then s = s:gsub("[\128-\255]", "?") end
    return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
  end

  local function svg_path_tris(xy, out)
    -- one closed subpath per triangle, all wound the same way so overlaps stay filled
    for k = 1, #xy, 6 do
      local ax, ay, bx, by, cx, cy = xy[k], xy[k + 1], xy[k + 2], xy[k + 3], xy[k + 4], xy[k + 5]
      if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) < 0 then bx, by, cx, cy = cx, cy, bx, by end
      if not (finite(ax + ay + bx + by + cx + cy) and abs(ax) + abs(ay) + abs(bx) + abs(by) + abs(cx) + abs(cy) < 1e9) then
        goto skip
      end
      out[#out + 1] = "M" .. fmt_num(ax) .. " " .. fmt_num(ay) .. "L" .. fmt_num(bx) .. " " .. fmt_num(by) .. "L" ..
        fmt_num(cx) .. " " .. fmt_num(cy) .. "Z"
      ::skip::
    end
  end

  local function svg_path_poly(xy)
    local out = {}
    for k = 1, #xy do
      if not (finite(xy[k]) and abs(xy[k]) < 1e9) then return "" end
    end
    for k = 1, #xy, 2 do out[#out + 1] = (k == 1 and "M" or "L") .. fmt_num(xy[k]) .. " " .. fmt_num(xy[k + 1]) end
    return concat(out) .. "Z"
  end

  -- long: one SVG document written top to bottom (styles, patterns, fills, lines, legend)
  -- into one buffer
  local function svg_text(ops, L, scene, opts)
    local W, H = L.width, L.height
    local out = {}
    local function w(...) for i = 1, select("#", ...) do out[#out + 1] = select(i, ...) end end
    w('<?xml version="1.0" encoding="UTF-8"?>\n')
    w(string_format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n', W, H, W, H))
    w("<title>", xml_escape(opts.title or "psdl map"), "</title>\n")
    local function minus(v) return v < 0 and (" + " .. fmt_num(-v)) or (" - " .. fmt_num(v)) end
    w(string_format('<desc>psdlkit map: x to the right, z up; %s px per metre; px = %s + (x%s) * %s, py = %s - (z%s) * %s</desc>\n',
      fmt_num(L.scale), fmt_num(L.ox), minus(L.minx), fmt_num(L.scale), fmt_num(L.oy), minus(L.maxz),
      fmt_num(L.scale)))
    -- styles per class
    w("<style>\n")
    for _, c in ipairs(M.classes) do
      if c.name == "tunnel" then
        w(".tunnel{fill:url(#hatch)}\n")
      elseif c.name == "crosswalk" then
        w(".crosswalk{fill:", hex(c.color), "}\n")
      else
        local op = opacity(c.color)
        w(".", c.name, "{fill:", hex(c.color), op and (";fill-opacity:" .. op) or "", "}\n")
      end
    end
    for lv = 0, ROOF_LEVELS - 1 do w(".roof-", lv, "{fill:", hex(roof_color(lv)), "}\n") end
    w(".facade{fill:none;stroke:", hex(M.colors.facade), ";stroke-linecap:round}\n")
    w(".perimeter{fill:none;stroke:", hex(M.colors.perimeter), ";stroke-opacity:", opacity(M.colors.perimeter),
      ";stroke-width:1}\n")
    w(".room-id{font-family:monospace;text-anchor:middle;dominant-baseline:central;fill:", hex(M.colors.text),
      ";stroke:#fff;stroke-opacity:0.85;paint-order:stroke}\n")
    w(".error{fill:", hex(M.colors.error), ";stroke:#fff}\n.warning{fill:", hex(M.colors.warning), ";stroke:#fff}\n")
    w(".legend text{font-family:monospace;fill:", hex(M.colors.text), "}\n")
    w("</style>\n")
    -- patterns: hatching and one stripe pattern per crosswalk direction
    local ls = L.ls
    local hp = hatch(ls)
    w("<defs>\n")
    w(string_format('<pattern id="hatch" patternUnits="userSpaceOnUse" width="%s" height="%s" patternTransform="rotate(45)">'
      .. '<rect width="%s" height="%s" fill="%s"/></pattern>\n', fmt_num(hp.period), fmt_num(hp.period),
      fmt_num(hp.period * hp.duty), fmt_num(hp.period), hex(CLASS.tunnel.color)))
    local cw_ids = {}
    for _, o in ipairs(ops) do
      if o.class == "crosswalk" and o.stripes and o.layer == "fill" then
        local deg = floor(math.deg(math.atan(o.stripes.dy, o.stripes.dx)) + 0.5) % 180
        o.pattern = "cw" .. deg
        if not cw_ids[deg] then
          cw_ids[deg] = true
          local p = o.stripes.period
          w(string_format('<pattern id="cw%d" patternUnits="userSpaceOnUse" width="%s" height="%s" '
            .. 'patternTransform="rotate(%d)"><rect width="%s" height="%s" fill="%s"/></pattern>\n', deg, fmt_num(p),
            fmt_num(p), deg, fmt_num(p * 0.5), fmt_num(p), hex(CLASS.crosswalk.color)))
        end
      end
    end
    w("</defs>\n")
    w(string_format('<rect class="background" width="%d" height="%d" fill="%s"/>\n', W, H, hex(M.colors.background)))

    -- fills: one group per class, one path per room (per roof shade / crosswalk direction)
    local groups, order = {}, {}
    for _, o in ipairs(ops) do
      if o.layer == "fill" then
        local g = groups[o.class]
        if not g then
          g = { items = {}, index = {} }
          groups[o.class] = g
          order[#order + 1] = o.class
        end
        local key = tostring(o.room) .. ":" .. tostring(o.level or o.pattern or (o.stripes and "s" or "")) ..
          ":" .. o.op
        local item = g.index[key]
        if not item then
          item = { room = o.room, level = o.level, pattern = o.pattern, plain = o.class == "crosswalk" and not o.stripes,
            op = o.op, d = {} }
          g.index[key] = item
          g.items[#g.items + 1] = item
        end
        if o.op == "fill" then svg_path_tris(o.xy, item.d) else item.d[#item.d + 1] = svg_path_poly(o.xy) end
      end
    end
    table.sort(order, function(a, b) return CLASS[a].order < CLASS[b].order end)
    for _, class in ipairs(order) do
      w('<g class="', class, '">\n')
      for _, item in ipairs(groups[class].items) do
        local attrs = ""
        if item.level then attrs = ' class="roof-' .. item.level .. '"' end
        if item.pattern then attrs = ' fill="url(#' .. item.pattern .. ')"' end
        if item.plain then attrs = ' fill-opacity="0.7"' end
        w('<path data-room="', tostring(item.room), '"', attrs, ' d="', concat(item.d), '"/>\n')
      end
      w("</g>\n")
    end

    -- lines, labels, markers
    for _, o in ipairs(ops) do
      if o.op == "stroke" and o.polys then
        w('<g class="', o.class, '" stroke-width="', fmt_num(o.width), '">\n')
        for _, p in ipairs(o.polys) do w('<path data-room="', tostring(p.room), '" d="', svg_path_poly(p.xy), '"/>\n') end
        w("</g>\n")
      elseif o.layer == "over" and o.op == "stroke" and not o.legend and (o.class == "facade" or o.class == "perimeter") then
        local d = {}
        local segs = o.segs
        for k = 1, #segs, 4 do
          local ok = true
          for j = k, k + 3 do if not (finite(segs[j]) and abs(segs[j]) < 1e9) then ok = false end end
          if ok then
            d[#d + 1] = "M" .. fmt_num(segs[k]) .. " " .. fmt_num(segs[k + 1]) .. "L" .. fmt_num(segs[k + 2]) .. " " ..
              fmt_num(segs[k + 3])
          end
        end
        w('<g class="', o.class, '"><path stroke-width="', fmt_num(o.width), '" d="', concat(d), '"/></g>\n')
      end
    end
    local any = false
    for _, o in ipairs(ops) do
      if o.op == "text" and o.class == "room-id" then
        if not any then w('<g class="room-ids">\n'); any = true end
        w(string_format('<text class="room-id" x="%s" y="%s" font-size="%s" stroke-width="%s">%s</text>\n',
          fmt_num(o.cx), fmt_num(o.cy), fmt_num(o.scale * 9), fmt_num(o.scale), xml_escape(o.text)))
      end
    end
    if any then w("</g>\n") end
    any = false
    for _, o in ipairs(ops) do
      if o.op == "marker" and not o.legend then
        if not any then w('<g class="problems">\n'); any = true end
        local t = "<title>" .. xml_escape(o.title) .. "</title>"
        if o.shape == "disc" then
          w(string_format('<circle class="%s" cx="%s" cy="%s" r="%s" stroke-width="%s">%s</circle>\n', o.class,
            fmt_num(o.x), fmt_num(o.y), fmt_num(o.r), fmt_num(o.outline_width), t))
        else
          local r = o.r
          w(string_format('<path class="%s" d="M%s %sL%s %sL%s %sL%s %sZ" stroke-width="%s">%s</path>\n', o.class,
            fmt_num(o.x), fmt_num(o.y - r), fmt_num(o.x + r), fmt_num(o.y), fmt_num(o.x), fmt_num(o.y + r),
            fmt_num(o.x - r), fmt_num(o.y), fmt_num(o.outline_width), t))
        end
      end
    end
    if any then w("</g>\n") end

    -- legend
    if L.legend_h > 0 then
      w('<g class="legend">\n')
      for _, o in ipairs(ops) do
        if o.legend then
          if o.op == "rect" then
            local op = opacity(o.color)
            w(string_format('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>\n', fmt_num(o.x0), fmt_num(o.y0),
              fmt_num(o.x1 - o.x0), fmt_num(o.y1 - o.y0), hex(o.color), op and (' fill-opacity="' .. op .. '"') or ""))
          elseif o.op == "poly" then
            local fill = hex(o.color)
            if o.stripes == "hatch-legend" then fill = "url(#hatch)" end
            if o.class == "crosswalk" and o.stripes then fill = "url(#cw0)" end
            local op = opacity(o.color)
            if o.class == "crosswalk" and not cw_ids[0] then
              cw_ids[0] = true
              w(string_format('<defs><pattern id="cw0" patternUnits="userSpaceOnUse" width="%d" height="%d">'
                .. '<rect width="%s" height="%d" fill="%s"/></pattern></defs>\n', 3 * ls, 3 * ls, fmt_num(1.5 * ls), 3 * ls,
                hex(o.color)))
            end
            w('<path d="', svg_path_poly(o.xy), '" fill="', fill, '"', op and (' fill-opacity="' .. op .. '"') or "",
              "/>\n")
          elseif o.op == "stroke" then
            local d = {}
            for k = 1, #o.segs, 4 do
              d[#d + 1] = "M" .. fmt_num(o.segs[k]) .. " " .. fmt_num(o.segs[k + 1]) .. "L" .. fmt_num(o.segs[k + 2]) ..
                " " .. fmt_num(o.segs[k + 3])
            end
            local op = opacity(o.color)
            w('<path fill="none" stroke="', hex(o.color), '"', op and (' stroke-opacity="' .. op .. '"') or "",
              ' stroke-width="', fmt_num(o.width), '" d="', concat(d), '"/>\n')
          elseif o.op == "text" then
            w(string_format('<text x="%s" y="%s" font-size="%s">%s</text>\n', fmt_num(o.x), fmt_num(o.y + 7 * o.scale),
              fmt_num(o.scale * 10), xml_escape(o.text)))
          elseif o.op == "marker" then
            if o.shape == "disc" then
              w(string_format('<circle class="%s" cx="%s" cy="%s" r="%s" stroke-width="%s"/>\n', o.class, fmt_num(o.x),
                fmt_num(o.y), fmt_num(o.r), fmt_num(o.outline_width)))
            else
              local r = o.r
              w(string_format('<path class="%s" d="M%s %sL%s %sL%s %sL%s %sZ" stroke-width="%s"/>\n', o.class,
                fmt_num(o.x), fmt_num(o.y - r), fmt_num(o.x + r), fmt_num(o.y), fmt_num(o.x), fmt_num(o.y + r),
                fmt_num(o.x - r), fmt_num(o.y), fmt_num(o.outline_width)))
            end
          end
        end
      end
      w("</g>\n")
    end
    w("</svg>\n")
    return concat(out)
  end

  ------------------------------------------------------------------------ render

  return {
    png_bytes = png_bytes,
    svg_text = svg_text,
  }
end
