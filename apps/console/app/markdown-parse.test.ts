import { describe, expect, it } from "@jest/globals";
import { parseInline, parseMarkdown } from "./markdown-parse";

describe("parseMarkdown", () => {
  it("reads headings (shifted below the page's own), paragraphs, lists and fenced code", () => {
    const source = "# Refunds\r\nYou have **30 days**\nto ask.\n\n- keep the receipt\n- ask `support`\n\n1. first\n\n```\n<b>not html</b>\n```";
    expect(parseMarkdown(source)).toEqual([
      { kind: "heading", level: 3, inline: [{ kind: "text", text: "Refunds" }] },
      {
        kind: "paragraph",
        inline: [
          { kind: "text", text: "You have " },
          { kind: "strong", children: [{ kind: "text", text: "30 days" }] },
          { kind: "text", text: " to ask." },
        ],
      },
      {
        kind: "list",
        ordered: false,
        items: [
          [{ kind: "text", text: "keep the receipt" }],
          [
            { kind: "text", text: "ask " },
            { kind: "code", text: "support" },
          ],
        ],
      },
      { kind: "list", ordered: true, items: [[{ kind: "text", text: "first" }]] },
      { kind: "code", text: "<b>not html</b>" },
    ]);
  });

  it("keeps an unclosed fence's code to the end", () => {
    expect(parseMarkdown("```\na\nb")).toEqual([{ kind: "code", text: "a\nb" }]);
  });
});

describe("parseInline", () => {
  it("links only http(s) addresses; other schemes stay text", () => {
    expect(parseInline("see [the docs](https://example.com/a) or [x](javascript:alert(1)) or [y](data:text/html,hi)")).toEqual([
      { kind: "text", text: "see " },
      { kind: "link", href: "https://example.com/a", label: "the docs" },
      { kind: "text", text: " or [x](javascript:alert(1)) or [y](data:text/html,hi)" },
    ]);
  });

  it("nests emphasis in bold, and leaves markup inside code alone", () => {
    expect(parseInline("**a _b_** `*c*`")).toEqual([
      {
        kind: "strong",
        children: [
          { kind: "text", text: "a " },
          { kind: "em", children: [{ kind: "text", text: "b" }] },
        ],
      },
      { kind: "text", text: " " },
      { kind: "code", text: "*c*" },
    ]);
  });

  it("keeps HTML as text: the renderer puts every piece in a text node", () => {
    expect(parseInline("<img src=x onerror=alert(1)>")).toEqual([{ kind: "text", text: "<img src=x onerror=alert(1)>" }]);
  });
});
