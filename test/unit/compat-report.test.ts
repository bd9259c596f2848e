// The compatibility data's rules (supported range, verdicts, "oldest tested release that has it")
// and the runner's reading of vitest's JSON report, on small hand-made data sets.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  compareVersions,
  firstTestedWith,
  fullyPassed,
  rangeVerdict,
  supportedRange,
  type CompatibilityData,
  type VersionRecord,
} from "../../src/core/engine/server/compatibility.js";
import { failureReason, featureResults, merge, renderMarkdown } from "../compat/report.js";

const record = (results: VersionRecord["results"], missing: string[] = []): VersionRecord => ({
  reported: "x",
  ranAt: "2026-12-01T00:00:00.000Z",
  seconds: 10,
  node: "v20.20.2",
  results,
  spec: { sha256: "0".repeat(64), operations: 10, missing, extra: [], changed: [] },
});

const data: CompatibilityData = {
  pinned: "1.18.33",
  features: ["delegate: text", "oc_api: v2 operations"],
  versions: {
    "1.3.2": record({ "delegate: text": { ok: false, reason: "boom" }, "oc_api: v2 operations": { ok: true, refused: "refused" } }, [
      "v2.session.get",
      "app.skills",
    ]),
    "1.14.48": record({ "delegate: text": { ok: true }, "oc_api: v2 operations": { ok: true, refused: "refused" } }, ["v2.session.get"]),
    "1.18.3": record({ "delegate: text": { ok: true }, "oc_api: v2 operations": { ok: true } }),
    "1.18.33": record({ "delegate: text": { ok: true }, "oc_api: v2 operations": { ok: true } }),
  },
};

describe("compatibility data", () => {
  it("orders versions numerically, names last", () => {
    expect(["1.18.20", "2.x", "1.18.3", "1.3.2"].sort(compareVersions)).toEqual(["1.3.2", "1.18.3", "1.18.20", "2.x"]);
  });

  it("a refused oc_api row keeps a release in the range; a failed feature does not", () => {
    expect(fullyPassed("1.14.48", data)).toBe(true);
    expect(fullyPassed("1.3.2", data)).toBe(false);
    expect(supportedRange(data)).toEqual({ oldest: "1.14.48", newest: "1.18.33" });
  });

  it("verdicts: tested, inside, older, newer", () => {
    expect(rangeVerdict("1.18.3", data)).toBe("tested: every feature works");
    expect(rangeVerdict("1.3.2", data)).toBe("tested: 1 of 2 features do not work (delegate: text)");
    expect(rangeVerdict("1.17.0", data)).toBe("inside the tested range (1.14.48 … 1.18.33), not itself tested");
    expect(rangeVerdict("1.1.0", data)).toMatch(/^older than the tested range/);
    expect(rangeVerdict("1.19.0", data)).toMatch(/^newer than the tested range/);
  });

  it("names the oldest tested release that has an operation", () => {
    expect(firstTestedWith("v2.session.get", data)).toBe("1.18.3");
    expect(firstTestedWith("app.skills", data)).toBe("1.14.48");
    expect(firstTestedWith("session.list", data)).toBe("1.3.2");
    expect(firstTestedWith("x", { ...data, versions: {} })).toBeUndefined();
  });

  // The 2.x column is measured against the 2.x pin (spec/v2/): it says nothing of 1.x operations.
  const with2x: CompatibilityData = {
    ...data,
    versions: {
      ...data.versions,
      "2.x": { ...record({ "delegate: text": { ok: true }, "oc_api: v2 operations": { ok: true } }), reported: "2.0.0-src.b622626" },
    },
  };
  with2x.versions["2.x"]!.spec!.pinned = "2.0.26";

  it("a 2.x column: its verdict by the version it reported; it never counts as the first 1.x release with an operation", () => {
    expect(rangeVerdict("2.0.0-src.b622626", with2x)).toBe("tested: every feature works");
    expect(rangeVerdict("2.0.26", with2x)).toBe(
      "an untested opencode 2.x release (the matrix tested 2.x on 2.0.0-src.b622626); the tested range counts 1.x releases only",
    );
    expect(supportedRange(with2x)).toEqual({ oldest: "1.14.48", newest: "1.18.33" });
    expect(firstTestedWith("app.skills", with2x)).toBe("1.14.48");
    expect(firstTestedWith("only.in.the.2x.pin", { ...with2x, versions: { "2.x": with2x.versions["2.x"]! } })).toBeUndefined();
  });
});

describe("the runner's report", () => {
  it("docs/compatibility.md is what spec/compatibility.json and docs/compatibility-majors.md render to (else `npm run test:compat -- --render`)", () => {
    const recorded = JSON.parse(readFileSync("spec/compatibility.json", "utf8")) as CompatibilityData;
    expect(readFileSync("docs/compatibility.md", "utf8") === renderMarkdown(recorded)).toBe(true);
  });

  it("keeps the first line of a failure, without colours, at most 200 characters", () => {
    expect(failureReason(["\x1b[31mAssertionError: expected 1 to be 2\x1b[39m\n   at x"])).toBe("expected 1 to be 2");
    expect(failureReason([`Error: ${"y".repeat(500)}`])).toHaveLength(200);
  });

  it("reads one target's rows from vitest's JSON, with the refusals the test noted", () => {
    const report = {
      testResults: [
        {
          assertionResults: [
            { ancestorTitles: ["opencode 1.14.48"], title: "connect", status: "passed" },
            { ancestorTitles: ["opencode 1.14.48"], title: "oc_api: v2 operations", status: "passed" },
            { ancestorTitles: ["opencode 1.14.48"], title: "interrupt", status: "failed", failureMessages: ["Error: late"] },
            { ancestorTitles: ["opencode 1.18.33"], title: "connect", status: "passed" },
          ],
        },
      ],
    };
    expect(featureResults(report, "1.14.48", { "oc_api: v2 operations": "refused: x" })).toEqual({
      features: ["connect", "oc_api: v2 operations", "interrupt"],
      results: { connect: { ok: true }, "oc_api: v2 operations": { ok: true, refused: "refused: x" }, interrupt: { ok: false, reason: "late" } },
    });
  });

  it("merges a run in version order and renders the supported range and cells", () => {
    const merged = merge(data, "1.15.13", record({ "delegate: text": { ok: true }, "oc_api: v2 operations": { ok: true } }), data.features);
    expect(Object.keys(merged.versions)).toEqual(["1.3.2", "1.14.48", "1.15.13", "1.18.3", "1.18.33"]);
    const md = renderMarkdown(merged);
    expect(md).toContain("**Supported range: opencode 1.14.48 … 1.18.33**");
    expect(md).toContain("| delegate: text | **fail**: boom | pass | pass | pass | pass |");
    expect(md).toContain("n/a (refused)");
  });

  it("names the commit each column was measured on, and says when a run kept none", () => {
    const measured = merge(data, "1.15.13", { ...record({ "delegate: text": { ok: true } }), commit: "0123456789ab" }, data.features);
    expect(renderMarkdown(measured)).toContain(
      "| measured at | before commits were kept (2026-12-01) | before commits were kept (2026-12-01) | `0123456789ab` (2026-12-01) | before commits were kept (2026-12-01) | before commits were kept (2026-12-01) |",
    );
  });
});
