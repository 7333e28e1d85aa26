// The layers' import rules (.dependency-cruiser.cjs, run by `npm run lint:deps` and `npm test`) against a small
// tree laid out as the repository is: every rule must refuse its own kind of import, and let through what the
// layers allow (a type from the store, an adapter in a spec, an adapter implementing an app's port).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const root = join(__dirname, "..", "..");

let tree: string;

function write(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
}

const depcruise = (...args: string[]) =>
  spawnSync(join(root, "node_modules", ".bin", "depcruise"), ["--config", join(root, ".dependency-cruiser.cjs"), ...args, "services", "packages"], {
    cwd: tree,
    encoding: "utf8",
  });

/** The violations as `rule: from → to` (a cycle once, from its first module), sorted, and the exit status of the check as `npm run lint:deps` runs it. */
function cruise(): { status: number | null; violations: string[] } {
  const r = depcruise("--output-type", "json");
  if (!r.stdout) throw new Error(`depcruise said nothing on stdout: ${r.stderr}`);
  const report = JSON.parse(r.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
  return { status: depcruise().status, violations: report.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort() };
}

beforeAll(() => {
  tree = mkdtempSync(join(tmpdir(), "steward-layers-"));
  write({
    "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@steward/store": ["packages/store/src"] } } }),
    "node_modules/pg/package.json": JSON.stringify({ name: "pg", main: "index.js" }),
    "node_modules/pg/index.js": "exports.Client = class {};\n",
    "packages/store/src/index.ts": "export function readStream(): void {}\nexport interface StoredEvent { readonly seq: number }\n",
    "services/shop/src/app/ports.ts": "export interface Orders { find(id: string): Promise<unknown> }\n",
    "services/shop/src/app/find-order.ts":
      'import type { Orders } from "./ports";\nexport const findOrder = (orders: Orders, id: string) => orders.find(id);\n',
    "services/shop/src/adapters/pg/orders.ts": 'import type { Orders } from "../../app/ports";\nexport const orders: Orders = { find: async () => null };\n',
    "services/shop/src/app/find-order.test.ts":
      'import { orders } from "../adapters/pg/orders";\nimport { findOrder } from "./find-order";\nvoid findOrder(orders, "1");\n',
    "services/shop/src/main.ts":
      'import { orders } from "./adapters/pg/orders";\nimport { findOrder } from "./app/find-order";\nvoid findOrder(orders, "1");\n',
    "services/gateway/src/app/read-events.ts":
      'import type { StoredEvent } from "@steward/store";\nexport const first = (events: StoredEvent[]) => events[0];\n',
  });
});

afterAll(() => rmSync(tree, { recursive: true, force: true }));

describe("the dependency rules", () => {
  it("let through what the layers allow", () => {
    expect(cruise()).toEqual({ status: 0, violations: [] });
  });

  it("refuse each kind of import that breaks a layer, and fail the run", () => {
    write({
      "services/shop/src/app/cancel-order.ts":
        'import { orders } from "../adapters/pg/orders";\nimport { Client } from "pg";\nexport const cancel = () => [orders, Client];\n',
      "services/shop/src/domain/price.ts":
        'import { Client } from "pg";\nimport { findOrder } from "../app/find-order";\nexport const price = () => [Client, findOrder];\n',
      "services/billing/src/main.ts": 'import { orders } from "../../shop/src/adapters/pg/orders";\nvoid orders;\n',
      "packages/kit/src/index.ts": 'import { findOrder } from "../../../services/shop/src/app/find-order";\nvoid findOrder;\n',
      "packages/kit/src/one.ts": 'import { two } from "./two";\nexport const one = () => two;\n',
      "packages/kit/src/two.ts": 'import { one } from "./one";\nexport const two = () => one;\n',
      "services/gateway/src/app/append.ts": 'import { readStream } from "@steward/store";\nexport const read = readStream;\n',
    });
    const { status, violations } = cruise();
    expect(violations).toEqual(
      [
        "app-calls-store: services/gateway/src/app/append.ts → packages/store/src/index.ts",
        "app-imports-adapter: services/shop/src/app/cancel-order.ts → services/shop/src/adapters/pg/orders.ts",
        "app-imports-io-library: services/shop/src/app/cancel-order.ts → node_modules/pg/index.js",
        "domain-imports-io-library: services/shop/src/domain/price.ts → node_modules/pg/index.js",
        "domain-imports-outer-layer: services/shop/src/domain/price.ts → services/shop/src/app/find-order.ts",
        "no-circular: packages/kit/src/one.ts → packages/kit/src/two.ts",
        "package-imports-service: packages/kit/src/index.ts → services/shop/src/app/find-order.ts",
        "service-imports-service: services/billing/src/main.ts → services/shop/src/adapters/pg/orders.ts",
      ].sort(),
    );
    expect(status).not.toBe(0);
  });
});
