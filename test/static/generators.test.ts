/**
 * Auto-build: the generator table drives detection and the command line; VitePress and Astro are
 * built for real from the npm registry; Hugo (0.149 and 0.160, extended, installed by the buildpack
 * from a mirror holding the real binaries, chosen by the June 15th rule), mdBook 0.4.52 and MkDocs 1.6.1
 * (the tool cache's, as RBP_TOOL_MDBOOK / RBP_TOOL_MKDOCS) are built for real, and every site is then
 * served by a real server. Zola is published on no registry this project reaches: its detection and
 * command line are checked, and it is built for real only when RBP_TOOL_ZOLA names a binary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { copyFixture, freePort, rbp, ROOT, tmpDir } from '../helpers/rbp.ts';
import { realTool } from '../helpers/tool-cache.ts';
import { addHugo, build, contractCaddy, envArgs, runChecks, serve, spec, swsMirror, swsTool, workspaceEntries } from './helpers.ts';
import { keptView } from '../helpers/fixture-spec.ts';

const caddy = contractCaddy('static generator tests (Caddy serves the built sites)');
const sws = swsTool('static generator tests (Static Web Server serves the built sites)');
const mkdocs = realTool('RBP_TOOL_MKDOCS', 'static generator tests (MkDocs)');
const mdbook = realTool('RBP_TOOL_MDBOOK', 'static generator tests (mdBook)');
const hugo149 = realTool('RBP_TOOL_HUGO', 'static generator tests (Hugo 0.149)');
const hugo160 = realTool('RBP_TEST_HUGO_0_160', 'static generator tests (Hugo 0.160)');
// Zola alone is optional, in CI too: no reachable registry publishes it.
const zola = process.env.RBP_TOOL_ZOLA?.trim();
if (!zola)
  console.warn(
    'static generator tests (Zola): the real Zola build is skipped: RBP_TOOL_ZOLA is not set (Zola is published on no registry this project reaches; its detection and build command line are checked with `rbp detect`)',
  );

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

/** The operator configuration every build here gets: the contract's Caddy, the real SWS in a mirror. */
async function servers(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { RBP_TOOL_CADDY: caddy.path(), RBP_DEPENDENCY_MIRROR: await swsMirror(sws.path()), ...extra };
}

/** Builds a generator fixture (served by the server its env chooses) and checks its pages and kept content. */
async function buildAndServe(name: string, operator: Record<string, string>, cache?: string, env: Record<string, string> = {}) {
  const s = spec(name);
  const out = path.join(tmpDir(), 'out');
  const r = await build(copyFixture(name), out, { ...s.env, ...env }, await servers(operator), cache);
  expect(r.exitCode, r.all).toBe(0);
  const kept = s.kept ?? ['cc_static_autobuilt'];
  expect(keptView(workspaceEntries(out), kept)).toEqual([...kept].sort());
  const served = await serve(out, await freePort());
  try {
    await runChecks(served, s.http ?? []);
  } finally {
    await served.stop();
  }
  return r.all;
}

describe.skipIf(caddy.skip || sws.skip).concurrent('JavaScript generators, built for real (concurrently: both mostly wait on the registry)', () => {
  const cache = path.join(tmpDir(), 'cache');
  // Node.js and npm come from the registry, as for a node app: no mirror (one would have to hold them
  // too), the servers as the operator's own.
  const js = (extra: Record<string, string> = {}) => ({ RBP_DEPENDENCY_MIRROR: '', RBP_TOOL_STATIC_WEB_SERVER: sws.path(), ...extra });

  it('VitePress: built, served, and node_modules reused by the next build', async () => {
    const first = await buildAndServe('static-vitepress', js(), cache);
    expect(first).toContain('auto-build: VitePress detected from .vitepress/config.mjs, building into /cc_static_autobuilt');
    expect(first).toContain('build command: npm i && npm run docs:build -- --outDir cc_static_autobuilt');
    expect(first).toContain('node_modules not cached (no previous layer)');
    const second = await buildAndServe('static-vitepress', js(), cache);
    expect(second).toContain('node_modules restored from the cache (package.json unchanged): install skipped');
  }, 300_000);

  it("Astro 7 (engines.node >=22.12, engine-strict in its .npmrc): built on the Node.js the build resolved, never the host's 20 or its ~/.npmrc", async () => {
    // The build machine's ~/.npmrc points npm at a registry that does not answer: read, it fails the install.
    const home = tmpDir('rbp-astro-home-');
    fs.writeFileSync(path.join(home, '.npmrc'), 'registry=http://127.0.0.1:9/\n');
    const log = await buildAndServe('static-astro', js({ HOME: home }));
    expect(log).toContain('build command: npm i && npm run astro build -- --outDir cc_static_autobuilt');
    const node = /- Node\.js (\d+)\.\d+\.\d+ \(asked: ">=22\.12\.0" from engines\.node\), as a node app of this project would get/.exec(log);
    expect(node, log).not.toBeNull();
    expect(Number(node![1])).toBeGreaterThanOrEqual(22);
    expect(log).toMatch(/- npm \d+\.\d+\.\d+ \(bundled with Node\.js \d+\.\d+\.\d+\)/);
  }, 300_000);
});

