// The 1.x story of test/e2e/mcp/outcome-unreachable.test.ts on a real opencode 2.x: SIGSTOPped under
// a turn, the waiting tools answer `unreachable` within their timeout plus 2 s with the session id,
// never `lost`; after SIGCONT oc_wait says `done`, as the session re-read from the 2.x server records.
import { connectV2 } from "../../src/client/v2/index.js";
import { startOpencode2, type V2Message } from "../support/opencode2.js";
import { describeStopUnderTurns } from "../support/stopped-under-turn.js";

describeStopUnderTurns(
  "opencode 2.x stopped (SIGSTOP) under a turn",
  () => startOpencode2(),
  async (server, sessionId) => {
    const v2 = await connectV2({ url: server.url, password: server.password });
    const page = (await v2.request("session.messages", { path: { sessionID: sessionId }, query: { order: "asc" } })) as { data: V2Message[] };
    const reply = page.data.findLast((m) => m.type === "assistant");
    const text = (reply?.content ?? []).flatMap((c) => (c.type === "text" && c.text ? [c.text] : [])).join("");
    return { finished: reply?.finish !== undefined && reply.finish !== "error" && !reply.error, text };
  },
);
