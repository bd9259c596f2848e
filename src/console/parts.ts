// A transcript part as the browser shows it: text, reasoning, or a tool call with its input and
// output. Only these fields leave the console (no provider metadata); tool output is cut to a size a
// page can hold. The page renders every field as text.
export interface PartView {
  id: string;
  messageID: string;
  role?: "user" | "assistant";
  type: string;
  text?: string;
  tool?: string;
  status?: string;
  title?: string;
  input?: unknown;
  output?: string;
  error?: string;
}

const MAX_OUTPUT = 20_000;

export function partView(part: Record<string, unknown>, role?: "user" | "assistant"): PartView | undefined {
  const base = { id: String(part.id), messageID: String(part.messageID), ...(role ? { role } : {}), type: String(part.type) };
  if (part.type === "text" || part.type === "reasoning") return { ...base, text: String(part.text ?? "") };
  if (part.type === "tool") {
    const state = (part.state ?? {}) as { status?: string; input?: unknown; output?: unknown; error?: unknown; title?: unknown };
    const output = typeof state.output === "string" ? state.output : undefined;
    return {
      ...base,
      tool: String(part.tool),
      status: state.status,
      ...(typeof state.title === "string" ? { title: state.title } : {}),
      input: state.input,
      ...(output !== undefined ? { output: output.length > MAX_OUTPUT ? `${output.slice(0, MAX_OUTPUT)}… (${output.length} chars)` : output } : {}),
      ...(typeof state.error === "string" ? { error: state.error } : {}),
    };
  }
  return undefined; // step markers, snapshots, patches: not part of what a person reads
}
