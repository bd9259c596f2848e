// The sandbox relay: bytes go both ways, and a peer that hangs up while the inside still answers
// ends that connection only (it once ended the process with an uncaught EPIPE).
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startRelay } from "../../../src/core/instances/relay.js";

let dir: string;
let inside: Server;
const insideSockets = new Set<Socket>();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "occ-relay-"));
  // Inside: answers every chunk with a stream of writes that goes on after the peer has gone.
  inside = createServer((s) => {
    insideSockets.add(s);
    s.on("error", () => s.destroy());
    s.on("data", (chunk) => {
      s.write(`echo:${chunk.toString()}`);
      let n = 0;
      const more = setInterval(() => {
        if (s.destroyed || n++ > 40) return clearInterval(more);
        s.write("x".repeat(16_384));
      }, 5);
    });
  });
  await new Promise<void>((r) => inside.listen(join(dir, "s.sock"), r));
});

afterEach(async () => {
  insideSockets.forEach((s) => s.destroy());
  await new Promise<void>((r) => inside.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function open(port: number): Promise<Socket> {
  return new Promise((res, rej) => {
    const c = connect(port, "127.0.0.1", () => res(c));
    c.once("error", rej);
  });
}

it("relays both ways", async () => {
  const relay = await startRelay(join(dir, "s.sock"));
  try {
    const c = await open(relay.port);
    const first = new Promise<string>((r) => c.once("data", (d) => r(d.toString())));
    c.write("ping");
    expect((await first).startsWith("echo:ping")).toBe(true);
    c.destroy();
  } finally {
    await new Promise<void>((r) => relay.server.close(() => r()));
  }
});

it("ends only the connection whose peer socket fails (EPIPE after the peer hung up)", async () => {
  const relay = await startRelay(join(dir, "s.sock"));
  // Node raises a write after the peer's FIN as an error event on the relay's socket for that peer
  // (seen in CI under load); with no listener it was an uncaught exception.
  relay.server.on("connection", (s: Socket) =>
    setImmediate(() => s.emit("error", Object.assign(new Error("This socket has been ended by the other party"), { code: "EPIPE" }))),
  );
  try {
    const c = await open(relay.port);
    const closed = new Promise<void>((r) => c.once("close", () => r()));
    c.on("error", () => {});
    await closed;
  } finally {
    await new Promise<void>((r) => relay.server.close(() => r()));
  }
  const again = await startRelay(join(dir, "s.sock"));
  try {
    const c = await open(again.port);
    const first = new Promise<string>((r) => c.once("data", (d) => r(d.toString())));
    c.write("again");
    expect((await first).startsWith("echo:again")).toBe(true);
    c.destroy();
  } finally {
    await new Promise<void>((r) => again.server.close(() => r()));
  }
});
