// The argument checker's worker thread never keeps a process alive: a script that makes one check
// and returns must exit by itself (`npm run bench:stall` printed its figures and never exited,
// because adding the worker's "message" listener after `unref()` refs it again on Node 20).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

const SCRIPT = `
import { checkOffThread } from "./src/mcp/api/checker.ts";
const op = { id: "session.get", pathParams: null, query: null, body: null, bodyRequired: false };
// The worker itself never holds the process (by design), so a timer stands for the caller's own work.
const busy = setInterval(() => undefined, 1_000);
const checked = await checkOffThread(op, { params: {}, query: {}, body: undefined }, "exit-test");
clearInterval(busy);
console.log("checked", checked.problems.length);
`;

it("a process that made a check exits once its work is done", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", SCRIPT], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  // A ceiling, not a timing: a process held open by the worker never exits at all.
  const ceiling = setTimeout(() => child.kill("SIGKILL"), 50_000);
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  clearTimeout(ceiling);
  expect({ code, signal, out: out.trim() }).toEqual({ code: 0, signal: null, out: "checked 0" });
});
