/** What one check found: up, or down with a reason a person can act on (never a secret or a raw error). */
export type CheckResult = { readonly ok: true; readonly detail?: string } | { readonly ok: false; readonly reason: string };

export type Check = () => CheckResult | Promise<CheckResult>;

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, CheckResult>>;
  /** The reasons of the failing checks, each prefixed with the check's name. */
  readonly reasons: readonly string[];
}

export interface Readiness {
  /** Adds a named check; a check that throws or takes longer than the timeout counts as down. */
  add(name: string, check: Check): void;
  /** Marks a phase of start-up: not ready while any `pending` phase is unfinished. */
  pending(name: string, reason: string): { done(): void };
  report(): Promise<ReadinessReport>;
}

export const up: CheckResult = { ok: true };
export const down = (reason: string): CheckResult => ({ ok: false, reason });

/** The service's own view of whether it can do its work; served on /readyz, never exits the process. */
export function createReadiness(options: { checkTimeoutMs?: number } = {}): Readiness {
  const timeoutMs = options.checkTimeoutMs ?? 1000;
  const checks = new Map<string, Check>();
  const phases = new Map<string, string>();

  async function run(check: Check): Promise<CheckResult> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(() => resolve(down(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([Promise.resolve().then(check), late]);
    } catch (err) {
      return down(err instanceof Error && err.name !== "Error" ? err.name : "check failed");
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    add: (name, check) => void checks.set(name, check),
    pending(name, reason) {
      phases.set(name, reason);
      return { done: () => void phases.delete(name) };
    },
    async report() {
      const names = [...checks.keys()];
      const results = await Promise.all(names.map((n) => run(checks.get(n)!)));
      const out: Record<string, CheckResult> = {};
      names.forEach((n, i) => (out[n] = results[i]));
      for (const [name, reason] of phases) out[name] = down(reason);
      const reasons = Object.entries(out).flatMap(([n, r]) => (r.ok ? [] : [`${n}: ${r.reason}`]));
      return { ready: reasons.length === 0, checks: out, reasons };
    },
  };
}
