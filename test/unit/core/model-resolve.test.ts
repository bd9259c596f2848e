import { describe, expect, it } from "vitest";
import { ModelResolutionError, resolveModel, type ProviderCatalog } from "../../../src/core/catalog/model-resolve.js";

const catalog: ProviderCatalog = {
  default: { fake: "scripted" },
  providers: [
    {
      id: "fake",
      models: {
        scripted: { id: "scripted", name: "Scripted" },
        backup: { id: "backup", name: "Backup" },
        "gpt-5": { id: "gpt-5", name: "GPT-5", variants: { high: {}, low: {} } },
      },
    },
    {
      id: "openrouter",
      models: {
        "anthropic/claude-sonnet-4": { id: "anthropic/claude-sonnet-4", name: "Claude Sonnet 4" },
        "openai/gpt-5": { id: "openai/gpt-5", name: "GPT-5 (OpenRouter)" },
        "gpt-5": { id: "gpt-5", name: "GPT-5 via OR" },
        "gpt-5-mini": { id: "gpt-5-mini", name: "GPT-5 mini" },
      },
    },
    { id: "other", models: { "claude-opus": { id: "claude-opus", name: "Opus" }, "claude-haiku": { id: "claude-haiku", name: "Haiku" } } },
    { id: "another", models: { "claude-opus": { id: "claude-opus", name: "Opus (another)" } } },
  ],
};

describe("resolveModel", () => {
  it("takes provider/model as it is", () => {
    expect(resolveModel("fake/backup", catalog)).toEqual({ providerID: "fake", modelID: "backup" });
  });

  it("keeps the rest of the id after the first slash (ids containing /)", () => {
    expect(resolveModel("openrouter/anthropic/claude-sonnet-4", catalog)).toEqual({ providerID: "openrouter", modelID: "anthropic/claude-sonnet-4" });
  });

  it("finds a model id containing / without its provider", () => {
    expect(resolveModel("anthropic/claude-sonnet-4", catalog)).toEqual({ providerID: "openrouter", modelID: "anthropic/claude-sonnet-4" });
  });

  it("parses #variant and checks it exists", () => {
    expect(resolveModel("fake/gpt-5#high", catalog)).toEqual({ providerID: "fake", modelID: "gpt-5", variant: "high" });
    expect(() => resolveModel("fake/gpt-5#ultra", catalog)).toThrow(/no variant "ultra".*high, low/);
  });

  it("resolves a plain name by exact id, preferring the default provider", () => {
    // gpt-5 exists under fake and openrouter: fake is the default provider.
    expect(resolveModel("gpt-5", catalog)).toEqual({ providerID: "fake", modelID: "gpt-5" });
    expect(resolveModel("SCRIPTED", catalog)).toEqual({ providerID: "fake", modelID: "scripted" });
  });

  it("matches a display name exactly", () => {
    expect(resolveModel("Opus", catalog)).toEqual({ providerID: "other", modelID: "claude-opus" });
  });

  it("falls back to the shortest partial match", () => {
    expect(resolveModel("mini", catalog)).toEqual({ providerID: "openrouter", modelID: "gpt-5-mini" });
    expect(resolveModel("back", catalog)).toEqual({ providerID: "fake", modelID: "backup" });
    expect(resolveModel("haiku", catalog)).toEqual({ providerID: "other", modelID: "claude-haiku" });
  });

  it("reports ambiguity with the candidates", () => {
    let error: unknown;
    try {
      resolveModel("claude-opus", catalog); // same id under two providers, neither the default
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ModelResolutionError);
    expect((error as ModelResolutionError).candidates).toEqual(["another/claude-opus", "other/claude-opus"]);
    expect((error as Error).message).toMatch(/ambiguous.*another\/claude-opus, other\/claude-opus.*provider\/model/);
  });

  it("says what exists when nothing matches", () => {
    expect(() => resolveModel("fake/nope", catalog)).toThrow(/Provider "fake" has no model "nope". Its models: fake\/scripted/);
    expect(() => resolveModel("llama", catalog)).toThrow(/No model matches "llama" among the connected providers \(fake, openrouter, other, another\)/);
    expect(() => resolveModel("  ", catalog)).toThrow(/empty/);
  });
});
