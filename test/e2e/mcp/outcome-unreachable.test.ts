// When opencode hangs under a turn (SIGSTOP: alive, answering nothing) instead of dying: the waiting
// tools answer `unreachable` within their timeout plus 2 s, with the session id, never `lost`; after
// SIGCONT the turns finish and oc_wait says `done`, as the session re-read from opencode records.
// The dead-server story (`lost`) is outcome-lost.test.ts. Shared with 2.x: test/support/stopped-under-turn.ts.
import { connect } from "../../../src/client/index.js";
import { startOpencode } from "../../support/opencode.js";
import { describeStopUnderTurns } from "../../support/stopped-under-turn.js";

describeStopUnderTurns("opencode stopped (SIGSTOP) under a turn", startOpencode, async (server, sessionId) => {
  const client = connect({ url: server.url, password: server.password, directory: server.directory });
  const messages = await client.call("session.messages", { path: { sessionID: sessionId } });
  const reply = messages.findLast((m) => m.info.role === "assistant");
  const info = reply?.info.role === "assistant" ? reply.info : undefined;
  const text = (reply?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  return { finished: info?.time.completed !== undefined && !info.error, text };
});
