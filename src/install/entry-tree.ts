// A config file's parsed content as a tree, and the two questions every edit asks of it: what is
// at our key, and is everything else the same as before (the check that an edit kept the user's
// content before anything is written).
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";

export type Tree = Record<string, unknown>;

const isTable = (v: unknown): v is Tree => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Parsers build objects without a prototype; ours have Object's: made alike so that they compare equal. */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

export function valueAt(tree: Tree, key: string[]): unknown {
  let node: unknown = tree;
  for (const k of key) {
    if (!isTable(node) || !Object.hasOwn(node, k)) return undefined;
    node = node[k];
  }
  return node;
}

/** A copy of the tree without our key, and without the parents that only held it. */
export function withoutKey(tree: Tree, key: string[]): Tree {
  const [head, ...rest] = key;
  const copy = { ...tree };
  if (head === undefined || !Object.hasOwn(tree, head)) return copy;
  const child = copy[head];
  if (rest.length === 0 || !isTable(child)) delete copy[head];
  else {
    const inner = withoutKey(child, rest);
    if (Object.keys(inner).length === 0) delete copy[head];
    else copy[head] = inner;
  }
  return copy;
}

/** Whether the two trees hold the same content apart from our key. */
export function sameApartFrom(a: Tree, b: Tree, key: string[]): boolean {
  return isDeepStrictEqual(withoutKey(a, key), withoutKey(b, key));
}

export const sameValue = (a: unknown, b: unknown) => isDeepStrictEqual(a, b);

/**
 * Whether a server entry starts opencode-conductor: its command line names the package (npx, a
 * global bin) or runs a dist/cli.js whose package is this one (a clone, an installed copy).
 * Used to recognise an entry of ours when the install record is gone.
 */
export function startsConductor(entry: unknown): boolean {
  if (!isTable(entry)) return false;
  const words = [entry.command, entry.args].flat().filter((w): w is string => typeof w === "string");
  return words.some((w) => /(^|[/\\@\s])opencode-conductor(@[^/\\\s]*)?($|[/\\\s])/.test(w) || isOurCli(w));
}

function isOurCli(path: string): boolean {
  if (basename(path) !== "cli.js" || basename(dirname(path)) !== "dist") return false;
  const manifest = join(dirname(dirname(path)), "package.json");
  try {
    return existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === "opencode-conductor";
  } catch {
    return false;
  }
}
