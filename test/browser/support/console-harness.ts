import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../../support/platform";
import { startFakeOpenAi, type FakeOpenAi } from "../../support/fake-openai";
import { scenarioModel } from "../../support/scenario-model";
import { launchChromium } from "../../support/chromium";
import { waitFor } from "../../support/wait-for";

export const UI_TIMEOUT = 30_000;

const SCREENSHOTS = join(__dirname, "..", "..", "..", "docs", "console");

/** Writes the page to docs/console/<name> when UPDATE_SCREENSHOTS=1 (the documentation's pictures); else nothing. */
export async function shoot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== "1") return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

/** What a browser suite works with once its platform and browser are up. */
export interface ConsoleHarness {
  readonly platform: TestPlatform;
  readonly pool: pg.Pool;
  /** Members of tenant `acme`: mo and bob; `root` is acme's admin. */
  readonly tokens: { readonly mo: string; readonly bob: string; readonly root: string };
  api(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  startRun(token: string, input: string): Promise<string>;
  /** A fresh tab (its own session storage) on the console, watched for faults. */
  openConsole(path?: string, options?: { width?: number; dark?: boolean }): Promise<Page>;
  /** A fresh tab signed in with a pasted token. */
  signedIn(token: string, path?: string, options?: { width?: number; dark?: boolean }): Promise<Page>;
  /** Waits until the run page's summary shows `state`. */
  stateOf(page: Page, state: string): Promise<void>;
  /** Waits (through the API) until the run is in `state`; resolves with its snapshot. */
  settled(token: string, id: string, state: string): Promise<any>;
}

/**
 * One platform (the four services as real processes, a scripted model, Debian's Chromium) for a browser suite,
 * with a knowledge document in tenant `acme`. After each test every tab is closed and the page must not have
 * put a token in a URL, violated the content security policy or thrown.
 */
export function useConsole(): ConsoleHarness {
  let platform: TestPlatform | undefined;
  let model: FakeOpenAi | undefined;
  let browser: Browser | undefined;
  let pool: pg.Pool | undefined;
  let tokens: ConsoleHarness["tokens"] | undefined;
  const contexts: BrowserContext[] = [];
  const faults: string[] = [];
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the console harness is not started (beforeAll failed?)");
    return value;
  };

  beforeAll(async () => {
    model = await startFakeOpenAi(scenarioModel("You have **30 days** to ask for a refund.\n\n- keep the receipt"));
    // acme's administrators are the platform's operators here: the status page shows the whole platform.
    platform = await startTestPlatform({
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake",
      STEWARD_TEST_DEV_SIGN_IN: "1",
      STEWARD_OPERATOR_TENANT: "acme",
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    await addDocument(pool, { tenantId: "acme", title: "Refund policy", body: "Customers may ask for a refund within 30 days of purchase." });
    tokens = {
      mo: await platform.token({ tenant: "acme", user: "mo" }),
      bob: await platform.token({ tenant: "acme", user: "bob" }),
      root: await platform.token({ tenant: "acme", user: "root", roles: ["admin"] }),
    };
    browser = await launchChromium();
  });

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
    expect(faults.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  const harness: ConsoleHarness = {
    get platform() {
      return need(platform);
    },
    get pool() {
      return need(pool);
    },
    get tokens() {
      return need(tokens);
    },
    api: (token, method, path, body) => need(platform).http(method, path, { token, body }),
    async startRun(token, input) {
      const created = await harness.api(token, "POST", "/v1/agents/runs", { input });
      expect(created.status).toBe(201);
      return created.body.id as string;
    },
    async openConsole(path = "/console/", options = {}) {
      const context = await need(browser).newContext({ viewport: { width: options.width ?? 1200, height: 900 }, colorScheme: options.dark ? "dark" : "light" });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(UI_TIMEOUT);
      page.on("request", (r) => {
        if (/eyJ[\w-]+\.[\w-]+\./.test(r.url())) faults.push(`token in a URL: ${r.url().slice(0, 60)}`);
      });
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) faults.push(`CSP: ${m.text()}`);
      });
      page.on("pageerror", (err) => faults.push(`page error: ${err.message}`));
      await page.goto(`${need(platform).gatewayUrl}${path}`);
      return page;
    },
    async signedIn(token, path = "/console/", options = {}) {
      const page = await harness.openConsole(path, options);
      await page.getByLabel("Bearer token").fill(token);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.locator("#who").waitFor();
      return page;
    },
    stateOf: (page, state) => page.locator(`dl.summary[data-state="${state}"]`).waitFor(),
    settled: (token, id, state) =>
      waitFor(
        async () => {
          const run = await harness.api(token, "GET", `/v1/agents/runs/${id}`);
          return run.body.state === state ? run.body : undefined;
        },
        { timeoutMs: 30_000, what: `run ${id} ${state}` },
      ),
  };
  return harness;
}
