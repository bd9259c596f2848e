// A Map that keeps at most `max` entries, forgetting the oldest first (a Map iterates in insertion
// order; setting a key again makes it the newest). For what this process remembers per session or
// request id, so a long-running server's memory levels off however many tasks it has run.
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    while (this.size > this.max) super.delete(super.keys().next().value as K);
    return this;
  }
}
