// The one config module: every environment variable of the README's configuration table, its default, and a bad value
// rejected with a message that names the variable.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_TOOLSETS, loadConfig, TOOLSETS } from "../../../src/config.js";

describe("loadConfig defaults", () => {
  it("needs nothing set", () => {
    const c = loadConfig({ HOME: "/home/u" });
    expect(c).toMatchObject({
      toolsets: DEFAULT_TOOLSETS,
      readOnly: false,
      fallbackModels: [],
      retryTimeoutS: 90,
      modelAllow: [],
      modelBlock: [],
      instanceTtlS: 1800,
      worktreeTtlS: 3600,
      httpSessionTtlS: 300,
      httpMaxSessions: 100,
      httpEventsBytes: 4 * 1024 * 1024,
      httpRequestTimeoutS: 30,
    });
    for (const key of ["opencodeUrl", "opencodePassword", "opencodeUsername", "directory", "defaultModel", "sandbox", "httpToken", "approvals"] as const) {
      expect(c[key], key).toBeUndefined();
    }
    expect(DEFAULT_TOOLSETS).toEqual(["delegate", "approve", "sessions", "discover", "api"]);
  });

  it("puts state (and the audit log) under XDG_STATE_HOME", () => {
    const c = loadConfig({ XDG_STATE_HOME: "/x/state" });
    expect(c.stateDir).toBe(join("/x/state", "opencode-conductor"));
    expect(c.auditPath).toBe(join("/x/state", "opencode-conductor", "audit.jsonl"));
  });

  it("treats empty values as unset", () => {
    const empty = Object.fromEntries(
      [
        "OPENCODE_URL",
        "OPENCODE_CONDUCTOR_TOOLSETS",
        "OPENCODE_CONDUCTOR_READ_ONLY",
        "OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S",
        "OPENCODE_CONDUCTOR_SANDBOX",
        "OPENCODE_CONDUCTOR_MODEL",
      ].map((k) => [k, ""]),
    );
    const c = loadConfig(empty);
    expect(c).toMatchObject({ toolsets: DEFAULT_TOOLSETS, readOnly: false, retryTimeoutS: 90 });
    expect(c.opencodeUrl).toBeUndefined();
    expect(c.sandbox).toBeUndefined();
  });
});

describe("loadConfig parses every variable", () => {
  it("reads all of them", () => {
    const c = loadConfig({
      OPENCODE_URL: "http://127.0.0.1:4096",
      OPENCODE_PASSWORD: "pw",
      OPENCODE_USERNAME: "me",
      OPENCODE_CONDUCTOR_DIRECTORY: "/proj",
      OPENCODE_CONDUCTOR_TOOLSETS: "discover, api",
      OPENCODE_CONDUCTOR_READ_ONLY: "1",
      OPENCODE_CONDUCTOR_MODEL: "fake/scripted",
      OPENCODE_CONDUCTOR_FALLBACK: "fake/backup, other/model",
      OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S: "12.5",
      OPENCODE_CONDUCTOR_MODEL_ALLOW: "fake/*,anthropic/claude-*",
      OPENCODE_CONDUCTOR_MODEL_BLOCK: "*/expensive-*",
      OPENCODE_CONDUCTOR_INSTANCE_TTL_S: "60",
      OPENCODE_CONDUCTOR_WORKTREE_TTL_S: "120",
      OPENCODE_CONDUCTOR_STATE_DIR: "/state",
      OPENCODE_CONDUCTOR_SANDBOX: "srt",
      OPENCODE_CONDUCTOR_AUDIT: "/logs/audit.jsonl",
      OPENCODE_CONDUCTOR_AUDIT_REQUIRED: "1",
      OPENCODE_CONDUCTOR_ROTATE_MB: "0.5",
      OPENCODE_CONDUCTOR_ROTATE_KEEP: "3",
      OPENCODE_CONDUCTOR_HTTP_TOKEN: "tok",
      OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S: "600",
      OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS: "20",
      OPENCODE_CONDUCTOR_HTTP_EVENTS_MB: "0.5",
      OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S: "5",
      OPENCODE_CONDUCTOR_HTTP_ORIGINS: "https://app.example/, http://intranet:8080",
      OPENCODE_CONDUCTOR_APPROVALS: "deny",
      OPENCODE_CONDUCTOR_DEBUG: "1",
    });
    expect(c).toEqual({
      opencodeUrl: "http://127.0.0.1:4096",
      opencodePassword: "pw",
      opencodeUsername: "me",
      directory: "/proj",
      toolsets: ["discover", "api"],
      readOnly: true,
      defaultModel: "fake/scripted",
      fallbackModels: ["fake/backup", "other/model"],
      retryTimeoutS: 12.5,
      modelAllow: ["fake/*", "anthropic/claude-*"],
      modelBlock: ["*/expensive-*"],
      instanceTtlS: 60,
      worktreeTtlS: 120,
      stateDir: "/state",
      sandbox: "srt",
      auditPath: "/logs/audit.jsonl",
      auditRequired: true,
      rotation: { maxBytes: 524_288, keep: 3 },
      httpToken: "tok",
      httpSessionTtlS: 600,
      httpMaxSessions: 20,
      httpEventsBytes: 524288,
      httpRequestTimeoutS: 5,
      httpOrigins: ["https://app.example", "http://intranet:8080"],
      approvals: "deny",
      debug: true,
    });
  });

  it("accepts https URLs", () => {
    expect(loadConfig({ OPENCODE_URL: "https://oc.example:8443/base" }).opencodeUrl).toBe("https://oc.example:8443/base");
  });

  it.each([
    ["1", true],
    ["true", true],
    ["YES", true],
    ["on", true],
    ["0", false],
    ["false", false],
    ["no", false],
    ["Off", false],
  ])("OPENCODE_CONDUCTOR_READ_ONLY=%s is %s", (value, expected) => {
    expect(loadConfig({ OPENCODE_CONDUCTOR_READ_ONLY: value }).readOnly).toBe(expected);
  });

  it.each(["elicit", "return", "deny"] as const)("OPENCODE_CONDUCTOR_APPROVALS=%s", (mode) => {
    expect(loadConfig({ OPENCODE_CONDUCTOR_APPROVALS: mode }).approvals).toBe(mode);
    expect(loadConfig({ OPENCODE_CONDUCTOR_APPROVALS: "" }).approvals).toBeUndefined();
  });

  it("expands OPENCODE_CONDUCTOR_TOOLSETS=all", () => {
    expect(loadConfig({ OPENCODE_CONDUCTOR_TOOLSETS: "all" }).toolsets).toEqual([...TOOLSETS]);
  });

  it("turns the audit log off with OPENCODE_CONDUCTOR_AUDIT=off", () => {
    expect(loadConfig({ OPENCODE_CONDUCTOR_AUDIT: "off" }).auditPath).toBeUndefined();
  });

  it("keeps the audit log in OPENCODE_CONDUCTOR_STATE_DIR by default", () => {
    expect(loadConfig({ OPENCODE_CONDUCTOR_STATE_DIR: "/s" }).auditPath).toBe(join("/s", "audit.jsonl"));
  });

  it("rotates at 64 MB keeping 10 segments by default; the audit is not required", () => {
    const c = loadConfig({});
    expect(c.rotation).toEqual({ maxBytes: 64 * 1024 * 1024, keep: 10 });
    expect(c.auditRequired).toBe(false);
  });

  it("refuses OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 with the audit trail off, saying what to do", () => {
    expect(() => loadConfig({ OPENCODE_CONDUCTOR_AUDIT: "off", OPENCODE_CONDUCTOR_AUDIT_REQUIRED: "1" })).toThrow(
      /OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 needs an audit trail, but OPENCODE_CONDUCTOR_AUDIT=off: give the trail a path/,
    );
  });
});

