// Cedar text as words, string literals and single marks, without whitespace and `//` comments: enough to see what a
// set reads (context-reads.ts) and how deep it nests (policy-bounds.ts) without asking Cedar.

/** A string literal holding an escape is `escaped`: its text here is not the value Cedar reads. */
export type Token = { readonly kind: "word" | "string" | "mark"; readonly text: string; readonly escaped?: boolean };

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;

/** Cedar's words, string literals and single marks, without whitespace and `//` comments. */
export function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '"') {
      let value = "";
      let escaped = false;
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\") {
          escaped = true;
          j++;
        }
        value += text[j] ?? "";
      }
      out.push({ kind: "string", text: value, escaped });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      WORD.lastIndex = i;
      const word = WORD.exec(text)![0];
      out.push({ kind: "word", text: word });
      i += word.length;
    } else {
      out.push({ kind: "mark", text: c });
      i++;
    }
  }
  return out;
}
