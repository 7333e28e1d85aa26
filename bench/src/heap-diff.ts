// `node dist/heap-diff.js <earlier.heapsnapshot> <later.heapsnapshot> [top]`: what a process retained between
// two heap snapshots, by constructor: live objects and their own bytes in each, largest growth first.
import { readFileSync } from "node:fs";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size of live objects by `type:name` (closures, objects, arrays, strings grouped). */
export function byConstructor(file: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]];
    // Strings and numbers by their kind only: their "name" is their value.
    const name = type === "object" || type === "closure" || type === "native" ? snap.strings[snap.nodes[i + nameAt]] : "";
    const key = `${type}:${name.slice(0, 80)}`;
    const entry = out.get(key) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snap.nodes[i + sizeAt];
    out.set(key, entry);
  }
  return out;
}

function main(): void {
  const [a, b, topArg] = process.argv.slice(2);
  if (!a || !b) throw new Error("usage: heap-diff <earlier.heapsnapshot> <later.heapsnapshot> [top]");
  const before = byConstructor(a);
  const after = byConstructor(b);
  const total = (m: Map<string, { count: number; bytes: number }>) =>
    [...m.values()].reduce((s, v) => ({ count: s.count + v.count, bytes: s.bytes + v.bytes }), { count: 0, bytes: 0 });
  const rows = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
    const x = before.get(key) ?? { count: 0, bytes: 0 };
    const y = after.get(key) ?? { count: 0, bytes: 0 };
    return { key, countBefore: x.count, countAfter: y.count, bytesBefore: x.bytes, bytesAfter: y.bytes };
  });
  rows.sort((r, s) => s.bytesAfter - s.bytesBefore - (r.bytesAfter - r.bytesBefore));
  const tb = total(before);
  const ta = total(after);
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
  process.stdout.write(`live objects ${tb.count} → ${ta.count}, self size ${kb(tb.bytes)} → ${kb(ta.bytes)}\n\n`);
  process.stdout.write(`${"type:constructor".padEnd(60)} ${"count".padStart(17)} ${"Δcount".padStart(9)} ${"Δself size".padStart(11)}\n`);
  for (const r of rows.slice(0, Number(topArg) || 40)) {
    process.stdout.write(
      `${r.key.padEnd(60)} ${`${r.countBefore} → ${r.countAfter}`.padStart(17)} ${String(r.countAfter - r.countBefore).padStart(9)} ${kb(r.bytesAfter - r.bytesBefore).padStart(11)}\n`,
    );
  }
}

if (require.main === module) main();
