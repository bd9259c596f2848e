// Discovery's pure parts: /proc/net/tcp{,6} and lsof parsing, loopback hosts, what counts as an
// opencode process, and the first two steps of discoverConnection (options, env), which never scan.
import { describe, expect, it } from "vitest";
import { discoverConnection } from "../../../src/client/discovery/choose-server.js";
import { isOpencodeCommand } from "../../../src/client/discovery/processes.js";
import { loopbackHost, parseLsofListen, parseProcNetTcp } from "../../../src/client/discovery/listeners.js";

// Lines as the Linux kernel prints them (the 127.0.0.1:5931 row is from a real opencode serve).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 587 1 00000000339f2704 100 0 0 10 0
   1: 0100007F:172B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 104854 1 00000000d47ae119 100 0 0 10 0
   2: 0100007F:172B 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 104900 1 0000000000000000 20 4 30 10 -1
   3: 0A00020F:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2000 1 0000000000000000 100 0 0 10 0
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1000 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 3001 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1001 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 3002 1 0000000000000000 100 0 0 10 0
   2: 00000000000000000000000000000000:1002 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 3003 1 0000000000000000 100 0 0 10 0
   3: B80D0120000000000000000001000000:1003 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 3004 1 0000000000000000 100 0 0 10 0
`;

describe("parseProcNetTcp", () => {
  it("decodes IPv4 rows (little-endian words), ports, states and inodes", () => {
    expect(parseProcNetTcp(TCP, 4, "LE")).toEqual([
      { address: "0.0.0.0", port: 2024, state: "0A", inode: 587 },
      { address: "127.0.0.1", port: 5931, state: "0A", inode: 104854 },
      { address: "127.0.0.1", port: 5931, state: "01", inode: 104900 },
      { address: "15.2.0.10", port: 22, state: "0A", inode: 2000 },
    ]);
  });

  it("decodes IPv6 rows: ::1, v4-mapped loopback, ::, and a global address", () => {
    expect(parseProcNetTcp(TCP6, 6, "LE").map((r) => [r.address, r.port, r.inode])).toEqual([
      ["::1", 4096, 3001],
      ["::ffff:127.0.0.1", 4097, 3002],
      ["::", 4098, 3003],
      ["2001:db8:0:0:0:0:0:1", 4099, 3004],
    ]);
  });

  it("reads words in big-endian order on a big-endian machine", () => {
    const line = "  sl  local\n   0: 7F000001:0050 00000000:0000 0A 0 0 0 0 0 77 1\n";
    expect(parseProcNetTcp(line, 4, "BE")).toEqual([{ address: "127.0.0.1", port: 80, state: "0A", inode: 77 }]);
  });

  it("skips the header, blank and malformed lines", () => {
    expect(parseProcNetTcp("header\n\n   0: zz:yy\n", 4)).toEqual([]);
  });
});

describe("loopbackHost", () => {
  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["127.0.1.1", "127.0.1.1"],
    ["0.0.0.0", "127.0.0.1"],
    ["::1", "[::1]"],
    ["::", "[::1]"],
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["10.0.0.5", undefined],
    ["2001:db8:0:0:0:0:0:1", undefined],
  ])("%s -> %s", (address, host) => {
    expect(loopbackHost(address)).toBe(host);
  });
});

describe("isOpencodeCommand", () => {
  it.each([
    [["/work/main/node_modules/opencode-ai/bin/opencode.exe", "serve", "--port", "5101"], undefined, true], // the pinned npm binary as spawnOpencode runs it
    [["/work/main/node_modules/.bin/opencode", "serve"], "/work/main/node_modules/opencode-ai/bin/opencode.exe", true], // via the .bin symlink
    [["opencode"], undefined, true], // the TUI
    [["/home/u/.opencode/bin/opencode", "--port", "4096"], undefined, true], // install script location
    [["/home/u/x/.opencode", "serve"], undefined, true],
    [["bun", "run", "/src/opencode/packages/opencode/src/index.ts", "serve"], "/usr/bin/bun", true], // a source checkout
    [["node", "/usr/lib/node_modules/opencode-ai/bin/opencode", "serve"], "/usr/bin/node", true],
    [["node", "/work/main/node_modules/.bin/vitest", "opencode-conductor"], "/usr/bin/node", false],
    [["/usr/bin/opencode-conductor", "--stdio"], undefined, false],
    [["vim", "opencode.json"], "/usr/bin/vim", false],
    [["bash"], "/usr/bin/bash", false],
  ] as const)("%j (exe %s) -> %s", (argv, exe, expected) => {
    expect(isOpencodeCommand(argv, exe)).toBe(expected);
  });
});

describe("parseLsofListen (macOS)", () => {
  it("reads pid and loopback/wildcard listeners from lsof -F pn output", () => {
    const out = "p4242\nf20\nn127.0.0.1:4096\nf21\nn[::1]:4097\np4343\nf9\nn*:4098\nf10\nn192.168.1.5:4099\n";
    expect(parseLsofListen(out)).toEqual([
      { pid: 4242, host: "127.0.0.1", port: 4096 },
      { pid: 4242, host: "[::1]", port: 4097 },
      { pid: 4343, host: "127.0.0.1", port: 4098 },
    ]);
  });
});

describe("discoverConnection: explicit options and env (no scan)", () => {
  it("explicit options win, and the steps never show a password", async () => {
    const r = await discoverConnection({
      url: "http://127.0.0.1:1234",
      password: "pw-secret",
      env: { OPENCODE_URL: "http://127.0.0.1:9", OPENCODE_PASSWORD: "other-secret" },
    });
    expect(r.connection).toEqual({ url: "http://127.0.0.1:1234", password: "pw-secret", source: "options" });
    expect(r.steps).toEqual([{ step: "options", result: "using http://127.0.0.1:1234/ with a password" }]);
  });

  it("then OPENCODE_URL with OPENCODE_PASSWORD / OPENCODE_USERNAME; credentials in the URL are hidden", async () => {
    const r = await discoverConnection({
      env: { OPENCODE_URL: "http://me:inline-secret@127.0.0.1:4096", OPENCODE_PASSWORD: "env-secret", OPENCODE_USERNAME: "me" },
    });
    expect(r.connection).toEqual({ url: "http://me:inline-secret@127.0.0.1:4096", password: "env-secret", username: "me", source: "env" });
    expect(r.steps.map((s) => s.step)).toEqual(["options", "env"]);
    expect(r.steps[0]!.result).toBe("no url given");
    expect(r.steps[1]!.result).toBe("using OPENCODE_URL=http://127.0.0.1:4096/ with a password");
    expect(JSON.stringify(r.steps)).not.toMatch(/secret/);
  });
});
