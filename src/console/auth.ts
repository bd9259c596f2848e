// Who may use the console. The URL printed at start carries a random token; opening it once sets an
// HttpOnly, SameSite=Strict cookie and redirects to a URL without the token (so it leaves no trace
// in history or a Referer). Every other request needs that cookie; a request that changes something
// also needs an Origin equal to the console's own, and every request a Host naming the console, so
// neither another site (CSRF) nor a rebound DNS name can drive it.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const COOKIE = "occ_console";

export const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

export class ConsoleAuth {
  /** The secret of the printed URL (given with --token, else random). */
  readonly token: string;
  /** The cookie's value: another secret, so the URL's token is never stored by the browser. */
  private readonly session = randomBytes(32).toString("base64url");
  private origins: Set<string> = new Set();
  private hosts: Set<string> = new Set();
  /** Off loopback (--host with --token) the console is reached by whatever name the network gives it. */
  private anyHost = false;

  constructor(token?: string) {
    this.token = token ?? randomBytes(24).toString("base64url");
  }

  /** The origins (and hosts) the console answers as, once its port is known. */
  bind(host: string, port: number): void {
    this.anyHost = !LOOPBACK.has(host);
    const names = LOOPBACK.has(host) ? ["127.0.0.1", "localhost", "[::1]"] : [host.includes(":") ? `[${host}]` : host];
    this.hosts = new Set(names.map((n) => `${n}:${port}`));
    this.origins = new Set(names.map((n) => `http://${n}:${port}`));
  }

  secrets(): string[] {
    return [this.token, this.session];
  }

  tokenMatches(given: string | null): boolean {
    return given !== null && same(given, this.token);
  }

  setCookie(): string {
    return `${COOKIE}=${this.session}; HttpOnly; SameSite=Strict; Path=/`;
  }

  hostAllowed(req: IncomingMessage): boolean {
    return typeof req.headers.host === "string" && (this.anyHost || this.hosts.has(req.headers.host.toLowerCase()));
  }

  hasCookie(req: IncomingMessage): boolean {
    const value = cookieValue(req.headers.cookie, COOKIE);
    return value !== undefined && same(value, this.session);
  }

  /** A state-changing request: the cookie and our own Origin. */
  mayChange(req: IncomingMessage): { ok: true } | { ok: false; why: string } {
    if (!this.hasCookie(req)) return { ok: false, why: "no console cookie: open the URL printed by `opencode-conductor console` first" };
    const origin = req.headers.origin;
    const own = this.anyHost ? new Set([`http://${String(req.headers.host).toLowerCase()}`]) : this.origins;
    if (typeof origin !== "string" || !own.has(origin))
      return { ok: false, why: `Origin ${typeof origin === "string" ? JSON.stringify(origin.slice(0, 100)) : "(none)"} is not this console's` };
    return { ok: true };
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}
