// What the default toolsets' tools/list may cost a client in context, in JSON characters as served:
// the unit and e2e listing tests and `npm run bench:schema` fail above it (docs/performance.md).
export const TOOLS_LIST_BUDGET_CHARS = 10_000;