describe.skipIf(caddy.skip || sws.skip || mkdocs.skip)('MkDocs 1.6.1, built for real', () => {
  it('built with the operator mkdocs and served', async () => {
    const log = await buildAndServe('static-mkdocs', { RBP_TOOL_MKDOCS: mkdocs.path() });
    expect(log).toContain(`using mkdocs 1.6.1 from RBP_TOOL_MKDOCS=${mkdocs.path()}`);
    expect(log).toContain(`build command: ${mkdocs.path()} build --site-dir cc_static_autobuilt`);
  });

  it('without uvx or RBP_TOOL_MKDOCS, a clear error', async () => {
    const r = await build(copyFixture('static-mkdocs'), path.join(tmpDir(), 'out'), {}, await servers({ PATH: '/usr/bin:/bin' }));
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('static/mkdocs/unavailable');
    expect(r.all).toContain('set RBP_TOOL_MKDOCS=<path of mkdocs>');
  });
});

describe.skipIf(caddy.skip || sws.skip || mdbook.skip)('mdBook 0.4.52, built for real', () => {
  it('built with the operator mdbook into the auto-build folder, and served by Static Web Server', async () => {
    const log = await buildAndServe('static-mdbook', { RBP_TOOL_MDBOOK: mdbook.path() });
    expect(log).toContain(`using mdbook 0.4.52 from RBP_TOOL_MDBOOK=${mdbook.path()}`);
    expect(log).toContain(`build command: ${mdbook.path()} build --dest-dir cc_static_autobuilt`);
    expect(log).toContain('server: Static Web Server');
  });

  it('CC_STATIC_AUTOBUILD_OUTDIR in a subfolder: the book lands there (relative to the project root)', async () => {
    const s = spec('static-mdbook');
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-mdbook'), out, { CC_STATIC_AUTOBUILD_OUTDIR: 'build/book' }, await servers({ RBP_TOOL_MDBOOK: mdbook.path() }));
    expect(r.exitCode, r.all).toBe(0);
    expect(workspaceEntries(out)).toContain('build/book/index.html');
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, s.http ?? []);
    } finally {
      await served.stop();
    }
  });
});

/** buildpack.toml's Hugo release for a minor: the one the buildpack installs. */
function pinnedHugo(minor: string): string {
  const toml = parse(fs.readFileSync(path.join(ROOT, 'buildpacks/static/buildpack.toml'), 'utf8')) as {
    metadata: { dependencies: { id: string; version: string }[] };
  };
  const v = toml.metadata.dependencies.find((d) => d.id === 'hugo' && d.version.startsWith(`${minor}.`))?.version;
  if (!v) throw new Error(`buildpack.toml pins no Hugo ${minor}.x`);
  return v;
}

