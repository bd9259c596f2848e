// Hand one task to an agent and wait for the result: what it answered, what it changed, what it
// cost. `npx tsx examples/delegate.ts /abs/project "Add a README"` (see examples/README.md).
import { conductorFromEnv, runExample } from "./connect.js";

await runExample(async () => {
  const conductor = conductorFromEnv();
  try {
    const result = await conductor.delegate({
      task: process.argv[3] ?? "Write hello.txt containing the word hello.",
      title: "example: delegate",
      permissions: "auto", // the agent may edit files and run commands without asking
      onProgress: (p) => console.error(`… ${p.message}`),
    });
    // The status is what opencode recorded for the turn: done, error, interrupted, lost, blocked, …
    console.log(`${result.status}: ${result.answer}`);
    for (const file of result.files ?? []) console.log(`changed ${file.path}`);
    console.log(
      JSON.stringify({ status: result.status, sessionId: result.sessionId, files: (result.files ?? []).map((f) => f.path), tokens: result.tokens?.total }),
    );
    return result.status === "done" ? 0 : 1;
  } finally {
    conductor.close();
  }
});
