/**
 * A command run through the shell (CC_RUN_COMMAND, scripts.start): `exec` is put in front of a
 * simple command, so the shell is replaced by the command and signals reach it (Debian's sh does not
 * exec the last command by itself). Compound commands stay as they are: the launch then supervises
 * the shell's whole process group (plan.ts shellKeepsChildren).
 */
export function execCommand(command: string): string {
  if (/[;&|<>()`$\n\\#]|\b(if|for|while|case|until)\b/.test(command.replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, ''))) return command;
  const m = /^((?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*)(.+)$/s.exec(command.trim());
  // The shell's own commands (exit, cd, ...) are no program to exec.
  if (!m || /^(exec|exit|cd|export|set|unset|eval|trap|wait|return|shift|readonly|\.|:|true|false)(\s|$)/.test(m[2]!)) return command;
  return `${m[1]}exec ${m[2]}`;
}

/** `/bin/sh -c` with `exec` put in front of a simple command (see execCommand). */
export function shellCommand(command: string): string[] {
  return ['/bin/sh', '-c', execCommand(command)];
}
