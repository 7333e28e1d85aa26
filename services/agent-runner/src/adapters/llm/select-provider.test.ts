import { ScriptedProviderRefusedError, selectProvider } from "./select-provider";

describe("selectProvider", () => {
  it.each(["development", "test"] as const)("uses the scripted demo model in %s when no endpoint is set", (env) => {
    expect(selectProvider({ STEWARD_ENV: env }).name).toBe("scripted");
  });

  it.each(["staging", "production"] as const)("refuses the scripted model in %s", (env) => {
    expect(() => selectProvider({ STEWARD_ENV: env })).toThrow(ScriptedProviderRefusedError);
  });

  it("chains primary and fallback profiles when both are configured", () => {
    const provider = selectProvider({
      STEWARD_ENV: "production",
      LLM_BASE_URL: "http://127.0.0.1:9/v1",
      LLM_FALLBACK_BASE_URL: "http://127.0.0.1:10/v1",
    });
    expect(provider.name).toBe("primary>fallback");
  });
});
