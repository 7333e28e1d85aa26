import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { ConfigError, type StewardEnv } from "../config";
import type { ServiceIdentity } from "../identities";
import { allowPeers } from "./peers";
import { bindGrpc, createGrpcServer, shutdownGrpc } from "./serve";
import { grpcClientOptions, grpcServerCredentials, loadGrpcTls, type GrpcTls } from "./tls";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureDevPki } = require("../../../../infra/local/dev-pki.cjs") as {
  ensureDevPki(dir: string, names?: string[]): { env: Record<string, Record<string, string>> };
};

type Files = Record<string, string>;

/** A one-method service over raw bytes: enough to exercise credentials and interceptors without generated code. */
const echo: grpc.ServiceDefinition = {
  ping: {
    path: "/test.Echo/Ping",
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};
const EchoClient = grpc.makeGenericClientConstructor(echo, "Echo");

describe("mutual TLS between services", () => {
  let dir: string;
  let other: string;
  let pki: Record<string, Files>;
  let foreign: Record<string, Files>;
  let server: grpc.Server;
  let port: number;
  let handled = 0;

  const tlsOf = (files: Files, self: ServiceIdentity, stewardEnv: StewardEnv = "production"): GrpcTls =>
    loadGrpcTls({ STEWARD_ENV: stewardEnv, ...files }, self)!;

  function ping(
    via: grpc.ChannelCredentials | { credentials: grpc.ChannelCredentials; serverName?: string },
  ): Promise<{ code: number; details: string } | "ok"> {
    const { credentials, serverName } = via instanceof grpc.ChannelCredentials ? { credentials: via, serverName: undefined } : via;
    const client = new EchoClient(`127.0.0.1:${port}`, credentials, serverName ? { "grpc.ssl_target_name_override": serverName } : {});
    return new Promise((resolve) => {
      client.ping(Buffer.from("hi"), { deadline: Date.now() + 5000 }, (err: grpc.ServiceError | null) => {
        client.close();
        resolve(err ? { code: err.code, details: err.details } : "ok");
      });
    });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "steward-tls-"));
    other = mkdtempSync(join(tmpdir(), "steward-tls-other-"));
    pki = ensureDevPki(dir).env;
    foreign = ensureDevPki(other, ["agent-runner"]).env;
    server = createGrpcServer({ interceptors: [allowPeers({ "/test.Echo/Ping": ["agent-runner"] })] });
    server.addService(echo, {
      ping: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
        handled += 1;
        callback(null, Buffer.from("pong"));
      },
    });
    port = await bindGrpc(server, "127.0.0.1:0", grpcServerCredentials(tlsOf(pki["tool-exec"], "tool-exec")));
  });

  afterAll(async () => {
    if (server) await shutdownGrpc(server, 1000);
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });

  it("lets the allowed identity through", async () => {
    const before = handled;
    expect(await ping(grpcClientOptions(tlsOf(pki["agent-runner"], "agent-runner"), "tool-exec"))).toBe("ok");
    expect(handled).toBe(before + 1);
  });

  it("refuses another service's identity with PERMISSION_DENIED before the handler runs", async () => {
    const before = handled;
    const answer = await ping(grpcClientOptions(tlsOf(pki.gateway, "gateway"), "tool-exec"));
    expect(answer).toEqual({ code: grpc.status.PERMISSION_DENIED, details: "/test.Echo/Ping is not open to gateway" });
    expect(handled).toBe(before);
  });

  it("refuses a client with no certificate, with a certificate of another CA, and a plaintext client", async () => {
    const before = handled;
    const ca = readFileSync(pki.gateway.STEWARD_TLS_CA);
    const noCert = grpc.credentials.createSsl(ca, null, null, { checkServerIdentity: () => undefined });
    const foreignRunner = grpc.credentials.createSsl(
      ca,
      readFileSync(foreign["agent-runner"].STEWARD_TLS_KEY),
      readFileSync(foreign["agent-runner"].STEWARD_TLS_CERT),
      { checkServerIdentity: () => undefined },
    );
    for (const credentials of [noCert, foreignRunner, grpc.credentials.createInsecure()]) {
      const answer = await ping(credentials);
      expect(answer).not.toBe("ok");
      expect((answer as { code: number }).code).toBe(grpc.status.UNAVAILABLE);
    }
    expect(handled).toBe(before);
  });

  it("does not talk to a server whose certificate names another service", async () => {
    const answer = await ping(grpcClientOptions(tlsOf(pki["agent-runner"], "agent-runner"), "policy"));
    expect(answer).not.toBe("ok");
  });

  it("accepts either CA while one is rotated (both in STEWARD_TLS_CA), on the server and in the boot check", async () => {
    const bundle = join(dir, "bundle.crt");
    writeFileSync(bundle, Buffer.concat([readFileSync(foreign["agent-runner"].STEWARD_TLS_CA), readFileSync(pki["tool-exec"].STEWARD_TLS_CA)]));
    const rotating = createGrpcServer({ interceptors: [allowPeers({ "/test.Echo/Ping": ["agent-runner"] })] });
    rotating.addService(echo, { ping: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, Buffer.from("pong")) });
    const own = port;
    port = await bindGrpc(rotating, "127.0.0.1:0", grpcServerCredentials(tlsOf({ ...pki["tool-exec"], STEWARD_TLS_CA: bundle }, "tool-exec")));
    try {
      // A runner with the new CA's certificate, and one with the old: both are let in.
      expect(await ping(grpcClientOptions(tlsOf({ ...pki["agent-runner"], STEWARD_TLS_CA: bundle }, "agent-runner"), "tool-exec"))).toBe("ok");
      expect(await ping(grpcClientOptions(tlsOf({ ...foreign["agent-runner"], STEWARD_TLS_CA: bundle }, "agent-runner"), "tool-exec"))).toBe("ok");
    } finally {
      port = own;
      await shutdownGrpc(rotating, 1000);
    }
  });
});

