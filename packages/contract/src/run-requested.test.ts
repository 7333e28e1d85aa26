import { NEW_RUN_HEADER, decodeRunRequested, runRequestedMessage } from "./run-requested";
import { busNames } from "./subjects";

const runId = "0b6f3c2e-4a1d-4f7e-9c3b-2d5e6f7a8b9c";
const valid = { run_id: runId, tenant_id: "acme", created_by: "user-7" };

const bytesOf = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

function expectRejected(bytes: Uint8Array): string {
  const result = decodeRunRequested(bytes);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error("unreachable");
  expect(typeof result.reason).toBe("string");
  expect(result.reason.length).toBeGreaterThan(0);
  return result.reason;
}

describe("decodeRunRequested", () => {
  it("accepts a valid message, with and without an elevation session reference", () => {
    expect(decodeRunRequested(bytesOf(valid))).toEqual({ ok: true, value: valid });
    const elevated = { ...valid, elevation_session_id: "es-1" };
    expect(decodeRunRequested(bytesOf(elevated))).toEqual({ ok: true, value: elevated });
  });

  it("rejects an empty elevation session reference", () => {
    expect(expectRejected(bytesOf({ ...valid, elevation_session_id: "" }))).toContain("elevation_session_id");
  });

  it("rejects an unknown field", () => {
    expect(expectRejected(bytesOf({ ...valid, roles: ["admin"] }))).toContain("roles");
  });

  it.each(["run_id", "tenant_id", "created_by"])("rejects a message missing %s", (field) => {
    const message: Record<string, unknown> = { ...valid };
    delete message[field];
    const reason = expectRejected(bytesOf(message));
    expect(reason).toContain(field);
  });

  it.each(["not-a-uuid", runId.toUpperCase(), `${runId}0`])("rejects the run_id %p", (badId) => {
    const reason = expectRejected(bytesOf({ ...valid, run_id: badId }));
    expect(reason).toContain("run_id");
  });

  it("rejects bytes that are not JSON", () => {
    expect(expectRejected(new TextEncoder().encode("{run_id:"))).toMatch(/JSON/);
  });

  it("rejects bytes that are not valid UTF-8, even inside an otherwise valid message", () => {
    const prefix = new TextEncoder().encode(`{"run_id":"${runId}","tenant_id":"acme","created_by":"`);
    const suffix = new TextEncoder().encode('"}');
    const bytes = new Uint8Array([...prefix, 0xff, 0xfe, ...suffix]);
    expect(expectRejected(bytes)).toMatch(/UTF-8/);
  });

  it("rejects a JSON array at the root", () => {
    expect(expectRejected(bytesOf([valid]))).toMatch(/^\/:/);
  });

  it("rejects JSON null at the root", () => {
    expect(expectRejected(bytesOf(null))).toMatch(/^\/:/);
  });
});

describe("runRequestedMessage: one builder, the message id keyed by why the runner is requested", () => {
  const names = busNames("ns");
  const command = { run_id: runId, tenant_id: "acme", created_by: "user-7" };

  it("a created run: one id per run, marked as new, with the writer's trace", () => {
    expect(runRequestedMessage(names, { command, purpose: { kind: "created" } }, "00-t-s-01")).toEqual({
      subject: "ns.agent.run.requested",
      msgId: `run.requested.${runId}`,
      payload: command,
      headers: { "Steward-Run-Id": runId, traceparent: "00-t-s-01", [NEW_RUN_HEADER]: "true" },
      runId,
    });
  });

  it("a run handed back: keyed by the version its append made; re-driven or admitted: by when it was requested", () => {
    expect(runRequestedMessage(names, { command, purpose: { kind: "handed_back", version: 5 } }, "tp")).toMatchObject({
      msgId: `run.requested.${runId}.5`,
      headers: { "Steward-Run-Id": runId, traceparent: "tp" },
    });
    expect(runRequestedMessage(names, { command, purpose: { kind: "redriven", requestedAtMs: "1700000000000" } })).toMatchObject({
      msgId: `run.requested.${runId}.1700000000000`,
      headers: { "Steward-Run-Id": runId, "Steward-Redrive": "true" },
    });
    expect(runRequestedMessage(names, { command, purpose: { kind: "admitted", requestedAtMs: "1700000000001" } }).headers).toEqual({
      "Steward-Run-Id": runId,
      "Steward-Admitted": "true",
    });
  });
});
