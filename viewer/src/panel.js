// The side panel: summary and colour legend, the selected room, layers, problems.

const FLAG_NAMES = [[0x02, "subterranean"], [0x04, "standard"], [0x08, "road"], [0x10, "intersection"],
  [0x20, "special bound"], [0x40, "warp"], [0x80, "instance"]];
const ROAD_FLAG_NAMES = [[0x08, "divided"], [0x10, "alley"], [0x40, "sidewalks"]];

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

const hex = (n, w = 2) => "0x" + (n >>> 0).toString(16).toUpperCase().padStart(w, "0");
const css = (c) => "#" + c.toString(16).padStart(6, "0");
const fmt = (x) => (Math.round(x * 100) / 100).toString();

function flagText(flags, names) {
  const list = names.filter(([b]) => flags & b).map(([, n]) => n);
  return hex(flags) + (list.length ? " (" + list.join(", ") + ")" : "");
}

export function summary(meta) {
  document.getElementById("title").textContent = meta.name;
  const s = meta.stats || {};
  const errors = meta.problems.filter((p) => p.severity === "error").length;
  const box = document.getElementById("summary");
  box.replaceChildren(
    `${s.rooms} rooms, ${s.vertices} vertices, ${s.triangles} triangles, ${meta.roads.length} road records, `
      + `${errors} errors, ${meta.problems.length - errors} warnings`,
  );
  document.title = meta.name + " - psdl view";
}

/** Show a room (or the hint when id is 0); `go(id)` selects another room. */
export function showRoom(meta, id, go, seen) {
  const box = document.getElementById("room");
  const r = meta.rooms[id - 1];
  if (!r) {
    box.replaceChildren("Click a surface to select its room.");
    return;
  }
  const link = (n) => el("a", { onclick: () => go(n), "data-room": String(n) }, String(n));
  const nbs = [...new Set(r.neighbours.filter((n) => n > 0))];
  const nbCell = el("td", {});
  nbs.forEach((n, i) => { if (i) nbCell.append(", "); nbCell.append(link(n)); });
  if (!nbs.length) nbCell.append("none");
  const rows = [
    ["room", el("span", { id: "room-id" }, String(r.id))],
    ["kind", meta.kinds[r.kind]],
    ["flags", flagText(r.flags, FLAG_NAMES)],
    ["prop rule", hex(r.prop_rule)],
    ["perimeter", `${r.perimeter.length} points`],
    ["centre", `x ${fmt(r.center[0])}, y ${fmt(r.center[1])}, z ${fmt(-r.center[2])}`],
  ];
  const table = el("table", {}, ...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))),
    el("tr", {}, el("th", {}, "neighbours"), nbCell));
  const attrs = el("table", { class: "attrs" },
    el("tr", {}, el("th", {}, "#"), el("th", {}, "type"), el("th", {}, "texture"), el("th", {}, "verts"), el("th", {}, "tris")),
    ...r.attributes.map((a, i) => {
      let extra = "";
      if (a.divider) extra = ` divider ${a.divider.type}` + (a.divider.texture_name ? ` ${a.divider.texture_name}` : "");
      if (a.flags !== undefined) extra = ` flags ${hex(a.flags, 4)} h ${fmt(a.height)}`;
      if (a.repeats) extra = ` ${a.repeats[0]}x${a.repeats[1]}`;
      return el("tr", {}, el("td", {}, String(i + 1)), el("td", {}, a.type + extra),
        el("td", {}, a.texture ?? (a.value !== undefined ? String(a.value) : "")),
        el("td", {}, String(a.vertices)), el("td", {}, String(a.triangles)));
    }));
  const roads = r.roads.map((k) => {
    const rec = meta.roads[k];
    if (!rec) return null;
    const ids = rec.rooms.map((x) => (x < 0 ? "-" : "") + Math.abs(x));
    return el("div", { class: "road" },
      el("b", {}, `road record ${rec.id}`), `: flags ${flagText(rec.flags, ROAD_FLAG_NAMES)}, lanes `
        + `${rec.lanes_left.length} left / ${rec.lanes_right.length} right, rooms ${ids.join(" ")}`);
  });
  const vis = seen ? el("div", { id: "room-visible" }, `sees ${seen.length} rooms (.cpvs)`) : null;
  box.replaceChildren(...[table, vis, el("div", { class: "group" }, "attributes"), attrs, ...roads].filter((c) => c !== null));
}

/** Checkboxes for the layers; `on(kind, key, checked)` applies one. */
export function layers(meta, state, on) {
  const box = document.getElementById("layers");
  const check = (id, label, checked, fn, color) => el("label", {},
    el("input", { type: "checkbox", id, ...(checked ? { checked: "" } : {}), onchange: (e) => fn(e.target.checked) }),
    color !== undefined ? el("span", { class: "swatch", style: `background:${css(color)}` }) : null, label);
  const roleOf = { road: "road", divided_road: "road", sidewalk_strip: "sidewalk", walkway: "walkway",
    crosswalk: "crosswalk", road_fan: "intersection", fan: "ground", roof: "roof", facade: "facade", sliver: "sliver",
    tunnel: "wall", junction_tunnel: "wall" };
  const color = (t) => meta.roles.find((r) => r.name === roleOf[t])?.color;
  box.replaceChildren(...[
    el("div", { class: "group" }, "attribute types"),
    ...meta.types.map((t, i) => check(`layer-type-${t}`, t, state.types[i], (c) => on("type", i, c), t === "facade_bound" ? 0x8a4fff : color(t))),
    el("div", { class: "group" }, "room kinds"),
    ...meta.kinds.map((k, i) => check(`layer-kind-${k.replace("/", "-")}`, k, state.kinds[i], (c) => on("kind", i, c))),
    el("div", { class: "group" }, "overlays"),
    check("layer-perimeters", "perimeters", state.overlay.perimeters, (c) => on("overlay", "perimeters", c), 0x202020),
    check("layer-links", "neighbour links", state.overlay.links, (c) => on("overlay", "links", c), 0x1a5fb4),
    check("layer-roads", "road-record paths", state.overlay.roads, (c) => on("overlay", "roads", c)),
    check("layer-problems", "problem markers", state.overlay.problems, (c) => on("overlay", "problems", c), 0xe0201b),
    meta.bai ? check("layer-lanes", `AI lanes (.bai: ${meta.bai.lanes})`, state.overlay.lanes, (c) => on("overlay", "lanes", c), 0xff00aa) : null,
    meta.cpvs ? check("layer-visibility", "what the selected room sees (.cpvs)", state.overlay.visibility, (c) => on("overlay", "visibility", c), 0x33d94d) : null,
    el("div", { class: "group" }, "colours"),
    ...meta.roles.map((r) => el("label", {}, el("span", { class: "swatch", style: `background:${css(r.color)}` }), r.label)),
  ].filter((c) => c !== null)); // replaceChildren would write a null as the text "null"
}

/** The problem list; `go(problem)` flies to one. */
export function problems(meta, go) {
  const errors = meta.problems.filter((p) => p.severity === "error").length;
  document.getElementById("problems-title").textContent =
    `Problems (${errors} errors, ${meta.problems.length - errors} warnings)`;
  const box = document.getElementById("problems");
  box.replaceChildren(...meta.problems.map((p, i) => el("li", { class: p.severity, "data-index": String(i), onclick: () => go(p) },
    el("span", { class: "sev" }, p.severity), ` ${p.rule}: ${p.path ? p.path + ": " : ""}${p.message}`)));
  if (!meta.problems.length) box.replaceChildren(el("li", {}, "none: the city validates"));
}
