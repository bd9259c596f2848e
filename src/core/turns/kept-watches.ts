// The turns this process follows, one per session, so later waits, result() and a fallback's next
// attempt find the watch that is running instead of starting a second one.
import type { CoreContext } from "../context.js";
import type { EventSource } from "../event-hub.js";
import type { TurnWatch } from "./watch.js";

const kept = new WeakMap<EventSource, Map<string, TurnWatch>>();

function keptWatches(ctx: CoreContext): Map<string, TurnWatch> {
  let map = kept.get(ctx.hub);
  if (!map) kept.set(ctx.hub, (map = new Map()));
  return map;
}

/** The watch of a turn this process started (or waited on) that is still running, if any. */
export function runningWatch(ctx: CoreContext, sessionId: string): TurnWatch | undefined {
  const watch = keptWatches(ctx).get(sessionId);
  return watch && !watch.settled ? watch : undefined;
}

/** Every turn this process follows that is still running. */
export function runningWatches(ctx: CoreContext): TurnWatch[] {
  return [...keptWatches(ctx).values()].filter((w) => !w.settled);
}

export function keep(ctx: CoreContext, watch: TurnWatch): void {
  const map = keptWatches(ctx);
  if (map.get(watch.sessionId) === watch) return;
  // A newer turn on the session takes the place of an older one, which still ends by itself.
  map.set(watch.sessionId, watch);
  watch.onProgress = undefined; // its caller has moved on
  watch.onSettled(() => {
    if (map.get(watch.sessionId) === watch) map.delete(watch.sessionId);
    watch.close();
  });
}
