// A stdio MCP server command run through a tap: `node wiretap.mjs LOG COMMAND ARGS...` starts the
// command with the client's stdin and stdout and appends every JSON-RPC line that passes, in order,
// to LOG as `{"at":ms,"from":"client"|"server","message":…}`. The real-client tests launch our
// server through it to read what the client negotiated (nothing in the server knows it is tapped).
// Plain JavaScript: a client runs it with the node it finds, without a TypeScript loader.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import process from "node:process";
import { createInterface } from "node:readline";

// No `--` before the command: a client's own `mcp add … -- COMMAND` would take it for its own.
const [log, command, ...args] = process.argv.slice(2);
if (!log || !command) {
  process.stderr.write("usage: node wiretap.mjs LOG COMMAND [ARGS...]\n");
  process.exit(2);
}
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const record = (from, line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    message = { unparsed: line.slice(0, 2000) };
  }
  appendFileSync(log, `${JSON.stringify({ at: Date.now(), from, message })}\n`, { mode: 0o600 });
};
createInterface({ input: process.stdin }).on("line", (line) => {
  record("client", line);
  child.stdin.write(`${line}\n`);
});
process.stdin.on("end", () => child.stdin.end());
createInterface({ input: child.stdout }).on("line", (line) => {
  record("server", line);
  process.stdout.write(`${line}\n`);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const s of ["SIGTERM", "SIGINT"]) process.on(s, () => child.kill(s));
