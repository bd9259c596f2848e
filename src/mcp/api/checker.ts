// Runs oc_api's argument check (check.ts) in one worker thread, so compiling a large schema
// (up to ~450 ms for config.update) or explaining thousands of errors never stalls the MCP server.
// The worker starts on the first check, does not keep the process alive, and is replaced when a
// check runs past its time limit. From source (tests, tsx) the worker loads through tsx.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { UsageError } from "../../core/errors.js";
import type { Checked, CheckedOperation } from "./check.js";
import type { CheckRequest } from "./check-worker.js";

const TIME_LIMIT_MS = 20_000;

type Pending = { resolve(c: Checked): void; reject(e: Error): void; timer: NodeJS.Timeout };
let worker: Worker | undefined;
let seq = 0;
const pending = new Map<number, Pending>();

function spawnWorker(): Worker {
  const built = new URL("./check-worker.js", import.meta.url);
  const source = new URL("./check-worker.ts", import.meta.url);
  // From source (tsx, vitest) the worker registers tsx itself: a worker started under the tsx CLI
  // does not get its loader from execArgv (tsx 4.23: "Unknown file extension .ts").
  const w = existsSync(fileURLToPath(built))
    ? new Worker(built)
    : new Worker(
        `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => { m.register(); return import(${JSON.stringify(source.href)}); });`,
        { eval: true },
      );
  w.on("message", (m: { seq: number; checked?: Checked; error?: string }) => {
    const p = pending.get(m.seq);
    if (!p) return;
    pending.delete(m.seq);
    clearTimeout(p.timer);
    if (m.checked) p.resolve(m.checked);
    else p.reject(new Error(`checking the arguments failed: ${m.error ?? "unknown error"}`));
  });
  const fail = (error: Error) => {
    if (worker === w) worker = undefined;
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      p.reject(error);
      pending.delete(id);
    }
  };
  w.on("error", (error) => fail(new Error(`the argument checker stopped: ${error.message}`)));
  w.on("exit", () => fail(new Error("the argument checker stopped")));
  // After the listeners: on Node 20 adding a "message" listener refs the worker again, which kept
  // every process that had made one check alive after its work was done.
  w.unref();
  return w;
}

export function checkOffThread(op: CheckedOperation, input: CheckRequest["input"], key: string): Promise<Checked> {
  worker ??= spawnWorker();
  const w = worker;
  const request: CheckRequest = {
    seq: ++seq,
    key,
    op: { id: op.id, pathParams: op.pathParams, query: op.query, body: op.body, bodyRequired: op.bodyRequired },
    input,
  };
  return new Promise<Checked>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(request.seq);
      if (worker === w) worker = undefined;
      void w.terminate(); // its other checks fail with "stopped" and may be retried
      reject(new UsageError(`${op.id}: checking the arguments took more than ${TIME_LIMIT_MS / 1000} s, so nothing was sent. Send a smaller request.`));
    }, TIME_LIMIT_MS);
    timer.unref();
    pending.set(request.seq, { resolve, reject, timer });
    w.postMessage(request);
  });
}
