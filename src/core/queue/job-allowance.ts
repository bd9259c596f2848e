// `worker --max-jobs N`: a worker that takes at most N tasks, then stops taking more and says when
// the last of them has ended, so a pod per task (a KEDA ScaledJob, deploy/k8s/scaledjob/) exits
// once its work is done. Each queue's BullMQ worker fetches on its own, so a job fetched past the
// allowance goes back to its queue untouched (not an attempt) for another worker.
export class JobAllowance {
  private taken = 0;
  private ended = 0;
  private done!: () => void;
  /** Resolves once `max` tasks were taken and all of them have ended (never without a max). */
  readonly spent = new Promise<void>((resolve) => (this.done = resolve));

  constructor(readonly max: number | undefined) {}

  /** A job arrives: true when this worker may run it (it then counts). */
  take(): boolean {
    if (this.max === undefined) return true;
    if (this.taken >= this.max) return false;
    this.taken++;
    return true;
  }

  /** A taken job went back to its queue without running (its provider at the fleet's limit): it no longer counts. */
  giveBack(): void {
    if (this.max !== undefined) this.taken--;
  }

  /** A taken job has ended (done, failed, cancelled). */
  end(): void {
    if (this.max === undefined) return;
    this.ended++;
    if (this.ended >= this.max) this.done();
  }

  /** Every task this worker may take is taken. */
  get full(): boolean {
    return this.max !== undefined && this.taken >= this.max;
  }
}
