// A modest lint: typescript-eslint's recommended rules, no unused code, type-only imports marked
// as such. generated/ is codegen's output and is not linted.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["generated/**", "dist/**", "node_modules/**", "test/fixtures/**", "coverage/**", ".tmp/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", destructuredArrayIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  // The core speaks its own nouns (src/core/model/); only the engine, which maps each opencode major
  // into them, may read opencode's generated schema (docs/architecture.md, "The engine boundary").
  {
    files: ["src/core/**/*.ts"],
    ignores: ["src/core/engine/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["**/generated/**"], message: "Only src/core/engine/ reads generated/: use the core's nouns in src/core/model/." },
            { group: ["**/client/types.js"], message: "Only src/core/engine/ reads opencode's schema types: use the core's nouns in src/core/model/." },
          ],
        },
      ],
    },
  },
  // The engine sits below the turn machine: it speaks the core's nouns (src/core/model/) and never
  // reaches up into turns/, so each major's translation lives wholly in engine/v1/ or engine/v2/.
  {
    files: ["src/core/engine/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/turns/**"], message: "src/core/engine/ does not import turns/: put what both share in src/core/model/." }] },
      ],
    },
  },
  // Benchmark yardsticks and probes run as plain Node scripts.
  { files: ["bench/**/*.mjs"], languageOptions: { globals: globals.node } },
  // The console's page scripts run in the browser.
  { files: ["src/console/static/**/*.js"], languageOptions: { globals: globals.browser } },
);
