// Renders generated/README.md. No dates or versions in it, so it never changes on its own.
export function renderReadme(): string {
  return `# generated/ — DO NOT EDIT

Everything in this folder is generated from \`spec/\` by \`npm run codegen\`
(\`codegen/generate.ts\`): \`generated/\` from \`spec/openapi.json\` (opencode 1.x, the v1 API) and
\`generated/v2/\` from \`spec/v2/openapi.json\` (opencode 2.0.26, the v2 API under \`/api\`). Hand edits are overwritten, and \`npm run codegen:check\` (run in CI)
fails when this folder differs from what the spec produces.

To regenerate after an opencode upgrade:

\`\`\`sh
npm run spec:fetch && npm run codegen
\`\`\`

See \`docs/upgrading-opencode.md\` for the whole procedure.

| file | what it holds |
|---|---|
| \`openapi.d.ts\` | TypeScript types of every path, operation and schema, from openapi-typescript (\`--empty-objects-unknown\`); used by the openapi-fetch client |
| \`operations.ts\` | \`operations\`: one row per operationId (method, path, summary, tags, read-only and streaming flags, standalone JSON Schemas for path params, query and body that Ajv2020 compiles alone, response summaries), and \`specInfo\` (title, version, opencode version, sha256 of the spec, operation count) |
| \`README.md\` | this file |
`;
}
