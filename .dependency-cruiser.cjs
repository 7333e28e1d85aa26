// The import rules of the layers (docs/architecture.md): a service's domain is pure, its application layer
// depends on the ports it declares, its adapters implement them, and main.ts wires them. Dependencies point
// down: services and the clients (apps/) → packages, never a service into another, never a package into a
// service or a client, never a client into a service. `npm run lint:deps`
// checks them; `npm test` runs it beside the typecheck.

/** Libraries that talk to the world: only adapters (and main.ts) import them, never a domain or application module. */
const IO_LIBRARIES = [
  "pg",
  "pg-.*",
  "@nats-io/.*",
  "nats",
  "@grpc/.*",
  "fastify",
  "@fastify/.*",
  "@modelcontextprotocol/.*",
  "jose",
  "opossum",
  "undici",
  "@opentelemetry/.*",
  "prom-client",
];

/** Specs and their helpers compose real adapters to test a layer; the rules hold for product code. */
const SPECS = "\\.(test|test-support|fixtures)\\.ts$|/fixtures/";

module.exports = {
  forbidden: [
    {
      name: "app-imports-adapter",
      comment: "The application layer declares the ports it needs (app/ports…); adapters implement them and main.ts wires them.",
      severity: "error",
      from: { path: "^services/([^/]+)/src/app/", pathNot: SPECS },
      to: { path: "^services/$1/src/adapters/" },
    },
    {
      name: "app-imports-io-library",
      comment: "The application layer sees the world through its ports: no database, bus, RPC or HTTP library (the adapters map their errors).",
      severity: "error",
      from: { path: "^services/[^/]+/src/app/", pathNot: SPECS },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"],
        path: `(^|/)node_modules/(${IO_LIBRARIES.join("|")})/`,
      },
    },
    {
      name: "app-calls-store",
      comment:
        "The gateway's, tool-exec's and policy's application layers reach PostgreSQL through the stores they declare (app/ports.ts and " +
        "the like), implemented in adapters/pg over @steward/store; they may name the store's record types. The runner's application " +
        "layer appends through the event-store port it declares (app/run-streams.ts) and still calls the store's lease, admission and " +
        "query functions.",
      severity: "error",
      from: { path: "^services/(gateway|tool-exec|policy)/src/app/", pathNot: SPECS },
      to: { path: "^packages/store/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "domain-imports-outer-layer",
      comment: "The domain is pure: it imports neither the application layer nor an adapter.",
      severity: "error",
      from: { path: "^services/([^/]+)/src/domain/", pathNot: SPECS },
      to: { path: "^services/$1/src/(app|adapters)/" },
    },
    {
      name: "domain-imports-io-library",
      comment: "The domain is pure: no database, bus, RPC or HTTP library.",
      severity: "error",
      from: { path: "^services/[^/]+/src/domain/", pathNot: SPECS },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"],
        path: `(^|/)node_modules/(${IO_LIBRARIES.join("|")})/`,
      },
    },
    {
      name: "domain-imports-node-io",
      comment: "The domain is pure: no Node module that reaches files, sockets or processes.",
      severity: "error",
      from: { path: "^services/[^/]+/src/domain/", pathNot: SPECS },
      to: { dependencyTypes: ["core"], path: "^(node:)?(fs|fs/promises|net|http|https|http2|dgram|child_process|cluster|tls|dns|worker_threads)$" },
    },
    {
      name: "service-imports-service",
      comment: "A service never imports another service's code: what two services share belongs in a package.",
      severity: "error",
      from: { path: "^services/([^/]+)/" },
      to: { path: "^services/", pathNot: "^services/$1/" },
    },
    {
      name: "package-imports-service",
      comment: "Packages are the floor the services and the clients stand on: they never import either.",
      severity: "error",
      from: { path: "^packages/" },
      to: { path: "^(services|apps)/" },
    },
    {
      name: "client-imports-service",
      comment: "The clients (apps/: the CLI, the console) speak to the services through the public API only.",
      severity: "error",
      from: { path: "^apps/" },
      to: { path: "^services/" },
    },
    {
      name: "no-circular",
      comment: "Modules that import each other, directly or around a loop, cannot be understood (or tested) one at a time.",
      severity: "error",
      from: { path: "^(services|packages|apps)/", pathNot: SPECS },
      to: { circular: true, viaOnly: { pathNot: SPECS } },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(dist|coverage)/|/generated/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"], mainFields: ["main", "types"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
