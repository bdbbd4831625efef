// Bundles every buildpacks/<name>/ into a complete CNB buildpack directory dist/buildpacks/<name>/
// and the CLI into dist/rbp.js. A buildpack directory holds:
//   buildpack.toml
//   bin/detect, bin/build   lib/cnb/sh/bootstrap.sh: POSIX sh, so a build image needs no Node.js
//   lib/detect.cjs, lib/build.cjs   the programs they run: each runs the bundle of its entry
//                           (lib/<entry>.bundle.cjs) with V8's code cache
//   lib/detect-quick.sh     what bin/detect answers without Node.js (lib/cnb/quick-detect.ts)
//   bin/launch, launch/*.sh the launch's planner and sh (lib/launch), copied by the build into its launcher layer
//   node/bin/node           only when packaged with `--with-node[=PATH]`: the Node.js the bootstraps use
//
//   node scripts/build.mjs [--with-node[=PATH]] [--out DIR]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const withNodeArg = args.find((a) => a === '--with-node' || a.startsWith('--with-node='));
const carriedNode = withNodeArg ? (withNodeArg.includes('=') ? path.resolve(withNodeArg.split('=')[1]) : process.execPath) : undefined;
const outArg = args.indexOf('--out');
const finalDist = outArg >= 0 ? path.resolve(args[outArg + 1]) : path.join(root, 'dist');
// Built aside and swapped in, so tests running against dist/ never see half a build.
const dist = path.join(path.dirname(finalDist), `.dist-${process.pid}`);
const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', legalComments: 'none' };
const notOurs = (a) => a.importer.includes(`${path.sep}node_modules${path.sep}`);

// A bundle's start is mostly compiling it: lib/<entry>.cjs runs lib/<entry>.bundle.cjs with V8's code
// cache (lib/<entry>.bundle.cjs.v8cache), made here by the Node.js the bootstraps will use, after the
// bundle's top level ran. Another Node.js version rejects it and compiles as usual; the cache starts
// with the path it was made for (V8 keeps file names), and a copied buildpack compiles as usual too.
const WRAP = ['(function (exports, require, module, __filename, __dirname) { ', '\n})'];
const LOAD = `function load(entry) {
  const fs = require('node:fs');
  const path = require('node:path');
  const vm = require('node:vm');
  const { createRequire } = require('node:module');
  const file = path.join(__dirname, entry + '.bundle.cjs');
  let cachedData;
  try {
    const cache = fs.readFileSync(file + '.v8cache');
    const nl = cache.indexOf(10);
    if (cache.toString('utf8', 0, nl) === file) cachedData = cache.subarray(nl + 1);
  } catch (e) {
    // no cache: compiled as usual
  }
  const wrapped = ${JSON.stringify(WRAP[0])} + fs.readFileSync(file, 'utf8') + ${JSON.stringify(WRAP[1])};
  const bundle = { exports: {}, id: file, filename: file, loaded: false };
  new vm.Script(wrapped, { filename: file, cachedData }).runInThisContext().call(bundle.exports, bundle.exports, createRequire(file), bundle, file, __dirname);
  return bundle.exports;
}`;
// argv: the bundle as built now, and the path it will have once the build is moved into place.
const MAKE_CACHE = `const fs = require('node:fs'); const vm = require('node:vm'); const { createRequire } = require('node:module');
const [built, final] = process.argv.slice(1);
const s = new vm.Script(${JSON.stringify(WRAP[0])} + fs.readFileSync(built, 'utf8') + ${JSON.stringify(WRAP[1])}, { filename: final });
const bundle = { exports: {} };
s.runInThisContext().call(bundle.exports, bundle.exports, createRequire(built), bundle, final, require('node:path').dirname(final));
fs.writeFileSync(built + '.v8cache', Buffer.concat([Buffer.from(final + '\\n'), s.createCachedData()]));`;
const NODE_FIX = "Fix: package the buildpack with Node.js (npm run build -- --with-node), or put node >= 20 on the build image's PATH";
// lib/<entry>.cjs: the version check of a node from PATH, in syntax any Node.js that may be there parses.
const PROGRAM = (entry) => `'use strict';
// bin/${entry}'s program (scripts/build.mjs).
if (Number(process.versions.node.split('.')[0]) < 20) {
  process.stderr.write('ERROR ' + require('path').basename(process.env.CNB_BUILDPACK_DIR || require('path').dirname(__dirname)) + ': bin/${entry} needs Node.js >= 20: none in this buildpack (node/bin/node) and ' + process.execPath + ' on PATH is ' + process.version + '\\n' + ${JSON.stringify(NODE_FIX)} + '\\n');
  process.exit(1);
}
${LOAD}
load('${entry}').main();
`;
// src/detect.ts and src/build.ts export the function; each bundle runs it as the program, and detect's gives its quick data.
const contextTs = JSON.stringify(path.join(root, 'lib', 'cnb', 'context.ts'));
const quickTs = JSON.stringify(path.join(root, 'lib', 'cnb', 'quick-detect.ts'));
const bundleEntry = (entry, file) => ({
  sourcefile: `${entry}-entry.cjs`,
  resolveDir: path.dirname(file),
  loader: 'js',
  contents:
    entry === 'detect'
      ? `const { runDetect } = require(${contextTs});
const { quickFiles } = require(${quickTs});
const program = require(${JSON.stringify(file)});
module.exports = { main: () => runDetect(program.default), quickFiles: () => program.quick && quickFiles(program.quick) };
`
      : `const { runBuild } = require(${contextTs});
module.exports = { main: () => runBuild(require(${JSON.stringify(file)}).default) };
`,
});

