// What every example reads from the environment: the opencode server (OPENCODE_URL, and
// OPENCODE_PASSWORD when it has one) and the project directory (the first argument, else
// OPENCODE_CONDUCTOR_DIRECTORY). The same variables the MCP server reads (README, Configuration).
import { Conductor, type ConductorOptions } from "opencode-conductor";

export function projectDirectory(): string {
  const directory = process.argv[2] ?? process.env.OPENCODE_CONDUCTOR_DIRECTORY;
  if (!directory) throw new Error("Pass the project directory (an absolute path) as the first argument, or set OPENCODE_CONDUCTOR_DIRECTORY.");
  return directory;
}

export function conductorFromEnv(options: Partial<ConductorOptions> = {}): Conductor {
  const url = process.env.OPENCODE_URL;
  if (!url) throw new Error("Set OPENCODE_URL to a running `opencode serve` (and OPENCODE_PASSWORD if it has one).");
  return new Conductor({ url, password: process.env.OPENCODE_PASSWORD, directory: projectDirectory(), ...options } as ConductorOptions);
}

/** Runs an example: a setup mistake or a failure prints one line, not a stack trace. */
export async function runExample(main: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main();
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  }
}
