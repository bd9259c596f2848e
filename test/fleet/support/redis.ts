// A real redis-server (Debian's `redis-server`) for the fleet tests: a free loopback port, a temp
// dir, AOF on (appendfsync always, so a restart keeps every acknowledged write), no RDB snapshots.
// restart() shuts it down cleanly and starts it again on the same port and data.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../src/client/spawn.js";
import { registerPid, unregisterPid } from "../../support/registry.js";

export interface TestRedis {
  url: string;
  port: number;
  dir: string;
  /** SHUTDOWN (AOF flushed), then start again on the same port and data dir. */
  restart(): Promise<void>;
  /** SHUTDOWN (AOF flushed) and stay down until up(): an outage. */
  down(): Promise<void>;
  /** Start again after down(), on the same port and data. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export function redisServerPath(): string {
  const found = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).stdout.trim();
  if (!found)
    throw new Error(
      "redis-server is not installed: the fleet tests need a real Redis. Install it: apt-get install -y redis-server (scripts/test-prereqs.sh does so when run as root).",
    );
  return found;
}

export async function startRedis(): Promise<TestRedis> {
  const binary = redisServerPath();
  const dir = await mkdtemp(join(tmpdir(), "occ-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--save",
      "",
      "--protected-mode",
      "yes",
      "--logfile",
      join(dir, "redis.log"),
    ];
    const c = spawn(binary, args, { stdio: "ignore" });
    child = c;
    registerPid(c.pid!, "redis-server", dir);
    // Ready once it answers PING (redis-cli ships with the package).
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ping = spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" });
      if (ping.stdout.trim() === "PONG") return;
      if (c.exitCode !== null) throw new Error(`redis-server exited (${c.exitCode}); see ${join(dir, "redis.log")}`);
      if (Date.now() > deadline) throw new Error("redis-server did not answer PING within 20 s");
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const halt = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    spawnSync("redis-cli", ["-p", String(port), "shutdown"], { encoding: "utf8" });
    const timer = setTimeout(() => c.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    unregisterPid(c.pid!);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async restart() {
      await halt();
      await launch();
    },
    down: halt,
    up: launch,
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
