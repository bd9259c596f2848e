// The worker thread that runs check.ts for oc_api (see checker.ts). Operations are kept per
// spec and id, so compiled validators (cached by schema identity) are reused across calls.
import { parentPort } from "node:worker_threads";
import { check, type CheckedOperation } from "./check.js";

export interface CheckRequest {
  seq: number;
  key: string;
  op: CheckedOperation;
  input: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown };
}

const known = new Map<string, CheckedOperation>();

parentPort?.on("message", (request: CheckRequest) => {
  const id = `${request.key}:${request.op.id}`;
  let op = known.get(id);
  if (!op) known.set(id, (op = request.op));
  try {
    parentPort!.postMessage({ seq: request.seq, checked: check(op, request.input, request.key) });
  } catch (error) {
    parentPort!.postMessage({ seq: request.seq, error: error instanceof Error ? error.message : String(error) });
  }
});
