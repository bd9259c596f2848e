// How fast delegate() notices the end of a turn, and how well parallel() uses opencode's parallel
// sessions. Starts the test harness (real opencode + scripted model), prints figures, removes all.
//   1. latency: from the scripted model's last byte (`endedAt`) to delegate() returning, median of
//      RUNS text turns (target < 50 ms); split at the `session.idle` event to show opencode's share.
//   2. parallel: wall time of 12 delegations of a 300 ms turn at once against one (target < 1.5x),
//      next to the same with bare opencode calls (create, prompt_async, session.idle), which is
//      what opencode itself manages on this machine.
//   3. the same latency on opencode 2.x (the v2 engine; the split is at its outcome event,
//      `session.execution.succeeded`), against the 2.x test server (built once, see test/support/opencode2.ts).
// Run: npx tsx bench/turn-latency.ts [--v1-only]
import { Conductor } from "../src/core/conductor.js";
import { startOpencode, type TestOpencode } from "../test/support/opencode.js";
import { startOpencode2 } from "../test/support/opencode2.js";
import { text, times } from "../test/support/scripted-model.js";

const RUNS = 10;
const TURN_MS = 300;
const WIDTH = 12;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ms = (x: number) => `${Math.round(x)} ms`;

const oc = await startOpencode();
const conductor = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory });
try {
  // When each session's first idle event (status idle, then session.idle) arrived, to split the
  // latency into opencode's part and ours.
  const idleAt = new Map<string, number>();
  const onIdle = new Map<string, () => void>();
  const stopListening = await conductor.hub.subscribe((e) => {
    const idle = e.type === "session.idle" || (e.type === "session.status" && e.properties.status.type === "idle");
    if (!idle || idleAt.has(e.properties.sessionID)) return;
    idleAt.set(e.properties.sessionID, Date.now());
    onIdle.get(e.properties.sessionID)?.();
  });

  await latency(oc, conductor, idleAt, "opencode 1.x (v1 engine)");

  const bare = async () => {
    const { id } = await conductor.client.call("session.create", { body: { title: "bare" } });
    const idle = new Promise<void>((resolve) => onIdle.set(id, resolve));
    const parts = [{ type: "text" as const, text: "bare" }];
    await conductor.client.call("session.prompt_async", { path: { sessionID: id }, body: { model: { providerID: "fake", modelID: "scripted" }, parts } });
    await idle;
  };
  const viaConductor = async () => {
    await conductor.delegate({ task: "one", title: "single" });
  };
  const allDone = (b: { counts: Record<string, number> }) => {
    if (b.counts.done !== WIDTH) throw new Error(`parallel: ${JSON.stringify(b.counts)}`);
  };
  const timed = async (run: () => Promise<unknown>) => {
    const t0 = Date.now();
    await run();
    return Date.now() - t0;
  };
  const turns = (n: number) => oc.model.queue(times(n, text("ok", { delayMs: TURN_MS })));
  const rows: Array<[string, () => Promise<void>, () => Promise<unknown>]> = [
    [
      "conductor",
      viaConductor,
      () => conductor.parallel(Array.from({ length: WIDTH }, (_, i) => ({ task: `task ${i}`, title: `parallel ${i}` }))).then(allDone),
    ],
    ["bare opencode", bare, () => Promise.all(Array.from({ length: WIDTH }, bare))],
  ];
  console.log(`parallel, ${WIDTH} turns of ${TURN_MS} ms at once against one (median of 3 each):`);
  for (const [name, one, many] of rows) {
    const singles: number[] = [];
    const batches: number[] = [];
    for (let i = 0; i < 3; i++) {
      turns(1);
      singles.push(await timed(one));
      turns(WIDTH);
      batches.push(await timed(many));
    }
    const ratio = median(batches) / median(singles);
    console.log(
      `  ${name.padEnd(13)} one ${ms(median(singles))}, ${WIDTH} at once ${ms(median(batches))}: ${ratio.toFixed(2)}x${name === "conductor" ? "; target < 1.5x" : ""}`,
    );
  }
  stopListening();
} finally {
  conductor.close();
  await oc.stop();
}

/** Median time from the model's last byte to delegate() returning, split at the turn's end event. */
async function latency(server: TestOpencode, c: Conductor, endAt: Map<string, number>, label: string): Promise<void> {
  server.model.queue(times(3, text("warm")));
  for (let i = 0; i < 3; i++) await c.delegate({ task: "warm up", title: "warm" });
  const total: number[] = [];
  const own: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    server.model.queue(text(`answer ${i}`));
    const r = await c.delegate({ task: `question ${i}`, title: `latency ${i}` });
    const returned = Date.now();
    const ended = server.model.lastRequest({ sessionId: r.sessionId })?.endedAt;
    if (r.status !== "done" || ended === undefined) throw new Error(`run ${i}: ${r.status}, model end ${ended}`);
    total.push(returned - ended);
    own.push((endAt.get(r.sessionId) ?? returned) - ended);
  }
  console.log(`latency on ${label}, model's last byte -> delegate() returned, ${RUNS} runs:`);
  console.log(`  median ${ms(median(total))} (min ${ms(Math.min(...total))}, max ${ms(Math.max(...total))}); target < 50 ms`);
  console.log(
    `  of which opencode (last byte -> end event) median ${ms(median(own))}, conductor (end event -> return) median ${ms(median(total.map((t, i) => t - own[i]!)))}`,
  );
}

if (!process.argv.includes("--v1-only")) {
  const oc2 = await startOpencode2();
  const c2 = new Conductor({ url: oc2.url, password: oc2.password, directory: oc2.directory });
  try {
    // The end event on 2.x: the execution's outcome.
    const outcomeAt = new Map<string, number>();
    const stop = await c2.hub.subscribe((e) => {
      if (e.type !== "v2.event" || !e.properties.type.startsWith("session.execution.") || e.properties.type === "session.execution.started") return;
      const id = e.properties.data.sessionID;
      if (typeof id === "string" && !outcomeAt.has(id)) outcomeAt.set(id, Date.now());
    });
    await latency(oc2, c2, outcomeAt, `opencode ${(await c2.engine.info()).version} (v2 engine)`);
    stop();
  } finally {
    c2.close();
    await oc2.stop();
  }
}
