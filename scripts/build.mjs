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
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { parse as parseToml } from 'smol-toml';

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

// dist/rbp.js, rbp's entry: compiles rbp.bundle.cjs with V8's code cache, rbp.bundle.cjs.v8cache.
// Node.js 20 has no compile cache of its own, and compiling the CLI is most of what `rbp detect` and
// a warm `rbp build` cost beyond Node.js's start. The cache is made by rbp itself after a command
// that succeeded (V8 then includes every function that command compiled, far more than a cache made
// from the bundle before it ran): when there is none, when V8 refused it (another Node.js version,
// another bundle), or when it came from a command that runs less of rbp than this one (a build
// covers detect, restore, build and export). The file starts with the bundle's path and that rank; it
// is written aside and renamed, so concurrent rbps never read half of one. A folder rbp may not write
// (an installation of another user) just goes without.
// `node --`: Node.js itself (20, 22 and 24 alike) takes an `--env-file` anywhere on its command
// line, even after the script's name, and exits 9 when the file is missing, before any JavaScript
// runs, unless `--` ends its own options; rbp's --env-file is rbp's to read. The package's bin is
// dist/rbp (RBP_BIN), which always runs this file that way.
// dist/${DETECT_BUNDLE}: the CLI for `rbp detect` (run by a platform on every build), `rbp --version` and
// `rbp help`, which need none of the modules cli.ts imports for its other commands (build, launch,
// packaging: execa, tar, the OCI code). Those imports resolve to a module that fails loudly instead:
// RBP_LOADER never runs these commands from this bundle. Its name does not start with `rbp`: the
// package's bin and loader are dist/rbp and dist/rbp.js, and the whole CLI stays dist/rbp.bundle.cjs.
const DETECT_BUNDLE = 'cli-detect.bundle.cjs';
const DETECT_BUNDLE_ARGS = ['detect', 'version', '--version', '-V', 'help', '--help', '-h', ''];
// The command modules of lib/platform/commands/ that cli-commands.ts's COMMANDS table loads for the
// other commands. A name here that no longer exists fails the build: a stale list would silently put
// them (tar, execa, the OCI code) back into the detect CLI.
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
      contents: `throw new Error(${JSON.stringify(`${path.relative(root, a.path)} is not in ${DETECT_BUNDLE}: rbp.js runs only detect, version and help from it (scripts/build.mjs)`)});`,
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

