// Bundles every buildpacks/<name>/ into a complete CNB buildpack directory dist/buildpacks/<name>/
// and the CLI into dist/rbp.js (with dist/rbp.bundle.cjs). A buildpack directory holds:
//   buildpack.toml
//   bin/detect, bin/build   POSIX sh bootstraps (see BOOTSTRAP): a build image needs no Node.js
//   lib/detect.cjs, lib/build.cjs   the programs they run: each runs the bundle of its entry
//                           (lib/<entry>.bundle.cjs, self-contained) with V8's code cache
//   bin/launch              the launch planner (lib/launch/planner.ts), copied by the build into its launcher layer
//   launch/*.sh             the launch's sh (lib/launch/sh/), copied there too
//   node/bin/node           only when packaged with `--with-node[=PATH]`: the Node.js the bootstraps use
//
//   node scripts/build.mjs                  # bootstraps use node >= 20 from PATH
//   node scripts/build.mjs --with-node      # also carry this Node.js (process.execPath) in each buildpack
//   node scripts/build.mjs --with-node=/path/to/node --out DIR
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const withNodeArg = args.find((a) => a === '--with-node' || a.startsWith('--with-node='));
const carriedNode = withNodeArg ? (withNodeArg.includes('=') ? path.resolve(withNodeArg.split('=')[1]) : process.execPath) : undefined;
const outArg = args.indexOf('--out');
const finalDist = outArg >= 0 ? path.resolve(args[outArg + 1]) : path.join(root, 'dist');
// Built aside and swapped in, so tests running against dist/ never see half a build.
const dist = path.join(path.dirname(finalDist), `.dist-${process.pid}`);
const ENTRYPOINTS = ['detect', 'build', 'launch'];
// lib/detect.cjs and lib/build.cjs are small programs that run the bundle of their entry point
// (lib/<entry>.bundle.cjs: src/<entry>.ts and what it imports, ~70 KiB for detect, ~2 MB for build)
// through LOAD, which compiles it with V8's code cache, lib/<entry>.bundle.cjs.v8cache:
// compiling costs Node.js ~50 ms of every build and ~5 ms of every detect otherwise. The cache is
// made here by the Node.js the bootstraps will use (the carried one, else this one), after the
// bundle's own top level ran (its module set-up compiled too); a Node.js of another version rejects
// it and compiles as usual. V8 keeps the file name the cache was made under (stack traces show it):
// the cache file starts with that path, and the loader uses the cache only at that path (a copied
// buildpack compiles as usual). A bundle only exports: the program decides to run it.
const WRAP = ['(function (exports, require, module, __filename, __dirname) { ', '\n})'];
// The loader both programs start with (each carries it: no third file to resolve and compile):
// runs lib/<entry>.bundle.cjs with V8's code cache made for it (MAKE_CACHE) and returns its exports.
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
// Run by the Node.js that will use the cache (V8 accepts only a cache of its own version and flags):
// argv: the bundle as built now, and the path it will have once the build is moved into place.
const MAKE_CACHE = `const fs = require('node:fs'); const vm = require('node:vm'); const { createRequire } = require('node:module');
const [built, final] = process.argv.slice(1);
const s = new vm.Script(${JSON.stringify(WRAP[0])} + fs.readFileSync(built, 'utf8') + ${JSON.stringify(WRAP[1])}, { filename: final });
const bundle = { exports: {} };
s.runInThisContext().call(bundle.exports, bundle.exports, createRequire(built), bundle, final, require('node:path').dirname(final));
fs.writeFileSync(built + '.v8cache', Buffer.concat([Buffer.from(final + '\\n'), s.createCachedData()]));`;
const MIN_NODE_MAJOR = 20;
// lib/cnb/extra-ca.ts's DEFERRED_CA_CERTS (test/deps/extra-ca.test.ts checks they agree).
const DEFERRED_CA_CERTS = '_RBP_DEFERRED_NODE_EXTRA_CA_CERTS';

// dist/cli-detect.bundle.cjs: the CLI for `rbp detect` (a platform runs it on every build), `rbp
// --version` and `rbp help`, without the command modules of the other commands (build, run, packaging:
// execa, tar, the OCI code), a third of the whole CLI to load. rbp.js picks it for those commands.
const DETECT_BUNDLE = 'cli-detect.bundle.cjs';
const DETECT_BUNDLE_ARGS = ['detect', 'version', '--version', '-V', 'help', '--help', '-h', ''];
// The command modules cli-commands.ts loads for the other commands: a name that no longer exists fails the build.
const NOT_FOR_DETECT = ['build.ts', 'run.ts', 'package.ts', 'prune.ts'].map((f) => path.join(root, 'lib', 'platform', 'commands', f));
for (const f of NOT_FOR_DETECT)
  if (!fs.existsSync(f)) throw new Error(`scripts/build.mjs: NOT_FOR_DETECT names ${path.relative(root, f)}, which does not exist`);
