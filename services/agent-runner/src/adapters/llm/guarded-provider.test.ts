import { ModelCallAbortedError, ModelUnavailableError, type ModelProvider, type ModelRequest } from "../../domain/model";
import { withBreaker } from "./guarded-provider";

const request: ModelRequest = { messages: [], tools: [], maxOutputTokens: 10, signal: new AbortController().signal };

function flaky(outcomes: Array<"ok" | "down" | "aborted">) {
  let calls = 0;
  const provider: ModelProvider = {
    name: "p",
    async complete() {
      const o = outcomes[Math.min(calls++, outcomes.length - 1)];
      if (o === "down") throw new ModelUnavailableError("p");
      if (o === "aborted") throw new ModelCallAbortedError();
      return { text: "hi", toolCalls: [], finishReason: "stop", usage: { input_tokens: 1, output_tokens: 1 }, provider: "p" };
    },
  };
  return { provider, calls: () => calls };
}

describe("withBreaker", () => {
  it("opens after enough failures and then fails fast, telling when to retry, without calling the provider", async () => {
    const inner = flaky(["down"]);
    const guarded = withBreaker(inner.provider, { volumeThreshold: 3, resetTimeoutMs: 12_345 });
    for (let i = 0; i < 3; i++) await expect(guarded.complete(request)).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(inner.calls()).toBe(3);
    const fast = await guarded.complete(request).catch((e: unknown) => e);
    expect(fast).toBeInstanceOf(ModelUnavailableError);
    expect((fast as ModelUnavailableError).retryAfterMs).toBe(12_345);
    expect(inner.calls()).toBe(3);
  });

  it("does not count aborted calls against the provider", async () => {
    const inner = flaky(["aborted"]);
    const guarded = withBreaker(inner.provider, { volumeThreshold: 2 });
    for (let i = 0; i < 5; i++) await expect(guarded.complete(request)).rejects.toBeInstanceOf(ModelCallAbortedError);
    expect(inner.calls()).toBe(5);
  });

  it("passes answers through", async () => {
    const guarded = withBreaker(flaky(["ok"]).provider);
    await expect(guarded.complete(request)).resolves.toMatchObject({ text: "hi" });
  });
});
