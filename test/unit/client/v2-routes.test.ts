// The v2 route adapter resolves every operation the v2 engine needs from a 2.x server's own
// document: the released 2.0.26 and the runnable pre-release b622626 (the suite's 2.x server).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connectV2 } from "../../../src/client/v2/client.js";
import { RouteMissingError, resolveV2Routes, V2_ROUTE_NAMES, V2_ROUTES } from "../../../src/client/v2/routes.js";

const load = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));
const released = resolveV2Routes(load("spec/v2/openapi.json"), "2.0.26");
const snapshot = resolveV2Routes(load("spec/v2-b622626/openapi.json"), "2.0.0-src.b622626");
const route = (routes: typeof released, name: Parameters<typeof released.get>[0]) => {
  const r = routes.get(name);
  return `${r.id} ${r.method.toUpperCase()} ${r.path}`;
};

describe("resolving the v2 engine's operations", () => {
  it("finds every required operation in 2.0.26 and in the pre-release", () => {
    expect(released.missing).toEqual([]);
    expect(snapshot.missing).toEqual([]);
    for (const name of V2_ROUTE_NAMES) {
      const optional = "optional" in V2_ROUTES[name];
      for (const routes of [released, snapshot]) if (!optional) expect(routes.has(name), `${name} in ${routes.serverVersion}`).toBe(true);
    }
  });

  it("knows which optional ones each release lacks", () => {
    expect(released.unavailable).toEqual(["question.list", "question.reply", "question.reject"]);
    expect(snapshot.unavailable).toEqual(["session.diff", "inbox.cancel", "inbox.steer"]);
  });

  it("covers the route differences between the releases", () => {
    expect(route(released, "session.wait")).toBe("experimental.session.wait POST /api/experimental/session/{sessionID}/wait");
    expect(route(snapshot, "session.wait")).toBe("v2.session.wait POST /api/session/{sessionID}/wait");
    expect(route(released, "session.rename")).toBe("session.update PATCH /api/session/{sessionID}");
    expect(route(snapshot, "session.rename")).toBe("v2.session.rename POST /api/session/{sessionID}/rename");
    expect(route(released, "session.revert.clear")).toBe("session.revert.clear DELETE /api/session/{sessionID}/revert");
    expect(route(snapshot, "session.revert.clear")).toBe("v2.session.revert.clear POST /api/session/{sessionID}/revert/clear");
    expect(route(released, "server.info")).toBe("server.info GET /api/info");
    expect(route(snapshot, "server.info")).toBe("v2.health.get GET /api/health");
    expect(route(released, "session.messages")).toBe("session.message.list GET /api/session/{sessionID}/message");
    expect(route(snapshot, "session.messages")).toBe("v2.message.list GET /api/session/{sessionID}/message");
    expect(route(released, "form.cancel")).toBe("session.form.cancel DELETE /api/session/{sessionID}/form/{formID}");
    expect(route(snapshot, "form.cancel")).toBe("v2.session.form.cancel POST /api/session/{sessionID}/form/{formID}/cancel");
    // Pending input: the pre-release's read-only `pending` list is 2.0.26's inbox, which can also cancel and steer.
    expect(route(released, "inbox.list")).toBe("session.inbox.list GET /api/session/{sessionID}/inbox");
    expect(route(snapshot, "inbox.list")).toBe("v2.session.pending.list GET /api/session/{sessionID}/pending");
    expect(route(released, "inbox.cancel")).toBe("session.inbox.cancel DELETE /api/session/{sessionID}/inbox/{inboxID}");
    expect(route(released, "inbox.steer")).toBe("session.inbox.update PATCH /api/session/{sessionID}/inbox/{inboxID}");
    expect(route(released, "session.diff")).toBe("session.diff GET /api/session/{sessionID}/diff");
    for (const routes of [released, snapshot]) {
      expect(routes.get("event.subscribe")).toMatchObject({ path: "/api/event", method: "get", streaming: true });
      expect(routes.get("session.prompt")).toMatchObject({ path: "/api/session/{sessionID}/prompt", method: "post", streaming: false });
    }
  });

  it("tells the request body shapes apart where the releases differ", () => {
    const body = (routes: typeof released, name: Parameters<typeof released.get>[0]) => routes.get(name).bodyProperties;
    expect(body(snapshot, "permission.reply")).toEqual(["reply", "message"]);
    expect(body(released, "permission.reply")).toEqual(["decision", "message"]);
    expect(body(snapshot, "session.fork")).toEqual(["boundary"]);
    expect(body(released, "session.fork")).toEqual(["before"]);
    expect(body(snapshot, "form.reply")).toEqual(["answer"]); // through a $ref to Form.Reply
    expect(body(released, "session.rename")).toEqual(["title", "metadata", "permissions"]);
    expect(body(snapshot, "session.rename")).toEqual(["title"]);
    expect(body(released, "session.wait")).toEqual([]);
    expect(body(released, "inbox.steer")).toEqual(["delivery"]);
    // Per-session rules go on create where the document declares them (2.0.26), never by version.
    expect(body(released, "session.create")).toContain("permissions");
    expect(body(snapshot, "session.create")).not.toContain("permissions");
  });

  it("names the server version and what is missing when a route is called that the server lacks", () => {
    expect(() => released.get("question.reply")).toThrow(RouteMissingError);
    expect(() => released.get("question.reply")).toThrow(
      /^opencode 2\.0\.26 cannot answer a question: its API has no question\.reply operation \(looked for session\.question\.reply, v2\.session\.question\.reply in its \/openapi\.json\)/,
    );
    expect(() => snapshot.get("session.diff")).toThrow(/opencode 2\.0\.0-src\.b622626 cannot read a session's file changes/);
  });

  it("refuses a document that is not OpenAPI, and lists everything missing from an empty one", () => {
    expect(() => resolveV2Routes("<html>", "2.0.1")).toThrow(/no paths: it is not an OpenAPI document of opencode 2\.x/);
    const empty = resolveV2Routes({ paths: {} }, "2.0.1");
    expect(empty.missing).toContain("session.prompt");
    expect(empty.missing).not.toContain("session.diff"); // optional
  });

  it("does not resolve a 1.x document's v1 routes (1.18.33 has some v2.* routes, but not all)", () => {
    const old = resolveV2Routes(load("spec/openapi.json"), "1.18.33");
    expect(old.missing.length).toBeGreaterThan(0);
  });
});

describe("connecting to a 2.x server whose document lacks a required operation", () => {
  it("refuses with an error naming the server's version and the missing operation", async () => {
    const spec = load("spec/v2/openapi.json") as { paths: Record<string, Record<string, { operationId?: string }>> };
    const trimmed = structuredClone(spec);
    for (const item of Object.values(trimmed.paths))
      for (const [method, op] of Object.entries(item)) if (op?.operationId === "session.prompt") delete item[method];
    const identity = { major: 2 as const, version: "2.0.99", via: "/api/info", specPath: "/openapi.json" };
    await expect(connectV2({ url: "http://127.0.0.1:9", identity, spec: trimmed })).rejects.toThrow(
      "opencode 2.0.99 at http://127.0.0.1:9/ lacks operations the conductor needs: session.prompt. Upgrade opencode, or report which 2.x release this is.",
    );
    // The untrimmed document of the same release connects (no request is made before a call).
    await expect(connectV2({ url: "http://127.0.0.1:9", identity, spec })).resolves.toMatchObject({ routes: { missing: [] } });
  });
});
