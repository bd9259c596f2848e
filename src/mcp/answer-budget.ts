// Every tool answer has a size budget (docs/answer-budgets.md): its text and its structured content
// each at most ANSWER_BUDGET_CHARS characters, because a calling model's context pays for every one
// of them. An answer over it is cut here, at one place for every tool: the text to its first lines,
// the structured content by halving its longest lists and strings, so its fields keep their types.
// The whole answer is kept (the last KEPT_ANSWERS, in memory) and read in pages of the budget as a
// resource, `opencode://answer/{answer_id}/{text|data}/{page}`; the cut answer says so in `overflow`
// (`text`, `data`: each part's first page) and links the first page of the part that did not fit.
import { ResourceTemplate, type CallToolResult, type McpServer } from "@modelcontextprotocol/server";
import { UsageError } from "../core/errors.js";

export const ANSWER_BUDGET_CHARS = 24_000;
/** Whole answers kept for their pages: an older one is dropped (its pages then say to call the tool again). */
const KEPT_ANSWERS = 16;
/** Room kept in the budget for the note that says where the rest is. */
const NOTE_CHARS = 600;
/** Strings shorter than this are never cut (ids, names, times). */
const CUTTABLE_STRING = 400;

interface Kept {
  tool: string;
  text: string;
  data: string;
}

/** The whole answers that did not fit, per MCP server (an HTTP server has one per client session). */
export class KeptAnswers {
  private readonly answers = new Map<string, Kept>();

