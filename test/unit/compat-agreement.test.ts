// The check CI makes of each compatibility column (test/compat/matrix.test.ts, last test of each
// column: OCC_COMPAT_VERSIONS=all in .ci/run): the run's results against spec/compatibility.json.
// Here on the committed data itself: a run that found what a column says agrees, and an edit of any
// one row of any column (its result flipped, its refusal changed, added or dropped, the row gone) is
// named, so an edited row fails CI.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CompatibilityData, VersionRecord } from "../../src/core/engine/server/compatibility.js";
import { columnDifferences, recordedResults } from "../compat/report.js";

const data = JSON.parse(readFileSync(new URL("../../spec/compatibility.json", import.meta.url), "utf8")) as CompatibilityData;

const edits: Array<[string, (r: VersionRecord["results"][string]) => VersionRecord["results"][string] | undefined]> = [
  ["result flipped", (r) => (r.ok ? { ok: false, reason: "edited" } : { ok: true })],
  ["refusal edited", (r) => (r.refused ? { ...r, refused: `${r.refused} (edited)` } : { ok: true, refused: "refused: edited" })],
  ["refusal dropped or added", (r) => (r.refused ? { ok: true } : { ok: true, refused: "refused: added" })],
  ["row deleted", () => undefined],
];

describe.each(Object.entries(data.versions))("the compatibility column %s", (name, column) => {
  // What a run that found exactly what the column says observed.
  const observed = recordedResults(column);

  it("agrees with a run that found what it says, a failure's reason aside", () => {
    expect(Object.keys(observed)).toEqual(data.features);
    expect(columnDifferences(observed, column)).toEqual([]);
    const reasons = { ...column, results: Object.fromEntries(Object.entries(column.results).map(([k, r]) => [k, r.ok ? r : { ...r, reason: "another" }])) };
    expect(columnDifferences(observed, reasons)).toEqual([]);
  });

  it.each(edits)("an edited row fails it (%s), for every row", (_what, edit) => {
    for (const row of data.features) {
      const edited = edit(column.results[row]!);
      const results = { ...column.results };
      if (edited) results[row] = edited;
      else delete results[row];
      const lines = columnDifferences(observed, { ...column, results });
      expect(lines, row).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^${row.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: this run `));
    }
  });
});
