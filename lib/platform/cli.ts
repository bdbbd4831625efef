/**
 * The `rbp` command line: the command found in the table (cli-commands.ts), its flags read, the log
 * set up, and its module (lib/platform/commands/<name>.ts) run. Help, --version, usage errors and
 * --json errors are answered here, the same way for every command.
 */
import { EXIT, exitCodeFor, PhaseFailure } from '../cnb/exit.ts';
import { errorJson, isUserError } from '../errors.ts';
import { Logger, type LogLevel } from '../log.ts';
import { parseFlags, unknownCommand } from './cli-args.ts';
import { command, commandHelp, overview } from './cli-commands.ts';
import { writeJson } from './cli-json.ts';
import { usage, type Streams } from './commands/context.ts';
import { rbpVersion, versionLine } from './commands/version.ts';
import { phaseError } from './failure.ts';

export async function main(argv: string[], streams: Streams = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const dd = argv.indexOf('--');
  const passthrough = dd === -1 ? [] : argv.slice(dd + 1);
  const [cmd, ...rest] = dd === -1 ? argv : argv.slice(0, dd);
  // Asked before the flags are read: a command line that does not parse still answers in JSON.
  const json = rest.includes('--json');
  // Until the flags are read, errors go to stderr at the normal level.
  let log = new Logger({ out: streams.stdout, err: streams.stderr, color: undefined });
  try {
    if (cmd === '--version' || cmd === '-V') return (streams.stdout.write(`${versionLine()}\n`), 0);
    if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
      const sub = cmd === 'help' ? rest[0] : undefined;
      const c = sub ? command(sub) : undefined;
      if (sub && !c) throw unknownCommand(sub);
      // No command at all is a usage error: the overview goes to stderr.
      (cmd === undefined ? streams.stderr : streams.stdout).write(`${c ? commandHelp(c) : overview(rbpVersion())}\n`);
      return cmd === undefined ? EXIT.usage : 0;
    }
    const c = command(cmd);
    if (!c) throw unknownCommand(cmd);
    const { values, positionals } = parseFlags(c, rest);
    if (values.help) return (streams.stdout.write(`${commandHelp(c)}\n`), 0);
    if (values.quiet && values.verbose) throw usage('--quiet and --verbose cannot be used together', c);
    const level: LogLevel = values.quiet ? 'quiet' : values.verbose ? 'verbose' : 'normal';
    // rbp's RBP_* variables reach the buildpacks (operatorEnv): with --verbose they log debug lines
    // too. --quiet is not passed on: rbp holds their output itself, to show it if the build fails.
    if (level === 'verbose') process.env.RBP_LOG_LEVEL = level;
    // With --json, stdout carries the JSON alone and the log goes to stderr.
    log = new Logger({ out: values.json ? streams.stderr : streams.stdout, err: streams.stderr, level });

    const handler = await c.load();
    return await handler({ command: c, name: cmd, values, positionals, passthrough, log, streams });
  } catch (e) {
    const shown = e instanceof PhaseFailure ? e.shown : e;
    if (isUserError(shown) || e instanceof PhaseFailure) log.flushHeld();
    if (isUserError(shown)) log.error(shown.data);
    else if (e instanceof PhaseFailure) log.fail(e.message);
    else throw e;
    // Under --json a failure is data too: its id, message and fix, on stdout.
    if (json) writeJson(streams.stdout, { exitCode: exitCodeFor(e, 'rbp'), error: errorJson(isUserError(shown) ? shown.data : phaseError(e as PhaseFailure)) });
    return exitCodeFor(e, 'rbp');
  }
}
