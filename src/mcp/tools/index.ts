// Every tool, in the order tools/list shows them. One file per tool.
import type { ToolDef } from "../tool-def.js";
import { ocAnswer } from "./oc_answer.js";
import { ocApi } from "./oc_api.js";
import { ocApiOps } from "./oc_api_ops.js";
import { ocAsk } from "./oc_ask.js";
import { ocAudit } from "./oc_audit.js";
import { ocCatalog } from "./oc_catalog.js";
import { ocDelegate } from "./oc_delegate.js";
import { ocDelegateParallel } from "./oc_delegate_parallel.js";
import { ocInstances } from "./oc_instances.js";
import { ocInterrupt } from "./oc_interrupt.js";
import { ocModels } from "./oc_models.js";
import { ocPending } from "./oc_pending.js";
import { ocResult } from "./oc_result.js";
import { ocSend } from "./oc_send.js";
import { ocSession } from "./oc_session.js";
import { ocSessions } from "./oc_sessions.js";
import { ocStatus } from "./oc_status.js";
import { ocWait } from "./oc_wait.js";
import { ocWorkflow } from "./oc_workflow.js";

export const ALL_TOOLS: readonly ToolDef[] = [
  ocDelegate,
  ocDelegateParallel,
  ocAsk,
  ocSend,
  ocWait,
  ocResult,
  ocInterrupt,
  ocPending,
  ocAnswer,
  ocSessions,
  ocSession,
  ocStatus,
  ocModels,
  ocCatalog,
  ocApiOps,
  ocApi,
  ocAudit,
  ocInstances,
  ocWorkflow,
] as unknown as readonly ToolDef[];