// dist/cli-detect.bundle.cjs: the CLI for `rbp detect` (a platform runs it on every build), `--version`
// and `help`, without the modules of the other commands (a third of the whole CLI to load).
const DETECT_BUNDLE = 'cli-detect.bundle.cjs';
const DETECT_BUNDLE_ARGS = ['detect', 'version', '--version', '-V', 'help', '--help', '-h', ''];
const NOT_FOR_DETECT = ['build.ts', 'run.ts', 'package.ts', 'prune.ts'].map((f) => path.join(root, 'lib', 'platform', 'commands', f));
for (const f of NOT_FOR_DETECT) if (!fs.existsSync(f)) throw new Error(`scripts/build.mjs: NOT_FOR_DETECT names ${f}, which does not exist`);
const withoutCommands = {
  name: 'without-commands',
  setup(b) {
    b.onResolve({ filter: /\.ts$/ }, (a) => {
      const p = path.resolve(a.resolveDir, a.path);
      return a.kind === 'dynamic-import' && NOT_FOR_DETECT.includes(p) ? { path: p, namespace: 'not-for-detect' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'not-for-detect' }, (a) => ({
      loader: 'js',
      contents: `throw new Error('${path.basename(a.path)} is not in ${DETECT_BUNDLE}');`,
    }));
  },
};

// Libraries most runs never call are files of their own beside each bundle, required at their first
// use, so that loading a bundle does not read and deserialize them: undici (downloads), execa
// (processes), tar (archives), yaml (pnpm's and Yarn's lock files).
const ASIDE = {
  undici: { file: 'undici.cjs', source: "module.exports = require('undici');" },
  execa: { file: 'execa.cjs', source: "export { execa } from 'execa';" },
  tar: { file: 'tar.cjs', source: "module.exports = require('tar');" },
  yaml: { file: 'yaml.cjs', source: "module.exports = require('yaml');" },
};
const asideLibraries = {
  name: 'aside-libraries',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(ASIDE).join('|')})$`) }, (a) =>
      (a.kind === 'dynamic-import' && !notOurs(a)) || (a.kind === 'require-call' && a.namespace === 'lazy') ? { path: a.path, namespace: 'aside' } : undefined,
    );
    b.onResolve({ filter: /^\.\/(undici|execa|tar|yaml)\.cjs$/ }, (a) => ({ path: a.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'aside' }, (a) => ({ loader: 'js', contents: `module.exports = require('./${ASIDE[a.path].file}');` }));
  },
};
const asideBeside = (dir) =>
  Object.values(ASIDE).map((l) =>
    esbuild.build({ ...common, stdin: { contents: l.source, resolveDir: root, loader: 'js' }, format: 'cjs', outfile: path.join(dir, l.file) }),
  );

// Modules only some calls need, costly to load: our own imports of them load them at their first
// use, as their default export (read as `crypto.createHash(...)`) or the functions named.
const LAZY = {
  'node:crypto': 'default',
  'node:http': 'default',
  'node:os': 'default',
  'node:module': ['createRequire'],
  'node:url': ['fileURLToPath', 'pathToFileURL'],
  'node:util': ['parseArgs'],
  dotenv: 'default',
  execa: ['execa'],
  tar: ['c', 't', 'x'],
  yaml: ['parse'],
};
const lazyImports = {
  name: 'lazy-imports',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(LAZY).join('|')})$`) }, (a) =>
      a.kind === 'import-statement' && a.namespace === 'file' && !notOurs(a) ? { path: a.path, namespace: 'lazy' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, (a) => {
      const how = LAZY[a.path];
      const load = `let real;\nconst load = () => (real ??= require(${JSON.stringify(a.path)}));\n`;
      const contents =
        how === 'default'
          ? `${load}export default new Proxy({}, { get: (_, key) => load()[key] });\n`
          : load + how.map((f) => `export const ${f} = (...args) => load().${f}(...args);\n`).join('');
      return { loader: 'js', resolveDir: root, contents };
    });
  },
};
// A built-in that many modules import is made an ES module once: esbuild would otherwise copy its
// exports into a new object for each importing module (__toESM), at every start of the bundle. Only
// the names our sources import are read from it: reading every export would run the getters of the
// deprecated ones (fs.F_OK on Node.js 24 prints a DeprecationWarning) and of the lazy ones.
function builtinNamesImported() {
  const names = {};
  for (const f of listSources()) {
    for (const m of fs.readFileSync(path.join(root, f), 'utf8').matchAll(/import\s*(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*'(node:[\w/]+)'/g)) {
      for (const spec of m[1].split(',')) {
        const name = spec
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0];
        if (name && !spec.trim().startsWith('type ')) (names[m[2]] ??= new Set()).add(name);
      }
    }
  }
  return names;
}
function listSources(dir = '') {
  return fs.readdirSync(path.join(root, dir || '.'), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || (!dir && !['lib', 'buildpacks', 'scripts'].includes(e.name)) ? [] : listSources(rel);
    return dir && /\.m?ts$/.test(e.name) ? [rel] : [];
  });
}
const BUILTIN_NAMES = builtinNamesImported();
const builtinsOnce = {
  name: 'builtins-once',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (a) =>
      a.kind === 'import-statement' && a.namespace === 'file' && !notOurs(a) && !(a.path in LAZY) ? { path: a.path, namespace: 'builtin' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (a) => {
      const exports = [...(BUILTIN_NAMES[a.path] ?? [])].map((n) => `export const ${n} = m.${n};`).join('\n');
      return { loader: 'js', contents: `const m = require(${JSON.stringify(a.path)});\nexport default m;\n${exports}\n` };
    });
  },
};
const plugins = [lazyImports, builtinsOnce, asideLibraries];

