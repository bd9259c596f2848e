import { defineConfig } from "vitest/config";

// Two suites: fast unit tests (msw replay, no processes) and e2e tests that start the real
// opencode binary with the scripted model. e2e files run two at a time: the machines have 2 cores.
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
        // The compatibility matrix (test/compat/targets.ts): CI runs the oldest supported and the
        // newest 1.x release; `npm run test:compat` runs any list of versions.
        test: {
          name: "compat",
          include: ["test/compat/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 600_000, // the first run installs the release (~150 MB) into the tool cache
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
