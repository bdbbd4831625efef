/**
 * The SBOM formats' JSON schemas, checked with ajv: CycloneDX 1.4 from the CycloneDX library (a
 * devDependency), and SPDX 2.3 from test/package/schemas/spdx-2.3.schema.json (the SPDX project's
 * schema as the PyPI package lib4sbom 0.10.4 ships it, lib4sbom/schemas/spdx/2.3-schema.json).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';

const require = createRequire(import.meta.url);
const cdxDir = path.join(path.dirname(require.resolve('@cyclonedx/cyclonedx-library/package.json')), 'res', 'schema');
const load = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;

// iri-reference and idn-email (URLs and e-mails) are formats ajv-formats lacks: accepted as strings.
const ajv = new Ajv({ strict: false, allErrors: true, formats: { 'iri-reference': true, 'idn-email': true } });
// ajv-formats is CommonJS: its function is the default export's default.
(formats as unknown as { default: (a: Ajv) => void }).default(ajv);
for (const f of ['spdx.SNAPSHOT.schema.json', 'jsf-0.82.SNAPSHOT.schema.json'])
  ajv.addSchema({ ...load(path.join(cdxDir, f)), $id: `http://cyclonedx.org/schema/${f}` });
const cyclonedx = ajv.compile(load(path.join(cdxDir, 'bom-1.4.SNAPSHOT.schema.json')));
const spdx = ajv.compile(load(path.join(import.meta.dirname, 'schemas', 'spdx-2.3.schema.json')));

/** The schema's complaints about a document of that format (none: valid). */
export function sbomErrors(format: 'cdx' | 'spdx', doc: unknown): string[] {
  const validate = format === 'cdx' ? cyclonedx : spdx;
  return validate(doc) ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message}`);
}
