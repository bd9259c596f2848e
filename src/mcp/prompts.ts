// MCP prompts for the common delegations, for clients that offer prompts as slash commands: each
// expands to a user message saying which tool to call with which arguments, so the model does the
// work with the tools (and the user sees the plan in their own words first).
import type { McpServer, GetPromptResult } from "@modelcontextprotocol/server";
import { z } from "zod";

const say = (text: string): GetPromptResult => ({ messages: [{ role: "user", content: { type: "text", text } }] });
const list = (csv: string) =>
  csv
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    "review_in_parallel",
    {
      title: "Review in parallel",
      description: "One read-only opencode review per path, all at once (oc_delegate_parallel)",
      argsSchema: z.object({ paths: z.string().describe("Comma-separated files or folders"), focus: z.string().optional().describe("What to look for") }),
    },
    ({ paths, focus }) => {
      const tasks = list(paths).map((p) => ({
        task: `Review ${p}${focus ? ` for ${focus}` : ""}. Do not change files; list concrete findings with file:line.`,
        permissions: "readonly",
      }));
      return say(`Call oc_delegate_parallel with ${JSON.stringify({ tasks })}, then summarise the findings of every task, most important first.`);
    },
  );

  server.registerPrompt(
    "fix_with_checks",
    {
      title: "Fix with checks",
      description: "Delegate a fix that must pass a check command; failures go back to the agent (oc_delegate checks)",
      argsSchema: z.object({ task: z.string().describe("What to fix"), check: z.string().describe("Command that must exit 0, e.g. npm test") }),
    },
    ({ task, check }) =>
      say(
        `Call oc_delegate with ${JSON.stringify({ task, checks: [check], max_rounds: 3 })}. If it ends "checks_failed", show the last failure and ask me how to proceed; if "blocked", answer with oc_answer only what the task needs.`,
      ),
  );

  server.registerPrompt(
    "migrate_in_batches",
    {
      title: "Migrate in batches",
      description: "Apply one change to many files, a batch of parallel tasks at a time",
      argsSchema: z.object({
        instruction: z.string().describe("The change to make"),
        files: z.string().describe("Comma-separated files"),
        batch_size: z.string().optional().describe("Files per batch (default 4)"),
      }),
    },
    ({ instruction, files, batch_size }) => {
      const size = Math.max(1, Math.min(16, Number(batch_size) || 4));
      const all = list(files);
      const batches = Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size));
      const calls = batches.map(
        (b, i) => `${i + 1}. oc_delegate_parallel ${JSON.stringify({ tasks: b.map((f) => ({ task: `${instruction}\nOnly in ${f}.` })) })}`,
      );
      return say(
        `Migrate in ${batches.length} batch${batches.length === 1 ? "" : "es"}, one after the other; after each, check the results and stop if a task failed:\n${calls.join("\n")}`,
      );
    },
  );
}