// Loading a bundle is mostly its top level: every module imported statically runs its imports.
// Two costs there are esbuild's, not rbp's, and are taken away after the fact:
// - each module's `import fs from 'node:fs'` becomes `__toESM(require("node:fs"), 1)`, a new object
//   with a getter per property of the built-in (node:fs has ~100), once per importing module (77
//   times in the detect CLI): made once per built-in instead (the objects are alike and read-only),
//   and without the getters: an object whose prototype is the built-in, `default` its own property.
//   esbuild reads a built-in's imports as `ns.default.f` or `(0, ns.f)(...)`, which the prototype
//   answers with the built-in's current value, as the getters did (~0.5 ms of every rbp start);
// - some modules are needed by functions rbp calls, not by any top level, and cost much to load
//   (LAZY): rbp's own imports of them load them at their first use.
const TO_ESM_END = '\n));\n';
function memoBuiltins(file) {
  const text = fs.readFileSync(file, 'utf8');
  const at = text.indexOf('var __toESM = ');
  if (at < 0) return;
  const end = text.indexOf(TO_ESM_END, at);
  if (end < 0) throw new Error(`${file}: esbuild's __toESM is not where scripts/build.mjs expects it`);
  const helper =
    '\nvar __builtinESM = /* @__PURE__ */ ((made) => (id, m) => made.get(id) ?? made.set(id, Object.create((m = require(id)), { default: { value: m, enumerable: true } })).get(id))(new Map());\n';
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  const body = text
    .slice(end + TO_ESM_END.length)
    .replace(/__toESM\(require\("([\w:/]+)"\), 1\)/g, (all, id) => (builtins.has(id) ? `__builtinESM(${JSON.stringify(id)})` : all));
  fs.writeFileSync(file, text.slice(0, end + TO_ESM_END.length) + helper + body);
}
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
const RBP_LOADER = `#!/usr/bin/env -S node --
'use strict';
// rbp's entry (scripts/build.mjs): runs rbp.bundle.cjs with V8's code cache, made by rbp itself.
if (Number(process.versions.node.split('.')[0]) < ${MIN_RBP_NODE_MAJOR}) {
  process.stderr.write('! ERROR rbp needs Node.js >= ${MIN_RBP_NODE_MAJOR}\\n! Seen: node: ' + JSON.stringify(process.version) + ' (' + process.execPath + ')\\n! Fix:  put Node.js ${MIN_RBP_NODE_MAJOR} or newer first on PATH\\n');
  process.exit(2);
}
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
// detect, version and help run ${DETECT_BUNDLE}: the CLI without the build, run, deploy and packaging
// code (a third of the size, most of the load); every other command, or a copy of rbp.js without it,
// runs the whole CLI.
const light = ${JSON.stringify(DETECT_BUNDLE_ARGS)}.includes(process.argv[2] ?? '') && fs.existsSync(path.join(__dirname, '${DETECT_BUNDLE}'));
const file = path.join(__dirname, light ? '${DETECT_BUNDLE}' : 'rbp.bundle.cjs');
const cacheFile = file + '.v8cache';
// How much of rbp a command runs: a cache made by a lower rank is replaced by a higher one's. detect
// runs more of ${DETECT_BUNDLE} than --version and help do: a cache made by them (a third of the size)
// left every later detect compiling its functions afresh.
const rank = { build: 2, deploy: 2, detect: 1.5 }[process.argv[2]] ?? 1;
let cachedData;
let cachedRank = 0;
try {
  // One read into a buffer of the file's size: readFileSync costs ~0.2 ms more here.
  const fd = fs.openSync(cacheFile, 'r');
  let cache;
  try {
    cache = Buffer.allocUnsafe(fs.fstatSync(fd).size);
    cache = cache.subarray(0, fs.readSync(fd, cache, 0, cache.length, 0));
  } finally {
    fs.closeSync(fd);
  }
  const nl = cache.indexOf(10);
  const nl2 = cache.indexOf(10, nl + 1);
  if (nl2 > 0 && cache.toString('utf8', 0, nl) === file) {
    cachedRank = Number(cache.toString('utf8', nl + 1, nl2)) || 0;
    cachedData = cache.subarray(nl2 + 1);
  }
} catch {
  // no cache yet
}
// A bundle of ASCII only (scripts/build.mjs lists them) is read as latin1: the same text, ~0.3 ms
// less than decoding UTF-8.
const encoding = ASCII_BUNDLES.includes(path.basename(file)) ? 'latin1' : 'utf8';
const script = new vm.Script('(function (exports, require, module, __filename, __dirname) { ' + fs.readFileSync(file, encoding) + '\\n})', { filename: file, cachedData });
if (!cachedData || script.cachedDataRejected || rank > cachedRank) {
  process.once('exit', (code) => {
    if (code !== 0) return;
    const tmp = cacheFile + '.' + process.pid;
    try {
      // A folder rbp may not write: no cache made for nothing.
      fs.accessSync(__dirname, fs.constants.W_OK);
      fs.writeFileSync(tmp, Buffer.concat([Buffer.from(file + '\\n' + rank + '\\n'), script.createCachedData()]));
      fs.renameSync(tmp, cacheFile);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  });
}
const bundle = { exports: {}, id: file, filename: file, loaded: false };
// The bundle is beside this file: this file's require resolves its requires alike (no createRequire to make).
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

// bin/detect and bin/build: the lifecycle runs them with the build image's PATH, which may hold no
// Node.js (a stock CNB build image has none). The bootstrap takes the Node.js carried in the
// buildpack (node/bin/node, put there by --with-node: the packager chose it, so it wins), else a
// `node` >= 20 from PATH, else fails with one clear message. It execs, so exit codes (0, 100, other)
// and signals are the bundled code's own. Plain POSIX sh: dash and busybox run it.
const NODE_FIX = `Fix: package the buildpack with Node.js (npm run build -- --with-node), or put node >= ${MIN_NODE_MAJOR} on the build image's PATH`;
// The bootstrap forks nothing on its way (a build's first buildpack starts while restore runs, and
// every process on that way is waited for): a node from PATH has its version checked by
// lib/<entry>.cjs itself, first thing (NODE_CHECK), not by a `node --version` of its own.
const BOOTSTRAP = (entry) => `#!/bin/sh
# ${entry} bootstrap (scripts/build.mjs): runs lib/${entry}.cjs on Node.js >= ${MIN_NODE_MAJOR}.
bp=\${CNB_BUILDPACK_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
node="$bp/node/bin/node"
if [ ! -x "$node" ]; then
  if ! command -v node >/dev/null 2>&1; then
    echo "ERROR $(basename "$bp"): bin/${entry} needs Node.js >= ${MIN_NODE_MAJOR}: none in this buildpack (node/bin/node) and no node on PATH" >&2
    echo "${NODE_FIX}" >&2
    exit 1
  fi
  node=node
fi
${DEFER_CA}
defer_ca
exec "$node" "$bp/lib/${entry}.cjs" "$@"
`;
// lib/<entry>.cjs's first statements: the version check of a node from PATH, with the bootstrap's
// message, in syntax any Node.js that may be there parses (the rest of the file too: Node.js >= 6).
const NODE_CHECK = (entry) => `if (Number(process.versions.node.split('.')[0]) < ${MIN_NODE_MAJOR}) {
  process.stderr.write('ERROR ' + require('path').basename(process.env.CNB_BUILDPACK_DIR || require('path').dirname(__dirname)) + ': bin/${entry} needs Node.js >= ${MIN_NODE_MAJOR}: none in this buildpack (node/bin/node) and ' + process.execPath + ' on PATH is ' + process.version + '\\n' + ${JSON.stringify(NODE_FIX)} + '\\n');
  process.exit(1);
}`;

