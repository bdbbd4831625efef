import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectGenerator, GENERATORS, renderCommand } from './generators.ts';

function app(files: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-gen-'));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), '');
  }
  return dir;
}

// The contract's table, verbatim: the generator table must render exactly these.
const CONTRACT: Record<string, { command: string; files: string[] }> = {
  Astro: {
    command: 'npm i && npm run astro build -- --outDir <out-dir>',
    files: ['astro.config.mjs', 'astro.config.ts', 'astro.config.js', 'astro.config.cjs'],
  },
  Docusaurus: { command: 'npm i && npm run docusaurus build -- --out-dir <out-dir>', files: ['docusaurus.config.js', 'docusaurus.config.ts'] },
  Hugo: { command: 'hugo --gc --minify --destination <out-dir>', files: ['hugo.toml', 'hugo.yaml', 'hugo.json'] },
  mdBook: { command: 'mdbook build --dest-dir <out-dir>', files: ['book.toml'] },
  MkDocs: { command: 'uvx mkdocs build --site-dir <out-dir>', files: ['mkdocs.yml'] },
  'Nuxt.js': { command: 'npm i && npm run generate && mv .output/public <out-dir>', files: ['nuxt.config.ts'] },
  Storybook: { command: 'npm i && npm run build-storybook -- --output-dir <out-dir>', files: ['.storybook/main.js', '.storybook/main.ts'] },
  VitePress: {
    command: 'npm i && npm run docs:build -- --outDir <out-dir>',
    files: ['.vitepress/config.js', '.vitepress/config.ts', '.vitepress/config.mjs', '.vitepress/config.mts'],
  },
  Zola: { command: 'zola build --minify --output-dir <out-dir>', files: ['config.toml'] },
};

describe('the generator table', () => {
  it('holds exactly the contract generators, in its order', () => {
    expect(GENERATORS.map((g) => g.name)).toEqual(Object.keys(CONTRACT));
  });

  for (const g of GENERATORS) {
    const row = CONTRACT[g.name]!;
    it(`${g.name}: renders the contract's build command`, () => {
      expect(renderCommand(g, 'OUT')).toBe(row.command.replaceAll('<out-dir>', 'OUT'));
    });
    it(`${g.name}: is detected from each of ${row.files.join(', ')}`, () => {
      expect(g.files).toEqual(row.files);
      for (const f of row.files) {
        const d = detectGenerator(app([f]));
        expect(d?.generator.name).toBe(g.name);
        expect(d?.file).toBe(f);
      }
    });
  }

  it('uses the project lock file for the install step when it has one', () => {
    const vitepress = GENERATORS.find((g) => g.id === 'vitepress')!;
    expect(renderCommand(vitepress, 'cc_static_autobuilt', ['npm', 'ci'])).toBe('npm ci && npm run docs:build -- --outDir cc_static_autobuilt');
  });

  it('shows the tool that really runs (an operator mkdocs) in the command', () => {
    const mkdocs = GENERATORS.find((g) => g.id === 'mkdocs')!;
    expect(renderCommand(mkdocs, 'site out', undefined, { mkdocs: ['/usr/bin/mkdocs'] })).toBe("/usr/bin/mkdocs build --site-dir 'site out'");
  });

  it('picks the first row of the table when several match, and says which others matched', () => {
    const d = detectGenerator(app(['hugo.toml', 'config.toml']));
    expect(d?.generator.name).toBe('Hugo');
    expect(d?.alsoMatched).toEqual([{ name: 'Zola', file: 'config.toml' }]);
  });

  it('detects nothing without a generator file, and ignores a folder named like one', () => {
    expect(detectGenerator(app(['index.html']))).toBeUndefined();
    const dir = app([]);
    fs.mkdirSync(path.join(dir, 'book.toml'));
    expect(detectGenerator(dir)).toBeUndefined();
  });
});
