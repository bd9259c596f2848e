// The spec → generated folder pairs `npm run codegen` and `codegen:check` cover by default: opencode
// 1.x (the v1 API) into generated/, and 2.x (the v2 API under /api) into generated/v2/.
// The 2.x types come from the released 2.0.26 document, the version users run; the runnable
// pre-release snapshot in spec/v2-b622626/ (what the test suite's 2.x server serves) is only read at
// run time and by spec:diff, because the v2 route adapter resolves operations from the connected
// server's own document anyway.
export interface CodegenTarget {
  spec: string;
  out: string;
}

export const DEFAULT_TARGETS: readonly CodegenTarget[] = [
  { spec: "spec/openapi.json", out: "generated" },
  { spec: "spec/v2/openapi.json", out: "generated/v2" },
];

/** `--spec`/`--out` given: that one pair (either defaults to the 1.x one); else every default. */
export function targetsFrom(spec: string | undefined, out: string | undefined): CodegenTarget[] {
  if (spec === undefined && out === undefined) return [...DEFAULT_TARGETS];
  return [{ spec: spec ?? DEFAULT_TARGETS[0]!.spec, out: out ?? DEFAULT_TARGETS[0]!.out }];
}
