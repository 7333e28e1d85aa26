import { shoot, useConsole } from "./support/console-harness";

jest.setTimeout(180_000);

// The web console at /console (docs/console.md), driven in Debian's Chromium against the four services as real processes.
// The model's scenarios (test/support/scenario-model.ts) are picked by the input's first word.

describe("the web console in a browser", () => {
  const ui = useConsole();
  const { api, startRun, openConsole, signedIn, stateOf } = ui;
  const runPage = (token: string, id: string) => signedIn(token, `/console/#/runs/${id}`);
  let mo: string;
  let bob: string;
  beforeAll(() => {
    ({ mo, bob } = ui.tokens);
  });

  it("serves the console with its security headers", async () => {
    const index = await fetch(`${ui.platform.gatewayUrl}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-security-policy")).toMatch(/default-src 'self'.*connect-src 'self'/);
    expect(index.headers.get("cache-control")).toBe("no-cache");
    const html = await index.text();
    const asset = html.match(/src="(\/console\/assets\/[^"]+\.js)"/)?.[1];
    expect(asset).toBeDefined();
    expect(html).not.toMatch(/<script>(?!<)/); // no inline script
    const js = await fetch(`${ui.platform.gatewayUrl}${asset}`);
    expect([js.status, js.headers.get("cache-control")]).toEqual([200, "public, max-age=31536000, immutable"]);
  });

  it("signs in with a pasted token, starts a run from the form and shows it reach succeeded with its evidence", async () => {
    const page = await signedIn(mo);
    expect(page.url()).not.toContain(mo);
    await expect(page.locator("#who").textContent()).resolves.toContain("mo @ acme");
    await page.getByLabel("Input").fill("refund how long do I have?");
    await page.getByLabel("Mode").selectOption("agent");
    await page.getByRole("button", { name: "Start" }).click();
    await page.waitForURL(/#\/runs\/[0-9a-f-]{36}$/);
    await stateOf(page, "succeeded");
    const timeline = page.locator("ol.timeline");
    await timeline.locator('[data-type="tool call"]', { hasText: "knowledge_search" }).waitFor();
    await timeline.locator('[data-type="policy"]', { hasText: "permit" }).waitFor();
    await timeline.locator('[data-type="succeeded"]').waitFor();
    // The final answer is rendered Markdown (bold, a list), with its evidence.
    await expect(page.locator("#final-answer strong").textContent()).resolves.toBe("30 days");
    await expect(page.locator("#final-answer li").textContent()).resolves.toBe("keep the receipt");
    await page.locator("ol.evidence li", { hasText: "Refund policy" }).first().waitFor();
    await shoot(page, "run-timeline.png");

    // The evidence links to the document itself, read whole through the public API; Back returns to the run.
    const runUrl = page.url();
    await page.locator("#answer ol.evidence a.evidence-link", { hasText: "Refund policy" }).first().click();
    await page.locator("#document-title", { hasText: "Refund policy" }).waitFor();
    await page.locator("#document-body", { hasText: "within 30 days of purchase" }).waitFor();
    await page.getByRole("button", { name: "← Back" }).click();
    await page.waitForURL(runUrl);
    await stateOf(page, "succeeded");

    // The runs list shows it, and a run started elsewhere appears without a reload.
    await page.getByRole("link", { name: "← All runs" }).click();
    await page.locator("table.runs tbody tr").first().waitFor();
    const other = await startRun(mo, "hello there");
    await page.locator(`tr[data-run="${other}"]`).waitFor();
    await page.locator(`tr[data-run="${other}"] .state-succeeded`).waitFor();
    await page.getByLabel("State").selectOption("running");
    await page.locator(`tr[data-run="${other}"]`).waitFor({ state: "detached" });
    await page.getByLabel("State").selectOption("all");
    await page.getByLabel("Search by id").fill(other.slice(-8));
    await expect(page.locator("table.runs tbody tr").count()).resolves.toBe(1);
    if (process.env.UPDATE_SCREENSHOTS === "1") await page.getByLabel("Search by id").fill("");
    await shoot(page, "runs-list.png");
  });

  it("answers a run's question from the page and shows the result without a reload", async () => {
    const id = await startRun(mo, "region please");
    // At a phone's width: nothing wider than the screen.
    const page = await signedIn(mo, `/console/#/runs/${id}`, { width: 390 });
    await stateOf(page, "awaiting_input");
    // Evaluated in the page (given as text: the suite is type-checked without the DOM library).
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
    await page.getByLabel("Which region?").fill("EU");
    await page.getByRole("button", { name: "Send answer" }).click();
    await stateOf(page, "succeeded");
    await page.locator("#final-answer", { hasText: "region is EU" }).waitFor();
    await page.locator('ol.timeline [data-type="answered"]', { hasText: "EU" }).waitFor();
  });

  it("shows exactly what a write tool will run, and approves one call and rejects another", async () => {
    const approved = await startRun(mo, "note alpha");
    let page = await runPage(mo, approved);
    await stateOf(page, "awaiting_confirmation");
    await expect(page.locator("#approval-tool").textContent()).resolves.toBe("save_note");
    expect(JSON.parse((await page.locator("#approval-arguments").textContent()) ?? "")).toEqual({ title: "Note note alpha", body: "We ship on Friday." });
    await page.getByRole("button", { name: "Approve" }).click();
    await stateOf(page, "succeeded");
    await page.locator("#final-answer", { hasText: "note ok" }).waitFor();
    expect((await ui.pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = 'acme' AND title = 'Note note alpha'")).rows[0].n).toBe(1);

    const rejected = await startRun(mo, "note beta");
    page = await runPage(mo, rejected);
    await stateOf(page, "awaiting_confirmation");
    await page.getByRole("button", { name: "Reject" }).click();
    await stateOf(page, "succeeded");
    await page.locator('ol.timeline [data-type="rejected"]').waitFor();
    await page.locator('ol.timeline [data-type="tool result"]', { hasText: "REJECTED_BY_USER" }).waitFor();
    await page.locator("#final-answer").waitFor();
    expect((await ui.pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = 'acme' AND title = 'Note note beta'")).rows[0].n).toBe(0);
  });

  it("cancels a run from the page", async () => {
    const id = await startRun(mo, "wait for me");
    const page = await runPage(mo, id);
    await stateOf(page, "awaiting_input");
    await page.getByRole("button", { name: "Cancel run" }).click();
    await stateOf(page, "cancelled");
    await page.locator('ol.timeline [data-type="cancelled"]').waitFor();
    await expect(page.getByRole("button", { name: "Cancel run" }).count()).resolves.toBe(0);
    expect((await api(mo, "GET", `/v1/agents/runs/${id}`)).body.state).toBe("cancelled");
  });

  it("shows another user's run as not found, with none of its data", async () => {
    const id = await startRun(bob, "refund bob's private question");
    const page = await runPage(mo, id);
    await page.getByRole("heading", { name: "Run not found" }).waitFor();
    const text = (await page.locator("main").textContent()) ?? "";
    expect(text).not.toContain("bob's private question");
    await expect(page.locator("ol.timeline").count()).resolves.toBe(0);
    // A document id that is not the tenant's reads as not found too.
    const elsewhere = await signedIn(mo, "/console/#/knowledge/00000000-0000-4000-8000-000000000000");
    await elsewhere.getByRole("heading", { name: "Document not found" }).waitFor();
  });

  it("signs in as the demo user with one click when the development sign-in answers, in dark mode", async () => {
    // Dark mode follows the system's preference.
    const page = await openConsole("/console/", { dark: true });
    expect(await page.evaluate("getComputedStyle(document.body).backgroundColor")).toBe("rgb(18, 18, 18)");
    await page.getByRole("button", { name: "Sign in as the demo user" }).click();
    await page.locator("#who", { hasText: "demo-user @ demo" }).waitFor();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
  });
});
