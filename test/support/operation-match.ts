// Which opencode operation a method + path is, from the generated operation table: recorded
// interactions carry their operationId so the schema test knows which response schema applies.
import { operations, type OperationId } from "../../generated/operations.js";

interface Route {
  id: OperationId;
  method: string;
  pattern: RegExp;
  /** Literal routes win over templated ones (`/session/status` before `/session/{sessionID}`). */
  params: number;
}

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

const routes: Route[] = Object.values(operations)
  .map((op) => {
    const parts = op.path.split(/(\{[^}]+\}|\*)/).filter(Boolean);
    const source = parts.map((p) => (p === "*" ? ".*" : p.startsWith("{") ? "[^/]+" : escape(p))).join("");
    return { id: op.id, method: op.method.toUpperCase(), pattern: new RegExp(`^${source}$`), params: parts.filter((p) => p === "*" || p.startsWith("{")).length };
  })
  .sort((a, b) => a.params - b.params);

export function operationFor(method: string, path: string): OperationId | undefined {
  const upper = method.toUpperCase();
  return routes.find((r) => r.method === upper && r.pattern.test(path))?.id;
}
