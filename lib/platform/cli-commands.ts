/**
 * The commands and flags of `rbp`: one table gives the parser's options, each command's `--help`
 * and its module (lib/platform/commands/<name>.ts), so a flag cannot exist without its description
 * and a command without its handler.
 */
import { DEFAULT_INSTANCE, INSTANCE_SIZES } from '../launch/instance.ts';
import type { Handler } from './commands/context.ts';
import { AUTO_ORDER } from '../package/our-buildpacks.ts';

export interface Flag {
  name: string;
  short?: string;
  /** The value's placeholder; a boolean flag has none. */
  arg?: string;
  multiple?: boolean;
  help: string;
}

export interface Command {
  name: string;
  synopsis: string;
  summary: string;
  /** Paragraphs after the flags. */
  notes?: string[];
  flags: Flag[];
  /** Its module's handler (lib/platform/commands/), loaded when the command runs. */
  load: () => Promise<Handler>;
}

const sizes = Object.entries(INSTANCE_SIZES)
  .map(([k, v]) => `${k} (${v >= 1 << 30 ? `${v / (1 << 30)} GiB` : `${v / (1 << 20)} MiB`})`)
  .join(', ');

const output: Flag[] = [
  { name: 'quiet', short: 'q', help: 'Print only warnings, errors and the result; the log of a failed step is printed on stderr.' },
  { name: 'verbose', short: 'v', help: 'Print debug lines too (what was read, downloads, proxies); passed to the buildpacks as RBP_LOG_LEVEL=verbose.' },
  { name: 'help', short: 'h', help: 'Show this help.' },
];
const envFlags: Flag[] = [
  {
    name: 'env',
    short: 'e',
    arg: 'NAME=VALUE',
    multiple: true,
    help: "An application variable (repeatable); wins over --env-file and project.toml. NAME alone takes the value from rbp's own environment.",
  },
  {
    name: 'env-file',
    arg: 'FILE',
    multiple: true,
    help: 'A dotenv file of application variables (repeatable): NAME=value lines, # comments, quoted multi-line values.',
  },
];
const selection: Flag[] = [
  { name: 'type', arg: 'TYPE', help: `Use one of our buildpacks: ${AUTO_ORDER.join(', ')}.` },
  {
    name: 'buildpack',
    short: 'b',
    arg: 'DIR|ID[@VERSION]',
    multiple: true,
    help: 'A CNB buildpack directory or buildpackage (x.cnb, or an OCI layout folder), or the id (and version) of one of ours, rbp/node@0.1.0 (repeatable, run in order, composites expanded); like pack --buildpack.',
  },
  { name: 'order', arg: 'FILE', help: 'An order.toml whose group entries name buildpacks by path = "DIR" or id.' },
  {
    name: 'descriptor',
    short: 'd',
    arg: 'FILE',
    help: 'The project descriptor (default APP/project.toml when it exists): env, include/exclude and buildpacks, read as pack does.',
  },
];
const buildOnly: Flag[] = [
  { name: 'cache', arg: 'DIR', help: 'Where cached layers are kept (default <OUT>.rbp-cache beside OUT).' },
  { name: 'clear-cache', help: 'Restore nothing from the cache.' },
  { name: 'binding', arg: 'DIR', multiple: true, help: 'A service binding directory with a `type` file (repeatable), given as <platform>/bindings/<name>.' },
  { name: 'task', arg: 'CMD', help: 'Make the app a task: process `task` runs /bin/sh -c CMD once, with no port and no health check.' },
  { name: 'instance', arg: 'SIZE', help: `The instance size: ${sizes}; default ${DEFAULT_INSTANCE}.` },
];
const json: Flag = { name: 'json', help: 'Print the result as JSON on stdout; the log goes to stderr.' };

