// The providers and models a server offers, as the core reads them (the shape is opencode 1.x's
// `config.providers`; the v2 engine maps 2.x's catalogue into it). Secrets are removed before any
// of it leaves the engine.

export interface ProviderList {
  providers: Provider[];
  /** providerID → default modelID of that provider. */
  default: Record<string, string>;
}

export interface Provider {
  id: string;
  name: string;
  source: "env" | "config" | "custom" | "api";
  env: string[];
  key?: string;
  options: Record<string, unknown>;
  models: { [key: string]: ProviderModel };
}

interface Modalities {
  text: boolean;
  audio: boolean;
  image: boolean;
  video: boolean;
  pdf: boolean;
}

interface Prices {
  input: number;
  output: number;
  cache: { read: number; write: number };
}

export interface ProviderModel {
  id: string;
  providerID: string;
  api: { id: string; url: string; npm: string };
  name: string;
  family?: string;
  capabilities: {
    temperature: boolean;
    reasoning: boolean;
    attachment: boolean;
    toolcall: boolean;
    input: Modalities;
    output: Modalities;
    interleaved: boolean | { field: ("reasoning" | "reasoning_content" | "reasoning_text") | string };
  };
  cost: Prices & {
    tiers?: Array<Prices & { tier: { type: "context"; size: number } }>;
    experimentalOver200K?: Prices;
  };
  limit: { context: number; input?: number; output: number };
  status: "alpha" | "beta" | "deprecated" | "active";
  options: Record<string, unknown>;
  headers: { [key: string]: string };
  release_date: string;
  variants?: { [key: string]: Record<string, unknown> };
}
