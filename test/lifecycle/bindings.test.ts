// `rbp build --binding DIR`: service bindings reach buildpacks as <platform>/bindings/<name>/, and
// their secrets are written nowhere: not in OUT, not in the cache, not in the log.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rbp, tmpDir } from '../helpers/rbp.ts';
import { allFiles, bpArgs, passWith, scriptedApp } from './helpers.ts';

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

function binding(name: string, files: Record<string, string>): string {
  const dir = path.join(tmpDir('rbp-binding-'), name);
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, v] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), v);
  return dir;
}

describe('--binding', () => {
  it('gives each binding to detect and build as <platform>/bindings/<name>; the secret stays out of OUT and the cache', async () => {
    const secret = 'binding-secret-VALUE-31337';
    const deploy = binding('git-deploy', { type: 'ssh-key', 'ssh-privatekey': secret });
    const db = binding('db', { type: 'postgresql', host: 'db.internal' });
    const show = 'for b in "$CNB_PLATFORM_DIR"/bindings/*; do echo "binding $(basename "$b"): $(cat "$b/type")"; done';
    const app = scriptedApp({
      'a/detect': `${show}\n${passWith()}`,
      // The app compares a digest, so the secret itself is in no file of the app.
      'a/build': `${show}\ntest "$(sha256sum < "$CNB_PLATFORM_DIR/bindings/git-deploy/ssh-privatekey" | cut -d' ' -f1)" = "${sha256(secret)}" && echo "secret readable"`,
    });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const r = await rbp(['build', app, '--out', out, ...bpArgs('a'), '--binding', deploy, '--binding', db]);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('binding db: postgresql');
    expect(r.stdout).toContain('binding git-deploy: ssh-key');
    expect(r.stdout).toContain('secret readable');
    expect(r.all).not.toContain(secret);
    for (const dir of [out, `${out}.rbp-cache`].filter((d) => fs.existsSync(d))) {
      for (const f of allFiles(dir)) expect(fs.readFileSync(f, 'latin1').includes(secret), f).toBe(false);
    }
  });

  it('refuses a directory without a type file, as one error block', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': 'true' });
    const bad = binding('creds', { password: 'x' });
    const r = await rbp(['build', app, '--out', path.join(tmpDir(), 'out'), ...bpArgs('a'), '--binding', bad]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.replace(bad, '<dir>')).toContain(
      [
        '! ERROR Invalid service binding',
        '!',
        '! Seen: --binding: "<dir>"',
        '! Rule: A binding is a directory named after the binding, holding a `type` file and one file per value; this one has no `type` file.',
      ].join('\n'),
    );
  });
});
