import { mkdtempSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configPath, printableUrl, readStoredConfig, recordedGatewayUrl, resolveSettings, writeStoredConfig } from "./config";
import { UsageError } from "./errors";

describe("settings", () => {
  const base = { env: {}, stored: {}, developmentSecretAvailable: false };

  it("takes the URL from --url, STEWARD_URL, the config file, npm start's record, then the default port", () => {
    const env = { STEWARD_URL: "http://env:1/" };
    const stored = { url: "http://config:2" };
    expect(resolveSettings({ ...base, flagUrl: "http://flag:3", env, stored }).url).toBe("http://flag:3");
    expect(resolveSettings({ ...base, env, stored })).toMatchObject({ url: "http://env:1", urlSource: "env" });
    expect(resolveSettings({ ...base, stored, recordedUrl: "http://rec:4" })).toMatchObject({ url: "http://config:2", urlSource: "config" });
    expect(resolveSettings({ ...base, recordedUrl: "http://rec:4" })).toMatchObject({ url: "http://rec:4", urlSource: "npm start" });
    expect(resolveSettings(base)).toMatchObject({ url: "http://127.0.0.1:8080", urlSource: "default" });
    expect(resolveSettings({ ...base, env: { GATEWAY_PORT: "9090" } }).url).toBe("http://127.0.0.1:9090");
  });

  it("takes the token from STEWARD_TOKEN, then the config file, then a development token when a secret is at hand", () => {
    expect(resolveSettings({ ...base, env: { STEWARD_TOKEN: "a.b.c" }, stored: { token: "d.e.f" } })).toMatchObject({ token: "a.b.c", tokenSource: "env" });
    expect(resolveSettings({ ...base, stored: { token: "d.e.f" } })).toMatchObject({ token: "d.e.f", tokenSource: "config" });
    expect(resolveSettings({ ...base, developmentSecretAvailable: true })).toEqual(expect.objectContaining({ tokenSource: "development" }));
    expect(resolveSettings(base).tokenSource).toBe("none");
  });

  it("finds the config file from STEWARD_CONFIG or XDG_CONFIG_HOME", () => {
    expect(configPath({ STEWARD_CONFIG: "/x/c.json" })).toBe("/x/c.json");
    expect(configPath({ XDG_CONFIG_HOME: "/cfg" })).toBe("/cfg/steward/config.json");
  });

  it("never prints a URL's user and password", () => {
    expect(printableUrl("https://me:secret@steward.example:8443/")).toBe("https://steward.example:8443");
  });
});

describe("the config file", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "steward-cli-config-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is written private to the user and read back; a missing file is empty", () => {
    const file = join(dir, "deep", "config.json");
    expect(readStoredConfig(file)).toEqual({});
    writeStoredConfig(file, { url: "http://h:1", token: "a.b.c" });
    expect(readStoredConfig(file)).toEqual({ url: "http://h:1", token: "a.b.c" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("that is not a JSON object is a usage error naming the file", () => {
    const file = join(dir, "config.json");
    writeFileSync(file, "{nope");
    expect(() => readStoredConfig(file)).toThrow(UsageError);
    writeFileSync(file, "[]");
    expect(() => readStoredConfig(file)).toThrow(`${file} must hold a JSON object`);
  });

  it("npm start's record gives the gateway's address when it has one", () => {
    expect(recordedGatewayUrl(dir)).toBeUndefined();
    mkdirSync(join(dir, "run"));
    writeFileSync(join(dir, "run", "services.json"), JSON.stringify({ services: { gateway: { pid: 1, addr: "http://127.0.0.1:8181" } } }));
    expect(recordedGatewayUrl(dir)).toBe("http://127.0.0.1:8181");
  });
});
