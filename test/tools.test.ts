/**
 * The tool set: every tool `scripts/tools/env.sh` exports is run, and must report the contract's
 * version. In CI all of them must be present; on a laptop a missing one is skipped with its reason.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { realTool, TOOL_VARIABLES, type ToolVariable } from './helpers/tool-cache.ts';

/**
 * The version the executable reports: the first x.y.z of its version output. (The lifecycle reports
 * the version upstream's release build stamps with
 * -ldflags "-X github.com/buildpacks/lifecycle/cmd.Version=<version>"; without it, 0.0.0.)
 */
async function reportedVersion(t: ToolVariable, exe: string): Promise<string> {
  const r = await execa(exe, t.versionArgs, { all: true, timeout: 30_000 });
  return /\bv?(\d+\.\d+\.\d+)\b/.exec(r.all)?.[1] ?? r.all;
}

const tools = TOOL_VARIABLES.map((t) => ({ t, tool: realTool(t.variable, `tools test (${t.variable})`) }));

describe('the tool set of scripts/tools/env.sh, at the contract’s versions', () => {
  for (const { t, tool } of tools) {
    it.skipIf(tool.skip)(`${t.variable}: ${t.name} ${t.version}`, async () => {
      const version = await reportedVersion(t, tool.path());
      // A minor (Hugo's 0.149) matches its patch releases; a full version matches exactly.
      if (t.version.split('.').length === 2)
        expect(version, `${t.variable}=${tool.path()}`).toMatch(new RegExp(`^${t.version.replaceAll('.', '\\.')}\\.\\d+$`));
      else expect(version, `${t.variable}=${tool.path()}`).toBe(t.version);
    });
  }

  for (const { t, tool } of tools.filter(({ t }) => t.name.startsWith('Hugo'))) {
    it.skipIf(tool.skip)(`${t.variable}: Hugo is the extended edition (the contract's Hugo)`, async () => {
      expect((await execa(tool.path(), ['version'])).stdout).toMatch(/\+extended\b/);
    });
  }
});
