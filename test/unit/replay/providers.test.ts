// Replay of the providers recording: the scripted provider and its models, as configured.
import { describe, expect, it } from "vitest";
import { useReplay } from "../../support/replay.js";

const replay = useReplay("providers");

describe("replay: providers", () => {
  it("lists the fake provider with its models and default, and as connected", async () => {
    const client = replay.connect();
    const configured = await client.call("config.providers");
    expect(configured.providers.map((p) => p.id)).toEqual(["fake"]);
    expect(Object.keys(configured.providers[0]!.models).sort()).toEqual(["backup", "scripted"]);
    expect(configured.default).toEqual({ fake: "scripted" });

    const listed = await client.call("provider.list");
    expect(listed.connected).toEqual(["fake"]);
    expect(listed.all.map((p) => p.id)).toEqual(["fake"]);
  });
});
