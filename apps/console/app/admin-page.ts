import { ApiError } from "./api";
import { announce, h, replace, type Child } from "./dom";

/**
 * Draws the "Not allowed" page when the API refused the caller (403): the gateway decides who is an
 * administrator, so an admin page learns it from its first call and shows nothing else. True when drawn.
 */
export function showNotAllowed(main: HTMLElement, err: unknown): boolean {
  if (!(err instanceof ApiError && err.status === 403)) return false;
  replace(
    main,
    h("h1", {}, "Not allowed"),
    h("p", { role: "alert", id: "not-allowed" }, `This page is for administrators: ${err.message}${err.code ? ` (${err.code})` : ""}.`),
    h("p", {}, h("a", { href: "#/" }, "← Your runs")),
  );
  return true;
}

/** The message of a failed call, for an error line. */
export const failure = (err: unknown, what: string): string => (err instanceof ApiError ? `${what}: ${err.message}` : `${what}.`);

/** A time for people, in the browser's locale; the ISO form stays in the title. */
export const when = (iso: string | null | undefined): HTMLElement | string =>
  iso ? h("time", { datetime: iso, title: iso }, new Date(iso).toLocaleString()) : "";

/**
 * An inline confirmation (not `window.confirm`: it can say exactly what will change, and it is part of the page
 * for keyboards and screen readers). Focus goes to the cancel button, so Enter by habit does nothing harmful.
 */
export function confirmStep(
  host: HTMLElement,
  options: { readonly id: string; readonly message: Child[]; readonly confirm: string; readonly onConfirm: () => Promise<void> },
): void {
  const error = h("p", { class: "error", role: "alert" });
  const cancel = h("button", { type: "button", class: "secondary", onclick: () => close() }, "Cancel");
  const go = h(
    "button",
    {
      type: "button",
      class: "danger",
      onclick: async () => {
        go.disabled = true;
        error.textContent = "";
        try {
          await options.onConfirm();
          close();
        } catch (err) {
          error.textContent = failure(err, "It did not happen");
          go.disabled = false;
        }
      },
    },
    options.confirm,
  );
  const panel = h(
    "div",
    { class: "confirm", role: "group", id: options.id, "aria-labelledby": `${options.id}-text` },
    h("p", { id: `${options.id}-text` }, ...options.message),
    go,
    " ",
    cancel,
    error,
  );
  const close = () => {
    panel.remove();
    host.hidden = true;
  };
  replace(host, panel);
  host.hidden = false;
  announce("confirmation needed");
  cancel.focus();
}
