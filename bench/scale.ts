// Many tasks at once through the MCP server, against raw opencode in the same run, on each major
// (the pinned 1.x and the 2.x test server, scripted model):
//   1. requests per task: every HTTP request the MCP server sends opencode for one oc_delegate
//      (through a counting proxy; the event stream is not counted), after a warm-up;
//   2. N tasks in flight (default 50): wall time of N oc_delegate calls at once against N raw
//      opencode tasks (create, prompt, wait for the end event: what a hand-written client does) and
//      N through the bare bridge (support/bare-bridge.mjs: the same MCP SDK and fetch doing only
//      create, prompt and wait, the floor any bridge on this stack pays), rounds alternating; each
//      task's time outside opencode (its wall time minus opencode's own, from the prompt reaching
//      opencode to the turn's end event, both seen on an observer's event stream), and where it
//      went (before the first request, between them, after the end); each MCP server's CPU time per
//      task (its main thread apart); our server's resident memory (peak, /proc VmHWM).
// Both MCP servers run pinned to their own core (`taskset -c`, the last core), the rest (opencode,
// the scripted model, this process) on the others, so their figures are their own and not the wait
// for a core behind opencode. Run: npm run bench:scale [-- --tasks N --rounds R --majors 1,2 --turn-ms MS]
import { availableParallelism } from "node:os";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connect } from "../src/client/connect.js";
import { connectV2 } from "../src/client/v2/client.js";
import { startOpencode, type TestOpencode } from "../test/support/opencode.js";
import { startOpencode2 } from "../test/support/opencode2.js";
import { text, times } from "../test/support/scripted-model.js";
import { startCountingProxy, type CountingProxy, type ProxiedRequest } from "./support/counting-proxy.js";
import { startMcpChild, type McpChild } from "./support/mcp-child.js";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" },
    majors: { type: "string", default: "1,2" },
    "turn-ms": { type: "string", default: "300" },
  },
});
const TASKS = Math.max(1, Number(values.tasks) || 50);
const ROUNDS = Math.max(1, Number(values.rounds) || 3);
const TURN_MS = Math.max(0, Number(values["turn-ms"]) || 0);
const MAJORS = values.majors.split(",").map(Number);
const COUNTED_TASKS = 5;
const BARE_BRIDGE = fileURLToPath(new URL("./support/bare-bridge.mjs", import.meta.url));

const cores = availableParallelism();
const MCP_CPUS = cores > 1 ? String(cores - 1) : undefined;
const OTHER_CPUS = cores > 1 ? `0-${cores - 2}` : undefined;

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const median = (xs: number[]) => pct(xs, 50);
const ms = (x: number) => `${Math.round(x)} ms`;
const now = () => performance.timeOrigin + performance.now();

/** Pins a process (all its threads) to some cores; best effort. */
function pin(pid: number, cpus: string | undefined): void {
  if (!cpus) return;
  try {
    execFileSync("taskset", ["-a", "-c", "-p", cpus, String(pid)], { stdio: "ignore" });
  } catch {
    // no taskset: the figures then include waiting for a core
  }
}

/** What opencode said of each session, as an observer of its event stream saw it (epoch ms). */
interface Seen {
  prompted?: number;
  ended?: number;
}

interface Major {
  major: number;
  label: string;
  server: TestOpencode;
  /** Every request to opencode goes through it (the MCP server's, the raw client's, the observer's). */
  proxy: CountingProxy;
  seen: Map<string, Seen>;
  onEnd: Map<string, () => void>;
  raw(title: string): Promise<string>;
  stop(): void;
}

