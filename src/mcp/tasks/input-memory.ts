// What a task's inputRequests need remembered between requests (any server process on the same
// state dir may take the next one): when each request key was first shown to the client (so an
// answer is timed as elicitation's would be: a decline faster than anyone could read the form came
// from the client), and the keys whose answer gave the request back to the calling model (the
// spec forbids showing a key again once it was answered). One small file per task, written whole.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface InputMemory {
  /** Request key → epoch ms when tasks/get first listed it. */
  shown: Record<string, number>;
  /** Keys answered without settling the request (it stays pending for oc_answer or the console). */
  returned: string[];
}

const EMPTY: InputMemory = { shown: {}, returned: [] };

function fileOf(stateDir: string, taskId: string): string {
  // Task ids are checked (dlg_ and base64url) before any file is named after them.
  return join(stateDir, "task-inputs", `${taskId}.json`);
}

export async function readInputMemory(stateDir: string, taskId: string): Promise<InputMemory> {
  try {
    const parsed = JSON.parse(await readFile(fileOf(stateDir, taskId), "utf8")) as Partial<InputMemory>;
    return { shown: parsed.shown ?? {}, returned: parsed.returned ?? [] };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ...EMPTY, shown: {}, returned: [] };
    throw new Error(`cannot read the task's input record: ${(error as Error).message}`, { cause: error });
  }
}

export async function writeInputMemory(stateDir: string, taskId: string, memory: InputMemory): Promise<void> {
  const file = fileOf(stateDir, taskId);
  await mkdir(join(stateDir, "task-inputs"), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(memory), { mode: 0o600 });
  await rename(temp, file);
}
