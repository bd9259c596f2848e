// oc_workflow through the built MCP server on the real opencode 1.x: the shared suite (test/support/workflow-suite.ts).
import { WORKFLOW_V1 } from "../../support/workflow-majors.js";
import { workflowSuite } from "../../support/workflow-suite.js";

workflowSuite(WORKFLOW_V1);
