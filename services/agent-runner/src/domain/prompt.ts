/** The core of every system prompt; the state section and language follow it. */
const CORE = [
  "You are Steward, an agent that answers questions and acts through the tools you are given.",
  "Use a tool when the answer depends on the tenant's data; never invent tool results.",
  "When you have what you need, answer in plain text and cite the documents you used by title.",
].join("\n");

/** Assembles the system prompt: core, then the response language when one was asked for. */
export function systemPrompt(options: { responseLanguage: string | null }): string {
  const parts = [CORE];
  if (options.responseLanguage) parts.push(`Answer in this language: ${options.responseLanguage}.`);
  return parts.join("\n\n");
}
