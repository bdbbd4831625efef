/**
 * What the build of a static site will do (contract, `static` rules 1–3): CC_BUILD_COMMAND, else the
 * generator of the table detected at the root, else nothing. Kept apart from site-build.ts, which
 * runs it: detect needs only this, and must not load what installs tools (lib/deps, tar, undici).
 */
import type { StaticConfig } from './config.ts';
import { detectGenerator, type Detection } from './generators.ts';
import { show } from './paths.ts';

export type SitePlan = { kind: 'command'; command: string } | { kind: 'generator'; detection: Detection } | { kind: 'none' };

export function planSite(cfg: StaticConfig, appDir: string): SitePlan {
  if (cfg.buildCommand) return { kind: 'command', command: cfg.buildCommand };
  const detection = detectGenerator(appDir);
  return detection ? { kind: 'generator', detection } : { kind: 'none' };
}

/** One line saying what the build will do and why. */
export function describePlan(plan: SitePlan, cfg: StaticConfig): string {
  switch (plan.kind) {
    case 'command':
      return `CC_BUILD_COMMAND is set: running it, no generator detection`;
    case 'generator': {
      const d = plan.detection;
      const others = d.alsoMatched.length
        ? ` (also found ${d.alsoMatched.map((o) => `${o.file} for ${o.name}`).join(', ')}; ${d.generator.name} comes first in the table)`
        : '';
      return `auto-build: ${d.generator.name} detected from ${d.file}${others}, building into ${show(cfg.outDir.rel)}`;
    }
    case 'none':
      return 'no CC_BUILD_COMMAND and no static site generator detected: serving the files as they are';
  }
}
