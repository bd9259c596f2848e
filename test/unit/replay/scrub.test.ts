// What `npm run record` does to a recording before writing it: secrets and machine paths out,
// ids renamed consistently everywhere, timestamps moved to a fixed epoch, noise dropped.
import { describe, expect, it } from "vitest";
import type { Fixture } from "../../support/fixture.js";
import { FIXED_EPOCH, scrubFixture, type ScrubContext } from "../../support/recording/scrub.js";

const SES = "ses_2282ac6960016K1qJJEx84K6Fj";
const MSG = "msg_2282ac6960017AbCdEfGhIjKlM";
const STARTED = Date.UTC(2026, 10, 29, 12, 0, 0);
const context: ScrubContext = {
  password: "s3cret-pass",
  startedAt: STARTED,
  replace: [
    ["/tmp/occ-test-AbC123/project", "/project"],
    ["/tmp/occ-test-AbC123", "/tmp/occ-test"],
    ["127.0.0.1:40123", "127.0.0.1:5801"],
  ],
};

function raw(): Fixture {
  return {
    scenario: "t",
    opencodeVersion: "1.18.33",
    interactions: [
      {
        operationId: "session.get",
        atMs: 3,
        method: "GET",
        path: `/session/${SES}`,
        query: { directory: "/tmp/occ-test-AbC123/project" },
        status: 200,
        contentType: "application/json",
        body: {
          id: SES,
          slug: "cosmic-moon",
          path: "tmp/occ-test-AbC123/project",
          time: { created: STARTED + 5 },
          url: "http://127.0.0.1:40123/v1",
          big: "x".repeat(5000),
        },
      },
      {
        operationId: "global.event",
        atMs: 4,
        method: "GET",
        path: "/global/event",
        query: {},
        status: 200,
        contentType: "text/event-stream",
        events: [
          { atMs: 1, data: { payload: { id: "evt_2282ac6960016K1qJJEx84K6Fa", type: "server.connected", properties: {} } } },
          { atMs: 2, data: { payload: { type: "plugin.added", properties: { id: "x" } } } },
          {
            atMs: 3,
            data: { directory: "/tmp/occ-test-AbC123/project", payload: { type: "message.updated", properties: { sessionID: SES, info: { id: MSG } } } },
          },
        ],
      },
      {
        atMs: 9,
        method: "GET",
        path: "/session/status",
        query: {},
        status: 200,
        contentType: "application/json",
        body: { [SES]: { type: "busy" }, [MSG]: "call_7_0" },
      },
    ],
  };
}

describe("scrubFixture", () => {
  const fixture = scrubFixture(raw(), context);
  const [get, stream, status] = fixture.interactions;

  it("renames ids sequentially and the same way in paths, bodies, keys and events", () => {
    expect(get!.path).toBe("/session/ses_0001");
    expect(get!.body).toMatchObject({ id: "ses_0001", slug: "slug-0001" });
    expect(stream!.events![1]!.data).toMatchObject({ payload: { properties: { sessionID: "ses_0001", info: { id: "msg_0001" } } } });
    expect(status!.body).toEqual({ ses_0001: { type: "busy" }, msg_0001: "call_0001" });
  });

  it("replaces temp paths (absolute and relative to /) and ports by stable placeholders", () => {
    expect(get!.query).toEqual({ directory: "/project" });
    expect(get!.body).toMatchObject({ path: "project", url: "http://127.0.0.1:5801/v1" });
    expect(stream!.events![1]!.data).toMatchObject({ directory: "/project" });
  });

  it("moves timestamps to the fixed epoch, keeping their offsets", () => {
    expect(get!.body).toMatchObject({ time: { created: FIXED_EPOCH + 5 } });
  });

  it("drops noise events and cuts huge strings, and says so in notes", () => {
    expect(stream!.events!.map((e) => (e.data as { payload: { type: string } }).payload.type)).toEqual(["server.connected", "message.updated"]);
    expect((get!.body as { big: string }).big.length).toBeLessThan(400);
    expect(fixture.notes?.join("\n")).toMatch(/dropped events.*plugin\.added[\s\S]*truncated 1 string/);
  });

  it("keeps ids it is told to keep", () => {
    const kept = scrubFixture(raw(), { ...context, keepIds: [SES] });
    expect(kept.interactions[0]!.path).toBe(`/session/${SES}`);
  });

  it("refuses a fixture that still holds the password or a temp path", () => {
    const leaky = raw();
    leaky.interactions[0]!.body = { note: `password is ${context.password}` };
    expect(() => scrubFixture(leaky, context)).toThrow("password");
    const basic = raw();
    basic.interactions[0]!.body = { auth: Buffer.from(`opencode:${context.password}`).toString("base64") };
    expect(() => scrubFixture(basic, context)).toThrow("password");
  });
});