export const COMMANDS: Command[] = [
  {
    name: 'detect',
    load: () => import('./commands/detect.ts').then((m) => m.run),
    synopsis: 'rbp detect APP [flags]',
    summary: 'Find the buildpack group that would build APP, and its build plan.',
    notes: [
      `Without --type, --buildpack, --order or project.toml buildpacks, ours are tried in this order: ${AUTO_ORDER.join(', ')}.`,
      'Exit codes: 0 a group passed, 20 no group passed, 21 a buildpack failed, 2 bad usage.',
    ],
    flags: [...selection, ...envFlags, json, ...output],
  },
  {
    name: 'build',
    load: () => import('./commands/build.ts').then((m) => m.run),
    synopsis: 'rbp build APP --out OUT [flags]',
    summary: 'Detect, restore, build and export APP into the directory OUT, as the CNB lifecycle does.',
    notes: [
      'OUT holds workspace/, layers/ (with the SBOMs in layers/sbom/launch/), layers/config/metadata.toml and rbp.toml.',
      'Exit codes: 0 built, 20/21 detection, 51 a buildpack failed, 52 a buildpack wrote invalid output, 62 export failed, 2 bad usage.',
    ],
    flags: [
      { name: 'out', short: 'o', arg: 'OUT', help: 'The directory the built app goes to (required).' },
      ...selection,
      ...buildOnly,
      {
        name: 'image',
        arg: 'DIR|REF',
        help: 'Also write the app as an OCI image layout DIR (run image, launcher, launch layers, /workspace) that podman can run; with --publish, the image name REF to push to. Unchanged layers are reused.',
      },
      {
        name: 'publish',
        help: 'Push the image to the registry --image names (credentials from $DOCKER_CONFIG/config.json, else ~/.docker/config.json); the layout is kept in OUT.rbp-image.',
      },
      {
        name: 'tag',
        short: 't',
        arg: 'NAME',
        multiple: true,
        help: 'A name of the --image in its layout (repeatable; default latest), as pack build --tag: skopeo copy oci:DIR:NAME docker://…',
      },
      {
        name: 'run-image',
        arg: 'DIR',
        help: 'The run image for --image: an OCI layout (default RBP_RUN_IMAGE, else the one scripts/tools/run-image.sh made).',
      },
      ...envFlags,
      json,
      ...output,
    ],
  },
  {
    name: 'run',
    load: () => import('./commands/run.ts').then((m) => m.run),
    synopsis: 'rbp run OUT [flags] [-- ARGS...]',
    summary: "Start a process of the app built in OUT, with the launcher's environment; ARGS replace its arguments.",
    notes: ["Exit code: the process's status, 82 when it could not start, 2 bad usage."],
    flags: [
      { name: 'process', short: 'p', arg: 'TYPE', help: 'The process type to start (default: the default process).' },
      { name: 'port', arg: 'PORT', help: 'The public port (default 8080): PORT and RBP_PUBLIC_PORT.' },
      { name: 'instance', arg: 'SIZE', help: `The instance size (default the build's): ${sizes}.` },
      { name: 'memory', arg: 'SIZE', help: "The memory given to the app, e.g. 512M or 1.5G (default the instance's)." },
      { name: 'dry-run', help: 'Print the command line, ports and environment as JSON instead of starting the process.' },
      { name: 'restart', arg: 'no|on-failure', help: 'on-failure starts a crashed app again, with back-off (1 s, 2 s, 4 s… up to 30 s); default no.' },
      ...envFlags,
      json,
      ...output,
    ],
  },
  {
    name: 'deploy',
    load: () => import('./commands/build.ts').then((m) => m.run),
    synopsis: 'rbp deploy APP [flags]',
    summary: 'Build APP, start its default process and run the deployment health check.',
    notes: [
      "When nothing changed since OUT's last deploy (the app's files, variables, buildpacks, rbp, options) and OUT is as that build left it, the build is reused as it is: no detect, restore, build or export.",
      'Exit codes: 3 the health check failed; otherwise as build, then the process status.',
    ],
    flags: [
      { name: 'out', short: 'o', arg: 'OUT', help: 'The build directory (default under $XDG_CACHE_HOME/rbp/deploy/).' },
      { name: 'port', arg: 'PORT', help: 'The public port (default 8080).' },
      { name: 'check', help: 'Stop the app once the health check passed.' },
      {
        name: 'rebuild',
        help: "Build even when nothing changed since OUT's last deploy (the app's files, variables, buildpacks, rbp, options: that build is reused otherwise).",
      },
      { name: 'timeout', arg: 'SECONDS', help: 'How long to wait for the app to listen (default 60).' },
      { name: 'restart', arg: 'no|on-failure', help: 'Whether a crashed app is started again, with back-off (default on-failure, as the platform does).' },
      ...selection,
      ...buildOnly,
      ...envFlags,
      {
        name: 'json',
        help: "Print the build and the deployment (URL, health-check answers) as JSON on stdout once decided; the log and the app's output go to stderr.",
      },
      ...output,
    ],
  },
  {
    name: 'package',
    load: () => import('./commands/package.ts').then((m) => m.runPackage),
    synopsis: 'rbp package --out DIR | --publish REF',
    summary:
      'Write our buildpacks as CNB buildpackages: DIR/rbp-node.cnb, rbp-static.cnb, rbp-phpserver.cnb and rbp-auto.cnb (the composite, automatic order).',
    notes: [
      'Each .cnb is an OCI image layout archive, as `pack buildpack package --format file` writes them.',
      'With --publish REF, rbp/auto is pushed to REF and each buildpack beside it as <REF>-node, -static, -phpserver (same tag): the images a kpack ClusterStore lists.',
    ],
    flags: [
      { name: 'out', short: 'o', arg: 'DIR', help: 'Where the .cnb files go (required without --publish).' },
      { name: 'publish', arg: 'REF', help: 'Push the buildpackages to a registry: rbp/auto to REF, the others beside it.' },
      ...output,
    ],
  },
  {
    name: 'builder',
    load: () => import('./commands/package.ts').then((m) => m.runBuilder),
    synopsis: 'rbp builder --out DIR | --publish REF [flags]',
    summary:
      'Write a CNB builder as an OCI image layout (tags builder, build, run, lifecycle) with DIR/builder.toml, its buildpackages and the lifecycle archive for pack builder create; or push the four images.',
    notes: [
      'The reference lifecycle comes from RBP_TOOL_LIFECYCLE (scripts/tools/lifecycle.sh).',
      'Image names: the builder is REF (default localhost:5000/rbp:bookworm); beside it <REF>-build (the build base image), <REF>-run (the run image, unless --run-image-name) and <REF>-lifecycle:<lifecycle version>. rbp builder prints how to load them into Docker or podman.',
    ],
    flags: [
      { name: 'out', short: 'o', arg: 'DIR', help: 'The OCI layout to write (required without --publish).' },
      {
        name: 'publish',
        arg: 'REF',
        help: 'Push the builder to REF, and the build, run and lifecycle images beside it (credentials from $DOCKER_CONFIG/config.json, else ~/.docker/config.json).',
      },
      { name: 'run-image-name', arg: 'REF', help: 'The run image name the builder gives pack (default <builder>-run, beside the builder).' },
      { name: 'run-image', arg: 'DIR', help: 'The run image: an OCI layout (default RBP_RUN_IMAGE, else the one scripts/tools/run-image.sh made).' },
      ...output,
    ],
  },
  {
    name: 'prune',
    load: () => import('./commands/prune.ts').then((m) => m.run),
    synopsis: 'rbp prune [flags]',
    summary:
      'Remove what rbp left that nothing needs: unused downloads, leftovers of OUTs and their builds, deploys of apps that are gone; never an OUT in use.',
    notes: [
      'Each removal is listed with the space it frees (files whose every hard link goes). An OUT a running rbp run or rbp deploy uses, or a build writes, is kept with everything beside it.',
      'The download cache is RBP_DOWNLOAD_CACHE, else $XDG_CACHE_HOME/rbp/downloads (~/.cache/rbp/downloads).',
    ],
    flags: [
      { name: 'dry-run', short: 'n', help: 'List what would be removed, and the space it would free; remove nothing.' },
      { name: 'caches', help: 'Also remove the layer caches beside OUTs (<OUT>.rbp-cache): their next build downloads and installs again.' },
      json,
      ...output,
    ],
  },
  {
    name: 'version',
    load: () => import('./commands/version.ts').then((m) => m.run),
    synopsis: 'rbp version',
    summary: "Print rbp's version (also rbp --version).",
    flags: [{ name: 'help', short: 'h', help: 'Show this help.' }],
  },
];

