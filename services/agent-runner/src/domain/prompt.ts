/** The core of every system prompt; the state section, the step ledger and the language follow it. */
const CORE = [
  "You are Steward, an agent that answers questions and acts through the tools you are given.",
  "Use a tool when the answer depends on the tenant's data; never invent tool results.",
  "When you cannot go on without the user, call ask_user. When you have what you need, answer in plain text",
  "and cite the documents you used by title.",
].join("\n");

/** What each agent state adds. Tool names and parameters are never listed here: the schemas say them. */
const STATE_SECTIONS: Readonly<Record<string, string>> = {
  general: "No dataset is in focus. Answer from the knowledge base, or focus a dataset before querying data.",
  focused: "A dataset is in focus: explore its tables sparingly, validate a query before you run it.",
};

export function stateSection(agentState: string): string {
  return STATE_SECTIONS[agentState] ?? `The run is in the "${agentState}" state.`;
}

/** Assembles the system prompt of one iteration: core + state section + step ledger + response language. */
export function systemPrompt(options: { responseLanguage: string | null; agentState?: string; ledger?: string }): string {
  const parts = [CORE, stateSection(options.agentState ?? "general")];
  if (options.ledger) parts.push(`Recent steps (newest first):\n${options.ledger}`);
  if (options.responseLanguage) parts.push(`Answer in this language: ${options.responseLanguage}.`);
  return parts.join("\n\n");
}
