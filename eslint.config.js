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
  // The console's page scripts run in the browser.
  { files: ["src/console/static/**/*.js"], languageOptions: { globals: globals.browser } },
);