  keep(answer: Kept): string {
    // Web Crypto's (global in Node ≥ 19), not node:crypto's: it loads on the first cut answer, not at start.
    const id = globalThis.crypto.randomUUID();
    this.answers.set(id, answer);
    if (this.answers.size > KEPT_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
    return id;
  }

  page(id: string, part: "text" | "data", page: number): { text: string; pages: number } {
    const kept = this.answers.get(id);
    if (!kept) throw new UsageError(`Answer ${id} is no longer kept (only the last ${KEPT_ANSWERS} cut answers are): call the tool again.`);
    const whole = kept[part];
    const pages = Math.max(1, Math.ceil(whole.length / ANSWER_BUDGET_CHARS));
    if (!Number.isInteger(page) || page < 1 || page > pages) throw new UsageError(`Answer ${id} has ${pages} ${part} page(s); page ${page} does not exist.`);
    return { text: whole.slice((page - 1) * ANSWER_BUDGET_CHARS, page * ANSWER_BUDGET_CHARS), pages };
  }
}

const uriOf = (id: string, part: "text" | "data", page: number) => `opencode://answer/${id}/${part}/${page}`;

/** The answer as it fits the budget; an answer that fits is returned as it is. */
export function withinBudget(result: CallToolResult, tool: string, kept: KeptAnswers): CallToolResult {
  const first = result.content[0];
  const text = first?.type === "text" ? first.text : "";
  const data = result.structuredContent === undefined ? "" : JSON.stringify(result.structuredContent);
  if (text.length <= ANSWER_BUDGET_CHARS && data.length <= ANSWER_BUDGET_CHARS) return result;
  const id = kept.keep({ tool, text, data });
  const pages = { text: Math.ceil(text.length / ANSWER_BUDGET_CHARS), data: Math.ceil(data.length / ANSWER_BUDGET_CHARS) };
  // The link goes to the part that did not fit (the data first: tools that cut their own text keep all in it).
  const over = data.length > ANSWER_BUDGET_CHARS ? "data" : "text";
  const overflow = {
    answer_chars: { text: text.length, data: data.length },
    budget_chars: ANSWER_BUDGET_CHARS,
    pages,
    text: uriOf(id, "text", 1),
    data: uriOf(id, "data", 1),
  };
  const note = `\n… cut: this answer is ${text.length} chars of text and ${data.length} of data, over the ${ANSWER_BUDGET_CHARS}-char budget of a tool answer. The whole of it, in pages of ${ANSWER_BUDGET_CHARS} chars: resource ${overflow.data} (the data, ${pages.data} page(s)) and ${overflow.text} (the text, ${pages.text}); or ask ${tool} for less (a smaller limit or a page).`;
  const cutText = text.length > ANSWER_BUDGET_CHARS - NOTE_CHARS ? cutAtLine(text, ANSWER_BUDGET_CHARS - NOTE_CHARS) : text;
  const content = result.structuredContent as Record<string, unknown> | null | undefined;
  const structured = content ? { ...shrink(content, ANSWER_BUDGET_CHARS - NOTE_CHARS), overflow } : undefined;
  return {
    ...result,
    content: [
      { type: "text", text: cutText + note },
      {
        type: "resource_link",
        uri: overflow[over],
        name: `${tool} answer (whole ${over}, page 1 of ${pages[over]})`,
        mimeType: over === "data" ? "application/json" : "text/plain",
      },
      ...result.content.slice(1),
    ],
    ...(structured ? { structuredContent: structured } : {}),
  };
}

function cutAtLine(text: string, max: number): string {
  const head = text.slice(0, max);
  const line = head.lastIndexOf("\n");
  return line > max / 2 ? head.slice(0, line) : head;
}

/** A copy of `value` whose JSON fits `max` chars: its longest lists halved (first items kept) and long strings cut, biggest first. */
function shrink(value: Record<string, unknown>, max: number): Record<string, unknown> {
  const copy = structuredClone(value);
  for (let round = 0; round < 200 && JSON.stringify(copy).length > max; round++) {
    const biggest = largestCuttable(copy);
    if (!biggest) break;
    const { holder, key, node } = biggest;
    if (Array.isArray(node)) (holder as Record<string | number, unknown>)[key] = node.slice(0, Math.floor(node.length / 2));
    else (holder as Record<string | number, unknown>)[key] = `${(node as string).slice(0, Math.floor((node as string).length / 2))}…`;
  }
  if (JSON.stringify(copy).length <= max) return copy;
  // Nothing left to halve (many small fields): keep the top level's plain values only.
  return Object.fromEntries(Object.entries(copy).filter(([, v]) => v === null || typeof v !== "object"));
}

interface Cuttable {
  holder: object;
  key: string | number;
  node: unknown[] | string;
  size: number;
}

function largestCuttable(root: object): Cuttable | undefined {
  let best: Cuttable | undefined;
  const visit = (holder: object, key: string | number, node: unknown): number => {
    const size = node === undefined ? 0 : typeof node === "string" ? node.length + 2 : node && typeof node === "object" ? children(node) : String(node).length;
    const cuttable = (Array.isArray(node) && node.length > 0) || (typeof node === "string" && node.length >= CUTTABLE_STRING);
    if (cuttable && (!best || size > best.size)) best = { holder, key, node: node as unknown[] | string, size };
    return size;
  };
  const children = (node: object): number => {
    let size = 2;
    if (Array.isArray(node)) node.forEach((v, i) => (size += visit(node, i, v) + 1));
    else for (const [k, v] of Object.entries(node)) size += visit(node, k, v) + k.length + 4;
    return size;
  };
  children(root);
  return best;
}

/** The pages of cut answers, as resources (nothing in tools/list). */
export function registerAnswerPages(server: McpServer, kept: KeptAnswers): void {
  server.registerResource(
    "answer-page",
    new ResourceTemplate("opencode://answer/{answer_id}/{part}/{page}", { list: undefined }),
    { title: "A cut tool answer, whole", description: `A tool answer over its budget, in pages of ${ANSWER_BUDGET_CHARS} chars`, mimeType: "text/plain" },
    async (uri, variables) => {
      const part = String(variables.part);
      if (part !== "text" && part !== "data") throw new UsageError(`${uri.href.slice(0, 200)}: expected opencode://answer/{answer_id}/text|data/{page}`);
      const id = String(variables.answer_id);
      const { text, pages } = kept.page(id, part, Number(variables.page));
      const page = Number(variables.page);
      return {
        contents: [{ uri: uri.href, mimeType: part === "data" ? "application/json" : "text/plain", text }],
        _meta: { page, pages, ...(page < pages ? { next: uriOf(id, part, page + 1) } : {}) },
      };
    },
  );
}
