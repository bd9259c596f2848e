// What the compatibility matrix (`npm run test:compat`, docs/compatibility.md) found, as data the
// code uses at run time: which releases were tested, which features passed on each, and which of
// the pinned spec's operations each release lacks. Feature detection names "the first tested
// release that has it" from here; the runner rewrites spec/compatibility.json.
import data from "../../../../spec/compatibility.json" with { type: "json" };

export interface FeatureResult {
  ok: boolean;
  /** Why it failed (first line of the failure, at most ~200 characters). */
  reason?: string;
  /** Set when the row passed by refusing clearly: the release lacks the feature. */
  refused?: string;
}

export interface VersionRecord {
  /** Version `/global/health` reported. */
  reported: string;
  ranAt: string;
  /** The conductor's commit the run measured (`-dirty` when the tree had changes); absent in runs before it was kept. */
  commit?: string;
  /** Wall time of the version's run (server start, every feature, stop). */
  seconds: number;
  node: string;
  results: Record<string, FeatureResult>;
  spec: {
    sha256: string;
    /** The vendored spec it was measured against (unset: the 1.x pin, `CompatibilityData.pinned`). */
    pinned?: string;
    operations: number;
    /** Operations of the pinned spec this release does not have. */
    missing: string[];
    /** Operations this release has that the pinned spec does not. */
    extra: string[];
    /** Operations in both whose request or response differs. */
    changed: string[];
  } | null;
}

export interface CompatibilityData {
  pinned: string;
  /** Feature rows, in matrix order. */
  features: string[];
  versions: Record<string, VersionRecord>;
}

export const compatibility = data as CompatibilityData;

/** `1.18.3` < `1.18.20`; names that are not x.y.z (e.g. `2.x`) sort after them, by name. */
export function compareVersions(a: string, b: string): number {
  const pa = /^(\d+)\.(\d+)\.(\d+)/.exec(a);
  const pb = /^(\d+)\.(\d+)\.(\d+)/.exec(b);
  if (pa && pb) {
    for (let i = 1; i <= 3; i++) {
      const d = Number(pa[i]) - Number(pb[i]);
      if (d !== 0) return d;
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Tested releases, oldest first. */
export function testedVersions(d: CompatibilityData = compatibility): string[] {
  return Object.keys(d.versions).sort(compareVersions);
}

/** Rows that call raw operations (`oc_api`): a release may lack them without leaving the range. */
export const isApiRow = (feature: string) => feature.startsWith("oc_api");

/**
 * True when every feature worked on `version`: passed, or, for the raw `oc_api` rows only, was
 * refused with the clear "this release lacks it" error.
 */
export function fullyPassed(version: string, d: CompatibilityData = compatibility): boolean {
  const record = d.versions[version];
  return record !== undefined && d.features.every((f) => record.results[f]?.ok === true && (!record.results[f]!.refused || isApiRow(f)));
}

/** Oldest and newest release on which every feature worked (see fullyPassed). */
export function supportedRange(d: CompatibilityData = compatibility): { oldest: string; newest: string } | undefined {
  const passing = testedVersions(d).filter((v) => /^\d+\.\d+\.\d+/.test(v) && fullyPassed(v, d));
  return passing.length ? { oldest: passing[0]!, newest: passing.at(-1)! } : undefined;
}

/** Where `version` stands: tested (and how it did), inside the supported range, or outside it. */
export function rangeVerdict(version: string, d: CompatibilityData = compatibility): string {
  const range = supportedRange(d);
  // The 2.x column is named `2.x`; its record holds the version the server reported.
  const record = d.versions[version] ?? Object.values(d.versions).find((r) => r.reported === version);
  if (record) {
    const failed = d.features.filter((f) => record.results[f]?.ok !== true || (record.results[f]!.refused && !isApiRow(f)));
    return failed.length === 0 ? "tested: every feature works" : `tested: ${failed.length} of ${d.features.length} features do not work (${failed.join(", ")})`;
  }
  if (!range) return "untested";
  if (/^2\./.test(version)) {
    const tested = Object.values(d.versions).find((r) => r.reported.startsWith("2."));
    return `an untested opencode 2.x release${tested ? ` (the matrix tested 2.x on ${tested.reported})` : ""}; the tested range counts 1.x releases only`;
  }
  if (compareVersions(version, range.oldest) < 0) return `older than the tested range (${range.oldest} … ${range.newest})`;
  if (compareVersions(version, range.newest) > 0) return `newer than the tested range (${range.oldest} … ${range.newest})`;
  return `inside the tested range (${range.oldest} … ${range.newest}), not itself tested`;
}

/**
 * The oldest tested release that has pinned operation `operationId`: "none" when no tested release
 * has it, undefined when there is no matrix data.
 */
export function firstTestedWith(operationId: string, d: CompatibilityData = compatibility): string | undefined {
  // A 2.x column is measured against the 2.x pin: its `missing` says nothing of 1.x operations.
  const withSpec = testedVersions(d).filter((v) => d.versions[v]?.spec && (d.versions[v]!.spec!.pinned ?? d.pinned) === d.pinned);
  if (withSpec.length === 0) return undefined;
  return withSpec.find((v) => !d.versions[v]!.spec!.missing.includes(operationId)) ?? "none";
}
