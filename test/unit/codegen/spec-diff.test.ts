// spec:diff on a real upgrade (opencode 1.15.0 → the pinned spec) and on hand-made edits.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { diffSpecs, type Change } from "../../../codegen/lib/diff.js";
import { totalLine, totals } from "../../../codegen/lib/diff-format.js";
import { loadSpec } from "../../../src/openapi/load-document.js";
import { type OpenApiDocument } from "../../../src/openapi/spec.js";

const OLD = "test/fixtures/specs/opencode-1.15.0.json";
const NEW = "spec/openapi.json";
const current = loadSpec(NEW);
const copy = (): OpenApiDocument => structuredClone(current);
const tmp = mkdtempSync(join(tmpdir(), "spec-diff-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = promisify(execFile);
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run("node_modules/.bin/tsx", ["codegen/spec-diff.ts", ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function changesOf(diff: ReturnType<typeof diffSpecs>, id: string): Change[] {
  return diff.changed.find((c) => c.id === id)?.changes ?? [];
}

describe("1.15.0 → 1.18.33 (real upgrade)", () => {
  const diff = diffSpecs(loadSpec(OLD), current);

  it("counts added, removed and changed operations", () => {
    expect(totals(diff)).toEqual({
      old: 131,
      new: 188,
      added: 57,
      removed: 0,
      changed: 130,
      changedRequest: 16,
      changedResponsesOnly: 114,
    });
    expect(totalLine(diff)).toBe("131 → 188 operations: 57 added, 0 removed, 130 changed (16 in the request, 114 in responses only)");
  });

  it("finds the 13 operations whose own request definition changed, plus 3 via changed components", () => {
    const request = diff.changed.filter((c) => c.request).map((c) => c.id);
    // These 13 differ in their parameters or body as written; the shared README's "13 changed".
    const direct = [
      "global.upgrade",
      "project.update",
      "pty.connect",
      "session.create",
      "session.update",
      "sync.replay",
      "v2.session.compact",
      "v2.session.context",
      "v2.session.list",
      "v2.session.messages",
      "v2.session.prompt",
      "v2.session.wait",
      "vcs.diff",
    ];
    // Bodies that reference Config / McpLocalConfig / McpOAuthConfig, which gained properties.
    const viaComponents = ["config.update", "global.config.update", "mcp.add"];
    expect(request.sort()).toEqual([...direct, ...viaComponents].sort());
  });

  it("says what changed", () => {
    expect(changesOf(diff, "session.create")).toContainEqual(
      expect.objectContaining({ kind: "body-schema", properties: expect.objectContaining({ added: ["metadata"] }) }),
    );
    expect(changesOf(diff, "global.upgrade")).toContainEqual(
      expect.objectContaining({ kind: "body-schema", properties: expect.objectContaining({ nowRequired: ["target"] }) }),
    );
    expect(changesOf(diff, "vcs.diff")).toContainEqual({ kind: "param-added", in: "query", name: "context", required: false });
    expect(changesOf(diff, "mcp.add")).toContainEqual(expect.objectContaining({ kind: "body-schema", components: ["McpLocalConfig", "McpOAuthConfig"] }));
  });
});

describe("hand-made edits", () => {
  it("reports exactly one removed operation and one new required query param", () => {
    const edited = copy();
    delete edited.paths["/session/status"]!.get;
    const list = edited.paths["/session"]!.get as { parameters: unknown[] };
    list.parameters.push({ name: "owner", in: "query", required: true, schema: { type: "string" } });
    const diff = diffSpecs(current, edited);
    expect(diff.added).toEqual([]);
    expect(diff.removed).toEqual([{ id: "session.status", method: "get", path: "/session/status" }]);
    expect(diff.changed).toEqual([
      {
        id: "session.list",
        method: "get",
        path: "/session",
        request: true,
        changes: [{ kind: "param-added", in: "query", name: "owner", required: true }],
      },
    ]);
  });

  it("reports a component change in every operation that uses it", () => {
    const edited = copy();
    const session = edited.components!.schemas!.Session as { properties: Record<string, unknown> };
    session.properties.extra = { type: "string" };
    const diff = diffSpecs(current, edited);
    const get = changesOf(diff, "session.get");
    expect(get).toEqual([expect.objectContaining({ kind: "response-schema", status: "200", components: ["Session"] })]);
    expect(diff.changed.length).toBeGreaterThan(10);
    expect(diff.changed.every((c) => !c.request || c.changes.some((x) => x.kind === "body-schema"))).toBe(true);
  });

  it("ignores x-codeSamples, summaries and descriptions", () => {
    const edited = copy();
    for (const item of Object.values(edited.paths)) {
      for (const op of Object.values(item) as Record<string, unknown>[]) {
        op["x-codeSamples"] = [{ lang: "js", source: "client.call()" }];
        op.summary = "changed";
      }
    }
    expect(diffSpecs(current, edited).changed).toEqual([]);
  });
});

describe("npm run spec:diff", () => {
  it("prints grouped text with a total line, or JSON with --json", async () => {
    const [text, json] = await Promise.all([cli(OLD, NEW), cli(OLD, NEW, "--json")]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Added (57):\n  experimental.capabilities.get  GET /experimental/capabilities\n");
    expect(text.stdout).toContain("  vcs.diff  GET /vcs/diff\n      query param context added (optional)\n");
    expect(text.stdout.trimEnd().split("\n").at(-1)).toMatch(/^131 → 188 operations: 57 added, 0 removed, 130 changed/);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as { totals: { added: number }; changed: unknown[] };
    expect(parsed.totals.added).toBe(57);
    expect(parsed.changed).toHaveLength(130);
  });

  it("exits 2 on bad usage or an unreadable file", async () => {
    const bad = join(tmp, "bad.json");
    writeFileSync(bad, "{ not json");
    const [one, broken] = await Promise.all([cli(NEW), cli(bad, NEW)]);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain("usage: npm run spec:diff");
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`cannot read ${bad}`);
  });
});
