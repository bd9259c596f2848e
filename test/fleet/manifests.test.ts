// deploy/k8s validated against the Kubernetes and KEDA schemas (kubernetes-models): every document
// must be a known kind that passes its schema, and the Deployment's numbers must match docs/scaling.md.
// The ScaledJob variants (deploy/k8s/scaledjob/: a pod per task, a pod per workflow run) are checked the same way.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Secret, Service } from "kubernetes-models/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { ScaledJob, ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const DIR = join(import.meta.dirname, "../../deploy/k8s");
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Secret": Secret as never,
  "v1/Service": Service as never,
  "apps/v1/Deployment": Deployment as never,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject as never,
  "keda.sh/v1alpha1/ScaledJob": ScaledJob as never,
};

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };

function documents(dir = DIR): Array<{ file: string; doc: Doc }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), "utf8")).map((d) => ({ file, doc: d.toJS() as Doc })));
}

function validate(doc: Doc): void {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) throw new Error(`unknown kind ${doc.apiVersion}/${doc.kind}`);
  new Model(doc as never).validate();
}

describe("deploy/k8s", () => {
  it("holds a Secret, the worker and backlog Deployments, the backlog's Service and a KEDA ScaledObject, all valid", () => {
    const docs = documents();
    expect(docs.map((d) => d.doc.kind).sort()).toEqual(["Deployment", "Deployment", "ScaledObject", "Secret", "Service"]);
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

  it("scales on the backlog served by `queue metrics --listen` (waiting and running), one replica per worker's concurrency, and wires the Secret", () => {
    const docs = documents();
    const scaled = docs.find((d) => d.doc.kind === "ScaledObject")!.doc as unknown as {
      spec: { scaleTargetRef: { name: string }; triggers: Array<{ type: string; metadata: { url: string; valueLocation: string; targetValue: string } }> };
    };
    type Container = {
      args?: string[];
      command?: string[];
      envFrom?: Array<{ secretRef: { name: string } }>;
      env?: Array<{ name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }>;
      ports?: Array<{ name: string; containerPort: number }>;
      resources: { requests: { memory: string } };
    };
    const deployments = docs
      .filter((d) => d.doc.kind === "Deployment")
      .map(
        (d) =>
          d.doc as unknown as {
            metadata: { name: string };
            spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } };
          },
      );
    const deployment = deployments.find((d) => d.metadata.name === "opencode-conductor-worker")!;
    const backlog = deployments.find((d) => d.metadata.name === "opencode-conductor-backlog")!;
    const service = docs.find((d) => d.doc.kind === "Service")!.doc as unknown as {
      metadata: { name: string };
      spec: { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string }> };
    };
    const secret = docs.find((d) => d.doc.kind === "Secret")!.doc as Doc & { stringData: Record<string, string> };
    const worker = deployment.spec.template.spec.containers[0]!;
    expect(scaled.spec.scaleTargetRef.name).toBe(deployment.metadata.name);

    // The backlog process is `queue metrics --listen` on the port its Service exposes, with only the queue URL.
    const metrics = backlog.spec.template.spec.containers[0]!;
    const cli = metrics.command!;
    expect(cli.slice(2, 5)).toEqual(["queue", "metrics", "--listen"]);
    const port = Number(cli[5]!.split(":").pop());
    expect(metrics.ports![0]!.containerPort).toBe(port);
    expect(metrics.envFrom).toBeUndefined();
    expect(metrics.env!.map((e) => [e.name, e.valueFrom?.secretKeyRef.name, e.valueFrom?.secretKeyRef.key])).toEqual([
      ["OPENCODE_CONDUCTOR_QUEUE", secret.metadata.name, "OPENCODE_CONDUCTOR_QUEUE"],
    ]);
    expect(Object.keys(secret.stringData)).toContain("OPENCODE_CONDUCTOR_QUEUE");
    expect(service.spec.selector).toEqual(backlog.spec.template.metadata.labels);
    expect(service.spec.ports[0]!.targetPort).toBe(metrics.ports![0]!.name);

    // Both triggers read that Service's GET /backlog: the jobs waiting (every BullMQ key) and running.
    const url = `http://${service.metadata.name}:${service.spec.ports[0]!.port}/backlog`;
    expect(scaled.spec.triggers.map((t) => [t.type, t.metadata.url, t.metadata.valueLocation])).toEqual([
      ["metrics-api", url, "waiting"],
      ["metrics-api", url, "active"],
    ]);
    const concurrency = worker.args![worker.args!.indexOf("--concurrency") + 1];
    for (const t of scaled.spec.triggers) expect(t.metadata.targetValue).toBe(concurrency);
    expect(worker.envFrom![0]!.secretRef.name).toBe(secret.metadata.name);
    expect(readFileSync(join(import.meta.dirname, "../../docs/scaling.md"), "utf8")).toContain(worker.resources.requests.memory);
  });

  describe("the ScaledJob variant (scaledjob/)", () => {
    type Job = Doc & {
      spec: {
        jobTargetRef: {
          backoffLimit: number;
          template: { spec: { restartPolicy: string; containers: Array<{ name?: string; args: string[]; envFrom: Array<{ secretRef: { name: string } }> }> } };
        };
        scalingStrategy: { strategy: string };
        triggers: Array<{ type: string; metadata: { url: string; valueLocation: string; targetValue: string } }>;
      };
    };
    const variant = () => documents(join(DIR, "scaledjob"));
    const named = (name: string) => variant().find((d) => d.doc.metadata.name === name)!.doc as Job;

    it("holds two valid KEDA ScaledJobs: a pod per task and a pod per workflow run", () => {
      const docs = variant();
      expect(docs.map((d) => [d.file, d.doc.kind, d.doc.metadata.name])).toEqual([
        ["run-scaledjob.yaml", "ScaledJob", "opencode-conductor-run"],
        ["task-scaledjob.yaml", "ScaledJob", "opencode-conductor-task"],
      ]);
      for (const { file, doc } of docs) expect(() => validate(doc), `${file}: ${doc.kind}`).not.toThrow();
    });

    it("the validation is real: a copy without its job, or without triggers, or with a nameless container, is refused", () => {
      const job = named("opencode-conductor-task");
      const noJob = structuredClone(job) as Doc & { spec: Record<string, unknown> };
      delete noJob.spec.jobTargetRef;
      expect(() => validate(noJob)).toThrow();
      const noTriggers = structuredClone(job) as Doc & { spec: Record<string, unknown> };
      delete noTriggers.spec.triggers;
      expect(() => validate(noTriggers)).toThrow();
      const nameless = structuredClone(job);
      delete nameless.spec.jobTargetRef.template.spec.containers[0]!.name;
      expect(() => validate(nameless)).toThrow();
    });

    it("runs one task per pod (--max-jobs 1 --concurrency 1 --walks 0, never restarted by Kubernetes), one Job per waiting task of the same backlog, and wires the Secret", () => {
      const job = named("opencode-conductor-task");
      const scaled = documents().find((d) => d.doc.kind === "ScaledObject")!.doc as Job;
      const secret = documents().find((d) => d.doc.kind === "Secret")!.doc;
      const pod = job.spec.jobTargetRef.template.spec;
      const args = pod.containers[0]!.args;
      expect(args[args.indexOf("--max-jobs") + 1]).toBe("1");
      expect(args[args.indexOf("--concurrency") + 1]).toBe("1");
      // A task pod takes no walk job: a walk would outlive its one task (run-scaledjob.yaml has a pod per run).
      expect(args[args.indexOf("--walks") + 1]).toBe("0");
      expect(pod.restartPolicy).toBe("Never");
      expect(job.spec.jobTargetRef.backoffLimit).toBe(0);
      expect(pod.containers[0]!.envFrom[0]!.secretRef.name).toBe(secret.metadata.name);
      // The backlog's jobs that no worker holds yet, one Job each; `accurate`: that count excludes running ones.
      const waiting = scaled.spec.triggers.find((t) => t.metadata.valueLocation === "waiting")!;
      expect(job.spec.triggers.map((t) => [t.type, t.metadata.url, t.metadata.valueLocation, t.metadata.targetValue])).toEqual([
        ["metrics-api", waiting.metadata.url, "waiting", "1"],
      ]);
      expect(job.spec.scalingStrategy.strategy).toBe("accurate");
    });

    it("walks one run per pod (--max-jobs 1 --walks 1 --concurrency 0: no task of its own, never restarted by Kubernetes), one Job per waiting walk job of the same backlog, and wires the Secret", () => {
      const job = named("opencode-conductor-run");
      const task = named("opencode-conductor-task");
      const secret = documents().find((d) => d.doc.kind === "Secret")!.doc;
      const pod = job.spec.jobTargetRef.template.spec;
      const args = pod.containers[0]!.args;
      expect(args[args.indexOf("--max-jobs") + 1]).toBe("1");
      expect(args[args.indexOf("--walks") + 1]).toBe("1");
      expect(args[args.indexOf("--concurrency") + 1]).toBe("0");
      expect(pod.restartPolicy).toBe("Never");
      expect(job.spec.jobTargetRef.backoffLimit).toBe(0);
      expect(pod.containers[0]!.envFrom[0]!.secretRef.name).toBe(secret.metadata.name);
      // The walk jobs no pod has taken (counted apart from the tasks in the backlog's answer), one Job each.
      expect(job.spec.triggers.map((t) => [t.type, t.metadata.url, t.metadata.valueLocation, t.metadata.targetValue])).toEqual([
        ["metrics-api", task.spec.triggers[0]!.metadata.url, "walks.waiting", "1"],
      ]);
      expect(job.spec.scalingStrategy.strategy).toBe("accurate");
      const broken = structuredClone(job);
      delete broken.spec.jobTargetRef.template.spec.containers[0]!.name;
      expect(() => validate(broken)).toThrow();
    });
  });
});
