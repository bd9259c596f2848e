// Catalog reads kept per server (keyed by the context's event hub, which contexts re-scoped to a
// session's directory share): checking a model or an agent for every delegation must not cost a
// request each. A failed read is never kept.
//
// Two ages: a listing shown to a caller (oc_models) is at most 10 s old, so an edited config shows
// up at once; a check that only needs a name to be there (a delegation's model or agent) takes an
// answer up to 5 minutes old, because it looks again on a younger one before it says a name is
// missing or ambiguous (a model: at most 10 s old; an agent or command: read now). A model removed from the config within those minutes is not caught here: opencode
// refuses the prompt and records it, and that is what the caller is told.
export const LISTING_MAX_AGE_MS = 10_000;
export const CHECK_MAX_AGE_MS = 300_000;

const caches = new WeakMap<object, Map<string, { at: number; value: Promise<unknown> }>>();

export interface CachedReadOptions {
  /** Read again now, whatever the age. */
  fresh?: boolean;
  /** The oldest answer this caller takes; default LISTING_MAX_AGE_MS. */
  maxAgeMs?: number;
}

/** `read()`'s answer, shared with every caller of the same key while it is young enough for them. */
export function cachedRead<T>(owner: object, key: string, read: () => Promise<T>, o: CachedReadOptions = {}): Promise<T> {
  let cache = caches.get(owner);
  if (!cache) caches.set(owner, (cache = new Map()));
  const hit = cache.get(key);
  if (hit && !o.fresh && Date.now() - hit.at < (o.maxAgeMs ?? LISTING_MAX_AGE_MS)) return hit.value as Promise<T>;
  const value = read();
  const entry = { at: Date.now(), value };
  cache.set(key, entry);
  value.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
  return value;
}
