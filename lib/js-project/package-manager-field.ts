/**
 * The `packageManager` field of package.json (contract, node rule 7: pnpm and Yarn versions come
 * from it), as corepack writes it: `<name>@<exact version>`, optionally `+<algorithm>.<hex>`.
 */
import { UserError } from '../errors.ts';
import { MANAGERS, PACKAGE_MANAGERS, type PackageManagerField } from './package-managers.ts';

export type { PackageManagerField };

/** The names packageManager may give: the table's. */
const NAMES = [...new Set(MANAGERS.flatMap((m) => (PACKAGE_MANAGERS[m].field ? [PACKAGE_MANAGERS[m].field.name] : [])))];

const PM_RE = new RegExp(String.raw`^(${NAMES.join('|')})@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\+(sha1|sha224|sha256|sha384|sha512)\.([0-9a-fA-F]+))?$`);

/** `pnpm@10.12.1+sha512.<hex>` → its parts; undefined when the field is absent; a user error when it is not that shape. */
export function parsePackageManager(pkg: { packageManager?: unknown }, pkgFile = 'package.json'): PackageManagerField | undefined {
  const raw = typeof pkg.packageManager === 'string' ? pkg.packageManager.trim() : undefined;
  if (!raw) return undefined;
  const m = PM_RE.exec(raw);
  if (!m) {
    throw new UserError({
      id: 'node/package-manager/field-invalid',
      title: 'The packageManager field of package.json is not <name>@<version>',
      seen: { what: 'packageManager', value: raw, where: pkgFile },
      rule: `packageManager is <${NAMES.join('|')}>@<exact version>, optionally followed by +<algorithm>.<hex hash>, e.g. pnpm@10.12.1.`,
      fix: 'Write an exact version (no range, no URL), e.g. "packageManager": "pnpm@10.12.1", or remove the field.',
    });
  }
  return { name: m[1] as PackageManagerField['name'], version: m[2]!, ...(m[3] ? { hash: { algorithm: m[3], hex: m[4]!.toLowerCase() } } : {}) };
}

/** Like parsePackageManager, but a field of another shape counts as absent (static's generators only weigh it). */
export function packageManagerIfValid(pkg: { packageManager?: unknown }): PackageManagerField | undefined {
  try {
    return parsePackageManager(pkg);
  } catch {
    return undefined;
  }
}
