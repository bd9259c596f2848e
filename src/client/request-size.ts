// opencode's HTTP servers (Node's and Bun's alike) refuse a request whose URL and headers pass
// 16 KiB: an answer of HTTP 431 at best, and often a socket closed while the request is still being
// written (EPIPE), which would read as "opencode is down". No real id, search or directory comes
// near that, so a longer one is refused here, before sending, naming what is too long.
import { BadRequestError } from "./errors.js";

/** Node's default `--max-http-header-size`, which opencode's servers share. */
export const MAX_REQUEST_HEAD = 16 * 1024;

type Fetch = (request: Request) => Promise<Response>;

export function refuseOversizedRequests(fetchImpl: Fetch): Fetch {
  return (request) => {
    const parts: Array<[string, number]> = [["the URL", request.url.length]];
    request.headers.forEach((value, name) => parts.push([`the ${name} header`, name.length + value.length]));
    const total = parts.reduce((sum, [, size]) => sum + size, 0);
    if (total <= MAX_REQUEST_HEAD) return fetchImpl(request);
    const [what, size] = parts.reduce((a, b) => (b[1] > a[1] ? b : a));
    const where = what === "the URL" ? "the URL (an id, a search or another query value)" : `${what} (the project directory travels there)`;
    return Promise.reject(
      new BadRequestError(
        `${request.method} ${new URL(request.url).pathname.slice(0, 80)} not sent: ${where} is ${size.toLocaleString("en")} characters, and opencode refuses requests whose URL and headers pass ${MAX_REQUEST_HEAD.toLocaleString("en")}. A value is far too long: shorten it.`,
        0,
      ),
    );
  };
}
