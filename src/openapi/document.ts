// The shapes of an OpenAPI document that the spec reader, the bundler and codegen read.
export type JsonSchema = { [key: string]: unknown };

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown> | undefined>;
  [key: string]: unknown;
}
