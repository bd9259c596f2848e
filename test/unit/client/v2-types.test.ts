// Compile-time contract of the 2.x client's `call`: route names, and argument and result types
// taken from the released 2.0.26 document (generated/v2/). Checked by tsc and expectTypeOf.
import { describe, expectTypeOf, it } from "vitest";
import type { OpencodeV2Client, V2CallArgs, V2CallResult, V2LooseArgs } from "../../../src/client/v2/index.js";

declare const client: OpencodeV2Client;

describe("typed v2 call", () => {
  it("types arguments after 2.0.26, and leaves routes 2.0.26 lacks loose", () => {
    expectTypeOf<V2CallArgs<"session.prompt">["path"]>().toEqualTypeOf<{ sessionID: string }>();
    expectTypeOf<V2CallArgs<"session.prompt">["body"]>().toHaveProperty("text");
    expectTypeOf<V2CallArgs<"permission.reply">["body"]>().toHaveProperty("decision"); // 2.0.26's name
    expectTypeOf<V2CallArgs<"question.reply">>().toEqualTypeOf<V2LooseArgs>(); // pre-release only
    expectTypeOf<V2CallResult<"session.wait">>().toEqualTypeOf<undefined>(); // 204
  });

  it("rejects unknown names and missing path parameters at compile time", () => {
    const never = false as boolean;
    if (never) {
      // @ts-expect-error unknown route name
      void client.call("session.nope");
      // @ts-expect-error sessionID is required
      void client.call("session.get", {});
      // Valid calls compile:
      void client.call("session.get", { path: { sessionID: "ses_1" } });
      void client.call("session.active");
      void client.request("permission.reply", { path: { sessionID: "ses_1", requestID: "per_1" }, body: { reply: "once" } });
    }
  });
});
