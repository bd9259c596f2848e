// The first half of the "opencode killed under a turn" story, the same on both majors: an
// oc_delegate call waits on a five-second turn, the test opencode is SIGKILLed once the model has
// the request, and the call must answer within 2 s, `lost`, with the session id and the server's
// URL. Returns the session id; the callers restart the server and compare with its record.
import { expect } from "vitest";
import type { McpSession } from "./mcp-client.js";
import type { TestOpencode } from "./opencode.js";
import { text } from "./scripted-model.js";

export async function killUnderTurn(server: TestOpencode, mcp: McpSession): Promise<string> {
  server.model.queue(text("too late", { delayMs: 5_000 }));
  const earlier = server.model.requests.filter((r) => r.kind === "chat").length;
  const call = mcp.call("oc_delegate", { task: "a five second turn" });
  await server.model.waitForRequests(earlier + 1, { kind: "chat" });
  const killedAt = Date.now();
  await server.kill();
  const result = await call;
  const answeredIn = Date.now() - killedAt;
  expect(result.isError, result.text).toBe(false);
  expect(answeredIn).toBeLessThan(2_000);
  expect(result.data.status).toBe("lost");
  expect(result.data.session_id).toMatch(/^ses_/);
  expect((result.data.error as { message: string }).message).toContain(server.url);
  return result.data.session_id as string;
}
