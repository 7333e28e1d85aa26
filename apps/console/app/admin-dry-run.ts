import { policyPoints } from "../../../packages/contract/src/policy-points";
import { policies, type PolicySet } from "./admin-api";
import { failure } from "./admin-page";
import { h, replace } from "./dom";

/**
 * Suggestions only (the field takes any text, `mcp.<server>.<tool>` points included): the policy catalogue
 * itself, bundled from the contract package's file (pure data, no server code comes with it). A point the PDP
 * does not know is refused by the dry run with its own message.
 */
const POINTS: readonly string[] = policyPoints;

/** The dry-run form: the decision a live call would get from the active set or a chosen version. */
export function renderDryRun(sets: () => readonly PolicySet[]): HTMLElement {
  const field = (id: string, label: string, input: HTMLElement) => h("div", {}, h("label", { for: id }, label), input);
  const user = h("input", { id: "dry-user", type: "text", required: true, maxlength: "256", autocomplete: "off", value: "alice" });
  const roles = h("input", { id: "dry-roles", type: "text", maxlength: "2000", autocomplete: "off", value: "member", "aria-describedby": "dry-roles-hint" });
  const action = h("input", {
    id: "dry-action",
    type: "text",
    required: true,
    maxlength: "128",
    list: "dry-points",
    autocomplete: "off",
    value: "knowledge.document.read",
  });
  const type = h("input", { id: "dry-type", type: "text", maxlength: "32", list: "dry-types", autocomplete: "off", value: "tool" });
  const id = h("input", { id: "dry-id", type: "text", maxlength: "256", autocomplete: "off", value: "knowledge_search" });
  const version = h("select", { id: "dry-version" });
  const elevated = h("input", { id: "dry-elevated", type: "checkbox", class: "check" });
  const result = h("div", { id: "dry-result", "aria-live": "polite" });

  // The versions are read when the form is used: the list above may have changed since it was drawn.
  const fillVersions = () => {
    const chosen = version.value;
    replace(
      version,
      h("option", { value: "" }, "the active set"),
      ...[...sets()].reverse().map((s) => h("option", { value: String(s.version) }, `version ${s.version} (${s.status})`)),
    );
    version.value = [...version.options].some((o) => o.value === chosen) ? chosen : "";
  };
  version.addEventListener("focus", fillVersions);
  version.addEventListener("pointerdown", fillVersions);
  fillVersions();

  const form = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "dry-title",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        replace(result);
        try {
          const answer = await policies.dryRun({
            ...(version.value ? { version: Number(version.value) } : {}),
            user_id: user.value.trim(),
            roles: roles.value
              .split(",")
              .map((r) => r.trim())
              .filter(Boolean),
            action: action.value.trim(),
            resource: { type: type.value.trim(), id: id.value.trim() },
            elevated: elevated.checked,
          });
          replace(
            result,
            h(
              "dl",
              { class: "summary", "data-effect": answer.permit ? "permit" : "deny" },
              h("dt", {}, "Effect"),
              h("dd", { id: "dry-effect" }, answer.permit ? h("span", { class: "ok" }, "permit") : h("span", { class: "bad" }, "deny")),
              h("dt", {}, "Deciding policies"),
              h("dd", { id: "dry-policies" }, answer.policy_ids.length ? answer.policy_ids.join(", ") : "none (no policy permits: denied by default)"),
              h("dt", {}, "Code"),
              h("dd", { id: "dry-code" }, answer.code ?? "none"),
              h("dt", {}, "Version"),
              h("dd", {}, String(answer.version)),
              ...(answer.errors.length ? [h("dt", {}, "Errors"), h("dd", {}, h("ul", { class: "issues" }, ...answer.errors.map((e) => h("li", {}, e))))] : []),
            ),
          );
        } catch (err) {
          replace(result, h("p", { class: "error", role: "alert" }, failure(err, "No dry run")));
        }
      },
    },
    h("h2", { id: "dry-title" }, "Dry-run a decision"),
    h("datalist", { id: "dry-points" }, ...POINTS.map((p) => h("option", { value: p }))),
    h("datalist", { id: "dry-types" }, ...["tool", "resource", "run"].map((p) => h("option", { value: p }))),
    h(
      "div",
      { class: "row" },
      field("dry-user", "User", user),
      h(
        "div",
        {},
        h("label", { for: "dry-roles" }, "Roles"),
        roles,
        h("p", { class: "muted hint", id: "dry-roles-hint" }, "Comma-separated, e.g. member, auditor"),
      ),
      field("dry-action", "Action", action),
    ),
    h("div", { class: "row" }, field("dry-type", "Resource type", type), field("dry-id", "Resource id", id), field("dry-version", "Policy set", version)),
    h("p", {}, h("label", { class: "inline" }, elevated, " Elevated (as under a valid elevation session)")),
    h("button", { type: "submit" }, "Dry run"),
    result,
  );
  return form;
}
