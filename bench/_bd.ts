import { listedTools } from "../src/mcp/tool-list.js";
const tools = (await listedTools({})) as any[];
for (const t of tools) console.log(t.name, JSON.stringify(t).length, "|", t.description.length, t.description, "\n   OUT", JSON.stringify(t.outputSchema));