// src/detect.ts and src/build.ts export the function; the bundle of each exports `main` (the
// program: process env, cwd, streams, exit code), and the detect bundle also `detectExit(env, cwd)`,
// the same code, which rbp runs in-process for its own buildpacks (lib/platform/detect.ts) to spare
// a Node.js start per buildpack: it requires lib/detect.cjs, which exports the bundle's exports
// when it is not the program.
// The first line of such a lib/detect.cjs: rbp requires only one that starts with it (an older one
// would run as a program inside rbp). lib/platform/detect.ts checks the same text. The line goes on
// with the build id (BUILD_ID below): rbp runs the detect compiled into it instead of requiring the
// file when the ids agree.
const DETECT_API_MARK = '// rbp-detect-api: 1';
const contextTs = JSON.stringify(path.join(root, 'lib', 'cnb', 'context.ts'));
const bundleEntry = (entry, file) => ({
  sourcefile: `${entry}-entry.cjs`,
  resolveDir: path.dirname(file),
  loader: 'js',
  contents:
    entry === 'detect'
      ? `const { detectExit, runDetect } = require(${contextTs});
const detect = require(${JSON.stringify(file)}).default;
module.exports = { rbpDetectApi: 1, detectExit: (env, cwd) => detectExit(detect, env, cwd), main: () => runDetect(detect) };
`
      : `const { runBuild } = require(${contextTs});
const build = require(${JSON.stringify(file)}).default;
module.exports = { main: () => runBuild(build) };
`,
});
// The build gate (lib/cnb/build-gate.ts): the bundle's runBuild waits at it; this first line says
// the program does (lib/platform/build-gate.ts checks it, test/lifecycle/build-gate.test.ts too).
const BUILD_GATE_MARK = '// rbp-build-gate: 1';
const PROGRAM = {
  detect: (buildId) => `${DETECT_API_MARK}; build ${buildId}
'use strict';
// bin/detect's program (scripts/build.mjs); rbp requires it to run the detect in its own process.
${NODE_CHECK('detect')}
${LOAD}
const detect = load('detect');
if (require.main === module) detect.main();
else module.exports = detect;
`,
  build: `${BUILD_GATE_MARK}
'use strict';
// bin/build's program (scripts/build.mjs).
${NODE_CHECK('build')}
${LOAD}
load('build').main();
`,
};

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
          await esbuild.build({ ...common, entryPoints: [file], outfile, format: 'cjs', banner: { js: '#!/usr/bin/env node' }, plugins: [lazyImports] });
          memoBuiltins(outfile);
          fs.chmodSync(outfile, 0o755);
          return;
        }
        const outfile = path.join(out, 'lib', `${entry}.bundle.cjs`);
        await esbuild.build({ ...common, stdin: bundleEntry(entry, file), outfile, format: 'cjs', plugins: [lazyImports, asideLibraries] });
        memoBuiltins(outfile);
        // lib/detect.cjs names the build id, known once every detect bundle is built (below).
        if (entry === 'build') fs.writeFileSync(path.join(out, 'lib', `${entry}.cjs`), PROGRAM[entry]);
        await execFileAsync(carriedNode ?? process.execPath, ['-e', MAKE_CACHE, outfile, path.join(finalDist, path.relative(dist, outfile))]);
        fs.writeFileSync(path.join(out, 'bin', entry), BOOTSTRAP(entry), { mode: 0o755 });
      }),
    ];
  }),
);

