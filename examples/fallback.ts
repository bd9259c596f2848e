// A task on one model that goes on with the next when the model keeps failing (a provider error,
// or retrying past OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S), in the SAME session.
// `OPENCODE_CONDUCTOR_MODEL=anthropic/claude-sonnet-4-5 OPENCODE_CONDUCTOR_FALLBACK=openai/gpt-5 npx tsx examples/fallback.ts /abs/project`
import { conductorFromEnv, runExample } from "./connect.js";

await runExample(async () => {
  const model = process.env.OPENCODE_CONDUCTOR_MODEL;
  const fallbackModels = (process.env.OPENCODE_CONDUCTOR_FALLBACK ?? "").split(",").filter(Boolean);
  if (!model || fallbackModels.length === 0)
    throw new Error("Set OPENCODE_CONDUCTOR_MODEL and OPENCODE_CONDUCTOR_FALLBACK (comma-separated models to fall back to).");
  const conductor = conductorFromEnv();
  try {
    const result = await conductor.delegate({
      task: process.argv[3] ?? "Say hello.",
      title: "example: fallback",
      model,
      fallbackModels,
      permissions: "readonly",
    });
    for (const f of result.fallbacks ?? []) console.log(`fell back from ${f.from} to ${f.to}: ${f.reason}`);
    console.log(`${result.status} on ${result.model}: ${result.answer}`);
    console.log(JSON.stringify({ status: result.status, model: result.model, sessionId: result.sessionId, fallbacks: result.fallbacks ?? [] }));
    return result.status === "done" ? 0 : 1;
  } finally {
    conductor.close();
  }
});
