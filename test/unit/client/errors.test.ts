import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { AuthError, BadRequestError, ConflictError, ConnectionError, connect, NotFoundError, OpencodeError, ServerError } from "../../../src/client/index.js";

const PASSWORD = "s3cret-Passw0rd";

/** A client whose fetch answers with a fixed response, recording the request it got. */
function clientAnswering(status: number, body: unknown, seen: Request[] = []) {
  return connect({
    url: "http://127.0.0.1:1",
    password: PASSWORD,
    directory: "/work/project",
    fetch: async (request) => {
      seen.push(request);
      const text = body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body);
      return new Response(status === 204 ? null : text, { status, headers: text && typeof body !== "string" ? { "content-type": "application/json" } : {} });
    },
  });
}

function expectNoSecret(error: unknown) {
  const forms = [String(error), (error as Error).message, JSON.stringify(error), inspect(error, { depth: 5 })];
  for (const form of forms) expect(form).not.toContain(PASSWORD);
}

describe("client errors", () => {
  it("maps opencode's v1 400 body to BadRequestError with its own message", async () => {
    const client = clientAnswering(400, { name: "BadRequest", data: { message: 'Missing key\n  at ["parts"]', kind: "Payload" } });
    const error = await client.call("session.prompt_async", { path: { sessionID: "ses_x" }, body: { parts: [] } }).catch((e) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toBeInstanceOf(OpencodeError);
    expect(error.status).toBe(400);
    expect(error.operationId).toBe("session.prompt_async");
    expect(error.message).toContain("Missing key");
    expect(error.serverName).toBe("BadRequest");
    expectNoSecret(error);
  });

  it("maps 404 (v1 and v2 shapes) to NotFoundError", async () => {
    const v1 = await clientAnswering(404, { name: "NotFoundError", data: { message: "Session not found: ses_x" } })
      .call("session.get", { path: { sessionID: "ses_x" } })
      .catch((e) => e);
    expect(v1).toBeInstanceOf(NotFoundError);
    expect(v1.message).toContain("Session not found: ses_x");
    const v2 = await clientAnswering(404, { _tag: "PermissionNotFoundError", message: "Permission request not found: per_1" })
      .call("permission.reply", { path: { requestID: "per_1" }, body: { reply: "once" } })
      .catch((e) => e);
    expect(v2).toBeInstanceOf(NotFoundError);
    expect(v2.serverName).toBe("PermissionNotFoundError");
    expect(v2.message).toContain("Permission request not found");
  });

  it("maps 401 to AuthError without leaking the password", async () => {
    const error = await clientAnswering(401, "")
      .call("global.health")
      .catch((e) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toMatch(/password/i);
    expectNoSecret(error);
  });

  it("maps 5xx to ServerError carrying opencode's ref", async () => {
    const error = await clientAnswering(500, {
      name: "UnknownError",
      data: { message: "Unexpected server error. Check server logs for details.", ref: "err_461c1e16" },
    })
      .call("session.list")
      .catch((e) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error.ref).toBe("err_461c1e16");
    expect(error.message).toContain("err_461c1e16");
  });

  it("maps 409 to ConflictError", async () => {
    const error = await clientAnswering(409, { name: "SessionBusyError", data: { message: "Session ses_x is busy" } })
      .call("session.revert", { path: { sessionID: "ses_x" }, body: { messageID: "msg_1" } })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain("busy");
  });

  it("reports an unreachable server as ConnectionError with the URL and a hint", async () => {
    const client = connect({
      url: `http://opencode:${PASSWORD}@127.0.0.1:1`,
      password: PASSWORD,
      fetch: async () => {
        throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
      },
    });
    const error = await client.call("global.health").catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.reason).toBe("unreachable");
    expect(error.message).toContain("http://127.0.0.1:1");
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.message).toMatch(/opencode serve|OPENCODE_URL/);
    expectNoSecret(error);
  });

  it("times out a request that never answers", async () => {
    const client = connect({
      url: "http://127.0.0.1:1",
      timeoutMs: 50,
      fetch: (request) => new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason))),
    });
    const error = await client.call("global.health").catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.reason).toBe("timeout");
  });

  it("does not expose the password on the client object", () => {
    const client = connect({ url: "http://127.0.0.1:1", password: PASSWORD });
    expect(inspect(client, { depth: 3 })).not.toContain(PASSWORD);
    expect(JSON.stringify({ url: client.url, directory: client.directory })).not.toContain(PASSWORD);
  });
});

describe("client requests", () => {
  it("sends basic auth, the directory query and the typed body", async () => {
    const seen: Request[] = [];
    const client = clientAnswering(200, { id: "ses_1" }, seen);
    await client.call("session.create", { body: { title: "t" } });
    const request = seen[0]!;
    expect(request.method).toBe("POST");
    const url = new URL(request.url);
    expect(url.pathname).toBe("/session");
    expect(url.searchParams.get("directory")).toBe("/work/project");
    expect(request.headers.get("authorization")).toBe(`Basic ${Buffer.from(`opencode:${PASSWORD}`).toString("base64")}`);
    expect(await request.json()).toEqual({ title: "t" });
  });

  it("fills path parameters and lets a call override the directory", async () => {
    const seen: Request[] = [];
    const client = clientAnswering(200, true, seen);
    await client.call("session.abort", { path: { sessionID: "ses_abc" } }, { directory: "/other" });
    const url = new URL(seen[0]!.url);
    expect(url.pathname).toBe("/session/ses_abc/abort");
    expect(url.searchParams.get("directory")).toBe("/other");
  });

  it("answers 204 with undefined", async () => {
    const client = clientAnswering(204, undefined);
    const result = await client.call("session.prompt_async", { path: { sessionID: "ses_1" }, body: { parts: [{ type: "text", text: "hi" }] } });
    expect(result).toBeUndefined();
  });

  it("rejects a malformed URL clearly", () => {
    expect(() => connect({ url: "localhost:4096" })).toThrow(/expected http:\/\/host:port/);
  });
});

describe("non-JSON answers", () => {
  it("reads a text/x-diff answer as text", async () => {
    const client = connect({
      url: "http://127.0.0.1:1",
      fetch: async () => new Response("diff --git a/x b/x\n", { status: 200, headers: { "content-type": "text/x-diff; charset=utf-8" } }),
    });
    expect(await client.call("vcs.diff.raw")).toBe("diff --git a/x b/x\n");
  });

  it("reports a broken JSON body as such, not as an unreachable server", async () => {
    const client = connect({
      url: "http://127.0.0.1:1",
      fetch: async () => new Response("{not json", { status: 200, headers: { "content-type": "application/json" } }),
    });
    const error = await client.call("session.list").catch((e) => e);
    expect(error).toBeInstanceOf(OpencodeError);
    expect(error).not.toBeInstanceOf(ConnectionError);
    expect(error.message).toMatch(/not valid JSON/);
  });
});
