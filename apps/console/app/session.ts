/**
 * The bearer token: in memory, and in this tab's session storage so that a reload keeps it. Never in a URL,
 * a cookie or local storage; closing the tab forgets it.
 */
const KEY = "steward.console.token";
let token: string | null = null;

export function currentToken(): string | null {
  if (token === null) {
    try {
      token = sessionStorage.getItem(KEY);
    } catch {
      token = null;
    }
  }
  return token;
}

export function signIn(value: string): void {
  token = value;
  try {
    sessionStorage.setItem(KEY, value);
  } catch {
    // storage refused (private mode): the token lives in memory for this page only
  }
}

export function signOut(): void {
  token = null;
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
}

/** The `sub` and `tid` claims of the token, for display only (the gateway verifies it). */
export function claimsOf(value: string): { user?: string; tenant?: string } {
  try {
    const payload = value.split(".")[1] ?? "";
    const json = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as { sub?: unknown; tid?: unknown };
    return { user: typeof json.sub === "string" ? json.sub : undefined, tenant: typeof json.tid === "string" ? json.tid : undefined };
  } catch {
    return {};
  }
}
