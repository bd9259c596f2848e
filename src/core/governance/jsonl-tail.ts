// Reads a rotating JSON-lines file (segments.ts) from its end: lines newest first, across segments,
// in chunks, so a reader's memory and time depend on what it reads, never on the file's size. A
// filter's strings are searched in the raw bytes, so only the lines that hold them are decoded. A
// place in the file is a cursor (the segment's inode and a line's byte offset), which survives the
// segment being renamed at rotation; a time is found by binary search, the lines being appended in
// time order (near enough: see TIME_SLACK_MS).
import { open, type FileHandle } from "node:fs/promises";
import { UsageError } from "../errors.js";
import { segmentsOf } from "./segments.js";

export interface Cursor {
  ino: number;
  /** A line's start: reading goes on with the lines before it. */
  offset: number;
}

export interface TailLine {
  text: string;
  /** Where the line starts: a cursor that goes on with the lines before it. */
  at: Cursor;
  /** Bytes read so far, this line's chunk included. */
  scanned: number;
}

export interface ReadBack {
  /** Read the lines before this place (default: from the end, a torn last line left out). */
  from?: Cursor;
  /** Lines that start before this place are not read. */
  to?: Cursor;
  /** Only lines holding every one of these strings are decoded and given (searched in the raw bytes). */
  contains?: string[];
  /** Stop once this many bytes have been read (whole chunks: up to a chunk more). */
  maxBytes?: number;
}

export interface ReadEnd {
  /** Where reading stopped early (maxBytes): the lines before it are unread. Undefined: nothing more to read. */
  next?: Cursor;
  scanned: number;
  /** The time of the oldest line read, when it stopped early. */
  reached?: string;
}

/**
 * Lines are appended in time order, except that a process may write a line stamped a moment
 * earlier after another's (and lines held through an outage are written late). Time searches
 * allow this much disorder.
 */
export const TIME_SLACK_MS = 5 * 60_000;

const CHUNK = 256 * 1024;
/** A "line" longer than this is not one of ours: it is skipped, never held in memory. */
const MAX_LINE_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

export function cursorText(c: Cursor): string {
  return `${c.ino.toString(36)}.${c.offset.toString(36)}`;
}

/** A cursor from its text; a UsageError (naming `label`) when it is not one. */
export function parseCursor(label: string, text: string): Cursor {
  const m = /^([0-9a-z]{1,13})\.([0-9a-z]{1,13})$/.exec(text.trim());
  if (m) return { ino: parseInt(m[1]!, 36), offset: parseInt(m[2]!, 36) };
  throw new UsageError(
    `${label} ${JSON.stringify(text.slice(0, 60))} is not a cursor: pass the \`next\` value of an earlier answer, or leave it out for the newest entries.`,
  );
}

/**
 * The file's lines, newest first, across segments: before `from` (else from the end), down to `to`
 * (else the start). The generator's return value says where it stopped.
 */
