// Checks one HTTP request against an OpenAPI document: the route exists (method and path), and the
// path parameters, query and JSON body validate against that operation's schemas. Every problem is
// one line naming the engine's operation and the field, so a contract failure says what to fix.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { listOperations, parametersSchema, requestBodySchema, type OpenApiDocument, type SpecOperation } from "../../../src/openapi/spec.js";
import { routeMatcher } from "../operation-match.js";

const addFormats = (addFormatsModule.default ?? addFormatsModule) as unknown as typeof addFormatsModule.default;

export interface SentRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
}

export interface RequestContract {
  /** Problems of one request; `name` is the engine's operation name, for the message. */
  check(name: string, request: SentRequest): string[];
  /** The document's operationId a request goes to, if any. */
  operationOf(request: SentRequest): string | undefined;
}

export function requestContract(doc: OpenApiDocument): RequestContract {
  const ops = listOperations(doc);
  const byId = new Map(ops.map((o) => [o.id, o]));
  const match = routeMatcher(ops);
  // One matcher per operation, method left out: which operations a path is, whatever the method.
  const samePath = ops.map((op) => ({ op, test: routeMatcher([{ ...op, method: "GET" }]) }));
  // Path and query values are strings on the wire: coerce them as the server's decoder does.
  const strict = new Ajv2020({ strict: false, allErrors: true });
  const coercing = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  addFormats(strict);
  addFormats(coercing);
  const compiled = new Map<string, ValidateFunction | null>();
  const validator = (key: string, ajv: Ajv2020, schema: () => object | null) => {
    if (!compiled.has(key)) {
      const s = schema();
      compiled.set(key, s ? ajv.compile(s) : null);
    }
    return compiled.get(key)!;
  };

  const problems = (where: string, validate: ValidateFunction | null, value: unknown, label: string): string[] => {
    if (!validate) return value && Object.keys(value).length > 0 ? [`${where}: sends ${label} ${JSON.stringify(value)} but the operation declares none`] : [];
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${where}: ${label}${e.instancePath.replaceAll("/", ".")} ${e.message}${extra(e.params)}`);
  };

  return {
    operationOf: (r) => match(r.method, r.path),
    check(name, r) {
      const id = match(r.method, r.path);
      if (!id) {
        const there = samePath.filter((c) => c.test("GET", r.path)).map((c) => `${c.op.method.toUpperCase()} (${c.op.id})`);
        return [there.length ? `${name}: ${r.path} takes ${there.join(", ")}, not ${r.method}` : `${name}: no operation for ${r.method} ${r.path}`];
      }
      const op = byId.get(id)!;
      const where = `${name} (${op.id}, ${op.method.toUpperCase()} ${op.path})`;
      const pathParams = paramsOf(op, r.path);
      const out = [
        ...problems(
          where,
          validator(`${id} path`, coercing, () => parametersSchema(doc, op, "path")),
          pathParams,
          "path",
        ),
        ...problems(
          where,
          validator(`${id} query`, coercing, () => parametersSchema(doc, op, "query")),
          r.query,
          "query",
        ),
      ];
      const body = validator(`${id} body`, strict, () => requestBodySchema(doc, op));
      if (r.body !== undefined || body) out.push(...problems(where, body, r.body ?? {}, "body"));
      return out;
    },
  };
}

function paramsOf(op: SpecOperation, path: string): Record<string, string> {
  const names: string[] = [];
  const source = op.path.replace(/[.+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_, n: string) => (names.push(n), "([^/]+)"));
  const found = new RegExp(`^${source}$`).exec(path);
  return Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(found?.[i + 1] ?? "")]));
}

function extra(params: Record<string, unknown>): string {
  if (typeof params.additionalProperty === "string") return ` (${params.additionalProperty})`;
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.join(", ")})`;
  return "";
}
