// Summarises V8 .cpuprofile files (from --cpu-prof): self time by function and by where the code lives
// (a package, a Steward package or service, node internals, GC). Usable alone:
//   node bench/dist/profile-summary.js <file-or-folder> [top]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  readonly file: string;
  readonly totalMs: number;
  /** Sampled time that was not idle, ms. */
  readonly busyMs: number;
  readonly byArea: Array<{ area: string; ms: number; share: number }>;
  readonly byFunction: Array<{ fn: string; area: string; ms: number; share: number }>;
  /**
   * Native socket/pipe writes (writev, writeBuffer, writeString…: the syscalls) charged to the first caller
   * outside node's own code — which component's traffic the write time is.
   */
  readonly writesByCaller: Array<{ area: string; ms: number; share: number }>;
}

const WRITES = new Set(["writev", "writeBuffer", "writeString", "writeUtf8String", "writeLatin1String", "writeAsciiString", "writeUcs2String"]);

/** Where a frame's code lives: an npm package, a Steward package/service, node itself, or V8's pseudo-frames. */
export function areaOf(url: string, functionName: string): string {
  if (!url) {
    if (functionName.startsWith("(")) return functionName; // (garbage collector), (program), (idle)
    return "(native)";
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const svc = /\/services\/([^/]+)\//.exec(url);
  if (svc) return `steward:${svc[1]}`;
  const pkg = /\/packages\/([^/]+)\//.exec(url);
  if (pkg) return `@steward/${pkg[1]}`;
  const b = /\/bench\//.exec(url);
  if (b) return "bench";
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[1] ?? url.slice(5)}`;
  return url;
}

export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const writes = new Map<string, number>();
  const writerOf = (id: number): string => {
    for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      const area = areaOf(f.url, f.functionName);
      if (!area.startsWith("node:") && !area.startsWith("(")) return area;
    }
    return "(node itself)";
  };
  const areas = new Map<string, number>();
  const fns = new Map<string, { area: string; us: number }>();
  let idle = 0;
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === "(idle)") {
      idle += us;
      continue;
    }
    const area = areaOf(url, functionName);
    if (WRITES.has(functionName)) {
      const w = writerOf(id);
      writes.set(w, (writes.get(w) ?? 0) + us);
    }
    areas.set(area, (areas.get(area) ?? 0) + us);
    const key = `${functionName || "(anonymous)"} ${url ? `${basename(url)}:${lineNumber + 1}` : ""}`.trim();
    const f = fns.get(key) ?? { area, us: 0 };
    f.us += us;
    fns.set(key, f);
  }
  const busy = total - idle;
  return {
    file,
    totalMs: total / 1000,
    busyMs: busy / 1000,
    byArea: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => ({ area, ms: us / 1000, share: us / busy })),
    byFunction: [...fns.entries()]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([fn, f]) => ({ fn, area: f.area, ms: f.us / 1000, share: f.us / busy })),
    writesByCaller: [...writes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([area, us]) => ({ area, ms: us / 1000, share: us / busy })),
  };
}

export function formatSummary(s: ProfileSummary, label = basename(s.file)): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(6);
  const lines = [`== ${label}: ${s.busyMs.toFixed(0)} ms busy of ${s.totalMs.toFixed(0)} ms sampled`, "  by area (self time):"];
  for (const a of s.byArea) lines.push(`    ${pct(a.share)} ${a.ms.toFixed(0).padStart(7)} ms  ${a.area}`);
  if (s.writesByCaller.length) {
    lines.push("  native writes (syscalls) by the component that wrote:");
    for (const w of s.writesByCaller) lines.push(`    ${pct(w.share)} ${w.ms.toFixed(0).padStart(7)} ms  ${w.area}`);
  }
  lines.push("  by function (self time):");
  for (const f of s.byFunction) lines.push(`    ${pct(f.share)} ${f.ms.toFixed(0).padStart(7)} ms  ${f.fn}  [${f.area}]`);
  return lines.join("\n");
}

export function profilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(dir, f));
}

if (require.main === module) {
  const [target, top] = process.argv.slice(2);
  if (!target) {
    process.stderr.write("usage: node dist/profile-summary.js <file.cpuprofile | folder> [top]\n");
    process.exit(2);
  }
  const files = statSync(target).isDirectory() ? profilesIn(target) : [target];
  for (const f of files) process.stdout.write(`${formatSummary(summarizeProfile(f, Number(top) || 15))}\n\n`);
}
