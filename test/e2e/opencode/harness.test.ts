// The e2e harness itself: the real opencode, offline, answering from the scripted model. Uses
// plain fetch and a hand-rolled `data:` line reader on purpose (the SDK's event stream is tested
// elsewhere); only the harness is under test here.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeProjectDir, startOpencode, type TestOpencode } from "../../support/opencode.js";
import { registryDir, isAlive } from "../../support/registry.js";
import { text } from "../../support/scripted-model.js";

interface GlobalEvent {
  directory?: string;
  payload: { type: string; properties: Record<string, any> };
}

/** Subscribes to GET /global/event; resolves once `server.connected` shows the stream is live. */
async function subscribe(oc: TestOpencode) {
  const abort = new AbortController();
  const res = await fetch(`${oc.url}/global/event`, { headers: { authorization: oc.authorization }, signal: abort.signal });
  expect(res.status).toBe(200);
  const seen: GlobalEvent[] = [];
  const listeners = new Set<() => void>();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(bytes, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data:")) continue;
        seen.push(JSON.parse(line.slice(5)) as GlobalEvent);
        for (const notify of listeners) notify();
      }
    }
  })().catch(() => undefined); // aborted on close()

  const waitFor = (what: string, match: (e: GlobalEvent) => boolean, timeoutMs = 60_000) =>
    new Promise<GlobalEvent>((resolve, reject) => {
      const check = () => {
        const hit = seen.find(match);
        if (!hit) return;
        done();
        resolve(hit);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${timeoutMs} ms; saw ${seen.map((e) => e.payload.type).join(", ")}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  await waitFor("server.connected", (e) => e.payload.type === "server.connected", 30_000);
  return {
    waitFor,
    async close() {
      abort.abort();
      await reading;
    },
  };
}

let oc: TestOpencode | undefined;

function api(path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  return fetch(`${oc!.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: oc!.authorization, "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(30_000),
  });
}

beforeAll(async () => {
  oc = await startOpencode({ gitInit: true, permission: { bash: "ask" } });
});

afterAll(async () => {
  await oc?.stop();
});

describe("e2e harness", () => {
  it("serves the pinned opencode behind basic auth", async () => {
    const health = await api("/global/health");
    expect(await health.json()).toEqual({ healthy: true, version: "1.18.33" });
    const anonymous = await fetch(`${oc!.url}/global/health`, { signal: AbortSignal.timeout(30_000) });
    expect(anonymous.status).toBe(401);
  });

  it("runs a prompt through the scripted model and ends the turn with session.idle", async () => {
    const events = await subscribe(oc!);
    try {
      const created = await api("/session", { method: "POST", body: { title: "t" } });
      expect(created.status).toBe(200);
      const session = (await created.json()) as { id: string; directory: string };
      expect(session.directory).toBe(oc!.directory);

      oc!.model.queue(text("Hello from scripted."));
      const prompted = await api(`/session/${session.id}/prompt_async`, {
        method: "POST",
        body: { model: { providerID: "fake", modelID: "scripted" }, parts: [{ type: "text", text: "hi" }] },
      });
      expect(prompted.status).toBe(204);
      await events.waitFor("session.idle", (e) => e.payload.type === "session.idle" && e.payload.properties.sessionID === session.id);

      const messages = (await (await api(`/session/${session.id}/message`)).json()) as Array<{
        info: { role: string; finish?: string; error?: unknown };
        parts: Array<{ type: string; text?: string }>;
      }>;
      const assistant = messages.filter((m) => m.info.role === "assistant").at(-1);
      expect(assistant?.info).toMatchObject({ finish: "stop" });
      expect(assistant?.info.error).toBeUndefined();
      expect(assistant?.parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual(["Hello from scripted."]);

      // What opencode sent: one chat request for this session (a title was given, so no title request).
      const sent = oc!.model.requestsFor(session.id);
      expect(sent.map((r) => [r.kind, r.step])).toEqual([["chat", 'text("Hello from scripted.")']]);
      expect(sent[0]?.headers["user-agent"]).toMatch(/^opencode\/1\.18\.33 /);
      expect(sent[0]?.body.stream).toBe(true);
      expect(oc!.model.leftovers()).toEqual({});
    } finally {
      await events.close();
    }
  });

  it("applies the offline config, the permission option and gitInit", async () => {
    const config = (await (await api("/config")).json()) as { permission?: unknown; provider?: Record<string, any> };
    expect(config.permission).toEqual({ bash: "ask" });
    expect(config.provider?.fake?.options?.baseURL).toBe(oc!.model.baseURL);
    const providers = (await (await api("/config/providers")).json()) as { providers: Array<{ id: string }> };
    expect(providers.providers.map((p) => p.id)).toEqual(["fake"]);
    expect(await (await api("/vcs")).json()).toMatchObject({ branch: "main" });
  });

  it("makes extra project dirs under the same root", async () => {
    const plain = await makeProjectDir(oc!, "other");
    const git = await makeProjectDir(oc!, "other-git", { gitInit: true });
    expect(plain).toBe(join(oc!.root, "other"));
    expect(existsSync(join(git, ".git"))).toBe(true);
    const current = (await (await api(`/project/current?directory=${encodeURIComponent(git)}`)).json()) as { worktree: string; vcs?: string };
    expect(current).toMatchObject({ worktree: git, vcs: "git" });
    await expect(makeProjectDir(oc!, "../escape")).rejects.toThrow(/plain name/);
  });

  it("stop() leaves no process, no temp root and no registry entry", async () => {
    const { pid, root, model } = oc!;
    expect(existsSync(join(registryDir(), `pid-${pid}.json`))).toBe(true);
    await oc!.stop();
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(root)).toBe(false);
    expect(existsSync(join(registryDir(), `pid-${pid}.json`))).toBe(false);
    await expect(fetch(`${model.baseURL}/models`)).rejects.toThrow(); // the owned model closed too
    await oc!.stop(); // idempotent
  });
});

describe("startOpencode failures", () => {
  it("removes its temp root when serve refuses the config", async () => {
    let error: unknown;
    try {
      const server = await startOpencode({ config: { share: 123 } });
      await server.stop();
    } catch (e) {
      error = e;
    }
    expect(String(error)).toMatch(/exited \(1\) before listening: .*Configuration is invalid/s);
    const root = /(\/\S*occ-test-[^/\s]+)\//.exec(String(error))?.[1];
    expect(root).toBeDefined();
    expect(existsSync(root!)).toBe(false);
  });
});
