/**
 * How deeply a JSON text nests, counted without parsing it: a manifest nested thousands of levels
 * deep parses, but every recursive walk over it afterwards (JSON.stringify, a validator) overflows
 * the stack. Manifests are refused beyond MAX_JSON_DEPTH levels instead, with one clear error.
 */
export const MAX_JSON_DEPTH = 256;

/** The deepest nesting of arrays and objects in `text` (brackets inside strings ignored). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
