// Whether the audit trail and the task records can be written, as the console sees them: checked
// now and every few seconds (a failure and a recovery are both noticed with no one acting), said on
// the console's stderr and on the page (a banner), in the words the MCP server uses. What only a
// write shows (a device such as /dev/full) the console learns when its own audit line fails.
import type { Config } from "../config.js";
import { RETRY_MS } from "../core/governance/jsonl-writer.js";
import { checkTrails, reportOnStderr, trailsOf, unwritableText } from "../core/governance/trail-health.js";
import type { TrailView } from "./api.js";

export function watchTrails(config: Pick<Config, "auditPath" | "stateDir" | "rotation">, onChange: () => void): { view(): TrailView[]; close(): void } {
  const trails = trailsOf(config);
  reportOnStderr(trails);
  let views: TrailView[] = trails.map((t) => ({ name: t.name, path: t.writer.path, writable: true }));
  const check = async () => {
    const next = (await checkTrails(trails)).map((h) => ({
      name: h.name,
      path: h.path,
      writable: h.writable,
      ...(h.writable ? {} : { text: unwritableText(h.name, h) }),
    }));
    if (JSON.stringify(next) === JSON.stringify(views)) return;
    views = next;
    onChange();
  };
  void check();
  // The console's own audit lines (an answer, a stop) may be what fails first: tell at once.
  const offs = trails.map((t) => t.writer.onHealth(() => void check().catch(() => undefined)));
  const timer = setInterval(() => void check().catch(() => undefined), RETRY_MS);
  timer.unref();
  return {
    view: () => views,
    close: () => {
      clearInterval(timer);
      offs.forEach((off) => off());
    },
  };
}
