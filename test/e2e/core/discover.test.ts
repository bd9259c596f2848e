// Discovery against a real opencode: the harness server (password set, started in its project dir)
// is found from /proc with its pid and port, needs a password, is healthy with it, and is the one
// discoverConnection picks for its directory. Other test files' servers may run at the same time,
// so assertions look for ours rather than counting.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverConnection } from "../../../src/client/discovery/choose-server.js";
import { findRunningServers } from "../../../src/client/discovery/running-servers.js";
import { connect } from "../../../src/client/connect.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

let server: TestOpencode;
// The 2.x service step reads $XDG_STATE_HOME: an empty one of the test's own, never the user's.
const stateHome = mkdtempSync(join(tmpdir(), "occ-discover-state-"));

beforeAll(async () => {
  server = await startOpencode();
});
afterAll(async () => {
  await server?.stop();
  rmSync(stateHome, { recursive: true, force: true });
});

const port = () => Number(new URL(server.url).port);

describe.runIf(process.platform === "linux")("discovery of running servers (e2e)", () => {
  it("finds the server by its process: pid, port, cwd; it needs a password", async () => {
    const found = await findRunningServers();
    const ours = found.find((s) => s.pid === server.pid);
    expect(ours, JSON.stringify(found)).toEqual({
      url: `http://127.0.0.1:${port()}`,
      pid: server.pid,
      port: port(),
      healthy: false,
      needsPassword: true,
      cwd: server.directory,
    });
  });

  it("is healthy, with its version, once the password is given", async () => {
    const ours = (await findRunningServers({ password: server.password })).find((s) => s.pid === server.pid);
    expect(ours).toMatchObject({ healthy: true, needsPassword: true, version: "1.18.33" });
  });

  it("leaves out excluded pids", async () => {
    expect((await findRunningServers({ excludePids: [server.pid] })).some((s) => s.pid === server.pid)).toBe(false);
  });

  it("discoverConnection picks it (env password, its directory) and says what each step found", async () => {
    const r = await discoverConnection({ env: { OPENCODE_PASSWORD: server.password, XDG_STATE_HOME: stateHome }, directory: server.directory });
    expect(r.connection).toEqual({ url: `http://127.0.0.1:${port()}`, password: server.password, source: "scan", pid: server.pid });
    expect(r.steps.map((s) => s.step)).toEqual(["options", "env", "service", "scan"]);
    expect(r.steps[2]!.result).toContain("no opencode 2.x service file");
    expect(r.steps[1]!.result).toBe("OPENCODE_URL not set");
    expect(r.steps[3]!.result).toContain(`using http://127.0.0.1:${port()} (pid ${server.pid})`);
    expect(JSON.stringify(r.steps)).not.toContain(server.password);

    // The connection works.
    const client = connect({ url: r.connection!.url, password: r.connection!.password });
    expect(await client.call("global.health")).toMatchObject({ healthy: true });
  });

  it("without the password it picks nothing usable, and says a password is needed", async () => {
    const r = await discoverConnection({ env: { XDG_STATE_HOME: stateHome }, directory: server.directory, excludePids: [] });
    // Another healthy unsecured opencode on this machine could be picked; ours never is.
    expect(r.connection?.pid).not.toBe(server.pid);
    expect(r.steps[3]!.result).toContain(`pid ${server.pid} needs a password in ${server.directory}`);
  });
});
