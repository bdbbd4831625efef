/**
 * Every fixtures/php-* app, case by case as its test.json says: the build (with the server installed
 * from a local mirror, real Debian PHP and Composer), its log and error, the files it leaves, the exact
 * launch command (`rbp run --dry-run`), tasks run for real, and HTTP checks. With the real server
 * (RBP_TOOL_FRANKENPHP, see support.ts) every build uses it as the operator's server and every HTTP
 * check goes through it; without it they fail in CI and are skipped locally, saying why. A
 * CC_RUN_COMMAND case that needs no server is served for real either way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execaSync } from 'execa';
import { it } from 'vitest';
import { fixtureSuite } from '../helpers/fixture-driver.ts';
import { fixturesWithSpec, type FixtureSpec } from '../helpers/fixture-spec.ts';
import { FIXTURES, copyFixture } from '../helpers/rbp.ts';
import { COMPOSER, PHP, SERVER, SYSTEM_PHP, itWithPhpExtensions, itWithServer, makeMirror, operatorEnv } from './support.ts';

function appFor(name: string, spec: FixtureSpec): string {
  if (!spec.needsComposerPhar) return path.join(FIXTURES, name);
  const app = copyFixture(name);
  execaSync(PHP, ['-d', 'phar.readonly=0', path.join(import.meta.dirname, 'make-composer-phar.php'), COMPOSER, path.join(app, 'composer.phar')]);
  return app;
}

let mirror: string;
fixtureSuite(fixturesWithSpec('php-'), {
  type: 'phpserver',
  setup: () => {
    mirror = makeMirror();
  },
  teardown: () => fs.rmSync(mirror, { recursive: true, force: true }),
  app: appFor,
  operatorEnv: () => operatorEnv(mirror, SERVER ? { RBP_TOOL_FRANKENPHP: SERVER } : {}),
  // {server}: the server the launch runs (the operator's, else the built one); {builtServer}: the built one, which
  // the operator's server of the other line never replaces (RBP_TOOL_FRANKENPHP does not stand for an 8.5 build's).
  launchVars: (out) => {
    const built = path.join(out, 'layers', 'rbp_phpserver', 'frankenphp', 'bin', 'frankenphp');
    return { server: SERVER ?? built, builtServer: built };
  },
  // With the real server, tasks run its own PHP CLI (the php layer finds it beside the server).
  runOperatorEnv: (): Record<string, string> => (SERVER ? {} : { RBP_TOOL_PHP: SYSTEM_PHP }),
  buildTest: (c) => (c.needsServer ? (n, fn, timeout) => itWithServer(n, fn, timeout) : (n, fn, timeout) => it(n, fn, timeout)),
  // A CC_RUN_COMMAND case needs no application server; the others need the real one.
  httpTest: (c) =>
    c.serveWithoutServer
      ? (n, fn) => it(n, fn, 120_000)
      : c.needsPhpExtensions?.length
        ? (n, fn) => itWithPhpExtensions(c.needsPhpExtensions!, n, fn)
        : (n, fn) => itWithServer(n, fn),
});
