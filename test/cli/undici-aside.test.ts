/**
 * undici (~1 MiB) serves downloads only: it is a file of its own beside each bundle that may make
 * one (scripts/build.mjs), so that loading rbp or a buildpack's build does not read and compile it.
 * A download still works from each bundle: the require of `./undici.cjs` finds the file beside it.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/rbp.ts';

const dist = path.join(ROOT, 'dist');
const bundles = ['rbp.bundle.cjs', ...['node', 'phpserver', 'static'].map((n) => path.join('buildpacks', n, 'lib', 'build.bundle.cjs'))];

describe('undici beside the bundles', () => {
  it.each(bundles)('%s holds no undici, and requires it from undici.cjs beside it', (b) => {
    const text = fs.readFileSync(path.join(dist, b), 'utf8');
    expect(text).not.toMatch(/\/\/ node_modules\/undici\//);
    expect(text).toMatch(/require\(["']\.\/undici\.cjs["']\)/);
    expect(fs.existsSync(path.join(dist, path.dirname(b), 'undici.cjs'))).toBe(true);
  });

  it('a fetch through the file beside a bundle reaches a server', async () => {
    const server = http.createServer((_q, s) => s.end('fetched\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as { port: number };
    try {
      for (const dir of [dist, path.join(dist, 'buildpacks', 'node', 'lib')]) {
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
});
