import { h } from "./dom";
import { parseMarkdown, type Block, type Inline } from "./markdown-parse";

/**
 * Renders the console's small Markdown (markdown-parse.ts) as DOM nodes, never HTML strings: every piece of
 * the source ends up in a text node, and links only ever point to http(s) addresses.
 */
export function renderMarkdown(source: string): DocumentFragment {
  const out = document.createDocumentFragment();
  for (const block of parseMarkdown(source)) out.appendChild(blockNode(block));
  return out;
}

function blockNode(block: Block): Node {
  switch (block.kind) {
    case "code":
      return h("pre", {}, h("code", {}, block.text));
    case "heading": {
      const heading = document.createElement(`h${block.level}`);
      heading.appendChild(inlineNodes(block.inline));
      return heading;
    }
    case "list":
      return h(block.ordered ? "ol" : "ul", {}, ...block.items.map((item) => h("li", {}, inlineNodes(item))));
    case "paragraph":
      return h("p", {}, inlineNodes(block.inline));
  }
}

function inlineNodes(spans: readonly Inline[]): DocumentFragment {
  const out = document.createDocumentFragment();
  for (const span of spans) {
    switch (span.kind) {
      case "text":
        out.appendChild(document.createTextNode(span.text));
        break;
      case "code":
        out.appendChild(h("code", {}, span.text));
        break;
      case "strong":
      case "em":
        out.appendChild(h(span.kind, {}, inlineNodes(span.children)));
        break;
      case "link":
        out.appendChild(h("a", { href: span.href, rel: "noopener noreferrer nofollow", target: "_blank" }, span.label));
        break;
    }
  }
  return out;
}
