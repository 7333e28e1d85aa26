import { shoot, useConsole } from "./support/console-harness";

jest.setTimeout(180_000);

// The console's threads, proposals and the admins' run list, driven in Debian's Chromium
// against the four services as real processes. The model's scenarios (test/support/scenario-model.ts) are picked
// by the first word of the run's own input: "refund …" searches and answers, "propose …" proposes knowledge.

describe("the console's threads, proposals and admins' run list in a browser", () => {
  const ui = useConsole();
  const { api, signedIn, stateOf, settled } = ui;
  let mo: string;
  let root: string;
  beforeAll(() => {
    ({ mo, root } = ui.tokens);
  });

  it("starts a conversation, asks two questions in it, and forks it at the first", async () => {
    const page = await signedIn(mo, "/console/#/threads");
    await page.getByLabel("Title").fill("Refunds, step by step");
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await page.getByRole("heading", { name: "Refunds, step by step" }).waitFor();
    const threadId = decodeURIComponent(new URL(page.url()).hash.replace("#/threads/", ""));

    await page.getByLabel("Input").fill("refund window in this thread?");
    await page.getByRole("button", { name: "Ask", exact: true }).click();
    await stateOf(page, "succeeded");
    const first = decodeURIComponent(new URL(page.url()).hash.replace("#/runs/", ""));

    await page.goto(`${ui.platform.gatewayUrl}/console/#/threads/${threadId}`);
    await page.locator(`#thread-runs li[data-run="${first}"] .state-succeeded`).waitFor();
    await page.getByLabel("Input").fill("refund and the receipt?");
    await page.getByRole("button", { name: "Ask", exact: true }).click();
    await stateOf(page, "succeeded");
    // The second turn was shown the first: its run recorded a history of one turn.
    const second = decodeURIComponent(new URL(page.url()).hash.replace("#/runs/", ""));
    const history = (await api(mo, "GET", `/v1/agents/runs/${second}/events?limit=1000`)).body.items.find(
      (e: { type: string }) => e.type === "context.history",
    );
    expect(history.data.turns.map((t: { run_id: string }) => t.run_id)).toEqual([first]);

    await page.goto(`${ui.platform.gatewayUrl}/console/#/threads/${threadId}`);
    await page.locator("#thread-runs > li").nth(1).waitFor();
    expect(await page.locator("#thread-runs > li").count()).toBe(2);
    await shoot(page, "thread.png");
    await page.locator(`button[data-fork="${first}"]`).click();
    await page.waitForURL((url) => url.hash.startsWith("#/threads/") && !url.hash.endsWith(threadId));
    await page.locator("#thread-facts").getByRole("link", { name: "this thread" }).waitFor();
    const forkId = decodeURIComponent(new URL(page.url()).hash.replace("#/threads/", ""));
    const fork = (await api(mo, "GET", `/v1/threads/${forkId}`)).body;
    expect(fork.forked_from).toEqual({ thread_id: threadId, run_id: first });

    await page.goto(`${ui.platform.gatewayUrl}/console/#/threads`);
    await page.locator(`#threads tr[data-thread="${threadId}"]`).waitFor();
    await page.locator(`#threads tr[data-thread="${forkId}"]`).waitFor();
  });

  it("lists a proposal of the caller's run and applies it: the document it became opens", async () => {
    const thread = (await api(mo, "POST", "/v1/threads", {})).body;
    const run = (await api(mo, "POST", "/v1/agents/runs", { input: "propose Gift cards cannot be refunded.", thread_id: thread.id })).body;
    await settled(mo, run.id, "succeeded");

    const page = await signedIn(mo, "/console/#/proposals");
    const item = page.locator("#proposals > li").filter({ hasText: "Gift cards cannot be refunded." });
    await item.waitFor();
    await shoot(page, "proposals.png");
    await item.getByRole("button", { name: "Apply" }).click();
    const applied = page.locator('#proposals > li[data-status="applied"]').filter({ hasText: "Gift cards cannot be refunded." });
    await applied.waitFor();
    await applied.getByRole("link", { name: "the document" }).click();
    await page.getByText("Gift cards cannot be refunded.").first().waitFor();
    const proposals = (await api(mo, "GET", "/v1/knowledge/proposals?status=applied")).body.items;
    expect(proposals.find((p: { run_id: string }) => p.run_id === run.id)).toMatchObject({ status: "applied", decided_by: "mo" });
  });

  it("shows an administrator every user's runs and one run's events; a member is not allowed", async () => {
    const run = (await api(mo, "POST", "/v1/agents/runs", { input: "refund for the admin view" })).body;
    await settled(mo, run.id, "succeeded");

    const page = await signedIn(root, "/console/#/admin/runs");
    await page.locator("#nav").getByRole("link", { name: "All runs" }).waitFor();
    await page.locator("#admin-run-user").fill("mo");
    await page.getByRole("button", { name: "Apply" }).click();
    const row = page.locator(`#admin-runs tr[data-run="${run.id}"]`);
    await row.waitFor();
    expect(await page.locator("#admin-runs tbody tr td:nth-child(2)").allTextContents()).toEqual(expect.arrayContaining(["mo"]));
    expect(new Set(await page.locator("#admin-runs tbody tr td:nth-child(2)").allTextContents())).toEqual(new Set(["mo"]));
    await shoot(page, "admin-runs.png");
    await row.getByRole("link").click();
    await page.locator("#admin-run-facts").getByText("by mo").waitFor();
    await page.locator('#admin-run-events tr[data-seq="1"]').getByText("run.queued").waitFor();

    const member = await signedIn(mo, "/console/#/admin/runs");
    await member.locator("#not-allowed").waitFor();
  });
});
