// A command's reader may stop early (`opencode-conductor --help | head -1`, `npm run spec:diff | head`):
// the next write then fails with EPIPE, which Node raises as an unhandled 'error' event, a stack
// trace and exit 1. A reader that has seen enough is not a failure: end quietly with exit 0 instead.
// Long-running commands (the MCP server, the worker, the console) keep running: their stdout/stderr
// are logs or a one-line handshake their parent may close on purpose, and they stop on their own
// signals (stdin's end, SIGTERM), which also stop what they started.

/** The errors a write to a reader that went away raises. */
const CLOSED = new Set(["EPIPE", "ERR_STREAM_DESTROYED"]);

let onClosed: () => void = () => process.exit(0);
let installed = false;

/** From now on a closed stdout or stderr ends this process with exit 0, without a stack trace. */
export function endQuietlyOnClosedPipe(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (!CLOSED.has(error.code ?? "")) throw error;
      onClosed();
    });
  }
}

/** For a long-running command: a closed stdout or stderr only drops what is written to it. */
export function keepRunningOnClosedPipe(): void {
  endQuietlyOnClosedPipe();
  onClosed = () => undefined;
}
