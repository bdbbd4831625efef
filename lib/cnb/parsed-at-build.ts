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

/** `v` with its tables made as smol-toml makes them (objects without a prototype); arrays changed in place. */
function tablesWithoutPrototype(v: unknown): unknown {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = tablesWithoutPrototype(v[i]);
    return v;
  }
  if (!v || typeof v !== 'object') return v;
  const table = Object.create(null) as Record<string, unknown>;
  for (const [k, x] of Object.entries(v)) table[k] = tablesWithoutPrototype(x);
  return table;
}

/**
 * The value of JSON `json` with its tables made as smol-toml makes them. (A walk after JSON.parse:
 * half the time of a reviver, which V8 calls through its slow path for every value.)
 */
export function asToml(json: string): Record<string, unknown> {
  return tablesWithoutPrototype(JSON.parse(json)) as Record<string, unknown>;
}

/** The value of TOML `text` when it is one parsed at build time, else undefined. */
export function parsedAtBuild(text: string): Record<string, unknown> | undefined {
  if (typeof __RBP_PARSED_TOML__ !== 'string') return undefined;
  known ??= new Map(Object.entries(JSON.parse(__RBP_PARSED_TOML__) as Record<string, string>));
  const json = known.get(text);
  return json === undefined ? undefined : asToml(json);
}