const withoutCommands = {
  name: 'without-commands',
  setup(b) {
    b.onResolve({ filter: /\.ts$/ }, (a) => {
      const p = path.resolve(a.resolveDir, a.path);
      return a.kind === 'dynamic-import' && NOT_FOR_DETECT.includes(p) ? { path: p, namespace: 'not-for-detect' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'not-for-detect' }, (a) => ({
      loader: 'js',
      contents: `throw new Error(${JSON.stringify(`${path.relative(root, a.path)} is not in ${DETECT_BUNDLE}: rbp.js runs only detect, version and help from it`)});`,
    }));
  },
};

// Libraries that most runs never call are files of their own beside each bundle that may call them,
// loaded (a plain require, relative to the bundle) at their first use, so that loading the bundle
// does not read and deserialize them: in a warm rebuild, rbp's and the buildpack's build load each
// bundle once (~45% of a build bundle's size, a third of rbp's; issue 27). Each is asked for at its
// first use: through LAZY (execa, tar, yaml), or by a dynamic import (undici, which
// lib/deps/download.ts imports at its first request; execa, which lib/platform/detect.ts imports
// for a third-party buildpack's detect).
// - undici (~1 MiB) serves downloads only;
// - execa runs processes (a warm build that reuses every layer runs none);
// - tar packs and unpacks archives (downloads, images, buildpackages);
// - yaml reads pnpm's and Yarn's YAML lock files, and SBOMs of them.
const ASIDE = {
  undici: { file: 'undici.cjs', source: "module.exports = require('undici');" },
  execa: { file: 'execa.cjs', source: "export { execa } from 'execa';" },
  tar: { file: 'tar.cjs', source: "module.exports = require('tar');" },
  yaml: { file: 'yaml.cjs', source: "module.exports = require('yaml');" },
};
const ASIDE_NAMES = new RegExp(`^(${Object.keys(ASIDE).join('|')})$`);
const ASIDE_FILES = new RegExp(
  `^\\./(${Object.values(ASIDE)
    .map((l) => l.file.replace('.', '\\.'))
    .join('|')})$`,
);
const asideLibraries = {
  name: 'aside-libraries',
  setup(b) {
    b.onResolve({ filter: ASIDE_NAMES }, (a) => {
      const ours =
        (a.kind === 'dynamic-import' && !a.importer.includes(`${path.sep}node_modules${path.sep}`)) || (a.kind === 'require-call' && a.namespace === 'lazy');
      return ours ? { path: a.path, namespace: 'aside' } : undefined;
    });
    b.onResolve({ filter: ASIDE_FILES }, (a) => ({ path: a.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'aside' }, (a) => ({ loader: 'js', contents: `module.exports = require('./${ASIDE[a.path].file}');` }));
  },
};
/** Writes the ASIDE libraries' own bundles into `dir`, for the bundles there that set them aside. */
const asideBeside = (dir) =>
  Object.values(ASIDE).map((l) =>
    esbuild.build({ ...common, stdin: { contents: l.source, resolveDir: root, loader: 'js' }, format: 'cjs', outfile: path.join(dir, l.file) }),
  );

// Some modules are needed by functions rbp or a buildpack calls, not by any top level, and cost
// much to load (LAZY): our own imports of them load them at their first use.
// What rbp's own imports of a module load at their first use instead of at the bundle's start,
// and how they import it: its default export (read as `crypto.createHash(...)`), or the functions
// named (each called as `execa(...)`, `tar.x(...)`). An import of anything else fails the build.
const LAZY = {
  // ~6 ms to load, with node:stream; dotenv loads it for its own encryption, which rbp never uses.
  'node:crypto': 'default',
  // rbp needs it only for a deployment's health check.
  'node:http': 'default',
  // Not among the modules Node.js loads at its start (~0.3 ms): rbp detect calls nothing of it.
  'node:os': 'default',
  // A built-in's first require makes its ES module facade (~0.3 ms): rbp detect makes a require only
  // for a buildpack folder of another build (lib/platform/detect.ts).
  'node:module': ['createRequire'],
  'node:url': ['fileURLToPath', 'pathToFileURL'],
  // parseArgs: a command line with flags (rbp detect APP has none: lib/platform/cli-args.ts).
  'node:util': ['parseArgs'],
  dotenv: 'default',
  // execa loads child_process, net and stream (~15 ms in a buildpack's build), tar the zlib and
  // file-system streams, yaml is a quarter of a build bundle: a warm build that reuses everything
  // runs none of them.
  execa: ['execa'],
  tar: ['c', 't', 'x'],
  yaml: ['parse'],
};
// A built-in that many modules import is made an ES module once: esbuild would otherwise copy its
// exports into a new object for each importing module (__toESM), at every start of the bundle.
const builtinsOnce = {
  name: 'builtins-once',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (a) =>
      a.kind === 'import-statement' && a.namespace === 'file' && !a.importer.includes(`${path.sep}node_modules${path.sep}`) && !(a.path in LAZY)
        ? { path: a.path, namespace: 'builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, async (a) => {
      const names = Object.keys(await import(a.path)).filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
      const exports = names.map((n) => `export const ${n} = m.${n};`).join('\n');
      return { loader: 'js', contents: `const m = require(${JSON.stringify(a.path)});\nexport default m;\n${exports}\n` };
    });
  },
};
const lazyImports = {
  name: 'lazy-imports',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(LAZY).join('|')})$`) }, (a) =>
      a.kind === 'import-statement' && a.namespace === 'file' && !a.importer.includes(`${path.sep}node_modules${path.sep}`)
        ? { path: a.path, namespace: 'lazy' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, (a) => {
      const how = LAZY[a.path];
      const load = `let real;\nconst load = () => (real ??= require(${JSON.stringify(a.path)}));\n`;
      return {
        loader: 'js',
        resolveDir: root,
        contents:
          how === 'default'
            ? `${load}export default new Proxy({}, { get: (_, key) => load()[key] });\n`
            : load + how.map((f) => `export const ${f} = (...args) => load().${f}(...args);\n`).join(''),
      };
    });
  },
};

const MIN_RBP_NODE_MAJOR = 20;
// dist/rbp.js, rbp's entry: runs rbp.bundle.cjs with V8's code cache (Node.js 20 has no compile
// cache of its own, and compiling the CLI is most of what a short command costs beyond Node.js's
// start). rbp makes the cache itself after a command that succeeded, when there is none or V8 refused
// it (another Node.js, another bundle); it is written aside and renamed, so concurrent rbps never read
// half of one, and a folder rbp may not write just goes without.
// `node --`: Node.js itself takes an `--env-file` anywhere on its command line unless `--` ends its
// own options; rbp's --env-file is rbp's to read. dist/rbp always runs this file that way.
const RBP_LOADER = `#!/usr/bin/env -S node --
'use strict';
if (Number(process.versions.node.split('.')[0]) < ${MIN_RBP_NODE_MAJOR}) {
  process.stderr.write('! ERROR rbp needs Node.js >= ${MIN_RBP_NODE_MAJOR}\\n! Seen: node: ' + JSON.stringify(process.version) + ' (' + process.execPath + ')\\n! Fix:  put Node.js ${MIN_RBP_NODE_MAJOR} or newer first on PATH\\n');
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
const script = new vm.Script('(function (exports, require, module, __filename, __dirname) { ' + fs.readFileSync(file, 'utf8') + '\\n})', { filename: file, cachedData });
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

// dist/rbp, the package's bin: `node -- rbp.js ARGS`, so Node.js never reads rbp's own flags (its
// --env-file above). A shebang cannot say it everywhere: `#!/usr/bin/env -S node --` needs an env
// that knows -S (busybox's and older coreutils' do not), and npm runs bins through their shebang.
// POSIX sh, found through npm's symlink to it (readlink without -f: GNU, busybox and macOS have it).
// lib/platform/handoff.ts's HANDOFF_PID (test/cli/handoff.test.ts checks they agree).
const HANDOFF_PID = '_RBP_HANDOFF';
// Node.js 20 parses NODE_EXTRA_CA_CERTS at its start (~45 ms for a system bundle), though most runs
// make no request: rbp and the bundles of our buildpacks take the variable back first thing and read
// the file at their first request (lib/cnb/extra-ca.ts), so every process they start gets it as it
// was. Not when NODE_OPTIONS picks Node.js's certificate store: Node.js combines those.
const DEFER_CA = `defer_ca() {
  [ -n "\${NODE_EXTRA_CA_CERTS-}" ] || return 0
  case " \${NODE_OPTIONS-} " in
    *--use-openssl-ca* | *--use-bundled-ca* | *--use-system-ca*) return 0 ;;
  esac
  ${DEFERRED_CA_CERTS}=$NODE_EXTRA_CA_CERTS
  export ${DEFERRED_CA_CERTS}
  unset NODE_EXTRA_CA_CERTS
}`;
const RBP_BIN = `#!/bin/sh
# rbp (scripts/build.mjs): runs rbp.js beside this file on the node of PATH, after \`--\`: Node.js
# reads an --env-file anywhere on its command line, even after the script's name, unless \`--\`
# ends its own options, and rbp's --env-file is rbp's.
# Folders by parameter expansion, not dirname: no process started before rbp.js's own.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) case $self in */*) self=\${self%/*}/$link ;; *) self=$link ;; esac ;; esac
done
if ! command -v node >/dev/null 2>&1; then
  echo "! ERROR rbp needs Node.js >= ${MIN_RBP_NODE_MAJOR}: no node on PATH" >&2
  echo "! Fix:  install Node.js ${MIN_RBP_NODE_MAJOR} or newer and put it on PATH" >&2
  exit 2
fi
case $self in */*) rbp_js=\${self%/*}/rbp.js ;; *) rbp_js=rbp.js ;; esac
# The variable rbp.js takes back (the run branch defers it in its subshell only: the process it
# hands over to starts from this shell's environment).
${DEFER_CA}
# rbp run hands its place over (lib/platform/handoff.ts): rbp.js plans the launch, writes on fd 3
# the sh that starts the process, and ends; this shell runs it, and the process, exec'd, keeps this
# pid. Nothing of rbp stays beside it. rbp.js's own output goes where this shell's does (fd 4); with
# stdout closed (nothing to duplicate), rbp.js runs as for any other command.
if [ "\${1-}" = run ] && { true 5>&1; } 2>/dev/null; then
  exec 4>&1
  handoff=$(defer_ca; ${HANDOFF_PID}=$$ node -- "$rbp_js" "$@" 3>&1 1>&4 4>&-)
  status=$?
  exec 4>&-
  [ -n "$handoff" ] || exit "$status"
  eval "$handoff"
fi
defer_ca
exec node -- "$rbp_js" "$@"
`;

// bin/detect and bin/build: lib/cnb/sh/bootstrap.sh (a build image may hold no Node.js).
const BOOTSTRAP = fs.readFileSync(path.join(root, 'lib', 'cnb', 'sh', 'bootstrap.sh'), 'utf8');
const NODE_FIX = `Fix: package the buildpack with Node.js (npm run build -- --with-node), or put node >= ${MIN_NODE_MAJOR} on the build image's PATH`;
// lib/<entry>.cjs's first statements: the version check of a node from PATH, with the bootstrap's
// message, in syntax any Node.js that may be there parses (the rest of the file too: Node.js >= 6).
const NODE_CHECK = (entry) => `if (Number(process.versions.node.split('.')[0]) < ${MIN_NODE_MAJOR}) {
  process.stderr.write('ERROR ' + require('path').basename(process.env.CNB_BUILDPACK_DIR || require('path').dirname(__dirname)) + ': bin/${entry} needs Node.js >= ${MIN_NODE_MAJOR}: none in this buildpack (node/bin/node) and ' + process.execPath + ' on PATH is ' + process.version + '\\n' + ${JSON.stringify(NODE_FIX)} + '\\n');
  process.exit(1);
}`;

// src/detect.ts and src/build.ts export the function; each bundle runs it as the program.
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
const PROGRAM = (entry) => `'use strict';
// bin/${entry}'s program (scripts/build.mjs).
${NODE_CHECK(entry)}
${LOAD}
load('${entry}').main();
`;

/** lib/detect-quick and lib/detect-plan.toml: what bin/detect answers without Node.js (lib/cnb/quick-detect.ts), from the detect bundle's own data. */
function writeQuickDetect(bundle, lib) {
  const files = createRequire(bundle)(bundle).quickFiles();
  if (!files) return;
  fs.writeFileSync(path.join(lib, 'detect-quick'), files.data);
  if (files.plan) fs.writeFileSync(path.join(lib, 'detect-plan.toml'), files.plan);
}

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });

