// Every tool, in the order tools/list shows them. One file per tool.
import type { ToolDef } from "../tool.js";

export const ALL_TOOLS: readonly ToolDef[] = [];
