// tasks/get, tasks/update and tasks/cancel of the Tasks extension, over conductor.delegations: the
// task id is the delegation id, so any server process sharing the state dir (or the queue's Redis)
// answers for any task, also after the process that started it was killed.
//   tasks/get    → delegations.get (the conductor's verdict; the pending requests as inputRequests)
//   tasks/update → each answer settled as an elicitation answer would be (elicit.ts `settle`)
//   tasks/cancel → delegations.cancel (interrupts the opencode sessions, or takes the jobs off the fleet;
//                  an oc_send message queued behind another turn is withdrawn, or refused with -32602)
// Registered with the server; what answers them (task-calls.ts, with the core it calls) loads on
// the first of them, as a tool's module does (docs/performance.md, "Start-up").
import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { TaskMethodsOptions } from "./task-calls.js";
import { TASKS_EXTENSION } from "./wire.js";

export type { TaskMethodsOptions };

const TaskIdParams = z.looseObject({ taskId: z.string() });
// The SDK lifts `inputResponses` out of a 2026-07-28 request's params (ctx.mcpReq.inputResponses).
const UpdateParams = z.looseObject({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() });

const calls = () => import("./task-calls.js");

export function registerTaskMethods(server: McpServer, o: TaskMethodsOptions): void {
  const low = server.server;
  low.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  low.setRequestHandler("tasks/get", { params: TaskIdParams }, async (params, ctx) => (await calls()).getTask(server, o, params, ctx));
  low.setRequestHandler("tasks/update", { params: UpdateParams }, async (params, ctx) => (await calls()).updateTask(server, o, params, ctx));
  low.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async (params, ctx) => (await calls()).cancelTask(server, o, params, ctx));
}
