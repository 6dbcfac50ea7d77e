// The city in the three.js scene: one indexed geometry (all rooms, sorted by material), a
// shader that hides attribute types and room kinds and highlights rooms per vertex (room
// id, role, type attributes; a room-state texture), and the line overlays (perimeters,
// neighbour links, road-record paths, facade bounds, the selection) and problem markers.
import * as THREE from "three";
import { list } from "./payload.js";

const ROOM_TEX_WIDTH = 1024;

const VERTEX = /* glsl */ `
attribute float room;
attribute vec2 info;
uniform highp sampler2D roomState;
uniform float typeOn[16];
uniform vec3 roleColor[16];
varying vec3 vWorld;
varying vec3 vColor;
varying float vState;
varying vec2 vUv;
void main() {
  int r = int(room + 0.5);
  ivec2 size = textureSize(roomState, 0);
  vec4 st = texelFetch(roomState, ivec2(r % size.x, r / size.x), 0);
  int t = int(info.y + 0.5);
  int c = int(info.x + 0.5);
  if (st.r * typeOn[t] < 0.5) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; }
  vColor = roleColor[c];
  vState = floor(st.g * 255.0 + 0.5);
  vUv = uv;
  vec4 wp = modelMatrix * vec4(position, 1.0);
  vWorld = wp.xyz;
  gl_Position = projectionMatrix * viewMatrix * wp;
}`;

const FRAGMENT = /* glsl */ `
uniform sampler2D map;
uniform float useMap;
varying vec3 vWorld;
varying vec3 vColor;
varying float vState;
varying vec2 vUv;
void main() {
  vec3 n = normalize(cross(dFdx(vWorld), dFdy(vWorld)));
  // flat ground keeps its role colour exactly; walls are shaded by their direction
  float light = 0.6 + 0.4 * abs(n.y) + 0.22 * abs(n.x) * (1.0 - abs(n.y));
  vec3 base = useMap > 0.5 ? texture2D(map, vUv).rgb : vColor;
  vec3 col = min(base * light, vec3(1.0));
  if (vState > 0.5 && vState < 1.5) col = mix(col, vec3(1.0, 0.8, 0.1), 0.5);
  else if (vState > 1.5 && vState < 2.5) col = mix(col, vec3(0.15, 0.7, 1.0), 0.4);
  gl_FragColor = vec4(col, 1.0);
}`;

function rgb(hex) {
  return new THREE.Color(((hex >> 16) & 255) / 255, ((hex >> 8) & 255) / 255, (hex & 255) / 255);
}

/** Line segments from a flat list of positions (pairs of points). */
function segments(points, color, opts = {}) {
  const geo = new THREE.BufferGeometry();
  geo.setAttribute("position", new THREE.BufferAttribute(points instanceof Float32Array ? points : new Float32Array(points), 3));
  const mat = new THREE.LineBasicMaterial({
    color, transparent: opts.opacity !== undefined, opacity: opts.opacity ?? 1,
    depthTest: opts.depthTest ?? true,
  });
  const lines = new THREE.LineSegments(geo, mat);
  lines.renderOrder = opts.renderOrder ?? 1;
  lines.frustumCulled = false;
  return lines;
}

export class City {
  constructor(scene) {
    this.scene = scene;
    this.root = new THREE.Group();
    scene.add(this.root);
    this.uniforms = {
      roomState: { value: null },
      typeOn: { value: new Array(16).fill(1) },
      roleColor: { value: new Array(16).fill(0).map(() => new THREE.Color(1, 0, 1)) },
    };
    this.kindOn = [true, true, true, true];
    this.overlay = { perimeters: false, links: false, roads: false, problems: true };
    this.uniforms.typeOn.value[12] = 0; // facade bounds: off at first
    this.selected = 0;
    this.textures = [];
  }

