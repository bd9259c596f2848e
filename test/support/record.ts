// `npm run record [-- scenario ...]`: runs each scenario against a fresh hermetic opencode, records
// the client's traffic through a recording fetch, scrubs it and writes
// test/fixtures/<version>/<scenario>.json for the msw replay tests. The version is the one the
// server reports: with OPENCODE_BIN pointing at another release, its fixtures land in its own folder.
// `npm run record -- --v2 [scenario ...]`: the same against the 2.x test server, through the v2
// client, into test/fixtures/2.x-<version>/.
// `npm run record -- --tools [scenario ...]`: MCP tool calls (recording/tool-scenarios.ts) into
// test/fixtures/<version>/tools/, for the tools' unit tests.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { listOperations, type OpenApiDocument } from "../../src/openapi/spec.js";
import { connect } from "../../src/client/index.js";
import { detectServer, fetchServerSpec } from "../../src/client/detect.js";
import { resolveOpencodeBinary } from "../../src/client/spawn.js";
import { connectV2 } from "../../src/client/v2/index.js";
import { FIXTURE_VERSION, fixtureDirFor, fixturePath, v2FixtureDir, type Fixture } from "./fixture.js";
import { startOpencode, type TestOpencode } from "./opencode.js";
import { startOpencode2 } from "./opencode2.js";
import { routeMatcher } from "./operation-match.js";
import { createRecorder } from "./recording/fetch.js";
import { v2Scenarios, type V2Scenario } from "./recording/v2-scenarios.js";
import { isOutcome, recordEvents } from "./v2-events.js";
import { MISSING_SESSION, scenarios, type Scenario } from "./recording/scenarios.js";
import { scrubFixture } from "./recording/scrub.js";
import { recordToolScenario } from "./recording/record-tools.js";
import { toolScenarios } from "./recording/tool-scenarios.js";

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
    return scrub({ scenario: scenario.name, opencodeVersion: version, interactions: recorder.interactions }, server, startedAt);
  } finally {
    await server.stop();
  }
}

function scrub(raw: Fixture, server: TestOpencode, startedAt: number): Fixture {
  return scrubFixture(raw, {
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
  });
}

async function recordV2(scenario: V2Scenario): Promise<Fixture> {
  const server = await startOpencode2(scenario.server);
  try {
    const target = { url: server.url, password: server.password };
    const identity = await detectServer(target);
    const { doc } = await fetchServerSpec(target, identity);
    const startedAt = Date.now();
    // Operation ids from the server's own document; the probes and the spec stay out of the recording.
    const recorder = createRecorder(undefined, routeMatcher(listOperations(doc as OpenApiDocument)));
    const client = await connectV2({ ...target, fetch: recorder.fetch, identity, spec: doc });
    const log = await recordEvents(client);
    const created = (await client.request("session.create", { body: { title: scenario.name } })) as { data: { id: string } };
    await scenario.run(client, server, log, created.data.id);
    // The created session's own (a scenario may run other sessions beside it).
    const outcome = log.events.find(isOutcome(created.data.id));
    log.stop();
    if (outcome?.type !== scenario.outcome)
      throw new Error(`recording went wrong: ${scenario.name} ended with ${outcome?.type ?? "no outcome"}, not ${scenario.outcome}`);
    return scrub({ scenario: scenario.name, opencodeVersion: identity.version, interactions: recorder.interactions }, server, startedAt);
  } finally {
    await server.stop();
  }
}

async function mainV2(wanted: string[]): Promise<void> {
  const unknown = wanted.filter((name) => !v2Scenarios.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown 2.x scenario(s) ${unknown.join(", ")}; known: ${v2Scenarios.map((s) => s.name).join(", ")}`);
  let dir = "";
  for (const scenario of v2Scenarios.filter((s) => wanted.length === 0 || wanted.includes(s.name))) {
    const started = Date.now();
    const fixture = await recordV2(scenario);
    dir = v2FixtureDir(fixture.opencodeVersion);
    await mkdir(dir, { recursive: true });
    // A recording that holds opencode's whole spec (oc_status reads /doc) is kept compact.
    const pretty = JSON.stringify(fixture, null, 2);
    const json = `${pretty.length > 256 * 1024 ? JSON.stringify(fixture) : pretty}\n`;
    await writeFile(join(dir, `${scenario.name}.json`), json);
    console.log(
      `${scenario.name.padEnd(14)} ${String(fixture.interactions.length).padStart(2)} interactions, ${(json.length / 1024).toFixed(1).padStart(6)} kB, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  console.log(`fixtures written to ${dir}`);
}

async function mainTools(wanted: string[]): Promise<void> {
  const unknown = wanted.filter((name) => !toolScenarios.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown tool scenario(s) ${unknown.join(", ")}; known: ${toolScenarios.map((s) => s.name).join(", ")}`);
  for (const scenario of toolScenarios.filter((s) => wanted.length === 0 || wanted.includes(s.name))) {
    const started = Date.now();
    const fixture = await recordToolScenario(scenario, scrub);
    const dir = join(fixtureDirFor(fixture.opencodeVersion), "tools");
    await mkdir(dir, { recursive: true });
    // A recording that holds opencode's whole spec (oc_status reads /doc) is kept compact.
    const pretty = JSON.stringify(fixture, null, 2);
    const json = `${pretty.length > 256 * 1024 ? JSON.stringify(fixture) : pretty}\n`;
    await writeFile(join(dir, `${scenario.name}.json`), json);
    const answered = fixture.calls!.map((c) => `${c.tool}:${c.recorded.status ?? (c.recorded.isError ? "error" : "ok")}`).join(" ");
    console.log(
      `${scenario.name.padEnd(28)} ${String(fixture.interactions.length).padStart(3)} interactions, ${(json.length / 1024).toFixed(1).padStart(6)} kB, ${((Date.now() - started) / 1000).toFixed(1)} s  ${answered}`,
    );
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes("--v2")) return mainV2(args.filter((a) => a !== "--v2"));
  if (args.includes("--tools")) return mainTools(args.filter((a) => a !== "--tools"));
  const wanted = args;
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
