/** The README's variable tables, rendered from the declarations (lib/config/variables.ts). */
import { describeKind, type Scope } from '../../lib/config/kinds.ts';
import { VARIABLES } from '../../lib/config/variables.ts';

const TITLES: Record<Scope, string> = {
  common: 'All three runtimes',
  node: '`node`',
  static: '`static`',
  phpserver: '`phpserver`',
  operator: 'Operator settings of rbp (its own environment, or the build-config env under a platform)',
  internal: 'Set by rbp itself for the buildpacks and the launch entrypoint, or by its tests (not set by hand)',
};

const cell = (s: string) => s.replaceAll('|', '\\|');

export function renderVariableTables(): string {
  const out: string[] = [];
  for (const scope of Object.keys(TITLES) as Scope[]) {
    out.push(`**${TITLES[scope]}**`, '', '| variable | value | default | read at | meaning |', '|---|---|---|---|---|');
    for (const v of VARIABLES.filter((x) => x.scope === scope)) {
      out.push(
        `| \`${v.name}\` | ${cell(describeKind(v.kind))} | ${v.default !== undefined ? `\`${cell(v.default)}\`` : ''} | ${v.phase} | ${cell(v.meaning)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

export const BEGIN = '<!-- variables:begin (rendered from lib/config/variables.ts; RBP_UPDATE_DOCS=1 npx vitest run test/config rewrites it) -->';
export const END = '<!-- variables:end -->';
