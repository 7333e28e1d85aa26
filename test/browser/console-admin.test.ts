import type { Page } from "playwright-core";
import { shoot, useConsole } from "./support/console-harness";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// The console's admin pages (policies, decisions, knowledge, status), driven in Chromium
// against the four services as real processes. `root` is acme's admin; `mo` a member.

interface PolicySet {
  version: number;
  status: string;
  policies: string;
  policy_ids: string[];
}

describe("the console's admin pages", () => {
  const ui = useConsole();
  const { api, signedIn, openConsole } = ui;
  let root: string;
  let mo: string;
  beforeAll(() => {
    ({ root, mo } = ui.tokens);
  });

  const sets = async (): Promise<PolicySet[]> => {
    const res = await api(root, "GET", "/v1/admin/policies");
    expect(res.status).toBe(200);
    return res.body.items;
  };
  const activeSet = async () => (await sets()).find((s) => s.status === "active")!;

  /** Activates `version` from the Policies page: the row's button, then the confirm step naming both versions. */
  async function activateFromPage(page: Page, version: number, replacing: number): Promise<void> {
    await page
      .getByRole("button", { name: `Activate version ${version}`, exact: true })
      .first()
      .click();
    const confirm = page.locator("#activate-confirm");
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain(`It replaces version ${replacing}, the active set`);
    await confirm.getByRole("button", { name: `Activate version ${version}`, exact: true }).click();
    await page.locator(`#policy-sets tr[data-version="${version}"] .policy-active`).waitFor();
    await confirm.waitFor({ state: "detached" });
  }

  it("an admin activates a policy version and sees the next decision use it", async () => {
    const before = await activeSet();
    const forbid = `@id("console-members-search-nothing")\nforbid (principal in Steward::Role::"member", action == Steward::Action::"knowledge.document.read", resource == Steward::Tool::"knowledge_search");`;
    const page = await signedIn(root, "/console/#/admin/policies");
    try {
      // The admin links appear for an administrator.
      await page.locator("#nav").getByRole("link", { name: "Decisions" }).waitFor();
      await page.locator(`#policy-sets tr[data-version="${before.version}"] .policy-active`).waitFor();

      // Upload a stricter set as a draft from the editor, starting from the active one.
      await page.getByRole("button", { name: "Start from the active set" }).click();
      expect(await page.getByLabel("Policy text").inputValue()).toBe(before.policies);
      await page.getByLabel("Policy text").fill(`${before.policies}\n${forbid}\n`);
      await page.getByRole("button", { name: "Upload as draft" }).click();
      const uploaded = await page.locator("#policy-check .ok", { hasText: "Uploaded as version" }).textContent();
      const version = Number(/version (\d+)/.exec(uploaded ?? "")?.[1]);
      const draft = (await sets()).find((s) => s.version === version);
      expect(draft).toMatchObject({ status: "draft", policy_ids: expect.arrayContaining(["console-members-search-nothing"]) });
      await page.locator(`#policy-sets tr[data-version="${version}"] .policy-draft`).waitFor();

      // Its text, as stored.
      await page.getByRole("button", { name: `View version ${version}` }).click();
      await page.locator("#policy-source", { hasText: "console-members-search-nothing" }).waitFor();

      await activateFromPage(page, version, before.version);
      await shoot(page, "admin-policies.png");
      expect((await activeSet()).version).toBe(version);
      // The policy service has dropped its cached set when a dry run of the active set answers with the new one.
      await waitFor(
        async () => {
          const dry = await api(root, "POST", "/v1/admin/policies/dry-run", {
            user_id: "mo",
            roles: ["member"],
            action: "knowledge.document.read",
            resource: { type: "tool", id: "knowledge_search" },
          });
          return dry.body.version === version && dry.body.permit === false ? true : undefined;
        },
        { what: `version ${version} deciding` },
      );

      // mo's next run: its knowledge search is decided by the new policy.
      const run = await ui.startRun(mo, "refund after the policy change");
      await waitFor(
        async () => {
          const r = await api(mo, "GET", `/v1/agents/runs/${run}`);
          return ["succeeded", "failed", "cancelled"].includes(r.body.state) ? r.body : undefined;
        },
        { what: "the run to end" },
      );

      // The decision log, filtered by the run, shows the deny with the new policy and version, linking the run.
      await page.locator("#nav").getByRole("link", { name: "Decisions" }).click();
      await page.getByRole("heading", { name: "Decision log" }).waitFor();
      await page.getByLabel("Run id").fill(run);
      await page.getByRole("button", { name: "Apply" }).click();
      await page.locator("#decision-position", { hasText: `Decisions 1–1 of 1, oldest first, run ${run}` }).waitFor();
      const row = page.locator('#decisions tr[data-effect="deny"]', { hasText: "console-members-search-nothing" });
      await expect(row.count()).resolves.toBe(1);
      await expect(page.locator("#decisions tbody tr").count()).resolves.toBe(1);
      const text = (await row.textContent()) ?? "";
      for (const part of ["mo", "knowledge.document.read", "tool/knowledge_search", "deny", `version ${version}`, "60500", "step 1"])
        expect(text).toContain(part);
      await expect(row.getByRole("link").getAttribute("href")).resolves.toBe(`#/runs/${run}`);
      await shoot(page, "admin-decisions.png");
      // The server says the same.
      const log = await api(root, "GET", `/v1/audit/decisions?run_id=${run}`);
      expect(log.body.items).toEqual([
        expect.objectContaining({ permit: false, code: "60500", policy_ids: ["console-members-search-nothing"], policy_version: version }),
      ]);

      // And mo's run page shows the same decision in its timeline.
      const runPage = await signedIn(mo, `/console/#/runs/${run}`);
      await runPage.locator('ol.timeline [data-type="policy"]', { hasText: "deny 60500 by console-members-search-nothing" }).waitFor();

      // Put the previous version back, from the page.
      await page.locator("#nav").getByRole("link", { name: "Policies" }).click();
      await page.locator(`#policy-sets tr[data-version="${version}"] .policy-active`).waitFor();
      await activateFromPage(page, before.version, version);
      expect((await activeSet()).version).toBe(before.version);
    } finally {
      // Whatever failed above, the other tests decide with the set they started with.
      if ((await activeSet()).version !== before.version) await api(root, "POST", `/v1/admin/policies/${before.version}/activate`);
    }
  });

  it("validates policy text (errors for a broken set, valid for a good one) and dry-runs a decision, at a phone's width", async () => {
    const page = await signedIn(root, "/console/#/admin/policies", { width: 390 });
    await page.getByRole("heading", { name: "Policy sets" }).waitFor();
    const editor = page.getByLabel("Policy text");

    await editor.fill('@id("nuke")\npermit (principal, action == Steward::Action::"agent.run.nuke", resource);');
    await page.getByRole("button", { name: "Validate" }).click();
    const invalid = page.locator("#policy-invalid");
    await invalid.waitFor();
    expect(await invalid.textContent()).toMatch(/Not valid: \d+ issues?/);
    expect(await invalid.locator("li").first().textContent()).toContain("agent.run.nuke");

    await editor.fill('@id("members-read-runs")\npermit (principal in Steward::Role::"member", action == Steward::Action::"agent.run.read", resource);');
    await page.getByRole("button", { name: "Validate" }).click();
    await page.locator("#policy-valid", { hasText: "Valid: 1 policies (members-read-runs)" }).waitFor();
    await invalid.waitFor({ state: "detached" });
    // Validating stores nothing.
    expect((await sets()).some((s) => s.policy_ids.includes("members-read-runs"))).toBe(false);

    // A member may search the knowledge base (the default set)…
    await page.getByLabel("User", { exact: true }).fill("alice");
    await page.getByLabel("Roles").fill("member");
    await page.getByLabel("Action").fill("knowledge.document.read");
    await page.getByLabel("Resource type").fill("tool");
    await page.getByLabel("Resource id").fill("knowledge_search");
    await page.getByRole("button", { name: "Dry run" }).click();
    await page.locator('#dry-result [data-effect="permit"]').waitFor();
    await expect(page.locator("#dry-policies").textContent()).resolves.toBe("member-knowledge-read");
    await expect(page.locator("#dry-code").textContent()).resolves.toBe("none");
    // …a guest may not: no policy permits, the code a live call would get.
    await page.getByLabel("Roles").fill("guest");
    await page.getByRole("button", { name: "Dry run" }).click();
    await page.locator('#dry-result [data-effect="deny"]').waitFor();
    await expect(page.locator("#dry-code").textContent()).resolves.toBe("60500");
    await expect(page.locator("#dry-effect").textContent()).resolves.toBe("deny");
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
  });

  it("adds a knowledge document from the page, lists it, and deletes it after a confirm step", async () => {
    const title = `Shipping handbook ${Date.now()}`;
    const listed = async () =>
      ((await api(root, "GET", "/v1/knowledge/documents?page=1&page_size=100")).body.items as Array<{ id: string; title: string }>).filter(
        (d) => d.title === title,
      );
    const page = await signedIn(root, "/console/#/admin/knowledge");
    await page.getByLabel("Title").fill(title);
    await page.getByLabel("Body").fill("We ship to the EU and the US, on Fridays.");
    await page.getByRole("button", { name: "Add document" }).click();
    const row = page.locator("#documents tbody tr", { hasText: title });
    await row.waitFor();
    const [doc] = await listed();
    expect(doc).toBeDefined();
    await expect(row.getAttribute("data-document")).resolves.toBe(doc.id);
    await shoot(page, "admin-knowledge.png");

    await row.getByRole("button", { name: `Delete ${title}` }).click();
    const confirm = page.locator("#delete-confirm");
    expect(await confirm.textContent()).toContain(title);
    // Cancelling deletes nothing.
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    expect(await listed()).toHaveLength(1);

    await row.getByRole("button", { name: `Delete ${title}` }).click();
    await page.locator("#delete-confirm").getByRole("button", { name: "Delete the document" }).click();
    await row.waitFor({ state: "detached" });
    expect(await listed()).toHaveLength(0);
    expect((await api(root, "DELETE", `/v1/knowledge/documents/${doc.id}`)).status).toBe(404);
  });

  it("lists an MCP session opened over /mcp and opens the decisions it made from its row", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "console-e2e", version: "1" } },
    };
    const opened = await fetch(`${ui.platform.gatewayUrl}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${mo}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "steward-mcp-mode": "execute",
      },
      body: JSON.stringify(init),
    });
    await opened.text();
    const session = opened.headers.get("mcp-session-id")!;
    expect([opened.status, session]).toEqual([200, expect.stringMatching(/^[0-9a-f-]{36}$/)]);

    const page = await signedIn(root, "/console/#/admin/decisions");
    await page.locator("#nav").getByRole("link", { name: "MCP sessions" }).click();
    await page.getByRole("heading", { name: "Sessions of MCP clients" }).waitFor();
    await page.getByLabel("User").fill("mo");
    await page.getByLabel("Open only").check();
    await page.getByRole("button", { name: "Apply" }).click();
    const row = page.locator(`#mcp-sessions tr[data-session="${session}"]`);
    await row.waitFor();
    const text = (await row.textContent()) ?? "";
    for (const part of [session.slice(-8), "mo", "execute", "open"]) expect(text).toContain(part);
    await shoot(page, "admin-mcp-sessions.png");

    // Its link: the decision log filtered by the session, whose one decision is the opening, naming the session.
    await row.getByRole("link", { name: `Decisions of session ${session.slice(-8)}` }).click();
    await page.locator("#decision-position", { hasText: `Decisions 1–1 of 1, oldest first, MCP session ${session}` }).waitFor();
    await expect(page.getByLabel("MCP session").inputValue()).resolves.toBe(session);
    const decision = page.locator("#decisions tbody tr");
    await expect(decision.count()).resolves.toBe(1);
    const cells = (await decision.textContent()) ?? "";
    for (const part of ["mo", "agent.mcp.session", "permit", `${session.slice(-8)}execute`]) expect(cells).toContain(part);
    await expect(decision.locator(".decision-session a").getAttribute("title")).resolves.toBe(session);
  });

  it("shows the platform status and reads it again while shown", async () => {
    const status = (await api(root, "GET", "/v1/admin/status")).body;
    const page = await signedIn(root, "/console/#/admin/status");
    const overall = page.locator("#status-overall [data-status]");
    await overall.waitFor();
    expect(["ok", "degraded"]).toContain(await overall.textContent());
    for (const dependency of ["postgres", "nats", "policy"])
      await page.locator(`#status-dependencies tr[data-dependency="${dependency}"]`, { hasText: "up" }).waitFor();
    await expect(page.locator('#status-runners [data-key="attached"]').textContent()).resolves.toBe(String(status.runners.attached));
    await expect(page.locator('#status-queue [data-key="queued"]').count()).resolves.toBe(status.queue ? 1 : 0);
    await expect(page.locator('#status-outbox [data-key="backlog"]').count()).resolves.toBe(status.outbox ? 1 : 0);
    await page.locator("#status-dead-letters").waitFor();
    await page.locator("#status-services tbody tr", { hasText: "agent-runner" }).first().waitFor();
    await shoot(page, "admin-status.png");
    // Polled: the check time moves on without a reload.
    const checked = await page.locator("#status-overall time").getAttribute("datetime");
    await page.locator(`#status-overall time:not([datetime="${checked}"])`).waitFor();
  });

  it("shows a member no admin links, and 'Not allowed' and nothing else on an admin page opened directly", async () => {
    const page = await openConsole("/console/#/admin/policies");
    const probed = page.waitForResponse((r) => r.url().endsWith("/v1/admin/status"));
    await page.getByLabel("Bearer token").fill(mo);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    expect((await probed).status()).toBe(403);
    await page.getByRole("heading", { name: "Not allowed" }).waitFor();
    expect(await page.locator("#not-allowed").textContent()).toContain("10031");
    await expect(page.locator("main table, main form, main textarea").count()).resolves.toBe(0);

    for (const path of ["decisions", "mcp-sessions", "knowledge", "status"]) {
      await page.evaluate(`location.hash = "#/admin/${path}"`);
      await page.getByRole("heading", { name: "Not allowed" }).waitFor();
      await expect(page.locator("main table, main form, main textarea").count()).resolves.toBe(0);
    }

    // Back home: the runs list has read the API since the probe was answered, so the nav is final.
    await page.locator("#nav").getByRole("link", { name: "Runs", exact: true }).click();
    await page.locator("#runs-status", { hasText: "runs shown" }).waitFor();
    const links = await page.locator("#nav .links a").allTextContents();
    expect(links).toContain("Runs");
    for (const admin of ["Policies", "Decisions", "MCP sessions", "Knowledge", "Status"]) expect(links).not.toContain(admin);
  });
});
