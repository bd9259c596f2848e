// The `{{…}}` places of a step's prompt, message or command: `{{inputs.NAME}}`,
// `{{steps.NAME.output}}` (an earlier step's answer), `{{steps.NAME.comments}}` (a review's
// comments) and `{{item}}` (the task's item in a fan-out). parse.ts refuses unknown ones; fill()
// never guesses: a place with no value yet is left empty.

const PLACE = /\{\{\s*([^{}]*?)\s*\}\}/g;

export type TemplateRef =
  | { kind: "input"; name: string; text: string }
  | { kind: "step"; name: string; field: "output" | "comments"; text: string }
  | { kind: "item"; text: string }
  | { kind: "unknown"; text: string };

function refOf(text: string): TemplateRef {
  if (text === "item") return { kind: "item", text };
  const input = /^inputs\.([a-z][a-z0-9_]*)$/.exec(text);
  if (input) return { kind: "input", name: input[1]!, text };
  const step = /^steps\.([a-z][a-z0-9_-]*)\.(output|comments)$/.exec(text);
  if (step) return { kind: "step", name: step[1]!, field: step[2] as "output" | "comments", text };
  return { kind: "unknown", text };
}

export function templateRefs(template: string): TemplateRef[] {
  return [...template.matchAll(PLACE)].map((m) => refOf(m[1]!));
}

export interface TemplateValues {
  inputs: Record<string, string | string[]>;
  steps: Record<string, { output?: string; comments?: string }>;
  item?: string;
}

export function fill(template: string, values: TemplateValues): string {
  return template.replace(PLACE, (_, text: string) => {
    const ref = refOf(text);
    if (ref.kind === "input") {
      const v = values.inputs[ref.name];
      return Array.isArray(v) ? v.join(", ") : (v ?? "");
    }
    if (ref.kind === "step") return values.steps[ref.name]?.[ref.field] ?? "";
    if (ref.kind === "item") return values.item ?? "";
    return "";
  });
}

/** A list input's items: a list as given, a string split at commas (blank items dropped). */
export function itemsOf(value: string | string[] | undefined): string[] {
  const list = Array.isArray(value) ? value : (value ?? "").split(",");
  return list.map((s) => s.trim()).filter(Boolean);
}
