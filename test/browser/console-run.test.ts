import { useConsole } from "./support/console-harness";

jest.setTimeout(180_000);

// The approvals inbox, the waterfall of a run's time and the run page's details, driven in
// Debian's Chromium against the four services as real processes. The model's scenarios
// (test/support/scenario-model.ts) are picked by the input's first word: "note …" waits for approval of save_note.

describe("the console's approvals inbox and run details in a browser", () => {
  const ui = useConsole();
  const { api, startRun, signedIn, stateOf, settled } = ui;
  let mo: string;
  let bob: string;
  beforeAll(() => {
    ({ mo, bob } = ui.tokens);
  });

  /** The run's state once it stops moving through `running` / `queued`. */
  const events = async (token: string, id: string) =>
    (await api(token, "GET", `/v1/agents/runs/${id}/events?limit=1000`)).body.items as { type: string; data: any; recorded_at: string }[];
  const notes = async (title: string) =>
    (await ui.pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = 'acme' AND title = $1", [title])).rows[0].n as number;

  it("lists the calls waiting for the caller across runs, approves one and rejects another without a reload, and never shows another user's", async () => {
    const bobs = await startRun(bob, "note bob's secret");
    const first = await startRun(mo, "note inbox one");
    await settled(bob, bobs, "awaiting_confirmation");
    await settled(mo, first, "awaiting_confirmation");

    const page = await signedIn(mo, "/console/#/approvals", { width: 390 });
    await page.getByRole("link", { name: "Approvals" }).waitFor();
    const items = page.locator("ul.inbox > li");
    await page.locator(`li[data-run="${first}"]`).waitFor();
    // A run that starts waiting while the inbox is shown appears by itself.
    await page.evaluate("window.stayedOnThisDocument = true");
    const sent: { url: string; body: unknown }[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/confirmation")) sent.push({ url: r.url(), body: JSON.parse(r.postData() ?? "null") });
    });
    const second = await startRun(mo, "note inbox two");
    await page.locator(`li[data-run="${second}"]`).waitFor();
    await expect(items.count()).resolves.toBe(2);
    // At a phone's width: nothing wider than the screen.
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);

    // Each shows the tool, its exact arguments and a link to its run.
    for (const [id, input] of [
      [first, "note inbox one"],
      [second, "note inbox two"],
    ]) {
      const item = page.locator(`li[data-run="${id}"]`);
      await expect(item.locator(".inbox-tool").textContent()).resolves.toBe("save_note");
      expect(JSON.parse((await item.locator(".inbox-arguments").textContent()) ?? "")).toEqual({ title: `Note ${input}`, body: "We ship on Friday." });
      await expect(item.getByRole("link").getAttribute("href")).resolves.toBe(`#/runs/${id}`);
      await expect(item.locator(".inbox-input").textContent()).resolves.toBe(input);
    }
    // Bob's waiting call is his alone: mo's inbox shows no trace of it.
    expect(await page.locator("main").textContent()).not.toContain("bob's secret");
    await expect(page.locator(`li[data-run="${bobs}"]`).count()).resolves.toBe(0);

    await page.locator(`li[data-run="${first}"]`).getByRole("button", { name: "Approve" }).click();
    await page.locator(`li[data-run="${first}"]`).waitFor({ state: "detached" });
    await expect(items.count()).resolves.toBe(1);
    await page.locator(`li[data-run="${second}"]`).getByRole("button", { name: "Reject" }).click();
    await page.getByText("Nothing is waiting for you").waitFor();
    await expect(items.count()).resolves.toBe(0);
    expect(await page.evaluate("window.stayedOnThisDocument === true")).toBe(true);

    // The runs ended as decided: the approved note exists, the rejected one does not.
    await settled(mo, first, "succeeded");
    const rejected = await settled(mo, second, "succeeded");
    expect(rejected.output.text).toBe("note REJECTED_BY_USER");
    expect(await notes("Note note inbox one")).toBe(1);
    expect(await notes("Note note inbox two")).toBe(0);
    // Each decision was sent with the fingerprint of the call the inbox showed.
    for (const [id, decision] of [
      [first, "approve"],
      [second, "reject"],
    ]) {
      const history = await events(mo, id);
      const asked = history.find((e) => e.type === "confirmation_required")!;
      const decided = history.find((e) => e.type === "confirmation.decided")!;
      expect(asked.data.fingerprint).toMatch(/^[0-9a-f]{16,}$/);
      expect(decided.data).toMatchObject({ decision, fingerprint: asked.data.fingerprint });
      expect(sent.filter((r) => r.url.endsWith(`/v1/agents/runs/${id}/confirmation`)).map((r) => r.body)).toEqual([
        { decision, fingerprint: asked.data.fingerprint },
      ]);
    }
    // Bob's call still waits for bob, and shows in his inbox.
    expect((await api(bob, "GET", `/v1/agents/runs/${bobs}`)).body.state).toBe("awaiting_confirmation");
    const bobsPage = await signedIn(bob, "/console/#/approvals");
    await bobsPage.locator(`li[data-run="${bobs}"] .inbox-tool`, { hasText: "save_note" }).waitFor();

    // The approved run's page shows the wait for approval among its times.
    const runPage = await signedIn(mo, `/console/#/runs/${first}`);
    await stateOf(runPage, "succeeded");
    await runPage.locator('#waterfall li[data-kind="wait"]', { hasText: "waiting for approval" }).waitFor();
    await runPage.locator('#waterfall li[data-kind="tool"]', { hasText: "save_note" }).waitFor();
    // The step ledger: the approved write, with its outcome.
    await runPage.locator('#step-ledger tr[data-step="1"]', { hasText: "save_note" }).locator("td.ok", { hasText: "ok" }).waitFor();
  });

  it("shows where a finished run's time went: a bar per phase, each with its time as text, the slowest marked", async () => {
    const id = await startRun(mo, "refund waterfall please");
    await settled(mo, id, "succeeded");
    const page = await signedIn(mo, `/console/#/runs/${id}`);
    await stateOf(page, "succeeded");
    await page.getByRole("heading", { name: "Time at a glance" }).waitFor();
    const rows = page.locator("#waterfall li.wf-row");
    // The whole history is in once the answer's model call is drawn.
    await rows.filter({ hasText: "model (answer)" }).waitFor();
    const count = await rows.count();
    const kinds: (string | null)[] = [];
    const lefts: number[] = [];
    for (let i = 0; i < count; i += 1) {
      kinds.push(await rows.nth(i).getAttribute("data-kind"));
      lefts.push((await rows.nth(i).locator(".wf-fill").boundingBox())?.x ?? -1);
    }
    // The tool call is split as tool-exec timed it: the PDP's decision, the tool, then the rest.
    expect(kinds).toEqual(["queue", "model", "pdp", "tool", "records", "model"]);
    const labels = await rows.locator(".wf-label").allTextContents();
    expect(labels).toEqual([
      "queued",
      "step 1 · model (tool calls)",
      "step 1 · knowledge_search (policy)",
      "step 1 · knowledge_search (tool)",
      "step 1 · knowledge_search (transport + records)",
      "step 2 · model (answer)",
    ]);
    for (const time of await rows.locator(".wf-time").allTextContents()) expect(time).toMatch(/^\d+(\.\d)? (ms|s) at \+\d+(\.\d)? (ms|s)/);
    // The policy and tool bars carry tool-exec's own times, as the run's result recorded them (each well under a
    // second here, so drawn as its whole ms), fitted inside the store's span from the call to its result: tool-exec
    // may decide while the runner still commits the call, so on a busy machine the decision can outlast that span.
    const stored = await events(mo, id);
    const call = stored.find((e) => e.type === "tool_call")!;
    const result = stored.find((e) => e.type === "tool_result")!;
    const timings = result.data.timings as { decision_ms: number; tool_ms: number };
    expect(timings).toEqual({ decision_ms: expect.any(Number), tool_ms: expect.any(Number) });
    const span = Date.parse(result.recorded_at) - Date.parse(call.recorded_at);
    const decided = Math.min(timings.decision_ms, span);
    for (const [kind, spent] of [
      ["pdp", decided],
      ["tool", Math.min(timings.tool_ms, span - decided)],
    ] as const) {
      expect(spent).toBeLessThan(1000);
      const row = page.locator(`#waterfall li[data-kind="${kind}"]`, { hasText: "knowledge_search" });
      await expect(row.count()).resolves.toBe(1);
      await expect(row.locator(".wf-time").textContent()).resolves.toMatch(new RegExp(`^${spent} ms at \\+`));
    }
    // The slowest phase is flagged, in text and on its row; the bars themselves are decorative.
    await expect(page.locator("#waterfall li.wf-slowest").count()).resolves.toBe(1);
    await expect(page.locator("#waterfall li.wf-slowest .wf-flag").textContent()).resolves.toBe(" slowest");
    await expect(rows.first().locator(".wf-track").getAttribute("aria-hidden")).resolves.toBe("true");
    // The bars are laid on the run's time axis: each one starts at or after the one before it.
    expect(lefts.every((x) => x >= 0)).toBe(true);
    expect([...lefts].sort((a, b) => a - b)).toEqual(lefts);

    // The budgets count exploration (knowledge_search is not an exploration tool), and the evidence shows its document.
    await expect(page.locator("#budgets").textContent()).resolves.toContain("exploration 0 of 7");
    // The step ledger lists the one tool step with its outcome and a preview of its result.
    await expect(page.locator("#step-ledger tbody tr").count()).resolves.toBe(1);
    await page.locator('#step-ledger tr[data-step="1"]', { hasText: "knowledge_search" }).locator("code.preview", { hasText: "Refund policy" }).waitFor();
    // At a phone's width the waterfall still fits the screen.
    await page.setViewportSize({ width: 390, height: 900 });
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
    const documentId = (await ui.pool.query("SELECT id FROM kb_documents WHERE tenant_id = 'acme' AND title = 'Refund policy'")).rows[0].id as string;
    await page.locator("#final-answer strong", { hasText: "30 days" }).waitFor();
    await page.locator("ol.evidence li", { hasText: "Refund policy" }).locator(".document-id", { hasText: documentId }).first().waitFor();
  });
});
