// ESLint over the TypeScript and the scripts: the recommended rules of ESLint and typescript-eslint (not the
// type-checked set: `npm run typecheck` covers types, and this stays a few seconds), plus the few below.
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["**/dist/", "**/generated/", "**/src/gen/", "**/node_modules/", "coverage/", "bench/results/"]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // `_` marks what is unused on purpose (a parameter a signature needs, a rest sibling that is dropped).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
      // swc compiles each file alone: a type must be imported as a type to be erased.
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      eqeqeq: ["error", "smart"],
      // A service's shutdown closure is written before the handles it stops are assigned: those stay `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      // Input validation matches control characters on purpose (names, texts, headers).
      "no-control-regex": "off",
      // It reads a value set before a try and replaced inside it as unused, though the catch or finally reads it.
      "no-useless-assignment": "off",
    },
  },
  {
    // Specs, their support and the bench read untyped JSON answers and reach into fakes.
    files: ["**/*.test.ts", "**/*.test-support.ts", "test/**", "bench/**", "**/fixtures/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["apps/console/app/**"],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
