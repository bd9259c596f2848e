// How many tasks of a batch run at once: apart from parallel.ts so that the MCP tool's schema can
// name them without loading the whole delegation core at the server's start.
export const DEFAULT_CONCURRENCY = 12;
export const MAX_CONCURRENCY = 50;
