// Secrets (passwords, tokens) out of every text a client or a log gets: a module of its own, so
// that what a start loads (server.ts, resources.ts) does not bring the tool-call machinery with it.
export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}
