// opencode-conductor as a library: the typed opencode client (and, as they land, the core operations).
export * from "./client/index.js";
export { operations, type OperationSpec } from "../generated/operations.js";
