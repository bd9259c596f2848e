// Human-readable and JSON renderings of a SpecDiff.
import type { Change, OperationChange, OperationRef, SchemaChange, SpecDiff } from "./diff.js";

const MAX_ITEMS = 6; // per list in the text output; the JSON output lists them all

export interface DiffTotals {
  old: number;
  new: number;
  added: number;
  removed: number;
  changed: number;
  /** Changed in what they accept (method, path, parameters, body). */
  changedRequest: number;
  /** Changed only in what they return. */
  changedResponsesOnly: number;
}

export function totals(diff: SpecDiff): DiffTotals {
  const changedRequest = diff.changed.filter((c) => c.request).length;
  return {
    old: diff.oldCount,
    new: diff.newCount,
    added: diff.added.length,
    removed: diff.removed.length,
    changed: diff.changed.length,
    changedRequest,
    changedResponsesOnly: diff.changed.length - changedRequest,
  };
}

export function totalLine(diff: SpecDiff): string {
  const t = totals(diff);
  return (
    `${t.old} → ${t.new} operations: ${t.added} added, ${t.removed} removed, ${t.changed} changed ` +
    `(${t.changedRequest} in the request, ${t.changedResponsesOnly} in responses only)`
  );
}

export function formatDiffJson(diff: SpecDiff): string {
  return `${JSON.stringify({ totals: totals(diff), ...diff }, null, 2)}\n`;
}

export function formatDiffText(diff: SpecDiff): string {
  const lines: string[] = [];
  const section = (title: string, count: number) => lines.push("", `${title} (${count}):`);
  section("Added", diff.added.length);
  lines.push(...diff.added.map(opLine));
  section("Removed", diff.removed.length);
  lines.push(...diff.removed.map(opLine));
  const request = diff.changed.filter((c) => c.request);
  const responses = diff.changed.filter((c) => !c.request);
  section("Changed in the request: parameters, body, method or path", request.length);
  lines.push(...request.flatMap(changeLines));
  section("Changed in responses only", responses.length);
  lines.push(...responses.flatMap(changeLines));
  lines.push("", totalLine(diff));
  return `${lines.slice(1).join("\n")}\n`;
}

function opLine(op: OperationRef): string {
  return `  ${op.id}  ${op.method.toUpperCase()} ${op.path}`;
}

function changeLines(op: OperationChange): string[] {
  return [opLine(op), ...op.changes.map((c) => `      ${describeChange(c)}`)];
}

export function describeChange(c: Change): string {
  switch (c.kind) {
    case "method":
      return `method ${c.from.toUpperCase()} → ${c.to.toUpperCase()}`;
    case "path":
      return `path ${c.from} → ${c.to}`;
    case "param-added":
      return `${c.in} param ${c.name} added (${c.required ? "required" : "optional"})`;
    case "param-removed":
      return `${c.in} param ${c.name} removed`;
    case "param-required":
      return `${c.in} param ${c.name} now ${c.to ? "required" : "optional"}`;
    case "param-schema":
      return `${c.in} param ${c.name} ${schemaText(c)}`;
    case "body-added":
      return `request body added (${c.required ? "required" : "optional"})`;
    case "body-removed":
      return "request body removed";
    case "body-required":
      return `request body now ${c.to ? "required" : "optional"}`;
    case "body-content-added":
    case "body-content-removed":
      return `request body ${c.contentType} ${c.kind === "body-content-added" ? "added" : "removed"}`;
    case "body-schema":
      return `request body${mediaText(c.contentType)} ${schemaText(c)}`;
    case "response-added":
    case "response-removed":
      return `response ${c.status} ${c.kind === "response-added" ? "added" : "removed"}`;
    case "response-content-added":
    case "response-content-removed":
      return `response ${c.status} ${c.contentType} ${c.kind === "response-content-added" ? "added" : "removed"}`;
    case "response-schema":
      return `response ${c.status}${mediaText(c.contentType)} ${schemaText(c)}`;
  }
}

function mediaText(contentType: string): string {
  return contentType === "application/json" ? "" : ` (${contentType})`;
}

function schemaText(c: SchemaChange): string {
  const parts = [c.from === c.to ? `schema changed (${c.to})` : `schema ${c.from} → ${c.to}`];
  const p = c.properties;
  if (p) {
    const lists: [string, string[]][] = [
      ["properties added", p.added],
      ["removed", p.removed],
      ["changed", p.changed],
      ["now required", p.nowRequired],
      ["now optional", p.nowOptional],
    ];
    for (const [label, names] of lists) if (names.length > 0) parts.push(`${label}: ${list(names)}`);
  }
  if (c.components.length > 0) parts.push(`components changed: ${list(c.components)}`);
  return parts.join("; ");
}

function list(names: string[]): string {
  const more = names.length > MAX_ITEMS ? ` and ${names.length - MAX_ITEMS} more` : "";
  return `${names.slice(0, MAX_ITEMS).join(", ")}${more}`;
}
