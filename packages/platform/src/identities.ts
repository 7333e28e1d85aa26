/**
 * Steward's services as the internal planes know them: the subject CN of a service's certificate (gRPC), its
 * NATS user, and (as `steward_<name>` with `_` for `-`) its PostgreSQL role.
 */
export const serviceIdentities = ["gateway", "agent-runner", "tool-exec", "policy"] as const;
export type ServiceIdentity = (typeof serviceIdentities)[number];
