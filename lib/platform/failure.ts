/**
 * What a failed detect, build or export is, as a user error: the data `--json` shows under `error`
 * (the human log has already said it line by line). A buildpack that failed with a user error of its
 * own (ours print one) is that error; otherwise the lifecycle status decides the id.
 */
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { isUserError, UserError, type UserErrorData } from '../errors.ts';

export function failureError(code: number, message: string): UserErrorData {
  const signal = code > 128;
  return new UserError({
    id:
      code === EXIT.detectNoGroup
        ? 'platform/detect/no-group'
        : code === EXIT.detectError
          ? 'platform/detect/buildpack-error'
          : code === EXIT.buildFailed
            ? 'platform/build/buildpack-failed'
            : code === EXIT.buildError
              ? 'platform/build/invalid-output'
              : code === EXIT.exportFailed
                ? 'platform/export/failed'
                : signal
                  ? 'platform/interrupted'
                  : 'platform/build/failed',
    title: message,
    seen: { what: 'exit status', value: String(code) },
    rule:
      code === EXIT.detectNoGroup
        ? 'A build needs a buildpack group whose buildpacks all pass detection (our three: a package.json with something to start, an index.html or a generator project, an index.php).'
        : code === EXIT.detectError
          ? 'A buildpack whose detect fails with an error (not "does not apply") stops detection.'
          : signal
            ? 'A build stopped by a signal undoes what it did; OUT is as it was.'
            : 'A failed build leaves OUT as it was; the build log (stderr with --json) says what went wrong.',
    fix:
      code === EXIT.detectNoGroup
        ? 'Check that APP is the application folder, or pick the runtime with --type.'
        : signal
          ? 'Run the build again.'
          : 'Fix what the build log names, then build again.',
  }).data;
}

/** The user error of a failure: its own, the one its buildpack printed, else one for its status. */
export function phaseError(e: PhaseFailure): UserErrorData {
  if (isUserError(e.shown)) return e.shown.data;
  return e.reported ?? failureError(e.code, e.message);
}
