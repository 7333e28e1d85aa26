import { ConfigError } from "../config";
import { natsAuth } from "./credentials";
import { natsPermissions, natsServerConfig } from "./permissions";

const base = { NATS_URL: "nats://127.0.0.1:4222" };

function refusal(config: Parameters<typeof natsAuth>[0]): ConfigError {
  try {
    natsAuth(config, "gateway");
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("natsAuth", () => {
  it("connects as the service's own user, with replies on its own inbox prefix", () => {
    expect(natsAuth({ ...base, STEWARD_ENV: "production", NATS_USER: "gateway", NATS_PASSWORD: "pw" }, "gateway")).toEqual({
      user: "gateway",
      pass: "pw",
      inboxPrefix: "_INBOX_gateway",
    });
  });

  it("is optional in development and test, and required in staging and production", () => {
    expect(natsAuth({ ...base, STEWARD_ENV: "development" }, "gateway")).toEqual({});
    expect(natsAuth({ ...base, STEWARD_ENV: "test" }, "agent-runner")).toEqual({});
    for (const stewardEnv of ["staging", "production"] as const) {
      expect(refusal({ ...base, STEWARD_ENV: stewardEnv }).message).toBe(
        `NATS_USER, NATS_PASSWORD: is required when STEWARD_ENV is ${stewardEnv}: each service connects to NATS as its own user`,
      );
    }
  });

  it("takes credentials written into NATS_URL, and refuses a user without a password", () => {
    expect(natsAuth({ STEWARD_ENV: "production", NATS_URL: "nats://gateway:pw@n1:4222" }, "gateway")).toEqual({ inboxPrefix: "_INBOX_gateway" });
    expect(refusal({ ...base, STEWARD_ENV: "test", NATS_USER: "gateway" }).message).toBe("NATS_PASSWORD: is missing: set NATS_USER and NATS_PASSWORD together");
  });
});

describe("natsPermissions", () => {
  it("lets only the gateway publish commands and read deltas, and only policy announce activations", () => {
    const commands = "ns.agent.run.requested";
    expect(natsPermissions("gateway", "ns").publish.allow).toContain(commands);
    expect(natsPermissions("agent-runner", "ns").publish.allow).not.toContain(commands);
    expect(natsPermissions("agent-runner", "ns").publish.deny).toContain(commands);
    expect(natsPermissions("gateway", "ns").subscribe.allow).toContain("ns.agent.deltas.>");
    for (const s of ["agent-runner", "policy", "tool-exec"] as const) expect(natsPermissions(s, "ns").subscribe.allow).not.toContain("ns.agent.deltas.>");
    for (const s of ["gateway", "agent-runner", "tool-exec"] as const)
      expect(natsPermissions(s, "ns").publish.allow).not.toContain("ns.steward.policy.activated");
    // The gateway's route guard hears activations (it decides in process); the runner and tool-exec do not.
    for (const s of ["gateway", "policy"] as const) expect(natsPermissions(s, "ns").subscribe.allow).toContain("ns.steward.policy.activated");
    for (const s of ["agent-runner", "tool-exec"] as const) expect(natsPermissions(s, "ns").subscribe.allow).not.toContain("ns.steward.policy.activated");
    expect(natsPermissions("tool-exec", "ns")).toEqual({ publish: { allow: [], deny: [">"] }, subscribe: { allow: [], deny: [">"] } });
  });

  it("writes a nats-server authorization block with a user per service and an operator", () => {
    const passwords = { gateway: "g", "agent-runner": "r", "tool-exec": "t", policy: "p", operator: "o" };
    const text = natsServerConfig({ namespace: "", passwords });
    for (const user of Object.keys(passwords)) expect(text).toContain(`user: "${user}"`);
    expect(text).toContain('"agent.run.requested"');
    expect(text).toMatch(/^authorization \{$/m);
  });
});
