// oc_workflow through the built MCP server on a real opencode 2.x: the shared suite
// (test/support/workflow-suite.ts), with 2.x's harness server, binary and words (test/support/workflow-majors.ts).
import { WORKFLOW_V2 } from "../support/workflow-majors.js";
import { workflowSuite } from "../support/workflow-suite.js";

workflowSuite(WORKFLOW_V2);
