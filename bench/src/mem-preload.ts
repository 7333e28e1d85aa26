// Loaded with `NODE_OPTIONS=--require .../mem-preload.js` into the services the soak starts: every
// $BENCH_MEM_INTERVAL_MS (default 5 000) a line of process.memoryUsage() goes to $BENCH_MEM_DIR/<pid>.jsonl,
// so that RSS growth can be told apart from V8 heap growth without touching the services' code.
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";

const dir = process.env.BENCH_MEM_DIR;
if (dir) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${process.pid}.jsonl`);
  const intervalMs = Number(process.env.BENCH_MEM_INTERVAL_MS) || 5000;
  // The limit shows which heap flags the process really got.
  const heapLimit = getHeapStatistics().heap_size_limit;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    // One small synchronous append per interval: cheap next to the service's own work.
    appendFileSync(
      file,
      `${JSON.stringify({ at: Date.now(), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, heapLimit })}\n`,
    );
  }, intervalMs);
  timer.unref();
}
