// Catalog reads kept for a few seconds per server (keyed by the context's event hub, which contexts
// re-scoped to a session's directory share): checking a model or an agent for every delegation must
// not cost a request each. A failed read is never kept.
const TTL_MS = 10_000;

const caches = new WeakMap<object, Map<string, { at: number; value: Promise<unknown> }>>();

/** `read()`'s answer, shared with every caller of the same key for 10 s; `fresh`: read again now. */
export function cachedRead<T>(owner: object, key: string, read: () => Promise<T>, o: { fresh?: boolean } = {}): Promise<T> {
  let cache = caches.get(owner);
  if (!cache) caches.set(owner, (cache = new Map()));
  const hit = cache.get(key);
  if (hit && !o.fresh && Date.now() - hit.at < TTL_MS) return hit.value as Promise<T>;
  const value = read();
  const entry = { at: Date.now(), value };
  cache.set(key, entry);
  value.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
  return value;
}
