// The typed client against a real opencode (no model needed): health, sessions, errors, events.
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { useClient } from "../../support/conductor.js";
import { AuthError, ConnectionError, connect, NotFoundError, type OpencodeEvent } from "../../../src/client/index.js";
import { makeProjectDir, startOpencode } from "../../support/opencode.js";

const h = useClient();

describe("client against real opencode", () => {
  it("reads health", async () => {
    expect(await h.client.call("global.health")).toEqual({ healthy: true, version: "1.18.33" });
  });

  it("creates, lists and gets sessions in the client's directory", async () => {
    const created = await h.client.call("session.create", { body: { title: "client test" } });
    expect(created.id).toMatch(/^ses_/);
    expect(created.directory).toBe(h.server.directory);
    const listed = await h.client.call("session.list", { query: { limit: 20 } });
    expect(listed.map((s) => s.id)).toContain(created.id);
    const got = await h.client.call("session.get", { path: { sessionID: created.id } });
    expect(got.title).toBe("client test");
  });

  it("sends directory to another project", async () => {
    const other = await makeProjectDir(h.server, "other");
    const session = await h.client.call("session.create", { body: { title: "elsewhere" } }, { directory: other });
    expect(session.directory).toBe(other);
    const inOther = await h.client.withDirectory(other).call("session.list");
    expect(inOther.map((s) => s.id)).toEqual([session.id]);
  });

  it("gives NotFoundError for a missing session", async () => {
    const error = await h.client.call("session.get", { path: { sessionID: "ses_0000000000000000000000000" } }).catch((e) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.status).toBe(404);
    expect(error.message).toContain("Session not found");
  });

  it("gives AuthError for a wrong password, without the password in it", async () => {
    const wrong = "wrong-" + h.server.password;
    const error = await connect({ url: h.server.url, password: wrong })
      .call("session.list")
      .catch((e) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect(error.status).toBe(401);
    for (const text of [error.message, String(error), inspect(error), JSON.stringify(error)]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(h.server.password);
    }
  });

  // opencode 1.18.33 announces a new session with session.created (not session.updated). It writes
  // server.connected a moment before its bus subscription is live, so a create sent at once can
  // go unseen under load: create again (bounded) until one is announced.
  it("yields server.connected, then session.created after a session.create", async () => {
    const controller = new AbortController();
    const seen: OpencodeEvent["type"][] = [];
    const created = new Set<string>();
    let timer: NodeJS.Timeout | undefined;
    const create = async () => created.add((await h.client.call("session.create", { body: { title: "events" } })).id);
    try {
      for await (const event of h.client.events({ signal: controller.signal })) {
        if (event.type === "conductor.reconnected" || event.type === "conductor.disconnected") continue;
        seen.push(event.type);
        if (event.type === "server.connected" && !timer) {
          await create();
          let tries = 1;
          timer = setInterval(() => (tries++ < 10 ? void create() : controller.abort()), 3_000);
        }
        if (event.type === "session.created" && created.has(event.properties.info.id)) {
          expect(event.directory).toBe(h.server.directory);
          controller.abort();
        }
      }
    } finally {
      clearInterval(timer);
    }
    expect(seen[0]).toBe("server.connected");
    expect(seen).toContain("session.created");
  });
});

describe("client against a stopped server", () => {
  it("gives ConnectionError within the timeout", async () => {
    const doomed = await startOpencode();
    const c = connect({ url: doomed.url, password: doomed.password, timeoutMs: 3_000 });
    expect((await c.call("global.health")).healthy).toBe(true);
    await doomed.stop();
    const started = Date.now();
    const error = await c.call("global.health").catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain(doomed.url);
    expect(Date.now() - started).toBeLessThan(10_000); // a ceiling, not a timing assertion: it must not hang
  });
});
