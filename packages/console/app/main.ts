import "./style.css";
import { whenUnauthenticated } from "./api";
import { h, replace } from "./dom";
import { claimsOf, currentToken, signOut } from "./session";
import { renderSignIn } from "./pages/sign-in";
import { renderRuns } from "./pages/runs";
import { renderRun } from "./pages/run";

// Routes live in the fragment (#/ and #/runs/<id>): the gateway serves one page, and a token never enters a URL.
const main = document.getElementById("main") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;
let leave: (() => void) | undefined;

function drawNav(): void {
  const token = currentToken();
  if (!token) return replace(nav);
  const who = claimsOf(token);
  replace(
    nav,
    h("span", { class: "muted", id: "who" }, `${who.user ?? "?"} @ ${who.tenant ?? "?"}`),
    " ",
    h("button", { type: "button", class: "secondary", onclick: () => (signOut(), route()) }, "Sign out"),
  );
}

function route(): void {
  leave?.();
  leave = undefined;
  drawNav();
  if (!currentToken()) {
    renderSignIn(main, route);
  } else {
    const run = location.hash.match(/^#\/runs\/([^/?#]+)$/);
    leave = run ? renderRun(main, decodeURIComponent(run[1])) : renderRuns(main, (id) => (location.hash = `#/runs/${id}`));
  }
  main.focus({ preventScroll: true });
}

whenUnauthenticated(() => {
  signOut();
  route();
});
window.addEventListener("hashchange", route);
route();