const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', legalComments: 'none' };

const buildpacksDir = path.join(root, 'buildpacks');
const names = fs.readdirSync(buildpacksDir).filter((n) => fs.existsSync(path.join(buildpacksDir, n, 'buildpack.toml')));
await Promise.all(
  names.flatMap((name) => {
    const src = path.join(buildpacksDir, name);
    const out = path.join(dist, 'buildpacks', name);
    fs.mkdirSync(path.join(out, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(src, 'buildpack.toml'), path.join(out, 'buildpack.toml'));
    // bin/* have no extension: pin CommonJS so Node never guesses from a parent package.json.
    fs.writeFileSync(path.join(out, 'package.json'), '{ "type": "commonjs" }\n');
    if (carriedNode) {
      fs.mkdirSync(path.join(out, 'node', 'bin'), { recursive: true });
      fs.copyFileSync(carriedNode, path.join(out, 'node', 'bin', 'node'));
      fs.chmodSync(path.join(out, 'node', 'bin', 'node'), 0o755);
    }
    fs.mkdirSync(path.join(out, 'lib'), { recursive: true });
    fs.cpSync(path.join(root, 'lib', 'launch', 'sh'), path.join(out, 'launch'), { recursive: true });
    return [
      ...asideBeside(path.join(out, 'lib')),
      ...ENTRYPOINTS.map(async (entry) => {
        const file = path.join(src, 'src', `${entry}.ts`);
        if (!fs.existsSync(file)) throw new Error(`${name}: src/${entry}.ts is missing`);
        if (entry === 'launch') {
          // bin/launch stays one JS file: the build copies it into the launcher layer, where the launch runs it with a chosen node.
          const outfile = path.join(out, 'bin', entry);
          await esbuild.build({
            ...common,
            entryPoints: [file],
            outfile,
            format: 'cjs',
            banner: { js: '#!/usr/bin/env node' },
            plugins: [lazyImports, builtinsOnce],
          });
          fs.chmodSync(outfile, 0o755);
          return;
        }
        const outfile = path.join(out, 'lib', `${entry}.bundle.cjs`);
        await esbuild.build({ ...common, stdin: bundleEntry(entry, file), outfile, format: 'cjs', plugins: [lazyImports, builtinsOnce, asideLibraries] });
        fs.writeFileSync(path.join(out, 'lib', `${entry}.cjs`), PROGRAM(entry));
        if (entry === 'detect') writeQuickDetect(outfile, path.join(out, 'lib'));
        await execFileAsync(carriedNode ?? process.execPath, ['-e', MAKE_CACHE, outfile, path.join(finalDist, path.relative(dist, outfile))]);
        fs.writeFileSync(path.join(out, 'bin', entry), BOOTSTRAP, { mode: 0o755 });
      }),
    ];
  }),
);

const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
// The CLI: one CommonJS bundle, dist/rbp.bundle.cjs, that dist/rbp.js runs with V8's code cache
// (RBP_LOADER). A command's own code (build, run, packaging) is still evaluated only when the command
// runs (the CLI's dynamic imports stay lazy inside the bundle).
const cli = {
  ...common,
  // import.meta names the bundle (rbp finds dist/buildpacks beside it): its dirname is the bundle's
  // folder, its url made at its first use (a file: URL costs ~0.5 ms the first time; detect needs none).
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
  esbuild.build({ ...cli, outfile: path.join(dist, 'rbp.bundle.cjs'), plugins: [lazyImports, builtinsOnce, asideLibraries] }),
  esbuild.build({ ...cli, outfile: path.join(dist, DETECT_BUNDLE), plugins: [withoutCommands, lazyImports, builtinsOnce, asideLibraries] }),
  ...asideBeside(dist),
]);
fs.writeFileSync(path.join(dist, 'rbp.js'), RBP_LOADER, { mode: 0o755 });
fs.writeFileSync(path.join(dist, 'rbp'), RBP_BIN, { mode: 0o755 });
// dist/rbp.js is CommonJS (the package is "type": "module"): no ES module loader to start.
fs.writeFileSync(path.join(dist, 'package.json'), '{ "type": "commonjs" }\n');
const old = `${finalDist}.old-${process.pid}`;
if (fs.existsSync(finalDist)) fs.renameSync(finalDist, old);
fs.renameSync(dist, finalDist);
fs.rmSync(old, { recursive: true, force: true });
const shown = path.relative(root, finalDist) || finalDist;
// Detect runs on every build, each time a Node.js start plus this file's load: its size is watched.
const kib = (f) => `${(fs.statSync(f).size / 1024).toFixed(1)} KiB`;
console.error(
  `detect bundles: ${names.map((n) => `${n} ${kib(path.join(finalDist, 'buildpacks', n, 'lib', 'detect.bundle.cjs'))}`).join(', ')}; rbp.bundle.cjs ${kib(path.join(finalDist, 'rbp.bundle.cjs'))}, ${DETECT_BUNDLE} ${kib(path.join(finalDist, DETECT_BUNDLE))}`,
);
console.error(
  `built ${names.map((n) => `${shown}/buildpacks/${n}`).join(', ')} and ${shown}/rbp.js${carriedNode ? ` (each buildpack carries ${carriedNode})` : ''}`,
);
