/**
 * The static site generators of the contract, as ONE table: the files that detect each one, its build
 * command and where that command writes the site. Detection, the build and the log all read this
 * table; adding a generator is adding a row.
 *
 * A step is either a command (a script run by npm, or a tool name the build resolves to an installed
 * executable) or a move done by the buildpack itself (Nuxt's `mv .output/public <out-dir>`). The
 * JavaScript generators run their scripts with npm, the default manager of the table, as the contract
 * writes them, whichever lock file installed the dependencies (js-install.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_MANAGER, PACKAGE_MANAGERS } from '../../../lib/js-project/package-managers.ts';

export type ToolName = 'hugo' | 'mdbook' | 'mkdocs' | 'zola';

export type Step = { run: string[] } | { move: { from: string; to: string } };

export interface Generator {
  id: string;
  name: string;
  /** At least one must exist at the project root. */
  files: readonly string[];
  /** `js`: a JavaScript project, its dependencies installed first (js-install.ts); otherwise the tool the steps run. */
  runner: 'js' | ToolName;
  /** The build after dependencies are installed, writing the site to `out` (relative to the root). */
  steps(out: string): Step[];
}

/** How the contract's commands run a package.json script: `npm run`. */
const RUN = PACKAGE_MANAGERS[DEFAULT_MANAGER].run!;
/** The contract's install of a JavaScript generator's dependencies, without a lock file: `npm i`. */
export const CONTRACT_INSTALL = [PACKAGE_MANAGERS[DEFAULT_MANAGER].tool!.command, 'i'];

const npmRun = (script: string, ...args: string[]): Step => ({ run: [...RUN, script, '--', ...args] });

export const GENERATORS: readonly Generator[] = [
  {
    id: 'astro',
    name: 'Astro',
    files: ['astro.config.mjs', 'astro.config.ts', 'astro.config.js', 'astro.config.cjs'],
    runner: 'js',
    steps: (out) => [{ run: [...RUN, 'astro', 'build', '--', '--outDir', out] }],
  },
  {
    id: 'docusaurus',
    name: 'Docusaurus',
    files: ['docusaurus.config.js', 'docusaurus.config.ts'],
    runner: 'js',
    steps: (out) => [{ run: [...RUN, 'docusaurus', 'build', '--', '--out-dir', out] }],
  },
  {
    id: 'hugo',
    name: 'Hugo',
    files: ['hugo.toml', 'hugo.yaml', 'hugo.json'],
    runner: 'hugo',
    steps: (out) => [{ run: ['hugo', '--gc', '--minify', '--destination', out] }],
  },
  {
    id: 'mdbook',
    name: 'mdBook',
    files: ['book.toml'],
    runner: 'mdbook',
    steps: (out) => [{ run: ['mdbook', 'build', '--dest-dir', out] }],
  },
  {
    id: 'mkdocs',
    name: 'MkDocs',
    files: ['mkdocs.yml'],
    runner: 'mkdocs',
    steps: (out) => [{ run: ['mkdocs', 'build', '--site-dir', out] }],
  },
  {
    id: 'nuxt',
    name: 'Nuxt.js',
    files: ['nuxt.config.ts'],
    runner: 'js',
    steps: (out) => [{ run: [...RUN, 'generate'] }, { move: { from: '.output/public', to: out } }],
  },
  {
    id: 'storybook',
    name: 'Storybook',
    files: ['.storybook/main.js', '.storybook/main.ts'],
    runner: 'js',
    steps: (out) => [npmRun('build-storybook', '--output-dir', out)],
  },
  {
    id: 'vitepress',
    name: 'VitePress',
    files: ['.vitepress/config.js', '.vitepress/config.ts', '.vitepress/config.mjs', '.vitepress/config.mts'],
    runner: 'js',
    steps: (out) => [npmRun('docs:build', '--outDir', out)],
  },
  {
    id: 'zola',
    name: 'Zola',
    files: ['config.toml'],
    runner: 'zola',
    steps: (out) => [{ run: ['zola', 'build', '--minify', '--output-dir', out] }],
  },
];

/** How each tool is invoked when nothing else is known: the contract's commands. */
export const DEFAULT_TOOL_PREFIX: Record<ToolName, string[]> = {
  hugo: ['hugo'],
  mdbook: ['mdbook'],
  mkdocs: ['uvx', 'mkdocs'],
  zola: ['zola'],
};

export interface Detection {
  generator: Generator;
  /** The file that matched. */
  file: string;
  /** Other generators whose files are there too, passed over because they come later in the table. */
  alsoMatched: { name: string; file: string }[];
}

function firstFile(appDir: string, g: Generator): string | undefined {
  return g.files.find((f) => fs.statSync(path.join(appDir, f), { throwIfNoEntry: false })?.isFile());
}

/** The first generator of the table with one of its files at the root. */
export function detectGenerator(appDir: string): Detection | undefined {
  const hits = GENERATORS.map((g) => ({ g, file: firstFile(appDir, g) })).filter((h): h is { g: Generator; file: string } => h.file !== undefined);
  const [first, ...rest] = hits;
  if (!first) return undefined;
  return { generator: first.g, file: first.file, alsoMatched: rest.map((h) => ({ name: h.g.name, file: h.file })) };
}

/** Every detection file of the table, for the message that says what is missing. */
export function allDetectionFiles(): string[] {
  return GENERATORS.flatMap((g) => g.files);
}

/** One word as a POSIX shell reads it: bare when it is plain, else single-quoted. */
export function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

const quote = (argv: string[]) => argv.map(shellWord).join(' ');

/** A step as a shell would show it; a tool step shows the command that actually runs. */
export function renderStep(step: Step, toolPrefix: Partial<Record<ToolName, string[]>> = {}): string {
  if ('move' in step) return quote(['mv', step.move.from, step.move.to]);
  const [cmd, ...args] = step.run;
  const prefix = cmd && cmd in DEFAULT_TOOL_PREFIX ? (toolPrefix[cmd as ToolName] ?? DEFAULT_TOOL_PREFIX[cmd as ToolName]) : [cmd!];
  return quote([...prefix, ...args]);
}

/** The whole build command: the install (JavaScript generators) then the steps, joined with `&&`. */
export function renderCommand(g: Generator, out: string, install?: string[], toolPrefix: Partial<Record<ToolName, string[]>> = {}): string {
  const steps = g.steps(out).map((s) => renderStep(s, toolPrefix));
  return [...(g.runner === 'js' ? [quote(install ?? CONTRACT_INSTALL)] : []), ...steps].join(' && ');
}
