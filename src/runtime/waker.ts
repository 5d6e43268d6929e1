/** A sleep that something else can cut short: a file-watch hint or a finished push. */
export class Waker {
  private pending: (() => void) | undefined;
  private woken = false;

  wake(): void {
    this.woken = true;
    this.pending?.();
  }

  wait(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.pending = undefined;
        self.woken = false;
        resolve();
      }
      this.pending = done;
    });
  }
}
