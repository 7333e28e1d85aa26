/**
 * The Markdown the console renders, parsed into blocks and inline spans (pure: no DOM, specced in Node;
 * markdown.ts turns the tree into nodes). Headings, paragraphs, bullet and numbered lists, fenced code, inline
 * code, bold, italics and http(s) links; anything else stays text.
 */

export type Inline =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "code"; readonly text: string }
  | { readonly kind: "strong" | "em"; readonly children: readonly Inline[] }
  | { readonly kind: "link"; readonly href: string; readonly label: string };

export type Block =
  | { readonly kind: "heading"; readonly level: number; readonly inline: readonly Inline[] }
  | { readonly kind: "paragraph"; readonly inline: readonly Inline[] }
  | { readonly kind: "list"; readonly ordered: boolean; readonly items: readonly (readonly Inline[])[] }
  | { readonly kind: "code"; readonly text: string };

const ITEM = /^\s*([-*+]|\d+[.)])\s+/;
const BLOCK_START = /^(```|#{1,4}\s|\s*([-*+]|\d+[.)])\s+)/;

export function parseMarkdown(source: string): Block[] {
  const out: Block[] = [];
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "") {
      i += 1;
    } else if (line.startsWith("```")) {
      const code: string[] = [];
      i += 1;
      while (i < lines.length && !lines[i].startsWith("```")) code.push(lines[i++]);
      i += 1;
      out.push({ kind: "code", text: code.join("\n") });
    } else if (/^#{1,4}\s/.test(line)) {
      // Level 1 of the answer is an h3: the page's own h1 and h2 stay above it.
      const level = Math.min(6, (line.match(/^#+/)?.[0].length ?? 1) + 2);
      out.push({ kind: "heading", level, inline: parseInline(line.replace(/^#+\s*/, "")) });
      i += 1;
    } else if (ITEM.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: Inline[][] = [];
      while (i < lines.length && ITEM.test(lines[i])) items.push(parseInline(lines[i++].replace(ITEM, "")));
      out.push({ kind: "list", ordered, items });
    } else {
      const para: string[] = [];
      while (i < lines.length && lines[i].trim() !== "" && !BLOCK_START.test(lines[i])) para.push(lines[i++]);
      out.push({ kind: "paragraph", inline: parseInline(para.join(" ")) });
    }
  }
  return out;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/g;

/** Inline spans of one block. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  const pushText = (t: string) => {
    if (!t) return;
    const last = out[out.length - 1];
    if (last?.kind === "text") out[out.length - 1] = { kind: "text", text: last.text + t };
    else out.push({ kind: "text", text: t });
  };
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index ?? 0;
    pushText(text.slice(last, at));
    const token = match[0];
    if (match[1]) out.push({ kind: "code", text: token.slice(1, -1) });
    else if (match[2]) out.push({ kind: "strong", children: parseInline(token.slice(2, -2)) });
    else if (match[3]) out.push({ kind: "em", children: parseInline(token.slice(1, -1)) });
    else {
      const link = linkOf(token);
      if (link) out.push(link);
      else pushText(token);
    }
    last = at + token.length;
  }
  pushText(text.slice(last));
  return out;
}

/** A link only to an http(s) address; any other scheme (javascript:, data:) stays text. */
function linkOf(token: string): Inline | null {
  const [, label, href] = token.match(/^\[([^\]]+)\]\(([^)\s]+)\)$/) ?? [];
  if (!label || !href || !/^https?:\/\//i.test(href)) return null;
  return { kind: "link", href, label };
}
