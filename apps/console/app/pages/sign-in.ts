import { ApiError, devSignIn } from "../api";
import { h, replace } from "../dom";
import { signIn } from "../session";

/** Sign-in: paste a token; in development, one click signs in as the demo user (the button shows only then). */
export function renderSignIn(main: HTMLElement, done: () => void): void {
  const error = h("p", { class: "error", role: "alert" });
  const field = h("textarea", { id: "token", name: "token", rows: "4", required: true, autocomplete: "off", spellcheck: "false" });
  const form = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "sign-in-title",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const token = field.value.trim();
        if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) {
          error.textContent = "That is not a token: paste the JWT (three parts separated by dots).";
          field.focus();
          return;
        }
        signIn(token);
        done();
      },
    },
    h("h1", { id: "sign-in-title" }, "Sign in"),
    h("label", { for: "token" }, "Bearer token"),
    field,
    h("p", { class: "muted" }, "The token stays in this tab (session storage) and is sent only in the Authorization header."),
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  const demo = h("div", { class: "card", hidden: true });
  replace(main, form, demo);
  // The dev route answers only in development: the button appears when it does.
  void devSignIn()
    .then(() => {
      const button = h(
        "button",
        {
          type: "button",
          onclick: async () => {
            try {
              signIn((await devSignIn()).token);
              done();
            } catch (err) {
              error.textContent = err instanceof ApiError ? err.message : "sign-in failed";
            }
          },
        },
        "Sign in as the demo user",
      );
      replace(demo, h("p", {}, "Development: "), button);
      demo.hidden = false;
    })
    .catch(() => undefined);
}