  /** Replace the city with a parsed payload ({meta, buffers}). */
  load(data) {
    this.dispose();
    const { meta, buffers } = data;
    this.meta = meta;
    this.buffers = buffers;
    const nrooms = meta.rooms.length;
    this.verts = buffers.vertices || new Float32Array(0);
    meta.roles.forEach((r, i) => this.uniforms.roleColor.value[i].copy(rgb(r.color)));

    // room state: r = visible, g = 0 plain / 1 selected / 2 neighbour
    const h = Math.max(1, Math.ceil((nrooms + 1) / ROOM_TEX_WIDTH));
    this.state = new Uint8Array(ROOM_TEX_WIDTH * h * 4);
    this.stateTex = new THREE.DataTexture(this.state, ROOM_TEX_WIDTH, h, THREE.RGBAFormat, THREE.UnsignedByteType);
    this.stateTex.magFilter = this.stateTex.minFilter = THREE.NearestFilter;
    this.uniforms.roomState.value = this.stateTex;

    const geo = new THREE.BufferGeometry();
    const pos = buffers.position || new Float32Array(0);
    geo.setAttribute("position", new THREE.BufferAttribute(pos, 3));
    geo.setAttribute("room", new THREE.BufferAttribute(buffers.room || new Uint16Array(0), 1));
    geo.setAttribute("info", new THREE.BufferAttribute(buffers.info || new Uint8Array(0), 2));
    const uv = buffers.uv || new Float32Array((pos.length / 3) * 2);
    geo.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
    geo.setIndex(new THREE.BufferAttribute(buffers.index || new Uint16Array(0), 1));
    geo.computeBoundingSphere();
    geo.computeBoundingBox();
    this.geometry = geo;

    // one material for the role colours; one per material with an image
    const plain = this.material(null);
    const mats = [plain];
    const matIndex = meta.materials.map((m) => {
      if (!m.image) return 0;
      const tex = new THREE.TextureLoader().load(m.image);
      tex.wrapS = tex.wrapT = THREE.RepeatWrapping;
      tex.colorSpace = THREE.NoColorSpace;
      this.textures.push(tex);
      mats.push(this.material(tex));
      return mats.length - 1;
    });
    if (mats.length > 1) {
      for (const g of meta.groups) geo.addGroup(g.start, g.count, matIndex[g.material] ?? 0);
      this.mesh = new THREE.Mesh(geo, mats);
    } else {
      this.mesh = new THREE.Mesh(geo, plain);
    }
    this.materials = mats;
    this.mesh.frustumCulled = false;
    this.root.add(this.mesh);

    // room centres and bounds
    this.box = geo.boundingBox && isFinite(geo.boundingBox.min.x) ? geo.boundingBox.clone()
      : new THREE.Box3(new THREE.Vector3(-50, 0, -50), new THREE.Vector3(50, 10, 50));
    this.buildOverlays();
    this.refreshState();
  }

  material(map) {
    const uniforms = { ...this.uniforms, map: { value: map }, useMap: { value: map ? 1 : 0 } };
    return new THREE.ShaderMaterial({
      uniforms, vertexShader: VERTEX, fragmentShader: FRAGMENT, side: THREE.DoubleSide,
      polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1,
    });
  }

  vertex(i) {
    const v = this.verts;
    return i >= 0 && 3 * i + 2 < v.length ? new THREE.Vector3(v[3 * i], v[3 * i + 1], v[3 * i + 2]) : null;
  }

  center(id) {
    const r = this.meta.rooms[id - 1];
    return r ? new THREE.Vector3(r.center[0], r.center[1], r.center[2]) : null;
  }

  buildOverlays() {
    const meta = this.meta;
    const lift = 0.25;
    // every perimeter
    const per = [];
    for (const r of meta.rooms) {
      const p = r.perimeter;
      for (let k = 0; k < p.length; k++) {
        const a = this.vertex(p[k]), b = this.vertex(p[(k + 1) % p.length]);
        if (a && b) per.push(a.x, a.y + lift, a.z, b.x, b.y + lift, b.z);
      }
    }
    this.perimeters = segments(per, 0x202020, { opacity: 0.45 });
    // every neighbour link (once per pair), centre to centre
    const links = [];
    for (const r of meta.rooms) {
      for (const n of r.neighbours) {
        if (n > r.id && meta.rooms[n - 1]) {
          const a = r.center, b = meta.rooms[n - 1].center;
          links.push(a[0], a[1] + 1.5, a[2], b[0], b[1] + 1.5, b[2]);
        }
      }
    }
    this.links = segments(links, 0x1a5fb4, { opacity: 0.7 });
    // road-record paths through their rooms' centres
    const roads = [], colors = [];
    const col = new THREE.Color();
    meta.roads.forEach((rec, k) => {
      col.setHSL((k * 0.137) % 1, 0.85, 0.45);
      const ids = rec.rooms.map((x) => Math.abs(x)).filter((x) => meta.rooms[x - 1]);
      for (let i = 0; i + 1 < ids.length; i++) {
        const a = meta.rooms[ids[i] - 1].center, b = meta.rooms[ids[i + 1] - 1].center;
        roads.push(a[0], a[1] + 2.5, a[2], b[0], b[1] + 2.5, b[2]);
        colors.push(col.r, col.g, col.b, col.r, col.g, col.b);
      }
    });
    this.roadPaths = segments(roads, 0xffffff, {});
    this.roadPaths.geometry.setAttribute("color", new THREE.BufferAttribute(new Float32Array(colors), 3));
    this.roadPaths.material.vertexColors = true;
    // facade bounds
    const fb = this.buffers.facade_bounds || new Float32Array(0);
    const fbl = [];
    for (let i = 0; i + 11 < fb.length; i += 12) {
      for (let e = 0; e < 4; e++) {
        const a = e * 3, b = ((e + 1) % 4) * 3;
        fbl.push(fb[i + a], fb[i + a + 1], fb[i + a + 2], fb[i + b], fb[i + b + 1], fb[i + b + 2]);
      }
    }
    this.facadeBounds = segments(fbl, 0x8a4fff, { opacity: 0.8 });
    // problem markers: a pin per placed problem
    const placed = meta.problems.filter((p) => Array.isArray(p.at));
    const cone = new THREE.ConeGeometry(1.2, 4, 8);
    cone.rotateX(Math.PI);
    cone.translate(0, 2.5, 0);
    this.markers = new THREE.InstancedMesh(cone, new THREE.MeshBasicMaterial({ depthTest: false, transparent: true, opacity: 0.95 }), Math.max(1, placed.length));
    this.markers.count = placed.length;
    this.markers.renderOrder = 5;
    const m4 = new THREE.Matrix4();
    placed.forEach((p, i) => {
      m4.makeTranslation(p.at[0], p.at[1], p.at[2]);
      this.markers.setMatrixAt(i, m4);
      this.markers.setColorAt(i, new THREE.Color(p.severity === "error" ? 0xe0201b : 0xf59e0b));
    });
    this.markers.frustumCulled = false;
    this.selection = new THREE.Group();
    for (const o of [this.perimeters, this.links, this.roadPaths, this.facadeBounds, this.markers, this.selection]) this.root.add(o);
    this.applyOverlays();
  }