// The build id: which detects this build made. rbp compiles our three detects into itself
// (scripts/rbp.ts, lib/platform/detect.ts) and runs them for a buildpack folder whose lib/detect.cjs
// names the same id; a folder of another build (older, newer, edited) has its lib/detect.cjs loaded. The
// id is a digest of the detect bundles: the same sources give the same id, and any change to what a
// detect runs changes it.
const idHash = createHash('sha256');
for (const n of [...names].sort())
  idHash
    .update(`${n}\0`)
    .update(fs.readFileSync(path.join(dist, 'buildpacks', n, 'lib', 'detect.bundle.cjs')))
    .update('\0');
const BUILD_ID = idHash.digest('hex').slice(0, 24);
for (const n of names) fs.writeFileSync(path.join(dist, 'buildpacks', n, 'lib', 'detect.cjs'), PROGRAM.detect(BUILD_ID));

// Our buildpacks' buildpack.toml, parsed now for rbp (lib/cnb/parsed-at-build.ts): keyed by the
// exact text, kept only when its value survives JSON unchanged (no dates, no big integers), read
// back as rbp reads it (asToml, run here from its source with esbuild's transform).
const { asToml } = await import(
  `data:text/javascript;base64,${Buffer.from((await esbuild.transform(fs.readFileSync(path.join(root, 'lib', 'cnb', 'parsed-at-build.ts'), 'utf8'), { loader: 'ts', format: 'esm' })).code).toString('base64')}`
);
const parsedToml = {};
for (const n of names) {
  const text = fs.readFileSync(path.join(buildpacksDir, n, 'buildpack.toml'), 'utf8');
  const value = parseToml(text);
  if (isDeepStrictEqual(asToml(JSON.stringify(value)), value)) parsedToml[text] = JSON.stringify(value);
  else console.error(`buildpacks/${n}/buildpack.toml: parsed by rbp at each detect (its value is not JSON's)`);
}

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
    __RBP_BUILD_ID__: JSON.stringify(BUILD_ID),
    __RBP_PARSED_TOML__: JSON.stringify(JSON.stringify(parsedToml)),
    'import.meta.url': '__rbpMeta.url',
    'import.meta.dirname': '__dirname',
    'import.meta.filename': '__filename',
  },
  banner: { js: "const __rbpMeta = { get url() { return require('node:url').pathToFileURL(__filename).href; } };" },
  entryPoints: [path.join(root, 'scripts', 'rbp.ts')],
  format: 'cjs',
};
await Promise.all([
  esbuild.build({ ...cli, outfile: path.join(dist, 'rbp.bundle.cjs'), plugins: [lazyImports, asideLibraries] }),
  esbuild.build({ ...cli, outfile: path.join(dist, DETECT_BUNDLE), plugins: [withoutCommands, lazyImports, asideLibraries] }),
  ...asideBeside(dist),
]);
for (const f of ['rbp.bundle.cjs', DETECT_BUNDLE, ...Object.values(ASIDE).map((l) => l.file)]) memoBuiltins(path.join(dist, f));
// esbuild escapes what is not ASCII in strings, not in comments (a § in one): the bundles of ASCII
// only are named to RBP_LOADER, which reads them as latin1.
const asciiBundles = ['rbp.bundle.cjs', DETECT_BUNDLE].filter((f) => !fs.readFileSync(path.join(dist, f)).some((b) => b > 0x7f));
fs.writeFileSync(path.join(dist, 'rbp.js'), RBP_LOADER.replace('ASCII_BUNDLES.includes', `${JSON.stringify(asciiBundles)}.includes`), { mode: 0o755 });
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
