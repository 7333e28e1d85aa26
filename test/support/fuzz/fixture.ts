import type { FuzzToken, Who } from "./tokens";

/** A run seeded before the fuzz; `marker` is a random word in its input that only its owner may ever see. */
export interface SeededRun {
  readonly id: string;
  readonly owner: Who;
  readonly marker: string;
  /** What it was left doing: a finished run, or one waiting for an answer or a confirmation. */
  readonly state: string;
  /** Left waiting for the whole fuzz (no control route names it), so its event stream stays live. */
  readonly reserved?: boolean;
}

/** A knowledge document seeded in a tenant; `marker` may reach that tenant's users only. */
export interface SeededDocument {
  readonly id: string;
  readonly tenant: string;
  readonly marker: string;
}

/** A tenant's own record carrying a marker (a policy set's comment, a dataset grant's reason). */
export interface TenantMark {
  readonly tenant: string;
  readonly what: string;
  readonly marker: string;
}

/** What the generator draws from: the seeded resources of every principal, and the token variants. */
export interface FuzzFixture {
  readonly runs: readonly SeededRun[];
  readonly documents: readonly SeededDocument[];
  readonly tenantMarks: readonly TenantMark[];
  readonly tokens: readonly FuzzToken[];
  /** The tenants' default policy text: the only valid Cedar an upload sends, so an activation changes nothing. */
  readonly defaultPolicies: string;
}

export const sameWho = (a: Who | undefined, b: Who | undefined): boolean => !!a && !!b && a.tenant === b.tenant && a.user === b.user;
