/**
 * Every variable of the contract and every operator setting of rbp, declared once: its kind, its
 * default, the rule it comes from, when it is read (build, launch or both) and which runtime reads
 * it. The README's variable tables are rendered from this list (test/config/config.test.ts keeps
 * them equal); read.ts parses values by these declarations.
 */
import type { VariableSpec } from './kinds.ts';

export const NODE_BUILD_TOOLS = ['bun', 'npm', 'npm-install', 'npm-ci', 'pnpm', 'yarn-berry', 'custom', 'yarn', 'yarn2'] as const;
const HUGO = ['0.147', '0.148', '0.149', '0.150', '0.151', '0.152', '0.159', '0.160', '0.161'] as const;

// One row per variable, as README's table renders them: kept as rows, not one property per line.
// prettier-ignore
export const VARIABLES: readonly VariableSpec[] = [
  // Common to the three runtimes (contract, "Variables common to all three runtimes").
  { name: 'CC_WEBROOT', kind: { type: 'app-path' }, default: '/', scope: 'common', phase: 'both', rule: 'contract, common variables', meaning: 'Directory served.' },
  { name: 'CC_RUN_COMMAND', kind: { type: 'command' }, scope: 'common', phase: 'launch', rule: 'contract, common variables', meaning: 'Replaces the default start/serve command.' },
  { name: 'CC_HEALTH_CHECK_PATH', kind: { type: 'url-path' }, default: '/', scope: 'common', phase: 'launch', rule: 'contract, deployment health check', meaning: 'One path to check at deployment.' },
  { name: 'CC_HEALTH_CHECK_PATH_<n>', kind: { type: 'url-path' }, scope: 'common', phase: 'launch', rule: 'contract, deployment health check', meaning: 'Several paths to check, in the order of n (0, 1, 2, ...).' },
  { name: 'CC_REQUEST_FLOW', kind: { type: 'list', separator: ',' }, scope: 'common', phase: 'launch', rule: 'contract, request flow rule 3', meaning: 'Order of the request-flow chain (redirector, cache, custom), or block.' },
  { name: 'CC_REQUEST_FLOW_CUSTOM', kind: { type: 'command' }, scope: 'common', phase: 'launch', rule: 'contract, request flow rule 3', meaning: 'Custom middleware command with @@LISTEN_PORT@@ and @@FORWARD_PORT@@.' },
  { name: 'ACCESSPROXY_CHALLENGE_SECRET', kind: { type: 'secret' }, scope: 'common', phase: 'launch', rule: 'contract, request flow rule 2', meaning: 'Presence activates the challenge access proxy.' },
  { name: 'CC_CACHE_FILE', kind: { type: 'app-path' }, scope: 'common', phase: 'launch', rule: 'contract, request flow rule 2', meaning: 'Cache proxy configuration file (else .rbp/cache.vcl).' },
  { name: 'CC_REDIRECTOR_PROJECT_KEY', kind: { type: 'secret' }, scope: 'common', phase: 'launch', rule: 'contract, request flow rule 2', meaning: 'Presence activates the redirection proxy.' },

  // phpserver (contract, "phpserver variables and files").
  { name: 'CC_PHP_VERSION', kind: { type: 'enum', values: ['8.4', '8.5'] }, scope: 'phpserver', phase: 'build', rule: 'contract, phpserver versioning', meaning: '8.5 selects the newer server version; 8.4 (or unset) the default.', fix: 'Unset CC_PHP_VERSION (or set it to 8.4) for PHP 8.4.12, or set it to 8.5.' },
  { name: 'CC_PHP_COMPOSER_FLAGS', kind: { type: 'flags' }, default: '--no-interaction --no-progress --no-scripts', scope: 'phpserver', phase: 'build', rule: 'contract, phpserver variables', meaning: 'Replaces the base Composer flags.' },
  { name: 'CC_PHP_DEV_DEPENDENCIES', kind: { type: 'string' }, scope: 'phpserver', phase: 'build', rule: 'contract, phpserver variables', meaning: 'install removes --no-dev (any other value keeps it).' },
  { name: 'CC_PHPSERVER_WORKER', kind: { type: 'app-path' }, scope: 'phpserver', phase: 'launch', rule: 'contract, phpserver variables; limit 3', meaning: 'Worker script kept in memory; inside the webroot.' },
  { name: 'CC_PHPSERVER_PORT', kind: { type: 'port' }, default: '8080', scope: 'phpserver', phase: 'launch', rule: 'contract, ports exposed by the application', meaning: 'Listening port without middleware.' },
  // The key-value add-on's variables, as a linked add-on injects them (contract, key-value add-on use; limit 4).
  { name: 'KV_HOST', kind: { type: 'version', pattern: /^(?:tcp:\/\/)?(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/, shape: 'a host name or IP address, reached over tcp (no unix socket, no other scheme)' }, scope: 'phpserver', phase: 'build', rule: 'contract, key-value add-on use; limit 4', meaning: "The key-value add-on's host (tcp mode only).", fix: "Set KV_HOST to the add-on's host name, as the add-on gives it: only tcp mode is supported." },
  { name: 'KV_PORT', kind: { type: 'enum', values: ['6378'] }, scope: 'phpserver', phase: 'build', rule: 'contract, key-value add-on use; limit 4', meaning: "The key-value add-on's port: 6378 only.", fix: 'Set KV_PORT=6378, the only port the key-value add-on supports, or unset it.' },
  { name: 'KV_TOKEN', kind: { type: 'secret' }, scope: 'phpserver', phase: 'build', rule: 'contract, key-value add-on use; authentication 3', meaning: "The key-value add-on's token, used as the redis password." },

  // static (contract, "static variables and files").
  { name: 'CC_BUILD_COMMAND', kind: { type: 'command' }, scope: 'static', phase: 'build', rule: 'contract, static rule 1', meaning: 'Run in the build phase; no generator detection.' },
  { name: 'CC_OVERRIDE_BUILDCACHE', kind: { type: 'path-list', separator: ':' }, scope: 'static', phase: 'build', rule: 'contract, static rule 4', meaning: 'Build cache content.' },
  { name: 'CC_STATIC_SERVER', kind: { type: 'enum', values: ['caddy'] }, scope: 'static', phase: 'both', rule: 'contract, static rule 5', meaning: 'caddy forces `caddy file-server` (unset: Static Web Server, or Caddy with a valid Caddyfile).', fix: 'Set CC_STATIC_SERVER=caddy, or remove it.' },
  { name: 'CC_STATIC_CADDYFILE', kind: { type: 'app-path' }, default: './Caddyfile', scope: 'static', phase: 'both', rule: 'contract, static rule 5', meaning: 'Location of the Caddyfile.' },
  { name: 'CC_STATIC_FLAGS', kind: { type: 'flags' }, scope: 'static', phase: 'launch', rule: 'contract, static variables', meaning: 'Extra flags for the web server.' },
  { name: 'CC_STATIC_PORT', kind: { type: 'port' }, default: '8080', scope: 'static', phase: 'launch', rule: 'contract, ports exposed by the application', meaning: 'Listening port without middleware.' },
  { name: 'CC_STATIC_AUTOBUILD_OUTDIR', kind: { type: 'app-path' }, default: 'cc_static_autobuilt', scope: 'static', phase: 'build', rule: 'contract, static rule 2', meaning: 'Auto-build output folder.' },
  { name: 'CC_HUGO_VERSION', kind: { type: 'enum', values: HUGO }, default: '0.149', scope: 'static', phase: 'build', rule: 'contract, static versioning; limit 6', meaning: 'Hugo version; from June 15th only 0.160 and later.' },

  // node (contract, "node variables and files").
  { name: 'NODE_ENV', kind: { type: 'string' }, default: 'production', scope: 'node', phase: 'both', rule: 'contract, node rule 1', meaning: 'production for production mode.' },
  { name: 'NODE_OPTIONS', kind: { type: 'flags' }, scope: 'node', phase: 'launch', rule: 'contract, node rule 2', meaning: 'Gets --max-old-space-size (3/4 of the memory) unless it has one.' },
  { name: 'CC_NODE_BUILD_TOOL', kind: { type: 'enum', values: NODE_BUILD_TOOLS }, default: 'npm', scope: 'node', phase: 'build', rule: 'contract, node rules 4 and 5', meaning: 'Package manager (detected from the lock file, else npm).' },
  { name: 'CC_CUSTOM_BUILD_TOOL', kind: { type: 'command' }, scope: 'node', phase: 'build', rule: 'contract, node rule 4', meaning: 'Command used with CC_NODE_BUILD_TOOL=custom.' },
  { name: 'CC_NODE_VERSION', kind: { type: 'version', pattern: /^\d+(\.\d+){0,2}$/, shape: '<major>, <major>.<minor> or <major>.<minor>.<patch>, e.g. 24, 24.15 or 24.15.0' }, scope: 'node', phase: 'build', rule: 'contract, node rule 6', meaning: 'Node.js version (engines.node wins); latest LTS when unset.', fix: 'Set CC_NODE_VERSION to a version such as 24, or use a semver range in engines.node of package.json.' },
  { name: 'CC_BUN_INSTALL_CACHE_DIR', kind: { type: 'app-path' }, scope: 'node', phase: 'build', rule: 'contract, node variables', meaning: 'Bun cache directory.' },
  { name: 'CC_NODE_DEV_DEPENDENCIES', kind: { type: 'enum', values: ['install', 'ignore'] }, scope: 'node', phase: 'build', rule: 'contract, node rule 8', meaning: 'install includes development dependencies.', fix: 'Set CC_NODE_DEV_DEPENDENCIES=install to install them, or unset it.' },
  { name: 'NPM_TOKEN', kind: { type: 'secret' }, scope: 'node', phase: 'build', rule: 'contract, node rule 9', meaning: 'Registry auth token (not with CC_NPM_BASIC_AUTH).' },
  { name: 'CC_NPM_BASIC_AUTH', kind: { type: 'secret' }, scope: 'node', phase: 'build', rule: 'contract, node rule 9', meaning: '<user>:<password> for the registry.' },
  { name: 'CC_NPM_REGISTRY', kind: { type: 'host' }, scope: 'node', phase: 'build', rule: 'contract, node rule 9', meaning: 'Registry host.' },

  // rbp's own operator settings (never in the contract; set in rbp's environment or the build-config env).
  { name: 'RBP_DEPENDENCY_MIRROR', kind: { type: 'string' }, scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'URL or folder holding <id>/<version>/<file> (+ .sha256): offline builds.' },
  { name: 'RBP_NPM_REGISTRY', kind: { type: 'string' }, scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'Where Node.js, npm, pnpm, Yarn, Bun and Deno packages come from.' },
  { name: 'RBP_REQUIRE_CHECKSUMS', kind: { type: 'bool' }, default: '0', scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'On: every download needs a published checksum; off: a tool without one is downloaded over HTTPS, its sha256 logged.', fix: 'Set RBP_REQUIRE_CHECKSUMS=1, or unset it.' },
  { name: 'RBP_TOOL_<NAME>', kind: { type: 'path' }, scope: 'operator', phase: 'both', rule: 'rbp operator setting', meaning: 'A tool the operator provides (RBP_TOOL_CADDY, RBP_TOOL_FRANKENPHP, RBP_TOOL_LIFECYCLE, ...): used as is, nothing downloaded.' },
  { name: 'RBP_OPERATOR_TOOLS', kind: { type: 'enum', values: ['copy', 'in-place'] }, default: 'copy', scope: 'operator', phase: 'build', rule: 'rbp operator setting (rbp build without --image sets in-place)', meaning: 'copy: an RBP_TOOL_<NAME> tool run at launch is copied, with the libraries it loads, into a launch layer, so the image runs it anywhere; in-place: the run environment has it at the same path.', fix: 'Set RBP_OPERATOR_TOOLS=copy or in-place, or unset it.' },
  { name: 'RBP_TOOLS_CACHE', kind: { type: 'path' }, default: '~/.cache/rbp-tools', scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'Where scripts/tools/ keep the tools they build (the run image and lifecycle among them).' },
  { name: 'RBP_DOWNLOAD_CACHE', kind: { type: 'path' }, scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'The shared download cache: one verified copy of each tool version, hard-linked into the layers of every build (rbp sets $XDG_CACHE_HOME/rbp/downloads, else ~/.cache/rbp/downloads); off: none.' },
  { name: 'RBP_RUN_IMAGE', kind: { type: 'path' }, scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'The run image of rbp build --image and rbp builder: an OCI layout (default the one scripts/tools/run-image.sh made).' },
  { name: 'RBP_BUILDPACKS_DIR', kind: { type: 'path' }, scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'Where rbp finds its own built buildpacks (default dist/buildpacks/ beside the CLI).' },
  { name: 'RBP_LOG_LEVEL', kind: { type: 'enum', values: ['quiet', 'normal', 'verbose'] }, default: 'normal', scope: 'operator', phase: 'both', rule: 'rbp operator setting (rbp -v sets verbose)', meaning: 'How much the buildpacks and rbp print; any other value is normal (the logger never fails).' },
  { name: 'RBP_NOW', kind: { type: 'date' }, scope: 'operator', phase: 'build', rule: 'rbp operator setting', meaning: 'The date the Hugo June 15th rule is judged on (default today).' },
  { name: 'RBP_PUBLIC_PORT', kind: { type: 'port' }, default: '8080', scope: 'operator', phase: 'launch', rule: 'contract, common rule 2 (rbp run --port moves it locally)', meaning: 'The public port.' },
  { name: 'RBP_APP_PORT', kind: { type: 'port' }, default: '9000', scope: 'operator', phase: 'launch', rule: 'contract, ports exposed by the application (moved for side-by-side runs)', meaning: 'The app port behind request-flow middleware.' },
  { name: 'RBP_REDIRECTOR_COMMAND', kind: { type: 'command' }, scope: 'operator', phase: 'launch', rule: 'rbp operator setting', meaning: 'Command template of the redirection proxy (@@LISTEN_PORT@@, @@FORWARD_PORT@@).' },
  { name: 'RBP_ACCESSPROXY_COMMAND', kind: { type: 'command' }, scope: 'operator', phase: 'launch', rule: 'rbp operator setting', meaning: 'Command template of the access proxy (@@LISTEN_PORT@@, @@FORWARD_PORT@@).' },
  { name: 'RBP_VARNISH_STORAGE', kind: { type: 'string' }, scope: 'operator', phase: 'launch', rule: 'rbp operator setting', meaning: 'Cache proxy storage (varnishd -s; default an eighth of the instance memory, 16 MiB to 1 GiB).' },
  { name: 'RBP_RESTART', kind: { type: 'enum', values: ['no', 'on-failure'] }, default: 'no', scope: 'operator', phase: 'launch', rule: 'contract, other conditions: a crashed app is restarted (rbp run --restart; on-failure for rbp deploy)', meaning: 'on-failure starts a crashed app again, with back-off from 1 s to 30 s.' },
  { name: 'RBP_RESTART_FIRST_DELAY', kind: { type: 'seconds' }, default: '1', scope: 'operator', phase: 'launch', rule: 'rbp operator setting', meaning: 'The first wait before a restart (it doubles, up to 30 s).' },
  { name: 'RBP_LISTEN_TIMEOUT', kind: { type: 'seconds' }, default: '60', scope: 'operator', phase: 'launch', rule: 'rbp operator setting', meaning: 'How long the launcher waits for a hop to listen.' },
  { name: 'RBP_STOP_TIMEOUT', kind: { type: 'seconds' }, default: '10', scope: 'operator', phase: 'launch', rule: 'rbp operator setting', meaning: 'How long the launcher waits for processes to stop.' },

  // Set by rbp itself for the buildpacks and the launch entrypoint (not meant to be set by hand).
  { name: 'RBP_INSTANCE_SIZE', kind: { type: 'string' }, scope: 'internal', phase: 'build', rule: 'contract, limits 1 and 2 (rbp build --instance)', meaning: 'The instance size the app is built for (XS by default; phpserver refuses pico).' },
  { name: 'RBP_INSTANCE_MEMORY', kind: { type: 'bytes' }, scope: 'internal', phase: 'both', rule: 'contract, node rule 2 (rbp --instance, --memory)', meaning: 'The instance memory in bytes (else the cgroup limit).' },
  { name: 'RBP_LAUNCHER_NODE', kind: { type: 'path' }, scope: 'internal', phase: 'both', rule: 'rbp: the Node.js the launch plans on', meaning: 'A Node.js the launch environment has (rbp run gives its own), used when the image carries none for the launch; set at build, the build counts on it.' },
  { name: 'RBP_LOG_LIVE', kind: { type: 'enum', values: ['1'] }, scope: 'internal', phase: 'build', rule: 'rbp, when its log is a terminal', meaning: '1: the buildpacks draw a live progress line under each step that takes more than a second.' },
  { name: 'RBP_DRY_RUN', kind: { type: 'enum', values: ['1'] }, scope: 'internal', phase: 'launch', rule: 'rbp run --dry-run', meaning: '1: the launch prints its plan and exits.' },
  { name: 'RBP_TEST_STOP_AT', kind: { type: 'string' }, scope: 'internal', phase: 'build', rule: 'rbp\'s reliability tests (lib/platform/checkpoint.ts)', meaning: 'Tests only: rbp build stops itself (SIGSTOP) at this named step of the OUT transaction, for the test to kill it there.' },
];

/**
 * Another platform's build variable: apps that come from Paketo set these in their
 * project.toml. One that means the same as a contract variable (`means`) is honoured when that one is
 * unset, read by the contract variable's rule, and the build says so (lib/config/foreign.ts); one with
 * no equivalent gets a `hint` in the build log. Only build-time meanings: the launch never sees them.
 */
export interface ForeignVariable {
  name: string;
  platform: 'Paketo';
  /** The runtime whose build reads it. */
  runtime: 'node' | 'static' | 'phpserver';
  /** The contract variable it means. */
  means?: string;
  /** How its value is written there: `major-minor` turns Paketo's `20.*`, `20.x`, `v20` into `20`. */
  convert?: 'major-minor';
  /** For a variable with no equivalent: what to do instead. */
  hint?: string;
}

export const FOREIGN_VARIABLES: readonly ForeignVariable[] = [
  { name: 'BP_NODE_VERSION', platform: 'Paketo', runtime: 'node', means: 'CC_NODE_VERSION', convert: 'major-minor' },
  { name: 'BP_WEB_SERVER_ROOT', platform: 'Paketo', runtime: 'static', means: 'CC_WEBROOT' },
  { name: 'BP_PHP_WEB_DIR', platform: 'Paketo', runtime: 'phpserver', means: 'CC_WEBROOT' },
  { name: 'BP_PHP_VERSION', platform: 'Paketo', runtime: 'phpserver', means: 'CC_PHP_VERSION', convert: 'major-minor' },
  {
    name: 'BP_NODE_RUN_SCRIPTS',
    platform: 'Paketo',
    runtime: 'node',
    hint: 'no script runs at build besides preinstall, install and postinstall (contract, node rule 3): run yours from "postinstall", or with CC_NODE_BUILD_TOOL=custom and CC_CUSTOM_BUILD_TOOL="npm install && npm run build"',
  },
  {
    name: 'BP_LAUNCHPOINT',
    platform: 'Paketo',
    runtime: 'node',
    hint: 'the app starts with CC_RUN_COMMAND, else scripts.start, else main of package.json: set "main" to the file',
  },
  {
    name: 'BP_NODE_PROJECT_PATH',
    platform: 'Paketo',
    runtime: 'node',
    hint: 'the application is the repository root: deploy the subfolder as its own application',
  },
];
