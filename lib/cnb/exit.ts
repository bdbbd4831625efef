/** Exit codes of the Buildpack API and of the lifecycle phases (cnb-spec.md §1, §8). */
export const EXIT = {
  ok: 0,
  /** bin/detect: this buildpack does not apply. */
  detectFail: 100,
  /** bin/detect, bin/build: broken input or a bug. */
  error: 1,
  /** Lifecycle: every group failed detection. */
  detectNoGroup: 20,
  /** Lifecycle: detection failed with at least one buildpack error. */
  detectError: 21,
  /** Lifecycle: a buildpack's bin/build failed. */
  buildFailed: 51,
  /** Lifecycle: the build failed otherwise, e.g. a buildpack wrote invalid output (launch.toml, <layer>.toml, build.toml, SBOM). */
  buildError: 52,
  /** Lifecycle: export failed. */
  exportFailed: 62,
  /** Launcher: failure before the process started. */
  launchFailed: 82,
  /** rbp: bad command line. */
  usage: 2,
  /** rbp deploy: the health check failed. */
  healthCheckFailed: 3,
} as const;
