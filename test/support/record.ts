// `npm run record [-- scenario ...]`: runs each scenario against a fresh hermetic opencode, records
// the client's traffic through a recording fetch, scrubs it and writes
// test/fixtures/<version>/<scenario>.json for the msw replay tests. The version is the one the
// server reports: with OPENCODE_BIN pointing at another release, its fixtures land in its own folder.
import { mkdir, writeFile } from "node:fs/promises";
import { connect } from "../../src/client/index.js";
import { resolveOpencodeBinary } from "../../src/client/spawn.js";
import { FIXTURE_VERSION, fixtureDirFor, fixturePath, type Fixture } from "./fixture.js";
import { startOpencode } from "./opencode.js";
import { createRecorder } from "./recording/fetch.js";
import { MISSING_SESSION, scenarios, type Scenario } from "./recording/scenarios.js";
import { scrubFixture } from "./recording/scrub.js";

// Stable stand-ins for what changes every run (ports are random, temp dirs are new).
const PROJECT = "/project";
const HOME = "/home";
const TEMP_ROOT = "/tmp/occ-test";
const SERVER = "http://127.0.0.1:4096";
const MODEL_PORT = 5801;

async function record(scenario: Scenario): Promise<Fixture> {
  const server = await startOpencode(scenario.server);
  try {
    const plain = connect({ url: server.url, password: server.password, directory: server.directory });
    const { version } = await plain.call("global.health");
    const startedAt = Date.now();
    const recorder = createRecorder();
    const client = connect({ url: server.url, password: server.password, directory: server.directory, fetch: recorder.fetch });
    await scenario.run(client, server);
    return scrubFixture(
      { scenario: scenario.name, opencodeVersion: version, interactions: recorder.interactions },
      {
        password: server.password,
        startedAt,
        keepIds: [MISSING_SESSION],
        replace: [
          [server.directory, PROJECT],
          [server.home, HOME],
          [server.root, TEMP_ROOT],
          [server.url, SERVER],
          [`127.0.0.1:${server.model.port}`, `127.0.0.1:${MODEL_PORT}`],
        ],
      },
    );
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(", ")}; known: ${scenarios.map((s) => s.name).join(", ")}`);
  console.log(`recording with ${resolveOpencodeBinary()}`);
  const dirs = new Set<string>();
  for (const scenario of scenarios.filter((s) => wanted.length === 0 || wanted.includes(s.name))) {
    const started = Date.now();
    const fixture = await record(scenario);
    const json = `${JSON.stringify(fixture, null, 2)}\n`;
    const dir = fixtureDirFor(fixture.opencodeVersion);
    dirs.add(dir);
    await mkdir(dir, { recursive: true });
    await writeFile(fixturePath(scenario.name, dir), json);
    const events = fixture.interactions.reduce((n, i) => n + (i.events?.length ?? 0), 0);
    console.log(
      `${scenario.name.padEnd(14)} ${String(fixture.interactions.length).padStart(2)} interactions, ${String(events).padStart(3)} events, ` +
        `${(json.length / 1024).toFixed(1).padStart(6)} kB, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  console.log(`fixtures written to ${[...dirs].join(", ")}`);
  const other = [...dirs].filter((d) => d !== fixtureDirFor(FIXTURE_VERSION));
  if (other.length) console.log(`(the replay tests read ${FIXTURE_VERSION}'s fixtures; the others are for comparison)`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
