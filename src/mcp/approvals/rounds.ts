// Approvals for a 2026-07-28 client (MRTR): it has no server-to-client requests, so a permission or
// question that stops a turn is given back by the core (the call's wait ends `blocked`), and the
// call answers `input_required` with the same form a 2025-11-25 client gets through elicitation
// (elicit.ts `formFor`). The client asks its user and sends the call again with the answers and the
// signed state (round-state.ts); that call settles each answer exactly as elicitation would
// (`settle`: an answer, a person's refusal, or given back when nobody answered) and waits on the
// same sessions (`ToolDef.resume`) instead of starting anything. Any server process sharing the
// state dir can take the second call.
import type { PendingRequest } from "../../core/model/pending-request.js";
import { inputRequired, inputResponse, type InputRequiredResult, type ServerContext } from "@modelcontextprotocol/server";
import { formFor, giveBack, settle } from "../elicit.js";
import type { ToolContext } from "../tool-def.js";
import { argsDigest, roundCodec, type RoundState } from "./round-state.js";

/** What one call collects for its next round, and what it must not ask again. */
export class InputRounds {
  readonly asked: PendingRequest[] = [];
  private readonly returned: Set<string>;

  constructor(returned: Iterable<string> = []) {
    this.returned = new Set(returned);
  }

  /** Collects `r` for the next round; false when this call already asked it or gave it back. */
  ask(r: PendingRequest): boolean {
    if (this.returned.has(r.id) || this.asked.some((a) => a.id === r.id)) return false;
    this.asked.push(r);
    return true;
  }

  /** `r` went back to the calling model (nobody answered): the rest of the call leaves it pending. */
  gaveBack(id: string): void {
    this.returned.add(id);
  }

  get returnedIds(): string[] {
    return [...this.returned];
  }
}

/** The state a re-sent call carries, or undefined on a first call (the SDK verified it: roundVerifier). */
export function roundStateOf(request: ServerContext): RoundState | undefined {
  return request.mcpReq.requestState<RoundState>();
}

/** For ServerOptions.requestState.verify: a state this state dir's key did not sign is refused before any tool runs. */
export function roundVerifier(stateDir: string) {
  return async (state: string, request: ServerContext): Promise<RoundState> => (await roundCodec(stateDir)).verify(state, request);
}

/** A state minted for another call (another tool, other arguments) is not this call's. */
export function stateMismatch(state: RoundState, tool: string, args: Record<string, unknown>): string | undefined {
  if (state.v !== 1) return "it comes from another version of this server";
  if (state.tool !== tool) return `it belongs to a call of ${state.tool}`;
  if (state.args !== argsDigest(args)) return "the arguments differ from the call that was asked";
  return undefined;
}

/** Settles each request the last round asked, from the client's answers (a missing answer: nobody answered). */
export async function settleRound(ctx: ToolContext, state: RoundState, responses: ServerContext["mcpReq"]["inputResponses"], now = Date.now()): Promise<void> {
  const elapsed = Math.max(0, now - state.asked);
  for (const r of state.requests) {
    const view = inputResponse(responses, r.id);
    const conductor = await ctx.conductor(r.sessionId);
    if (view.kind === "elicit") {
      await settle(ctx, conductor, r, { action: view.action, ...(view.content ? { content: formValues(view.content) } : {}) }, elapsed);
    } else {
      await giveBack(ctx, r, { by: "client", action: "missing", elapsed, reason: "the client sent the call again without an answer to it" });
    }
  }
}

type FormValue = string | number | boolean | string[];

/** Only what a form can hold: the client's answer is untrusted (the replies read it defensively too). */
export function formValues(content: Record<string, unknown>): Record<string, FormValue> {
  const ok = (v: unknown): v is FormValue =>
    typeof v === "string" || typeof v === "number" || typeof v === "boolean" || (Array.isArray(v) && v.every((x) => typeof x === "string"));
  return Object.fromEntries(Object.entries(content).filter((e): e is [string, FormValue] => ok(e[1])));
}

/** The input_required answer that asks the collected requests (forms scrubbed by `scrub`). */
export async function askRound(
  stateDir: string,
  o: {
    tool: string;
    args: Record<string, unknown>;
    round: number;
    asked: PendingRequest[];
    sessions: Array<string | null>;
    rounds: InputRounds;
    ctx: ToolContext;
  },
  scrub: (text: string) => string,
): Promise<InputRequiredResult> {
  const state: RoundState = {
    v: 1,
    tool: o.tool,
    args: argsDigest(o.args),
    round: o.round,
    asked: Date.now(),
    requests: o.asked,
    sessions: o.sessions,
    returned: o.rounds.returnedIds,
    refused: o.ctx.refused ?? [],
  };
  const inputRequests = Object.fromEntries(
    o.asked.map((r) => {
      const form = formFor(r);
      return [r.id, inputRequired.elicit({ message: scrub(form.message), requestedSchema: form.requestedSchema })];
    }),
  );
  return inputRequired({ inputRequests, requestState: await (await roundCodec(stateDir)).mint(state) });
}
