// How an audit entry keeps a prompt: its hash, length and first line, never the prompt itself. A
// module of its own so that node:crypto loads with the first call that writes one, not with the
// audit trail at start (docs/performance.md, "Start-up").
import { createHash } from "node:crypto";

export interface PromptDigest {
  sha256: string;
  length: number;
  first_line: string;
}

export function digestPrompt(text: string): PromptDigest {
  const first = text.split("\n", 1)[0] ?? "";
  return { sha256: createHash("sha256").update(text).digest("hex"), length: text.length, first_line: first.length > 120 ? `${first.slice(0, 117)}...` : first };
}
