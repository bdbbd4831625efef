/**
 * Auto-build: the generator table drives detection and the command line; VitePress and Astro are
 * built for real from the npm registry, MkDocs and Hugo with the tools this machine has (Debian's,
 * given as RBP_TOOL_MKDOCS / RBP_TOOL_HUGO), and every site is then served by Caddy. Zola and mdBook
 * cannot be fetched here: their detection and command line are checked, and they are built for real
 * when RBP_TOOL_ZOLA / RBP_TOOL_MDBOOK are provided.
 */
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { copyFixture, freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { build, caddyTool, envArgs, runChecks, serve, spec, workspaceEntries } from './helpers.ts';

const caddy = await caddyTool();
const which = async (cmd: string) => {
  const r = await execa('sh', ['-c', `command -v ${cmd}`], { reject: false });
  return r.exitCode === 0 ? String(r.stdout).trim() : undefined;
};
const mkdocs = process.env.RBP_TOOL_MKDOCS ?? (await which('mkdocs'));
const hugo = process.env.RBP_TOOL_HUGO ?? (await which('hugo'));
const zola = process.env.RBP_TOOL_ZOLA;
const mdbook = process.env.RBP_TOOL_MDBOOK;
for (const [tool, have] of Object.entries({ caddy, mkdocs, hugo, zola, mdbook })) {
  if (!have) console.warn(`static generator tests: ${tool} is not available (RBP_TOOL_${tool.toUpperCase()}): its real build is skipped`);
}

const NAMES: Record<string, string> = {
  'static-astro': 'Astro (astro.config.mjs)',
  'static-docusaurus': 'Docusaurus (docusaurus.config.js)',
  'static-hugo': 'Hugo (hugo.toml)',
  'static-mdbook': 'mdBook (book.toml)',
  'static-mkdocs': 'MkDocs (mkdocs.yml)',
  'static-nuxt': 'Nuxt.js (nuxt.config.ts)',
  'static-storybook': 'Storybook (.storybook/main.js)',
  'static-vitepress': 'VitePress (.vitepress/config.mjs)',
  'static-zola': 'Zola (config.toml)',
};

describe('generator detection and command line', () => {
  it.each(Object.keys(NAMES))('%s', async (name) => {
    const r = await rbp(['detect', copyFixture(name), '--type', 'static']);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`${NAMES[name]}: ${spec(name).command}`);
  });

  it('CC_BUILD_COMMAND skips detection', async () => {
    const r = await rbp(['detect', copyFixture('static-hugo'), '--type', 'static', ...envArgs({ CC_BUILD_COMMAND: 'make site' })]);
    expect(r.all).toContain('CC_BUILD_COMMAND: make site');
    expect(r.all).not.toContain('Hugo');
  });

  it('CC_STATIC_AUTOBUILD_OUTDIR moves the output folder', async () => {
    const r = await rbp(['detect', copyFixture('static-zola'), '--type', 'static', ...envArgs({ CC_STATIC_AUTOBUILD_OUTDIR: '/site/out' })]);
    expect(r.all).toContain('Zola (config.toml): zola build --minify --output-dir site/out');
  });
});

/** Builds a generator fixture (served by caddy file-server) and checks its pages and kept content. */
async function buildAndServe(name: string, operator: Record<string, string>, cache?: string, env: Record<string, string> = {}) {
  const s = spec(name);
  const out = path.join(tmpDir(), 'out');
  const r = await build(copyFixture(name), out, { ...s.env, CC_STATIC_SERVER: 'caddy', ...env }, { RBP_TOOL_CADDY: caddy!, ...operator }, cache);
  expect(r.exitCode, r.all).toBe(0);
  expect(workspaceEntries(out).filter((e) => !e.includes('/'))).toEqual(s.kept ?? ['cc_static_autobuilt']);
  const served = await serve(out, await freePort());
  try {
    await runChecks(served, s.checks ?? []);
  } finally {
    await served.stop();
  }
  return r.all;
}

describe.skipIf(!caddy).concurrent('JavaScript generators, built for real (concurrently: both mostly wait on the registry)', () => {
  const cache = path.join(tmpDir(), 'cache');

  it('VitePress: built, served, and node_modules reused by the next build', async () => {
    const first = await buildAndServe('static-vitepress', {}, cache);
    expect(first).toContain('auto-build: VitePress detected from .vitepress/config.mjs, building into /cc_static_autobuilt');
    expect(first).toContain('build command: npm i && npm run docs:build -- --outDir cc_static_autobuilt');
    expect(first).toContain('node_modules not cached (no previous layer)');
    const second = await buildAndServe('static-vitepress', {}, cache);
    expect(second).toContain('node_modules restored from the cache (package.json unchanged): install skipped');
  }, 300_000);

  it('Astro: built and served', async () => {
    const log = await buildAndServe('static-astro', {});
    expect(log).toContain('build command: npm i && npm run astro build -- --outDir cc_static_autobuilt');
  }, 300_000);
});

describe.skipIf(!caddy)('tool generators', () => {
  it.skipIf(!mkdocs)('MkDocs: built with the operator mkdocs and served', async () => {
    const log = await buildAndServe('static-mkdocs', { RBP_TOOL_MKDOCS: mkdocs! });
    expect(log).toContain(`build command: ${mkdocs} build --site-dir cc_static_autobuilt`);
  });

  it('MkDocs: without uvx or RBP_TOOL_MKDOCS, a clear error', async () => {
    const r = await build(copyFixture('static-mkdocs'), path.join(tmpDir(), 'out'), {}, { RBP_TOOL_CADDY: caddy!, PATH: '/usr/bin:/bin' });
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('static/mkdocs/unavailable');
    expect(r.all).toContain('set RBP_TOOL_MKDOCS=<path of mkdocs>');
  });

  it.skipIf(!hugo)('Hugo: CC_HUGO_VERSION chosen by the date rule, built with the operator hugo and served', async () => {
    const log = await buildAndServe('static-hugo', { RBP_TOOL_HUGO: hugo!, RBP_NOW: '2026-11-22' });
    expect(log).toContain('Hugo 0.160: CC_HUGO_VERSION=0.160');
    expect(log).toContain(`build command: ${hugo} --gc --minify --destination cc_static_autobuilt`);
    const before = await buildAndServe('static-hugo', { RBP_TOOL_HUGO: hugo!, RBP_NOW: '2026-06-14' }, undefined, { CC_HUGO_VERSION: '' });
    expect(before).toContain('Hugo 0.149: the default (CC_HUGO_VERSION is not set)');
    const after = await buildAndServe('static-hugo', { RBP_TOOL_HUGO: hugo!, RBP_NOW: '2026-06-15' }, undefined, { CC_HUGO_VERSION: '' });
    expect(after).toContain('Hugo 0.160: CC_HUGO_VERSION is not set and the default 0.149 is no longer supported since 2026-06-15');
  });

  for (const [name, tool, variable] of [['static-zola', zola, 'RBP_TOOL_ZOLA'], ['static-mdbook', mdbook, 'RBP_TOOL_MDBOOK']] as const) {
    it(`${name}: without the tool and no network, says how to provide it`, async () => {
      const r = await build(copyFixture(name), path.join(tmpDir(), 'out'), {}, { RBP_TOOL_CADDY: caddy!, [variable]: '' });
      if (r.exitCode === 0) return; // this machine can reach the upstream release
      expect(r.all).toContain('static/tool/unavailable');
      expect(r.all).toContain(`${variable}=<path>`);
    });
    it.skipIf(!tool)(`${name}: built with the operator tool and served`, async () => {
      await buildAndServe(name, { [variable]: tool! });
    });
  }
});
