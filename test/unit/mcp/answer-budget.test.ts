// The size budget every tool answer keeps (src/mcp/answer-budget.ts): an answer over it is cut, its
// structured content keeps its fields and their types, and the whole answer is read back in pages.
import { describe, expect, it } from "vitest";
import { ANSWER_BUDGET_CHARS, KeptAnswers, withinBudget } from "../../../src/mcp/answer-budget.js";
import type { CallToolResult } from "@modelcontextprotocol/server";

const rows = Array.from({ length: 3_000 }, (_, i) => ({ id: `ses_${String(i).padStart(6, "0")}`, title: `session ${i}`, updated: "2026-12-01T00:00:00Z" }));
const big: CallToolResult = {
  content: [{ type: "text", text: rows.map((r) => `${r.id} ${r.title}`).join("\n") }],
  structuredContent: { count: rows.length, sessions: rows, note: "x".repeat(30_000) },
};

describe("a tool answer's budget", () => {
  it("leaves an answer that fits as it is", () => {
    const small: CallToolResult = { content: [{ type: "text", text: "ok" }], structuredContent: { ok: true } };
    expect(withinBudget(small, "oc_x", new KeptAnswers())).toBe(small);
  });

  it("cuts one over it to the budget, keeps its fields' types, and says where the whole is", () => {
    const kept = new KeptAnswers();
    const cut = withinBudget(big, "oc_sessions", kept);
    const text = (cut.content[0] as { text: string }).text;
    expect(text.length).toBeLessThanOrEqual(ANSWER_BUDGET_CHARS);
    expect(JSON.stringify(cut.structuredContent).length).toBeLessThanOrEqual(ANSWER_BUDGET_CHARS);
    const data = cut.structuredContent as {
      count: number;
      sessions: unknown[];
      note: string;
      overflow: { data: string; text: string; pages: { text: number; data: number } };
    };
    expect(data.count).toBe(3_000);
    expect(data.sessions.length).toBeGreaterThan(0);
    expect(data.sessions[0]).toEqual(rows[0]);
    expect(typeof data.note).toBe("string");
    expect(cut.content[1]).toMatchObject({ type: "resource_link", uri: data.overflow.data });
    expect(text).toContain(data.overflow.data);
    expect(text).toContain(data.overflow.text);
    // The pages put the whole answer back together.
    const id = /opencode:\/\/answer\/([^/]+)\//.exec(data.overflow.data)![1]!;
    for (const part of ["text", "data"] as const) {
      let whole = "";
      for (let page = 1; page <= data.overflow.pages[part]; page++) whole += kept.page(id, part, page).text;
      expect(whole).toBe(part === "text" ? (big.content[0] as { text: string }).text : JSON.stringify(big.structuredContent));
    }
    expect(() => kept.page(id, "text", data.overflow.pages.text + 1)).toThrow(/does not exist/);
  });

  it("keeps the last cut answers only, and says so for an older one", () => {
    const kept = new KeptAnswers();
    const first = withinBudget(big, "oc_sessions", kept);
    for (let i = 0; i < 16; i++) withinBudget(big, "oc_sessions", kept);
    const id = /opencode:\/\/answer\/([^/]+)\//.exec((first.structuredContent as { overflow: { data: string } }).overflow.data)![1]!;
    expect(() => kept.page(id, "text", 1)).toThrow(/no longer kept.*call the tool again/);
  });
});
