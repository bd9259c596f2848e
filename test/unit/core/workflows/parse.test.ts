// Workflow files refused before anything runs, each naming the bad field and its line; a good one parsed.
import { describe, expect, it } from "vitest";
import { parseWorkflow, runInputs, WorkflowFileError } from "../../../../src/core/workflows/parse.js";

const GOOD = `name: fix a bug
inputs:
  bug:
    description: what is wrong
  target:
    default: main
steps:
  - name: implement
    kind: agent
    prompt: "Fix this bug: {{inputs.bug}}"
  - name: tests
    kind: check
    run: npm test
    on_fail: implement
    max_retries: 1
  - name: review
    kind: review
    of: implement
  - name: sign-off
    kind: approval
    message: "Merge {{steps.implement.output}} into {{inputs.target}}?"
  - name: merge
    kind: deliver
    of: implement
    merge_into: main
`;

function refusal(text: string): WorkflowFileError {
  try {
    parseWorkflow(text, "wf.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowFileError);
    return error as WorkflowFileError;
  }
  throw new Error("parsed, but should have been refused");
}

describe("workflow files", () => {
  it("parses the five step kinds with their defaults", () => {
    const w = parseWorkflow(GOOD);
    expect(w.steps.map((s) => s.kind)).toEqual(["agent", "check", "review", "approval", "deliver"]);
    expect(w.inputs.target).toEqual({ default: "main" });
  });

  it("reads JSON too", () => {
    const w = parseWorkflow(JSON.stringify({ name: "j", steps: [{ name: "a", kind: "agent", prompt: "hi" }] }));
    expect(w.steps[0]!.name).toBe("a");
  });

  it("refuses an unknown step kind, naming the field and its line", () => {
    const e = refusal(GOOD.replace("kind: approval", "kind: sign"));
    expect(e.field).toBe("steps[3].kind");
    expect(e.line).toBe(20);
    expect(e.message).toBe('wf.yaml:20: steps[3].kind: unknown step kind "sign": use one of agent, check, review, approval, deliver');
  });

  it("refuses a template naming a missing input", () => {
    const e = refusal(GOOD.replace("{{inputs.bug}}", "{{inputs.issue}}"));
    expect(e.field).toBe("steps[0].prompt");
    expect(e.line).toBe(10);
    expect(e.problem).toContain('no input is named "issue"');
  });

  it("refuses a cycle in on_fail: itself, or a later step", () => {
    const self = refusal(GOOD.replace("on_fail: implement", "on_fail: tests"));
    expect(self.field).toBe("steps[1].on_fail");
    expect(self.line).toBe(14);
    expect(self.problem).toContain("a cycle");
    const later = refusal(GOOD.replace("on_fail: implement", "on_fail: review"));
    expect(later.problem).toContain('names "review", which comes later: a cycle');
  });

  it("refuses an unknown field, a missing field, a bad value, a duplicate name, broken YAML", () => {
    expect(refusal(GOOD.replace("    max_retries: 1", "    retries: 1"))).toMatchObject({ field: "steps[1].retries", line: 15 });
    expect(refusal(GOOD.replace('    prompt: "Fix this bug: {{inputs.bug}}"\n', ""))).toMatchObject({ field: "steps[0].prompt", line: 8 });
    expect(refusal(GOOD.replace("max_retries: 1", "max_retries: 0"))).toMatchObject({ field: "steps[1].max_retries", line: 15 });
    expect(refusal(GOOD.replace("name: review", "name: tests"))).toMatchObject({ field: "steps[2].name", line: 16 });
    expect(refusal("name: x\nsteps: [").message).toMatch(/^wf\.yaml:\d+: not valid YAML or JSON/);
    expect(refusal("- a\n- b").message).toContain("a workflow is a mapping");
  });

  it("refuses a reference to an unknown step, or to a step of the wrong kind", () => {
    expect(refusal(GOOD.replace("of: implement\n  - name: sign-off", "of: implementer\n  - name: sign-off")).problem).toContain(
      'no step is named "implementer"',
    );
    expect(refusal(GOOD.replace("on_fail: implement", "on_fail: review").replace("max_retries: 1", "max_retries: 1")).field).toBe("steps[1].on_fail");
  });

  it("inputs: a missing one is refused, naming it; defaults fill the rest; unknown ones are refused", () => {
    const w = parseWorkflow(GOOD);
    expect(() => runInputs(w, {})).toThrow('needs the input "bug" (what is wrong)');
    expect(runInputs(w, { bug: "crash" })).toEqual({ bug: "crash", target: "main" });
    expect(() => runInputs(w, { bug: "x", colour: "red" })).toThrow('has no input "colour"');
  });
});

describe("examples/workflows", () => {
  it.each(["fix-a-bug.yaml", "fan-out-refactor.yaml"])("%s parses", async (file) => {
    const { readFile } = await import("node:fs/promises");
    const text = await readFile(new URL(`../../../../examples/workflows/${file}`, import.meta.url), "utf8");
    const w = parseWorkflow(text, file);
    expect(w.steps.length).toBeGreaterThan(2);
  });
});
