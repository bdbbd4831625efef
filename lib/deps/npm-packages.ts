/**
 * The npm packages that carry Bun's and Deno's binaries for this machine's architecture: names only,
 * with no registry client behind them, so that the package-manager table (lib/js-project) and the
 * detects that read it stay small.
 */
import { ociArch } from '../cnb/descriptor.ts';

export function bunPackage(arch = ociArch()): string {
  return `@oven/bun-linux-${arch === 'arm64' ? 'aarch64' : 'x64'}`;
}

export function denoPackage(arch = ociArch()): string {
  return `@deno/linux-${arch === 'arm64' ? 'arm64' : 'x64'}-glibc`;
}
