/** A piece of the output still to write: text as it is, or a value to write in canonical form. */
type Pending = { readonly text: string } | { readonly value: unknown };

/**
 * Canonical JSON: object keys sorted, no insignificant white space, strings NFC-normalised. Two inputs that
 * mean the same thing serialise to the same text, which is what a fingerprint needs.
 *
 * Written without recursion, so a value nested as deep as memory allows (a tool's result, a model's arguments)
 * serialises the same in every process, whatever stack it has left.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const pending: Pending[] = [{ value }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if ("text" in next) {
      out.push(next.text);
      continue;
    }
    const v = next.value;
    if (v === null || typeof v === "boolean") {
      out.push(JSON.stringify(v));
    } else if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new TypeError("non-finite number has no canonical form");
      out.push(JSON.stringify(v));
    } else if (typeof v === "string") {
      out.push(JSON.stringify(v.normalize("NFC")));
    } else if (Array.isArray(v)) {
      out.push("[");
      pending.push({ text: "]" });
      for (let i = v.length - 1; i >= 0; i--) {
        pending.push({ value: v[i] });
        if (i > 0) pending.push({ text: "," });
      }
    } else if (typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .map(([k, item]) => [k.normalize("NFC"), item] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push("{");
      pending.push({ text: "}" });
      for (let i = entries.length - 1; i >= 0; i--) {
        pending.push({ value: entries[i][1] });
        pending.push({ text: `${i > 0 ? "," : ""}${JSON.stringify(entries[i][0])}:` });
      }
    } else {
      throw new TypeError(`${typeof v} has no JSON form`);
    }
  }
  return out.join("");
}
