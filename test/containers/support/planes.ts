import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceIdentity } from "@steward/platform";

// The internal planes of a topology, made by the same code that makes compose.yaml's (infra/containers/planes.cjs):
// a CA and a certificate per service, a NATS user per service and the cluster's route login, a PostgreSQL role
// password per service and the owner's, the gateway's JWT secret. The suite hands each container exactly what
// compose gives it: its env file's variables and its own TLS files at the same path.

interface PlanesModule {
  writePlanes(dir: string, options: { natsNodes: number }): Credentials;
  readEnvFile(file: string): Record<string, string>;
  tlsMount: string;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const planesModule = require("../../../infra/containers/planes.cjs") as PlanesModule;

interface Credentials {
  readonly nats: Record<ServiceIdentity | "operator" | "route", string>;
  readonly postgres: Record<ServiceIdentity | "owner", string>;
  readonly jwt: { readonly gateway: string };
}

/** A file to put into a container (testcontainers' ContentToCopy). */
export interface ContainerFile {
  readonly content: Buffer;
  readonly target: string;
  readonly mode: number;
}

export interface Planes {
  readonly dir: string;
  readonly credentials: Credentials;
  /** What `<service>.env` gives the service: its role's DATABASE_URL (host `postgres`), NATS user, TLS paths, JWT secret. */
  env(identity: ServiceIdentity): Record<string, string>;
  /** What `prepare.env` gives `steward prepare`: the owner's URL and the roles' passwords. */
  prepareEnv(): Record<string, string>;
  /**
   * The service's TLS files at the path compose mounts them. Copied, they belong to root: readable by all (0444),
   * so that the image's `nobody` reads them; compose's mounted copies are the service user's own, 0400.
   */
  tlsFiles(identity: ServiceIdentity): ContainerFile[];
  /** The nats-server configuration every node loads (users, permissions, the cluster's route login). */
  natsConfig(target: string): ContainerFile;
  /** The service's role URL, reaching PostgreSQL at `hostPort` (the published port) instead of `postgres:5432`. */
  roleUrl(identity: ServiceIdentity, hostPort: string): string;
  /** The service's STEWARD_TLS_* files on this machine (for clients that present its certificate). */
  hostTls(identity: ServiceIdentity): { STEWARD_TLS_CA: string; STEWARD_TLS_CERT: string; STEWARD_TLS_KEY: string };
  remove(): void;
}

export function makePlanes(natsNodes: number): Planes {
  const dir = mkdtempSync(join(tmpdir(), "steward-planes-"));
  const credentials = planesModule.writePlanes(dir, { natsNodes });
  const { readEnvFile, tlsMount } = planesModule;
  const env = (identity: ServiceIdentity) => readEnvFile(join(dir, `${identity}.env`));
  return {
    dir,
    credentials,
    env,
    prepareEnv: () => readEnvFile(join(dir, "prepare.env")),
    tlsFiles: (identity) =>
      ["ca.crt", "tls.crt", "tls.key"].map((name) => ({ content: readFileSync(join(dir, identity, name)), target: `${tlsMount}/${name}`, mode: 0o444 })),
    natsConfig: (target) => ({ content: readFileSync(join(dir, "nats", "nats-server.conf")), target, mode: 0o400 }),
    roleUrl(identity, hostPort) {
      const url = new URL(env(identity).DATABASE_URL);
      url.host = hostPort;
      return url.toString();
    },
    hostTls: (identity) => ({
      STEWARD_TLS_CA: join(dir, identity, "ca.crt"),
      STEWARD_TLS_CERT: join(dir, identity, "tls.crt"),
      STEWARD_TLS_KEY: join(dir, identity, "tls.key"),
    }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
