// The console's files: a name from the URL finds one of ours or nothing (404), never a property
// of Object.prototype (`/vendor/__proto__` once answered 500).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asset } from "../../../src/console/assets.js";
import { startConsole, type RunningConsole } from "../../../src/console/server.js";

const ODD = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

describe("console assets", () => {
  it("finds the vendored libraries and nothing else", async () => {
    expect((await asset("/vendor/preact.mjs"))?.type).toMatch(/javascript/);
    for (const name of ODD) {
      expect(await asset(`/vendor/${name}`), name).toBeUndefined();
      expect(await asset(`/app/${name}`), name).toBeUndefined();
      expect(await asset(`/app/index.${name}`), name).toBeUndefined();
    }
  });

  describe("over HTTP", () => {
    let root: string;
    let running: RunningConsole;
    let cookie: string;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), "occ-console-assets-"));
      running = await startConsole({ config: { stateDir: join(root, "state"), auditPath: join(root, "state", "audit.jsonl") } });
      const signIn = await fetch(running.url, { redirect: "manual" });
      cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    });
    afterAll(async () => {
      await running?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it("answers 404 (not 500) for a name that is an Object.prototype property", async () => {
      for (const name of ODD) {
        const res = await fetch(`${running.origin}/vendor/${name}`, { headers: { cookie } });
        expect(res.status, name).toBe(404);
        expect(await res.json()).toEqual({ error: "not found" });
      }
      expect((await fetch(`${running.origin}/vendor/htm.mjs`, { headers: { cookie } })).status).toBe(200);
    });
  });
});
