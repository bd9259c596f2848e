// The codegen drift check: regenerate into a temp dir, compare with the checked-in folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareDirs, isSame, type DirDifference } from "./compare-dirs.js";
import { writeGenerated } from "./generate.js";

export async function checkGenerated(specFile: string, generatedDir: string): Promise<DirDifference> {
  const fresh = mkdtempSync(join(tmpdir(), "codegen-check-"));
  try {
    await writeGenerated(specFile, fresh);
    return compareDirs(fresh, generatedDir);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/** What to print when the check fails; empty when the folders match. */
export function describeDrift(diff: DirDifference, generatedDir: string, specFile: string): string {
  if (isSame(diff)) return "";
  const dir = generatedDir.replace(/\/+$/, "");
  const lines = [
    `${dir}/ is out of date with ${specFile}:`,
    ...diff.differing.map((f) => `  differs: ${join(dir, f)}`),
    ...diff.missing.map((f) => `  missing: ${join(dir, f)}`),
    ...diff.extra.map((f) => `  extra:   ${join(dir, f)} (not produced by codegen: delete it)`),
    "Run `npm run codegen` to regenerate it (never edit generated/ by hand).",
  ];
  return `${lines.join("\n")}\n`;
}
