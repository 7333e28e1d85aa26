import type { Pool } from "@steward/platform";

/**
 * The pool, writing down each statement sent through `pool.query`: a prepared statement by its name, any other
 * as "". A transaction on a client of its own (`pool.connect`) is not seen.
 */
export function statementLog(pool: Pool): { pool: Pool; sent: string[]; named(name: string): number } {
  const sent: string[] = [];
  const logged = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver);
      return (...args: unknown[]) => {
        const name = (args[0] as { name?: unknown } | undefined)?.name;
        sent.push(typeof name === "string" ? name : "");
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { pool: logged, sent, named: (name) => sent.filter((n) => n === name).length };
}
