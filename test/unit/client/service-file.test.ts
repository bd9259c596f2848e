// The 2.x background service's discovery files: where they are, which are read, and every way a
// file is refused before anything is sent to the URL in it. A live file is tested against a real
// 2.x server in test/e2e-v2/service.test.ts; here nothing answers, so the checks end before a probe
// or at a port nobody listens on.
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkServiceFile, findService } from "../../../src/client/service/discover.js";
import { describeRegistration, readServiceFile, serviceFiles, serviceStateDir } from "../../../src/client/service/file.js";
import { freePort } from "../../../src/client/spawn.js";

const SECRET = "pw-Sx9-not-to-be-shown";
let root: string;
let state: string;
const env = () => ({ XDG_STATE_HOME: root, HOME: "/nonexistent-home" });

async function write(name: string, content: unknown, mode = 0o600): Promise<string> {
  const file = join(state, name);
  await writeFile(file, typeof content === "string" ? content : JSON.stringify(content), { mode });
  await chmod(file, mode); // the umask does not lower it
  return file;
}

/** A pid that was just used and is gone (pids are not reused that fast). */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", ""]).pid!;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "occ-service-file-"));
  state = join(root, "opencode");
  await mkdir(state);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("where the discovery files are", () => {
  it("is $XDG_STATE_HOME/opencode, else ~/.local/state/opencode", () => {
    expect(serviceStateDir({ XDG_STATE_HOME: "/x/state", HOME: "/h" })).toBe("/x/state/opencode");
    expect(serviceStateDir({ HOME: "/h" })).toBe("/h/.local/state/opencode");
    expect(serviceStateDir({ XDG_STATE_HOME: "", HOME: "/h" })).toBe("/h/.local/state/opencode");
  });

  it("reads service.json first, then the other channels' service-<channel>.json, and nothing else", async () => {
    const dir = await mkdtemp(join(tmpdir(), "occ-service-list-"));
    try {
      await mkdir(join(dir, "opencode"));
      for (const name of [
        "service-local.json",
        "service.json",
        "service-beta.json",
        "service.json.1234.tmp",
        "service-x.json.abc.tmp",
        "opencode.db",
        "service.json~",
      ]) {
        await writeFile(join(dir, "opencode", name), "{}");
      }
      expect((await serviceFiles({ XDG_STATE_HOME: dir })).map((f) => f.slice(dir.length + 10))).toEqual([
        "service.json",
        "service-beta.json",
        "service-local.json",
      ]);
      expect(await serviceFiles({ XDG_STATE_HOME: join(dir, "missing") })).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("reading one file", () => {
  it("takes {id, version, url, pid, password} as opencode writes it, and ignores unknown keys", async () => {
    const file = await write("service.json", {
      id: "0aa44e11-8477-40f5-af14-0aca71793ed4",
      version: "2.0.26",
      url: "http://127.0.0.1:49374/",
      pid: 4242,
      password: SECRET,
      later: true,
    });
    expect(await readServiceFile(file)).toEqual({
      file,
      registration: { id: "0aa44e11-8477-40f5-af14-0aca71793ed4", version: "2.0.26", url: "http://127.0.0.1:49374", pid: 4242, password: SECRET },
    });
  });

  it.each([
    ["not JSON", "{url:", /not valid JSON/],
    ["no pid", { url: "http://127.0.0.1:1", password: SECRET }, /bad or missing: pid;/],
    ["a pid that is not a positive integer", { url: "http://127.0.0.1:1", pid: -3, password: SECRET }, /bad or missing: pid;/],
    ["a URL that is not http", { url: "file:///etc/passwd", pid: 5, password: SECRET }, /bad or missing: url;/],
    ["a password that is not a string", { url: "http://127.0.0.1:1", pid: 5, password: 1234567 }, /bad or missing: password;/],
    ["an array", [SECRET], /bad or missing: \(root\);/],
  ])("refuses %s, naming the field and never its value", async (_what, content, reason) => {
    const file = await write("service.json", content);
    const read = await readServiceFile(file);
    expect("reason" in read && read.reason).toMatch(reason);
    expect(JSON.stringify(read)).not.toContain(SECRET);
    expect(JSON.stringify(read)).not.toContain("1234567");
  });

  it("does not trust a file others can write, a symlink, a directory or a huge file", async () => {
    const target = await write("real.json", { url: "http://127.0.0.1:1", pid: 5 });
    expect(await readServiceFile(await write("service.json", { url: "http://127.0.0.1:1", pid: 5 }, 0o666))).toMatchObject({
      reason: expect.stringMatching(/^writable by others \(mode 666; opencode writes it 0600\): not trusted$/),
    });
    const link = join(state, "service-link.json");
    await symlink(target, link);
    expect(await readServiceFile(link)).toMatchObject({ reason: "not a regular file" });
    await mkdir(join(state, "service-dir.json"));
    expect(await readServiceFile(join(state, "service-dir.json"))).toMatchObject({ reason: "not a regular file" });
    expect(await readServiceFile(await write("service-big.json", " ".repeat(70_000)))).toMatchObject({ reason: "70000 bytes, too large for a discovery file" });
    expect(await readServiceFile(join(state, "absent.json"))).toMatchObject({ reason: "no such file" });
    await rm(link);
    await rm(join(state, "service-dir.json"), { recursive: true });
    await rm(join(state, "service-big.json"));
    await rm(target);
  });

  it("describes a registration without its password or URL credentials", () => {
    const text = describeRegistration({ url: `http://opencode:${SECRET}@127.0.0.1:49374`, pid: 7, version: "2.0.26", password: SECRET });
    expect(text).toBe("http://127.0.0.1:49374 (pid 7, 2.0.26, with a password)");
  });
});

describe("liveness", () => {
  it("calls a file whose pid is gone stale, without asking its URL", async () => {
    const pid = deadPid();
    const file = await write("service.json", { url: "http://127.0.0.1:9", pid, password: SECRET, version: "2.0.26" });
    const check = await checkServiceFile(file);
    expect(check.live).toBeUndefined();
    expect(check.result).toBe(`stale: http://127.0.0.1:9 (pid ${pid}, 2.0.26, with a password): pid ${pid} is not running`);
  });

  it("calls a file whose pid lives but whose URL does not answer stale, and says why", async () => {
    const port = await freePort();
    const file = await write("service.json", { url: `http://127.0.0.1:${port}`, pid: process.pid, password: SECRET });
    const check = await checkServiceFile(file, { timeoutMs: 1_000 });
    expect(check.result).toMatch(
      new RegExp(
        `^stale: http://127\\.0\\.0\\.1:${port} \\(pid ${process.pid}, with a password\\): Cannot reach opencode at http://127\\.0\\.0\\.1:${port}/?\\. Is it running\\?$`,
      ),
    );
  });

  it("goes through every file, reports each, and finds nothing live here; a password never appears", async () => {
    await write("service.json", { url: "http://127.0.0.1:9", pid: deadPid(), password: SECRET });
    await write("service-local.json", "garbage");
    const found = await findService({ env: env() });
    expect(found.live).toBeUndefined();
    expect(found.dir).toBe(state);
    expect(found.checks.map((c) => c.file.slice(state.length + 1))).toEqual(["service.json", "service-local.json"]);
    expect(found.checks[1]!.result).toBe("ignored: not valid JSON");
    expect(JSON.stringify(found)).not.toContain(SECRET);
    await rm(join(state, "service-local.json"));
  });

  it("skips a file for another URL when one is asked for", async () => {
    const file = await write("service.json", { url: "http://127.0.0.1:9", pid: process.pid });
    expect((await checkServiceFile(file, { url: "http://127.0.0.1:10" })).result).toBe(
      "ignored: http://127.0.0.1:9 (pid " + process.pid + ", no password) is not the service at http://127.0.0.1:10",
    );
  });
});
