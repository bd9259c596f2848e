// ioredis resolves a MULTI's exec() with each command's [error, reply] and rejects only when the
// whole transaction is refused: a command that failed inside it (WRONGTYPE, OOM) would be a write
// silently lost. This throws the first such error instead, naming the command.
import type { ChainableCommander } from "ioredis";

export async function execAll(multi: ChainableCommander, what: string): Promise<unknown[]> {
  const replies = await multi.exec();
  if (replies === null) throw new Error(`${what}: the transaction was aborted (a watched key changed)`);
  return replies.map(([error, reply], i) => {
    if (error) throw new Error(`${what}: command ${i + 1} of the transaction failed: ${error.message}`, { cause: error });
    return reply;
  });
}
