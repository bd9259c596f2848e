// The person behind a test client's approval forms (elicitation/create, on either era: a
// 2026-07-28 SDK client asks the same handler for an input_required round): every form shown, how
// the next ones are answered, and how long the next one is read (an answer faster than a person
// reads is taken as the client's own). Plus the audit trail those answers end up in.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client, ElicitRequest, ElicitResult } from "@modelcontextprotocol/client";

export class FormAnswers {
  readonly forms: ElicitRequest["params"][] = [];
  /** How the person answers (until told otherwise: no form is expected). */
  reply: (params: ElicitRequest["params"]) => ElicitResult = () => {
    throw new Error("no form expected");
  };
  /** How long the person takes over the next form (then back to answering at once). */
  slowNext = 0;

  /** The client's forms come to this person. */
  attach(client: Client): void {
    client.setRequestHandler("elicitation/create", async (request) => {
      this.forms.push(request.params);
      const reading = this.slowNext;
      this.slowNext = 0;
      if (reading > 0) await new Promise((resolve) => setTimeout(resolve, reading));
      return this.reply(request.params);
    });
  }
}

/** The audit trail of a server's state dir, one object per line. */
export function auditLines(stateDir: string): Array<Record<string, any>> {
  return readFileSync(join(stateDir, "audit.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, any>);
}
