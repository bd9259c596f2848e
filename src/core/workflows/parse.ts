// A workflow file's text (YAML, or JSON, which YAML reads too) to a checked Workflow, or a
// WorkflowFileError naming the first bad field and its line. Everything that would fail a run
// later is refused here, before anything runs: an unknown step kind, a reference to a step that
// does not exist or does not come before, an `on_fail` that would loop, a template naming an
// unknown input or step.
import { createRequire } from "node:module";
import type * as Yaml from "yaml";
import type { Document } from "yaml";
import type { z } from "zod";
import { UsageError } from "../errors.js";
import { STEP_KINDS, workflowSchema, type Step, type Workflow } from "./definition.js";
import { templateRefs } from "./template.js";

/** A workflow file the conductor refuses: `field` is its path (`steps[2].on_fail`), `line` 1-based when known. */
export class WorkflowFileError extends UsageError {
  override name = "WorkflowFileError";
  constructor(
    readonly source: string,
    readonly field: string,
    readonly line: number | undefined,
    readonly problem: string,
  ) {
    super(`${source}${line !== undefined ? `:${line}` : ""}: ${field ? `${field}: ` : ""}${problem}`);
  }
}

type Path = ReadonlyArray<string | number>;

// yaml (CommonJS) is required on the first parse: the MCP server imports this module at start
// (the walk_workflow prompt), and most starts never read a workflow.
const require = createRequire(import.meta.url);
const yaml = () => require("yaml") as typeof Yaml;

/** `steps[2].on_fail` */
export function fieldName(path: Path): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** Parses and checks a workflow; `source` names it in errors (a path, or "inline"). */
export function parseWorkflow(text: string, source = "inline"): Workflow {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : lines.linePos(offset).line);
  const syntax = doc.errors[0];
  if (syntax) throw new WorkflowFileError(source, "", lineAt(syntax.pos[0]), `not valid YAML or JSON: ${syntax.message.split("\n")[0]}`);
  const raw: unknown = doc.toJS();
  const fail = (path: Path, problem: string, at: Path = path): never => {
    throw new WorkflowFileError(source, fieldName(path), lineOf(doc, at, lineAt), problem);
  };
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return fail([], "a workflow is a mapping with `name`, `inputs` and `steps`");
  // An unknown kind first, in words a person can act on (zod would list the union's branches).
  const steps = (raw as { steps?: unknown }).steps;
  if (Array.isArray(steps))
    steps.forEach((s: unknown, i) => {
      const kind = s && typeof s === "object" ? (s as { kind?: unknown }).kind : undefined;
      if (!(STEP_KINDS as readonly unknown[]).includes(kind))
        fail(["steps", i, "kind"], `${kind === undefined ? "missing" : `unknown step kind ${JSON.stringify(kind)}`}: use one of ${STEP_KINDS.join(", ")}`);
    });
  const parsed = workflowSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail(issuePath(issue), issueText(issue));
  }
  checkReferences(parsed.data, fail);
  return parsed.data;
}

function issuePath(issue: z.core.$ZodIssue): Path {
  const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  return issue.code === "unrecognized_keys" ? [...path, issue.keys[0]!] : path;
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return "unknown field (check its spelling in docs/workflows.md)";
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) return `missing (${issue.expected} expected)`;
  return issue.message;
}

/** The line of the node at `path`, or of its nearest parent the document has. */
function lineOf(doc: Document, path: Path, lineAt: (offset: number | undefined) => number | undefined): number | undefined {
  const { isMap, isSeq } = yaml();
  for (let n = path.length; n >= 0; n--) {
    const key = path.slice(0, n);
    const last = key[key.length - 1];
    const parent = n === 0 ? doc.contents : doc.getIn(key.slice(0, -1), true);
    // A map key's own line (for a field that is there, or that is unknown) before its value's.
    if (isMap(parent) && typeof last === "string") {
      const pair = parent.items.find((p) => (p.key as { value?: unknown } | null)?.value === last);
      const range = (pair?.key as { range?: [number, number, number] } | null)?.range;
      if (range) return lineAt(range[0]);
    }
    const node = n === 0 ? doc.contents : doc.getIn(key, true);
    if (node && typeof node === "object" && "range" in node) {
      const range = (node as { range?: [number, number, number] }).range;
      if (range && (isSeq(node) || isMap(node) || n === path.length)) return lineAt(range[0]);
    }
  }
  return undefined;
}

type Fail = (path: Path, problem: string, at?: Path) => never;

