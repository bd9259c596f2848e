// What a turn cost: the tokens of one model step as opencode records them, and a turn's sum.

/** Tokens of one model step or message (opencode's record). */
export interface ModelTokens {
  total?: number;
  input: number;
  output: number;
  reasoning: number;
  cache: { read: number; write: number };
}

/** A turn's tokens, summed over its replies (turns/summary.ts). */
export interface TurnTokens {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}
