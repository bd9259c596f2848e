// What the delegation ledger adds to each start in the state dir (the MCP server's case): the
// record's claim with a request id, the session's attach (before the prompt) and the owner's end
// (before the call answers), each a crash-safe write (temp file, fsync, rename). Median and p90
// of 200 starts in a temp dir on this machine's disk, and the CPU all three took per start.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileLedgerStore } from "../src/core/ledger/file-store.js";
import { Ledger } from "../src/core/ledger/ledger.js";

const N = 200;
const dir = mkdtempSync(join(tmpdir(), "occ-bench-ledger-"));
try {
  const ledger = new Ledger(async () => new FileLedgerStore(dir));
  const times: Array<[number, number, number]> = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const a = performance.now();
    const { record } = await ledger.claim({ kind: "delegate", requestId: `bench-${i}`, origin: "bench", placement: "here", size: 1 });
    const b = performance.now();
    await ledger.attach(record.id, 0, `ses_bench${i}`);
    const c = performance.now();
    await ledger.finish(record.id, () => ({ status: "completed", at: new Date().toISOString() }));
    times.push([b - a, performance.now() - c, c - b]);
  }
  const cpu = process.cpuUsage(cpu0);
  const at = (k: 0 | 1 | 2, q: number) => {
    const sorted = times.map((t) => t[k]).sort((x, y) => x - y);
    return sorted[Math.floor(q * (N - 1))]!.toFixed(1);
  };
  for (const [name, k] of [
    ["claim (with a request id)", 0],
    ["attach the session", 2],
    ["settle the end", 1],
  ] as const)
    console.log(`${name.padEnd(26)} median ${at(k, 0.5)} ms  p90 ${at(k, 0.9)} ms`);
  // This process's CPU (the event loop, the thread pool's system calls and the kernel's work for them) per start.
  console.log(
    `CPU per start (all three)  ${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms (${(cpu.system / 1000 / N).toFixed(2)} ms of it in the kernel)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
