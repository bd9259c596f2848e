// What the v2 engine knows of sessions from opencode 2.x's own answers, so that no request asks
// again what an answer already said: a session's directory (it never changes; the mapped messages
// name it), and, from its create answer until its first prompt, the model and agent it holds (so
// that prompt need not switch them). Shared by every directory-scoped copy of the engine, and
// bounded: what is forgotten is read again when needed.
import type { Session } from "../../model/session.js";
import type { ModelRef } from "../../catalog/model-resolve.js";
import { BoundedMap } from "../../bounded-map.js";

const MAX_KNOWN = 1_000;

/** What a new session holds, as its create answer says. */
export interface HeldSettings {
  model?: ModelRef;
  agent?: string;
}

export class KnownSessions {
  private readonly directories = new BoundedMap<string, Promise<string>>(MAX_KNOWN);
  private readonly held = new BoundedMap<string, HeldSettings>(MAX_KNOWN);

  /** A session the server just created (its answer is the whole session). */
  created(session: Session): void {
    this.directories.set(session.id, Promise.resolve(session.directory));
    this.held.set(session.id, { ...(session.model ? { model: session.model } : {}), ...(session.agent ? { agent: session.agent } : {}) });
  }

  /** The session's directory, read with `read` once. A failed read is not kept. */
  directory(id: string, read: () => Promise<string>): Promise<string> {
    let known = this.directories.get(id);
    if (!known) {
      const reading = read();
      known = reading;
      this.directories.set(id, reading);
      reading.catch(() => {
        if (this.directories.get(id) === reading) this.directories.delete(id);
      });
    }
    return known;
  }

  /** What a session held at its creation, once: the first prompt takes it (later ones cannot know). */
  takeHeld(id: string): HeldSettings | undefined {
    const settings = this.held.get(id);
    this.held.delete(id);
    return settings;
  }
}
