// What the v2 engine keeps of its sessions' answers (engine/v2/v2-known.ts) and the bounded map under
// it: the directory of a session is read once, what a create answer said a session holds is given
// to its first prompt only, and neither grows past its bound.
import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../../../src/core/bounded-map.js";
import { KnownSessions } from "../../../../src/core/engine/v2/v2-known.js";

const session = (id: string) => ({ id, title: "t", directory: `/p/${id}`, time: { created: 0, updated: 0 } });

describe("BoundedMap", () => {
  it("forgets the oldest entries first, and setting a key again makes it the newest", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("a", 3).set("c", 4);
    expect([...map.entries()]).toEqual([
      ["a", 3],
      ["c", 4],
    ]);
  });
});

describe("KnownSessions", () => {
  it("gives what a create answer said to the first prompt only", () => {
    const known = new KnownSessions();
    known.created({ ...session("ses_a"), model: { providerID: "fake", modelID: "backup" }, agent: "plan" });
    expect(known.takeHeld("ses_a")).toEqual({ model: { providerID: "fake", modelID: "backup" }, agent: "plan" });
    expect(known.takeHeld("ses_a")).toBeUndefined();
  });

  it("reads a directory once, keeps a created session's without a read, and forgets a failed read", async () => {
    const known = new KnownSessions();
    let reads = 0;
    const read = () => (reads++, Promise.resolve("/p/x"));
    expect(await known.directory("ses_x", read)).toBe("/p/x");
    expect(await known.directory("ses_x", read)).toBe("/p/x");
    known.created(session("ses_y"));
    expect(await known.directory("ses_y", read)).toBe("/p/ses_y");
    expect(reads).toBe(1);
    await expect(known.directory("ses_z", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await known.directory("ses_z", read)).toBe("/p/x");
    expect(reads).toBe(2);
  });

  it("stays bounded however many sessions it has seen", async () => {
    const known = new KnownSessions();
    for (let i = 0; i < 5_000; i++) known.created(session(`ses_${i}`));
    expect(known.takeHeld("ses_0")).toBeUndefined(); // forgotten: a prompt then switches, as without it
    expect(known.takeHeld("ses_4999")).toEqual({});
    let reads = 0;
    await known.directory("ses_0", () => (reads++, Promise.resolve("/p/ses_0")));
    expect(reads).toBe(1);
  });
});
