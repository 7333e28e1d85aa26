import { api, ApiError } from "../api";
import { h, replace } from "../dom";
import { since } from "../format";
import { renderMarkdown } from "../markdown";

interface KnowledgeDocument {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly chars: number;
  readonly created_at: string;
}

/**
 * One knowledge document, whole: where a run's evidence links to. Its body is rendered with the console's own
 * Markdown (text nodes only; a plain-text document reads the same). Another tenant's or a deleted document is
 * "not found", as the API says.
 */
export function renderDocument(main: HTMLElement, id: string): () => void {
  let left = false;
  replace(main, h("p", { class: "muted" }, "Loading the document…"));
  void api<KnowledgeDocument>("GET", `/v1/knowledge/documents/${encodeURIComponent(id)}`).then(
    (doc) => {
      if (left) return;
      replace(
        main,
        h("p", {}, h("button", { type: "button", class: "secondary", onclick: () => history.back() }, "← Back")),
        h("h1", { id: "document-title" }, doc.title),
        h("p", { class: "muted" }, "document ", h("code", { class: "document-id" }, doc.id), `, ${doc.chars} characters, added ${since(doc.created_at)}`),
        h("article", { class: "card markdown", id: "document-body", "aria-labelledby": "document-title" }, renderMarkdown(doc.body)),
      );
    },
    (err) => {
      if (left) return;
      const missing = err instanceof ApiError && err.status === 404;
      replace(
        main,
        h("h1", {}, missing ? "Document not found" : "The document could not be read"),
        h("p", { role: "alert" }, err instanceof ApiError ? err.message : ""),
        h("p", {}, h("a", { href: "#/" }, "← Your runs")),
      );
    },
  );
  return () => {
    left = true;
  };
}
