// A 2.x server's spec is measured against the vendored 2.x spec (spec/v2/, 2.0.26), not the 1.x
// pin: oc_status's counts for the runnable pre-release are the ones `npm run spec:diff --
// --ignore-prefix v2.` and the compatibility matrix report (docs/compatibility.md, 2.x column).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { diffSpecs } from "../../codegen/lib/diff.js";
import type { OpenApiDocument } from "../../src/openapi/spec.js";
import { specInfo as v2SpecInfo } from "../../generated/v2/operations.js";
import { operations } from "../../generated/operations.js";
import { unsupported } from "../../src/core/engine/server/feature-guard.js";
import { changedOperations } from "../../src/core/engine/server/spec-changes.js";
import { loadV2Pin, specFromDocument } from "../../src/core/engine/server/spec.js";

const read = (file: string) => {
  const bytes = readFileSync(file);
  return { sha256: createHash("sha256").update(bytes).digest("hex"), doc: JSON.parse(bytes.toString("utf8")) as OpenApiDocument };
};

describe("the 2.x pin", () => {
  it("the pre-release against 2.0.26: missing, extra and changed as spec:diff --ignore-prefix v2. counts them", async () => {
    const pre = read("spec/v2-b622626/openapi.json");
    const spec = await specFromDocument("2.0.0-src.b622626", pre.sha256, pre.doc, await loadV2Pin());
    expect(spec.pin.version).toBe(v2SpecInfo.opencodeVersion);
    expect(spec.pinned).toBe(false);
    const diff = diffSpecs(read("spec/v2/openapi.json").doc, pre.doc, { ignorePrefix: "v2." });
    expect([...spec.missing].sort()).toEqual(diff.removed.map((o) => o.id).sort());
    expect([...spec.extra].sort()).toEqual(diff.added.map((o) => o.id).sort());
    // The figures docs/opencode-2x-behaviour.md gives.
    expect([spec.missing.length, spec.extra.length, Object.keys(spec.pin.rows).length]).toEqual([56, 31, 142]);
    expect(spec.missing).toEqual(expect.arrayContaining(["session.diff", "session.update", "session.message.list", "server.info", "worktree.list"]));
    expect(spec.has("session.list")).toBe(true); // `v2.session.list` on the pre-release
    const changed = await changedOperations(spec);
    expect([...changed].sort()).toEqual(diff.changed.map((o) => o.id).sort());
    expect(changed).toHaveLength(86);
  });

  it("2.0.26 itself is the pin: nothing missing, extra or changed", async () => {
    const released = read("spec/v2/openapi.json");
    const spec = await specFromDocument("2.0.26", released.sha256, released.doc, await loadV2Pin());
    expect(spec).toMatchObject({ pinned: true, missing: [], extra: [] });
    expect(await changedOperations(spec)).toEqual([]);
  });

  it("a 1.x operation on a 2.x server is refused as such (no advice to install a 1.x release)", async () => {
    const pre = read("spec/v2-b622626/openapi.json");
    const spec = await specFromDocument("2.0.0-src.b622626", pre.sha256, pre.doc, await loadV2Pin());
    const refusal = unsupported(spec, operations["session.list"]);
    expect(refusal?.message).toBe(
      "opencode 2.0.0-src.b622626 has no operation session.list (GET /session), so nothing was sent: it speaks only the v2 API (opencode 2.x, routes under /api). oc_api_ops lists its operations; the conductor's tools work on it as on 1.x.",
    );
    expect(refusal?.since).toBeUndefined();
  });
});
