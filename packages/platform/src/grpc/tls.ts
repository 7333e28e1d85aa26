import { X509Certificate, createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PeerCertificate } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { ConfigError, env, type StewardEnv } from "../config";
import type { ServiceIdentity } from "../identities";

/** The files of a service's mutual-TLS identity (PEM). Required outside development and test. */
export const grpcTlsConfig = {
  /** The CA that signs every Steward service's certificate (several, concatenated, while a CA is rotated). */
  STEWARD_TLS_CA: env.optional(),
  /** This service's certificate; its subject CN names the service (gateway, agent-runner, tool-exec, policy). */
  STEWARD_TLS_CERT: env.optional(),
  /** This service's private key. */
  STEWARD_TLS_KEY: env.optional(),
};

const names = ["STEWARD_TLS_CA", "STEWARD_TLS_CERT", "STEWARD_TLS_KEY"] as const;

/** A service's mutual-TLS material, checked at boot. */
export interface GrpcTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly identity: ServiceIdentity;
}

/** The service a certificate names: its subject's CN. */
export function identityOf(cert: Pick<PeerCertificate, "subject"> | undefined): string | undefined {
  const cn = cert?.subject?.CN as string | string[] | undefined;
  return typeof cn === "string" ? cn : undefined;
}

function commonName(cert: X509Certificate): string | undefined {
  return /^CN=(.*)$/m.exec(cert.subject)?.[1];
}

/** Every certificate of a PEM bundle (one CA, or the old and the new one while it is rotated). */
function certificatesOf(pem: Buffer): X509Certificate[] {
  const blocks = pem.toString("utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error("no certificate");
  return blocks.map((block) => new X509Certificate(block));
}

/**
 * Reads and checks this service's TLS files: all three or none; none only in development and test (gRPC then
 * runs without TLS). The certificate must be signed by the CA, match the key, be valid now and name `self`.
 * A problem stops the boot naming the variable; a key's content is never echoed.
 */
export function loadGrpcTls(
  config: { readonly STEWARD_ENV: StewardEnv } & { readonly [K in (typeof names)[number]]?: string },
  self: ServiceIdentity,
  read: (path: string) => Buffer = readFileSync,
): GrpcTls | undefined {
  const set = names.filter((name) => config[name]);
  if (set.length === 0) {
    if (config.STEWARD_ENV === "development" || config.STEWARD_ENV === "test") return undefined;
    throw new ConfigError(names.join(", "), `is required when STEWARD_ENV is ${config.STEWARD_ENV}: gRPC between services uses mutual TLS`);
  }
  if (set.length < names.length) {
    throw new ConfigError(names.filter((name) => !config[name]).join(", "), "is missing: set all three STEWARD_TLS_ files or none");
  }
  const file = (name: (typeof names)[number]): Buffer => {
    try {
      return read(config[name]!);
    } catch (err) {
      throw new ConfigError(name, `cannot read ${config[name]} (${(err as { code?: string }).code ?? "unreadable"})`);
    }
  };
  const [ca, cert, key] = [file("STEWARD_TLS_CA"), file("STEWARD_TLS_CERT"), file("STEWARD_TLS_KEY")];
  const parse = <T>(name: (typeof names)[number], what: string, f: () => T): T => {
    try {
      return f();
    } catch {
      throw new ConfigError(name, `is not a PEM ${what}`);
    }
  };
  const caCerts = parse("STEWARD_TLS_CA", "certificate", () => certificatesOf(ca));
  const ownCert = parse("STEWARD_TLS_CERT", "certificate", () => new X509Certificate(cert));
  const privateKey: KeyObject = parse("STEWARD_TLS_KEY", "private key", () => createPrivateKey(key));
  if (!caCerts.some((caCert) => ownCert.checkIssued(caCert) && ownCert.verify(caCert.publicKey))) {
    throw new ConfigError("STEWARD_TLS_CERT", "is not signed by STEWARD_TLS_CA");
  }
  if (!ownCert.checkPrivateKey(privateKey)) throw new ConfigError("STEWARD_TLS_KEY", "does not belong to STEWARD_TLS_CERT");
  const now = Date.now();
  if (Date.parse(ownCert.validTo) < now || Date.parse(ownCert.validFrom) > now) {
    throw new ConfigError("STEWARD_TLS_CERT", `is not valid now (valid ${ownCert.validFrom} to ${ownCert.validTo})`);
  }
  const cn = commonName(ownCert);
  if (cn !== self) throw new ConfigError("STEWARD_TLS_CERT", `is the certificate of "${cn ?? "nobody"}"; this service is ${self}`);
  return { ca, cert, key, identity: self };
}

/** A server's credentials: mutual TLS (a client must present a certificate of the same CA), or none. */
export function grpcServerCredentials(tls: GrpcTls | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

/**
 * A client's credentials for calling `peer`: this service's certificate, and the server's certificate must be
 * signed by the CA and name `peer` (whatever host name it is reached by), or no TLS at all.
 */
export function grpcChannelCredentials(tls: GrpcTls | undefined, peer: ServiceIdentity): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert, {
    checkServerIdentity: (_host, cert) =>
      identityOf(cert) === peer ? undefined : new Error(`the server's certificate names ${identityOf(cert) ?? "nobody"}, not ${peer}`),
  });
}

/**
 * The options of a client of `peer` (the proto package's ClientOptions): its credentials, and the TLS server
 * name to send, the peer's own name (a SAN of its certificate), whatever address it is reached at.
 */
export function grpcClientOptions(tls: GrpcTls | undefined, peer: ServiceIdentity): { credentials: grpc.ChannelCredentials; serverName?: string } {
  return tls ? { credentials: grpcChannelCredentials(tls, peer), serverName: peer } : { credentials: grpcChannelCredentials(undefined, peer) };
}