describe.skipIf(caddy.skip || sws.skip || hugo149.skip || hugo160.skip)('Hugo, built for real at 0.149 and 0.160: the June 15th rule decides', () => {
  /** A mirror holding both real Hugo binaries, as the release archives buildpack.toml names (made once). */
  let mirror: Promise<string> | undefined;
  async function hugoMirror(): Promise<string> {
    const binaries: Record<string, string> = {};
    for (const [minor, tool] of [
      ['0.149', hugo149],
      ['0.160', hugo160],
    ] as const) {
      const reported = /hugo v(\d+\.\d+\.\d+)/.exec((await execa(tool.path(), ['version'])).stdout)?.[1];
      // The tool cache has the newest patch release of the minor: it must be the one the buildpack pins.
      expect(reported, `${tool.variable} is Hugo ${reported}; buildpack.toml pins ${pinnedHugo(minor)}`).toBe(pinnedHugo(minor));
      binaries[reported!] = tool.path();
    }
    return addHugo(await swsMirror(sws.path()), binaries);
  }
  async function hugoOperator(now: string): Promise<Record<string, string>> {
    mirror ??= hugoMirror();
    return { RBP_TOOL_CADDY: caddy.path(), RBP_DEPENDENCY_MIRROR: await mirror, RBP_NOW: now };
  }

  async function hugoSite(now: string, env: Record<string, string>) {
    const s = spec('static-hugo');
    const out = path.join(tmpDir(), 'out');
    const r = await build(copyFixture('static-hugo'), out, { ...s.env, ...env }, await hugoOperator(now));
    expect(r.exitCode, r.all).toBe(0);
    expect(workspaceEntries(out)).toContain('cc_static_autobuilt/guide/setup/index.html');
    const served = await serve(out, await freePort());
    try {
      await runChecks(served, s.http ?? []);
      const home = await served.get('/');
      const nested = await served.get('/guide/setup/');
      expect(nested.status).toBe(200);
      expect(nested.body).toContain('A nested page, built to /guide/setup/.');
      // Hugo's own version, printed by the page (and Sass compiled: the extended edition).
      return { log: r.all, builtBy: /Hugo (\d+\.\d+\.\d+)<\/footer>/.exec(home.body)?.[1], body: home.body };
    } finally {
      await served.stop();
    }
  }

  it('before June 15th 2026, an unset CC_HUGO_VERSION builds with 0.149 (the default)', async () => {
    const { log, builtBy, body } = await hugoSite('2026-06-14', { CC_HUGO_VERSION: '' });
    expect(log).toContain('Hugo 0.149: the default (CC_HUGO_VERSION is not set)');
    expect(log).toContain(`installing hugo ${pinnedHugo('0.149')}`);
    expect(log).toContain(`build command: `);
    expect(builtBy).toBe(pinnedHugo('0.149'));
    expect(body).toContain('main h1{color:#1a7f37}');
  });

  it('from June 15th 2026, an unset CC_HUGO_VERSION builds with 0.160, and the log says why', async () => {
    const { log, builtBy } = await hugoSite('2026-06-15', { CC_HUGO_VERSION: '' });
    expect(log).toContain('Hugo 0.160: CC_HUGO_VERSION is not set and the default 0.149 is no longer supported since 2026-06-15');
    expect(log).toContain(`installing hugo ${pinnedHugo('0.160')}`);
    expect(builtBy).toBe(pinnedHugo('0.160'));
  });

  it('CC_HUGO_VERSION=0.160 before the date builds with 0.160; 0.149 after it is refused', async () => {
    const { log, builtBy } = await hugoSite('2026-06-14', { CC_HUGO_VERSION: '0.160' });
    expect(log).toContain('Hugo 0.160: CC_HUGO_VERSION=0.160');
    expect(builtBy).toBe(pinnedHugo('0.160'));
    const r = await build(copyFixture('static-hugo'), path.join(tmpDir(), 'out'), { CC_HUGO_VERSION: '0.149' }, await hugoOperator('2026-06-15'));
    expect(r.exitCode).not.toBe(0);
    expect(r.all).toContain('static/hugo-version/unsupported');
  });

  it("RBP_TOOL_HUGO is used as is: a version other than the rule's is a warning", async () => {
    const out = path.join(tmpDir(), 'out');
    const r = await build(
      copyFixture('static-hugo'),
      out,
      { CC_HUGO_VERSION: '0.160' },
      { ...(await hugoOperator('2026-11-22')), RBP_TOOL_HUGO: hugo149.path() },
    );
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain(`RBP_TOOL_HUGO=${hugo149.path()} is hugo ${pinnedHugo('0.149')}, not ${pinnedHugo('0.160')} as the contract asks; using it as is`);
  });
});

describe.skipIf(caddy.skip || sws.skip)('tools without a registry here', () => {
  for (const [name, variable] of [
    ['static-zola', 'RBP_TOOL_ZOLA'],
    ['static-mdbook', 'RBP_TOOL_MDBOOK'],
  ] as const) {
    it(`${name}: without the tool and no network, says how to provide it`, async () => {
      const r = await build(copyFixture(name), path.join(tmpDir(), 'out'), {}, { RBP_TOOL_CADDY: caddy.path(), [variable]: '' });
      if (r.exitCode === 0) return; // this machine can reach the upstream release
      expect(r.all).toContain('static/tool/unavailable');
      expect(r.all).toContain(`${variable}=<path>`);
    });
  }

  it.skipIf(!zola)('static-zola: built with the operator zola and served', async () => {
    await buildAndServe('static-zola', { RBP_TOOL_ZOLA: zola! });
  });
});
