import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { NegativeOutcome } from "../errors";
import { ExitCode } from "../exit-codes";
import { readLocalFile } from "./kb";

type PoliciesCommand = Extract<Command, { name: `policies.${string}` }>;

interface PolicySet {
  version: number;
  status: string;
  policy_ids: string[];
  created_by: string;
  created_at: string;
  activated_at: string | null;
}
interface Validation {
  valid: boolean;
  policy_ids: string[];
  issues: Array<{ policy_id: string; message: string }>;
}
interface DryRun {
  permit: boolean;
  code: string | null;
  policy_ids: string[];
  version: number;
  errors: string[];
}

const setLine = (s: PolicySet) => `version ${s.version} ${s.status}${s.activated_at ? ` since ${s.activated_at}` : ""}: ${s.policy_ids.join(", ")}`;

/** `steward policies ls | validate <file> | dry-run ... | activate <version|file>` (the tenant's Cedar policy sets). */
export async function policiesCommand(ctx: Context, cmd: PoliciesCommand): Promise<number> {
  switch (cmd.name) {
    case "policies.ls": {
      const list = await ctx.api.request<{ items: PolicySet[] }>("GET", "/v1/admin/policies");
      print(ctx, list, (l) =>
        l.items.length === 0
          ? "no policy sets"
          : table([
              ["VERSION", "STATUS", "CREATED", "BY", "POLICIES"],
              ...l.items.map((s) => [String(s.version), s.status, s.created_at, s.created_by, s.policy_ids.join(", ")]),
            ]),
      );
      return ExitCode.ok;
    }
    case "policies.validate": {
      const result = await ctx.api.request<Validation>("POST", "/v1/admin/policies/validate", { body: { policies: readLocalFile(cmd.file) } });
      print(ctx, result, (r) =>
        r.valid
          ? ctx.style.green(`valid: ${r.policy_ids.length} policies (${r.policy_ids.join(", ")})`)
          : [
              ctx.style.red(`not valid: ${r.issues.length} issue${r.issues.length === 1 ? "" : "s"}`),
              ...r.issues.map((i) => `  ${i.policy_id || "(set)"}: ${i.message}`),
            ].join("\n"),
      );
      return result.valid ? ExitCode.ok : ExitCode.negative;
    }
    case "policies.dry-run": {
      const body = {
        user_id: cmd.user,
        roles: cmd.roles,
        action: cmd.action,
        resource: cmd.resource,
        elevated: cmd.elevated,
        ...(cmd.version ? { version: cmd.version } : {}),
      };
      const result = await ctx.api.request<DryRun>("POST", "/v1/admin/policies/dry-run", { body });
      print(ctx, result, (r) => {
        const verdict = r.permit ? ctx.style.green("permit") : ctx.style.red(`deny${r.code ? ` ${r.code}` : ""}`);
        const by = r.policy_ids.length ? ` by ${r.policy_ids.join(", ")}` : "";
        return [`${verdict}${by} (policy set version ${r.version})`, ...r.errors.map((e) => ctx.style.yellow(`  ${e}`))].join("\n");
      });
      return result.permit ? ExitCode.ok : ExitCode.negative;
    }
    case "policies.activate": {
      let version: number;
      if ("file" in cmd.target) {
        // A file is uploaded as a new version first (validated by the policy service), then activated.
        const uploaded = await ctx.api.request<PolicySet>("POST", "/v1/admin/policies", { body: { policies: readLocalFile(cmd.target.file) } });
        if (!ctx.globals.json) ctx.stderr.write(`uploaded as version ${uploaded.version}\n`);
        version = uploaded.version;
      } else version = cmd.target.version;
      const active = await ctx.api.request<PolicySet>("POST", `/v1/admin/policies/${version}/activate`);
      print(ctx, active, (s) => ctx.style.green(`active: ${setLine(s)}`));
      if (active.status !== "active") throw new NegativeOutcome(`version ${version} is ${active.status}, not active`);
      return ExitCode.ok;
    }
  }
}
