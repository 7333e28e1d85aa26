import { append, h } from "./dom";

/**
 * A small Markdown renderer that builds DOM nodes (never HTML strings): headings, paragraphs, bullet and
 * numbered lists, fenced code, inline code, bold, italics and http(s) links. Anything else stays text.
 */
export function renderMarkdown(source: string): DocumentFragment {
  const out = document.createDocumentFragment();
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
      out.appendChild(h("pre", {}, h("code", {}, code.join("\n"))));
    } else if (/^#{1,4}\s/.test(line)) {
      const level = Math.min(6, (line.match(/^#+/)?.[0].length ?? 1) + 2);
      const heading = document.createElement(`h${level}`);
      append(heading, inline(line.replace(/^#+\s*/, "")));
      out.appendChild(heading);
      i += 1;
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        list.appendChild(h("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
        i += 1;
      }
      out.appendChild(list);
    } else {
      const para: string[] = [];
      while (i < lines.length && lines[i].trim() !== "" && !/^(```|#{1,4}\s|\s*([-*+]|\d+[.)])\s+)/.test(lines[i])) para.push(lines[i++]);
      out.appendChild(h("p", {}, inline(para.join(" "))));
    }
  }
  return out;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/g;

/** Inline spans of one block, as nodes. */
function inline(text: string): DocumentFragment {
  const out = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index ?? 0;
    append(out, text.slice(last, at));
    const token = match[0];
    if (match[1]) out.appendChild(h("code", {}, token.slice(1, -1)));
    else if (match[2]) out.appendChild(h("strong", {}, inline(token.slice(2, -2))));
    else if (match[3]) out.appendChild(h("em", {}, inline(token.slice(1, -1))));
    else out.appendChild(link(token));
    last = at + token.length;
  }
  append(out, text.slice(last));
  return out;
}

/** A link only to an http(s) address; any other scheme (javascript:, data:) stays text. */
function link(token: string): Node {
  const [, label, href] = token.match(/^\[([^\]]+)\]\(([^)\s]+)\)$/) ?? [];
  if (!label || !href || !/^https?:\/\//i.test(href)) return document.createTextNode(token);
  return h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, label);
}
