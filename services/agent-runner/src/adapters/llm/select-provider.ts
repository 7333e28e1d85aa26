import type { StewardEnv } from "@steward/platform";
import type { ModelProvider } from "../../domain/model";
import type { BreakerStateName } from "../breaker-states";
import { withBreaker } from "./guarded-provider";
import { createOpenAiProvider } from "./openai-provider";
import { createProviderChain } from "./provider-chain";
import { createScriptedProvider } from "./scripted-provider";

export interface LlmConfig {
  readonly STEWARD_ENV: StewardEnv;
  readonly LLM_BASE_URL?: string;
  readonly LLM_API_KEY?: string;
  readonly LLM_MODEL?: string;
  readonly LLM_FALLBACK_BASE_URL?: string;
  readonly LLM_FALLBACK_API_KEY?: string;
  readonly LLM_FALLBACK_MODEL?: string;
}

export class ScriptedProviderRefusedError extends Error {
  constructor(env: string) {
    super(`LLM_BASE_URL: no model endpoint is configured, and the scripted demo model refuses to run when STEWARD_ENV is ${env}`);
    this.name = "ScriptedProviderRefusedError";
  }
}

/** The model each profile asks for: the configured names, or the default. */
export function modelsOf(config: LlmConfig): { readonly primary: string; readonly fallback: string } {
  const primary = config.LLM_MODEL ?? "gpt-4o-mini";
  return { primary, fallback: config.LLM_FALLBACK_MODEL ?? primary };
}

/**
 * The configured provider chain, or the scripted demo model when no endpoint is set (development/test only).
 * `onBreakerState` hears each profile's breaker (named `llm-<profile>`) change state.
 */
export function selectProvider(config: LlmConfig, onBreakerState?: (breaker: string, state: BreakerStateName) => void): ModelProvider {
  const observe = (profile: string) => (onBreakerState ? { onState: (state: BreakerStateName) => onBreakerState(`llm-${profile}`, state) } : {});
  if (!config.LLM_BASE_URL) {
    if (config.STEWARD_ENV === "staging" || config.STEWARD_ENV === "production") {
      throw new ScriptedProviderRefusedError(config.STEWARD_ENV);
    }
    return createScriptedProvider();
  }
  const providers = [
    withBreaker(
      createOpenAiProvider({ name: "primary", baseUrl: config.LLM_BASE_URL, apiKey: config.LLM_API_KEY ?? "", model: modelsOf(config).primary }),
      observe("primary"),
    ),
  ];
  if (config.LLM_FALLBACK_BASE_URL) {
    providers.push(
      withBreaker(
        createOpenAiProvider({
          name: "fallback",
          baseUrl: config.LLM_FALLBACK_BASE_URL,
          apiKey: config.LLM_FALLBACK_API_KEY ?? "",
          model: modelsOf(config).fallback,
        }),
        observe("fallback"),
      ),
    );
  }
  return createProviderChain(providers);
}
