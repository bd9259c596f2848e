// Where workflows are found: a project's `.opencode/workflows/*.yaml|yml|json`, a file path, or
// a text passed inline. A file is read at most MAX_FILE bytes, so a wrong path cannot load a
// huge file into memory.
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, isAbsolute, join, resolve } from "node:path";
import { UsageError } from "../errors.js";
import type { Workflow } from "./definition.js";
import { parseWorkflow, WorkflowFileError } from "./parse.js";

export const WORKFLOW_DIR = join(".opencode", "workflows");
const EXTENSIONS = [".yaml", ".yml", ".json"];
const MAX_FILE = 256 * 1024;

export interface FoundWorkflow {
  /** The file's name without its extension: what `start` takes. */
  name: string;
  path: string;
  /** The parsed workflow, or why it is refused. */
  workflow?: Workflow;
  error?: string;
}

/** The project's workflows, each parsed (a bad one is listed with its error). */
export async function listWorkflows(directory: string): Promise<FoundWorkflow[]> {
  const dir = join(directory, WORKFLOW_DIR);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  const files = names.filter((n) => EXTENSIONS.includes(extname(n))).sort();
  return Promise.all(
    files.map(async (file) => {
      const path = join(dir, file);
      const name = file.slice(0, -extname(file).length);
      try {
        return { name, path, workflow: await readWorkflowFile(path) };
      } catch (error) {
        return { name, path, error: (error as Error).message };
      }
    }),
  );
}

export interface WorkflowSource {
  workflow: Workflow;
  /** The file it came from, or "inline". */
  source: string;
  text: string;
}

/**
 * `ref`: a path (absolute, or relative to `directory`) or the name of one of the project's
 * workflows; `text`: the workflow itself (YAML or JSON).
 */
export async function resolveWorkflow(o: { ref?: string; text?: string; directory: string }): Promise<WorkflowSource> {
  if (o.text !== undefined) {
    if (o.ref !== undefined) throw new UsageError("Give a workflow's name or path, or its text inline: not both.");
    return { workflow: parseWorkflow(o.text, "inline"), source: "inline", text: o.text };
  }
  if (!o.ref) throw new UsageError(`Name a workflow (a file in ${WORKFLOW_DIR}/, or a path), or give its text inline.`);
  const path = await pathOf(o.ref, o.directory);
  const text = await readBounded(path);
  return { workflow: parseWorkflow(text, path), source: path, text };
}

async function pathOf(ref: string, directory: string): Promise<string> {
  const direct = isAbsolute(ref) ? ref : resolve(directory, ref);
  if (await isFile(direct)) return direct;
  if (/^[\w.-]+$/.test(ref))
    for (const ext of EXTENSIONS) {
      const named = join(directory, WORKFLOW_DIR, `${ref}${ext}`);
      if (await isFile(named)) return named;
    }
  const known = (await listWorkflows(directory)).map((w) => w.name);
  throw new UsageError(`No workflow ${JSON.stringify(ref)}: not a file, nor one of ${join(directory, WORKFLOW_DIR)} (${known.join(", ") || "none there"}).`);
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

async function readWorkflowFile(path: string): Promise<Workflow> {
  return parseWorkflow(await readBounded(path), path);
}

async function readBounded(path: string): Promise<string> {
  const info = await stat(path);
  if (info.size > MAX_FILE) throw new WorkflowFileError(path, "", undefined, `${info.size} bytes: a workflow file is at most ${MAX_FILE} bytes`);
  return readFile(path, "utf8");
}
