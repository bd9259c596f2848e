// Whatever oc_api / oc_api_ops is given (huge searches, references, paths, params, queries, bodies),
// it answers: the right outcome, and an error that quotes only a bounded piece of the input. How long
// each of these calls keeps the event loop busy is measured by `npm run bench:stall`, not here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LARGE_INPUTS, liveSpecApiMcp } from "../../support/api-large-inputs.js";
import type { MemoryMcp } from "../../support/mcp-memory.js";

let tools: MemoryMcp;
beforeAll(async () => {
  tools = await liveSpecApiMcp();
});
afterAll(async () => {
  await tools?.close();
});

describe("oc_api / oc_api_ops on oversized input", () => {
  it.each(LARGE_INPUTS)("%s", async (_label, tool, args, outcome, says) => {
    const r = await tools.call(tool, args);
    expect(r.isError, r.text.slice(0, 300)).toBe(outcome === "error");
    expect(r.text).toMatch(says);
    if (outcome === "error") expect(r.text.length).toBeLessThan(2_000); // quotes at most a bounded piece
  });
});
