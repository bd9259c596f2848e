// Compile-time contract of `call`: checked by `tsc --noEmit` (CI) and by vitest's expectTypeOf.
import { describe, expectTypeOf, it } from "vitest";
import { connect, type CallResult, type Schemas } from "../../../src/client/index.js";

const client = connect({ url: "http://127.0.0.1:1", fetch: async () => new Response("{}", { headers: { "content-type": "application/json" } }) });

describe("typed call", () => {
  it("types results from the spec", () => {
    expectTypeOf<CallResult<"session.get">>().toEqualTypeOf<Schemas["Session"]>();
    expectTypeOf<CallResult<"session.list">>().toEqualTypeOf<Schemas["Session"][]>();
    expectTypeOf<CallResult<"session.prompt_async">>().toEqualTypeOf<undefined>();
    expectTypeOf(client.call("global.health")).resolves.toHaveProperty("version");
  });

  it("rejects wrong ids and params at compile time", () => {
    const never = false as boolean;
    if (never) {
      // @ts-expect-error unknown operation id
      void client.call("session.nope");
      // @ts-expect-error sessionID is required
      void client.call("session.get", {});
      // @ts-expect-error wrong path parameter name
      void client.call("session.get", { path: { id: "ses_1" } });
      // @ts-expect-error parts must be an array of parts
      void client.call("session.prompt_async", { path: { sessionID: "ses_1" }, body: { parts: "hi" } });
      // @ts-expect-error reply must be once | always | reject
      void client.call("permission.reply", { path: { requestID: "per_1" }, body: { reply: "maybe" } });
      // @ts-expect-error vcs.diff requires the mode query parameter
      void client.call("vcs.diff", { query: {} });
      // Valid calls compile:
      void client.call("session.list", { query: { limit: 5 } });
      void client.call("session.create", { body: { title: "t" } });
      void client.call("session.create");
      void client.call("vcs.diff", { query: { mode: "git" } });
    }
  });
});