// dist/rbp.js, rbp's entry: runs its bundle with V8's code cache, which rbp makes itself after a
// command that succeeded, when there is none or V8 refused it; written aside and renamed, so
// concurrent rbps never read half of one; a folder rbp may not write goes without.
const RBP_LOADER = `#!/usr/bin/env -S node --
'use strict';
if (Number(process.versions.node.split('.')[0]) < 20) {
  process.stderr.write('! ERROR rbp needs Node.js >= 20\\n! Seen: node: ' + JSON.stringify(process.version) + ' (' + process.execPath + ')\\n! Fix:  put Node.js 20 or newer first on PATH\\n');
  process.exit(2);
}
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const light = ${JSON.stringify(DETECT_BUNDLE_ARGS)}.includes(process.argv[2] ?? '') && fs.existsSync(path.join(__dirname, '${DETECT_BUNDLE}'));
const file = path.join(__dirname, light ? '${DETECT_BUNDLE}' : 'rbp.bundle.cjs');
const cacheFile = file + '.v8cache';
let cachedData;
try {
  const cache = fs.readFileSync(cacheFile);
  const nl = cache.indexOf(10);
  if (cache.toString('utf8', 0, nl) === file) cachedData = cache.subarray(nl + 1);
} catch {
  // no cache yet
}
const script = new vm.Script(${JSON.stringify(WRAP[0])} + fs.readFileSync(file, 'utf8') + ${JSON.stringify(WRAP[1])}, { filename: file, cachedData });
if (!cachedData || script.cachedDataRejected) {
  process.once('exit', (code) => {
    if (code !== 0) return;
    const tmp = cacheFile + '.' + process.pid;
    try {
      fs.accessSync(__dirname, fs.constants.W_OK);
      fs.writeFileSync(tmp, Buffer.concat([Buffer.from(file + '\\n'), script.createCachedData()]));
      fs.renameSync(tmp, cacheFile);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  });
}
const bundle = { exports: {}, id: file, filename: file, loaded: false };
script.runInThisContext().call(bundle.exports, bundle.exports, require, bundle, file, __dirname);
`;

