// Shared plumbing of the codegen scripts: exit codes and one-line error messages.
// Exit 2 = bad usage or unreadable input, 1 = a check failed or something else broke.
import { endQuietlyOnClosedPipe } from "../../src/closed-pipe.js";

export class UsageError extends Error {}

/** Runs a script's main; prints errors as one clear line instead of a stack trace; a reader that closes early (`| head`) ends it quietly. */
export function run(main: () => Promise<number | void>, usage: string): void {
  endQuietlyOnClosedPipe();
  main().then(
    (code) => {
      process.exitCode = code ?? 0;
    },
    (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      // node:util parseArgs reports unknown or malformed options with these codes.
      const code = (error as { code?: unknown } | null)?.code;
      if (error instanceof UsageError || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_"))) {
        process.stderr.write(`${message}\n${usage}\n`);
        process.exitCode = 2;
      } else {
        process.stderr.write(`error: ${message}\n`);
        process.exitCode = 1;
      }
    },
  );
}
