/**
 * OUT as a transaction. A build happens in OUT itself, at the path its buildpacks see and the app
 * later runs from (the CNB spec's layers and app paths are the same at build and at launch): the
 * previous OUT waits in `OUT.rbp-previous` while it runs, and is put back when the build fails or
 * is stopped, or by the next rbp command when it was killed (out-recover.ts). Every step that a
 * failure must undo goes into one journal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { checkpoint } from './checkpoint.ts';
import { isDir, moveTree, rmrf } from './fsops.ts';
import { Journal } from './journal.ts';
import { releaseLock, takeLock } from './out-lock.ts';
import { checkBuildPaths, OUT_MARKER, previousOf, type BuildPaths } from './out-paths.ts';
import { recover } from './out-recover.ts';

export class OutTransaction {
  readonly out: string;
  readonly cacheDir: string;
  /** The previous build (set aside in OUT.rbp-previous), whose layers this build may reuse. */
  previous: string | undefined;
  private readonly journal = new Journal();
  private readonly locked: string[] = [];

  /** Checks the paths (nothing is touched when they are refused) and takes OUT's and the cache's locks. */
  constructor(p: BuildPaths) {
    this.out = path.resolve(p.outDir);
    this.cacheDir = path.resolve(p.cacheDir);
    checkBuildPaths({ ...p, outDir: this.out, cacheDir: this.cacheDir });
    takeLock(this.out, '--out');
    this.locked.push(this.out);
    try {
      takeLock(this.cacheDir, p.explicitCache ? '--cache' : 'the cache beside OUT');
      this.locked.push(this.cacheDir);
    } catch (e) {
      this.release();
      throw e;
    }
  }

  /** Recovers from an earlier crash, sets the previous OUT aside and makes OUT anew. Returns lines for the log. */
  begin(): string[] {
    const notes = [recover(this.out)].filter((n): n is string => Boolean(n));
    const prev = previousOf(this.out);
    if (fs.existsSync(prev)) {
      throw new UserError({
        id: 'platform/out/previous-left',
        title: 'An earlier build left OUT.rbp-previous beside an OUT rbp cannot judge',
        seen: { what: '--out', value: this.out, where: prev },
        rule: 'rbp keeps the previous OUT aside while it builds; after a crash it takes it back when OUT is incomplete.',
        fix: `Keep the one you want: remove ${this.out} or ${prev}, then build again.`,
      });
    }
    if (isDir(this.out) && fs.readdirSync(this.out).length > 0) {
      try {
        fs.renameSync(this.out, prev);
      } catch (e) {
        throw new UserError({
          id: 'platform/out/cannot-move',
          title: 'The previous OUT cannot be set aside',
          seen: { what: '--out', value: this.out },
          rule: `rbp renames OUT to ${path.basename(prev)} while it builds, so that a failed build can put it back; the rename failed (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`,
          fix: 'Use an OUT that is not a mount point, in a folder you may write.',
        });
      }
      this.journal.record(`putting ${prev} back`, () => fs.renameSync(prev, this.out));
      this.previous = prev;
    } else rmrf(this.out);
    fs.mkdirSync(this.out);
    this.journal.record(`removing the incomplete ${this.out}`, () => rmrf(this.out));
    fs.writeFileSync(path.join(this.out, OUT_MARKER), 'This folder is an rbp build output: rbp build replaces it.\n');
    checkpoint('begun');
    return notes;
  }

  /** A launch layer the buildpack kept by writing only its metadata: the previous build's folder, moved in (and back if the build fails). */
  reuseFromPrevious(prevLayer: string, dst: string): void {
    moveTree(prevLayer, dst);
    this.journal.record(`moving ${dst} back`, () => moveTree(dst, prevLayer));
  }

  /** The new build is complete (rbp.toml is written): it stands. Returns the previous build, for the cache to take its folders, then `finish`. */
  commit(): string | undefined {
    this.journal.forget();
    return this.previous;
  }

  /** Removes the previous build once nothing is taken from it any more. */
  finish(): string[] {
    if (!this.previous) return [];
    try {
      rmrf(this.previous);
      return [];
    } catch (e) {
      return [`could not remove the previous build ${this.previous}: ${(e as Error).message}`];
    }
  }

  /** Undoes what this build did to OUT, in reverse; returns what could not be undone. */
  rollback(): string[] {
    return this.journal.undo();
  }

  /** Gives the locks up (after commit or rollback). */
  release(): void {
    for (const dir of this.locked.splice(0)) releaseLock(dir);
  }
}
