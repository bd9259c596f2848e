// Several independent tasks at once, one session each, under one token budget for the whole batch:
// past it every session of the batch is interrupted and the batch's budget says `exceeded`.
// `npx tsx examples/parallel-budget.ts /abs/project [max_tokens]`
import { conductorFromEnv, runExample } from "./connect.js";

await runExample(async () => {
  const maxTokens = Number(process.argv[3] ?? 200_000);
  if (!Number.isFinite(maxTokens) || maxTokens <= 0) throw new Error(`max_tokens must be a positive number, got ${JSON.stringify(process.argv[3])}.`);
  const conductor = conductorFromEnv();
  try {
    const batch = await conductor.parallel(
      [
        { task: "Summarise what this project does in one sentence.", title: "example: summary", permissions: "readonly" },
        { task: "List the files at the top of the project.", title: "example: files", permissions: "readonly" },
        { task: "Say which test command the project uses.", title: "example: tests", permissions: "readonly" },
      ],
      { concurrency: 2, maxTokens },
    );
    for (const r of batch.results) console.log(`[${r.index + 1}] ${r.status}: ${r.answer || r.error?.message || ""}`);
    console.log(`budget: ${batch.budget?.tokens ?? 0} of ${maxTokens} tokens${batch.budget?.exceeded ? " (exceeded: the batch was stopped)" : ""}`);
    console.log(JSON.stringify({ counts: batch.counts, budget: batch.budget, sessions: batch.results.map((r) => r.sessionId) }));
    return batch.results.every((r) => r.status === "done") ? 0 : 1;
  } finally {
    conductor.close();
  }
});
