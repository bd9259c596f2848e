// Unattended work on a private opencode server for the project: started for the directory (or
// reused), under the guard rails (no git push, gh, npm publish, web access or writes outside the
// directory; no credentials in its environment), stopped at the end. The instance uses your
// opencode config (providers, models) like any `opencode serve` started in your home.
// `npx tsx examples/instance.ts /abs/project "Fix the failing test"`
import { join } from "node:path";
import { InstanceManager } from "opencode-conductor";
import { conductorFromEnv, runExample } from "./connect.js";

await runExample(async () => {
  const stateDir =
    process.env.OPENCODE_CONDUCTOR_STATE_DIR ?? join(process.env.XDG_STATE_HOME ?? join(process.env.HOME ?? ".", ".local", "state"), "opencode-conductor");
  const instances = new InstanceManager({ stateDir, ttlS: 600 });
  const conductor = conductorFromEnv({ instances });
  try {
    const result = await conductor.delegate({
      task: process.argv[3] ?? "Write notes.txt with one line about this project.",
      title: "example: instance",
      isolation: "instance",
    });
    console.log(`${result.status} on a private instance: ${result.answer}`);
    if (result.attach) console.log(`watch it live: ${result.attach}`);
    console.log(
      JSON.stringify({ status: result.status, sessionId: result.sessionId, isolation: result.isolation, files: (result.files ?? []).map((f) => f.path) }),
    );
    return result.status === "done" ? 0 : 1;
  } finally {
    conductor.close();
    await instances.stopAll(); // no server left behind
  }
});
