// deploy/k8s validated against the Kubernetes and KEDA schemas (kubernetes-models): every document
// must be a known kind that passes its schema, and the Deployment's numbers must match docs/scaling.md.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Secret } from "kubernetes-models/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { ScaledObject, TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const DIR = join(import.meta.dirname, "../../deploy/k8s");
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Secret": Secret as never,
  "apps/v1/Deployment": Deployment as never,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject as never,
  "keda.sh/v1alpha1/TriggerAuthentication": TriggerAuthentication as never,
};

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };

function documents(): Array<{ file: string; doc: Doc }> {
  return readdirSync(DIR)
    .filter((f) => f.endsWith(".yaml"))
    .flatMap((file) => parseAllDocuments(readFileSync(join(DIR, file), "utf8")).map((d) => ({ file, doc: d.toJS() as Doc })));
}

function validate(doc: Doc): void {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) throw new Error(`unknown kind ${doc.apiVersion}/${doc.kind}`);
  new Model(doc as never).validate();
}

describe("deploy/k8s", () => {
  it("holds a Secret, the worker Deployment, a KEDA ScaledObject and its TriggerAuthentication, all valid", () => {
    const docs = documents();
    expect(docs.map((d) => d.doc.kind).sort()).toEqual(["Deployment", "ScaledObject", "Secret", "TriggerAuthentication"]);
    for (const { file, doc } of docs) expect(() => validate(doc), `${file}: ${doc.kind}`).not.toThrow();
  });

  it("the validation is real: a broken Deployment and a ScaledObject without triggers are refused", () => {
    const deployment = documents().find((d) => d.doc.kind === "Deployment")!.doc as Doc & {
      spec: { template: { spec: { containers: Array<Record<string, unknown>> } } };
    };
    const broken = structuredClone(deployment);
    delete broken.spec.template.spec.containers[0]!.name;
    expect(() => validate(broken)).toThrow();
    const scaled = structuredClone(documents().find((d) => d.doc.kind === "ScaledObject")!.doc) as Doc & { spec: Record<string, unknown> };
    delete scaled.spec.triggers;
    expect(() => validate(scaled)).toThrow();
  });

  it("scales on the queue's BullMQ lists, one replica per worker's concurrency, and wires the Secret", () => {
    const docs = documents();
    const scaled = docs.find((d) => d.doc.kind === "ScaledObject")!.doc as unknown as {
      spec: { scaleTargetRef: { name: string }; triggers: Array<{ type: string; metadata: { listName: string; listLength: string } }> };
    };
    const deployment = docs.find((d) => d.doc.kind === "Deployment")!.doc as unknown as {
      metadata: { name: string };
      spec: {
        template: {
          spec: { containers: Array<{ args: string[]; envFrom: Array<{ secretRef: { name: string } }>; resources: { requests: { memory: string } } }> };
        };
      };
    };
    const secret = docs.find((d) => d.doc.kind === "Secret")!.doc;
    const worker = deployment.spec.template.spec.containers[0]!;
    expect(scaled.spec.scaleTargetRef.name).toBe(deployment.metadata.name);
    expect(scaled.spec.triggers.map((t) => [t.type, t.metadata.listName])).toEqual([
      ["redis", "occ:tasks:wait"],
      ["redis", "occ:tasks:active"],
    ]);
    const concurrency = worker.args[worker.args.indexOf("--concurrency") + 1];
    for (const t of scaled.spec.triggers) expect(t.metadata.listLength).toBe(concurrency);
    expect(worker.envFrom[0]!.secretRef.name).toBe(secret.metadata.name);
    expect(readFileSync(join(import.meta.dirname, "../../docs/scaling.md"), "utf8")).toContain(worker.resources.requests.memory);
  });
});
