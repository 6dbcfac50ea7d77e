// Levels of detail for the city mesh: vertex clustering. The vertices of one room and one
// role that fall in the same cube of a grid (the cell, metres) are merged into one of them
// (the first met), and the triangles that collapse (two corners in one cube) or repeat
// another triangle are dropped. A coarse index references the full level's vertices, so a
// level costs an index buffer only, and a room stays a room at every level (selection
// highlights it, the room and role layers apply). Kerbs, crosswalk stripes, rounded
// corners and the short segments of curves fall away; facades, roofs and roads keep their
// shape to within a cell.

// Open-addressing hash tables on typed arrays (a Map of 150,000 keys costs ~0.5 s in a
// loaded software-rendering browser; these take milliseconds).
function tableSize(n) {
  let s = 1024;
  while (s < 2 * n) s *= 2;
  return s;
}

function mix(h, x) {
  h = Math.imul(h ^ x, 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 0;
}

/**
 * Representative vertex of every vertex for a cell size: the first vertex of the same room
 * and role in the same cube.
 * @param {Float32Array} pos positions (x, y, z per vertex), metres
 * @param {ArrayLike<number>} room room id per vertex
 * @param {Uint8Array} info (role, attribute type) per vertex
 * @param {number} cell edge of the grid's cubes, metres (> 0)
 * @returns {Uint32Array} representative index per vertex
 */
export function representatives(pos, room, info, cell) {
  const steps = representativeSteps(pos, room, info, cell);
  let r;
  do r = steps.next(); while (!r.done);
  return r.value;
}

/** Vertices handled between two yields of the step functions (a few milliseconds' work). */
export const STEP = 8192;

/**
 * `representatives` in steps: a generator that yields every STEP vertices (so that a page
 * can spread the work over several tasks) and returns the representatives.
 */
export function* representativeSteps(pos, room, info, cell) {
  const n = pos.length / 3;
  const rep = new Uint32Array(n);
  const q = new Int32Array(3 * n);
  const inv = 1 / cell;
  for (let i = 0; i < 3 * n; i++) q[i] = Math.floor(pos[i] * inv);
  yield;
  const size = tableSize(n), mask = size - 1;
  const slot = new Int32Array(size).fill(-1);
  for (let v = 0; v < n; v++) {
    if (v % STEP === STEP - 1) yield;
    const x = q[3 * v], y = q[3 * v + 1], z = q[3 * v + 2], r = room[v], role = info[2 * v];
    let h = mix(mix(mix(mix(mix(0x12345, x), y), z), r), role) & mask;
    for (;;) {
      const w = slot[h];
      if (w < 0) { slot[h] = v; rep[v] = v; break; }
      if (q[3 * w] === x && q[3 * w + 1] === y && q[3 * w + 2] === z && room[w] === r && info[2 * w] === role) {
        rep[v] = w;
        break;
      }
      h = (h + 1) & mask;
    }
  }
  return rep;
}

/**
 * The triangles of `index[start .. start + count)` at the level given by `rep` (see
 * `representatives`; null: the full level): collapsed triangles and repeats (the same three
 * corners in any order) dropped.
 * @param {ArrayLike<number>} index triangle list
 * @param {number} start first index
 * @param {number} count indices (a multiple of 3)
 * @param {Uint32Array|null} rep
 * @param {Uint32Array} out receives the kept triangles from position `at`
 * @param {number} at
 * @returns {number} the position in `out` after the kept triangles
 */
export function simplify(index, start, count, rep, out, at) {
  const size = tableSize(count / 3), mask = size - 1;
  if (!scratch || scratch.length < size) scratch = new Int32Array(size);
  const slot = scratch;
  slot.fill(-1, 0, size);
  const begin = at;
  for (let t = start; t < start + count; t += 3) {
    const a = rep ? rep[index[t]] : index[t], b = rep ? rep[index[t + 1]] : index[t + 1], c = rep ? rep[index[t + 2]] : index[t + 2];
    if (a === b || b === c || a === c) continue;
    let lo = a, mid = b, hi = c, x;
    if (lo > mid) { x = lo; lo = mid; mid = x; }
    if (mid > hi) { x = mid; mid = hi; hi = x; }
    if (lo > mid) { x = lo; lo = mid; mid = x; }
    let h = mix(mix(mix(0x2468, lo), mid), hi) & mask;
    let dup = false;
    for (;;) {
      const k = slot[h];
      if (k < 0) { slot[h] = at; break; }
      // the kept triangle at k: the same corners?
      const p = out[k], q = out[k + 1], r = out[k + 2];
      if ((p === lo || q === lo || r === lo) && (p === mid || q === mid || r === mid) && (p === hi || q === hi || r === hi)) {
        dup = true;
        break;
      }
      h = (h + 1) & mask;
    }
    if (dup) continue;
    out[at] = a; out[at + 1] = b; out[at + 2] = c;
    at += 3;
  }
  return at;
}

let scratch = null; // hash table reused between calls (one thread)
