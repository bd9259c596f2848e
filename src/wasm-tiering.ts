// Node's fetch (undici) parses HTTP with llhttp compiled to WebAssembly, compiled on the first
// request. V8 (Node 20) then also compiles it with TurboFan in the background, and that compile's
// scratch memory lifts the process's resident memory by ~25 MB for a moment and leaves ~5 MB in
// malloc arenas: measured on a bare Node 20 process, the first fetch took RSS to a 84 MB peak,
// 56 MB with Liftoff only; the MCP server's first oc_delegate to a 108-110 MB peak (docs/performance.md,
// "bench:scale"). Liftoff's code parses as fast here (300 fetches and a 20,000-event stream: no more
// CPU), and this process runs no other WebAssembly. V8 reads the flag when it compiles a module, so
// it must be set before the first fetch; a V8 without the flag only prints a warning to stderr.
import { setFlagsFromString } from "node:v8";

/** From now on WebAssembly is compiled by Liftoff only (no TurboFan tier, no compile-memory spike). */
export function compileWasmWithLiftoffOnly(): void {
  setFlagsFromString("--liftoff-only");
}
