// Secrets in the build: CC_BUILD_COMMAND runs with the user's variables, NPM_TOKEN included; what it
// prints reaches the log with every secret value masked, and the token is in no file of the output.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFixture, tmpDir } from '../helpers/rbp.ts';
import { build, swsMirror, swsTool } from './helpers.ts';

const sws = swsTool('static secrets test');

describe.skipIf(sws.skip)('secrets and CC_BUILD_COMMAND', () => {
  it('masks a secret the command prints, and keeps it out of OUT', async () => {
    const token = 'npm_PRIVATE_token_4711';
    const app = copyFixture('static-build-command');
    const out = path.join(tmpDir(), 'out');
    const command = 'echo "using $NPM_TOKEN" && mkdir -p dist && sed \'s/@@STAMP@@/build time/\' src/index.html > dist/index.html';
    const r = await build(
      app,
      out,
      { CC_BUILD_COMMAND: command, CC_WEBROOT: '/dist', NPM_TOKEN: token },
      { RBP_DEPENDENCY_MIRROR: await swsMirror(sws.path()) },
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('using ***');
    expect(r.all).not.toContain(token);
    const files: string[] = fs
      .readdirSync(out, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name));
    for (const f of files) expect(fs.readFileSync(f, 'latin1').includes(token), f).toBe(false);
  });
});
