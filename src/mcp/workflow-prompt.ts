// The `walk_workflow` prompt: the calling model walks a workflow itself (attended), one tool call
// per step, in the order the file gives, with the person at the terminal signing off where the
// file says so. The same file runs unattended with oc_workflow start (the conductor walks it).
import type { GetPromptResult, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Step } from "../core/workflows/definition.js";

/** The workflow modules the prompt needs, loaded when it is asked for (prompts/list does not need them). */
async function workflowModules() {
  const [files, parse, template, verdict] = await Promise.all([
    import("../core/workflows/files.js"),
    import("../core/workflows/parse.js"),
    import("../core/workflows/template.js"),
    import("../core/workflows/steps/verdict.js"),
  ]);
  return {
    resolveWorkflow: files.resolveWorkflow,
    runInputs: parse.runInputs,
    fill: template.fill,
    itemsOf: template.itemsOf,
    VERDICT_FORMAT: verdict.VERDICT_FORMAT,
  };
}
type Modules = Awaited<ReturnType<typeof workflowModules>>;

/** `k=v` pairs separated by `;` (a value may hold commas: a list input). */
function pairs(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

export function registerWorkflowPrompt(server: McpServer, directory: string | undefined): void {
  server.registerPrompt(
    "walk_workflow",
    {
      title: "Walk a workflow",
      description: "Walk a workflow file step by step yourself, asking me at each sign-off (attended; oc_workflow start runs it unattended)",
      argsSchema: z.object({
        workflow: z.string().describe("Its name in .opencode/workflows, or a path"),
        inputs: z.string().optional().describe("k=v pairs separated by ;"),
      }),
    },
    async ({ workflow, inputs }): Promise<GetPromptResult> => {
      const m = await workflowModules();
      const { workflow: w, source } = await m.resolveWorkflow({ ref: workflow, directory: directory ?? process.cwd() });
      const values = { inputs: m.runInputs(w, pairs(inputs)), steps: {} };
      const lines = w.steps.map((s, i) => `${i + 1}. ${s.name} (${s.kind}): ${stepCall(s, values, m)}`);
      const text = [
        `Walk the workflow "${w.name}" (${source}) yourself, one step at a time, in this order. Use each step's result in the later ones ({{steps.NAME.output}} is that step's answer). Stop and tell me when a step fails.`,
        ...lines,
        "At every approval step, show me what was done and wait for my answer: never approve for me.",
      ].join("\n");
      return { messages: [{ role: "user", content: { type: "text", text } }] };
    },
  );
}

function stepCall(s: Step, values: Parameters<Modules["fill"]>[1], { fill, itemsOf, VERDICT_FORMAT }: Modules): string {
  if (s.kind === "agent") {
    const args = {
      task: fill(s.prompt, values),
      ...(s.model ? { model: s.model } : {}),
      ...(s.agent ? { agent: s.agent } : {}),
      ...(s.isolation ? { isolation: s.isolation } : {}),
    };
    if (s.each) {
      const tasks = itemsOf(values.inputs[s.each]).map((item) => ({ ...args, task: fill(s.prompt, { ...values, item }) }));
      return `oc_delegate_parallel ${JSON.stringify({ tasks })}`;
    }
    return `oc_delegate ${JSON.stringify(args)}`;
  }
  if (s.kind === "check")
    return `run ${JSON.stringify(s.run)} in that step's directory (oc_session shell, or oc_delegate checks); on failure${s.on_fail ? ` send the output back to "${s.on_fail}" with oc_send, at most ${s.max_retries ?? 2} times` : " stop"}.`;
  if (s.kind === "review")
    return `oc_delegate ${JSON.stringify({ task: `${s.prompt ?? "Review the change of step " + s.of}. ${VERDICT_FORMAT}`, permissions: "readonly", ...(s.model ? { model: s.model } : {}) })}; on request_changes send the comments to "${s.of}" with oc_send, at most ${s.max_rounds ?? 2} rounds.`;
  if (s.kind === "approval") return `ask me: ${JSON.stringify(fill(s.message, values))}; go on only if I approve.`;
  return s.merge_into ? `oc_session merge the branch of "${s.of}" into ${s.merge_into}.` : `push the branch of "${s.of}" to ${s.push!.remote}.`;
}
