import { defineConfig } from "vitest/config";

// Suites: fast unit tests (msw replay, no processes), e2e tests that start the real opencode 1.x
// binary with the scripted model, e2e-v2 against a real opencode 2.x server (built once from
// test/fixtures/opencode-2x/, or OPENCODE2_BIN), and the real MCP clients. Files run two at a time:
// the machines have 2 cores.
export default defineConfig({
  test: {
    // Once per run, for every project: the run's own HOME, XDG dirs and TMPDIR, and a teardown that
    // fails the run on a leaked server or temp dir and on anything new in the real HOME or /tmp.
    globalSetup: ["test/support/global-setup.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          sequence: { groupOrder: 0 }, // fast feedback first
          // Ceilings, not expectations: other suites share the 2 noisy cores (codegen of the
          // 1 MB spec takes ~1 s alone and far longer under load).
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Unit files share one module graph per worker: loading zod, the SDK and the generated
          // tables once per file was most of the run (each file still gets fresh mocks and msw).
          isolate: false,
          // Two files at once (vitest's default on 2 cores is one): the suite waits as much as it computes.
          maxWorkers: 2,
        },
      },
      {
        // The real client CLIs (Claude Code, Codex, Gemini CLI from npm, in the tool cache) against
        // real opencode; slow (each headless run starts a whole client), so their own project.
        test: {
          name: "clients",
          include: ["test/e2e-clients/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          maxWorkers: 2,
          sequence: { groupOrder: 3 }, // last: after e2e-v2, so at most two files run at once
        },
      },
      {
        test: {
          name: "e2e",
          // opencode/: facts about opencode itself; core/: the library; mcp/: the built MCP server.
          include: ["test/e2e/opencode/**/*.test.ts", "test/e2e/core/**/*.test.ts", "test/e2e/mcp/**/*.test.ts"],
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
          globalSetup: ["test/support/global-setup-v2.ts"],
          // A 2.x build that failed fails each file here with its error; the other projects still run.
          setupFiles: ["test/support/require-opencode2.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
      {
        // The web console in a real headless Chromium (Debian's package, driven by playwright-core)
        // against real opencode (1.x, and 2.x in console-v2) and the MCP server.
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/support/global-setup-v2.ts"],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
          sequence: { groupOrder: 4 }, // beside the compat and fleet projects, one file each
        },
      },
      {
        // The fleet (docs/scaling.md): a real redis-server, two worker processes, two opencode
        // servers and the MCP server per file; one file at a time, beside the compat matrix (one
        // opencode at a time) in the last group, so the two long serial projects overlap.
        test: {
          name: "fleet",
          include: ["test/fleet/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
          sequence: { groupOrder: 4 },
        },
      },
      {
        // The compatibility matrix (test/compat/targets.ts), each column compared with
        // spec/compatibility.json: `npm test` runs the oldest supported and the newest 1.x release,
        // CI every column (OCC_COMPAT_VERSIONS=all); `npm run test:compat` re-measures any list.
        test: {
          name: "compat",
          include: ["test/compat/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 600_000, // the first run installs the release (~150 MB) into the tool cache
          maxWorkers: 1,
          sequence: { groupOrder: 4 },
        },
      },
    ],
  },
});
