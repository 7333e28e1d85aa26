import { policies, type PolicySet } from "../admin-api";
import { confirmStep, failure, showNotAllowed, when } from "../admin-page";
import { announce, h, replace } from "../dom";
import { renderDryRun } from "../admin-dry-run";

/**
 * The tenant's policy sets: each version with its status and author, one version's text, a new set validated
 * and uploaded as a draft, a decision dry-run, and activation after a confirm step naming both versions.
 */
export function renderPolicies(main: HTMLElement): () => void {
  let sets: readonly PolicySet[] = [];
  let left = false;
  const body = h("tbody");
  const listError = h("p", { class: "error", role: "alert" });
  const confirmHost = h("div", { class: "card", hidden: true });
  const viewer = h("section", { class: "card", "aria-labelledby": "policy-text-title", hidden: true });
  const active = () => sets.find((s) => s.status === "active");

  const text = h("textarea", { id: "policy-text", rows: "12", spellcheck: "false", maxlength: "200000", class: "code" });
  const editorResult = h("div", { id: "policy-check", "aria-live": "polite" });

  async function load(): Promise<void> {
    sets = (await policies.list()).items;
    if (!left) draw();
  }

  function draw(): void {
    const current = active();
    replace(
      body,
      ...sets.map((s) =>
        h(
          "tr",
          { "data-version": String(s.version) },
          h("th", { scope: "row" }, `v${s.version}`),
          h("td", {}, h("span", { class: `policy-status policy-${s.status}` }, s.status)),
          h("td", {}, h("span", { class: "policy-ids" }, s.policy_ids.join(", "))),
          h("td", {}, s.created_by, h("div", { class: "muted" }, when(s.created_at))),
          h("td", {}, when(s.activated_at)),
          h(
            "td",
            { class: "actions-cell" },
            h("button", { type: "button", class: "secondary", "aria-label": `View version ${s.version}`, onclick: () => void view(s.version) }, "View"),
            " ",
            s === current
              ? null
              : h("button", { type: "button", "aria-label": `Activate version ${s.version}`, onclick: () => askActivate(s, current) }, "Activate"),
          ),
        ),
      ),
    );
  }

  async function view(version: number): Promise<void> {
    try {
      const set = await policies.get(version);
      replace(
        viewer,
        h("h2", { id: "policy-text-title" }, `Version ${set.version} (${set.status})`),
        h("pre", { class: "policy-source", id: "policy-source", tabindex: "0", "aria-label": `Text of version ${set.version}` }, h("code", {}, set.policies)),
        h("button", { type: "button", class: "secondary", onclick: () => ((text.value = set.policies), text.focus()) }, "Copy into the editor"),
      );
      viewer.hidden = false;
      viewer.scrollIntoView({ block: "nearest" });
    } catch (err) {
      listError.textContent = failure(err, `Version ${version} could not be read`);
    }
  }

  function askActivate(set: PolicySet, current: PolicySet | undefined): void {
    confirmStep(confirmHost, {
      id: "activate-confirm",
      message: [
        `Activate version ${set.version} (${set.policy_ids.length} policies)? `,
        current ? `It replaces version ${current.version}, the active set, ` : "It becomes the active set ",
        "for every decision from now on, runs in progress included.",
      ],
      confirm: `Activate version ${set.version}`,
      onConfirm: async () => {
        await policies.activate(set.version);
        announce(`version ${set.version} is active`);
        await load();
      },
    });
    confirmHost.scrollIntoView({ block: "nearest" });
  }

  const check = async (upload: boolean) => {
    replace(editorResult);
    if (!text.value.trim()) return replace(editorResult, h("p", { class: "error", role: "alert" }, "The policy text is empty."));
    try {
      if (upload) {
        const draft = await policies.upload(text.value);
        replace(editorResult, h("p", { class: "ok" }, `Uploaded as version ${draft.version} (draft): ${draft.policy_ids.join(", ")}`));
        announce(`version ${draft.version} uploaded`);
        await load();
        return;
      }
      const report = await policies.validate(text.value);
      replace(
        editorResult,
        report.valid
          ? h("p", { class: "ok", id: "policy-valid" }, `Valid: ${report.policy_ids.length} policies (${report.policy_ids.join(", ")})`)
          : h(
              "div",
              { role: "alert", id: "policy-invalid" },
              h("p", { class: "bad" }, `Not valid: ${report.issues.length} issue${report.issues.length === 1 ? "" : "s"}`),
              h("ul", { class: "issues" }, ...report.issues.map((i) => h("li", {}, h("code", {}, i.policy_id || "(set)"), ": ", i.message))),
            ),
      );
    } catch (err) {
      replace(editorResult, h("p", { class: "error", role: "alert" }, failure(err, upload ? "Not uploaded" : "Not validated")));
    }
  };

  replace(main, h("p", { class: "muted" }, "Loading the policy sets…"));
  load().then(
    () => {
      if (left) return;
      replace(
        main,
        h("h1", {}, "Policies"),
        h(
          "section",
          { class: "card", "aria-labelledby": "sets-title" },
          h("h2", { id: "sets-title" }, "Policy sets"),
          h(
            "div",
            { class: "scroll" },
            h(
              "table",
              { class: "admin", id: "policy-sets" },
              h("caption", { class: "visually-hidden" }, "Policy set versions, newest first"),
              h("thead", {}, h("tr", {}, ...["Version", "Status", "Policies", "Created", "Activated", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
              body,
            ),
          ),
          listError,
        ),
        confirmHost,
        viewer,
        h(
          "section",
          { class: "card", "aria-labelledby": "editor-title" },
          h("h2", { id: "editor-title" }, "New policy set"),
          h("p", { class: "muted" }, 'Cedar policies, each with a unique @id("…"). Upload stores a draft; activate it above.'),
          h("label", { for: "policy-text" }, "Policy text"),
          text,
          h(
            "button",
            { type: "button", class: "secondary", onclick: () => ((text.value = active()?.policies ?? ""), text.focus()) },
            "Start from the active set",
          ),
          " ",
          h("button", { type: "button", class: "secondary", onclick: () => void check(false) }, "Validate"),
          " ",
          h("button", { type: "button", onclick: () => void check(true) }, "Upload as draft"),
          editorResult,
        ),
        renderDryRun(() => sets),
      );
    },
    (err: unknown) => {
      if (left || showNotAllowed(main, err)) return;
      replace(main, h("h1", {}, "Policies"), h("p", { class: "error", role: "alert" }, failure(err, "The policy sets could not be read")));
    },
  );
  return () => {
    left = true;
  };
}
