import "./style.css";
import { api, whenUnauthenticated } from "./api";
import { h, replace } from "./dom";
import { claimsOf, currentToken, signOut } from "./session";
import { renderSignIn } from "./pages/sign-in";
import { PAGES, pageFor } from "./routes";

// Routes live in the fragment (#/, #/runs/<id>, …): the gateway serves one page, and a token never enters a URL.
const main = document.getElementById("main") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;
let leave: (() => void) | undefined;
/** Whether the admin routes answer this token (asked once per token): admin pages are linked only then. */
let adminFor: { token: string; admin: Promise<boolean> } | undefined;

function isAdmin(token: string): Promise<boolean> {
  if (adminFor?.token !== token) {
    adminFor = {
      token,
      admin: api("GET", "/v1/admin/status").then(
        () => true,
        () => false,
      ),
    };
  }
  return adminFor.admin;
}

function drawNav(): void {
  const token = currentToken();
  if (!token) return replace(nav);
  const who = claimsOf(token);
  const links = h("span", { class: "links" });
  const current = pageFor(location.hash).page;
  const link = (label: string, href: string, here: boolean) => h("a", { href, ...(here ? { "aria-current": "page" } : {}) }, label);
  // Home (the runs list, last in the table as the catch-all) leads the navigation.
  const linked = [PAGES[PAGES.length - 1], ...PAGES.slice(0, -1)];
  for (const page of linked.filter((p) => p.nav && !p.admin)) links.append(link(page.nav!, page.href!, page === current), " ");
  void isAdmin(token).then((admin) => {
    if (!admin || currentToken() !== token) return;
    for (const page of linked.filter((p) => p.nav && p.admin)) links.append(link(page.nav!, page.href!, page === current), " ");
  });
  replace(
    nav,
    links,
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
    const { page, params } = pageFor(location.hash);
    leave = page.render(main, params);
  }
  main.focus({ preventScroll: true });
}

whenUnauthenticated(() => {
  signOut();
  route();
});
window.addEventListener("hashchange", route);
route();
