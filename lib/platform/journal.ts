/**
 * What a build did that a failure must undo, in the order it did it: each step is recorded with
 * its undo as it is made, and `undo` runs them backwards. Undo never throws: a step that cannot be
 * undone is returned as a line for the log, and the others are still tried.
 */
export class Journal {
  private readonly steps: { what: string; undo: () => void }[] = [];

  record(what: string, undo: () => void): void {
    this.steps.push({ what, undo });
  }

  /** The build stands: nothing of it is undone any more. */
  forget(): void {
    this.steps.length = 0;
  }

  undo(): string[] {
    const problems: string[] = [];
    for (const step of this.steps.reverse()) {
      try {
        step.undo();
      } catch (e) {
        problems.push(`${step.what}: ${(e as Error).message}`);
      }
    }
    this.steps.length = 0;
    return problems;
  }
}
