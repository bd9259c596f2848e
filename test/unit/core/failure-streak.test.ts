// What a failed write's log line may say: one line, bounded, and never a URL's password (a queue
// URL may carry one). The streak itself is proven against a real Redis in test/fleet/heartbeat-failures.test.ts.
import { describe, expect, it } from "vitest";
import { failureText } from "../../../src/core/failure-streak.js";

describe("failureText", () => {
  it("masks the user and password of any URL in the message", () => {
    const text = failureText(new Error("connect to redis://admin:hunter2@10.0.0.5:6379/0 failed; also rediss://:pw2@h:1"));
    expect(text).toBe("connect to redis://***@10.0.0.5:6379/0 failed; also rediss://***@h:1");
  });

  it("keeps the message on one line and bounds it", () => {
    const text = failureText(new Error(`first\nsecond ${"x".repeat(1000)}`), 50);
    expect(text).not.toContain("\n");
    expect(text).toHaveLength(51);
    expect(text.endsWith("…")).toBe(true);
  });

  it("says something for an empty or non-Error failure", () => {
    expect(failureText(new Error(""))).toBe("(no message)");
    expect(failureText("WRONGTYPE Operation against a key")).toBe("WRONGTYPE Operation against a key");
  });
});
