// Where work runs is one decision (core/placement/decide.ts) for every verb: each row is a
// conductor (queue configured? private instances?) and a request, and where it goes or what it refuses.
import { describe, expect, it } from "vitest";
import { place, type PlacementContext, type PlacementRequest } from "../../../src/core/placement/decide.js";

const plain: PlacementContext = { queued: false, instances: false };
const fleet: PlacementContext = { queued: true, instances: true };

describe("place", () => {
  it.each<[string, PlacementContext, PlacementRequest, string]>([
    ["new work, no queue", plain, { kind: "task" }, "here"],
    ["new work with a queue", fleet, { kind: "task" }, "queue"],
    ["a continued session with a queue: where the session lives", fleet, { kind: "task", sessionId: "ses_1" }, "here"],
    ["isolation instance, even with a queue", fleet, { kind: "task", isolation: "instance" }, "instance"],
    ["a repo task with a queue", fleet, { kind: "task", repo: { url: "file:///r" } }, "queue"],
    ["a batch, no queue", plain, { kind: "batch" }, "here"],
    ["a batch with a queue", fleet, { kind: "batch" }, "queue"],
    ["a session id with a queue", fleet, { kind: "id", id: "ses_abc" }, "here"],
    ["a task or batch id with a queue", fleet, { kind: "id", id: "req-1" }, "queue"],
    ["any id without a queue (the core then asks for a session id)", plain, { kind: "id", id: "req-1" }, "here"],
  ])("%s", (_, ctx, request, where) => {
    expect(place(ctx, request)).toBe(where);
  });

  it.each<[string, PlacementContext, PlacementRequest, RegExp]>([
    ["a repo task without a queue", plain, { kind: "task", repo: { url: "file:///r" } }, /`repo` tasks run on the fleet's workers: configure a queue/],
    ["a repo task on a private instance", fleet, { kind: "task", isolation: "instance", repo: { url: "x" } }, /not with isolation "instance"/],
    ["isolation instance without instances", plain, { kind: "task", isolation: "instance" }, /create the Conductor with `instances`/],
  ])("refuses %s", (_, ctx, request, error) => {
    expect(() => place(ctx, request)).toThrow(error);
  });
});
