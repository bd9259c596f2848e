// The instance registry: atomic 0600 writes in a 0700 dir, locked changes from two writers, stale
// rows (dead conductor) removed and their server stopped only when it really is that opencode.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InstanceRegistry, type InstanceRow } from "../../../src/core/instances/registry.js";
import { ensureStateDir, writeJsonAtomic } from "../../../src/core/state-dir.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "occ-registry-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Above any pid_max (2^22), so never a live process.
const DEAD_PID = 99_999_999;

function row(over: Partial<InstanceRow> = {}): InstanceRow {
  return {
    runtime: "opencode serve",
    sandbox: "none",
    port: 5999,
    pid: 4242,
    conductorPid: process.pid,
    directory: "/tmp/project",
    startedAt: "2026-01-01T00:00:00.000Z",
    password: "s3cret-password-value",
    url: "http://127.0.0.1:5999",
    sessions: [],
    ...over,
  };
}

/** A long-running child (ours, alive) whose argv is `argv0 -e … <args>`. */
function sleeper(argv0: string, args: string[] = []): Promise<ChildProcess> {
  const child = spawn(argv0, ["-e", "process.stdout.write('up'); setInterval(() => {}, 1000)", ...args], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout!.once("data", () => resolve(child));
  });
}

const exitOf = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once("exit", () => resolve()));

describe("state dir and atomic JSON", () => {
  it("creates the dir 0700 and writes 0600 files without leaving temp files", async () => {
    const dir = join(tempDir(), "state", "nested");
    await ensureStateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const file = join(dir, "x.json");
    await writeJsonAtomic(file, { a: 1 });
    await writeJsonAtomic(file, { a: 2 }); // replaces
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: 2 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["x.json"]);
  });

  it("tightens an existing state dir that others could read", async () => {
    const dir = tempDir();
    const { chmodSync } = await import("node:fs");
    chmodSync(dir, 0o755);
    await ensureStateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe("InstanceRegistry", () => {
  it("adds, updates, records sessions and removes rows; the file is 0600 and holds the password", async () => {
    const reg = new InstanceRegistry(tempDir());
    await reg.add(row());
    await reg.addSession(4242, { id: "ses_1", title: "t", model: "fake/scripted", startedAt: "2026-01-01T00:00:01.000Z", fallbacks: [] });
    await reg.updateSession(4242, "ses_1", (s) => ({
      ...s,
      model: "fake/backup",
      fallbacks: [{ from: "fake/scripted", to: "fake/backup", reason: "429", at: "x" }],
    }));
    expect(statSync(reg.path).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(reg.path, "utf8"));
    expect(file.version).toBe(1);
    expect(file.instances[0]).toMatchObject({ pid: 4242, password: "s3cret-password-value", sessions: [{ id: "ses_1", model: "fake/backup" }] });
    expect(await reg.update(4242, { lastUsedAt: "2026-01-01T00:00:02.000Z" })).toMatchObject({ lastUsedAt: "2026-01-01T00:00:02.000Z" });
    expect(await reg.update(1, { port: 1 })).toBeUndefined();
    expect((await reg.remove(4242))?.pid).toBe(4242);
    expect(await reg.read()).toEqual([]);
  });

  it("list() never carries a password", async () => {
    const reg = new InstanceRegistry(tempDir());
    await reg.add(row());
    const listed = await reg.list();
    expect(listed).toHaveLength(1);
    expect(listed[0]).not.toHaveProperty("password");
    expect(JSON.stringify(listed)).not.toContain("s3cret-password-value");
  });

  it("serialises writers: two registries (two conductors) adding at once lose no row", async () => {
    const dir = tempDir();
    const a = new InstanceRegistry(dir);
    const b = new InstanceRegistry(dir);
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).add(row({ pid: 1000 + i }))));
    expect((await a.read()).map((r) => r.pid).sort()).toEqual(Array.from({ length: 40 }, (_, i) => 1000 + i));
    expect(existsSync(`${a.path}.lock`)).toBe(false);
    expect(readdirSync(dir)).toEqual(["instances.json"]);
  });

  it("breaks a lock left by a dead process, and times out on a live holder", async () => {
    const dir = tempDir();
    const reg = new InstanceRegistry(dir, { lockTimeoutMs: 300, staleLockMs: 60_000 });
    await ensureStateDir(dir);
    writeFileSync(`${reg.path}.lock`, `${DEAD_PID} abc`);
    await reg.add(row());
    expect(await reg.read()).toHaveLength(1);

    writeFileSync(`${reg.path}.lock`, `${process.pid} held`); // alive and fresh: not stale
    await expect(reg.add(row({ pid: 2 }))).rejects.toThrow(/Could not lock/);
    rmSync(`${reg.path}.lock`);
    await reg.add(row({ pid: 2 })); // the failed change did not wedge the queue
    expect(await reg.read()).toHaveLength(2);
  });

  it("cleanStale: removes rows of dead conductors and dead instances, keeps live ones, kills only real opencode servers", async () => {
    const dir = tempDir();
    const reg = new InstanceRegistry(dir);
    // A process that looks exactly like an instance: argv[0] named `opencode`, `serve --port 5111`.
    const fakeBin = join(dir, "opencode");
    symlinkSync(process.execPath, fakeBin);
    const orphan = await sleeper(fakeBin, ["serve", "--port", "5111"]);
    const bystander = await sleeper(process.execPath, ["serve", "--port", "5112"]); // not opencode
    const lookalike = await sleeper(fakeBin, ["serve", "--port", "6000"]); // opencode, other port: pid reused

    await reg.add(row({ pid: orphan.pid!, port: 5111, conductorPid: DEAD_PID }));
    await reg.add(row({ pid: bystander.pid!, port: 5112, conductorPid: DEAD_PID }));
    await reg.add(row({ pid: lookalike.pid!, port: 5113, conductorPid: DEAD_PID }));
    await reg.add(row({ pid: DEAD_PID, port: 5114 })); // live conductor (us), dead instance
    await reg.add(row({ pid: process.pid, port: 5115 })); // live conductor and live "instance": kept

    const result = await reg.cleanStale({ graceMs: 10_000 });
    expect(result.killed).toEqual([orphan.pid]);
    expect(result.removed.map((r) => r.port).sort()).toEqual([5111, 5112, 5113, 5114]);
    expect(JSON.stringify(result)).not.toContain("s3cret-password-value");
    await exitOf(orphan);
    expect(orphan.signalCode).toBe("SIGTERM");
    expect(bystander.exitCode === null && bystander.signalCode === null).toBe(true);
    expect(lookalike.exitCode === null && lookalike.signalCode === null).toBe(true);
    expect((await reg.read()).map((r) => r.port)).toEqual([5115]);
  });

  it("treats a reused conductor pid (different start time) as dead", async () => {
    const reg = new InstanceRegistry(tempDir());
    await reg.add(row({ pid: DEAD_PID, conductorPid: process.pid, conductorStartTime: 1 })); // our pid, not our start
    await reg.add(row({ pid: process.pid, port: 1, conductorPid: process.pid, conductorStartTime: 1 }));
    const result = await reg.cleanStale();
    expect(result.removed).toHaveLength(2);
    expect(result.killed).toEqual([]); // process.pid is not opencode: never killed
  });
});
