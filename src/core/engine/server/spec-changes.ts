// Which operations the connected server and the pin both have but with a different request or
// response: each server row (codegen's operationRow, schemas bundled) against the pinned row.
// Bundling every operation of a ~480 KB spec takes a while, so it yields to the event loop between
// operations, and runs once per spec (the matrix's recorded answer is used when it has one).
import { isDeepStrictEqual } from "node:util";
import { operationRow } from "../../../openapi/operation-row.js";
import { compatibility } from "./compatibility.js";
import type { PinnedRow, ServerSpec } from "./spec.js";

const compared = (row: PinnedRow) => ({
  method: row.method,
  path: row.path,
  pathParams: row.pathParams,
  query: row.query,
  body: row.body,
  bodyRequired: row.bodyRequired,
  responses: row.responses.map((r) => [r.status, r.contentType, r.schema]),
});

/** Keyed by pin and document. */
const bySha = new Map<string, Promise<string[]>>();

export function changedOperations(spec: ServerSpec): Promise<string[]> {
  if (spec.pinned) return Promise.resolve([]);
  // The matrix's record counts only when it measured the same document against the same pin.
  const recorded = compatibility.versions[spec.version]?.spec;
  if (recorded?.sha256 === spec.sha256 && (recorded.pinned ?? compatibility.pinned) === spec.pin.version) return Promise.resolve(recorded.changed);
  const key = `${spec.pin.version} ${spec.sha256}`;
  let pending = bySha.get(key);
  if (!pending) bySha.set(key, (pending = compute(spec)));
  return pending;
}

async function compute(spec: ServerSpec): Promise<string[]> {
  const changed: string[] = [];
  for (const [id, op] of spec.operations) {
    const pinned = spec.pinnedRow(id);
    if (!pinned) continue;
    await new Promise((resolve) => setImmediate(resolve));
    let row: PinnedRow;
    try {
      row = operationRow(spec.doc, op) as PinnedRow;
    } catch {
      changed.push(id); // a schema the bundler cannot read is a difference too
      continue;
    }
    if (!isDeepStrictEqual(compared(row), compared(pinned))) changed.push(id);
  }
  return changed;
}
