/** One jest for the whole repository: co-located unit and integration specs, and the multi-service suite in test/. */
const swc = ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "commonjs" } }];

module.exports = {
  testEnvironment: "node",
  transform: { "^.+\\.(t|j)s$": swc },
  moduleNameMapper: { "^@steward/(contract|platform|store|proto|pdp)$": "<rootDir>/packages/$1/src" },
  testMatch: [
    "<rootDir>/packages/*/src/**/*.test.ts",
    "<rootDir>/apps/cli/src/**/*.test.ts",
    "<rootDir>/apps/console/app/**/*.test.ts",
    "<rootDir>/services/*/src/**/*.test.ts",
    "<rootDir>/test/**/*.test.ts",
    "<rootDir>/bench/src/**/*.test.ts",
  ],
  testPathIgnorePatterns: ["/node_modules/", "/dist/"],
  testTimeout: 60_000,
  // Several suites run at once (infra/local/test.mjs), the longest first.
  testSequencer: "<rootDir>/infra/local/jest-sequencer.cjs",
};
