// What the compatibility matrix runs against. Each entry names its own starter, so a server that is
// not an `opencode-linux-x64` release (the 2.x engine, a local build) is one more entry here.
import { resolveOpencodeBinary } from "../../src/client/spawn.js";
import { specInfo } from "../../generated/operations.js";
import { opencodeRelease } from "../support/opencode-release.js";
import { startOpencode, type StartOpencodeOptions, type TestOpencode } from "../support/opencode.js";
import { startOpencode2 } from "../support/opencode2.js";

export interface CompatTarget {
  /** Column name in docs/compatibility.md; for a release, its version. */
  name: string;
  /** The version `/global/health` must report, when known in advance. */
  expectVersion?: string;
  /** A hermetic server with the harness's options (scripted model, temp HOME, free port). */
  start(options: StartOpencodeOptions): Promise<TestOpencode>;
}

/** The pin: the `opencode-ai` devDependency the SDK is generated from. */
export const PINNED = specInfo.opencodeVersion;

/**
 * The runnable opencode 2.x: the binary built from the vendored pre-release source (the 2.x e2e
 * suite's server), or `OPENCODE2_BIN` when it names another 2.x binary. Its reported version is
 * recorded with the results. `npm run test:compat -- 2.x` runs this column alone (a few minutes), so
 * it can be re-run cheaply as the v2 engine gains features.
 */
export const V2_TARGET = "2.x";

/** The full matrix (`npm run test:compat` with no arguments): the 1.x releases, then the runnable 2.x. */
export const MATRIX = ["1.1.65", "1.3.2", "1.14.48", "1.15.13", "1.17.19", "1.18.3", "1.18.20", PINNED, "1.18.34", V2_TARGET];

/**
 * What the `compat` vitest project runs without OCC_COMPAT_VERSIONS (`npm test`): the oldest
 * supported and the newest 1.x release. CI (`.ci/run`) sets OCC_COMPAT_VERSIONS=all: every column.
 */
export const DEFAULT_TARGETS = ["1.14.48", "1.18.34"];

/** An `opencode-linux-x64` release from the registry; the pin uses the installed `opencode-ai`. */
export function release(version: string): CompatTarget {
  return {
    name: version,
    expectVersion: version,
    start: async (options) => startOpencode({ ...options, binary: version === PINNED ? resolveOpencodeBinary() : await opencodeRelease(version) }),
  };
}

/** Targets that are not plain releases, by name. */
const NAMED: Record<string, CompatTarget> = {
  [V2_TARGET]: { name: V2_TARGET, start: (options) => startOpencode2(options) },
};

export function targetFor(name: string): CompatTarget {
  return NAMED[name] ?? release(name);
}

/** OCC_COMPAT_VERSIONS (comma list, or `all`), else the CI default. */
export function selectedTargets(env: string | undefined = process.env.OCC_COMPAT_VERSIONS): CompatTarget[] {
  const names = !env
    ? DEFAULT_TARGETS
    : env.trim() === "all"
      ? MATRIX
      : env
          .split(",")
          .map((v) => v.trim())
          .filter(Boolean);
  return names.map(targetFor);
}
