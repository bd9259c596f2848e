// Requests whose URL and headers would pass opencode's 16 KiB limit are refused before sending,
// naming the part that is too long (opencode itself answers 431 or closes the socket mid-write).
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../../src/client/errors.js";
import { MAX_REQUEST_HEAD, refuseOversizedRequests } from "../../../src/client/request-size.js";

const sent: Request[] = [];
const fetchOk = refuseOversizedRequests(async (request) => {
  sent.push(request);
  return new Response("{}", { status: 200 });
});

describe("refuseOversizedRequests", () => {
  it("sends an ordinary request", async () => {
    const response = await fetchOk(new Request("http://127.0.0.1:1/session?directory=%2Ftmp%2Fp", { headers: { "x-opencode-directory": "/tmp/p" } }));
    expect(response.status).toBe(200);
    expect(sent).toHaveLength(1);
  });

  it("refuses a directory header far over the limit without sending it, naming the header and the sizes", async () => {
    const before = sent.length;
    const request = new Request("http://127.0.0.1:1/session", { headers: { "x-opencode-directory": "d".repeat(2 * 1024 * 1024) } });
    const error = await fetchOk(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toMatch(/x-opencode-directory header .* is 2,097,\d{3} characters/);
    expect((error as Error).message).toMatch(/shorten it/);
    expect((error as Error).message.length).toBeLessThan(400);
    expect(sent.length).toBe(before);
  });

  it("refuses a query value that makes the URL too long", async () => {
    const error = await fetchOk(new Request(`http://127.0.0.1:1/session?search=${"s".repeat(MAX_REQUEST_HEAD)}`)).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^GET \/session not sent: the URL/);
  });
});
