// Which tool calls edit a file, and the file they name (1.x `filePath`, 2.x `path`).

/** Tools whose completed call edits the file named in its input. */
export const FILE_TOOLS = new Set(["write", "edit", "apply_patch", "patch", "multiedit"]);

export function filePathOf(input: Record<string, unknown>, metadata?: Record<string, unknown>): string | undefined {
  for (const value of [input.filePath, input.path, metadata?.filepath, metadata?.filePath]) {
    if (typeof value === "string" && value) return value;
  }
  return undefined;
}