async function openMajor(major: number): Promise<Major> {
  const server = major === 2 ? await startOpencode2() : await startOpencode();
  pin(server.pid, OTHER_CPUS);
  const proxy = await startCountingProxy(server.url);
  const url = proxy.url;
  const seen = new Map<string, Seen>();
  const onEnd = new Map<string, () => void>();
  const entry = (id: string) => seen.get(id) ?? (seen.set(id, {}), seen.get(id)!);
  const ended = (id: string) => {
    const s = entry(id);
    if (s.ended !== undefined || s.prompted === undefined) return;
    s.ended = now();
    onEnd.get(id)?.();
  };
  const controller = new AbortController();
  const auth = { authorization: server.authorization, "content-type": "application/json" };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${url}${path}`, { method: "POST", headers: auth, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response.status === 204 ? undefined : ((await response.json()) as Record<string, unknown>);
  };
  let ready!: () => void;
  const subscribed = new Promise<void>((resolve) => (ready = resolve));
  if (major === 2) {
    const client = await connectV2({ url, password: server.password });
    void (async () => {
      for await (const e of client.events({ signal: controller.signal })) {
        if (e.type === "server.connected") ready();
        const id = (e as { data?: { sessionID?: unknown } }).data?.sessionID;
        if (typeof id !== "string") continue;
        if (e.type === "session.input.admitted") entry(id).prompted ??= now();
        if (e.type.startsWith("session.execution.") && e.type !== "session.execution.started") ended(id);
      }
    })().catch(() => undefined);
    await subscribed;
    const label = `opencode ${client.identity.version}`;
    return {
      major,
      label,
      server,
      proxy,
      seen,
      onEnd,
      async raw(title) {
        const created = (await post("/api/session", { title, model: { id: "scripted", providerID: "fake" } })) as { data: { id: string } };
        const id = created.data.id;
        const end = new Promise<void>((resolve) => onEnd.set(id, resolve));
        await post(`/api/session/${id}/prompt`, { text: title });
        await end;
        return id;
      },
      stop: () => controller.abort(),
    };
  }
  const client = connect({ url, password: server.password, directory: server.directory });
  void (async () => {
    for await (const e of client.events({ signal: controller.signal })) {
      if (e.type === "server.connected") ready();
      if (e.type === "message.updated" && e.properties.info.role === "user") entry(e.properties.info.sessionID).prompted ??= now();
      if (e.type === "session.idle") ended(e.properties.sessionID);
    }
  })().catch(() => undefined);
  await subscribed;
  return {
    major,
    label: "opencode 1.18.33",
    server,
    proxy,
    seen,
    onEnd,
    async raw(title) {
      const created = (await post(`/session?directory=${encodeURIComponent(server.directory)}`, { title })) as { id: string };
      const end = new Promise<void>((resolve) => onEnd.set(created.id, resolve));
      const parts = [{ type: "text", text: title }];
      await post(`/session/${created.id}/prompt_async?directory=${encodeURIComponent(server.directory)}`, {
        model: { providerID: "fake", modelID: "scripted" },
        parts,
      });
      await end;
      return created.id;
    },
    stop: () => controller.abort(),
  };
}

/** Requests the MCP server sends opencode for one oc_delegate, after a warm-up. */
async function requestsPerTask(m: Major): Promise<void> {
  const mcp = await startMcpChild({ ...m.server, url: m.proxy.url });
  try {
    m.server.model.queue(times(2 + COUNTED_TASKS, text("ok")));
    for (let i = 0; i < 2; i++) await mcp.call("oc_delegate", { task: `warm ${i}`, model: "fake/scripted" });
    const counts: number[] = [];
    let shape = "";
    for (let i = 0; i < COUNTED_TASKS; i++) {
      const from = m.proxy.requests.length;
      const r = await mcp.call("oc_delegate", { task: `counted ${i}`, model: "fake/scripted" });
      if (r.data.status !== "done") throw new Error(`counted task ${i}: ${r.data.status}`);
      const calls = m.proxy.calls(from);
      counts.push(calls.length);
      shape = calls.map((c) => `${c.method} ${c.path.replace(/ses_[A-Za-z0-9]+/, "{id}")}`).join(", ");
    }
    console.log(`  requests per task (oc_delegate with a model, ${COUNTED_TASKS} tasks after 2 warm-ups): ${counts.join(", ")}; raw opencode: 2`);
    console.log(`    ${shape}`);
  } finally {
    await mcp.close();
  }
}

/**
 * The part of a task's wall time [t0, t1] when opencode was not working on it: outside its requests
 * (from arrival at the proxy to the answer's end) and outside the turn (from the prompt's arrival to
 * the end event).
 */
function outsideOpencode(t0: number, t1: number, requests: ProxiedRequest[], ended: number): number {
  const prompt = requests.find((r) => /\/prompt(_async)?$/.test(r.path));
  const busy = requests.map((r) => [r.start, r.end ?? t1] as [number, number]);
  if (prompt) busy.push([prompt.start, ended]);
  busy.sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let reach = t0;
  for (const [from, to] of busy) {
    const a = Math.max(from, reach);
    const b = Math.min(to, t1);
    if (b > a) covered += b - a;
    reach = Math.max(reach, to);
  }
  return t1 - t0 - covered;
}

/** What one round of N tasks through an MCP server cost it: CPU, the main thread's part, the kernel's. */
interface Cost {
  cpu: number;
  main: number;
  kernel: number;
  tasks: number;
}

const costOf = (mcp: McpChild) => ({ cpu: mcp.cpuMs(), main: mcp.mainThreadCpuMs(), kernel: mcp.cpuSplit().systemMs, tasks: 0 });
const perTask = (x: number, tasks: number) => (x / tasks).toFixed(1);

/**
 * N tasks at once, raw, through our MCP server and through the bare bridge (the yardstick: the same
 * SDK and fetch, nothing else), ROUNDS times each, alternating.
 */
async function inFlight(m: Major): Promise<void> {
  const servers = {
    bridge: await startMcpChild({ ...m.server, url: m.proxy.url }, { cpus: MCP_CPUS }),
    bare: await startMcpChild({ ...m.server, url: m.proxy.url }, { cpus: MCP_CPUS, script: BARE_BRIDGE, env: { BARE_MAJOR: String(m.major) } }),
  };
  pin(process.pid, OTHER_CPUS);
  const kinds = ["raw", "bridge", "bare"] as const;
  type Kind = (typeof kinds)[number];
  const walls: Record<Kind, number[]> = { raw: [], bridge: [], bare: [] };
  const share: Record<Kind, number[]> = { raw: [], bridge: [], bare: [] };
  /** Where a task's time outside opencode went: before its first request, between, after the end. */
  const parts: Record<Kind, { lead: number[]; gap: number[]; tail: number[] }> = {
    raw: { lead: [], gap: [], tail: [] },
    bridge: { lead: [], gap: [], tail: [] },
    bare: { lead: [], gap: [], tail: [] },
  };
  const costs = { bridge: { cpu: 0, main: 0, kernel: 0, tasks: 0 } as Cost, bare: { cpu: 0, main: 0, kernel: 0, tasks: 0 } as Cost };
  try {
    for (const mcp of Object.values(servers)) {
      m.server.model.queue(times(2, text("warm")));
      for (let i = 0; i < 2; i++) await mcp.call("oc_delegate", { task: `warm ${i}`, model: "fake/scripted" });
    }
    const idle = servers.bridge.memory().rssMb;
    const task = async (kind: Kind, i: number) => {
      const t0 = now();
      let id: string;
      if (kind === "raw") id = await m.raw(`raw ${i}`);
      else {
        const r = await servers[kind].call("oc_delegate", { task: `${kind} ${i}`, model: "fake/scripted" });
        if (r.data.status !== "done") throw new Error(`${kind} task ${i}: ${r.data.status} ${r.text.slice(0, 300)}`);
        id = String(r.data.session_id);
      }
      const t1 = now();
      // The observer's own event stream may bring the end a moment after the MCP server's did.
      if (m.seen.get(id)?.ended === undefined) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 30_000);
          m.onEnd.set(id, () => (clearTimeout(timer), resolve()));
        });
      }
      const ended = m.seen.get(id)?.ended;
      if (ended === undefined) throw new Error(`${kind} ${i}: the observer saw no end of the turn within 30 s of the answer`);
      const requests = m.proxy.calls().filter((r) => r.sessionId === id);
      const outside = outsideOpencode(t0, t1, requests, ended);
      share[kind].push(outside);
      const first = Math.min(...requests.map((r) => r.start));
      const last = Math.max(ended, ...requests.map((r) => r.end ?? t1));
      parts[kind].lead.push(first - t0);
      parts[kind].tail.push(Math.max(0, t1 - last));
      parts[kind].gap.push(outside - (first - t0) - Math.max(0, t1 - last));
      m.onEnd.delete(id);
      m.seen.delete(id);
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of kinds) {
        m.server.model.queue(times(TASKS, text("ok", { delayMs: TURN_MS })));
        const before = kind === "raw" ? undefined : costOf(servers[kind]);
        const t0 = now();
        await Promise.all(Array.from({ length: TASKS }, (_, i) => task(kind, round * TASKS + i)));
        walls[kind].push(now() - t0);
        if (kind !== "raw" && before) {
          const after = costOf(servers[kind]);
          const cost = costs[kind];
          cost.cpu += after.cpu - before.cpu;
          cost.main += after.main - before.main;
          cost.kernel += after.kernel - before.kernel;
          cost.tasks += TASKS;
        }
      }
    }
    const ratio = median(walls.bridge) / median(walls.raw);
    const { peakMb, rssMb } = servers.bridge.memory();
    console.log(
      `  ${TASKS} tasks of ${TURN_MS} ms at once, ${ROUNDS} rounds each (MCP servers on core ${MCP_CPUS ?? "any"}, the rest on ${OTHER_CPUS ?? "any"}):`,
    );
    console.log(
      `    wall: raw opencode ${walls.raw.map(ms).join(" / ")}, through the MCP server ${walls.bridge.map(ms).join(" / ")}: ${ratio.toFixed(2)}x (median); through the bare bridge ${walls.bare.map(ms).join(" / ")}`,
    );
    const spread = (kind: Kind) => `p50 ${ms(median(share[kind]))}, p95 ${ms(pct(share[kind], 95))}`;
    console.log(
      `    per-task time outside opencode (its requests and the turn): through the MCP server ${spread("bridge")}; bare bridge ${spread("bare")}; raw client ${spread("raw")}`,
    );
    const split = (kind: Kind) =>
      `before the first request p50 ${ms(median(parts[kind].lead))}, between its requests ${ms(median(parts[kind].gap))}, after the end ${ms(median(parts[kind].tail))}`;
    console.log(`      of which, through the MCP server: ${split("bridge")}; bare bridge: ${split("bare")}`);
    const cpu = (c: Cost) =>
      `${perTask(c.cpu, c.tasks)} ms per task (main thread ${perTask(c.main, c.tasks)}, other threads ${perTask(c.cpu - c.main, c.tasks)}; kernel ${perTask(c.kernel, c.tasks)})`;
    console.log(`    CPU: the MCP server ${cpu(costs.bridge)}; the bare bridge ${cpu(costs.bare)}`);
    console.log(`    MCP server RSS: idle ${idle.toFixed(0)} MB, peak ${peakMb.toFixed(0)} MB, now ${rssMb.toFixed(0)} MB`);
  } finally {
    await Promise.all(Object.values(servers).map((mcp) => mcp.close()));
  }
}

for (const major of MAJORS) {
  const m = await openMajor(major);
  try {
    console.log(`${m.label}:`);
    await requestsPerTask(m);
    await inFlight(m);
  } finally {
    m.stop();
    await m.proxy.close();
    await m.server.stop();
  }
}
