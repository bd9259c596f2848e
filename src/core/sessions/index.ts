// The session functions as one namespace for the library's `sessions` export.
export * from "./rows.js";
export * from "./info.js";
export * from "./messages.js";
export * from "./diff.js";
export * from "./actions.js";
export * from "./defaults.js";