describe("loadGrpcTls", () => {
  let dir: string;
  let pki: Record<string, Files>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "steward-tls-config-"));
    pki = ensureDevPki(dir).env;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function refusal(config: Record<string, string | undefined>, self: ServiceIdentity = "gateway"): ConfigError {
    try {
      loadGrpcTls({ STEWARD_ENV: "production", ...config } as never, self);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return err as ConfigError;
    }
    throw new Error("expected a ConfigError");
  }

  it("is optional in development and test, required in staging and production", () => {
    expect(loadGrpcTls({ STEWARD_ENV: "development" }, "gateway")).toBeUndefined();
    expect(loadGrpcTls({ STEWARD_ENV: "test" }, "gateway")).toBeUndefined();
    for (const stewardEnv of ["staging", "production"] as const) {
      expect(refusal({ STEWARD_ENV: stewardEnv }).message).toBe(
        `STEWARD_TLS_CA, STEWARD_TLS_CERT, STEWARD_TLS_KEY: is required when STEWARD_ENV is ${stewardEnv}: gRPC between services uses mutual TLS`,
      );
    }
  });

  it("takes all three files or none, and names what is missing or unreadable", () => {
    expect(refusal({ STEWARD_TLS_CA: pki.gateway.STEWARD_TLS_CA }).variable).toBe("STEWARD_TLS_CERT, STEWARD_TLS_KEY");
    expect(refusal({ ...pki.gateway, STEWARD_TLS_KEY: join(dir, "missing.key") }).message).toMatch(/^STEWARD_TLS_KEY: cannot read .*missing\.key \(ENOENT\)$/);
  });

  it("refuses a certificate of another service, a key of another certificate, and a CA that did not sign it", () => {
    expect(refusal(pki["agent-runner"], "gateway").message).toBe('STEWARD_TLS_CERT: is the certificate of "agent-runner"; this service is gateway');
    const key = refusal({ ...pki.gateway, STEWARD_TLS_KEY: pki.policy.STEWARD_TLS_KEY });
    expect(key.message).toBe("STEWARD_TLS_KEY: does not belong to STEWARD_TLS_CERT");
    expect(key.message).not.toContain("PRIVATE KEY");
    expect(refusal({ ...pki.gateway, STEWARD_TLS_CA: pki.gateway.STEWARD_TLS_CERT }).message).toBe("STEWARD_TLS_CERT: is not signed by STEWARD_TLS_CA");
    expect(refusal({ ...pki.gateway, STEWARD_TLS_CERT: pki.gateway.STEWARD_TLS_KEY }).message).toBe("STEWARD_TLS_CERT: is not a PEM certificate");
  });

  it("reads a service's own files", () => {
    const tls = loadGrpcTls({ STEWARD_ENV: "production", ...pki.policy }, "policy")!;
    expect(tls.identity).toBe("policy");
    expect(tls.cert.toString()).toMatch(/BEGIN CERTIFICATE/);
  });
});
