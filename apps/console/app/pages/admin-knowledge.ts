import { knowledge, platformStatus, type KnowledgeDocument } from "../admin-api";
import { confirmStep, failure, showNotAllowed, when } from "../admin-page";
import { announce, h, replace } from "../dom";

const PAGE_SIZE = 20;

/**
 * The tenant's knowledge base: its documents (newest first, paged), a form that adds one, and delete after a
 * confirm step. Members may read the documents too (the agent searches them), so the page asks an admin route
 * first — the same one the navigation asks — and shows a member "Not allowed" rather than a list without rights.
 */
export function renderKnowledge(main: HTMLElement): () => void {
  let left = false;
  let page = 1;
  let total = 0;
  const body = h("tbody");
  const position = h("p", { class: "muted", id: "knowledge-position" });
  const listError = h("p", { class: "error", role: "alert" });
  const confirmHost = h("div", { class: "card", hidden: true });
  const previous = h("button", { type: "button", class: "secondary", onclick: () => void load(page - 1) }, "← Newer");
  const next = h("button", { type: "button", class: "secondary", onclick: () => void load(page + 1) }, "Older →");

  const title = h("input", { id: "doc-title", type: "text", required: true, maxlength: "200", autocomplete: "off" });
  const text = h("textarea", { id: "doc-body", rows: "8", required: true, maxlength: "200000" });
  const format = h("select", { id: "doc-format" }, h("option", { value: "text" }, "plain text"), h("option", { value: "markdown" }, "Markdown"));
  const addResult = h("p", { class: "error", role: "alert" });

  async function load(to: number): Promise<void> {
    listError.textContent = "";
    try {
      const answer = await knowledge.list(to, PAGE_SIZE);
      if (left) return;
      page = answer.page;
      total = answer.total;
      // Deleting the last document of a page leaves it empty: show the one before.
      if (answer.items.length === 0 && page > 1) return load(page - 1);
      replace(body, ...answer.items.map(row));
      const first = (page - 1) * PAGE_SIZE;
      position.textContent = total ? `Documents ${first + 1}–${first + answer.items.length} of ${total}, newest first` : "No documents yet.";
      previous.disabled = page <= 1;
      next.disabled = first + answer.items.length >= total;
    } catch (err) {
      if (!showNotAllowed(main, err)) listError.textContent = failure(err, "The documents could not be read");
    }
  }

  function row(doc: KnowledgeDocument): HTMLTableRowElement {
    return h(
      "tr",
      { "data-document": doc.id },
      h("td", { class: "wrap" }, h("strong", {}, doc.title), h("div", { class: "muted" }, h("code", {}, doc.id))),
      h("td", {}, String(doc.chunks)),
      h("td", {}, String(doc.chars)),
      h("td", {}, when(doc.created_at)),
      h("td", {}, h("button", { type: "button", class: "danger", "aria-label": `Delete ${doc.title}`, onclick: () => askDelete(doc) }, "Delete")),
    );
  }

  function askDelete(doc: KnowledgeDocument): void {
    confirmStep(confirmHost, {
      id: "delete-confirm",
      message: ["Delete the document ", h("strong", {}, doc.title), ` (${doc.id})? The agent will no longer find it. This cannot be undone.`],
      confirm: "Delete the document",
      onConfirm: async () => {
        await knowledge.remove(doc.id);
        announce(`deleted ${doc.title}`);
        await load(page);
      },
    });
    confirmHost.scrollIntoView({ block: "nearest" });
  }

  const add = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "add-title",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        addResult.textContent = "";
        try {
          const created = await knowledge.add({ title: title.value.trim(), body: text.value, format: format.value === "markdown" ? "markdown" : "text" });
          title.value = "";
          text.value = "";
          announce(`added ${created.title}`);
          await load(1);
        } catch (err) {
          addResult.textContent = failure(err, "Not added");
        }
      },
    },
    h("h2", { id: "add-title" }, "Add a document"),
    h("label", { for: "doc-title" }, "Title"),
    title,
    h("label", { for: "doc-body" }, "Body"),
    text,
    h("label", { for: "doc-format" }, "Format"),
    format,
    h("button", { type: "submit" }, "Add document"),
    addResult,
  );

  replace(main, h("p", { class: "muted" }, "Loading the knowledge base…"));
  platformStatus().then(
    () => {
      if (left) return;
      replace(
        main,
        h("h1", {}, "Knowledge"),
        add,
        confirmHost,
        h(
          "section",
          { class: "card", "aria-labelledby": "docs-title" },
          h("h2", { id: "docs-title" }, "Documents"),
          position,
          listError,
          h(
            "div",
            { class: "scroll" },
            h(
              "table",
              { class: "admin", id: "documents" },
              h("caption", { class: "visually-hidden" }, "Knowledge documents, newest first"),
              h("thead", {}, h("tr", {}, ...["Title", "Chunks", "Characters", "Added", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
              body,
            ),
          ),
          h("nav", { class: "pager", "aria-label": "Document pages" }, previous, " ", next),
        ),
      );
      void load(1);
    },
    (err: unknown) => {
      if (left || showNotAllowed(main, err)) return;
      replace(main, h("h1", {}, "Knowledge"), h("p", { class: "error", role: "alert" }, failure(err, "The platform could not be asked")));
    },
  );
  return () => {
    left = true;
  };
}
