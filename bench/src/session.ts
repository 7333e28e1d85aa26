import { writeFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Pool } from "@steward/platform";
import { freshNamespace, natsUrl } from "./databases";
import { floorStreamName } from "./floors/nats-floor";
import { deleteStreams, startBenchPlatform } from "./platform";
import { gatewayClient } from "./steward/client";
import type { StewardBench } from "./steward/context";
import { rssMb } from "./steward/memory";
import { watchRuns } from "./steward/watcher";

export interface PlatformSession {
  /** The running platform; a fresh one (new processes, new NATS namespace, same database) after `spoil()`. */
  bench(): Promise<StewardBench>;
  /** Marks the platform unusable (e.g. a phase left it stuck): the next `bench()` starts a new one. */
  spoil(reason: string): void;
  readonly restarts: string[];
  close(): Promise<void>;
}

/**
 * Owns the platform's lifetime across phases. A phase that leaves the services stuck (a deadlocked
 * tool-exec, say) must not spoil the phases after it, so they get a new platform.
 */
export function platformSession(options: {
  databaseUrl: string;
  modelUrl: string;
  pool: Pool;
  profileDir?: string;
  logDir?: string;
  say: (text: string) => void;
  /** Filled with the services' pids. */
  ourPids: Set<number>;
}): PlatformSession {
  let current: StewardBench | null = null;
  let spoiled: string | null = null;
  const namespaces: string[] = [];
  const restarts: string[] = [];

  async function stopCurrent(): Promise<void> {
    if (!current) return;
    const c = current;
    current = null;
    await c.watcher.close().catch(() => undefined);
    c.client.close();
    await c.platform.stop();
  }

  return {
    restarts,
    async bench() {
      if (current && !spoiled) return current;
      if (spoiled) {
        options.say(`restarting the platform: ${spoiled}`);
        restarts.push(spoiled);
        spoiled = null;
        await stopCurrent();
      }
      const namespace = freshNamespace();
      namespaces.push(namespace);
      options.say(`starting the platform (namespace ${namespace})`);
      const platform = await startBenchPlatform({
        databaseUrl: options.databaseUrl,
        namespace,
        modelUrl: options.modelUrl,
        runnerConcurrency: 128,
        profileDir: options.profileDir,
        logDir: options.logDir,
      });
      for (const s of Object.values(platform.services)) if (s.child.pid) options.ourPids.add(s.child.pid);
      if (options.profileDir) {
        const file = join(options.profileDir, "pids.json");
        const pids = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, string>) : {};
        for (const [name, s] of Object.entries(platform.services)) pids[String(s.child.pid)] = name;
        writeFileSync(file, JSON.stringify(pids, null, 2));
      }
      const watcher = await watchRuns(natsUrl, namespace).catch(async (err) => {
        await platform.stop();
        throw err;
      });
      current = {
        platform,
        client: gatewayClient(platform.gatewayUrl),
        watcher,
        pool: options.pool,
        token: await platform.token("bench-user"),
        runnerStartRssMb: rssMb(platform.services.runner.child.pid!),
      };
      return current;
    },
    spoil(reason) {
      if (current) spoiled = reason;
    },
    async close() {
      await stopCurrent();
      for (const ns of namespaces) await deleteStreams(ns, [floorStreamName(ns)]).catch(() => undefined);
    },
  };
}
