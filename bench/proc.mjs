// What the web benches read of a server's processes in /proc (Linux).
import { readdirSync, readFileSync } from "node:fs";

/** The process `pid` and its children (a supervisor's workers). */
export function family(pid) {
  const all = [pid];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1].split(" ")[1]) === pid) all.push(Number(entry));
    } catch { /* gone meanwhile */ }
  }
  return all;
}

/** The resident memory of `pid` in KiB (VmRSS), 0 once it is gone. */
export function rssOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
  } catch {
    return 0;
  }
}
