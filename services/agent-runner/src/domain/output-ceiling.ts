/** The band every per-call output ceiling is clamped to, in tokens. */
export const OUTPUT_BAND = { min: 256, max: 8192 } as const;

/** Output limits of models we know, in tokens; others fall back to the profile and the state default. */
const KNOWN_MAXIMUM: ReadonlyArray<[RegExp, number]> = [
  [/^gpt-4o(-mini)?/, 16_384],
  [/^gpt-4\.1/, 32_768],
  [/^gpt-3\.5/, 4_096],
  [/^o[134](-mini)?/, 100_000],
  [/^claude-/, 8_192],
  [/^llama-?3/, 4_096],
];

/** What each agent state asks for when nothing else says. */
const STATE_DEFAULT: Readonly<Record<string, number>> = { general: 2048, focused: 4096 };

export function knownMaximum(model: string): number | null {
  for (const [pattern, max] of KNOWN_MAXIMUM) if (pattern.test(model)) return max;
  return null;
}

/**
 * The per-call max tokens: the profile's setting if any, else the state's default; never above the
 * model's known maximum; clamped to the band.
 */
export function outputCeiling(input: { profileMax?: number; model?: string; agentState: string }): number {
  let wanted = input.profileMax ?? STATE_DEFAULT[input.agentState] ?? 2048;
  const known = input.model ? knownMaximum(input.model) : null;
  if (known !== null) wanted = Math.min(wanted, known);
  return Math.min(OUTPUT_BAND.max, Math.max(OUTPUT_BAND.min, wanted));
}
