// Every tool's input errors name the fields as the caller spells them (`session_id`, `message_id`,
// `part_id`, `parent_id`, `decision: "reject"`), never the library's option names (`sessionId` …)
// that the core's messages use for TypeScript callers.
import { describe, expect, it } from "vitest";
import { UnknownRequestError, UsageError } from "../../../src/core/errors.js";
import { validId } from "../../../src/core/inputs/ids.js";
import { inToolTerms } from "../../../src/mcp/field-names.js";
import { expectCleanError, useNoOpencode } from "../../support/tool-replay.js";

const LIBRARY_NAMES = /\b(?:sessionId|messageId|partId|parentId|requestId|questionId)\b|reject: true/;

describe("tool errors name the tool's own fields", () => {
  const none = useNoOpencode();
  it.each([
    ["oc_session", { session_id: "bad", action: "info" }, /`session_id` must be an opencode id starting with "ses_", got "bad"/],
    ["oc_session", { session_id: "ses_1", action: "fork", message_id: "bad" }, /`message_id` must be an opencode id starting with "msg_"/],
    ["oc_session", { session_id: "ses_1", action: "diff", message_id: "bad" }, /`message_id` must be an opencode id starting with "msg_"/],
    ["oc_session", { session_id: "ses_1", action: "revert", message_id: "msg_1", part_id: "bad" }, /`part_id` must be an opencode id starting with "prt_"/],
    ["oc_sessions", { parent_id: "bad" }, /`parent_id` must be an opencode id starting with "ses_", got "bad"/],
    ["oc_wait", { session_id: "bad" }, /`session_id` must be an opencode id/],
    ["oc_result", { session_id: "bad" }, /`session_id` must be an opencode id/],
    ["oc_send", { session_id: "bad", message: "x" }, /`session_id` must be an opencode id/],
    ["oc_interrupt", { session_id: "bad" }, /`session_id` must be an opencode id/],
    ["oc_pending", { session_id: "bad" }, /`session_id` must be an opencode id/],
    ["oc_delegate", { task: "x", session_id: "bad" }, /`session_id` must be an opencode id/],
    ["oc_delegate", { task: "x", fork: true }, /`fork: true` needs `session_id`: the session to fork/],
    ["oc_answer", { request_id: "que_1", answers: [] }, /A question needs `answers` \(e\.g\. \[\["Blue"\]\]\) or `decision: "reject"`/],
  ])("%s %j", async (tool, args, message) => {
    const r = await (await none.mcp()).call(tool, args);
    expectCleanError(r, message);
    expect(r.text).not.toMatch(LIBRARY_NAMES);
  });
});

describe("the core keeps the library's names", () => {
  it("validId names the option as a TypeScript caller passes it", () => {
    expect(() => validId("bad", "ses", "sessionId")).toThrow(/^`sessionId` must be an opencode id starting with "ses_", got "bad"\./);
  });

  it("inToolTerms rewrites library option names only as whole words", () => {
    expect(inToolTerms("`fork: true` needs `sessionId`; leave partId out; parentId, messageId, requestId, questionId")).toBe(
      "`fork: true` needs `session_id`; leave part_id out; parent_id, message_id, request_id, request_id",
    );
    // opencode's own names (sessionID) and longer words are left alone.
    expect(inToolTerms("path.sessionID and sessionIds")).toBe("path.sessionID and sessionIds");
  });

  it("an unknown request keeps opencode's message for the tool to build on", () => {
    const error = new UnknownRequestError("Permission request not found: per_1");
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(
      "Permission request not found: per_1. It may be answered already, or belong to a session in another project directory: pass its sessionId.",
    );
  });
});
