// Picks what a private instance needs of its opencode binary by the binary's major: the only place
// that tells the majors apart for src/core/instances/ (the interface: engine-binary.ts).
import type { EngineBinary } from "./engine-binary.js";
import { V1_BINARY } from "./v1/v1-binary.js";
import { V2_BINARY } from "./v2/v2-binary.js";

/** The binary of major `major` (what `opencode --version` said); anything but 2 is treated as 1.x. */
export function binaryOf(major: number | undefined): EngineBinary {
  return major === 2 ? V2_BINARY : V1_BINARY;
}
