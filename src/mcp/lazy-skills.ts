// The delegation skill's extension (`io.modelcontextprotocol/skills`) attached before its catalog
// exists: a start declares the extension, its `skill://{+path}` template and its three methods as
// the SDK's attach does, and the catalog (skills.ts: the file read, its front matter, sha256 of
// every file, and the SDK's extension module) is built on the first request that needs it:
// skills/list, skills/get, resources/directory/read, a `skill://` read, or resources/list (which
// lists the skill's SKILL.md). What answers those is the SDK's own catalog: it is attached to a
// stand-in server that records what it registers, and each request is handed to the handler it
// registered, so every answer (its caching fields, its errors) is the SDK's byte for byte.
// Building it at start cost about 20-45 ms of CPU, more than anything else a start does beyond a
// bare SDK server (docs/performance.md, "Start-up").
import {
  ResourceTemplate,
  type ListResourcesCallback,
  type McpServer,
  type ReadResourceTemplateCallback,
  type ServerContext,
} from "@modelcontextprotocol/server";
import {
  GetSkillRequestParamsSchema,
  ListSkillsRequestParamsSchema,
  ReadResourceDirectoryRequestParamsSchema,
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_EXTENSION_ID,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
} from "@modelcontextprotocol/core/ext/skills";
import type { SkillCatalog } from "@modelcontextprotocol/server/ext/skills";

/** What a server needs of the skills it serves (createServer's `skills`). */
export interface ServedSkills {
  attach(mcp: McpServer): void;
  /** Builds the catalog now, if no request has (in the background, once a start is answered). */
  warm(): void;
}

const TEMPLATE = "skill://{+path}";
const METHODS = [SKILLS_LIST_METHOD, SKILLS_GET_METHOD, RESOURCES_DIRECTORY_READ_METHOD] as const;
type Method = (typeof METHODS)[number];
/** What the SDK declares for a catalog (a catalog can read directories). */
const CAPABILITY = { directoryRead: true };

type Handler = (params: Record<string, unknown>, ctx: ServerContext) => unknown;
/** What the SDK's attach registered on one server, ready to answer its requests. */
interface Served {
  handlers: Map<string, Handler>;
  list: ListResourcesCallback;
  read: ReadResourceTemplateCallback;
}

/**
 * The skills of `catalog()` (called once, on the first request that needs them), served from the
 * first request on to every server this is attached to. `failed` hears of a catalog that cannot be
 * built, once: its requests then fail, and resources/list goes on without the skill.
 */
export function lazySkills(catalog: () => Promise<SkillCatalog>, failed: (error: Error) => void): ServedSkills {
  let loaded: Promise<SkillCatalog> | undefined;
  const load = () =>
    (loaded ??= catalog().catch((error: Error) => {
      failed(error);
      throw error;
    }));
  const served = new WeakMap<McpServer, Promise<Served>>();
  const servedOn = (mcp: McpServer) => {
    let entry = served.get(mcp);
    if (!entry) served.set(mcp, (entry = load().then((c) => recordAttach(c, mcp))));
    return entry;
  };
  return {
    warm: () => void load().catch(() => undefined),
    attach(mcp) {
      // The order and the checks of the SDK's attach (SkillsExtension.attach), so a server declares the same.
      if (mcp.isConnected()) throw new Error("attach skills before connecting the server");
      const server = mcp.server;
      for (const method of METHODS) server.assertCanSetRequestHandler(method);
      const list: ListResourcesCallback = async (ctx) => {
        const answer = await servedOn(mcp).then(
          (s) => s.list,
          () => undefined,
        );
        return answer ? answer(ctx) : { resources: [] };
      };
      mcp.registerResource(SKILLS_EXTENSION_ID, new ResourceTemplate(TEMPLATE, { list }), {}, async (uri, variables, ctx) =>
        (await servedOn(mcp)).read(uri, variables, ctx),
      );
      const handle = (method: Method) => async (params: Record<string, unknown>, ctx: ServerContext) =>
        (await servedOn(mcp)).handlers.get(method)!(params, ctx);
      server.setRequestHandler(SKILLS_LIST_METHOD, { params: ListSkillsRequestParamsSchema }, handle(SKILLS_LIST_METHOD) as never);
      server.setRequestHandler(SKILLS_GET_METHOD, { params: GetSkillRequestParamsSchema }, handle(SKILLS_GET_METHOD) as never);
      server.setRequestHandler(
        RESOURCES_DIRECTORY_READ_METHOD,
        { params: ReadResourceDirectoryRequestParamsSchema },
        handle(RESOURCES_DIRECTORY_READ_METHOD) as never,
      );
      server.registerCapabilities({ extensions: { [SKILLS_EXTENSION_ID]: CAPABILITY } });
    },
  };
}

/**
 * Attaches `catalog` to a stand-in for `mcp` that records what the SDK registers (its handlers see
 * the real server's negotiated version, which decides their caching fields), and checks that it is
 * what `attach` above declared: if a later SDK registers something else, the skill's requests fail
 * with that said, rather than being answered differently from what the server declared.
 */
function recordAttach(catalog: SkillCatalog, mcp: McpServer): Served {
  const handlers = new Map<string, Handler>();
  let template: ResourceTemplate | undefined;
  let read: ReadResourceTemplateCallback | undefined;
  let capabilities: unknown;
  const server = {
    assertCanSetRequestHandler: () => undefined,
    setRequestHandler: (method: string, _schemas: unknown, handler: Handler) => void handlers.set(method, handler),
    registerCapabilities: (declared: unknown) => void (capabilities = declared),
    getNegotiatedProtocolVersion: () => mcp.server.getNegotiatedProtocolVersion(),
  };
  const standIn = {
    server,
    isConnected: () => false,
    registerResource: (name: string, registered: ResourceTemplate, config: unknown, callback: ReadResourceTemplateCallback) => {
      if (name === SKILLS_EXTENSION_ID && JSON.stringify(config) === "{}") [template, read] = [registered, callback];
    },
  };
  catalog.attach(standIn as unknown as McpServer);
  const expected = JSON.stringify({ extensions: { [SKILLS_EXTENSION_ID]: CAPABILITY } });
  const list = template?.listCallback;
  if (!read || !list || template?.uriTemplate.toString() !== TEMPLATE || JSON.stringify(capabilities) !== expected || METHODS.some((m) => !handlers.has(m)))
    throw new Error(
      `the SDK's skills extension registered other than ${TEMPLATE}, ${expected} and ${METHODS.join(", ")}: the delegation skill cannot be served`,
    );
  return { handlers, list, read };
}
