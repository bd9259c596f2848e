// The recording fetch: what it keeps of each request and response, and that it passes event
// streams through unchanged while recording them one SSE event at a time.
import { describe, expect, it } from "vitest";
import { createRecorder } from "../../support/recording/fetch.js";

const encoder = new TextEncoder();

function sse(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      chunks.forEach((c) => controller.enqueue(encoder.encode(c)));
      controller.close();
    },
  });
}

describe("createRecorder", () => {
  it("records method, path, query, body, status and JSON response; never request headers", async () => {
    const recorder = createRecorder(async () => Response.json({ id: "ses_x" }, { status: 200 }));
    const request = new Request("http://h.invalid/session?directory=%2Fp", {
      method: "POST",
      headers: { authorization: "Basic c2VjcmV0", "content-type": "application/json" },
      body: JSON.stringify({ title: "t" }),
    });
    const response = await recorder.fetch(request);
    expect(await response.json()).toEqual({ id: "ses_x" }); // the caller still gets the body
    expect(recorder.interactions).toEqual([
      {
        operationId: "session.create",
        atMs: expect.any(Number),
        method: "POST",
        path: "/session",
        query: { directory: "/p" },
        requestBody: { title: "t" },
        status: 200,
        contentType: "application/json",
        body: { id: "ses_x" },
      },
    ]);
    expect(JSON.stringify(recorder.interactions)).not.toContain("c2VjcmV0");
  });

  it("records an event stream per event, even when chunks split events, and passes it through", async () => {
    const chunks = ['data: {"payload":{"type":"server.connected"}}\n\n', 'data: {"payload":', '{"type":"session.idle"}}\n\ndata: not json\n\n'];
    const recorder = createRecorder(async () => new Response(sse(chunks), { headers: { "content-type": "text/event-stream" } }));
    const response = await recorder.fetch(new Request("http://h.invalid/global/event"));
    expect(await response.text()).toBe(chunks.join(""));
    const [entry] = recorder.interactions;
    expect(entry).toMatchObject({ operationId: "global.event", status: 200, contentType: "text/event-stream" });
    expect(entry!.events!.map((e) => e.data)).toEqual([{ payload: { type: "server.connected" } }, { payload: { type: "session.idle" } }, "not json"]);
    expect(entry!.body).toBeUndefined();
  });

  it("keeps nothing of a request that got no response", async () => {
    const recorder = createRecorder(async () => {
      throw new TypeError("fetch failed");
    });
    await expect(recorder.fetch(new Request("http://h.invalid/session"))).rejects.toThrow("fetch failed");
    expect(recorder.interactions).toEqual([]);
  });
});
