// What a turn did to the project's files: opencode's diff of one file, and the summary's row.

/** One file of a turn's (or a session's) diff as opencode records it. */
export interface FileDiff {
  file?: string;
  patch?: string;
  additions: number;
  deletions: number;
  status?: "added" | "deleted" | "modified";
}

/** A changed file as a turn summary reports it. */
export interface FileChange {
  path: string;
  status?: "added" | "deleted" | "modified";
  additions?: number;
  deletions?: number;
}