export async function* linesBackward(path: string, o: ReadBack = {}): AsyncGenerator<TailLine, ReadEnd> {
  const segments = await segmentsOf(path);
  let last = segments.length - 1;
  let end = segments[last]?.size ?? 0;
  if (o.from) {
    last = segments.findIndex((s) => s.ino === o.from!.ino);
    if (last < 0)
      throw new UsageError("That cursor's part of the trail is gone (rotated out, or the file was replaced): read again without it, for the newest entries.");
    end = Math.min(o.from.offset, segments[last]!.size);
  }
  // A `to` whose segment is gone (rotated out) bounds nothing that is left.
  const first = o.to
    ? Math.max(
        0,
        segments.findIndex((s) => s.ino === o.to!.ino),
      )
    : 0;
  const needles = (o.contains ?? []).filter(Boolean).map((n) => Buffer.from(n));
  let scanned = 0;
  for (let i = last; i >= first; i--) {
    const segment = segments[i]!;
    const handle = await open(segment.path, "r").catch(() => undefined);
    if (!handle) continue; // removed since it was listed: nothing to read there
    try {
      const high = i === last ? (o.from ? end : await completeLinesEnd(handle, end)) : segment.size;
      const low = o.to && segment.ino === o.to.ino ? Math.min(o.to.offset, high) : 0;
      for await (const chunk of chunksBackward(handle, high, low)) {
        scanned += chunk.read;
        for (const line of matchesBackward(chunk.data, chunk.from, chunk.to, needles))
          yield { text: chunk.data.toString("utf8", line.begin, line.stop), at: { ino: segment.ino, offset: chunk.start + line.begin }, scanned };
        if (o.maxBytes === undefined || scanned < o.maxBytes) continue;
        const stop = chunk.start + chunk.from;
        if (stop <= low && i === first) break; // nothing left anyway
        const time = timeOf(chunk.data.toString("utf8", chunk.from, Math.min(chunk.to, chunk.from + 200)));
        const reached = time === undefined ? {} : { reached: new Date(time).toISOString() };
        // Stopped at this chunk's first line; at a segment's start, go on at the end of the one before.
        if (stop > low) return { next: { ino: segment.ino, offset: stop }, scanned, ...reached };
        return { next: { ino: segments[i - 1]!.ino, offset: segments[i - 1]!.size }, scanned, ...reached };
      }
    } finally {
      await handle.close();
    }
  }
  return { scanned };
}

interface Chunk {
  data: Buffer;
  /** The file offset of data[0]. */
  start: number;
  /** The whole lines in data[from, to). */
  from: number;
  to: number;
  /** Bytes read from the file for this chunk. */
  read: number;
}

/** The bytes from `high` back to `low` in chunks, each with its whole lines. A line longer than MAX_LINE_BYTES is left out, never held whole. */
async function* chunksBackward(handle: FileHandle, high: number, low: number): AsyncGenerator<Chunk> {
  let pos = high;
  let carry: Buffer = Buffer.alloc(0); // the end of a line that starts in a chunk not read yet
  let skipping = false; // the line that ends this chunk was too long: leave it out
  let unreported = 0; // bytes read for chunks that held no line start
  while (pos > low) {
    const length = Math.min(CHUNK, pos - low);
    const chunk = Buffer.alloc(length);
    await handle.read(chunk, 0, length, pos - length);
    pos -= length;
    unreported += length;
    let data = carry.length > 0 ? Buffer.concat([chunk, carry]) : chunk;
    if (skipping) {
      const cut = chunk.lastIndexOf(NEWLINE) + 1;
      if (cut === 0 && pos > low) continue; // still inside the long line
      data = chunk.subarray(0, cut);
      skipping = false;
    }
    const from = pos === low ? 0 : data.indexOf(NEWLINE) + 1;
    carry = data.subarray(0, from);
    if (pos > low && from === 0) carry = data; // no line starts here: all of it belongs to the line before
    if (carry.length > MAX_LINE_BYTES) {
      carry = Buffer.alloc(0);
      skipping = true;
    }
    if (pos > low && from === 0) continue;
    yield { data, start: pos, from, to: data.length, read: unreported };
    unreported = 0;
  }
}

/** The lines within data[from, to), newest first; with needles, only those holding each (searched in the bytes). */
function* matchesBackward(data: Buffer, from: number, to: number, needles: Buffer[]): Generator<{ begin: number; stop: number }> {
  if (needles.length === 0) {
    let stop = to > from && data[to - 1] === NEWLINE ? to - 1 : to;
    while (stop > from) {
      const begin = Math.max(from, data.lastIndexOf(NEWLINE, stop - 1) + 1);
      if (stop > begin) yield { begin, stop };
      stop = begin - 1;
    }
    return;
  }
  const [first, ...others] = needles as [Buffer, ...Buffer[]];
  for (let at = to - first.length; at >= from;) {
    const hit = data.lastIndexOf(first, at);
    if (hit < from) return;
    const begin = Math.max(from, hit > 0 ? data.lastIndexOf(NEWLINE, hit - 1) + 1 : 0);
    const nl = data.indexOf(NEWLINE, hit);
    const stop = nl < 0 || nl >= to ? to : nl;
    const line = data.subarray(begin, stop);
    if (others.every((n) => line.includes(n))) yield { begin, stop };
    at = begin - 1 - first.length;
  }
}

