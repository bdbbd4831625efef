/**
 * Libraries most runs never call (undici, execa, tar, yaml) are files of their own beside each
 * bundle that may call them (scripts/build.mjs ASIDE), so that loading rbp or a buildpack's build
 * does not read and deserialize them. Each bundle holds none of them and requires each
 * from the file beside it; each file, loaded the way the bundle loads it, does what rbp asks of it.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from '../helpers/rbp.ts';

const dist = path.join(ROOT, 'dist');
const LIBRARIES = ['undici', 'execa', 'tar', 'yaml'];
const bundles = ['rbp.bundle.cjs', ...['node', 'phpserver', 'static'].map((n) => path.join('buildpacks', n, 'lib', 'build.bundle.cjs'))];
/** Where bundles that set them aside live: each folder has the four files. */
const dirs = [dist, ...['node', 'phpserver', 'static'].map((n) => path.join(dist, 'buildpacks', n, 'lib'))];

describe('libraries beside the bundles', () => {
  it.each(bundles)('%s holds none of them, and requires the ones it calls from the file beside it', (b) => {
    const text = fs.readFileSync(path.join(dist, b), 'utf8');
    for (const lib of LIBRARIES) expect(text).not.toMatch(new RegExp(`// node_modules/${lib}/`));
    // Each runs processes (execa) and downloads (undici): those at least are asked for.
    for (const lib of ['undici', 'execa']) expect(text).toMatch(new RegExp(`require\\(["']\\./${lib}\\.cjs["']\\)`));
    for (const lib of LIBRARIES) expect(fs.existsSync(path.join(dist, path.dirname(b), `${lib}.cjs`))).toBe(true);
  });

  it('a fetch through the file beside a bundle reaches a server', async () => {
    const server = http.createServer((_q, s) => s.end('fetched\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as { port: number };
    try {
      for (const dir of dirs) {
        const r = await execa(
          'node',
          [
            '-e',
            `require(${JSON.stringify(path.join(dir, 'undici.cjs'))}).fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))`,
            `http://127.0.0.1:${port}/`,
          ],
          { reject: false },
        );
        expect(r.stdout).toBe('fetched'); // execa drops the final newline
      }
    } finally {
      server.close();
    }
  });

  it.each(dirs.map((d) => path.relative(ROOT, d)))('%s: execa runs a process, tar packs and lists, yaml parses', async (rel) => {
    const dir = path.join(ROOT, rel);
    const work = tmpDir('rbp-aside-');
    fs.writeFileSync(path.join(work, 'a.txt'), 'a');
    // What the bundles call of each (scripts/build.mjs LAZY): execa's execa, tar's c and t, yaml's parse.
    const script = `
      const lib = (n) => require(require('node:path').join(process.argv[1], n + '.cjs'));
      (async () => {
        const ran = await lib('execa').execa(process.execPath, ['-e', 'process.stdout.write("ran")']);
        await lib('tar').c({ file: 'a.tar', cwd: process.argv[2] }, ['a.txt']);
        const listed = [];
        await lib('tar').t({ file: 'a.tar', onReadEntry: (e) => listed.push(e.path) });
        const parsed = lib('yaml').parse('lockfileVersion: 9.0\\npackages:\\n  a@1.0.0: {}\\n');
        process.stdout.write(JSON.stringify({ ran: ran.stdout, listed, parsed }));
      })();`;
    const r = await execa('node', ['-e', script, dir, work], { cwd: work, reject: false });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ ran: 'ran', listed: ['a.txt'], parsed: { lockfileVersion: 9, packages: { 'a@1.0.0': {} } } });
  });
});
