// What a tool call carries from one input_required round to the next (2026-07-28): the requests it
// asked, when, and the sessions it was waiting on. The client echoes it back untouched, so it is
// signed (HMAC, the SDK's codec) with a key kept in the state dir: every server process sharing
// the state dir (replicas behind a load balancer) verifies what any of them minted, and nothing
// else is kept between rounds. Signed, not encrypted: it holds only what the form already showed.
import type { PendingRequest } from "../../core/model/pending-request.js";
import { createHash, randomBytes } from "node:crypto";
import { link, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createRequestStateCodec, type RequestStateCodec } from "@modelcontextprotocol/server";
import { ensureStateDir } from "../../core/state-dir.js";
import type { RefusedApproval } from "../refusals.js";

export interface RoundState {
  v: 1;
  tool: string;
  /** sha256 of the call's arguments: a state is only good for the call that minted it. */
  args: string;
  /** This was the call's n-th round (1 for the first input_required). */
  round: number;
  /** When the form went out (ms since the epoch), to tell a client's instant answer from a person's. */
  asked: number;
  requests: PendingRequest[];
  /** The sessions the call was waiting on, by task (one for oc_delegate; by index for a batch). */
  sessions: Array<string | null>;
  /** Requests given back earlier in this call: never asked again in it. */
  returned: string[];
  /** Approvals not given so far in this call (the final result reports them). */
  refused: RefusedApproval[];
}

/** A person may take this long over a form (the longest elicitation wait of a 2025-11-25 call). */
export const ROUND_TTL_S = 3600;
const KEY_FILE = "mcp-request-state.key";

const codecs = new Map<string, Promise<RequestStateCodec<RoundState>>>();

/** The codec of this state dir; the key is made once, by whichever process comes first. */
export function roundCodec(stateDir: string): Promise<RequestStateCodec<RoundState>> {
  let codec = codecs.get(stateDir);
  if (!codec) {
    codec = sharedKey(stateDir).then((key) => createRequestStateCodec<RoundState>({ key, ttlSeconds: ROUND_TTL_S }));
    codecs.set(stateDir, codec);
    codec.catch(() => codecs.delete(stateDir)); // a failed read is tried again on the next round
  }
  return codec;
}

async function sharedKey(stateDir: string): Promise<Uint8Array> {
  const dir = await ensureStateDir(stateDir);
  const path = join(dir, KEY_FILE);
  const existing = await readKey(path);
  if (existing) return existing;
  // Written aside, then linked into place: link fails if another process won, and nobody ever
  // reads a half-written key.
  const temp = join(dir, `.${KEY_FILE}.${process.pid}.${randomBytes(4).toString("hex")}`);
  await writeFile(temp, randomBytes(32).toString("hex"), { mode: 0o600 });
  try {
    await link(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    await rm(temp, { force: true });
  }
  const key = await readKey(path);
  if (!key) throw new Error(`${path} holds no usable key: remove it and retry.`);
  return key;
}

async function readKey(path: string): Promise<Uint8Array | undefined> {
  try {
    const hex = (await readFile(path, "utf8")).trim();
    return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, "hex") : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The digest a state is bound to: the same arguments in any key order. */
export function argsDigest(args: Record<string, unknown>): string {
  return createHash("sha256").update(canonical(args)).digest("hex");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