export function command(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** The `parseArgs` options of a command. */
export function parseOptions(c: Command): Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> {
  const option = (f: Flag) => ({
    type: f.arg ? ('string' as const) : ('boolean' as const),
    ...(f.multiple ? { multiple: true } : {}),
    ...(f.short ? { short: f.short } : {}),
  });
  return Object.fromEntries(c.flags.map((f) => [f.name, option(f)]));
}

function flagLabel(f: Flag): string {
  return `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.arg ? ` ${f.arg}` : ''}${f.multiple ? '...' : ''}`;
}

export function commandHelp(c: Command): string {
  const width = Math.max(...c.flags.map((f) => flagLabel(f).length)) + 2;
  const lines = [c.summary, '', `Usage:\n  ${c.synopsis}`, '', 'Flags:'];
  for (const f of c.flags) lines.push(`  ${flagLabel(f).padEnd(width)}${f.help}`);
  if (c.notes?.length) lines.push('', ...c.notes);
  return lines.join('\n');
}

export function overview(version: string): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `rbp ${version} — a local Cloud Native Buildpacks lifecycle, no Docker needed`,
    '',
    'Usage:',
    '  rbp COMMAND [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Global flags:',
    '  -h, --help      Show help (rbp COMMAND --help for a command)',
    '      --version   Print the version',
    '',
    `Run 'rbp COMMAND --help' for the flags of a command.`,
  ].join('\n');
}
