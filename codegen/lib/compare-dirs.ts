// Compares two flat folders of generated files byte by byte.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface DirDifference {
  /** Present in both, with different bytes. */
  differing: string[];
  /** Expected but absent from the actual folder. */
  missing: string[];
  /** In the actual folder but not produced by codegen. */
  extra: string[];
}

export function compareDirs(expectedDir: string, actualDir: string): DirDifference {
  const expected = listFiles(expectedDir);
  const actual = new Set(listFiles(actualDir));
  const result: DirDifference = { differing: [], missing: [], extra: [] };
  for (const name of expected) {
    if (!actual.has(name)) result.missing.push(name);
    else if (!readFileSync(join(expectedDir, name)).equals(readFileSync(join(actualDir, name)))) {
      result.differing.push(name);
    }
    actual.delete(name);
  }
  result.extra.push(...[...actual].sort());
  return result;
}

export function isSame(diff: DirDifference): boolean {
  return diff.differing.length + diff.missing.length + diff.extra.length === 0;
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile())
    .sort();
}
