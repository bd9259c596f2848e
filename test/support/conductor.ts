// A real opencode (scripted model) with a Conductor or a typed client on it, shared by the tests of one file.
import { writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { connect, type OpencodeClient } from "../../src/client/index.js";
import { Conductor } from "../../src/core/conductor.js";
import { startOpencode, type StartOpencodeOptions, type TestOpencode } from "./opencode.js";

export interface ConductorHarness {
  oc: TestOpencode;
  conductor: Conductor;
}

/** Starts both before the file's tests and stops them after; read the fields inside tests. */
export function useConductor(options: StartOpencodeOptions = {}): ConductorHarness {
  const h = {} as ConductorHarness;
  beforeAll(async () => {
    h.oc = await startOpencode(options);
    h.conductor = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
  });
  afterAll(async () => {
    h.conductor?.close();
    await h.oc?.stop();
  });
  return h;
}

/** With OCC_DUMP_MESSAGES=1, saves a session's messages as a fixture for the summary unit tests. */
export async function dumpMessages(h: ConductorHarness, name: string, sessionId: string): Promise<void> {
  if (!process.env.OCC_DUMP_MESSAGES) return;
  const messages = await h.conductor.client.call("session.messages", { path: { sessionID: sessionId } });
  const json = JSON.stringify(messages, null, 2).replaceAll(h.oc.root.slice(1), "tmp/occ"); // also paths shown relative to /
  const dir = join(import.meta.dirname, "../fixtures/1.18.33");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `messages-${name}.json`), `${json}\n`);
}

/** The user messages the model saw in its last request for this session. */
export function userTexts(oc: TestOpencode, sessionId: string): string[] {
  return (oc.model.requestsFor(sessionId).at(-1)?.body.messages ?? []).filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
}

export interface ClientHarness {
  server: TestOpencode;
  client: OpencodeClient;
}

/** A real opencode and a typed client on its project, for the tests of one file. */
export function useClient(options: StartOpencodeOptions = {}): ClientHarness {
  const h = {} as ClientHarness;
  beforeAll(async () => {
    h.server = await startOpencode(options);
    h.client = connect({ url: h.server.url, password: h.server.password, directory: h.server.directory });
  });
  afterAll(async () => {
    await h.server?.stop();
  });
  return h;
}
