// How a benchmark with a time target ends. Run by hand, a missed target exits 1 (the figure is the
// point of the run). Run by CI's smoke run (scripts/bench-smoke.sh sets BENCH_SMOKE=1), which only
// proves each benchmark works and ends by itself on a small size and a machine whose load it does
// not control, a missed time target is printed and the exit stays 0; a crash or a hang still fails.

/** Ends the run as the targets say: `missed` lists what was over its target (empty: all within). */
export function timingVerdict(missed: readonly string[]): void {
  if (missed.length === 0) return;
  if (process.env.BENCH_SMOKE === "1") {
    console.log(`(smoke run: time targets are printed, not judged: ${missed.join("; ")})`);
    return;
  }
  process.exitCode = 1;
}
