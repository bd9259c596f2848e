// The watchdog's decisions, without a server: which turn errors make the next model take over,
// when a run of retries has lasted too long, and whether a failed turn can be re-sent clean.
import { describe, expect, it } from "vitest";
import { didNothing, exhaustedError, fallbackReason, modelOfTurn, RetryClock } from "../../../src/core/turns/fallback-policy.js";
import type { Message } from "../../../src/core/model/message.js";
import { recordedError } from "../../../src/core/model/evidence.js";

// opencode's error objects as recorded (notes in docs/opencode-behaviour.md), read the way the turn machine reads them.
const err = (name: string, data: Record<string, unknown>) => recordedError({ name, data });

describe("fallbackReason", () => {
  it.each([
    [
      "APIError 429 (retries used up)",
      err("APIError", { message: "Rate limit exceeded", statusCode: 429, isRetryable: true }),
      "APIError 429: Rate limit exceeded",
    ],
    ["APIError 400", err("APIError", { message: "Bad request", statusCode: 400, isRetryable: false }), "APIError 400: Bad request"],
    ["APIError 401", err("APIError", { message: "Invalid API key", statusCode: 401 }), "APIError 401: Invalid API key"],
    ["APIError 404 model_not_found", err("APIError", { message: "The model does not exist", statusCode: 404 }), "APIError 404: The model does not exist"],
    [
      "APIError without status (connection refused)",
      err("APIError", { message: "Cannot connect to API", isRetryable: true }),
      "APIError: Cannot connect to API",
    ],
    [
      "ProviderAuthError",
      err("ProviderAuthError", { providerID: "oai", message: "OpenAI API key is missing." }),
      "ProviderAuthError: OpenAI API key is missing.",
    ],
    ["UnknownError model not found", err("UnknownError", { message: "Model not found: fake/nope." }), "UnknownError: Model not found: fake/nope."],
  ])("falls back on %s", (_name, error, reason) => {
    expect(fallbackReason(error)).toBe(reason);
  });

  it.each([
    ["no error", undefined],
    ["MessageAbortedError (someone stopped it)", err("MessageAbortedError", { message: "Aborted" })],
    ["ContextOverflowError (another model would overflow too)", err("ContextOverflowError", { message: "too long" })],
    ["MessageOutputLengthError", err("MessageOutputLengthError", {})],
    ["StructuredOutputError", err("StructuredOutputError", { message: "bad json", retries: 2 })],
    ["ContentFilterError", err("ContentFilterError", { message: "filtered" })],
    ["another UnknownError", err("UnknownError", { message: "something broke" })],
  ])("does not fall back on %s", (_name, error) => {
    expect(fallbackReason(error)).toBeUndefined();
  });
});

describe("RetryClock", () => {
  it("times a run from its first retry; busy between attempts does not restart it", () => {
    const clock = new RetryClock(1000);
    expect(clock.retry(1, 10_000)).toBe(11_000);
    expect(clock.retry(2, 10_400)).toBe(11_000);
    expect(clock.retry(2, 10_450)).toBe(11_000); // the same status repeated
    expect(clock.retry(3, 10_800)).toBe(11_000);
    expect(clock.elapsed(10_900)).toBe(900);
  });

  it("starts over when the attempt counter does (a later step failing anew)", () => {
    const clock = new RetryClock(1000);
    clock.retry(1, 0);
    clock.retry(2, 500);
    expect(clock.retry(1, 5_000)).toBe(6_000);
  });

  it("starts over after reset (a model step finished, or a new model)", () => {
    const clock = new RetryClock(1000);
    clock.retry(1, 0);
    clock.reset();
    expect(clock.elapsed(3_000)).toBe(0);
    expect(clock.retry(1, 3_000)).toBe(4_000);
  });
});

let n = 0;
const user = (): Message => ({ info: { id: `msg_${++n}`, role: "user", model: { providerID: "fake", modelID: "scripted" } }, parts: [] }) as unknown as Message;
const reply = (parent: Message, parts: unknown[], model = "scripted"): Message =>
  ({ info: { id: `msg_${++n}`, role: "assistant", parentID: parent.info.id, providerID: "fake", modelID: model }, parts }) as unknown as Message;

describe("failed turns", () => {
  it("a turn with no tool call and no text did nothing: it is deleted and the task re-sent", () => {
    const u = user();
    expect(didNothing([])).toBe(true);
    expect(didNothing([reply(u, [])])).toBe(true);
    expect(didNothing([reply(u, [{ type: "step-start" }, { type: "text", text: "" }])])).toBe(true);
  });

  it("a turn that called a tool or wrote text did work: it is kept and the next model continues", () => {
    const u = user();
    expect(didNothing([reply(u, [{ type: "tool", tool: "write", state: { status: "completed" } }]), reply(u, [])])).toBe(false);
    expect(didNothing([reply(u, [{ type: "text", text: "half an answer" }])])).toBe(false);
  });

  it("names the model of a turn from its last reply, else from its user message", () => {
    const u = user();
    expect(modelOfTurn([u, reply(u, [], "backup")])).toBe("fake/backup");
    expect(modelOfTurn([u])).toBe("fake/scripted");
    expect(modelOfTurn([])).toBeUndefined();
  });

  it("when every model failed, the error lists each one with its reason", () => {
    expect(
      exhaustedError([
        { model: "fake/scripted", reason: "APIError 400: Bad request" },
        { model: "fake/backup", reason: "APIError 400: Bad request" },
      ]),
    ).toEqual({ name: "AllModelsFailed", message: "All 2 models failed: fake/scripted: APIError 400: Bad request; fake/backup: APIError 400: Bad request" });
  });
});
