import { defineConfig } from "vitest/config";

// Suites: fast unit tests (msw replay, no processes), e2e tests that start the real opencode 1.x
// binary with the scripted model, and e2e-v2 against a real opencode 2.x server (built once from
// test/fixtures/opencode-2x/, or OPENCODE2_BIN). e2e files run two at a time: the machines have 2 cores.
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
      {
        test: {
          name: "e2e-v2",
          include: ["test/e2e-v2/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts", "test/support/global-setup-v2.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
