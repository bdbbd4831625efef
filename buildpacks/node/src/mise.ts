/**
 * Deno through a tool-version manager's file (contract, node rule 11): a `mise.toml` whose `[tools]`
 * table has `deno = "latest"` or a version makes the build install that Deno.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { UserError } from '../../../lib/errors.ts';

export const MISE_FILES = ['mise.toml', '.mise.toml'];

/** The Deno version mise.toml asks for, and the file; undefined when there is no such entry. */
export function denoFromMise(appDir: string): { constraint: string; file: string } | undefined {
  for (const name of MISE_FILES) {
    const file = path.join(appDir, name);
    if (!fs.existsSync(file)) continue;
    let doc: { tools?: Record<string, unknown> };
    try {
      doc = parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new UserError({
        id: 'node/mise/parse',
        title: `${name} is not valid TOML`,
        seen: { what: name, where: file },
        rule: `${name} is a TOML file whose [tools] table maps a tool to a version, e.g. deno = "2".`,
        fix: 'Fix the TOML syntax.',
        details: [(e as Error).message.split('\n')[0]!],
      });
    }
    const entry = doc.tools?.deno;
    if (entry === undefined) continue;
    const value: unknown = typeof entry === 'string' ? entry : Array.isArray(entry) ? entry[0] : (entry as { version?: unknown }).version;
    if (typeof value !== 'string' || value.trim() === '') {
      throw new UserError({
        id: 'node/mise/deno-version',
        title: `The deno entry of ${name} has no version`,
        seen: { what: `[tools] deno in ${name}`, value: JSON.stringify(entry), where: file },
        rule: 'deno is set to "latest" or a version: deno = "latest", deno = "2.1.4".',
        fix: 'Write deno = "latest" or deno = "<version>" under [tools].',
      });
    }
    return { constraint: value.trim(), file: name };
  }
  return undefined;
}
