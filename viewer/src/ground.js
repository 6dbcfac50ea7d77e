// Heights of the drivable surface for the drive camera: the triangles of roads,
// intersections, sidewalks, crosswalks, walkways, dividers and ground, in a grid of cells
// so a height lookup tests a few triangles.

const DRIVABLE = new Set(["ground", "road", "intersection", "walkway", "sidewalk", "crosswalk", "divider"]);
const CELL = 8; // metres

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
