/** Who is calling, from a verified bearer token (adapters/http/auth.ts) or the MCP session it opened. */
export interface Principal {
  readonly tenantId: string;
  readonly userId: string;
  readonly roles: readonly string[];
}
