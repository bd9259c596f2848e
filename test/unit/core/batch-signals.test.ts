// A batch's abort signal and its tasks' waits: each task waits on a signal of its own (task-signal.ts),
// so twelve tasks listening at once leave no listener on the shared signal (Node warned of a leak
// past ten), and a cancel of the batch still reaches every one of them.
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import type { CoreContext } from "../../../src/core/context.js";
import type { DelegateOptions, DelegateResult } from "../../../src/core/delegate.js";
import { parallel } from "../../../src/core/parallel.js";
import { taskSignal } from "../../../src/core/task-signal.js";

const TASKS = 12;
const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
afterEach(() => {
  process.off("warning", onWarning);
  warnings.length = 0;
});

describe("a batch's abort signal", () => {
  it("holds no listener of its twelve waiting tasks, and its abort stops each of them", async () => {
    process.on("warning", onWarning);
    const batch = new AbortController();
    const waiting: AbortSignal[] = [];
    let allWaiting!: () => void;
    const ready = new Promise<void>((resolve) => (allWaiting = resolve));
    // Each task waits as a turn's wait does: it listens for the abort until it wakes.
    const run = async (_ctx: CoreContext, t: DelegateOptions): Promise<DelegateResult> => {
      const signal = t.signal!;
      await new Promise<void>((resolve) => {
        signal.addEventListener("abort", () => resolve(), { once: true });
        waiting.push(signal);
        if (waiting.length === TASKS) allWaiting();
      });
      return { sessionId: `ses_${waiting.indexOf(signal)}`, status: "running", answer: "" } as DelegateResult;
    };
    const tasks = Array.from({ length: TASKS }, (_, i) => ({ task: `task ${i}` }));
    // No caps: parallel() starts no budget, so it asks the context for nothing (the tasks run in `run`).
    const done = parallel({} as CoreContext, tasks, { signal: batch.signal, run });
    await ready;
    expect(new Set(waiting).size).toBe(TASKS);
    expect(getEventListeners(batch.signal, "abort")).toHaveLength(0);
    for (const own of waiting) expect(getEventListeners(own, "abort")).toHaveLength(1);
    batch.abort(new Error("cancelled by the caller"));
    const summary = await done;
    expect(summary.counts).toEqual({ running: TASKS });
    for (const own of waiting) expect((own.reason as Error).message).toBe("cancelled by the caller");
    await new Promise((resolve) => setImmediate(resolve)); // Node emits its warnings on a later tick
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });

  it("a task's signal follows the shared one (already aborted, or later), and there is none without one", () => {
    expect(taskSignal(undefined)).toBeUndefined();
    const early = new AbortController();
    early.abort("gone");
    expect(taskSignal(early.signal)?.aborted).toBe(true);
    const late = new AbortController();
    const own = taskSignal(late.signal)!;
    expect(own.aborted).toBe(false);
    late.abort("later");
    expect([own.aborted, own.reason]).toEqual([true, "later"]);
  });
});
