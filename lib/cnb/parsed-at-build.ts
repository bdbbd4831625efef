/**
 * Our buildpacks' buildpack.toml, parsed when rbp was built (scripts/build.mjs): rbp reads the three
 * on every detect, and parsing them (9 KiB of TOML) costs ~2 ms of a detect that should cost little
 * more than Node.js's start. A file whose text is exactly one of these is the same TOML, so its
 * value is the one parsed then; any other text (an edited file, another build's, a third party's)
 * is parsed as usual. Only values that survive JSON unchanged are kept (the build checks it, with
 * asToml below).
 */
declare const __RBP_PARSED_TOML__: string | undefined;

let known: Map<string, string> | undefined;

/** The value of JSON `json` with its tables made as smol-toml makes them (objects without a prototype). */
export function asToml(json: string): Record<string, unknown> {
  return JSON.parse(json, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.assign(Object.create(null) as Record<string, unknown>, v) : v,
  ) as Record<string, unknown>;
}

/** The value of TOML `text` when it is one parsed at build time, else undefined. */
export function parsedAtBuild(text: string): Record<string, unknown> | undefined {
  if (typeof __RBP_PARSED_TOML__ !== 'string') return undefined;
  known ??= new Map(Object.entries(JSON.parse(__RBP_PARSED_TOML__) as Record<string, string>));
  const json = known.get(text);
  return json === undefined ? undefined : asToml(json);
}
