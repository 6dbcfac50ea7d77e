// Heights of the drivable surface for the drive camera: the triangles of roads,
// intersections, sidewalks, crosswalks, walkways, dividers and ground, in a grid of cells
// so a height lookup tests a few triangles; and the walls it must not pass (facades,
// slivers, tunnel walls: their near-vertical triangles seen from above as segments).

const DRIVABLE = new Set(["ground", "road", "intersection", "walkway", "sidewalk", "crosswalk", "divider"]);
const WALLS = new Set(["facade", "sliver", "wall"]);
const CELL = 8; // metres
/** A wall stops the camera when it reaches below this height over the road (metres)... */
const WALL_LOW = 1.0;
/** ...and rises above this one (kerbs and small steps do not stop it). */
const WALL_HIGH = 0.3;
/** The camera keeps this distance (metres) from a wall ahead. */
export const WALL_GAP = 0.6;

const cellKey = (i, j) => i * 73856093 ^ j * 19349663;

export class Ground {
  constructor(meta, buffers) {
    const roles = meta.roles.map((r) => DRIVABLE.has(r.name));
    const pos = buffers.position, info = buffers.info, index = buffers.index;
    this.pos = pos;
    this.cells = new Map();
    this.roadRole = meta.roles.findIndex((r) => r.name === "road");
    this.info = info;
    for (let t = 0; t + 2 < index.length; t += 3) {
      const a = index[t], b = index[t + 1], c = index[t + 2];
      if (!roles[info[2 * a]]) continue;
      const xs = [pos[3 * a], pos[3 * b], pos[3 * c]], zs = [pos[3 * a + 2], pos[3 * b + 2], pos[3 * c + 2]];
      const x0 = Math.floor(Math.min(...xs) / CELL), x1 = Math.floor(Math.max(...xs) / CELL);
      const z0 = Math.floor(Math.min(...zs) / CELL), z1 = Math.floor(Math.max(...zs) / CELL);
      if (!(x1 - x0 < 64 && z1 - z0 < 64)) continue; // a corrupt, huge triangle
      for (let i = x0; i <= x1; i++) {
        for (let j = z0; j <= z1; j++) {
          const key = i * 73856093 ^ j * 19349663;
          let l = this.cells.get(key);
          if (!l) this.cells.set(key, (l = []));
          l.push(t);
        }
      }
    }
    this.index = index;
    // walls: [x0, z0, x1, z1, ymin, ymax] per near-vertical triangle, by cell
    this.walls = [];
    this.wallCells = new Map();
    const walls = meta.roles.map((r) => WALLS.has(r.name));
    for (let t = 0; t + 2 < index.length; t += 3) {
      const a = index[t], b = index[t + 1], c = index[t + 2];
      if (!walls[info[2 * a]]) continue;
      const P = [a, b, c].map((v) => [pos[3 * v], pos[3 * v + 1], pos[3 * v + 2]]);
      const u = [P[1][0] - P[0][0], P[1][1] - P[0][1], P[1][2] - P[0][2]];
      const w = [P[2][0] - P[0][0], P[2][1] - P[0][1], P[2][2] - P[0][2]];
      const n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]];
      const len = Math.hypot(n[0], n[1], n[2]);
      if (!(len > 1e-9) || Math.abs(n[1]) > 0.3 * len) continue; // not a wall
      // seen from above a vertical triangle is a segment: its two farthest corners
      let best = -1, p = P[0], q = P[1];
      for (const [i, j] of [[0, 1], [1, 2], [0, 2]]) {
        const d = (P[i][0] - P[j][0]) ** 2 + (P[i][2] - P[j][2]) ** 2;
        if (d > best) { best = d; p = P[i]; q = P[j]; }
      }
      if (best < 1e-4) continue;
      const k = this.walls.length;
      this.walls.push([p[0], p[2], q[0], q[2], Math.min(P[0][1], P[1][1], P[2][1]), Math.max(P[0][1], P[1][1], P[2][1])]);
      const x0 = Math.floor(Math.min(p[0], q[0]) / CELL), x1 = Math.floor(Math.max(p[0], q[0]) / CELL);
      const z0 = Math.floor(Math.min(p[2], q[2]) / CELL), z1 = Math.floor(Math.max(p[2], q[2]) / CELL);
      if (!(x1 - x0 < 64 && z1 - z0 < 64)) continue;
      for (let i = x0; i <= x1; i++) {
        for (let j = z0; j <= z1; j++) {
          let l = this.wallCells.get(cellKey(i, j));
          if (!l) this.wallCells.set(cellKey(i, j), (l = []));
          l.push(k);
        }
      }
    }
  }

  /**
   * Whether a wall stands across the move from (x0, z0) to (x1, z1) for a camera over a
   * road at height y (the move is lengthened by WALL_GAP so the camera stops short of it).
   */
  blocked(x0, z0, x1, z1, y) {
    const dx = x1 - x0, dz = z1 - z0, d = Math.hypot(dx, dz);
    if (d < 1e-9) return false;
    const ex = x1 + (dx / d) * WALL_GAP, ez = z1 + (dz / d) * WALL_GAP;
    const seen = new Set();
    const i0 = Math.floor(Math.min(x0, ex) / CELL), i1 = Math.floor(Math.max(x0, ex) / CELL);
    const j0 = Math.floor(Math.min(z0, ez) / CELL), j1 = Math.floor(Math.max(z0, ez) / CELL);
    for (let i = i0; i <= i1; i++) {
      for (let j = j0; j <= j1; j++) {
        for (const k of this.wallCells.get(cellKey(i, j)) || []) {
          if (seen.has(k)) continue;
          seen.add(k);
          const [ax, az, bx, bz, ylo, yhi] = this.walls[k];
          if (ylo > y + WALL_LOW || yhi < y + WALL_HIGH) continue;
          if (crosses(x0, z0, ex, ez, ax, az, bx, bz)) return true;
        }
      }
    }
    return false;
  }

  /**
   * Surface heights at (x, z): the one closest to `near` (a height) among the surfaces
   * at most `climb` metres above it; null when nothing is drivable there.
   */
  height(x, z, near, climb = 1.2) {
    const l = this.cells.get(Math.floor(x / CELL) * 73856093 ^ Math.floor(z / CELL) * 19349663);
    if (!l) return null;
    const p = this.pos, idx = this.index;
    let best = null, bestD = Infinity;
    for (const t of l) {
      const a = idx[t], b = idx[t + 1], c = idx[t + 2];
      const ax = p[3 * a], az = p[3 * a + 2], bx = p[3 * b], bz = p[3 * b + 2], cx = p[3 * c], cz = p[3 * c + 2];
      const d = (bz - cz) * (ax - cx) + (cx - bx) * (az - cz);
      if (Math.abs(d) < 1e-9) continue;
      const u = ((bz - cz) * (x - cx) + (cx - bx) * (z - cz)) / d;
      const v = ((cz - az) * (x - cx) + (ax - cx) * (z - cz)) / d;
      const w = 1 - u - v;
      if (u < -1e-6 || v < -1e-6 || w < -1e-6) continue;
      const y = u * p[3 * a + 1] + v * p[3 * b + 1] + w * p[3 * c + 1];
      if (y > near + climb) continue;
      const dd = Math.abs(y - near);
      if (dd < bestD) { bestD = dd; best = y; }
    }
    return best;
  }

  /** A point on a road near (x, z): the centre of the nearest road triangle in nearby cells. */
  nearestRoad(x, z) {
    const p = this.pos, idx = this.index;
    for (let ring = 0; ring < 40; ring++) {
      let best = null, bestD = Infinity;
      const ci = Math.floor(x / CELL), cj = Math.floor(z / CELL);
      for (let i = ci - ring; i <= ci + ring; i++) {
        for (let j = cj - ring; j <= cj + ring; j++) {
          if (Math.max(Math.abs(i - ci), Math.abs(j - cj)) !== ring) continue;
          for (const t of this.cells.get(i * 73856093 ^ j * 19349663) || []) {
            const a = idx[t];
            if (this.info[2 * a] !== this.roadRole) continue;
            const mx = (p[3 * a] + p[3 * idx[t + 1]] + p[3 * idx[t + 2]]) / 3;
            const mz = (p[3 * a + 2] + p[3 * idx[t + 1] + 2] + p[3 * idx[t + 2] + 2]) / 3;
            const my = (p[3 * a + 1] + p[3 * idx[t + 1] + 1] + p[3 * idx[t + 2] + 1]) / 3;
            const d = (mx - x) ** 2 + (mz - z) ** 2;
            if (d < bestD) { bestD = d; best = [mx, my, mz]; }
          }
        }
      }
      if (best) return best;
    }
    return null;
  }
}

// Whether segments p-q and a-b cross (touching counts).
function crosses(px, pz, qx, qz, ax, az, bx, bz) {
  const side = (ox, oz, ux, uz, x, z) => (ux - ox) * (z - oz) - (uz - oz) * (x - ox);
  const d1 = side(ax, az, bx, bz, px, pz), d2 = side(ax, az, bx, bz, qx, qz);
  const d3 = side(px, pz, qx, qz, ax, az), d4 = side(px, pz, qx, qz, bx, bz);
  return ((d1 <= 0 && d2 >= 0) || (d1 >= 0 && d2 <= 0)) && ((d3 <= 0 && d4 >= 0) || (d3 >= 0 && d4 <= 0))
    && !(d1 === 0 && d2 === 0); // collinear: moving along a wall, not through it
}
