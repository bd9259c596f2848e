// The sessions an event of the stream names, read from its raw text before it is parsed, so that a
// consumer following a few sessions among many can drop the rest unparsed and route the others to
// whoever follows them. A session is named where opencode puts its id: a `sessionID`, `parentID`,
// `aggregateID` or `id` whose value starts with `ses` (1.x `{sessionID}`, `info.id`, `part.sessionID`;
// 2.x `data.sessionID`, `form.sessionID`, `durable.aggregateID`), anywhere in the event. An event that
// names none (server notices, or a shape not seen before) counts as everyone's.
const SESSION_VALUE = /"(?:sessionID|parentID|aggregateID|id)"\s*:\s*"(ses[^"\\]*)"/g;

export function sessionsNamedIn(data: string): string[] {
  const ids: string[] = [];
  for (const match of data.matchAll(SESSION_VALUE)) if (!ids.includes(match[1]!)) ids.push(match[1]!);
  return ids;
}

const named = new WeakMap<object, readonly string[]>();

/** Remembers which sessions `event`'s raw text named (the stream does it as it parses). */
export function noteSessionsNamed(event: object, ids: readonly string[]): void {
  named.set(event, ids);
}

/** The sessions `event` named, as its stream read them; undefined for an event that came from elsewhere. */
export function sessionsNamedBy(event: object): readonly string[] | undefined {
  return named.get(event);
}
