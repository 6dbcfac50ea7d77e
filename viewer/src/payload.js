// The city payload written by lua/psdl/view.lua: "PSDLVIEW", u32 format, u32 JSON length,
// JSON, padding to 4 bytes, then the buffers the JSON names (offset from the buffer area,
// element type, count). In the page it is deflated (zlib) and base64-encoded inside
// <script id="psdl-data">; the watch server sends the deflated bytes.

export const FORMAT = 1;

const TYPES = { f32: Float32Array, u32: Uint32Array, u16: Uint16Array, u8: Uint8Array };

/** Base64 text to bytes (natively where the browser has Uint8Array.fromBase64). */
export function fromBase64(text) {
  text = text.trim();
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Inflate zlib-format bytes (the browser's DecompressionStream, read chunk by chunk). */
export async function inflate(bytes) {
  const ds = new DecompressionStream("deflate");
  const writer = ds.writable.getWriter();
  writer.write(bytes);
  writer.close();
  const reader = ds.readable.getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
  }
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

/** Every list of the JSON with a fallback: cjson writes an empty list as {}. */
export function list(x) {
  return Array.isArray(x) ? x : [];
}

/**
 * Parse payload bytes: returns { meta, buffers: {name: TypedArray} }.
 * Throws with a clear message on anything that is not a payload of this format.
 */
export function parse(bytes) {
  const magic = new TextDecoder().decode(bytes.subarray(0, 8));
  if (magic !== "PSDLVIEW") throw new Error("not a psdl view payload (magic " + JSON.stringify(magic) + ")");
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = dv.getUint32(8, true);
  if (format !== FORMAT) throw new Error(`payload format ${format}, this page reads ${FORMAT}`);
  const n = dv.getUint32(12, true);
  if (16 + n > bytes.length) throw new Error("payload truncated in its JSON");
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + n)));
  let base = 16 + n;
  base += (4 - (base % 4)) % 4;
  // copy the buffer area so every typed array is aligned
  const area = bytes.slice(base).buffer;
  const buffers = {};
  for (const [name, b] of Object.entries(meta.buffers || {})) {
    const T = TYPES[b.type];
    if (!T) throw new Error(`buffer ${name}: unknown type ${b.type}`);
    if (b.offset + b.count * T.BYTES_PER_ELEMENT > area.byteLength) throw new Error(`buffer ${name} truncated`);
    buffers[name] = new T(area, b.offset, b.count);
  }
  meta.rooms = list(meta.rooms);
  meta.roads = list(meta.roads);
  meta.problems = list(meta.problems);
  meta.materials = list(meta.materials);
  meta.groups = list(meta.groups);
  // a room's attributes: JSON text in a buffer, parsed when first asked for
  const text = buffers.room_attributes, off = buffers.room_attributes_offsets;
  const utf8 = new TextDecoder();
  meta.rooms.forEach((r, i) => {
    r.perimeter = list(r.perimeter);
    r.neighbours = list(r.neighbours);
    r.roads = list(r.roads);
    if (text && off && i + 1 < off.length) {
      let parsed = null;
      Object.defineProperty(r, "attributes", {
        enumerable: true,
        get: () => (parsed ??= list(JSON.parse(utf8.decode(text.subarray(off[i], off[i + 1]))))),
      });
    } else {
      r.attributes = list(r.attributes);
    }
  });
  for (const r of meta.roads) {
    r.rooms = list(r.rooms);
    r.lanes_left = list(r.lanes_left);
    r.lanes_right = list(r.lanes_right);
  }
  return { meta, buffers };
}

/** Read the payload embedded in the page (null when the page has none). */
export async function embedded() {
  const el = document.getElementById("psdl-data");
  if (!el) return null;
  const raw = fromBase64(el.textContent);
  return parse(await inflate(raw));
}
