// The host side of a sandboxed instance's port: srt gives the server its own network namespace, so
// a loopback listener here relays each connection to the unix socket socat serves inside.
import { connect, createServer, type Server, type Socket } from "node:net";

/** A loopback TCP listener that pipes each connection to `socket` (retrying while socat starts). */
export async function startRelay(socket: string): Promise<{ server: Server; port: number }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    // A peer that hangs up while the sandbox still answers makes the next write fail (EPIPE); that
    // ends this one connection, never the process.
    client.on("error", () => client.destroy());
    // A peer that hangs up while the sandbox still answers makes the next write fail (EPIPE); that
    // ends this one connection, never the process.
    // A peer that hangs up while the sandbox still answers makes the next write fail (EPIPE); that
    // ends this one connection, never the process.
    client.pause();
    const deadline = Date.now() + 3_000;
    const attempt = () => {
      const upstream = connect(socket);
      let connected = false;
      upstream.once("connect", () => {
        connected = true;
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.on("error", () => {
        upstream.destroy();
        if (!connected && Date.now() < deadline && !client.destroyed) setTimeout(attempt, 50);
        else client.destroy();
      });
      client.once("close", () => upstream.destroy());
    };
    attempt();
  });
  server.on("close", () => sockets.forEach((s) => s.destroy()));
  const port = await new Promise<number>((res, rej) => {
    server.once("error", rej);
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      if (a && typeof a === "object") res(a.port);
      else rej(new Error("relay: no port"));
    });
  });
  const close = server.close.bind(server);
  // Closing must not wait for keep-alive connections.
  server.close = ((cb?: (err?: Error) => void) => {
    sockets.forEach((s) => s.destroy());
    return close(cb);
  }) as typeof server.close;
  return { server, port };
}
