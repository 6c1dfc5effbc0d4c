/**
 * Server CPU time from /proc: utime + stime of a process and all its descendants (so a launcher
 * such as `npx` or a CLI that re-executes itself is counted with the server it starts), in
 * microseconds. Read before and after a measured window; the difference ÷ requests is the
 * server's CPU cost per request, which stays meaningful when the 2-core machine is saturated by
 * the client and reads/s no longer tell servers apart.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second for /proc/PID/stat times (USER_HZ; 100 on every Linux the bench runs on). */
const TICKS_PER_SECOND = 100;

/** { ppid, ticks } of one process from /proc/PID/stat, or undefined if it is gone. */
function statOf(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: fields restart after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) … utime(14) stime(15) → indexes 0, 1, … 11, 12.
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** Pids of `pid` and all its descendants (one pass over /proc). */
export function processTree(pid) {
  const children = new Map();
  let entries = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [pid];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(name);
    if (stat === undefined) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(name));
    children.set(stat.ppid, list);
  }
  const tree = [];
  const walk = (p) => {
    tree.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return tree;
}

/**
 * CPU microseconds (user + system) used so far by `pid` and its descendants; NaN where /proc is
 * missing. The tree is resolved on every call, so pass the launcher's pid.
 */
export function cpuMicros(pid) {
  let ticks = 0;
  let found = false;
  for (const p of processTree(pid)) {
    const stat = statOf(p);
    if (stat === undefined) continue;
    found = true;
    ticks += stat.ticks;
  }
  return found ? (ticks * 1_000_000) / TICKS_PER_SECOND : NaN;
}

/** Starts a CPU window on `pid`: `stop(requests)` returns µs of server CPU per request. */
export function cpuWindow(pid) {
  const before = cpuMicros(pid);
  return { stop: (requests) => (requests > 0 ? (cpuMicros(pid) - before) / requests : NaN) };
}
