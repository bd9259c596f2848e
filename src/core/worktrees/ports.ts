// CONDUCTOR_PORT for a worktree task: a port its dev server can bind, that nothing else here will
// take meanwhile. A port the OS hands out for "any free port" (bind to 0) would not do: it comes
// back from the ephemeral range, where the next bind to 0 (an opencode server the conductor starts,
// any outgoing connection) may get the same one. So it is chosen below that range, checked free on
// every interface, and kept out of other tasks' hands by the caller.
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";

/** Where task ports are drawn from when the ephemeral range cannot be read (Linux's default starts at 32768). */
const LOW = 20_000;
const DEFAULT_EPHEMERAL_START = 32_768;

/** A free port below the ephemeral range that `claim` accepts (it says false for one already held, and holds it otherwise). */
export async function taskPort(claim: (port: number) => boolean): Promise<number> {
  const high = await ephemeralStart();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (high - LOW));
    // Checked free first, claimed after: the claim is synchronous, so two tasks never get one port.
    if ((await isFree(port)) && claim(port)) return port;
  }
  throw new Error(`No free port found between ${LOW} and ${high} for CONDUCTOR_PORT after 200 tries.`);
}

async function ephemeralStart(): Promise<number> {
  const text = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "");
  const start = Number(text.trim().split(/\s+/)[0]);
  return Number.isInteger(start) && start > LOW + 1000 ? start : DEFAULT_EPHEMERAL_START;
}

/** Nothing listens on the port, on any interface (a dev server may bind all of them). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
