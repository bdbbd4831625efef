/**
 * Masking secrets in what tools print. A build command runs with the user's variables, secrets
 * included (NPM_TOKEN for a private registry); whatever it prints goes to the log, so every value
 * of a secret variable is replaced by `***` before it is shown.
 */
import { StringDecoder } from 'node:string_decoder';
import { isSecretName, redactUrl } from './errors.ts';

/** The values to hide: every secret variable's value, and CC_NPM_BASIC_AUTH in Base64 as the registry sees it. */
export function secretValues(env: Record<string, string | undefined>): string[] {
  const values: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    const s = v?.trim();
    if (!s || s.length < 4 || !isSecretName(k)) continue;
    values.push(s);
    if (k === 'CC_NPM_BASIC_AUTH') values.push(Buffer.from(s).toString('base64'));
  }
  // Longest first, so a secret that contains another is hidden whole.
  return values.sort((a, b) => b.length - a.length);
}

export function maskSecrets(text: string, env: Record<string, string | undefined>): string {
  let out = text;
  for (const s of secretValues(env)) out = out.split(s).join('***');
  return redactUrl(out);
}

/**
 * A writer for a child's output that masks whole lines only (a secret split across two chunks
 * would escape), passing each masked piece to `emit`. Call `end()` when the child is done.
 */
export function maskedLines(env: Record<string, string | undefined>, emit: (text: string) => void): { write(chunk: Buffer | string): void; end(): void } {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  return {
    write(chunk) {
      pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      const cut = pending.lastIndexOf('\n') + 1;
      if (cut === 0) return;
      emit(maskSecrets(pending.slice(0, cut), env));
      pending = pending.slice(cut);
    },
    end() {
      pending += decoder.end();
      if (pending) emit(maskSecrets(pending, env));
      pending = '';
    },
  };
}
