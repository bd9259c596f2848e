import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RequestLog } from "../../../src/core/governance/request-ids.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("RequestLog", () => {
  it("remembers the sessions of a request across instances (restarts), in a 0600 file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "occ-req-"));
    dirs.push(dir);
    const first = new RequestLog(dir);
    expect(await first.get("req-1")).toBeUndefined();
    await Promise.all([
      first.record("req-1", "oc_delegate_parallel", "ses_b", 1),
      first.record("req-1", "oc_delegate_parallel", "ses_a", 0),
      first.record("req-2", "oc_delegate", "ses_c"),
    ]);
    const second = new RequestLog(dir); // a new process reads the same state dir
    expect(await second.get("req-1")).toMatchObject({ tool: "oc_delegate_parallel", sessionIds: ["ses_a", "ses_b"] });
    expect((await second.get("req-2"))?.sessionIds).toEqual(["ses_c"]);
    expect(statSync(join(dir, "requests.json")).mode & 0o777).toBe(0o600);
  });
});
