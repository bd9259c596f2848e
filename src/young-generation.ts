// V8 grows the young generation (two semi-spaces) up to 16 MB each on 64-bit Node 20 while many
// objects survive scavenges, as 50 tasks in flight make them do, and keeps it there: at the
// 50-way peak of bench:scale its semi-spaces held 32 MB committed for ~10 MB of objects, a quarter
// of the server's RSS (docs/performance.md, "bench:scale"). A smaller young generation costs more
// scavenges: at 4 MB per semi-space the CPU per task was unchanged, at 2 MB it rose ~15 %.
// `node --max-semi-space-size=4` would do it, but only on a command line this process does not own
// (MCP clients run `npx opencode-conductor`, `node dist/cli.js`, an npm bin shim; a shebang takes no
// portable flags). V8 reads the growth factor each time it grows the young generation, so it can
// be switched at run time: after each GC the young generation may double again only while it is
// below the cap. It can still shrink (V8 does so when the server idles) and then grow back to it.
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

/** Semi-space size the young generation grows to and no further (bytes; V8 doubles it from 1 MB). */
export const SEMI_SPACE_CAP = 4 * 2 ** 20;

/** From now on the young generation grows up to SEMI_SPACE_CAP per semi-space and stops there. */
export function capYoungGeneration(): void {
  let growing: boolean | undefined;
  const check = () => {
    const semiSpace = getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size;
    if (semiSpace === undefined) return;
    const grow = semiSpace < SEMI_SPACE_CAP;
    if (grow === growing) return;
    growing = grow;
    setFlagsFromString(grow ? "--semi-space-growth-factor=2" : "--semi-space-growth-factor=1");
  };
  check();
  // One entry per GC, delivered soon after it: a young generation that reached the cap stops there.
  new PerformanceObserver(check).observe({ entryTypes: ["gc"] });
}
