import { platformStatus, type PlatformStatus, type TenantStatus } from "../admin-api";
import { failure, showNotAllowed, when } from "../admin-page";
import { announce, h, replace } from "../dom";
import { str } from "../format";

const POLL_MS = 5000;

const label = (key: string) => key.replace(/_/g, " ");
const value = (v: unknown): string => (typeof v === "boolean" ? (v ? "yes" : "no") : v === null || v === undefined ? "—" : str(v));

/** Key → value, for the objects the status leaves open (shown as they come, so new fields appear by themselves). */
function facts(id: string, object: Readonly<Record<string, unknown>> | null, unknown = "unknown: it could not be asked"): HTMLElement {
  if (!object) return h("p", { class: "warn", id }, unknown);
  return h("dl", { class: "summary", id }, ...Object.entries(object).flatMap(([k, v]) => [h("dt", {}, label(k)), h("dd", { "data-key": k }, value(v))]));
}

function section(id: string, title: string, ...body: (Node | null)[]): HTMLElement {
  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, title), ...body);
}

/** The platform as the gateway sees it (GET /v1/admin/status), read again every 5 s while the page is shown. */
export function renderStatus(main: HTMLElement): () => void {
  let left = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last: (PlatformStatus | TenantStatus)["status"] | undefined;
  const content = h("div", { id: "status-content" });
  const error = h("p", { class: "error", role: "alert" });

  const overall = (s: PlatformStatus | TenantStatus, what: string) =>
    h(
      "p",
      { id: "status-overall" },
      `${what} is `,
      h("strong", { class: s.status === "ok" ? "ok" : "bad", "data-status": s.status }, s.status),
      h("span", { class: "muted" }, " — checked ", when(s.checked_at), `, read again every ${POLL_MS / 1000} s`),
    );
  const problemsOf = (s: PlatformStatus | TenantStatus) =>
    section(
      "problems-title",
      "Problems",
      s.problems.length ? h("ul", { id: "status-problems" }, ...s.problems.map((p) => h("li", {}, p))) : h("p", { class: "ok", id: "status-problems" }, "None"),
    );

  /** A tenant's administrator: the tenant's own queue; the platform's insides are for its operators. */
  function drawTenant(s: TenantStatus): void {
    replace(
      content,
      overall(s, `Tenant ${s.tenant_id}`),
      problemsOf(s),
      section("queue-title", "Your tenant's runs", facts("status-queue", s.queue)),
      h("p", { class: "muted", id: "status-scope" }, "Instances, runners, the outbox and dead letters are shown to the platform's operators."),
    );
  }

  function draw(s: PlatformStatus | TenantStatus): void {
    if (s.scope === "tenant") {
      drawTenant(s);
      if (last !== undefined && last !== s.status) announce(`tenant ${s.status}`);
      last = s.status;
      return;
    }
    const dependency = (name: string, check: unknown) => {
      const c = (check ?? null) as { ok?: boolean; detail?: string; reason?: string } | null;
      return h(
        "tr",
        { "data-dependency": name },
        h("th", { scope: "row" }, name),
        h("td", {}, c === null ? h("span", { class: "warn" }, "not checked") : c.ok ? h("span", { class: "ok" }, "up") : h("span", { class: "bad" }, "down")),
        h("td", { class: "wrap" }, c?.ok ? (c.detail ?? "") : (c?.reason ?? "")),
      );
    };
    const instance = (i: Readonly<Record<string, unknown>>) => {
      const { service, instance: name, ready, reasons, started_at, ...more } = i;
      return h(
        "tr",
        {},
        h("th", { scope: "row" }, str(service)),
        h("td", { class: "wrap" }, h("code", {}, str(name))),
        h("td", {}, ready ? h("span", { class: "ok" }, "ready") : h("span", { class: "bad" }, "not ready")),
        h("td", { class: "wrap" }, Array.isArray(reasons) ? reasons.map(str).join("; ") : ""),
        h("td", {}, when(typeof started_at === "string" ? started_at : null)),
        h(
          "td",
          { class: "wrap muted" },
          Object.entries(more)
            .map(([k, v]) => `${label(k)}: ${value(v)}`)
            .join(", "),
        ),
      );
    };
    replace(
      content,
      overall(s, "The platform"),
      problemsOf(s),
      section(
        "deps-title",
        "Dependencies",
        h(
          "table",
          { class: "admin compact", id: "status-dependencies" },
          h("caption", { class: "visually-hidden" }, "Dependencies as the gateway sees them"),
          h("tbody", {}, ...Object.entries(s.dependencies).map(([n, c]) => dependency(n, c))),
        ),
      ),
      h(
        "div",
        { class: "status-grid" },
        section(
          "runners-title",
          "Runners",
          facts("status-runners", { attached: s.runners.attached, in_flight: s.runners.in_flight }),
          h("h3", {}, "Command consumer"),
          facts("status-consumer", s.runners.consumer),
        ),
        section("queue-title", "Queue", facts("status-queue", s.queue)),
        section("outbox-title", "Outbox", facts("status-outbox", s.outbox)),
        section("dead-title", "Dead letters", facts("status-dead-letters", s.dead_letters)),
      ),
      section(
        "services-title",
        "Instances",
        h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { class: "admin", id: "status-services" },
            h("thead", {}, h("tr", {}, ...["Service", "Instance", "Ready", "Reasons", "Started", "More"].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, ...s.services.map(instance)),
          ),
        ),
      ),
    );
    if (last !== undefined && last !== s.status) announce(`platform ${s.status}`);
    last = s.status;
  }

  const refresh = async (first: boolean) => {
    try {
      const s = await platformStatus();
      if (left) return;
      if (first) replace(main, h("h1", {}, "Status"), error, content);
      error.textContent = "";
      draw(s);
    } catch (err) {
      if (left) return;
      if (first && showNotAllowed(main, err)) return; // no polling for a caller the route refuses
      if (first) replace(main, h("h1", {}, "Status"), error, content);
      error.textContent = failure(err, "The status could not be read");
    }
    timer = setTimeout(() => void refresh(false), POLL_MS);
  };
  replace(main, h("p", { class: "muted" }, "Asking the platform…"));
  void refresh(true);
  return () => {
    left = true;
    clearTimeout(timer);
  };
}