describe("loadConfig rejects bad values, naming the variable", () => {
  it.each([
    ["OPENCODE_CONDUCTOR_TOOLSETS", "foo", /unknown toolset "foo"/],
    ["OPENCODE_CONDUCTOR_TOOLSETS", "discover,bogus", /unknown toolset "bogus"/],
    ["OPENCODE_CONDUCTOR_READ_ONLY", "maybe", /got "maybe"/],
    ["OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S", "-1", /positive number of seconds, got "-1"/],
    ["OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S", "0", /positive number/],
    ["OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S", "soon", /positive number/],
    ["OPENCODE_CONDUCTOR_INSTANCE_TTL_S", "-5", /positive number/],
    ["OPENCODE_CONDUCTOR_WORKTREE_TTL_S", "soon", /positive number/],
    ["OPENCODE_CONDUCTOR_SANDBOX", "docker", /"srt"/],
    ["OPENCODE_CONDUCTOR_APPROVALS", "ask", /one of elicit, return, deny/],
    ["OPENCODE_CONDUCTOR_AUDIT_REQUIRED", "sometimes", /got "sometimes"/],
    ["OPENCODE_CONDUCTOR_ROTATE_MB", "0", /positive number of megabytes, got "0"/],
    ["OPENCODE_CONDUCTOR_ROTATE_MB", "big", /positive number of megabytes/],
    ["OPENCODE_CONDUCTOR_ROTATE_KEEP", "2.5", /positive whole number of segments, got "2.5"/],
    ["OPENCODE_CONDUCTOR_ROTATE_KEEP", "-1", /positive whole number/],
    ["OPENCODE_URL", "localhost:4096", /http\(s\) URL/],
    ["OPENCODE_URL", "ftp://host", /http\(s\) URL/],
  ])("%s=%s", (name, value, why) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(`${name}:`);
    expect(message).toMatch(why);
  });

  it("lists every bad variable at once", () => {
    expect(() => loadConfig({ OPENCODE_URL: "nope", OPENCODE_CONDUCTOR_SANDBOX: "docker", OPENCODE_CONDUCTOR_READ_ONLY: "maybe" })).toThrow(
      /OPENCODE_URL:[\s\S]*OPENCODE_CONDUCTOR_READ_ONLY:[\s\S]*OPENCODE_CONDUCTOR_SANDBOX:/,
    );
  });
});
