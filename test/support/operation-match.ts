// Which opencode operation a method + path is, from an operation table: recorded interactions
// carry their operationId so the schema test knows which response schema applies. 1.x uses the
// generated table; a 2.x recording builds a matcher from its server's own document.
import { operations, type OperationId } from "../../generated/operations.js";

interface Route {
  id: string;
  method: string;
  pattern: RegExp;
  /** Literal routes win over templated ones (`/session/status` before `/session/{sessionID}`). */
  params: number;
}

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** A matcher over any list of operations (`path` as in OpenAPI, with `{param}` and `*`). */
export function routeMatcher(ops: Iterable<{ id: string; method: string; path: string }>): (method: string, path: string) => string | undefined {
  const routes: Route[] = [...ops]
    .map((op) => {
      const parts = op.path.split(/(\{[^}]+\}|\*)/).filter(Boolean);
      const source = parts.map((p) => (p === "*" ? ".*" : p.startsWith("{") ? "[^/]+" : escape(p))).join("");
      return {
        id: op.id,
        method: op.method.toUpperCase(),
        pattern: new RegExp(`^${source}$`),
        params: parts.filter((p) => p === "*" || p.startsWith("{")).length,
      };
    })
    .sort((a, b) => a.params - b.params);
  return (method, path) => {
    const upper = method.toUpperCase();
    return routes.find((r) => r.method === upper && r.pattern.test(path))?.id;
  };
}

const v1 = routeMatcher(Object.values(operations));

export function operationFor(method: string, path: string): OperationId | undefined {
  return v1(method, path) as OperationId | undefined;
}
