/** The chat-completions shape every provider speaks (OpenAI-compatible). */
export type ChatMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string }
  | {
      readonly role: "assistant";
      readonly content: string | null;
      readonly tool_calls?: ReadonlyArray<{
        readonly id: string;
        readonly type: "function";
        readonly function: { readonly name: string; readonly arguments: string };
      }>;
    }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string };

/** A tool as the model sees it. */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

export interface ModelRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSchema[];
  readonly maxOutputTokens: number;
  readonly signal: AbortSignal;
  /** Receives text deltas as the answer streams (providers that stream call it; others need not). */
  readonly onDelta?: (text: string) => void;
}

export interface ModelAnswer {
  readonly text: string;
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>;
  readonly finishReason: "stop" | "tool_calls" | "length" | "other";
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number };
  /** The profile that answered, e.g. "primary" or "scripted". */
  readonly provider: string;
}

/** A model behind one profile. Throws ModelUnavailableError when it cannot answer now. */
export interface ModelProvider {
  readonly name: string;
  /** The profile asked first; an answer from another profile is a fallback. */
  readonly primary?: string;
  complete(request: ModelRequest): Promise<ModelAnswer>;
}

/** The model could not answer (network, 5xx, rate limit); the run may retry on a later delivery. */
export class ModelUnavailableError extends Error {
  constructor(
    readonly provider: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(`model provider ${provider} is unavailable`, options);
    this.retryAfterMs = options?.retryAfterMs;
    this.name = "ModelUnavailableError";
  }

  /** When known (an open breaker), how long until the provider is worth asking again. */
  readonly retryAfterMs: number | undefined;
}

/** The caller gave up on the call (deadline, cancel, lost lease); says nothing about the provider's health. */
export class ModelCallAbortedError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the model call was aborted", options);
    this.name = "ModelCallAbortedError";
  }
}
