// A reviewer's answer, parsed: the last JSON object in its text (fenced or bare) with a `verdict`
// of "approve" or "request_changes" and its `comments`. The conductor never guesses a verdict from
// prose: an answer without one is refused, and the step says so.
import type { Verdict } from "../run-record.js";

export const VERDICT_FORMAT =
  'End your answer with one JSON block, exactly:\n```json\n{"verdict": "approve" | "request_changes", "comments": ["what to change, with file:line"]}\n```';

export function parseVerdict(answer: string): Verdict | undefined {
  const candidates = [...answer.matchAll(/```(?:json)?\s*(\{[\s\S]*?\})\s*```/g)].map((m) => m[1]!);
  const bare = answer.lastIndexOf("{");
  if (bare >= 0) candidates.push(answer.slice(bare));
  for (const text of candidates.reverse()) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    const v = value as { verdict?: unknown; comments?: unknown };
    if (v?.verdict !== "approve" && v?.verdict !== "request_changes") continue;
    const comments = Array.isArray(v.comments) ? v.comments.map(String) : typeof v.comments === "string" ? [v.comments] : [];
    return { verdict: v.verdict, comments };
  }
  return undefined;
}
