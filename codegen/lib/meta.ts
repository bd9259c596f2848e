// spec/meta.json: what was fetched, from which opencode, and a checksum of openapi.json.
// fetchedAt only moves when the spec bytes change, so re-fetching the same spec is a no-op in git.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface SpecMeta {
  opencodeVersion: string;
  fetchedAt: string;
  sha256: string;
  operations: number;
  /** binary: spec:fetch started it; url: spec:fetch read a running server; repository: copied from opencode's source (see `origin`). */
  source: "binary" | "url" | "repository";
  /** Where a `repository` spec came from. */
  origin?: string;
}

export const META_FILE = "meta.json";

export function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** meta.json next to a spec file, or null when absent or unreadable. */
export function readMetaNextTo(specFile: string): SpecMeta | null {
  return readMeta(join(specFile, ".."));
}

export function readMeta(dir: string): SpecMeta | null {
  const file = join(dir, META_FILE);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as SpecMeta;
  } catch {
    return null;
  }
}

/** The meta to write now: the previous fetchedAt is kept when the spec bytes are unchanged. */
export function nextMeta(fresh: Omit<SpecMeta, "fetchedAt" | "origin">, previous: SpecMeta | null, now = new Date()): SpecMeta {
  const fetchedAt = previous?.sha256 === fresh.sha256 && previous.fetchedAt ? previous.fetchedAt : now.toISOString();
  return {
    opencodeVersion: fresh.opencodeVersion,
    fetchedAt,
    sha256: fresh.sha256,
    operations: fresh.operations,
    source: fresh.source,
  };
}

export function formatMeta(meta: SpecMeta): string {
  return `${JSON.stringify(meta, null, 2)}\n`;
}
