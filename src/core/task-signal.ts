// Each task of a batch waits on an abort signal of its own, tied to the batch's. A task's waits add
// and remove their abort listeners as they sleep and wake; on one shared signal, twelve tasks at
// once passed Node's limit of ten listeners and it warned of a leak. AbortSignal.any follows its
// source without a listener on it, so the shared signal holds none per task, and a task's signal
// (with whatever still listens on it) goes with the task.

/** A signal of the task's own that aborts when `shared` does (with its reason); undefined without one. */
export function taskSignal(shared: AbortSignal | undefined): AbortSignal | undefined {
  return shared ? AbortSignal.any([shared]) : undefined;
}
