import { describe, expect, it } from 'vitest';
import { isUserError, renderUserError } from '../errors.ts';
import { adoptForeignVariables } from './foreign.ts';
import { spec } from './read.ts';
import { FOREIGN_VARIABLES } from './variables.ts';

describe("other platforms' variables", () => {
  it('each one means a declared variable, or says what to do instead', () => {
    for (const f of FOREIGN_VARIABLES) {
      expect(Boolean(f.means) !== Boolean(f.hint), f.name).toBe(true);
      if (f.means) expect(spec(f.means).name).toBe(f.means);
    }
  });

  it('fills the contract variable when it is unset, in the contract’s shape, and says so', () => {
    const env: Record<string, string | undefined> = { BP_NODE_VERSION: '24.15.*', BP_NODE_RUN_SCRIPTS: 'build' };
    const notes = adoptForeignVariables(env, 'node');
    expect(env.CC_NODE_VERSION).toBe('24.15');
    expect(notes).toEqual([
      'BP_NODE_VERSION=24.15.* (Paketo) is read as CC_NODE_VERSION=24.15: CC_NODE_VERSION is unset',
      expect.stringMatching(/^BP_NODE_RUN_SCRIPTS=build \(Paketo\) has no equivalent here: /),
    ]);
    for (const [v, want] of [
      ['20.x', '20'],
      ['~22', '22'],
      ['v24.15.0', '24.15.0'],
      ['24', '24'],
    ]) {
      const e: Record<string, string | undefined> = { BP_NODE_VERSION: v };
      adoptForeignVariables(e, 'node');
      expect(e.CC_NODE_VERSION, v).toBe(want);
    }
  });

  it('leaves the contract variable alone when it is set, and the other runtimes’ variables to them', () => {
    const env: Record<string, string | undefined> = { BP_PHP_WEB_DIR: 'htdocs', CC_WEBROOT: '/public', BP_WEB_SERVER_ROOT: 'dist', BP_PHP_VERSION: '8.5.*' };
    expect(adoptForeignVariables(env, 'phpserver')).toEqual([
      'BP_PHP_WEB_DIR=htdocs (Paketo) is ignored: CC_WEBROOT is set (CC_WEBROOT=/public)',
      'BP_PHP_VERSION=8.5.* (Paketo) is read as CC_PHP_VERSION=8.5: CC_PHP_VERSION is unset',
    ]);
    expect(env.CC_WEBROOT).toBe('/public');
    const st: Record<string, string | undefined> = { BP_WEB_SERVER_ROOT: 'dist', BP_NODE_VERSION: '22' };
    adoptForeignVariables(st, 'static');
    expect(st).toEqual({ BP_WEB_SERVER_ROOT: 'dist', BP_NODE_VERSION: '22', CC_WEBROOT: 'dist' });
  });

  it('a value the contract variable cannot hold is the foreign variable’s own error', () => {
    let err: unknown;
    try {
      adoptForeignVariables({ BP_PHP_VERSION: '8.3.*' }, 'phpserver');
    } catch (e) {
      err = e;
    }
    expect(isUserError(err)).toBe(true);
    expect(renderUserError((err as { data: Parameters<typeof renderUserError>[0] }).data)).toMatchInlineSnapshot(`
      "! ERROR Invalid BP_PHP_VERSION
      !
      ! Seen: BP_PHP_VERSION: "8.3.*" (the application environment)
      ! Rule: BP_PHP_VERSION is one of 8.4, 8.5: Paketo's BP_PHP_VERSION is read as CC_PHP_VERSION (contract, phpserver versioning).
      ! Fix:  Set BP_PHP_VERSION to one of 8.4, 8.5, or set CC_PHP_VERSION instead (the contract's variable wins).
      ! (error id: config/BP_PHP_VERSION/invalid)"
    `);
  });
});
