// CPU figures from /proc for the viewer benchmarks (bench/bench_view.mjs,
// bench/view_floor.mjs): Linux only.
import { readdirSync, readFileSync } from "node:fs";

// CPU time (ms, user + system) of process `root` and all its descendants, from /proc.
export function cpuMs(root) {
  const stat = {};
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      stat[d] = { ppid: f[1], ticks: Number(f[11]) + Number(f[12]) };
    } catch { /* gone */ }
  }
  let total = 0;
  const want = new Set([String(root)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, st] of Object.entries(stat)) {
      if (!want.has(pid) && want.has(st.ppid)) { want.add(pid); grew = true; }
    }
  }
  for (const pid of want) total += stat[pid] ? stat[pid].ticks : 0;
  return total * 10; // 100 ticks per second
}

// The machine's load average over the last minute (a string, as /proc/loadavg writes it).
export const load = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0];
