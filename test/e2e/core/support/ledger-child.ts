// A library user's process for the ledger's restart test: starts one delegation with a state dir
// and a request id, prints its handle as one JSON line once accepted, and stays until killed (the
// test SIGKILLs it mid-turn). Run with tsx: OPENCODE_URL, OPENCODE_PASSWORD, OCC_DIRECTORY,
// OCC_STATE_DIR, OCC_TASK, OCC_REQUEST_ID.
import { Conductor } from "../../../../src/core/conductor.js";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`ledger-child: ${name} is not set`);
  return value;
};

const conductor = new Conductor({
  url: env("OPENCODE_URL"),
  password: env("OPENCODE_PASSWORD"),
  directory: env("OCC_DIRECTORY"),
  stateDir: env("OCC_STATE_DIR"),
  queue: false,
});
const handle = await conductor.delegations.delegate({ task: env("OCC_TASK"), requestId: env("OCC_REQUEST_ID") });
process.stdout.write(`${JSON.stringify({ id: handle.id, sessions: handle.sessions, status: handle.status })}\n`);
// Keep running (following the turn) until the test kills this process.
setInterval(() => undefined, 60_000);
