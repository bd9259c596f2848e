// Picks the engine for a server by asking it what it is (src/client/detect.ts: its health/info
// route, then, on 2.x, its own /openapi.json for the route adapter). `openEngine` does it now;
// `lazyEngine` does it on first use, so a Conductor can be built synchronously and a server that
// is not up yet is asked only when work starts. A failed detection is retried on the next call.
import { connect, type ConnectOptions, type OpencodeClient } from "../../client/connect.js";
import { createHash } from "node:crypto";
import { detectServer, fetchServerSpec } from "../../client/detect.js";
import { connectV2 } from "../../client/v2/client.js";
import type { Engine, EngineEventsOptions } from "./engine.js";
import type { HubEvent } from "./hub-events.js";
import { V1Engine } from "./v1/v1-engine.js";
import { V2Engine } from "./v2/v2-engine.js";

/** The engine of a typed 1.x client the caller made (`new Conductor({ client })`): no detection. */
export function engineOfV1Client(client: OpencodeClient): Engine {
  return new V1Engine(client);
}

/** Detects the server at `options.url` and connects the engine for its major. */
export async function openEngine(options: ConnectOptions, v1Client: OpencodeClient = connect(options)): Promise<Engine> {
  const { url, password, username } = options;
  const target = { url, password, username, ...(options.fetch ? { fetch: options.fetch } : {}) };
  const identity = await detectServer(target);
  if (identity.major === 1) return new V1Engine(v1Client, identity.version);
  const spec = await fetchServerSpec(target, identity);
  const client = await connectV2({ ...options, identity, spec: spec.doc });
  return new V2Engine(client, options.directory, { version: identity.version, sha256: createHash("sha256").update(spec.bytes).digest("hex"), doc: spec.doc });
}

type Resolver = () => Promise<Engine>;

/** An engine that detects the server on first use, then forwards to the engine found. */
export function lazyEngine(options: ConnectOptions, v1Client: OpencodeClient): Engine {
  let found: Promise<Engine> | undefined;
  const resolve: Resolver = () =>
    (found ??= openEngine(options, v1Client).catch((error: unknown) => {
      found = undefined; // the server may come up later
      throw error;
    }));
  return forwarding(resolve, options.url, options.directory);
}

function forwarding(resolve: Resolver, url: string, directory: string | undefined): Engine {
  const scoped: Resolver = async () => (await resolve()).withDirectory(directory);
  const forward =
    <K extends keyof Engine>(name: K) =>
    async (...args: unknown[]) =>
      ((await scoped())[name] as (...a: unknown[]) => unknown)(...args);
  const engine = {
    url,
    directory,
    withDirectory: (d: string | undefined) => (d === directory ? engine : forwarding(resolve, url, d)),
    async *events(options: EngineEventsOptions): AsyncGenerator<HubEvent> {
      yield* (await scoped()).events(options);
    },
  } as Record<string, unknown>;
  const methods: Array<keyof Engine> = [
    "info",
    "capabilities",
    "health",
    "openApi",
    "watchKit",
    "usageTranslator",
    "createSession",
    "getSession",
    "listSessions",
    "childSessions",
    "setRules",
    "rename",
    "archive",
    "remove",
    "fork",
    "revert",
    "unrevert",
    "compact",
    "shell",
    "todo",
    "checkPrompt",
    "prompt",
    "waitingPrompt",
    "withdrawPrompt",
    "abort",
    "runState",
    "snapshot",
    "lastTurn",
    "newestMessageId",
    "messages",
    "messagesPage",
    "deleteMessage",
    "turnDiff",
    "listPending",
    "answerPermission",
    "answerQuestion",
    "providerCatalog",
    "configuredModel",
    "catalog",
  ];
  for (const name of methods) engine[name] = forward(name);
  return engine as unknown as Engine;
}

/** The concrete engine behind `engine` (detected now if it was not yet). */
export async function resolvedEngine(engine: Engine): Promise<Engine> {
  await engine.info();
  return engine;
}
