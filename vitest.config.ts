import { defineConfig } from "vitest/config";

// Three suites: fast unit tests (msw replay, no processes), e2e tests that start the real opencode
// binary with the scripted model, and the real MCP clients. Files run two at a time: 2 cores.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          sequence: { groupOrder: 0 }, // fast feedback first
          testTimeout: 20_000,
        },
      },
      {
        // The real client CLIs (Claude Code, Codex, Gemini CLI from npm, in the tool cache) against
        // real opencode; slow (each headless run starts a whole client), so their own project.
        test: {
          name: "clients",
          include: ["test/e2e-clients/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
