import { failure, showNotAllowed } from "./admin-page";
import { announce, h, replace } from "./dom";

/** One page of a list as the gateway's list routes answer it. */
export interface ListPage<T> {
  readonly items: readonly T[];
  readonly page: number;
  readonly page_size: number;
  readonly total: number;
}

/** What a filtered, paged list page shows; its ids derive from `id` (`<id>-title`, `<id>-position`). */
export interface PagedList<T> {
  readonly id: string;
  readonly title: string;
  readonly heading: string;
  readonly intro: string;
  /** The table's caption, for screen readers. */
  readonly caption: string;
  readonly columns: readonly string[];
  /** What the items are, capitalised and plural ("Runs"), and the line shown when none match. */
  readonly noun: string;
  readonly none: string;
  readonly pagerLabel: string;
  /** The message shown when a page cannot be read. */
  readonly unreadable: string;
  /** The filter controls, each with its label; the control's `id` ties the two. */
  readonly filters: ReadonlyArray<readonly [string, HTMLInputElement | HTMLSelectElement]>;
  readonly fetch: (page: number) => Promise<ListPage<T>>;
  readonly row: (item: T) => HTMLTableRowElement;
}

/**
 * A page listing a filtered, paged collection newest first (the administrators' lists): the filter form, the
 * table, where in the list the page is, and the pager. A caller the gateway refuses sees the "not allowed" page.
 * Returns what stops it when the page is left.
 */
export function renderPagedList<T>(main: HTMLElement, list: PagedList<T>): () => void {
  let left = false;
  let page = 1;
  const body = h("tbody");
  const position = h("p", { class: "muted", id: `${list.id}-position`, "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const previous = h("button", { type: "button", class: "secondary", onclick: () => void load(page - 1) }, "← Previous");
  const next = h("button", { type: "button", class: "secondary", onclick: () => void load(page + 1) }, "Next →");

  async function load(wanted: number): Promise<void> {
    error.textContent = "";
    try {
      const got = await list.fetch(wanted);
      if (left) return;
      page = got.page;
      replace(body, ...got.items.map(list.row));
      const from = (page - 1) * got.page_size;
      position.textContent = got.total ? `${list.noun} ${from + 1}–${from + got.items.length} of ${got.total}, newest first` : list.none;
      previous.disabled = page <= 1;
      next.disabled = page * got.page_size >= got.total;
      announce(position.textContent);
    } catch (err) {
      if (!showNotAllowed(main, err)) error.textContent = failure(err, list.unreadable);
      else left = true;
    }
  }

  const form = h(
    "form",
    {
      class: "row",
      role: "search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        void load(1);
      },
    },
    ...list.filters.map(([label, control]) => h("div", {}, h("label", { for: control.id }, label), control)),
    h("div", { class: "filter-go" }, h("button", { type: "submit" }, "Apply")),
  );

  replace(
    main,
    h("h1", {}, list.title),
    h(
      "section",
      { class: "card", "aria-labelledby": `${list.id}-title` },
      h("h2", { id: `${list.id}-title` }, list.heading),
      h("p", { class: "muted" }, list.intro),
      form,
      error,
      position,
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "admin", id: list.id },
          h("caption", { class: "visually-hidden" }, list.caption),
          h("thead", {}, h("tr", {}, ...list.columns.map((c) => h("th", { scope: "col" }, c)))),
          body,
        ),
      ),
      h("nav", { class: "pager", "aria-label": list.pagerLabel }, previous, " ", next),
    ),
  );
  void load(1);
  return () => {
    left = true;
  };
}
