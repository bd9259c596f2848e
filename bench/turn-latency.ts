// How fast delegate() notices the end of a turn, and how well parallel() uses opencode's parallel
// sessions. Starts the test harness (real opencode + scripted model), prints figures, removes all.
//   1. latency: from the scripted model's last byte (`endedAt`) to delegate() returning, median of
//      RUNS text turns (target < 50 ms); split at the `session.idle` event to show opencode's share.
//   2. parallel: wall time of 12 delegations of a 300 ms turn at once against one (target < 1.5x),
//      next to the same with bare opencode calls (create, prompt_async, session.idle), which is
//      what opencode itself manages on this machine.
// Run: npx tsx bench/turn-latency.ts
import { Conductor } from "../src/core/conductor.js";
import { startOpencode } from "../test/support/opencode.js";
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

  oc.model.queue(times(3, text("warm")));
  for (let i = 0; i < 3; i++) await conductor.delegate({ task: "warm up", title: "warm" });

  const total: number[] = [];
  const server: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    oc.model.queue(text(`answer ${i}`));
    const r = await conductor.delegate({ task: `question ${i}`, title: `latency ${i}` });
    const returned = Date.now();
    const ended = oc.model.lastRequest({ sessionId: r.sessionId })?.endedAt;
    if (r.status !== "done" || ended === undefined) throw new Error(`run ${i}: ${r.status}, model end ${ended}`);
    total.push(returned - ended);
    server.push((idleAt.get(r.sessionId) ?? returned) - ended);
  }
  console.log(`latency, model's last byte -> delegate() returned, ${RUNS} runs:`);
  console.log(`  median ${ms(median(total))} (min ${ms(Math.min(...total))}, max ${ms(Math.max(...total))}); target < 50 ms`);
  console.log(`  of which opencode (last byte -> idle event) median ${ms(median(server))}, conductor (idle -> return) median ${ms(median(total.map((t, i) => t - server[i]!)))}`);

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
    ["conductor", viaConductor, () => conductor.parallel(Array.from({ length: WIDTH }, (_, i) => ({ task: `task ${i}`, title: `parallel ${i}` }))).then(allDone)],
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
    console.log(`  ${name.padEnd(13)} one ${ms(median(singles))}, ${WIDTH} at once ${ms(median(batches))}: ${ratio.toFixed(2)}x${name === "conductor" ? "; target < 1.5x" : ""}`);
  }
  stopListening();
} finally {
  conductor.close();
  await oc.stop();
}
