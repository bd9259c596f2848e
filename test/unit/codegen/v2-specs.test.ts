// The 2.x specs: codegen covers spec/v2/ (2.0.26) deterministically into generated/v2/, the runnable
// snapshot in spec/v2-b622626/ is the document its server serves, and spec:diff works between the two
// 2.x documents (ids matched without `v2.`) and across majors.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { diffSpecs } from "../../../codegen/lib/diff.js";
import { generateFiles } from "../../../codegen/lib/generate.js";
import { readMetaNextTo, sha256 } from "../../../codegen/lib/meta.js";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { DEFAULT_TARGETS, targetsFrom } from "../../../codegen/lib/targets.js";
import { operations as v2Operations, specInfo as v2SpecInfo } from "../../../generated/v2/operations.js";

const V2 = "spec/v2/openapi.json";
const SNAPSHOT = "spec/v2-b622626/openapi.json";

describe("codegen targets", () => {
  it("covers 1.x into generated/ and 2.x into generated/v2/ by default", () => {
    expect(DEFAULT_TARGETS).toEqual([
      { spec: "spec/openapi.json", out: "generated" },
      { spec: V2, out: "generated/v2" },
    ]);
    expect(targetsFrom(undefined, undefined)).toEqual(DEFAULT_TARGETS);
    expect(targetsFrom("x.json", undefined)).toEqual([{ spec: "x.json", out: "generated" }]);
  });
});

describe("codegen from spec/v2/openapi.json (2.0.26)", () => {
  let first: Map<string, string>;
  beforeAll(async () => {
    first = await generateFiles(V2);
  });

  it("is deterministic and matches the checked-in generated/v2/ (else run `npm run codegen`)", async () => {
    const second = await generateFiles(V2);
    for (const [name, text] of first) {
      expect(second.get(name) === text, name).toBe(true);
      expect(readFileSync(join("generated/v2", name), "utf8") === text, name).toBe(true);
    }
  });

  it("types the released 2.0.26 operations (ids without `v2.`)", () => {
    expect(v2SpecInfo.opencodeVersion).toBe("2.0.26");
    expect(v2SpecInfo.operationCount).toBe(142);
    expect(v2Operations["session.prompt"]).toMatchObject({ method: "post", path: "/api/session/{sessionID}/prompt" });
    expect(v2Operations["event.subscribe"]).toMatchObject({ method: "get", path: "/api/event", streaming: true });
    expect(Object.keys(v2Operations).some((id) => id.startsWith("v2."))).toBe(false);
  });
});

describe("the vendored 2.x documents", () => {
  it("record their version, checksum and operation count in meta.json", () => {
    for (const [file, version, count] of [
      [V2, "2.0.26", 142],
      [SNAPSHOT, "2.0.0-src.b622626", 117],
    ] as const) {
      const meta = readMetaNextTo(file);
      expect(meta).toMatchObject({ opencodeVersion: version, operations: count, sha256: sha256(readFileSync(file)) });
    }
  });
});

describe("spec:diff between the 2.x pre-release and 2.0.26", () => {
  const diff = diffSpecs(loadSpec(SNAPSHOT), loadSpec(V2), { ignorePrefix: "v2." });
  const changed = (id: string) => diff.changed.find((c) => c.id === id)?.changes ?? [];

  it("matches operations without the `v2.` prefix", () => {
    expect(diff.changed.find((c) => c.id === "session.prompt")).toBeDefined(); // same op, changed body
    expect(diff.removed.map((r) => r.id)).not.toContain("v2.session.create");
    expect(diff.added.map((r) => r.id)).not.toContain("session.create");
  });

  it("shows the route differences the v2 adapter must handle", () => {
    expect(changed("session.revert.clear")).toEqual(
      expect.arrayContaining([
        { kind: "method", from: "post", to: "delete" },
        { kind: "path", from: "/api/session/{sessionID}/revert/clear", to: "/api/session/{sessionID}/revert" },
      ]),
    );
    expect(diff.added).toEqual(
      expect.arrayContaining([
        { id: "experimental.session.wait", method: "post", path: "/api/experimental/session/{sessionID}/wait" },
        { id: "session.update", method: "patch", path: "/api/session/{sessionID}" },
        { id: "server.info", method: "get", path: "/api/info" },
      ]),
    );
    expect(diff.removed).toEqual(
      expect.arrayContaining([
        { id: "v2.session.wait", method: "post", path: "/api/session/{sessionID}/wait" },
        { id: "v2.session.rename", method: "post", path: "/api/session/{sessionID}/rename" },
        { id: "v2.health.get", method: "get", path: "/api/health" },
      ]),
    );
  });

  it("without the option, every operation counts as removed and added", () => {
    const plain = diffSpecs(loadSpec(SNAPSHOT), loadSpec(V2));
    expect(plain.removed).toHaveLength(117);
    expect(plain.changed).toHaveLength(0);
  });

  it("works from the command line, and across majors (1.18.33 → 2.0.26)", async () => {
    const run = promisify(execFile);
    const { stdout } = await run("node_modules/.bin/tsx", ["codegen/spec-diff.ts", SNAPSHOT, V2, "--ignore-prefix", "v2.", "--json"]);
    expect(JSON.parse(stdout).changed.map((c: { id: string }) => c.id)).toContain("session.revert.clear");
    const across = await run("node_modules/.bin/tsx", ["codegen/spec-diff.ts", "spec/openapi.json", V2, "--ignore-prefix", "v2.", "--json"]);
    const result = JSON.parse(across.stdout) as { removed: { id: string }[]; changed: { id: string }[] };
    expect(result.removed.map((r) => r.id)).toContain("session.prompt_async"); // v1 routes are gone in 2.x
    expect(result.changed.map((c) => c.id)).toContain("session.prompt"); // 1.x's v2.session.prompt
  });
});
