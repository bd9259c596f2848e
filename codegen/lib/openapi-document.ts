// The shapes of an OpenAPI document that codegen reads, shared by the spec reader and the bundler.
export type JsonSchema = { [key: string]: unknown };

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown> | undefined>;
  [key: string]: unknown;
}
