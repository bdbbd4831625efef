/**
 * What a failed detect, build or export is, as a user error: the data `--json` shows under `error`
 * (the human log has already said it line by line). A buildpack that failed with a user error of its
 * own (ours print one) is that error; otherwise the lifecycle status decides the id.
 */
import { EXIT, PhaseFailure } from '../cnb/exit.ts';
import { isUserError, UserError, type UserErrorData } from '../errors.ts';

type Said = [id: string, rule?: string, fix?: string];
const FAILED: Required<Said> = [
  'platform/build/failed',
  'A failed build leaves OUT as it was; the build log (stderr with --json) says what went wrong.',
  'Fix what the build log names, then build again.',
];
const INTERRUPTED: Required<Said> = ['platform/interrupted', 'A build stopped by a signal undoes what it did; OUT is as it was.', 'Run the build again.'];
/** By lifecycle status; a rule or fix left out is a failed build's. */
const BY_STATUS: Record<number, Said> = {
  [EXIT.detectNoGroup]: [
    'platform/detect/no-group',
    'A build needs a buildpack group whose buildpacks all pass detection (our three: a package.json with something to start, an index.html or a generator project, an index.php).',
    'Check that APP is the application folder, or pick the runtime with --type.',
  ],
  [EXIT.detectError]: ['platform/detect/buildpack-error', 'A buildpack whose detect fails with an error (not "does not apply") stops detection.'],
  [EXIT.buildFailed]: ['platform/build/buildpack-failed'],
  [EXIT.buildError]: ['platform/build/invalid-output'],
  [EXIT.exportFailed]: ['platform/export/failed'],
};

export function failureError(code: number, message: string): UserErrorData {
  const base = code > 128 ? INTERRUPTED : FAILED;
  const [id, rule = base[1], fix = base[2]] = BY_STATUS[code] ?? base;
  return new UserError({ id, title: message, seen: { what: 'exit status', value: String(code) }, rule, fix }).data;
}

/** The user error of a failure: its own, the one its buildpack printed, else one for its status. */
export function phaseError(e: PhaseFailure): UserErrorData {
  if (isUserError(e.shown)) return e.shown.data;
  return e.reported ?? failureError(e.code, e.message);
}