  applyOverlays() {
    if (!this.perimeters) return;
    this.perimeters.visible = this.overlay.perimeters;
    this.links.visible = this.overlay.links;
    this.roadPaths.visible = this.overlay.roads;
    this.markers.visible = this.overlay.problems;
    this.facadeBounds.visible = this.uniforms.typeOn.value[12] > 0.5;
  }

  setType(t, on) {
    this.uniforms.typeOn.value[t] = on ? 1 : 0;
    this.applyOverlays();
  }

  setKind(k, on) {
    this.kindOn[k] = on;
    this.refreshState();
  }

  setOverlay(name, on) {
    this.overlay[name] = on;
    this.applyOverlays();
  }

  roomVisible(id) {
    const r = this.meta.rooms[id - 1];
    return !!r && this.kindOn[r.kind];
  }

  refreshState() {
    if (!this.meta) return;
    const st = this.state;
    st.fill(0);
    const sel = this.meta.rooms[this.selected - 1];
    const nbs = new Set(sel ? sel.neighbours.filter((n) => n > 0) : []);
    for (const r of this.meta.rooms) {
      const o = 4 * r.id;
      st[o] = this.kindOn[r.kind] ? 255 : 0;
      st[o + 1] = r.id === this.selected ? 1 : nbs.has(r.id) ? 2 : 0;
    }
    this.stateTex.needsUpdate = true;
  }

  /** Select a room (0: none): highlight, perimeter, links to its neighbours. */
  select(id) {
    this.selected = this.meta.rooms[id - 1] ? id : 0;
    this.refreshState();
    for (const c of [...this.selection.children]) {
      this.selection.remove(c);
      c.geometry.dispose();
      c.material.dispose();
    }
    const r = this.meta.rooms[this.selected - 1];
    if (!r) return;
    const per = [];
    const p = r.perimeter;
    for (let k = 0; k < p.length; k++) {
      const a = this.vertex(p[k]), b = this.vertex(p[(k + 1) % p.length]);
      if (a && b) per.push(a.x, a.y + 0.3, a.z, b.x, b.y + 0.3, b.z);
    }
    this.selection.add(segments(per, 0xff3b00, { depthTest: false, renderOrder: 4 }));
    const links = [];
    for (const n of r.neighbours) {
      const o = this.meta.rooms[n - 1];
      if (o) links.push(r.center[0], r.center[1] + 2, r.center[2], o.center[0], o.center[1] + 2, o.center[2]);
    }
    this.selection.add(segments(links, 0x0050ff, { depthTest: false, renderOrder: 4 }));
  }

  /** The room under a ray (hidden rooms and types skipped), or 0. */
  pick(raycaster) {
    if (!this.mesh) return { room: 0 };
    const hits = raycaster.intersectObject(this.mesh, false);
    const room = this.geometry.getAttribute("room").array;
    const info = this.geometry.getAttribute("info").array;
    const typeOn = this.uniforms.typeOn.value;
    for (const h of hits) {
      const v = h.face.a;
      const id = room[v];
      if (this.roomVisible(id) && typeOn[info[2 * v + 1]] > 0.5) return { room: id, point: h.point };
    }
    return { room: 0 };
  }

  dispose() {
    for (const c of [...this.root.children]) {
      this.root.remove(c);
      c.traverse?.((o) => {
        o.geometry?.dispose();
        if (Array.isArray(o.material)) o.material.forEach((m) => m.dispose());
        else o.material?.dispose();
      });
    }
    for (const t of this.textures) t.dispose();
    this.textures = [];
    this.stateTex?.dispose();
    this.mesh = null;
    this.perimeters = null;
  }
}

export { list };
