/**
 * Our buildpacks' launch layers name no folder of the build: rbp builds at OUT's own path, and an
 * image of that build must not depend on it (the image would otherwise need links from OUT to
 * /layers, with a warning). Shims find their layer from their own path, links between layers are
 * relative, metadata records paths relative to the layers folder. Real builds of each runtime, with
 * the layers read byte by byte.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { FIXTURES, copyFixture, rbp, tmpDir } from '../helpers/rbp.ts';
import { requirement, describeNeeding } from '../helpers/requirement.ts';

/** The files (bytes) and links (targets) under `dir` that hold `needle`, relative to `root`. */
function naming(dir: string, needle: string, root = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return naming(p, needle, root);
    const holds = e.isSymbolicLink() ? fs.readlinkSync(p).includes(needle) : e.isFile() && fs.readFileSync(p).includes(Buffer.from(needle));
    return holds ? [path.relative(root, p)] : [];
  });
}

async function layersOf(fixture: string): Promise<{ out: string; all: string }> {
  const out = path.join(tmpDir('rbp-build-folder-'), 'out');
  const r = await rbp(['build', path.join(FIXTURES, fixture), '--out', out]);
  expect(r.exitCode, r.all).toBe(0);
  return { out, all: r.all };
}

describe('launch layers that name no folder of the build', () => {
  it.each(['node-hello', 'node-bun', 'node-custom-pnpm', 'static-index-html'])(
    '%s',
    async (fixture) => {
      const { out } = await layersOf(fixture);
      const buildpacks = fs.readdirSync(path.join(out, 'layers')).filter((d) => d.startsWith('rbp_'));
      expect(buildpacks.length).toBeGreaterThan(0);
      for (const bp of buildpacks) expect(naming(path.join(out, 'layers', bp), out), bp).toEqual([]);
    },
    300_000,
  );

  it('pnpm: its record of the store is relative in the layer, and the next build’s pnpm install takes it', async () => {
    const app = copyFixture('node-custom-pnpm');
    const out = path.join(tmpDir('rbp-build-folder-'), 'out');
    expect((await rbp(['build', app, '--out', out])).exitCode).toBe(0);
    const state = path.join(out, 'layers', 'rbp_node', 'modules', 'node_modules', '.modules.yaml');
    expect(fs.readFileSync(state, 'utf8')).toMatch(/"storeDir": "\.\.\/\.\.\/package-cache\/pnpm-store\/v\d+"/);
    fs.writeFileSync(path.join(app, 'changed.txt'), 'a change, so the app is built again\n');
    const again = await rbp(['build', app, '--out', out]);
    expect(again.exitCode, again.all).toBe(0);
    expect(again.all).toContain('modules: restored');
    expect(again.all).not.toContain('ERR_PNPM');
  }, 300_000);

  it('node-bun: node means the app’s Bun through a relative link', async () => {
    const { out } = await layersOf('node-bun');
    expect(fs.readlinkSync(path.join(out, 'layers', 'rbp_node', 'bun-node', 'node'))).toBe('../bun/bin/bun');
  }, 300_000);
});

const frankenphp = requirement(process.env.RBP_TOOL_FRANKENPHP, {
  what: 'FrankenPHP',
  how: 'scripts/tools/frankenphp.sh, or RBP_TOOL_FRANKENPHP',
  who: 'the PHP build-folder test',
});
describeNeeding(frankenphp, 'the php layer names no folder of the build', () => {
  it('php-ini: the shims, the exec.d program, the php.ini copy and the layers’ metadata', async () => {
    const { out, all } = await layersOf('php-ini');
    expect(naming(path.join(out, 'layers', 'rbp_phpserver'), out)).toEqual([]);
    expect(all).not.toContain('names the build folder');
    // The exec.d program sets PHP's configuration from where the layer is, wherever that is.
    const moved = path.join(tmpDir('rbp-build-folder-moved-'), 'layers');
    fs.cpSync(path.join(out, 'layers'), moved, { recursive: true, verbatimSymlinks: true });
    const execD = path.join(moved, 'rbp_phpserver', 'php', 'exec.d', 'php-ini');
    const r = await execa(execD, [], {
      stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
      env: { PATH: '/usr/bin:/bin' },
      extendEnv: false,
      stripFinalNewline: false,
    });
    expect(r.stdio[3]).toBe(`PHPRC = "${moved}/rbp_phpserver/php/etc"\nPHP_INI_SCAN_DIR = ":${moved}/rbp_phpserver/php/etc/app"\n`);
  }, 300_000);
});
