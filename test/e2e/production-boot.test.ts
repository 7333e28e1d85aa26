import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseUrl } from "../support/databases";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureDevPki } = require("../../infra/local/dev-pki.cjs") as {
  ensureDevPki(dir: string): { env: Record<string, Record<string, string>> };
};

/**
 * The internal planes are closed: outside development and test a service refuses to start without its own TLS
 * identity and NATS user, and refuses the test hooks. Each refusal happens while the configuration is read, before
 * anything is connected (the database named here is never opened).
 */
describe("a service outside development and test", () => {
  let pkiDir: string;
  let tlsFiles: Record<string, Record<string, string>>;

  beforeAll(() => {
    pkiDir = mkdtempSync(join(tmpdir(), "steward-boot-tls-"));
    tlsFiles = ensureDevPki(pkiDir).env;
  });

  afterAll(() => rmSync(pkiDir, { recursive: true, force: true }));

  it.each([
    [
      "policy",
      {},
      /^policy failed to start: STEWARD_TLS_CA, STEWARD_TLS_CERT, STEWARD_TLS_KEY: is required when STEWARD_ENV is production: gRPC between services uses mutual TLS$/m,
    ],
    ["tool-exec", {}, /^tool-exec failed to start: STEWARD_TLS_CA, STEWARD_TLS_CERT, STEWARD_TLS_KEY: is required when STEWARD_ENV is production/m],
    [
      "policy",
      { tls: "policy" },
      /^policy failed to start: NATS_USER, NATS_PASSWORD: is required when STEWARD_ENV is production: each service connects to NATS as its own user$/m,
    ],
    ["policy", { tls: "gateway" }, /^policy failed to start: STEWARD_TLS_CERT: is the certificate of "gateway"; this service is policy$/m],
    [
      "policy",
      { STEWARD_TEST_HOOKS: "1" },
      /^policy failed to start: STEWARD_TEST_HOOKS: is for the test suites only \(STEWARD_ENV=test\), refused when STEWARD_ENV is production$/m,
    ],
  ] as Array<[string, Record<string, string>, RegExp]>)(
    "outside development and test, %s will not start without its own TLS identity and NATS user (%j)",
    async (service, extra, message) => {
      const { tls, ...env } = extra;
      const stripped = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(STEWARD_|NATS_|LLM_)/.test(k)));
      const child = spawn(process.execPath, [join(__dirname, "..", "..", "services", service, "dist", "main.js")], {
        // Unset, STEWARD_ENV means production.
        env: {
          ...stripped,
          DATABASE_URL: databaseUrl("steward_boot_refusals"),
          HEALTH_PORT: "0",
          POLICY_ADDR: "127.0.0.1:0",
          TOOL_EXEC_ADDR: "127.0.0.1:0",
          ...(tls ? tlsFiles[tls] : {}),
          ...env,
        },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const code = await new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`${service} did not exit within 15 s`))), 15_000);
        child.once("close", (exitCode) => (clearTimeout(timer), resolve(exitCode)));
      });
      expect(code).toBe(1);
      expect(stderr).toMatch(message);
    },
  );
});
