// Setup file of the e2e-v2 project: when the global setup could not prepare opencode 2.x, every
// file of the project fails at once with that error, instead of each test trying the build again.
import { beforeAll } from "vitest";
import { OPENCODE2_BUILD_FAILED, opencode2Unavailable } from "./opencode2-build.js";

beforeAll(() => {
  if (process.env[OPENCODE2_BUILD_FAILED]) throw opencode2Unavailable(process.env[OPENCODE2_BUILD_FAILED]);
});
