// What a queued task may be, checked at the caller before anything reaches Redis: clear, bounded
// errors for what a worker on another machine could not run.
import { describe, expect, it } from "vitest";
import { batchTaskIds, validTaskId, rootQueue, taskIdFor } from "../../src/core/queue/names.js";
import { validSettings, queueSettingsFromEnv, redacted } from "../../src/core/queue/settings.js";
import { providerOf, rootFor, toTaskSpec } from "../../src/core/queue/spec.js";
import { Conductor } from "../../src/core/conductor.js";

describe("queued task specs", () => {
  it("carries the whole task as plain JSON (no callbacks), with an absolute directory", () => {
    const spec = toTaskSpec({
      task: "fix it",
      model: "anthropic/claude",
      checks: ["npm test"],
      maxTokens: 5000,
      permissions: "readonly",
      onProgress: () => undefined,
      timeoutMs: 5,
      requestId: "r1",
      directory: "/srv/app/../app",
    });
    expect(spec).toEqual({ task: "fix it", model: "anthropic/claude", checks: ["npm test"], maxTokens: 5000, permissions: "readonly", directory: "/srv/app" });
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
  });

  it("refuses what a worker elsewhere cannot run, saying what to do", () => {
    expect(() => toTaskSpec({ task: "x", sessionId: "ses_1" } as never)).toThrow(/always starts a new session/);
    expect(() => toTaskSpec({ task: " " })).toThrow(/`task` is empty/);
    expect(() => toTaskSpec({ task: "x", directory: "relative/dir" })).toThrow(/must be absolute/);
    expect(() => toTaskSpec({ task: "x", directory: "/a", repo: { url: "/r.git" } })).toThrow(/not both/);
    expect(() => toTaskSpec({ task: "x", files: ["notes.md"] })).toThrow(/absolute paths/);
    expect(() => toTaskSpec({ task: "x", repo: { url: " " } })).toThrow(/repo.url/);
  });

  it("names tasks from request ids BullMQ accepts, and batches in input order", () => {
    expect(taskIdFor("my-run.1")).toBe("my-run.1");
    expect(taskIdFor("a:b")).toMatch(/^r-[0-9a-f]{32}$/); // BullMQ refuses ":"
    expect(taskIdFor("12345")).toMatch(/^r-/); // and integer-like ids
    expect(taskIdFor(undefined)).toMatch(/^t-/);
    expect(batchTaskIds("b", 3)).toEqual(["b.1", "b.2", "b.3"]);
    expect(() => validTaskId("x".repeat(500))).toThrow(/is not a task id/);
    const message = (() => {
      try {
        validTaskId("x".repeat(500));
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(message?.length).toBeLessThan(300);
  });

  it("routes directories to the longest served root, and limits by provider", () => {
    expect(rootFor("/srv/app/pkg", ["/srv", "/srv/app", "/other"])).toBe("/srv/app");
    expect(rootFor("/elsewhere", ["/srv"])).toBeUndefined();
    expect(rootFor("/srv-other", ["/srv"])).toBeUndefined();
    expect(rootQueue("/srv/app")).toMatch(/^root-[0-9a-f]{16}$/);
    expect(providerOf({ model: "anthropic/claude-sonnet" })).toBe("anthropic");
    expect(providerOf({}, "openai/gpt")).toBe("openai");
    expect(providerOf({})).toBe("default");
  });

  it("reads OPENCODE_CONDUCTOR_QUEUE, refuses a bad URL without echoing its password, and stays off without it", () => {
    expect(queueSettingsFromEnv({})).toBeUndefined();
    expect(queueSettingsFromEnv({ OPENCODE_CONDUCTOR_QUEUE: "redis://h:6379", OPENCODE_CONDUCTOR_QUEUE_TTL_S: "3600" })).toEqual({
      url: "redis://h:6379",
      prefix: "occ",
      ttlS: 3600,
    });
    expect(() => validSettings({ url: "http://user:hunter2@h" })).toThrow(/not a redis:\/\//);
    expect(() => validSettings({ url: "http://user:hunter2@h" })).not.toThrow(/hunter2/);
    expect(() => validSettings({ url: "redis://h", ttlS: 5 })).toThrow(/at least 60/);
    expect(redacted("redis://:s3cret@h:6379")).not.toContain("s3cret");
    // Unset: a Conductor loads no queue at all (in-process work, as before).
    const c = new Conductor({ url: "http://127.0.0.1:9", queue: undefined });
    expect(c.taskQueue()).toBeUndefined();
    const off = new Conductor({ url: "http://127.0.0.1:9", queue: false });
    expect(off.queueSettings).toBeUndefined();
  });
});