/** One buildpack: its descriptor, bootstraps, bundles with their code caches, quick detect data and launch files. */
async function buildpack(name) {
  const src = path.join(root, 'buildpacks', name);
  const out = path.join(dist, 'buildpacks', name);
  fs.mkdirSync(path.join(out, 'bin'), { recursive: true });
  fs.mkdirSync(path.join(out, 'lib'));
  fs.copyFileSync(path.join(src, 'buildpack.toml'), path.join(out, 'buildpack.toml'));
  // bin/* have no extension: pin CommonJS so Node never guesses from a parent package.json.
  fs.writeFileSync(path.join(out, 'package.json'), '{ "type": "commonjs" }\n');
  if (carriedNode) {
    fs.mkdirSync(path.join(out, 'node', 'bin'), { recursive: true });
    fs.copyFileSync(carriedNode, path.join(out, 'node', 'bin', 'node'));
    fs.chmodSync(path.join(out, 'node', 'bin', 'node'), 0o755);
  }
  fs.cpSync(path.join(root, 'lib', 'launch', 'sh'), path.join(out, 'launch'), { recursive: true });
  const launch = path.join(out, 'bin', 'launch');
  const bootstrap = fs.readFileSync(path.join(root, 'lib', 'cnb', 'sh', 'bootstrap.sh'), 'utf8');
  const programs = ['detect', 'build'].map(async (entry) => {
    const outfile = path.join(out, 'lib', `${entry}.bundle.cjs`);
    await esbuild.build({ ...common, stdin: bundleEntry(entry, path.join(src, 'src', `${entry}.ts`)), outfile, format: 'cjs', plugins });
    fs.writeFileSync(path.join(out, 'lib', `${entry}.cjs`), PROGRAM(entry));
    if (entry === 'detect') {
      const quick = createRequire(outfile)(outfile).quickFiles();
      if (quick) fs.writeFileSync(path.join(out, 'lib', 'detect-quick.sh'), quick);
    }
    await promisify(execFile)(carriedNode ?? process.execPath, ['-e', MAKE_CACHE, outfile, path.join(finalDist, path.relative(dist, outfile))]);
    fs.writeFileSync(path.join(out, 'bin', entry), bootstrap, { mode: 0o755 });
  });
  await Promise.all([
    ...asideBeside(path.join(out, 'lib')),
    ...programs,
    // bin/launch stays one JS file: the build copies it into the launcher layer, where the launch runs it with a chosen node.
    esbuild.build({
      ...common,
      entryPoints: [path.join(src, 'src', 'launch.ts')],
      outfile: launch,
      format: 'cjs',
      banner: { js: '#!/usr/bin/env node' },
      plugins: [lazyImports, builtinsOnce],
    }),
  ]);
  fs.chmodSync(launch, 0o755);
}

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });
const names = fs.readdirSync(path.join(root, 'buildpacks')).filter((n) => fs.existsSync(path.join(root, 'buildpacks', n, 'buildpack.toml')));
await Promise.all(names.map(buildpack));

// The CLI: one CommonJS bundle, run by dist/rbp.js; a command's own code (build, run, packaging) is
// evaluated only when the command runs. import.meta names the bundle (rbp finds dist/buildpacks
// beside it), its url made at its first use.
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const cli = {
  ...common,
  define: {
    __RBP_VERSION__: JSON.stringify(version),
    'import.meta.url': '__rbpMeta.url',
    'import.meta.dirname': '__dirname',
    'import.meta.filename': '__filename',
  },
  banner: { js: "const __rbpMeta = { get url() { return require('node:url').pathToFileURL(__filename).href; } };" },
  entryPoints: [path.join(root, 'scripts', 'rbp.ts')],
  format: 'cjs',
};
await Promise.all([
  esbuild.build({ ...cli, outfile: path.join(dist, 'rbp.bundle.cjs'), plugins }),
  esbuild.build({ ...cli, outfile: path.join(dist, DETECT_BUNDLE), plugins: [withoutCommands, ...plugins] }),
  ...asideBeside(dist),
]);
fs.writeFileSync(path.join(dist, 'rbp.js'), RBP_LOADER, { mode: 0o755 });
fs.copyFileSync(path.join(root, 'scripts', 'rbp.sh'), path.join(dist, 'rbp'));
fs.chmodSync(path.join(dist, 'rbp'), 0o755);
// dist/rbp.js is CommonJS (the package is "type": "module"): no ES module loader to start.
fs.writeFileSync(path.join(dist, 'package.json'), '{ "type": "commonjs" }\n');
const old = `${finalDist}.old-${process.pid}`;
if (fs.existsSync(finalDist)) fs.renameSync(finalDist, old);
fs.renameSync(dist, finalDist);
fs.rmSync(old, { recursive: true, force: true });
// Detect runs on every build, each time a Node.js start plus a bundle's load: its size is watched.
const kib = (f) => `${(fs.statSync(path.join(finalDist, f)).size / 1024).toFixed(1)} KiB`;
const shown = path.relative(root, finalDist) || finalDist;
console.error(
  `detect bundles: ${names.map((n) => `${n} ${kib(path.join('buildpacks', n, 'lib', 'detect.bundle.cjs'))}`).join(', ')}; rbp.bundle.cjs ${kib('rbp.bundle.cjs')}, ${DETECT_BUNDLE} ${kib(DETECT_BUNDLE)}`,
);
console.error(
  `built ${names.map((n) => `${shown}/buildpacks/${n}`).join(', ')} and ${shown}/rbp.js${carriedNode ? ` (each buildpack carries ${carriedNode})` : ''}`,
);
