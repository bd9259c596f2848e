// Who may use the console: the token exchange, the cookie, and the Host and Origin rules.
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { ConsoleAuth } from "../../../src/console/auth.js";

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("console auth", () => {
  const auth = new ConsoleAuth();
  auth.bind("127.0.0.1", 4321);
  const cookie = auth.setCookie().split(";")[0]!;

  it("the cookie is HttpOnly and SameSite=Strict, and is not the URL's token", () => {
    expect(auth.setCookie()).toMatch(/^occ_console=[\w-]{40,}; HttpOnly; SameSite=Strict; Path=\/$/);
    expect(cookie).not.toContain(auth.token);
    expect(auth.tokenMatches(auth.token)).toBe(true);
    expect(auth.tokenMatches(`${auth.token}x`)).toBe(false);
    expect(auth.tokenMatches(null)).toBe(false);
  });

  it("accepts the console's own host names only", () => {
    for (const host of ["127.0.0.1:4321", "localhost:4321", "[::1]:4321"]) expect(auth.hostAllowed(req({ host })), host).toBe(true);
    for (const host of ["127.0.0.1:4322", "evil.example:4321", "127.0.0.1.evil.example:4321", ""]) expect(auth.hostAllowed(req({ host })), host).toBe(false);
  });

  it("a change needs the cookie and the console's own Origin", () => {
    expect(auth.mayChange(req({ cookie, origin: "http://127.0.0.1:4321" }))).toEqual({ ok: true });
    expect(auth.mayChange(req({ cookie: `other=1; ${cookie}`, origin: "http://localhost:4321" }))).toEqual({ ok: true });
    expect(auth.mayChange(req({ origin: "http://127.0.0.1:4321" }))).toMatchObject({ ok: false, why: expect.stringContaining("no console cookie") });
    expect(auth.mayChange(req({ cookie }))).toMatchObject({ ok: false, why: "Origin (none) is not this console's" });
    expect(auth.mayChange(req({ cookie, origin: "http://127.0.0.1:9999" }))).toMatchObject({ ok: false });
    expect(auth.mayChange(req({ cookie: "occ_console=forged", origin: "http://127.0.0.1:4321" }))).toMatchObject({ ok: false });
  });
});

describe("console auth off loopback (--host with --token)", () => {
  it("answers to any Host name, but a change still needs the cookie and an Origin equal to that Host", () => {
    const auth = new ConsoleAuth("a-token-of-sixteen-chars");
    auth.bind("0.0.0.0", 4321);
    const cookie = auth.setCookie().split(";")[0]!;
    expect(auth.hostAllowed(req({ host: "box.lan:4321" }))).toBe(true);
    expect(auth.mayChange(req({ cookie, host: "box.lan:4321", origin: "http://box.lan:4321" }))).toEqual({ ok: true });
    expect(auth.mayChange(req({ cookie, host: "box.lan:4321", origin: "http://evil.example" }))).toMatchObject({ ok: false });
    expect(auth.mayChange(req({ host: "box.lan:4321", origin: "http://box.lan:4321" }))).toMatchObject({ ok: false });
  });
});