function checkReferences(w: Workflow, fail: Fail): void {
  const index = new Map<string, number>();
  w.steps.forEach((s, i) => {
    if (index.has(s.name)) fail(["steps", i, "name"], `a second step named ${JSON.stringify(s.name)}: step names are unique`);
    index.set(s.name, i);
  });
  const earlierAgent = (i: number, field: string, name: string): void => {
    const at = index.get(name);
    if (at === undefined) fail(["steps", i, field], `no step is named ${JSON.stringify(name)} (steps: ${[...index.keys()].join(", ")})`);
    if (at === i) fail(["steps", i, field], `names its own step: a cycle (${field} must name an earlier agent step)`);
    if (at! > i) fail(["steps", i, field], `names ${JSON.stringify(name)}, which comes later: a cycle (${field} must name an earlier agent step)`);
    if (w.steps[at!]!.kind !== "agent") fail(["steps", i, field], `names ${JSON.stringify(name)}, a ${w.steps[at!]!.kind} step: it must name an agent step`);
  };
  w.steps.forEach((s, i) => {
    if ((s.kind === "check" || s.kind === "review" || s.kind === "deliver") && s.of !== undefined) earlierAgent(i, "of", s.of);
    if (s.kind === "check" && s.on_fail !== undefined) earlierAgent(i, "on_fail", s.on_fail);
    if (s.kind === "check" && s.of === undefined && !w.steps.slice(0, i).some((e) => e.kind === "agent"))
      fail(["steps", i], "a check needs an agent step before it (or `of`): it checks that step's work");
    if (s.kind === "agent" && s.each !== undefined && !(s.each in w.inputs)) fail(["steps", i, "each"], `no input is named ${JSON.stringify(s.each)}`);
    if (s.kind === "deliver" && (s.merge_into === undefined) === (s.push === undefined))
      fail(["steps", i], "a deliver step has `merge_into` or `push` (one of them)");
    if (s.kind === "deliver") {
      const of = w.steps[index.get(s.of)!] as Extract<Step, { kind: "agent" }>;
      if (of.isolation !== undefined && of.isolation !== "worktree")
        fail(
          ["steps", i, "of"],
          `delivers ${JSON.stringify(s.of)}, which runs with isolation ${JSON.stringify(of.isolation)}: only a worktree step has a branch to deliver`,
        );
    }
    for (const [field, text] of templates(s)) {
      for (const ref of templateRefs(text)) {
        const where = ["steps", i, field];
        if (ref.kind === "input" && !(ref.name in w.inputs)) fail(where, `{{${ref.text}}}: no input is named ${JSON.stringify(ref.name)}`);
        if (ref.kind === "item" && !(s.kind === "agent" && s.each)) fail(where, `{{item}} is only known in an agent step with \`each\``);
        if (ref.kind === "step") {
          const at = index.get(ref.name);
          if (at === undefined || at >= i) fail(where, `{{${ref.text}}}: no earlier step is named ${JSON.stringify(ref.name)}`);
        }
        if (ref.kind === "unknown")
          fail(where, `{{${ref.text}}} is not known: use {{inputs.NAME}}, {{steps.NAME.output}}, {{steps.NAME.comments}} or {{item}}`);
      }
    }
  });
}

function templates(s: Step): Array<[string, string]> {
  if (s.kind === "agent") return [["prompt", s.prompt]];
  if (s.kind === "review") return s.prompt ? [["prompt", s.prompt]] : [];
  if (s.kind === "approval") return [["message", s.message]];
  if (s.kind === "check") return (Array.isArray(s.run) ? s.run : [s.run]).map((c) => ["run", c]);
  if (s.kind === "deliver")
    return [
      ...(s.merge_into ? [["merge_into", s.merge_into] as [string, string]] : []),
      ...(s.push?.branch ? [["push", s.push.branch] as [string, string]] : []),
    ];
  return [];
}

/** The inputs a run gets: the given ones, defaults for the rest; a missing or unknown one is refused, naming it. */
export function runInputs(w: Workflow, given: Record<string, unknown>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of Object.keys(given)) {
    if (!(name in w.inputs))
      throw new UsageError(`Workflow ${JSON.stringify(w.name)} has no input ${JSON.stringify(name)} (inputs: ${Object.keys(w.inputs).join(", ") || "none"}).`);
  }
  for (const [name, spec] of Object.entries(w.inputs)) {
    const value = given[name] ?? spec.default;
    if (value === undefined)
      throw new UsageError(
        `Workflow ${JSON.stringify(w.name)} needs the input ${JSON.stringify(name)}${spec.description ? ` (${spec.description})` : ""}: give it.`,
      );
    if (typeof value !== "string" && !(Array.isArray(value) && value.every((v) => typeof v === "string")))
      throw new UsageError(`Input ${JSON.stringify(name)} must be text or a list of text.`);
    out[name] = value;
  }
  return out;
}