/** Where the live file's whole lines end now (a reader going on from there misses nothing); undefined when there is none. */
export async function liveEnd(path: string): Promise<Cursor | undefined> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    return info.isFile() ? { ino: info.ino, offset: await completeLinesEnd(handle, info.size) } : undefined;
  } finally {
    await handle.close();
  }
}

/** The end of the last whole line at or before `size` (a writer may be half-way through one). */
async function completeLinesEnd(handle: FileHandle, size: number): Promise<number> {
  for (let end = size; end > 0;) {
    const length = Math.min(CHUNK, end);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, end - length);
    const nl = buffer.lastIndexOf(NEWLINE);
    if (nl >= 0) return end - length + nl + 1;
    end -= length;
    if (size - end > MAX_LINE_BYTES) return end;
  }
  return 0;
}

/**
 * A place near the first line written after `time` (callers add the disorder TIME_SLACK_MS allows):
 * the segment is picked by its first line's time, the offset by binary search to within 64 KB. An
 * `upper` bound has only later lines after it (read back from it to skip what came later); a
 * `lower` one only earlier lines before it (read down to it to skip what came before).
 */
export async function cursorAt(path: string, time: number, bound: "upper" | "lower"): Promise<Cursor | undefined> {
  const segments = await segmentsOf(path);
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i]!;
    const handle = await open(segment.path, "r").catch(() => undefined);
    if (!handle) continue;
    try {
      const first = await lineAtOrAfter(handle, 0, segment.size);
      if (!first || (first.time !== undefined && first.time > time)) {
        if (i === 0) return { ino: segment.ino, offset: 0 };
        continue;
      }
      const { lo, hi } = await firstLineAfter(handle, segment.size, time);
      return { ino: segment.ino, offset: bound === "upper" ? hi : lo };
    } finally {
      await handle.close();
    }
  }
  return undefined;
}

/** Binary search: line starts (or the end) `lo` ≤ `hi`, every line before `lo` no later than `limit`, every one from `hi` on later. */
async function firstLineAfter(handle: FileHandle, size: number, limit: number): Promise<{ lo: number; hi: number }> {
  let lo = 0;
  let hi = await completeLinesEnd(handle, size);
  while (hi - lo > 64 * 1024) {
    const line = await lineAtOrAfter(handle, Math.floor((lo + hi) / 2), hi);
    if (!line) break; // a line longer than half the range: close enough
    if (line.time !== undefined && line.time > limit) hi = line.start;
    else lo = line.next;
  }
  return { lo, hi };
}

/** The first whole line that starts at or after `pos` and before `hi`, with its `time` field. */
async function lineAtOrAfter(handle: FileHandle, pos: number, hi: number): Promise<{ start: number; next: number; time?: number } | undefined> {
  const from = Math.max(0, pos - 1);
  const buffer = Buffer.alloc(Math.min(16 * 1024, hi - from + 8 * 1024));
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
  const data = buffer.subarray(0, bytesRead);
  const startIndex = pos === 0 ? 0 : data.indexOf(NEWLINE) + 1;
  if (pos > 0 && startIndex === 0) return undefined;
  const start = from + startIndex;
  if (start >= hi) return undefined;
  const nl = data.indexOf(NEWLINE, startIndex);
  if (nl < 0) return undefined;
  return { start, next: from + nl + 1, time: timeOf(data.toString("utf8", startIndex, nl)) };
}

/** The epoch ms of a line's `time` field; undefined when it has none (a torn or foreign line). */
export function timeOf(line: string): number | undefined {
  const m = /"time":"([^"]{10,40})"/.exec(line.slice(0, 120));
  if (!m) return undefined;
  const at = Date.parse(m[1]!);
  return Number.isNaN(at) ? undefined : at;
}
